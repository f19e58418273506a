"""The replicate-envelope engine of :mod:`costdash.bands`: bootstrap replicates of cost curves
(whole envelopes, one or two classifiers; fixed lines), many at once.

Resampling the ``P`` positives with replacement and counting them per group of rows is a
multinomial draw, and only the counts per group matter. Rows are grouped, exactly, into
*super-bins*: sorting by score and reading the ROC polyline one distinct score (bin) at a time, a
hull vertex of any replicate can only sit after a bin with positives that is followed by a bin with
negatives, so everything between two such places can be merged into one category (for continuous
scores this is one run of negatives followed by one run of positives). The per-replicate ROC points
are the cumulative sums of the per-super-bin counts; points strictly below the chord between two
full-data hull vertices (which are points of the same replicate too) are dropped in bulk, the
few remaining points of every replicate go to :func:`costdash._geometry.upper_hull` together (one
row per replicate), and the envelope at each grid value is read off the hull's edges. Replicates are
processed in batches so that memory stays bounded (``max_batch_elements``). The counts per super-bin are drawn by :class:`costdash.bands.sampler._Multinomial`.
Private: a part of :mod:`costdash.bands`, whose ``__init__`` holds the public names.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from costdash.bands.sampler import _batches, _count_dtype, _Multinomial
from costdash._geometry import upper_hull
from costdash.dataset import ScoredClassifier
from costdash.errors import ParameterError
from costdash.roc import RocCurve, score_count_bins

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after every batch of replicates."""


# --------------------------------------------------------------------------------------------
# Geometry: replicate ROC points -> lower envelopes on a PC(+) grid
# --------------------------------------------------------------------------------------------


# At most this many chords per replicate in the bulk pre-filter (one numpy pass per chord and
# operation); beyond it every other full-data hull vertex is used, which stays exact.
_MAX_CHORDS = 512


