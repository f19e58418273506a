"""Where an approximate band earns its level: the regime measured by
``studies/double_bootstrap_coverage.py``, in one place.

A band whose method is approximate (today only the double bootstrap of the whole envelope) shows
its level only where the shipped study measured its coverage within :data:`TOLERANCE` of nominal,
by the **smaller class's count** and **PC(+)**; elsewhere it is a spread without a level, and
:func:`level_regime` says why in words. :class:`costdash.bands.CostBand` (its ``calibrated``,
``label``, ``level_range`` and ``no_level``), the CLI's JSON and the dashboard's labels all read
this module.

How a band's grid is read against the study's table (each step conservative):

* **count**: the table row of the largest studied count not above the band's smaller class
  (fewer than the smallest studied count: no level);
* **PC(+)**: the study's PC(+) is that of the smaller class (the positives there); with the
  negatives fewer the table is read at ``1 - PC(+)`` (the binormal model is symmetric under
  swapping the classes). Between two studied values both must earn the level; outside the
  studied range (0.05 to 0.95) there is no level;
* **level**: a studied level (0.8, 0.9, 0.95) is read as such; one between two studied levels
  must be earned at both; others were not studied (no level);
* the level is claimed on one contiguous PC(+) range of the grid (the longest run where it is
  earned); a band earning it nowhere has ``calibrated=False``.
Private: a part of :mod:`costdash.bands`, whose ``__init__`` holds the public names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["APPROXIMATE_METHODS", "STUDY", "TOLERANCE", "LevelRegime", "level_regime"]

STUDY = "studies/double_bootstrap_coverage.py"
"""The study the tables below come from (its raw results: the .csv beside it)."""

TOLERANCE = 0.04
"""A level is earned where the measured coverage is within this of nominal."""

STUDY_LEVELS = (0.8, 0.9, 0.95)
STUDY_COUNTS = (10, 25, 50, 100, 250, 1000)
STUDY_PC = tuple(round(0.05 * i, 2) for i in range(1, 20))
"""PC(+) of the smaller class at which coverage was measured, 0.05 to 0.95."""

# Measured coverage of the true optimal cost (binormal d = 1.5, 200 x 100 replicates, 150 test
# sets per design, 100 with 1,000 of the smaller class: Monte Carlo SE about 0.024 / 0.030 at
# 0.9), by nominal level, then count of the smaller class, at each of STUDY_PC: the worse of the
# two sizes of the larger class studied (as many as the smaller class, and 19 times as many).
# Printed by ``python studies/double_bootstrap_coverage.py --from-csv
# studies/double_bootstrap_coverage.csv --table``; tests/test_band_regime.py checks it against
# that CSV.
DOUBLE_BOOTSTRAP_COVERAGE: dict[float, dict[int, tuple[float, ...]]] = {
    0.8: {
        10: (
            0.520, 0.533, 0.560, 0.633, 0.640, 0.667, 0.673, 0.693, 0.667, 0.620, 0.627, 0.660,
            0.620, 0.560, 0.553, 0.513, 0.460, 0.420, 0.420),
        25: (
            0.520, 0.580, 0.620, 0.620, 0.700, 0.760, 0.780, 0.773, 0.760, 0.747, 0.773, 0.780,
            0.747, 0.760, 0.713, 0.693, 0.627, 0.580, 0.520),
        50: (
            0.600, 0.680, 0.720, 0.760, 0.707, 0.727, 0.753, 0.820, 0.813, 0.807, 0.813, 0.840,
            0.813, 0.833, 0.793, 0.840, 0.700, 0.607, 0.560),
        100: (
            0.560, 0.727, 0.693, 0.713, 0.707, 0.713, 0.733, 0.687, 0.713, 0.713, 0.740, 0.753,
            0.753, 0.773, 0.793, 0.853, 0.753, 0.693, 0.640),
        250: (
            0.680, 0.713, 0.740, 0.747, 0.740, 0.747, 0.793, 0.773, 0.753, 0.867, 0.753, 0.840,
            0.853, 0.847, 0.773, 0.780, 0.773, 0.780, 0.633),
        1000: (
            0.780, 0.750, 0.740, 0.760, 0.750, 0.720, 0.740, 0.770, 0.740, 0.750, 0.870, 0.840,
            0.860, 0.830, 0.780, 0.850, 0.830, 0.870, 0.690),
    },
    0.9: {
        10: (
            0.567, 0.593, 0.607, 0.660, 0.667, 0.673, 0.687, 0.713, 0.680, 0.667, 0.687, 0.700,
            0.653, 0.633, 0.627, 0.607, 0.533, 0.480, 0.480),
        25: (
            0.633, 0.660, 0.687, 0.733, 0.760, 0.833, 0.853, 0.873, 0.860, 0.847, 0.860, 0.860,
            0.853, 0.820, 0.773, 0.740, 0.687, 0.687, 0.613),
        50: (
            0.680, 0.747, 0.793, 0.833, 0.833, 0.840, 0.860, 0.940, 0.887, 0.887, 0.913, 0.920,
            0.920, 0.880, 0.867, 0.807, 0.727, 0.653, 0.640),
        100: (
            0.673, 0.793, 0.840, 0.833, 0.833, 0.847, 0.840, 0.840, 0.840, 0.827, 0.873, 0.860,
            0.853, 0.860, 0.873, 0.913, 0.813, 0.740, 0.740),
        250: (
            0.767, 0.813, 0.867, 0.853, 0.860, 0.853, 0.860, 0.873, 0.860, 0.860, 0.867, 0.920,
            0.960, 0.933, 0.940, 0.867, 0.840, 0.860, 0.727),
        1000: (
            0.850, 0.860, 0.820, 0.880, 0.870, 0.830, 0.860, 0.850, 0.850, 0.930, 0.930, 0.940,
            0.940, 0.860, 0.890, 0.860, 0.930, 0.950, 0.780),
    },
    0.95: {
        10: (
            0.573, 0.593, 0.607, 0.660, 0.667, 0.673, 0.693, 0.713, 0.687, 0.687, 0.713, 0.733,
            0.673, 0.647, 0.647, 0.613, 0.553, 0.507, 0.493),
        25: (
            0.660, 0.673, 0.727, 0.767, 0.800, 0.853, 0.867, 0.887, 0.880, 0.867, 0.873, 0.867,
            0.860, 0.840, 0.787, 0.753, 0.713, 0.720, 0.653),
        50: (
            0.727, 0.780, 0.827, 0.853, 0.873, 0.880, 0.887, 0.907, 0.933, 0.933, 0.920, 0.933,
            0.913, 0.893, 0.880, 0.820, 0.780, 0.707, 0.687),
        100: (
            0.727, 0.853, 0.907, 0.893, 0.907, 0.893, 0.900, 0.927, 0.887, 0.900, 0.920, 0.913,
            0.893, 0.887, 0.913, 0.913, 0.840, 0.767, 0.787),
        250: (
            0.820, 0.873, 0.907, 0.927, 0.927, 0.927, 0.927, 0.940, 0.913, 0.913, 0.933, 0.920,
            0.973, 0.967, 0.927, 0.913, 0.893, 0.867, 0.787),
        1000: (
            0.890, 0.900, 0.890, 0.920, 0.920, 0.890, 0.890, 0.900, 0.900, 0.920, 0.970, 0.970,
            0.960, 0.970, 0.940, 0.930, 0.960, 0.930, 0.810),
    },
}

APPROXIMATE_METHODS: dict[str, dict[float, dict[int, tuple[float, ...]]]] = {
    "double-bootstrap": DOUBLE_BOOTSTRAP_COVERAGE}
"""Methods whose level is only approximate, and the measured coverage that says where it holds."""

_EPS = 1e-9
_NAMES = {"double-bootstrap": "double bootstrap"}


def _pct(level: float) -> str:
    return f"{100.0 * level:.3f}".rstrip("0").rstrip(".") + "%"


@dataclass(frozen=True, eq=False)
class LevelRegime:
    """Where a band's level holds on its PC(+) grid.

    Attributes
    ----------
    holds : ndarray of bool, shape (G,)
        True on the one contiguous run of the grid where the level is shown.
    coverage : ndarray of float64, shape (G,)
        The measured coverage each grid PC(+) was judged by (the worse of the studied values
        around it; NaN where nothing was studied).
    reason : str
        Why there is no level where ``holds`` is False, in words ("" when it holds everywhere).
    """

    holds: NDArray[np.bool_]
    coverage: NDArray[np.float64]
    reason: str


def _longest_run(flags: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Only the longest run of True (the first of equally long ones)."""
    out = np.zeros(flags.shape, dtype=bool)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], flags.astype(np.int8), [0]))))
    if edges.size:
        starts, stops = edges[0::2], edges[1::2]
        i = int(np.argmax(stops - starts))
        out[starts[i]:stops[i]] = True
    return out


