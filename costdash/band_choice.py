"""Which band a page, a link or a report asks for: the view's ``method`` and ``simultaneous``
turned into the arguments of :func:`costdash.bands.cost_band` / :func:`~costdash.bands.difference_band`.

The dashboard's Confidence and Compare pages, their cache keys, the report download and
``costdash report`` all read a band request through :func:`band_choice`, so that one request
always means one band. The choices, in the view's words (``method=``):

=====================  ==========================================================================
``split``              thresholds selected per PC(+) on a stratified half, their cost banded on
                       the other half (Clopper–Pearson–MOVER; for a difference the
                       discordant-pair Clopper–Pearson–MOVER):
                       calibrated. **The default for a scoring classifier's curve** (and for
                       Compare).
``percentile``         a bootstrap without a level: the resampling spread of the re-tuned
                       envelope (a curve, or the difference of two envelopes, which has no
                       significant ranges); with a fixed threshold, the paper's percentile
                       bootstrap of the cost line.
``double-bootstrap``   the whole envelope's double-bootstrap calibrated band (approximate: a
                       level only where its coverage study earned it, else a spread).
``clopper-pearson-mover``  a threshold fixed beforehand, or one confusion matrix:
                       Clopper–Pearson limits combined by MOVER (lower limit no higher than
                       the gamma limit of the weighted count), closed form, calibrated.
                       **The default with a fixed threshold.** (``discordant-mover`` for a
                       difference of fixed thresholds.)
``wilson-mover``       the old default: Wilson–MOVER limits (``newcombe-mover`` for a
                       difference), kept for links that name it; its exact coverage falls to
                       0.80 at a nominal 0.9 when a class expects a fraction of an error.
=====================  ==========================================================================

``simultaneous`` asks for a band that holds the whole curve at once; only the closed-form choices
have one (for the others it is ignored, and :attr:`BandChoice.simultaneous` says so).
A value that does not fit the question (unknown, or ``double-bootstrap`` with a fixed threshold)
falls back to the question's default, so an old or hand-edited link still opens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from costdash.bands import (
    ESTIMAND_DIFF_ENVELOPE,
    ESTIMAND_DIFF_LINE,
    ESTIMAND_DIFF_PERCENTILE_LINE,
    ESTIMAND_DIFF_SELECTED_SPLIT,
    ESTIMAND_ENVELOPE_DOUBLE,
    ESTIMAND_ENVELOPE_SPREAD,
    ESTIMAND_LINE,
    ESTIMAND_PERCENTILE_LINE,
    ESTIMAND_SELECTED_SPLIT,
    MIN_CALIBRATED_REPLICATES,
)

__all__ = ["CHOICES", "BandChoice", "band_choice", "default_method", "method_options"]

SPLIT = "split"
PERCENTILE = "percentile"
DOUBLE = "double-bootstrap"
CP_MOVER = "clopper-pearson-mover"
DISCORDANT = "discordant-mover"
WILSON = "wilson-mover"
NEWCOMBE = "newcombe-mover"
_CLOSED = (SPLIT, CP_MOVER, DISCORDANT, WILSON, NEWCOMBE)

# (difference, fixed) -> {value: what the control says}; the first is the default.
CHOICES: dict[tuple[bool, bool], dict[str, str]] = {
    (False, False): {
        SPLIT: "Thresholds picked on a held-out half (calibrated)",
        PERCENTILE: "Resampling spread of the re-tuned envelope (no level)",
        DOUBLE: "Double bootstrap of the envelope (approximate: a level only where earned)",
    },
    (False, True): {
        CP_MOVER: "Clopper–Pearson–MOVER (closed form, calibrated)",
        WILSON: "Wilson–MOVER (closed form, no level: under-covers with very few errors)",
        PERCENTILE: "Percentile bootstrap (the paper's; no level)",
    },
    (True, False): {
        SPLIT: "Thresholds picked on a held-out half (calibrated, with significance)",
        PERCENTILE: "Resampling spread of the re-tuned envelopes (exploratory, no significance)",
    },
    (True, True): {
        DISCORDANT: "Discordant-pair Clopper–Pearson–MOVER (closed form, calibrated)",
        NEWCOMBE: "Newcombe–MOVER (closed form, no level: under-covers with few discordant pairs)",
        PERCENTILE: "Paired percentile bootstrap (no level, no significance)",
    },
}
"""The choices of each question: (difference band?, threshold fixed?) -> {value: label}."""

# Other spellings a link or the CLI may carry (the core's method names).
_ALIASES = {"wilson": WILSON, "mover": WILSON, "newcombe": NEWCOMBE, "cp-mover": CP_MOVER,
            "clopper-pearson": CP_MOVER, "exact": CP_MOVER, "select": SPLIT, "selected": SPLIT,
            "held-out": SPLIT,
            "envelope": PERCENTILE, "spread": PERCENTILE, "bootstrap": PERCENTILE,
            "double": DOUBLE}

_ESTIMANDS = {
    (False, SPLIT): ESTIMAND_SELECTED_SPLIT, (False, PERCENTILE, False): ESTIMAND_ENVELOPE_SPREAD,
    (False, DOUBLE): ESTIMAND_ENVELOPE_DOUBLE, (False, WILSON): ESTIMAND_LINE,
    (False, CP_MOVER): ESTIMAND_LINE, (True, DISCORDANT): ESTIMAND_DIFF_LINE,
    (False, PERCENTILE, True): ESTIMAND_PERCENTILE_LINE,
    (True, SPLIT): ESTIMAND_DIFF_SELECTED_SPLIT, (True, PERCENTILE, False): ESTIMAND_DIFF_ENVELOPE,
    (True, NEWCOMBE): ESTIMAND_DIFF_LINE, (True, PERCENTILE, True): ESTIMAND_DIFF_PERCENTILE_LINE,
}


@dataclass(frozen=True)
class BandChoice:
    """A band request, resolved for its question.

    Attributes
    ----------
    method : str
        One of the values of :data:`CHOICES` for (``difference``, ``fixed``).
    simultaneous : bool
        Whole-curve band (only ever True for a closed-form choice).
    fixed : bool
        The band is of a threshold fixed beforehand (or of one confusion matrix).
    difference : bool
        A band of the difference of two classifiers.
    asked : bool
        Whether the request named this method (False: the question's default).
    """

    method: str
    simultaneous: bool = False
    fixed: bool = False
    difference: bool = False
    asked: bool = False

    @property
    def closed_form(self) -> bool:
        """No resampling: the replicates are not used (the band's ``replicates`` is 0)."""
        return self.method in _CLOSED

    @property
    def min_replicates(self) -> int:
        """Fewest replicates the choice accepts (a double bootstrap carries a level)."""
        return MIN_CALIBRATED_REPLICATES if self.method == DOUBLE else 1

    @property
    def label(self) -> str:
        """What the page's control calls it."""
        return CHOICES[(self.difference, self.fixed)][self.method]

    @property
    def estimand(self) -> str:
        """The question the band will answer, in words, before it is computed."""
        key: tuple = (self.difference, self.method)
        if self.method == PERCENTILE:
            key = (self.difference, PERCENTILE, self.fixed)
        return _ESTIMANDS[key]

    def arguments(self) -> dict[str, Any]:
        """Keyword arguments of ``cost_band`` / ``difference_band`` (with the ``threshold`` and
        ``rng`` the caller gives)."""
        if self.method == SPLIT:
            return {"select": "split", "method": None, "simultaneous": self.simultaneous}
        if self.method in (CP_MOVER, DISCORDANT):
            return {"select": None, "method": None, "simultaneous": self.simultaneous}
        if self.method in (WILSON, NEWCOMBE):
            return {"select": None, "method": self.method, "simultaneous": self.simultaneous}
        return {"select": None, "method": self.method, "simultaneous": False}

    def key_fields(self) -> dict[str, Any]:
        """What a cache key needs to tell this band from the others of the same inputs."""
        return {"method": self.method, "simultaneous": self.simultaneous,
                "select": "split" if self.method == SPLIT else None}


def default_method(*, fixed: bool, difference: bool = False) -> str:
    """The question's default: held-out selection for a curve, closed form for a fixed
    threshold."""
    return next(iter(CHOICES[(difference, fixed)]))


def method_options(*, fixed: bool, difference: bool = False) -> list[tuple[str, str]]:
    """``(value, label)`` of the question's choices, the default first."""
    return list(CHOICES[(difference, fixed)].items())


def band_choice(method: Any = None, simultaneous: Any = False, *, fixed: bool = False,
                difference: bool = False) -> BandChoice:
    """The band a request asks for.

    Parameters
    ----------
    method : str or None
        The view's ``method`` (None, or a value that does not fit the question: its default).
    simultaneous : bool, list or None
        The view's ``simultaneous`` (a page's checklist value counts as on when not empty).
    fixed : bool
        A threshold fixed beforehand (``threshold=`` given, or a classifier known only by one
        confusion matrix).
    difference : bool
        A band of the difference of two classifiers (Compare).

    Returns
    -------
    BandChoice
    """
    options = CHOICES[(difference, fixed)]
    name = method.strip().lower() if isinstance(method, str) else None
    name = _ALIASES.get(name, name) if name else None
    # Each closed form has a line name and a difference name: a link keeps its family.
    if difference:
        name = {WILSON: NEWCOMBE, CP_MOVER: DISCORDANT}.get(name, name)
    else:
        name = {NEWCOMBE: WILSON, DISCORDANT: CP_MOVER}.get(name, name)
    asked = name in options
    chosen = name if asked else default_method(fixed=fixed, difference=difference)
    on = bool(simultaneous) if not isinstance(simultaneous, str) else \
        simultaneous.strip().lower() in ("1", "true", "on", "yes")
    if isinstance(method, str) and method.strip().lower() in ("clopper-pearson", "exact"):
        on = True
    closed = chosen in _CLOSED
    return BandChoice(method=chosen, simultaneous=on and closed, fixed=fixed,
                      difference=difference, asked=asked)
