"""Confidence bands on cost curves (Drummond & Holte, paper 000 §8-9), each labelled with the
question it answers.

Every band carries ``estimand`` (in words, what it is a band for), ``method`` and
``calibrated``: only a calibrated band's coverage is (approximately) its ``level``, and only a
calibrated band may be shown with a percentage; the others are a *resampling spread*. Every band
measures **test-set sampling variability of fixed models** (never retrained), nothing about the
learning algorithm. ``docs/bands.md`` has the formulas and the measured coverage of each method
(``studies/band_coverage.py``).

Three questions
---------------
* **A threshold fixed beforehand** (one confusion matrix; ``threshold=``): ``FN ~ Bin(P, FNR)``
  and ``FP ~ Bin(N, FPR)`` with the class totals fixed (paper 000 Fig. 11), and the cost line
  ``NE(x) = FNR x + FPR (1 - x)``. Default: Clopper-Pearson limits of the two rates combined by
  MOVER, the lower limit no higher than Fay & Feuer's gamma limit of the weighted count
  (``"clopper-pearson-mover"``: closed form, pointwise, calibrated; its exact coverage is at
  least the level in every regime of ``studies/fixed_threshold_coverage.py``, where the old
  default ``"wilson-mover"``, still selectable, fell to 0.80); ``simultaneous=True``: the
  Clopper-Pearson rectangle, each rate at level ``sqrt(level)``, which holds the whole line;
  ``method="percentile"``: the paper's binomial bootstrap (uncalibrated: it collapses to zero
  width when FN or FP is 0).
* **Thresholds selected from the data** (``select="split"`` or validation rows): the honest
  question is "what will the thresholds I pick cost on new data?". At each PC(+) the optimal
  vertex's threshold is picked on the selection rows (a stratified half, or the validation set)
  and the cost of that fixed threshold is banded on the other rows (Clopper-Pearson-MOVER, or a
  Bonferroni Clopper-Pearson rectangle for the whole curve).
* **The whole envelope** (neither): every replicate re-optimises its thresholds. The envelope is a
  minimum over ~n thresholds, biased low by ~n^(-2/3) while its SD shrinks like n^(-1/2), so the
  percentile band (the default here) under-covers the optimal cost and is returned as an
  uncalibrated spread. ``method="double-bootstrap"`` calibrates the basic interval by a double
  bootstrap (approximate; about ``inner_replicates`` times the work): it shows its level only on
  the PC(+) range where ``studies/double_bootstrap_coverage.py`` measured its coverage within
  0.04 of nominal for the smaller class's count (``level_range``; :mod:`costdash.bands.regime`),
  and says why not elsewhere (``no_level``); earned nowhere, it is a spread (``calibrated`` False).

Differences (paper 000 §9) follow the same split: the difference of two re-tuned envelopes is an
exploratory spread with no ``significant`` ranges; fixed thresholds, or thresholds selected on
held-out rows, give a calibrated band (per class, MOVER on the discordant pairs with
Clopper-Pearson limits, ``"discordant-mover"``; Newcombe's interval, ``"newcombe-mover"``, is
still selectable; the two classes combined by MOVER) whose ``significant`` ranges are a test
(pointwise, or for the whole curve when ``simultaneous``).

The bootstrap replicates are drawn and reduced to envelopes in bulk by private modules:
:mod:`costdash.bands.engine` (super-bins and envelopes; its docstring says how) with
:mod:`costdash.bands.sampler` (exact multinomial counts); the band edges of every method are
in :mod:`costdash.bands.edges`, the argument checks in :mod:`costdash.bands.inputs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash.bands.edges import (
    PAIRED_INTERVALS,
    _band_edges,
    _double_edges,
    _line_edges,
    _paired_costs,
    _paired_edges,
)
from costdash.bands.engine import (
    ProgressCallback,
    _curve_replicates,
    _difference_replicates,
    _double_bootstrap,
    _full_data_envelope,
    _line_replicates,
    _paired_percentile,
    _Superbins,
    _superbins_of_roc,
    _superbins_of_score_counts,
    _superbins_of_scores,
)
from costdash.bands.estimands import (
    ESTIMAND_DIFF_ENVELOPE,
    ESTIMAND_DIFF_LINE,
    ESTIMAND_DIFF_PERCENTILE_LINE,
    ESTIMAND_DIFF_SELECTED_SPLIT,
    ESTIMAND_DIFF_SELECTED_VALIDATION,
    ESTIMAND_ENVELOPE_DOUBLE,
    ESTIMAND_ENVELOPE_SPREAD,
    ESTIMAND_LINE,
    ESTIMAND_PERCENTILE_LINE,
    ESTIMAND_SELECTED_SPLIT,
    ESTIMAND_SELECTED_VALIDATION,
    _estimand,
    band_label,
)
from costdash.bands.inputs import (
    DEFAULT_INNER_REPLICATES,
    MAX_REPLICATES,
    LINE_CLOSED_FORMS,
    METHODS,
    UNEARNED_METHODS,
    UNEARNED_REASON,
    MIN_CALIBRATED_REPLICATES,
    _calibrated_replicates,
    _check_envelope_method,
    _check_inner,
    _check_replicates,
    _check_size,
    _closed_form_method,
    _has_folds,
    _paired_input,
    _pick_counted_row,
    _same_rows,
    _scores,
    _selected_counts,
    _selected_method,
    _selected_thresholds,
    _single_matrix,
    _tables,
    band_iv,
)
from costdash.bands.regime import LevelRegime, level_regime
from costdash._resampling import AtLevel, RngLike, order_statistic_ranks
from costdash._resampling import check_level as _check_level
from costdash._resampling import readonly as _readonly
from costdash._selection import flagged_counts
from costdash.dataset import CountedClassifier, ScoredClassifier
from costdash.errors import ParameterError
from costdash.roc import RocCurve

__all__ = [
    "MAX_REPLICATES",
    "METHODS",
    "MIN_CALIBRATED_REPLICATES",
    "NO_SIGNIFICANCE",
    "CostBand",
    "DifferenceBand",
    "SignificantInterval",
    "confidence_ranks",
    "cost_band",
    "difference_band",
]

DEFAULT_GRID = 201
"""Default number of PC(+) values, ``linspace(0, 1, 201)``."""

DEFAULT_MAX_BATCH_ELEMENTS = 1 << 20
"""Default budget of (replicates x categories) elements processed at once (~100 MB of temporaries)."""


def confidence_ranks(level: float, replicates: int) -> tuple[int, int]:
    """1-based ranks of a band's edges among ``replicates`` sorted replicate values.

    The rule of :func:`costdash.multiclass.confidence_ranks`: for ``level = 0.9`` and ``B = 1000``
    the 51st and 950th values.
    """
    return order_statistic_ranks(_check_level(level), _check_replicates(replicates))


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, kw_only=True)
class _Band(AtLevel):
    """What :class:`CostBand` and :class:`DifferenceBand` share (documented on them): the grid,
    the edges at a level, the replicates they were cut from, and the question they answer."""

    level: float
    replicates: int
    pc: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    curves: NDArray[np.float64]
    method: str = "percentile"
    calibrated: bool = False
    estimand: str = ""
    simultaneous: bool = False
    thresholds: NDArray[np.float64] | None = None
    selection: str | None = None
    n_pos: int = 0
    n_neg: int = 0

    def _edges(self, level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The edges at a checked ``level``: a bootstrap band's are re-cut from its replicates;
        a subclass recomputes those of its other methods from what it kept."""
        return _band_edges(self.curves, level)

    def _at_level(self, level: float) -> Self:
        low, high = self._edges(level)
        return replace(self, level=level, low=_readonly(low), high=_readonly(high))

    @property
    def label(self) -> str:
        """A short human description: the level only for a calibrated band, and for an
        approximate method only on the PC(+) range where it was earned."""
        return band_label(self)

    @property
    def level_regime(self) -> LevelRegime | None:
        """For an approximate method (the double bootstrap), where the coverage study earned
        its level on this grid (:func:`costdash.bands.regime.level_regime`); None otherwise."""
        return level_regime(self.method, self.n_pos, self.n_neg, self.pc, self.level)

    @property
    def level_holds(self) -> NDArray[np.bool_]:
        """Where on the grid the band may be read with its level: everywhere for a calibrated
        closed-form band, nowhere for a spread, the earned range for an approximate method."""
        regime = self.level_regime
        return np.full(self.pc.size, self.calibrated) if regime is None else regime.holds

    @property
    def level_range(self) -> tuple[float, float] | None:
        """First and last grid PC(+) where the level holds; None where it holds nowhere."""
        holds = self.level_holds
        if not holds.any():
            return None
        return float(self.pc[holds][0]), float(self.pc[holds][-1])

    def level_at(self, pc: float) -> bool:
        """Whether the band's level holds at this PC(+) (inside :attr:`level_range`)."""
        span = self.level_range
        return span is not None and span[0] - 1e-12 <= pc <= span[1] + 1e-12

    @property
    def no_level(self) -> str:
        """Why the band has no level (outside :attr:`level_range`), in words; "" for a band
        whose level holds on its whole grid."""
        regime = self.level_regime
        if regime is not None:
            return regime.reason
        if self.calibrated:
            return ""
        unearned = _unearned_reason(self.method)
        return f"no level: {unearned}" if unearned else NO_LEVEL

    @property
    def width(self) -> NDArray[np.float64]:
        """``high - low`` at each PC(+)."""
        return self.high - self.low


