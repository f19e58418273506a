"""What each band of :mod:`costdash.bands` is a band for, in words (its ``estimand``).

Every band measures test-set sampling variability of fixed models, never retrained; each
text says of which quantity, and whether the band is calibrated for it. The short label of a
band (:func:`band_label`) is here too.
Private: a part of :mod:`costdash.bands`, whose ``__init__`` holds the public names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costdash.bands import CostBand, DifferenceBand

_FIXED_MODEL = ("Test-set sampling variability of this fixed model only (it is never retrained: "
                "nothing about the learning algorithm).")
_POOLED = (" The rows of all folds are pooled and treated as one test set of one fixed model; "
           "band each fold separately for per-fold statements.")

ESTIMAND_LINE = ("The population cost line NE(x) = FNR x + FPR (1 - x) of this classifier at "
                 "its fixed threshold (one confusion matrix), at each PC(+). Valid when the "
                 "threshold was chosen before seeing these test rows.")
ESTIMAND_SELECTED_SPLIT = (
    "The population cost, on new data, of the thresholds selected at each PC(+) on a stratified "
    "random half of the rows (the envelope's optimal vertex on that half), estimated on the other "
    "half.")
ESTIMAND_SELECTED_VALIDATION = (
    "The population cost, on new data, of the thresholds selected at each PC(+) on the given "
    "validation rows (the envelope's optimal vertex there), estimated on the classifier's rows.")
ESTIMAND_ENVELOPE_SPREAD = (
    "None: the resampling spread of the lower envelope re-optimised on every resample "
    "(thresholds tuned on the test rows themselves). It is not a confidence band for the optimal "
    "cost, which it tends to sit below (it covered the optimal cost 0.53 / 0.70 / 0.79 of the "
    "time at n = 100 / 1,000 / 10,000 for a nominal 0.9, docs/bands.md).")
ESTIMAND_ENVELOPE_DOUBLE = (
    "The population optimal cost min over thresholds of NE(x), at each PC(+): an approximate "
    "band (double-bootstrap calibrated basic interval). Its coverage depends on the smaller "
    "class's count and on how far PC(+) is from 0.5: it under-covers with few examples of the "
    "smaller class and towards the PC(+) where that class's errors dominate the cost, so it "
    "shows its level only where studies/double_bootstrap_coverage.py measured coverage within "
    "0.04 of nominal (docs/bands.md), and is a spread without a level elsewhere.")
ESTIMAND_PERCENTILE_LINE = (
    "The cost line of this fixed threshold, by the percentile bootstrap of paper 000 §8: close to "
    "its level with moderate counts but not calibrated (it collapses to zero width when FN or FP "
    "is 0), so shown without a level.")
ESTIMAND_DIFF_ENVELOPE = (
    "None: the resampling spread of envelope(a) - envelope(b), both re-tuned on every resample. "
    "Exploratory: not a test (no significant ranges).")
ESTIMAND_DIFF_LINE = ("The population difference cost(a) - cost(b) of the two classifiers at "
                      "their fixed thresholds, on the same rows (paired), at each PC(+).")
ESTIMAND_DIFF_SELECTED_SPLIT = (
    "The population difference cost(a) - cost(b) of the thresholds selected for each classifier "
    "at each PC(+) on a stratified random half of the rows, estimated (paired) on the other half.")
ESTIMAND_DIFF_SELECTED_VALIDATION = (
    "The population difference cost(a) - cost(b) of the thresholds selected for each classifier "
    "at each PC(+) on the given validation rows, estimated (paired) on the classifiers' rows.")
ESTIMAND_DIFF_PERCENTILE_LINE = (
    "The difference of the two fixed-threshold cost lines, by the paired percentile bootstrap: not "
    "calibrated with small counts, so shown without a level and without significant ranges.")


_FIXED_MODELS = ("Test-set sampling variability of these fixed models only (never retrained: "
                 "nothing about the learning algorithms).")


def _estimand(text: str, pooled: bool = False, *, pair: bool = False) -> str:
    return f"{text} {_FIXED_MODELS if pair else _FIXED_MODEL}" + (_POOLED if pooled else "")


def _pct(level: float) -> str:
    text = f"{100.0 * level:.3f}".rstrip("0").rstrip(".")
    return text + "%"


def band_label(band: CostBand | DifferenceBand) -> str:
    """The ``label`` of a band: its level only when it is calibrated."""
    selected = ""
    if band.selection == "split":
        selected = ", thresholds selected on a stratified half and banded on the other half"
    elif band.selection == "validation":
        selected = ", thresholds selected on the validation rows"
    double = band.method == "double-bootstrap"
    scope = "whole curve" if band.simultaneous else "pointwise"
    pair = " rectangle" if band.simultaneous else "–MOVER"
    name = {"clopper-pearson-mover": "Clopper–Pearson–MOVER", "wilson-mover": "Wilson–MOVER",
            "clopper-pearson": "Clopper–Pearson rectangle",
            "discordant-mover": f"discordant-pair Clopper–Pearson{pair}",
            "newcombe-mover": "Newcombe rectangle" if band.simultaneous else "Newcombe–MOVER",
            "double-bootstrap": "double-bootstrap calibrated (approximate)"}.get(band.method,
                                                                                band.method)
    if not band.calibrated:
        if band.replicates == 0:  # a closed form kept by name whose level is not earned
            reason = getattr(band, "no_level", None) or band.significance_note
            return f"{name} spread ({scope}; {reason}){selected}"
        if double:
            # Why in the label itself: every surface that shows the label shows the reason.
            return (f"double-bootstrap spread of the re-tuned envelope ({band.replicates:,} × "
                    f"{getattr(band, 'inner_replicates', 0):,} replicates; {band.no_level})")
        what = ("resampling spread of the re-tuned envelope" if band.kind in ("curve", "envelope")
                else "percentile bootstrap spread")
        return f"{what} ({band.replicates:,} replicates; no confidence level){selected}"
    where = ""
    span = band.level_range
    if span is not None and not band.level_holds.all():
        # An approximate method's level holds only where the coverage study earned it.
        where = (f" for PC(+) {span[0]:.3g}–{span[1]:.3g} only (a spread without a level "
                 "elsewhere)")
    return f"{_pct(band.level)} {name} band ({scope}){where}{selected}"