def _bracket(values: tuple[float, ...], x: NDArray[np.float64]
             ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """Indices of the studied values at or around each ``x`` and whether ``x`` was studied."""
    v = np.asarray(values)
    hi = np.clip(np.searchsorted(v, x - _EPS, side="left"), 0, v.size - 1)
    lo = np.clip(np.searchsorted(v, x + _EPS, side="right") - 1, 0, v.size - 1)
    inside = (x >= v[0] - _EPS) & (x <= v[-1] + _EPS)
    return lo, hi, inside


def _studied_levels(level: float) -> tuple[float, ...]:
    """The studied levels a level is judged by: itself, or the two around it; () if outside."""
    for s in STUDY_LEVELS:
        if math.isclose(level, s, abs_tol=1e-9):
            return (s,)
    for a, b in zip(STUDY_LEVELS, STUDY_LEVELS[1:]):
        if a < level < b:
            return (a, b)
    return ()


def level_regime(method: str, n_pos: int, n_neg: int, pc: NDArray[np.float64],
                 level: float) -> LevelRegime | None:
    """Where a band of an approximate ``method`` earns ``level`` on the grid ``pc``.

    Parameters
    ----------
    method : str
        The band's method; None is returned for a method that is not approximate (its level,
        if it has one, holds wherever it is calibrated).
    n_pos, n_neg : int
        Class totals of the banded rows.
    pc : ndarray of float64, shape (G,)
        The band's PC(+) grid.
    level : float
        The band's nominal level.

    Returns
    -------
    LevelRegime or None

    Examples
    --------
    >>> import numpy as np
    >>> r = level_regime("double-bootstrap", 12, 188, np.array([0.9]), 0.9)
    >>> bool(r.holds[0]), r.reason.startswith("no level: with 12 positives")
    (False, True)
    """
    table = APPROXIMATE_METHODS.get(method)
    if table is None:
        return None
    pc = np.asarray(pc, dtype=np.float64)
    what = _NAMES.get(method, method)
    minority = min(n_pos, n_neg)
    smaller = "positives" if n_pos <= n_neg else "negatives"
    x = pc if n_pos <= n_neg else 1.0 - pc
    nothing = np.zeros(pc.size, dtype=bool)
    unknown = np.full(pc.size, np.nan)
    tiers = [c for c in STUDY_COUNTS if c <= minority]
    levels = _studied_levels(level)
    if not tiers:
        return LevelRegime(nothing, unknown, (
            f"no level: with {minority:,} {smaller}, fewer than the smallest studied count of "
            f"{STUDY_COUNTS[0]}, the {what} was not measured"))
    if not levels:
        studied = ", ".join(_pct(s) for s in STUDY_LEVELS[:-1]) + f" and {_pct(STUDY_LEVELS[-1])}"
        return LevelRegime(nothing, unknown, (
            f"no level: the {what} was measured at levels {studied} only, not at "
            f"{_pct(level)}"))
    tier = tiers[-1]
    if any(tier not in table.get(s, {}) for s in levels):
        return LevelRegime(nothing, unknown, (
            f"no level: the {what} was not measured with {tier:,} of the smaller class at "
            f"{_pct(level)}"))
    lo, hi, inside = _bracket(STUDY_PC, x)
    ok = inside.copy()
    # The measured coverage farthest from its nominal level, and that level, at each grid PC(+).
    worst, worst_level = np.zeros(pc.size), np.zeros(pc.size)
    gap = np.full(pc.size, -1.0)
    for s in levels:
        values = np.asarray(table[s][tier])
        for idx in (lo, hi):
            off = np.abs(values[idx] - s)
            ok &= off <= TOLERANCE + _EPS
            farther = off > gap
            worst = np.where(farther, values[idx], worst)
            worst_level = np.where(farther, s, worst_level)
            gap = np.where(farther, off, gap)
    coverage = np.where(inside, worst, np.nan)
    holds = _longest_run(ok)
    if holds.all():
        return LevelRegime(holds, coverage, "")
    where = "" if not holds.any() else (
        f" outside PC(+) {pc[holds][0]:.3g}–{pc[holds][-1]:.3g}")
    # The reason names the measured cell farthest from nominal outside the claimed range.
    outside = ~holds & inside & (gap > TOLERANCE + _EPS)
    if outside.any():
        i = int(np.flatnonzero(outside)[np.argmax(gap[outside])])
        at = "" if tier == minority else f" for {tier:,} {smaller}"
        measured = (f"the study measured coverage {coverage[i]:.2f} at PC(+) {pc[i]:.3g}{at}, "
                    f"more than {TOLERANCE:g} from the nominal {_pct(worst_level[i])}")
    else:
        measured = (f"the study measured the {what} at PC(+) {STUDY_PC[0]:g} to "
                    f"{STUDY_PC[-1]:g} of the smaller class only")
    return LevelRegime(holds, coverage,
                       f"no level{where}: with {minority:,} {smaller} {measured}")