@dataclass(frozen=True, eq=False, kw_only=True)
class CostBand(_Band):
    """A band on one classifier's cost curve, with the question it answers.

    Attributes
    ----------
    name : str
        The classifier's name.
    level : float
        Confidence level of ``low``/``high`` (pointwise, or for the whole curve when
        ``simultaneous``). Meaningful only when ``calibrated``: an uncalibrated band (a resampling
        spread) is cut at this level of its replicates but its coverage is not that level, and
        it must be shown without a percentage.
    replicates : int
        Number of bootstrap replicates B (the outer ones of a double bootstrap); 0 for the
        closed-form methods, which do not resample.
    pc : ndarray of float64, shape (G,)
        The PC(+) grid.
    cost : ndarray of float64, shape (G,)
        The estimate on the grid: the full-data lower envelope ("curve"), the cost line ("line"),
        or the held-out cost of the selected thresholds ("selected").
    low, high : ndarray of float64, shape (G,)
        Band edges.
    curves : ndarray of float64, shape (B, G)
        Every replicate's cost curve (read-only), kept so that :meth:`at_level` needs no new
        resampling; shape (0, G) for the closed-form methods.
    kind : {"curve", "line", "selected"}
        "curve": the lower envelope of a scoring classifier's thresholds, re-optimised in every
        replicate; "line": one confusion matrix (a discrete classifier, or a fixed threshold);
        "selected": thresholds chosen per PC(+) on selection rows, banded on other rows.
    threshold : float or None
        The fixed threshold of a line band, when it has one.
    fpr, tpr : float or None
        The full-data ROC point of a line band.
    n_pos, n_neg : int
        Class totals of the rows the band is computed on (the held-out rows of a "selected" band).
    method : str
        "clopper-pearson-mover" (pointwise, closed form, the default), "wilson-mover" (pointwise,
        closed form, the old default), "clopper-pearson" (simultaneous rectangle,
        closed form), "percentile" (bootstrap percentile: paper 000 §8 for a line, the
        re-optimised envelope for a curve) or "double-bootstrap" (calibrated basic interval of
        the envelope, approximate).
    calibrated : bool
        Whether the band's coverage is (approximately) its ``level`` for its ``estimand``. Only
        a calibrated band may be shown with a percentage; the others are a "resampling spread".
        A double bootstrap is calibrated where its coverage study earned the level for this
        band's smaller class and level, and only on ``level_range``.
    estimand : str
        In words, what the band is a band for.
    simultaneous : bool
        True: the band contains the whole curve (every grid PC(+) at once) with probability
        ``level``; False: pointwise.
    thresholds : ndarray of float64, shape (G,), or None
        For a "selected" band, the threshold chosen at each PC(+) (predict positive iff
        ``score >= threshold``; ``+inf`` flags nothing, ``-inf`` everything).
    selection : str or None
        How the thresholds were selected: "split" (a stratified random half of the rows; the other
        half is banded) or "validation" (given validation rows; the classifier's rows are banded).
    error_counts : ndarray of int64, shape (2, G), or None
        (FN, FP) at each PC(+) on the banded rows, for the closed-form methods (and
        :meth:`at_level`).
    calibration : ndarray of float64, shape (B, G), or None
        Double bootstrap: each outer replicate's calibration position (see ``docs/bands.md``).
    inner_replicates : int
        Double bootstrap: inner replicates per outer replicate (0 otherwise).

    Properties ``level_range`` (the PC(+) range where the level holds), ``level_holds`` (per
    grid PC(+)), ``level_at(pc)`` and ``no_level`` (why there is none elsewhere, in words) say
    where the band may be read with its level.
    """

    name: str
    cost: NDArray[np.float64]
    kind: Literal["curve", "line", "selected"] = "curve"
    threshold: float | None = None
    fpr: float | None = None
    tpr: float | None = None
    error_counts: NDArray[np.int64] | None = None
    calibration: NDArray[np.float64] | None = None
    inner_replicates: int = 0

    def _at_level(self, level: float) -> Self:
        moved = super()._at_level(level)
        regime = moved.level_regime
        # An approximate method earns some levels and not others (docs/bands.md).
        return moved if regime is None else replace(moved, calibrated=bool(regime.holds.any()))

    def _edges(self, level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Closed-form edges recomputed from the error counts; a double bootstrap's
        re-calibrated from its stored calibration positions; else re-cut replicates."""
        if self.method in LINE_CLOSED_FORMS and self.error_counts is not None:
            return _line_edges(self.pc, self.error_counts, self.n_pos, self.n_neg, level,
                               self.simultaneous, self.thresholds, self.method)
        if self.method == "double-bootstrap" and self.calibration is not None:
            return _double_edges(self.pc, self.cost, self.curves, self.calibration, level)
        return super()._edges(level)

    def at(self, pc: float) -> tuple[float, float, float]:
        """Cost, low and high of the band at one PC(+), linear between grid values."""
        return tuple(float(np.interp(pc, self.pc, a)) for a in (self.cost, self.low, self.high))

    @property
    def widest(self) -> tuple[float, float]:
        """``(pc, width)`` where the band is widest on the grid."""
        i = int(np.argmax(self.width))
        return float(self.pc[i]), float(self.width[i])

    def covers(self, values: ArrayLike) -> NDArray[np.bool_]:
        """Whether ``low <= values <= high`` at each grid PC(+) (``values`` broadcast to (G,))."""
        v = np.asarray(values, dtype=np.float64)
        return (self.low <= v) & (v <= self.high)


@dataclass(frozen=True)
class SignificantInterval:
    """A PC(+) range where the difference band excludes 0.

    ``lo`` and ``hi`` are the first and last grid values of a run of grid points where the band is
    entirely on one side of 0; ``better`` names the cheaper classifier there.
    """

    lo: float
    hi: float
    better: str


def _significant(pc: NDArray[np.float64], low: NDArray[np.float64], high: NDArray[np.float64],
                 a: str, b: str) -> tuple[SignificantInterval, ...]:
    side = np.where(high < 0, -1, np.where(low > 0, 1, 0))
    out: list[SignificantInterval] = []
    change = np.flatnonzero(np.diff(side)) + 1
    starts = np.concatenate(([0], change))
    stops = np.concatenate((change, [side.size]))
    for start, stop in zip(starts.tolist(), stops.tolist()):
        if side[start] != 0:
            out.append(SignificantInterval(lo=float(pc[start]), hi=float(pc[stop - 1]),
                                           better=a if side[start] < 0 else b))
    return tuple(out)


def _unearned_reason(method: str) -> str:
    """Why a closed form kept by name has no level ("" for any other method)."""
    if method == "wilson-mover":
        return UNEARNED_REASON.format(name="Wilson–MOVER", low="0.80",
                                      default="clopper-pearson-mover")
    if method == "newcombe-mover":
        return UNEARNED_REASON.format(name="Newcombe–MOVER", low="0.85",
                                      default="discordant-mover")
    return ""


NO_LEVEL = ("no level: a resampling spread, not a confidence band (its coverage is not its "
            "level; the estimand says what it is)")
"""Why an uncalibrated band has no level (:attr:`CostBand.no_level`)."""

NO_SIGNIFICANCE = ("no significant ranges: the band is not calibrated (the difference of two "
                   "envelopes re-tuned on the test data, or a percentile spread), so it is "
                   "exploratory and is not a test")
"""Why an uncalibrated :class:`DifferenceBand` has no ``significant`` ranges."""


@dataclass(frozen=True, eq=False, kw_only=True)
class DifferenceBand(_Band):
    """A band on the difference of two classifiers' cost curves (a - b) on the same rows.

    Both classifiers are evaluated on the same rows (resampled jointly, or through paired
    counts), so their correlation is kept (paper 000 §9): strongly correlated classifiers give a
    narrow band.

    Attributes
    ----------
    a, b : str
        Names of the two classifiers.
    level : float
        Confidence level (pointwise, or whole-curve when ``simultaneous``); meaningful only when
        ``calibrated``.
    replicates : int
        Number of bootstrap replicates B (0 for the closed-form method).
    pc : ndarray of float64, shape (G,)
        The PC(+) grid.
    diff : ndarray of float64, shape (G,)
        The estimated ``cost(a) - cost(b)``; negative where ``a`` is cheaper.
    low, high : ndarray of float64, shape (G,)
        Band edges.
    curves : ndarray of float64, shape (B, G)
        Every replicate's difference (read-only); shape (0, G) for the closed-form method.
    significant : tuple of SignificantInterval
        The PC(+) ranges (on the grid) where the band excludes 0, with the better classifier.
        **Always empty when** ``calibrated`` **is False** (see :data:`NO_SIGNIFICANCE`): the
        difference of two envelopes re-tuned on the test data is not a valid test (a score
        against the same score at a fixed threshold, equal in truth, was "significant" in 71-98 %
        of simulated test sets). Pointwise unless ``simultaneous``.
    cost_a, cost_b : ndarray of float64, shape (G,)
        The two estimated cost curves (full-data envelopes, fixed lines, or held-out costs of the
        selected thresholds).
    kind : {"envelope", "line", "selected"}
        Re-tuned envelopes, fixed thresholds, or thresholds selected on other rows.
    method : str
        "percentile" (paired bootstrap), "discordant-mover" (closed form, the default: MOVER on
        each class's discordant pairs with Clopper-Pearson limits) or "newcombe-mover" (closed
        form: Newcombe's paired interval); the classes combined by MOVER, or as a rectangle when
        ``simultaneous``.
    calibrated, estimand, simultaneous, selection
        As in :class:`CostBand`.
    thresholds : ndarray of float64, shape (2, G), or None
        Selected thresholds of a (row 0) and b (row 1) at each PC(+).
    threshold_a, threshold_b : float or None
        The fixed thresholds of a "line" difference.
    paired_counts : ndarray of int64, shape (2, 4, G), or None
        For positives and negatives of the banded rows, the paired table (both flag, only a,
        only b, neither) at each PC(+): what the closed-form band is computed from.
    n_pos, n_neg : int
        Class totals of the banded rows.
    """

    a: str
    b: str
    diff: NDArray[np.float64]
    significant: tuple[SignificantInterval, ...]
    cost_a: NDArray[np.float64]
    cost_b: NDArray[np.float64]
    kind: Literal["envelope", "line", "selected"] = "envelope"
    threshold_a: float | None = None
    threshold_b: float | None = None
    paired_counts: NDArray[np.int64] | None = None

    def _edges(self, level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Closed-form edges recomputed from the paired counts; else re-cut replicates."""
        if self.method in PAIRED_INTERVALS and self.paired_counts is not None:
            _, low, high = _paired_edges(self.pc, self.paired_counts, level, self.simultaneous,
                                         self.thresholds, self.method)
            return low, high
        return super()._edges(level)

    def _at_level(self, level: float) -> Self:
        moved = super()._at_level(level)
        # The ranges follow the new edges; an uncalibrated band never has any.
        significant = (_significant(moved.pc, moved.low, moved.high, self.a, self.b)
                       if self.calibrated else ())
        return replace(moved, significant=significant)

    @property
    def significance_note(self) -> str:
        """Why there are no significant ranges ("" for a calibrated band)."""
        if self.calibrated:
            return ""
        unearned = _unearned_reason(self.method)
        return f"no significant ranges: {unearned}" if unearned else \
            NO_SIGNIFICANCE


def _line(name: str, tp: int, fp: int, fn: int, tn: int, *, threshold: float | None,
          method: str | None, simultaneous: bool, pooled: bool, level: float, replicates: int,
          rng: np.random.Generator, pc: NDArray[np.float64], progress: ProgressCallback | None
          ) -> CostBand:
    chosen = _closed_form_method(method, simultaneous, "a fixed threshold")
    if chosen == "percentile":
        _check_size(replicates, pc)
        curves = _line_replicates(tp, fp, fn, tn, replicates, rng, pc, progress)
        low, high = _band_edges(curves, level)
        n_pos, n_neg = tp + fn, fp + tn
        tpr, fpr = tp / n_pos, fp / n_neg
        cost = (1.0 - tpr) * pc + fpr * (1.0 - pc)
        return CostBand(name=name, level=level, replicates=replicates, pc=_readonly(pc),
                        cost=_readonly(cost), low=_readonly(low), high=_readonly(high),
                        curves=_readonly(curves), kind="line", threshold=threshold, fpr=fpr,
                        tpr=tpr, n_pos=n_pos, n_neg=n_neg, method="percentile",
                        calibrated=False, estimand=_estimand(ESTIMAND_PERCENTILE_LINE, pooled))
    n_pos, n_neg = tp + fn, fp + tn
    errors = np.empty((2, pc.size), dtype=np.int64)
    errors[0], errors[1] = fn, fp
    return _closed_form_band(name, errors, n_pos, n_neg, None, kind="line", method=chosen,
                             simultaneous=simultaneous, level=level, pc=pc, progress=progress,
                             threshold=threshold, fpr=fp / n_neg, tpr=tp / n_pos,
                             estimand=_estimand(ESTIMAND_LINE, pooled))


def _closed_form_band(name: str, errors: NDArray[np.int64], n_pos: int, n_neg: int,
                      thresholds: NDArray[np.float64] | None, *, kind: str, method: str,
                      simultaneous: bool, level: float, pc: NDArray[np.float64],
                      progress: ProgressCallback | None, **fields: object) -> CostBand:
    """The calibrated band of (FN, FP) counts at each PC(+): a fixed line or held-out thresholds."""
    low, high = _line_edges(pc, errors, n_pos, n_neg, level, simultaneous, thresholds, method)
    cost = (errors[0] / n_pos) * pc + (errors[1] / n_neg) * (1.0 - pc)
    if progress is not None:
        progress(1, 1)
    return CostBand(name=name, level=level, replicates=0, pc=_readonly(pc), cost=_readonly(cost),
                    low=_readonly(low), high=_readonly(high),
                    curves=_readonly(np.empty((0, pc.size))), kind=kind, n_pos=n_pos,
                    n_neg=n_neg, method=method, calibrated=method not in UNEARNED_METHODS,
                    simultaneous=simultaneous,
                    thresholds=None if thresholds is None else _readonly(thresholds),
                    error_counts=_readonly(errors), **fields)


def _held_out_band(label: str, y: NDArray[np.bool_], s: NDArray[np.float64],
                   count: NDArray[np.int64] | None, thresholds: NDArray[np.float64], *,
                   method: str, simultaneous: bool, level: float, pc: NDArray[np.float64],
                   estimand: str, selection: str, progress: ProgressCallback | None) -> CostBand:
    """The band of selected thresholds on held-out rows (each ``count`` times, if given)."""
    if count is None:
        n_pos = int(np.count_nonzero(y))
        n_neg = y.size - n_pos
        tp, fp = flagged_counts(s[y], thresholds), flagged_counts(s[~y], thresholds)
    else:
        n_pos = int(count[y].sum())
        n_neg = int(count.sum()) - n_pos
        tp = flagged_counts(s[y], thresholds, count[y])
        fp = flagged_counts(s[~y], thresholds, count[~y])
    errors = np.stack((n_pos - tp, fp)).astype(np.int64)
    return _closed_form_band(label, errors, n_pos, n_neg, thresholds, kind="selected",
                             method=method, simultaneous=simultaneous, level=level, pc=pc,
                             progress=progress, estimand=estimand, selection=selection)


def _selected_band(label: str, y: NDArray[np.bool_], s: NDArray[np.float64], select: object, *,
                   method: str | None, simultaneous: bool, pooled: bool, level: float,
                   rng: np.random.Generator, pc: NDArray[np.float64],
                   progress: ProgressCallback | None) -> CostBand:
    chosen = _selected_method(method, simultaneous)
    how, (thresholds,), y_h, (s_h,) = _selected_thresholds(select, y, (s,), rng, label, pc)
    estimand = ESTIMAND_SELECTED_SPLIT if how == "split" else ESTIMAND_SELECTED_VALIDATION
    return _held_out_band(label, y_h, s_h, None, thresholds, method=chosen,
                          simultaneous=simultaneous, level=level, pc=pc,
                          estimand=_estimand(estimand, pooled), selection=how, progress=progress)


def _envelope_band(sb: _Superbins, *, method: str | None, simultaneous: bool, pooled: bool,
                   level: float, replicates: int, inner_replicates: int,
                   rng: np.random.Generator, pc: NDArray[np.float64],
                   progress: ProgressCallback | None, max_batch_elements: int) -> CostBand:
    _check_envelope_method(method, simultaneous, pair=False)
    _check_size(replicates, pc)
    cost = _full_data_envelope(sb, pc)
    if method == "double-bootstrap":
        _calibrated_replicates(replicates, method)
        curves, calibration = _double_bootstrap(sb, replicates, inner_replicates, rng, pc,
                                                max_batch_elements, progress)
        low, high = _double_edges(pc, cost, curves, calibration, level)
        regime = level_regime(method, sb.n_pos, sb.n_neg, pc, level)
        assert regime is not None
        fields = {"method": "double-bootstrap", "calibrated": bool(regime.holds.any()),
                  "estimand": _estimand(ESTIMAND_ENVELOPE_DOUBLE, pooled),
                  "calibration": _readonly(calibration), "inner_replicates": inner_replicates}
    else:
        curves = _curve_replicates(sb, replicates, rng, pc, max_batch_elements, progress)
        low, high = _band_edges(curves, level)
        fields = {"method": "percentile", "calibrated": False,
                  "estimand": _estimand(ESTIMAND_ENVELOPE_SPREAD, pooled)}
    return CostBand(name=sb.name, level=level, replicates=replicates, pc=_readonly(pc),
                    cost=_readonly(cost), low=_readonly(low), high=_readonly(high),
                    curves=_readonly(curves), kind="curve", n_pos=sb.n_pos, n_neg=sb.n_neg, **fields)


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------

ClassifierInput = (ScoredClassifier | CountedClassifier | RocCurve
                   | tuple[ArrayLike, ArrayLike] | tuple[int, int, int, int])

SelectInput = str | tuple[ArrayLike, ArrayLike] | None


def cost_band(classifier: ClassifierInput, *, threshold: float | None = None, level: float = 0.9,
              replicates: int = 1000, rng: RngLike = None, grid: int | ArrayLike = DEFAULT_GRID,
              method: str | None = None, simultaneous: bool = False, select: SelectInput = None,
              inner_replicates: int = DEFAULT_INNER_REPLICATES,
              progress: ProgressCallback | None = None, name: str | None = None,
              max_batch_elements: int = DEFAULT_MAX_BATCH_ELEMENTS) -> CostBand:
    """A band on a classifier's cost curve, labelled with the question it answers.

    Three questions, three kinds of band (``docs/bands.md``):

    * **A threshold fixed beforehand** (``threshold=``, a counted classifier's matrix, or a
      ``(tp, fp, fn, tn)`` tuple): the band of that cost line. Default: Clopper-Pearson limits
      of FNR and FPR combined by MOVER, the lower limit no higher than Fay & Feuer's gamma limit
      ("clopper-pearson-mover"), pointwise, closed form (no resampling); ``method="wilson-mover"``:
      the old default (Wilson limits; under-covers when a class expects a fraction of an error);
      ``simultaneous=True``:
      the Clopper-Pearson rectangle (each rate at level ``sqrt(level)``), which contains the whole
      line with probability ``level``; ``method="percentile"``: paper 000 §8's binomial bootstrap
      (uncalibrated: it collapses when FN or FP is 0).
    * **Thresholds selected from data** (``select="split"`` or ``select=(y_select,
      score_select)``): at each PC(+) the envelope's optimal threshold is chosen on the selection
      rows (a stratified random half, or the given validation rows), and its cost is banded on
      the other rows with the same closed form (or the Bonferroni Clopper-Pearson rectangle when
      ``simultaneous``). This answers "what will the thresholds I pick cost on new data?", and is
      the calibrated band for a scoring classifier's tuned curve.
    * **The whole envelope** (``threshold=None``, ``select=None``): each replicate re-optimises its
      thresholds. Default ``method="percentile"``: an *uncalibrated resampling spread*
      (``calibrated=False``; it under-covers the optimal cost, see the study), to be shown
      without a level. ``method="double-bootstrap"``: a calibrated basic interval, approximate
      (``replicates`` outer x ``inner_replicates`` inner envelopes).

    Every band measures **test-set sampling variability of this fixed model** (never retrained).

    Parameters
    ----------
    classifier : ScoredClassifier, (y_true, score), RocCurve, CountedClassifier or (tp, fp, fn, tn)
        A scoring classifier (its scores, or the :func:`costdash.roc_curve` of them), or one
        confusion matrix (a :class:`CountedClassifier` with one matrix, or picked by ``threshold``,
        or a 4-tuple).
    threshold : float, optional
        For a scoring classifier: the classifier thresholded at this value (predict positive iff
        ``score >= threshold``), chosen beforehand and held fixed. For a counted classifier:
        which of its matrices to use.
    level : float, default 0.9
        Confidence level in (0, 1) (pointwise, or whole-curve when ``simultaneous``).
    replicates : int, default 1000
        Bootstrap replicates, 1 to 10,000 (at least 200 for ``method="double-bootstrap"``, whose
        band carries a level); ignored by the closed-form methods (the result has 0).
    rng : None, int or numpy.random.Generator
        Source of randomness (bootstrap, and the split of ``select="split"``); an int seed makes
        the band reproducible (for the same inputs and ``max_batch_elements``).
    grid : int or array-like, default 201
        Number of PC(+) values, evenly spaced from exactly 0 to exactly 1, or the values.
    method : {None, "clopper-pearson-mover", "wilson-mover", "clopper-pearson", "percentile", \
"double-bootstrap"}
        None picks the default of the case above. "clopper-pearson" implies ``simultaneous``.
    simultaneous : bool, default False
        A band for the whole curve at once (fixed or selected thresholds only).
    select : None, "split" or (y_select, score_select)
        Select thresholds per PC(+) on a stratified half, or on validation rows.
    inner_replicates : int, default 100
        Inner replicates of the double bootstrap.
    progress : callable, optional
        Called as ``progress(done, total)`` after every batch of replicates (once, ``(1, 1)``,
        for a closed-form band).
    name : str, optional
        Name of the result (default: the classifier's, or "classifier").
    max_batch_elements : int, default 2**20
        Budget of replicates x categories processed at once; bounds the temporary memory.

    Returns
    -------
    CostBand
        With ``method``, ``calibrated``, ``estimand`` and, for selected thresholds,
        ``thresholds``.

    Raises
    ------
    ParameterError
        Invalid options or combinations, too few replicates for a calibrated bootstrap band, or an
        input without examples of both classes.

    Examples
    --------
    >>> band = cost_band((16, 4, 4, 6))   # paper 000 Fig. 11, Clopper-Pearson-MOVER
    >>> band.kind, band.method, band.calibrated, band.fpr, band.tpr
    ('line', 'clopper-pearson-mover', True, 0.4, 0.8)
    >>> bool(band.covers(band.cost).all())
    True
    """
    level, replicates, pc, generator, threshold, max_batch_elements, method, simultaneous = band_iv(
        level=level, replicates=replicates, grid=grid, rng=rng, threshold=threshold,
        max_batch_elements=max_batch_elements, method=method, simultaneous=simultaneous,
        progress=progress, select=select, pair=False)
    inner = _check_inner(inner_replicates)

    pooled = _has_folds(classifier)
    line = {"method": method, "simultaneous": simultaneous, "pooled": pooled, "level": level,
            "replicates": replicates, "rng": generator, "pc": pc, "progress": progress}
    envelope = {**line, "inner_replicates": inner, "max_batch_elements": max_batch_elements}
    matrices = isinstance(classifier, (CountedClassifier, RocCurve)) or (
        isinstance(classifier, (tuple, list)) and len(classifier) == 4)
    if select is not None and matrices:
        raise ParameterError("select= needs a scoring classifier's scores (rows to split or to "
                             "count on), not confusion matrices or an ROC curve")
    if isinstance(classifier, CountedClassifier):
        i = _pick_counted_row(classifier, threshold)
        tp, fp, fn, tn = _single_matrix(classifier.tp[i], classifier.fp[i], classifier.fn[i],
                                        classifier.tn[i])
        thr = None
        if classifier.threshold is not None and math.isfinite(float(classifier.threshold[i])):
            thr = float(classifier.threshold[i])
        return _line(name or classifier.name, tp, fp, fn, tn, threshold=thr, **line)
    if isinstance(classifier, RocCurve):
        sb = _superbins_of_roc(classifier)
        label = name or classifier.name or "classifier"
        if threshold is not None:
            i = classifier.point_at_threshold(threshold)
            tp, fp = int(classifier.tp[i]), int(classifier.fp[i])
            return _line(label, tp, fp, sb.n_pos - tp, sb.n_neg - fp, threshold=threshold, **line)
        return _envelope_band(replace(sb, name=label), **{**envelope, "pooled": False})
    if isinstance(classifier, ScoredClassifier) and classifier.count is not None:
        return _score_count_band(classifier, name or classifier.name, threshold=threshold,
                                 select=select, line=line, envelope=envelope)
    if isinstance(classifier, ScoredClassifier):
        y, s = _scores(classifier.y_true, classifier.score, f"classifier {classifier.name!r}")
        label = name or classifier.name
    elif isinstance(classifier, (tuple, list)) and len(classifier) == 2:
        y, s = _scores(classifier[0], classifier[1], "cost_band")
        label = name or "classifier"
    elif isinstance(classifier, (tuple, list)) and len(classifier) == 4:
        tp, fp, fn, tn = _single_matrix(*classifier)
        return _line(name or "classifier", tp, fp, fn, tn, threshold=None, **line)
    else:
        raise ParameterError(
            "cost_band takes a ScoredClassifier, a (y_true, score) pair, an ROC curve, a "
            f"CountedClassifier or a (tp, fp, fn, tn) matrix; got {type(classifier).__name__}")
    if threshold is not None:
        above = s >= threshold
        tp = int(np.count_nonzero(above & y))
        fp = int(np.count_nonzero(above & ~y))
        n_pos = int(np.count_nonzero(y))
        return _line(label, tp, fp, n_pos - tp, y.size - n_pos - fp, threshold=threshold, **line)
    if select is not None:
        return _selected_band(label, y, s, select, method=method, simultaneous=simultaneous,
                              pooled=pooled, level=level, rng=generator, pc=pc,
                              progress=progress)
    sb = _superbins_of_scores(label, y, s)
    return _envelope_band(sb, **envelope)


def _score_count_band(classifier: ScoredClassifier, label: str, *, threshold: float | None,
                      select: SelectInput, line: dict, envelope: dict) -> CostBand:
    """:func:`cost_band` of a classifier given as counts per (score, label) cell.

    A fixed threshold and the whole envelope give exactly the band of the rows (the same
    super-bins, so the same replicates for a seed); ``select="split"`` draws the stratified half
    of the examples from the counts, the same distribution as the row split but not the same
    draw; validation rows are used as they are.
    """
    y, s = classifier.y_true, classifier.score
    count = np.asarray(classifier.count, dtype=np.int64)
    n_pos = int(count[y].sum())
    n_neg = int(count.sum()) - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ParameterError(f"classifier {classifier.name!r}: a band needs examples of both "
                             "classes")
    if threshold is not None:
        above = s >= threshold
        tp = int(count[above & y].sum())
        fp = int(count[above & ~y].sum())
        return _line(label, tp, fp, n_pos - tp, n_neg - fp, threshold=threshold, **line)
    if select is None:
        return _envelope_band(_superbins_of_score_counts(label, classifier), **envelope)
    chosen = _selected_method(line["method"], line["simultaneous"])
    how, thresholds, held_out = _selected_counts(select, y, s, count, line["rng"], label,
                                                 line["pc"])
    estimand = ESTIMAND_SELECTED_SPLIT if how == "split" else ESTIMAND_SELECTED_VALIDATION
    return _held_out_band(label, y, s, held_out, thresholds, method=chosen,
                          simultaneous=line["simultaneous"], level=line["level"], pc=line["pc"],
                          estimand=_estimand(estimand, line["pooled"]), selection=how,
                          progress=line["progress"])


def difference_band(a: ScoredClassifier | tuple[ArrayLike, ArrayLike],
                    b: ScoredClassifier | tuple[ArrayLike, ArrayLike], *,
                    threshold: float | tuple[float, float] | None = None, level: float = 0.9,
                    replicates: int = 1000, rng: RngLike = None,
                    grid: int | ArrayLike = DEFAULT_GRID, method: str | None = None,
                    simultaneous: bool = False,
                    select: str | tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
                    progress: ProgressCallback | None = None,
                    max_batch_elements: int = DEFAULT_MAX_BATCH_ELEMENTS) -> DifferenceBand:
    """A band on the difference ``cost(a) - cost(b)`` of two classifiers on the same rows.

    * **Envelopes** (default: no ``threshold``, no ``select``): paper 000 §9's paired bootstrap,
      every replicate resamples the rows once and re-tunes both envelopes. Exploratory:
      ``calibrated=False`` and **no significant ranges** (the difference of two re-tuned
      envelopes is not a valid test when the classifiers differ in flexibility).
    * **Fixed thresholds** (``threshold=t`` for both, or ``(t_a, t_b)``): the difference of two
      fixed cost lines. Default: for FNR_a - FNR_b (positives) and FPR_a - FPR_b (negatives),
      MOVER on the discordant pairs with Clopper-Pearson limits, the two combined by MOVER
      ("discordant-mover", pointwise, closed form); ``method="newcombe-mover"``: Newcombe's
      paired interval per class instead (the old default; under-covers with few discordant
      pairs);
      ``simultaneous=True``: the rectangle, each difference at ``sqrt(level)``, valid for every
      PC(+) at once; ``method="percentile"``: a paired bootstrap (uncalibrated).
    * **Selected thresholds** (``select="split"``, or ``select=(y_select, score_a_select,
      score_b_select)`` validation rows): each classifier's optimal threshold per PC(+) chosen on
      the selection rows, the paired difference of their costs banded on the other rows
      (the same closed form; simultaneous: Bonferroni rectangle over the distinct threshold
      pairs).

    Where a calibrated band excludes 0 the difference is significant at ``level`` (pointwise, or
    over the whole curve when ``simultaneous``); negative means ``a`` is cheaper.

    Parameters
    ----------
    a, b : ScoredClassifier or (y_true, score)
        The two classifiers, scored on the same examples in the same order: their ``y_true``
        must be identical.
    threshold : float or (float, float), optional
        Fixed thresholds (one for both, or one each).
    method : {None, "discordant-mover", "newcombe-mover", "percentile"}
        None picks the default of the case above.
    simultaneous : bool
        Whole-curve band and significant ranges (fixed or selected thresholds only).
    select : None, "split" or (y_select, score_a_select, score_b_select)
        Select the thresholds on a stratified half, or on validation rows.
    level, replicates, rng, grid, progress, max_batch_elements
        As for :func:`cost_band`.

    Returns
    -------
    DifferenceBand

    Raises
    ------
    ParameterError
        The classifiers are not on the same rows, or an option is invalid.
    """
    level, replicates, pc, generator, pair, max_batch_elements, method, simultaneous = band_iv(
        level=level, replicates=replicates, grid=grid, rng=rng, threshold=threshold,
        max_batch_elements=max_batch_elements, method=method, simultaneous=simultaneous,
        progress=progress, select=select, pair=True)
    # The paired interval of the request's family ("clopper-pearson" alone: the simultaneous
    # rectangle of the default's).
    paired = "newcombe-mover" if method == "wilson-mover" else "discordant-mover"
    if method == "clopper-pearson":
        method = "clopper-pearson-mover"
    name_a, y_a, s_a = _paired_input(a, "a", "a")
    name_b, y_b, s_b = _paired_input(b, "b", "b")
    _same_rows(name_a, y_a, name_b, y_b)
    pooled = _has_folds(a) or _has_folds(b)
    common = {"a": name_a, "b": name_b, "level": level, "pc": _readonly(pc)}

    if pair is None and select is None:
        _check_envelope_method(method, simultaneous, pair=True)
        _check_size(replicates, pc)
        sa = _superbins_of_scores(name_a, y_a, s_a, with_rows=True)
        sb = _superbins_of_scores(name_b, y_a, s_b, with_rows=True)
        curves = _difference_replicates(sa, sb, y_a, replicates, generator, pc,
                                        max_batch_elements, progress)
        low, high = _band_edges(curves, level)
        cost_a = _full_data_envelope(sa, pc)
        cost_b = _full_data_envelope(sb, pc)
        return DifferenceBand(**common, replicates=replicates, diff=_readonly(cost_a - cost_b),
                              low=_readonly(low), high=_readonly(high), curves=_readonly(curves),
                              significant=(), cost_a=_readonly(cost_a), cost_b=_readonly(cost_b),
                              kind="envelope", method="percentile", calibrated=False,
                              estimand=_estimand(ESTIMAND_DIFF_ENVELOPE, pooled, pair=True),
                              n_pos=int(np.count_nonzero(y_a)),
                              n_neg=int(y_a.size - np.count_nonzero(y_a)))

    chosen = _closed_form_method(method, simultaneous, "a difference of fixed thresholds")
    if pair is not None:
        ta = np.full(pc.size, pair[0])
        tb = np.full(pc.size, pair[1])
        y_h, sa_h, sb_h = y_a, s_a, s_b
        kind, how, thresholds = "line", None, None
        estimand = (ESTIMAND_DIFF_PERCENTILE_LINE if chosen == "percentile"
                    else ESTIMAND_DIFF_LINE)
    else:
        if chosen == "percentile":
            raise ParameterError("method='percentile' is not available with select=: the held-out "
                                 "difference is banded in closed form ('discordant-mover' or "
                                 "'newcombe-mover')")
        how, (ta, tb), y_h, (sa_h, sb_h) = _selected_thresholds(
            select, y_a, (s_a, s_b), generator, f"{name_a!r}/{name_b!r}", pc)
        estimand = (ESTIMAND_DIFF_SELECTED_SPLIT if how == "split"
                    else ESTIMAND_DIFF_SELECTED_VALIDATION)
        kind, thresholds = "selected", np.stack((ta, tb))
    tables = _tables(y_h, sa_h, sb_h, ta, tb)
    n_pos, n_neg = int(tables[0, :, 0].sum()), int(tables[1, :, 0].sum())
    cost_a, cost_b = _paired_costs(tables, pc)
    extra = {"kind": kind, "estimand": _estimand(estimand, pooled, pair=True),
             "simultaneous": simultaneous,
             "thresholds": None if thresholds is None else _readonly(thresholds),
             "threshold_a": None if pair is None else pair[0],
             "threshold_b": None if pair is None else pair[1], "selection": how,
             "n_pos": n_pos, "n_neg": n_neg, "cost_a": _readonly(cost_a),
             "cost_b": _readonly(cost_b)}
    if chosen == "percentile":
        _check_size(replicates, pc)
        curves = _paired_percentile(tables, pc, replicates, generator, progress)
        low, high = _band_edges(curves, level)
        return DifferenceBand(**common, replicates=replicates,
                              diff=_readonly(cost_a - cost_b), low=_readonly(low),
                              high=_readonly(high), curves=_readonly(curves), significant=(),
                              method="percentile", calibrated=False,
                              paired_counts=_readonly(tables), **extra)
    _, low, high = _paired_edges(pc, tables, level, simultaneous, thresholds, paired)
    if progress is not None:
        progress(1, 1)
    return DifferenceBand(**common, replicates=0, diff=_readonly(cost_a - cost_b),
                          low=_readonly(low),
                          high=_readonly(high), curves=_readonly(np.empty((0, pc.size))),
                          significant=() if paired in UNEARNED_METHODS else
                          _significant(pc, low, high, name_a, name_b),
                          method=paired, calibrated=paired not in UNEARNED_METHODS,
                          paired_counts=_readonly(tables), **extra)