@dataclass(frozen=True, eq=False)
class _Anchors:
    """Columns whose points serve as chord ends to drop points below the chords in bulk.

    The full-data hull vertices, from column 0 to column k (thinned to at most ``_MAX_CHORDS``
    chords): in every replicate the points there are near its hull, so the chords between them
    are high.
    """

    columns: NDArray[np.int64]

    @classmethod
    def of(cls, fp: NDArray[np.integer], tp: NDArray[np.integer]) -> _Anchors:
        columns = upper_hull(np.asarray(fp, dtype=np.int64), np.asarray(tp, dtype=np.int64))
        if columns.size - 1 > _MAX_CHORDS:
            step = -(-(columns.size - 1) // _MAX_CHORDS)
            columns = np.unique(np.concatenate((columns[::step], columns[-1:])))
        return cls(columns=columns.astype(np.int64))


def _below_chords(fp: NDArray[np.integer], tp: NDArray[np.integer], anchors: _Anchors
                  ) -> NDArray[np.bool_]:
    """False where a point is strictly below the chord of the anchors around it (never a vertex).

    A point strictly below a chord between two actual points of its replicate is inside their
    hull, whatever else is removed, and a hull vertex is never strictly below any chord; so
    dropping all of them at once is exact. The cross products are integers below 2**53, exact in
    float64.
    """
    keep = np.empty(fp.shape, dtype=bool)
    cols = anchors.columns.tolist()
    for c0, c1 in itertools.pairwise(cols):
        x0 = fp[:, c0:c0 + 1]
        y0 = tp[:, c0:c0 + 1]
        dx = (fp[:, c1:c1 + 1] - x0).astype(np.float64)
        dy = (tp[:, c1:c1 + 1] - y0).astype(np.float64)
        cross = dx * (tp[:, c0:c1 + 1] - y0)
        cross -= dy * (fp[:, c0:c1 + 1] - x0)
        np.greater_equal(cross, 0.0, out=keep[:, c0:c1 + 1])
    return keep


def _envelopes(fp: NDArray[np.integer], tp: NDArray[np.integer], n_pos: int, n_neg: int,
               anchors: _Anchors, pc: NDArray[np.float64]) -> NDArray[np.float64]:
    """Lower envelopes on the grid ``pc`` of many replicate ROC polylines.

    Parameters
    ----------
    fp, tp : ndarray of int, shape (b, k + 1)
        Cumulative false and true positive counts of each replicate (one per row) at the ends of
        the super-bins, column 0 being (0, 0) and column k being (n_neg, n_pos).
    n_pos, n_neg : int
        Class totals (the same for every replicate).
    anchors : _Anchors
        Columns whose points are used as chords: any point strictly below the chord of the two
        anchors around it is inside the hull and dropped before the exact hull is computed.
    pc : ndarray of float64, shape (G,)
        Increasing PC(+) values.

    Returns
    -------
    ndarray of float64, shape (b, G)
        ``min`` over each replicate's ROC points of the cost line ``(1 - TPR) x + FPR (1 - x)``:
        exactly the value of :func:`costdash.costspace.lower_envelope` of its hull.
    """
    b = fp.shape[0]
    g = pc.size
    # Bulk pre-filter; with the full-data hull vertices as chord ends typically 85-90% of the
    # points go, and the exact hull is computed on the rest.
    keep = _below_chords(fp, tp, anchors)
    keep[:, 0] = True
    keep[:, -1] = True
    flat = np.flatnonzero(keep)
    del keep
    x = fp.reshape(-1)[flat]
    y = tp.reshape(-1)[flat]
    rows = flat // fp.shape[1]
    del flat
    vertex = upper_hull(x, y, rows)
    hr = rows[vertex]
    hx = x[vertex].astype(np.float64)
    hy = y[vertex].astype(np.float64)
    del rows, x, y, vertex
    # Edge e from vertex v to v + 1 of a row: v + 1 is cheaper exactly when PC(+) exceeds
    # pc_e = dFPR / (dFPR + dTPR). The optimal vertex at x is the number of the row's edges with
    # pc_e < x past the row's first vertex (crossings increase along a hull).
    same = hr[1:] == hr[:-1]
    dfx = np.diff(hx)[same] * n_pos
    dty = np.diff(hy)[same] * n_neg
    edge_row = hr[1:][same]
    crossing = dfx / (dfx + dty)
    first_grid = np.searchsorted(pc, crossing, side="right")
    first_grid += edge_row * (g + 1)
    counts = np.bincount(first_grid, minlength=b * (g + 1)).reshape(b, g + 1)[:, :g]
    optimal = np.cumsum(counts, axis=1)
    optimal += np.searchsorted(hr, np.arange(b), side="left")[:, None]
    fpr = hx[optimal] / n_neg
    tpr = hy[optimal] / n_pos
    return (1.0 - tpr) * pc + fpr * (1.0 - pc)


# --------------------------------------------------------------------------------------------
# Scoring classifiers: distinct-score bins and super-bins
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Superbins:
    """A scoring classifier's examples grouped, exactly for the hull, into super-bins.

    Attributes
    ----------
    fp, tp : ndarray of int64, shape (k + 1,)
        Full-data cumulative counts at the super-bin ends, from (0, 0) to (n_neg, n_pos).
    of_row : ndarray of int32, shape (n,), or None
        The super-bin of every example (only when asked for: the paired resampling needs it).
    """

    name: str
    n_pos: int
    n_neg: int
    fp: NDArray[np.int64]
    tp: NDArray[np.int64]
    anchors: _Anchors
    of_row: NDArray[np.int32] | None = None

    @property
    def k(self) -> int:
        return int(self.fp.size - 1)

    @property
    def pos_weights(self) -> NDArray[np.int64]:
        return np.diff(self.tp)

    @property
    def neg_weights(self) -> NDArray[np.int64]:
        return np.diff(self.fp)


def _superbin_ends(pos_bin: NDArray[np.int64], neg_bin: NDArray[np.int64]) -> NDArray[np.int64]:
    """Indices of the bins that close a super-bin.

    The ROC point after bin j can be a hull vertex of a resampled polyline only if bin j holds a
    positive and bin j + 1 a negative: after a bin of negatives only the polyline is horizontal
    (or the point repeats the previous one), and before a bin of positives only it turns upwards,
    whatever the resampled multiplicities are. Merging the bins between such places therefore
    loses no possible hull vertex.
    """
    cand = pos_bin > 0
    cand[:-1] &= neg_bin[1:] > 0
    cand[-1] = True
    return np.flatnonzero(cand)


def _superbins_from_points(name: str, fp_end: NDArray[np.integer], tp_end: NDArray[np.integer],
                           ) -> tuple[_Superbins, NDArray[np.int64]]:
    """Super-bins from the cumulative counts at the end of every distinct-score bin.

    Returns the super-bins and the indices of the bins that close them.
    """
    has_pos = np.empty(tp_end.size, dtype=bool)
    has_pos[0] = tp_end[0] > 0
    np.greater(tp_end[1:], tp_end[:-1], out=has_pos[1:])
    cand = has_pos
    # Bin j closes a super-bin if it has a positive and bin j + 1 a negative (or j is the last).
    np.logical_and(cand[:-1], fp_end[1:] > fp_end[:-1], out=cand[:-1])
    cand[-1] = True
    ends = np.flatnonzero(cand)
    del cand, has_pos
    fp = np.zeros(ends.size + 1, dtype=np.int64)
    tp = np.zeros(ends.size + 1, dtype=np.int64)
    fp[1:] = fp_end[ends]
    tp[1:] = tp_end[ends]
    sb = _Superbins(name=name, n_pos=int(tp[-1]), n_neg=int(fp[-1]), fp=fp, tp=tp,
                    anchors=_Anchors.of(fp, tp))
    return sb, ends


def _superbins_of_scores(name: str, y_true: NDArray[np.bool_], score: NDArray[np.float64], *,
                         with_rows: bool = False) -> _Superbins:
    """Super-bins of a scoring classifier (one sort; about 20 bytes per example at the peak)."""
    n = y_true.size
    dtype = _count_dtype(n)
    order = np.argsort(score)[::-1]
    s_sorted = score[order]
    run_end = np.empty(n, dtype=bool)
    np.not_equal(s_sorted[:-1], s_sorted[1:], out=run_end[:-1])
    run_end[-1] = True
    del s_sorted
    y_sorted = y_true[order]
    if not with_rows:
        del order
    cumulative = np.cumsum(y_sorted, dtype=dtype)
    del y_sorted
    bin_end = np.flatnonzero(run_end).astype(dtype)
    tp_end = cumulative[bin_end]
    del cumulative
    fp_end = bin_end - tp_end
    fp_end += 1
    del bin_end
    sb, ends = _superbins_from_points(name, fp_end, tp_end)
    n_bins = tp_end.size
    del fp_end, tp_end
    if not with_rows:
        return sb
    # Super-bin of every sorted position, then of every row.
    of_sorted = np.empty(n, dtype=np.int32)
    of_sorted[0] = 0
    np.cumsum(run_end[:-1], dtype=np.int32, out=of_sorted[1:])   # the bin of each position
    del run_end
    sb_of_bin = np.searchsorted(ends, np.arange(n_bins), side="left").astype(np.int32)
    np.take(sb_of_bin, of_sorted, out=of_sorted)
    del sb_of_bin
    of_row = np.empty(n, dtype=np.int32)
    of_row[order] = of_sorted
    return replace(sb, of_row=of_row)


def _superbins_of_score_counts(name: str, classifier: ScoredClassifier) -> _Superbins:
    """Super-bins of a classifier given as counts per (score, label) cell.

    The cumulative counts at the end of every distinct score are those the rows give, so the
    super-bins, and every bootstrap drawn from them with a given seed, are identical.
    """
    _, n_pos, n_neg = score_count_bins(*classifier.class_counts())
    dtype = _count_dtype(int(n_pos.sum() + n_neg.sum()))
    sb, _ = _superbins_from_points(name, np.cumsum(n_neg, dtype=dtype),
                                   np.cumsum(n_pos, dtype=dtype))
    return sb


def _superbins_of_roc(roc: RocCurve) -> _Superbins:
    """Super-bins from an ROC curve of :func:`costdash.roc.roc_curve` (one point per score)."""
    tp = np.asarray(roc.tp, dtype=np.int64)
    fp = np.asarray(roc.fp, dtype=np.int64)
    thr = np.asarray(roc.threshold, dtype=np.float64)
    ok = (tp.size >= 2 and tp[0] == 0 and fp[0] == 0 and tp[-1] == roc.n_pos
          and fp[-1] == roc.n_neg and np.all(np.diff(tp) >= 0) and np.all(np.diff(fp) >= 0)
          and np.all(np.diff(tp) + np.diff(fp) > 0) and np.all(np.isfinite(thr[1:]))
          and np.all(np.diff(thr[1:]) < 0))
    if not ok:
        raise ParameterError(
            "a band needs the ROC curve of a scoring classifier (costdash.roc_curve: one point per "
            "distinct score, decreasing thresholds); give the scores, or one confusion matrix")
    sb, _ = _superbins_from_points(roc.name, fp[1:], tp[1:])
    return sb


def _cumulative(counts: NDArray[np.integer], dtype: type[np.integer]) -> NDArray[np.integer]:
    """Row-wise cumulative sums with a leading zero column."""
    out = np.empty((counts.shape[0], counts.shape[1] + 1), dtype=dtype)
    out[:, 0] = 0
    np.cumsum(counts, axis=1, dtype=dtype, out=out[:, 1:])
    return out


def _full_data_envelope(sb: _Superbins, pc: NDArray[np.float64]) -> NDArray[np.float64]:
    return _envelopes(sb.fp[None, :], sb.tp[None, :], sb.n_pos, sb.n_neg, sb.anchors, pc)[0]


def _curve_replicates(sb: _Superbins, replicates: int, rng: np.random.Generator,
                      pc: NDArray[np.float64], max_batch_elements: int,
                      progress: ProgressCallback | None) -> NDArray[np.float64]:
    """Replicate envelopes (B, G) of one scoring classifier, stratified row bootstrap."""
    k = sb.k
    dtype = _count_dtype(sb.n_pos + sb.n_neg)
    pos_sampler = _Multinomial(sb.pos_weights)
    neg_sampler = _Multinomial(sb.neg_weights)
    curves = np.empty((replicates, pc.size), dtype=np.float64)
    per_batch = max(1, max_batch_elements // (k + 1))
    for start, stop in _batches(replicates, per_batch):
        b = stop - start
        dy = pos_sampler.draw(rng, b, dtype)
        dx = neg_sampler.draw(rng, b, dtype)
        tp = _cumulative(dy, dtype)
        del dy
        fp = _cumulative(dx, dtype)
        del dx
        curves[start:stop] = _envelopes(fp, tp, sb.n_pos, sb.n_neg, sb.anchors, pc)
        del fp, tp
        if progress is not None:
            progress(stop, replicates)
    return curves


# --------------------------------------------------------------------------------------------
# Two classifiers on the same rows: joint categories
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _JointClass:
    """The examples of one class grouped by their (super-bin of a, super-bin of b) pair.

    Resampling rows of the class jointly is a multinomial over these pairs (weights = number of
    rows with that pair); each classifier's per-super-bin counts are sums over pairs.
    """

    sampler: _Multinomial
    ends_a: NDArray[np.int64]       # (ka + 1,) cumulative-column of each of a's super-bin ends
    order_b: NDArray[np.int64]      # pairs sorted by b's super-bin
    ends_b: NDArray[np.int64]       # (kb + 1,) same for b, in order_b
    identity_b: bool                # order_b is the identity (then no permutation is needed)

    @classmethod
    def of(cls, sb_a: NDArray[np.int32], sb_b: NDArray[np.int32], ka: int, kb: int) -> _JointClass:
        key = sb_a.astype(np.int64) * kb + sb_b
        pairs, weights = np.unique(key, return_counts=True)
        pa = pairs // kb
        pb = pairs % kb
        ends_a = np.concatenate(([0], np.searchsorted(pa, np.arange(ka), side="right")))
        order_b = np.argsort(pb, kind="stable")
        ends_b = np.concatenate(([0], np.searchsorted(pb[order_b], np.arange(kb), side="right")))
        identity = bool(np.all(order_b == np.arange(order_b.size)))
        return cls(sampler=_Multinomial(weights.astype(np.int64)), ends_a=ends_a.astype(np.int64),
                   order_b=order_b, ends_b=ends_b.astype(np.int64), identity_b=identity)

    @property
    def size(self) -> int:
        return self.sampler.k

    def cumulative(self, counts: NDArray[np.integer], dtype: type[np.integer]
                   ) -> tuple[NDArray[np.integer], NDArray[np.integer]]:
        """Each classifier's cumulative counts at its super-bin ends, shapes (b, ka+1), (b, kb+1)."""
        cum = _cumulative(counts, dtype)
        for_a = cum[:, self.ends_a]
        if not self.identity_b:
            cum = _cumulative(counts[:, self.order_b], dtype)
        for_b = cum[:, self.ends_b]
        return for_a, for_b


def _difference_replicates(sa: _Superbins, sb: _Superbins, y_true: NDArray[np.bool_],
                           replicates: int, rng: np.random.Generator, pc: NDArray[np.float64],
                           max_batch_elements: int, progress: ProgressCallback | None,
                           ) -> NDArray[np.float64]:
    """Replicate differences envelope(a) - envelope(b), shape (B, G), rows resampled jointly."""
    assert sa.of_row is not None and sb.of_row is not None
    pos = _JointClass.of(sa.of_row[y_true], sb.of_row[y_true], sa.k, sb.k)
    neg = _JointClass.of(sa.of_row[~y_true], sb.of_row[~y_true], sa.k, sb.k)
    dtype = _count_dtype(y_true.size)
    curves = np.empty((replicates, pc.size), dtype=np.float64)
    per_replicate = pos.size + neg.size + sa.k + sb.k + 4
    per_batch = max(1, max_batch_elements // per_replicate)
    for start, stop in _batches(replicates, per_batch):
        b = stop - start
        tp_a, tp_b = pos.cumulative(pos.sampler.draw(rng, b, dtype), dtype)
        fp_a, fp_b = neg.cumulative(neg.sampler.draw(rng, b, dtype), dtype)
        env = _envelopes(fp_a, tp_a, sa.n_pos, sa.n_neg, sa.anchors, pc)
        del fp_a, tp_a
        env -= _envelopes(fp_b, tp_b, sb.n_pos, sb.n_neg, sb.anchors, pc)
        del fp_b, tp_b
        curves[start:stop] = env
        if progress is not None:
            progress(stop, replicates)
    return curves


def _double_bootstrap(sb: _Superbins, replicates: int, inner: int, rng: np.random.Generator,
                      pc: NDArray[np.float64], max_batch_elements: int,
                      progress: ProgressCallback | None
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Outer replicate envelopes (B, G) and each one's calibration position r_b (B, G).

    Every outer replicate is itself resampled ``inner`` times (a multinomial over its own counts
    per super-bin: the super-bins of the data are exact for any re-weighting of its rows), and
    ``r_b`` is the mid-rank position of ``2 theta*_b - theta_hat`` among the inner envelopes.
    The inner resamples of several outer replicates go through one envelope computation (as
    many as ``max_batch_elements`` allows): with few super-bins the per-call overhead, not the
    arithmetic, is what costs. They are drawn in the same order as one outer replicate at a
    time, so a seed gives the same band whatever the grouping.
    """
    k = sb.k
    dtype = _count_dtype(sb.n_pos + sb.n_neg)
    pos_sampler = _Multinomial(sb.pos_weights)
    neg_sampler = _Multinomial(sb.neg_weights)
    cost = _full_data_envelope(sb, pc)
    g = pc.size
    curves = np.empty((replicates, g), dtype=np.float64)
    calibration = np.empty((replicates, g), dtype=np.float64)
    tables: dict[tuple[int, int], tuple[NDArray[np.float64], NDArray[np.int32]]] = {}
    per_batch = max(1, max_batch_elements // (k + 1))
    inner_batch = max(1, min(inner, per_batch))
    # Outer replicates whose inner resamples share one envelope computation.
    group = max(1, per_batch // inner)
    for start, stop in _batches(replicates, per_batch):
        b = stop - start
        dy = pos_sampler.draw(rng, b, dtype)
        dx = neg_sampler.draw(rng, b, dtype)
        curves[start:stop] = _envelopes(_cumulative(dx, dtype), _cumulative(dy, dtype),
                                        sb.n_pos, sb.n_neg, sb.anchors, pc)
        for g0, g1 in _batches(b, group):
            neg_draws, pos_draws = [], []
            for r in range(g0, g1):
                inner_pos = _Multinomial(dy[r].astype(np.int64), tables)
                inner_neg = _Multinomial(dx[r].astype(np.int64), tables)
                for i0, i1 in _batches(inner, inner_batch):
                    neg_draws.append(inner_neg.draw(rng, i1 - i0, dtype))
                    pos_draws.append(inner_pos.draw(rng, i1 - i0, dtype))
            env = _envelopes(_cumulative(np.concatenate(neg_draws), dtype),
                             _cumulative(np.concatenate(pos_draws), dtype),
                             sb.n_pos, sb.n_neg, sb.anchors, pc)
            del neg_draws, pos_draws
            env = env.reshape(g1 - g0, inner, g)
            target = 2.0 * curves[start + g0:start + g1] - cost
            below = np.count_nonzero(env < target[:, None, :], axis=1).astype(np.float64)
            below += 0.5 * np.count_nonzero(env == target[:, None, :], axis=1)
            calibration[start + g0:start + g1] = below / inner
        if progress is not None:
            progress(stop, replicates)
    return curves, calibration


def _line_replicates(tp: int, fp: int, fn: int, tn: int, replicates: int,
                     rng: np.random.Generator, pc: NDArray[np.float64],
                     progress: ProgressCallback | None) -> NDArray[np.float64]:
    """Replicate cost lines (B, G) of one confusion matrix: paper 000 §8's binomial bootstrap."""
    n_pos, n_neg = tp + fn, fp + tn
    tpr_star = rng.binomial(n_pos, tp / n_pos, size=replicates) / n_pos
    fpr_star = rng.binomial(n_neg, fp / n_neg, size=replicates) / n_neg
    curves = (1.0 - tpr_star)[:, None] * pc + fpr_star[:, None] * (1.0 - pc)
    if progress is not None:
        progress(replicates, replicates)
    return curves


def _paired_percentile(tables: NDArray[np.int64], pc: NDArray[np.float64], replicates: int,
                       rng: np.random.Generator, progress: ProgressCallback | None
                       ) -> NDArray[np.float64]:
    """Replicate differences of two fixed lines, each class's paired table resampled."""
    out = []
    for c in range(2):
        counts = tables[c, :, 0].astype(np.int64)
        n = int(counts.sum())
        draws = rng.multinomial(n, counts / n, size=replicates)
        # flag rate of a minus that of b: (n11 + n10 - n11 - n01) / n = (n10 - n01) / n
        out.append((draws[:, 1] - draws[:, 2]) / n)
    d1 = -out[0]                      # FNR_a - FNR_b on the positives
    d2 = out[1]                       # FPR_a - FPR_b on the negatives
    if progress is not None:
        progress(replicates, replicates)
    return d1[:, None] * pc + d2[:, None] * (1.0 - pc)
