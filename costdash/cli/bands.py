"""``costdash band`` and ``costdash compare``: confidence bands on cost curves.

``band`` is the band of one classifier's cost curve (paper 000 §8), ``compare`` the band of the
difference of two classifiers on the same rows (§9). Every result says which question it answers
(``estimand``) and whether its level is earned (``calibrated``); see ``docs/bands.md``. Both
measure test-set sampling variability of fixed models, not the variability of the learning
algorithm.
"""

from __future__ import annotations

import argparse
import math
import textwrap
from typing import TYPE_CHECKING, Any

import numpy as np

# The bounds the options state come from costdash._resampling, light; costdash.bands itself
# (scipy.special) is imported when a band is computed, so `costdash --help` stays light (issue 23).
from costdash._resampling import BAND_MAX_REPLICATES as MAX_REPLICATES
from costdash._resampling import MIN_CALIBRATED_REPLICATES
from costdash.cli import print_json
from costdash.cli.common import add_loader_options, load_from_args
from costdash.dataset import CountedClassifier, Dataset, ScoredClassifier
from costdash.errors import ParameterError

if TYPE_CHECKING:
    from costdash.bands import CostBand, DifferenceBand

BAND_JSON_HELP = """\
JSON fields: model, kind ("line": one confusion matrix or a fixed threshold; "selected": thresholds
chosen per PC(+) on selection rows and banded on other rows; "curve": lower envelope re-optimised
per replicate), method, calibrated (true: the band covers its level; false: a resampling spread,
show it without a level), estimand (in words), level_range ([lo, hi]: the PC(+) range where the
level holds, the whole grid for a closed form; an approximate method's only where its coverage
study earned it; null: nowhere), no_level (why there is no level outside level_range, in words;
"" when it holds everywhere), simultaneous, selection ("split", "validation" or
null), threshold, thresholds [] (per PC(+) the selected threshold, predict positive iff score >= it;
the strings "flag nothing" for +inf and "flag everything" for -inf; null when not selected), level,
replicates (0: closed form, no resampling), seed, n_pos, n_neg (of the banded rows), pc [], cost [],
low [], high []."""

COMPARE_JSON_HELP = """\
JSON fields: a, b, kind ("envelope", "line" or "selected"), method, calibrated, estimand,
simultaneous, selection, threshold_a, threshold_b, thresholds {"a": [], "b": []} (as for band;
null when not selected), level, replicates, seed, pc [], diff [] (= cost(a) - cost(b); negative
where a is cheaper), low [], high [], significant [{lo, hi, better}] (grid PC(+) ranges where the
band excludes 0; always empty when calibrated is false, see note), note."""

THRESHOLD_WORDS = {math.inf: "flag nothing", -math.inf: "flag everything"}
"""How the JSON writes the trivial thresholds (JSON has no infinity)."""

