"""Rare-event axes: log FPR in ROC space and log-odds PC(+) in cost space (presentation only).

At a prevalence of a few percent the conditions that matter sit squashed against FPR = 0 and
PC(+) = 0. Plotly has no log-odds axis, and its log axes drop FPR = 0 (where every ROC curve
starts), so both are drawn on linear axes holding transformed coordinates, with ticks labelled in
the user's terms:

* ROC space: x = log10(max(FPR, floor)), the floor half the smallest non-zero FPR the data can
  have (0.5 / negatives); FPR = 0 sits on the floor, whose tick reads "0".
* Cost space: x = log10(PC(+) / (1 - PC(+))), clamped to +-:data:`LOG_ODDS_LIMIT`.

Straight lines of the linear axes (hull edges, cost lines, iso-performance lines) are curves here,
so they are sampled densely. ``assets/costmath.js`` (``logOdds``, ``logFpr``, ``fprFloor``) does
the same arithmetic for the moving parts; tests/web/test_costmath_js.py holds both to the same
numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

LOG_ODDS_LIMIT = 8.0
"""Curves in log-odds cost space are drawn for PC(+) odds from 1e-8 to 1e8."""
LOG_ODDS_VIEW = 5.0
"""The log-odds axis opens on odds from 1e-5 to 1e5."""
CURVE_STEP = 0.05
"""Sampling step of curves in log10 units (0.05 decades: smooth at any zoom the page offers)."""

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_odds(pc: Any) -> NDArray[np.float64]:
    """log10 of the odds PC(+) / (1 - PC(+)), clamped to +-LOG_ODDS_LIMIT (0 and 1 included)."""
    pc = np.asarray(pc, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = (np.log(pc) - np.log1p(-pc)) / np.log(10.0)
    return np.clip(np.nan_to_num(x, nan=0.0, posinf=LOG_ODDS_LIMIT, neginf=-LOG_ODDS_LIMIT),
                   -LOG_ODDS_LIMIT, LOG_ODDS_LIMIT)


def pc_of_log_odds(x: Any) -> NDArray[np.float64]:
    """PC(+) of log10 odds ``x`` (the inverse of :func:`log_odds`)."""
    return 1.0 / (1.0 + 10.0 ** -np.asarray(x, dtype=np.float64))


def fpr_floor(n_neg: int) -> float:
    """Where FPR = 0 is drawn on the log FPR axis: half the smallest non-zero FPR."""
    return 0.5 / max(int(n_neg), 1)


def log_fpr(fpr: Any, floor: float) -> NDArray[np.float64]:
    """log10 of FPR, FPR below ``floor`` (0 included) drawn at the floor."""
    return np.log10(np.maximum(np.asarray(fpr, dtype=np.float64), floor))


def _power_text(k: int) -> str:
    return {0: "1", 1: "10", -1: "0.1", -2: "0.01"}.get(k, "10" + str(k).translate(_SUPERSCRIPT))


def log_fpr_axis(floor: float) -> dict[str, Any]:
    """Range and ticks of the log FPR axis: decades, and "0" at the floor."""
    lo = float(np.log10(floor))
    decades = list(range(int(np.ceil(lo + 0.3)), 1))
    return {"range": [lo - 0.08, 0.04], "tickvals": [lo, *decades],
            "ticktext": ["0", *(_power_text(k) for k in decades)]}


def log_odds_axis(view: float = LOG_ODDS_VIEW) -> dict[str, Any]:
    """Range and ticks of the log-odds PC(+) axis, labelled in PC(+) at exactly those values
    (10⁻³ is at the log odds of PC(+) = 0.001, not of odds 0.001)."""
    k = int(LOG_ODDS_LIMIT)
    low = [10.0 ** -j for j in range(k, 0, -1)]                 # 1e-8 ... 0.1
    values = [*low, 0.5, *(1.0 - x for x in reversed(low))]

    def text(j: int) -> str:
        return _power_text(-j)
    labels = [*(text(j) for j in range(k, 0, -1)), "0.5",
              "0.9", "0.99", *("1−" + text(j) for j in range(3, k + 1))]
    return {"range": [-view, view], "tickvals": [float(x) for x in log_odds(values)],
            "ticktext": labels, "tickangle": 0, "tickfont": {"size": 10}}


def pc_samples(breakpoints: Any = ()) -> NDArray[np.float64]:
    """PC(+) values to sample a curve of cost space at on the log-odds axis: evenly spaced in
    log odds over the drawn range, plus ``breakpoints`` (an envelope's corners stay exact)."""
    grid = pc_of_log_odds(np.arange(-LOG_ODDS_LIMIT, LOG_ODDS_LIMIT + CURVE_STEP / 2, CURVE_STEP))
    extra = np.asarray(breakpoints, dtype=np.float64)
    lo, hi = grid[0], grid[-1]
    extra = extra[(extra > lo) & (extra < hi)]
    return np.unique(np.concatenate([grid, extra]))


def fpr_samples(fpr0: float, fpr1: float, floor: float) -> NDArray[np.float64]:
    """FPR values along [fpr0, fpr1] evenly spaced on the log FPR axis (a straight ROC edge is a
    curve there); both ends included."""
    a, b = max(fpr0, floor), max(fpr1, floor)
    if b <= a:
        return np.array([fpr0, fpr1])
    n = max(2, int(np.ceil((np.log10(b) - np.log10(a)) / CURVE_STEP)) + 1)
    inner = 10.0 ** np.linspace(np.log10(a), np.log10(b), n)
    return np.concatenate([[fpr0], inner[1:-1], [fpr1]])