METHOD_CHOICES = ("clopper-pearson-mover", "discordant-mover", "wilson-mover", "newcombe-mover",
                  "clopper-pearson", "percentile", "double-bootstrap")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="predictions: CSV/TSV (.gz too), Parquet or JSON lines")
    parser.add_argument("--level", type=float, default=0.9,
                        help="confidence level in (0, 1) (default 0.9); shown only for a "
                             "calibrated band")
    parser.add_argument("--replicates", type=int, default=1000, metavar="B",
                        help=f"bootstrap replicates, 1..{MAX_REPLICATES} (default 1000; at least "
                             f"{MIN_CALIBRATED_REPLICATES} for a calibrated bootstrap band; "
                             "unused by the closed-form methods)")
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed for a reproducible band or split (default: fresh "
                             "randomness)")
    parser.add_argument("--grid", type=int, default=201, metavar="G",
                        help="number of PC(+) values from 0 to 1 (default 201)")
    parser.add_argument("--method", choices=METHOD_CHOICES, default=None,
                        help="band method (default: clopper-pearson-mover / discordant-mover "
                             "for fixed or selected thresholds, percentile spread for a whole "
                             "envelope; wilson-mover / newcombe-mover: the old defaults); "
                             "clopper-pearson implies --simultaneous; double-bootstrap: an "
                             "approximate whole-envelope band, with a level only where its "
                             "coverage study earned it (level_range)")
    parser.add_argument("--simultaneous", action="store_true",
                        help="a band for the whole curve at once (fixed or selected thresholds)")
    parser.add_argument("--select", metavar="split|FILE", default=None,
                        help="select the thresholds per PC(+) from data: 'split' picks them on a "
                             "stratified random half of the rows and bands their cost on the "
                             "other half; FILE picks them on a validation predictions file (same "
                             "classifiers and layout) and bands their cost on the main file's "
                             "rows")
    add_loader_options(parser)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def register(subparsers: Any) -> None:
    """Add the ``band`` and ``compare`` sub-commands to the ``costdash`` parser."""
    band = subparsers.add_parser(
        "band", help="confidence band on one classifier's cost curve",
        description=textwrap.fill(
            "Band on a classifier's cost curve, labelled with the question it answers. A "
            "threshold fixed beforehand (--threshold, or a counts file): Clopper-Pearson-MOVER "
            "band of its cost line (closed form; --simultaneous: Clopper-Pearson rectangle, whole "
            "line). Thresholds selected from data (--select split|FILE): chosen per PC(+) on a "
            "stratified half (or a validation file), their cost banded on the other rows. The "
            "whole envelope of a scores file (neither): an uncalibrated resampling spread "
            "(calibrated=false, no level), or --method double-bootstrap for an approximate "
            "band, with a level only for the smaller-class counts and PC(+) where its coverage "
            "study earned it (docs/bands.md). Every band measures test-set sampling variability "
            "of this fixed model, not the variability of the learning algorithm.", 100)
        + "\n\n" + BAND_JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    band.add_argument("--model", metavar="NAME",
                      help="classifier (optional if the file has only one)")
    band.add_argument("--threshold", type=float, metavar="T",
                      help="scores: band of the classifier at this fixed threshold (predict "
                           "positive iff score >= T); counts: the matrix with this threshold")
    _common(band)
    band.set_defaults(func=run_band)

    compare = subparsers.add_parser(
        "compare", help="band on the difference of two classifiers' cost curves",
        description=textwrap.fill(
            "Band on cost(a) - cost(b), both classifiers on the same test rows (which keeps "
            "their correlation). With fixed thresholds (--threshold) or thresholds selected on "
            "other rows (--select split|FILE) the band is calibrated (per class, MOVER on the "
            "discordant pairs with Clopper-Pearson limits; the classes combined by MOVER) and the "
            "PC(+) ranges where it excludes 0 are "
            "significant (pointwise; --simultaneous: for the whole curve). Without either, the "
            "difference of the two re-tuned envelopes is an exploratory spread with no "
            "significant ranges. Needs scores of both classifiers on the same examples.", 100)
        + "\n\n" + COMPARE_JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    compare.add_argument("--a", required=True, metavar="NAME", help="first classifier (a)")
    compare.add_argument("--b", required=True, metavar="NAME", help="second classifier (b)")
    compare.add_argument("--threshold", type=float, nargs="+", metavar="T",
                         help="fixed thresholds: one for both classifiers, or T_A T_B")
    _common(compare)
    compare.set_defaults(func=run_compare)


def _classifier(dataset: Dataset, name: str) -> ScoredClassifier | CountedClassifier:
    try:
        return dataset.classifier(name)
    except KeyError:
        raise ParameterError(f"{dataset.source}: no classifier named {name!r} (it has: "
                             f"{', '.join(dataset.names)})") from None


def _floats(values: np.ndarray) -> list[float]:
    if not np.all(np.isfinite(values)):  # pragma: no cover - a bug, print_json would raise too
        raise ParameterError("internal error: non-finite value in a band")
    return [float(v) for v in values]


def thresholds_json(values: np.ndarray | None) -> list[float | str] | None:
    """Selected thresholds for JSON: numbers, "flag nothing" (+inf) and "flag everything" (-inf)."""
    if values is None:
        return None
    return [THRESHOLD_WORDS.get(float(v), float(v)) for v in values]


def band_to_dict(band: CostBand, seed: int | None = None) -> dict[str, Any]:
    """The JSON form of a :class:`CostBand` (without the replicate curves)."""
    return {"model": band.name, "kind": band.kind, "method": band.method,
            "calibrated": band.calibrated, "estimand": band.estimand,
            "level_range": None if band.level_range is None else list(band.level_range),
            "no_level": band.no_level,
            "simultaneous": band.simultaneous, "selection": band.selection,
            "threshold": band.threshold, "thresholds": thresholds_json(band.thresholds),
            "level": band.level, "replicates": band.replicates, "seed": seed,
            "n_pos": band.n_pos, "n_neg": band.n_neg, "pc": _floats(band.pc),
            "cost": _floats(band.cost), "low": _floats(band.low), "high": _floats(band.high)}


def difference_to_dict(band: DifferenceBand, seed: int | None = None) -> dict[str, Any]:
    """The JSON form of a :class:`DifferenceBand` (without the replicate curves)."""
    thresholds = (None if band.thresholds is None else
                  {"a": thresholds_json(band.thresholds[0]),
                   "b": thresholds_json(band.thresholds[1])})
    return {"a": band.a, "b": band.b, "kind": band.kind, "method": band.method,
            "calibrated": band.calibrated, "estimand": band.estimand,
            "simultaneous": band.simultaneous, "selection": band.selection,
            "threshold_a": band.threshold_a, "threshold_b": band.threshold_b,
            "thresholds": thresholds, "level": band.level, "replicates": band.replicates,
            "seed": seed, "pc": _floats(band.pc), "diff": _floats(band.diff),
            "low": _floats(band.low), "high": _floats(band.high),
            "significant": [{"lo": s.lo, "hi": s.hi, "better": s.better}
                            for s in band.significant],
            "note": band.significance_note}


def _sample_rows(pc: np.ndarray) -> list[int]:
    """Grid indices nearest to PC(+) = 0.1, 0.2, ..., 0.9 (distinct)."""
    return sorted({int(np.argmin(np.abs(pc - x))) for x in np.linspace(0.1, 0.9, 9)})


def _threshold_text(value: float) -> str:
    return THRESHOLD_WORDS.get(float(value), f"{float(value):.6g}")


def format_band(band: CostBand) -> str:
    if band.kind == "curve":
        kind = "lower envelope, thresholds re-optimised per replicate"
    elif band.kind == "selected":
        kind = ("thresholds selected per PC(+) on "
                + ("a stratified half; banded on the other half" if band.selection == "split"
                   else "the validation rows"))
    else:
        kind = "one confusion matrix" + (f" at threshold {band.threshold:g}"
                                         if band.threshold is not None else "")
    lines = [f"{band.name}: {band.n_pos} positive, {band.n_neg} negative; {kind}",
             # A spread's label says why it has no level; a partial one says it here.
             band.label, *([band.no_level] if band.calibrated and band.no_level else []),
             f"estimand: {band.estimand}", ""]
    selected = band.thresholds is not None
    head = f"{'PC(+)':>7} {'cost':>9} {'low':>9} {'high':>9}"
    lines.append(head + (f"  {'threshold':>15}" if selected else ""))
    for i in _sample_rows(band.pc):
        row = (f"{band.pc[i]:>7.3f} {band.cost[i]:>9.4f} {band.low[i]:>9.4f} "
               f"{band.high[i]:>9.4f}")
        if selected:
            assert band.thresholds is not None
            row += f"  {_threshold_text(band.thresholds[i]):>15}"
        lines.append(row)
    widest = int(np.argmax(band.width))
    lines.append(f"\nwidest at PC(+) = {band.pc[widest]:.3f}: {band.width[widest]:.4f}")
    return "\n".join(lines)


def format_difference(band: DifferenceBand) -> str:
    lines = [f"cost({band.a}) - cost({band.b}) on the same rows: {band.label}",
             f"estimand: {band.estimand}", "",
             f"{'PC(+)':>7} {'diff':>9} {'low':>9} {'high':>9}"]
    for i in _sample_rows(band.pc):
        lines.append(f"{band.pc[i]:>7.3f} {band.diff[i]:>9.4f} {band.low[i]:>9.4f} "
                     f"{band.high[i]:>9.4f}")
    lines.append("")
    scope = "for the whole curve" if band.simultaneous else "pointwise"
    if not band.calibrated:
        lines.append(band.significance_note)
    elif band.significant:
        for s in band.significant:
            lines.append(f"significant ({scope}) for PC(+) in [{s.lo:.3f}, {s.hi:.3f}]: "
                         f"{s.better} is cheaper")
    else:
        lines.append(f"the band contains 0 everywhere: no significant difference at "
                     f"{band.level:.0%} ({scope})")
    return "\n".join(lines)


def _validation(args: argparse.Namespace, names: list[str]) -> Dataset:
    """The validation file of ``--select FILE``, read with the same loader options."""
    saved = args.file, args.models
    args.file, args.models = args.select, names
    try:
        return load_from_args(args)
    finally:
        args.file, args.models = saved


def _scored(dataset: Dataset, name: str, what: str) -> ScoredClassifier:
    c = _classifier(dataset, name)
    if not isinstance(c, ScoredClassifier):
        raise ParameterError(f"{what}: classifier {name!r} has confusion matrices, not scores; "
                             "--select needs scores")
    if c.count is not None:  # its entries are score cells, not the validation rows
        raise ParameterError(f"{what}: classifier {name!r} is in the score-count layout; "
                             "--select needs the validation rows themselves")
    return c


def run_band(args: argparse.Namespace) -> int:
    from costdash.bands import cost_band

    if args.models is None and args.model is not None:
        args.models = [args.model]
    dataset = load_from_args(args)
    if args.model is None:
        if len(dataset.names) != 1:
            raise ParameterError(f"{dataset.source} has {len(dataset.names)} classifiers; choose "
                                 f"one with --model ({', '.join(dataset.names)})")
        name = dataset.names[0]
    else:
        name = args.model
    select: Any = None
    if args.select == "split":
        select = "split"
    elif args.select is not None:
        v = _scored(_validation(args, [name]), name, f"--select {args.select}")
        select = (v.y_true, v.score)
    band = cost_band(_classifier(dataset, name), threshold=args.threshold, level=args.level,
                     replicates=args.replicates, rng=args.seed, grid=args.grid,
                     method=args.method, simultaneous=args.simultaneous, select=select)
    if args.json:
        print_json(band_to_dict(band, args.seed))
    else:
        print(format_band(band))
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from costdash.bands import difference_band

    if args.a == args.b:
        raise ParameterError(f"--a and --b name the same classifier ({args.a!r})")
    if args.models is None:
        args.models = [args.a, args.b]
    threshold: Any = None
    if args.threshold is not None:
        if len(args.threshold) > 2:
            raise ParameterError("--threshold takes one value (both classifiers) or two (a, b)")
        threshold = args.threshold[0] if len(args.threshold) == 1 else tuple(args.threshold)
    dataset = load_from_args(args)
    select: Any = None
    if args.select == "split":
        select = "split"
    elif args.select is not None:
        v = _validation(args, [args.a, args.b])
        va = _scored(v, args.a, f"--select {args.select}")
        vb = _scored(v, args.b, f"--select {args.select}")
        if not np.array_equal(va.y_true, vb.y_true):
            raise ParameterError(f"--select {args.select}: {args.a!r} and {args.b!r} are not "
                                 "scored on the same validation rows")
        select = (va.y_true, va.score, vb.score)
    band = difference_band(_classifier(dataset, args.a), _classifier(dataset, args.b),
                           threshold=threshold, level=args.level, replicates=args.replicates,
                           rng=args.seed, grid=args.grid, method=args.method,
                           simultaneous=args.simultaneous, select=select)
    if args.json:
        print_json(difference_to_dict(band, args.seed))
    else:
        print(format_difference(band))
    return 0
