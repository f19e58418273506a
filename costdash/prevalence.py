"""The class prior in production, estimated from unlabelled scores (label-shift quantification).

After a threshold is deployed, p(+) moves and labels arrive months later; the scores the
deployed classifier produces arrive at once. Under label shift (the class-conditional score
distributions stay those of the labelled reference data, only the prior moves) the production
scores are a mixture ``q f₊(s) + (1 - q) f₋(s)`` whose weight ``q`` can be estimated:

* ``em`` (Saerens, Latinne & Decaestecker 2002): posteriors ``p(s)`` calibrated on the
  reference, at the prior ``π`` they are calibrated at, are re-weighted to a new prior ``q``
  until the mean re-weighted posterior is ``q`` again. The fixed point is the maximum of the
  concave likelihood ``Σ n_i log(q a_i + (1 - q) b_i)`` with ``a = p/π``, ``b = (1 - p)/(1 - π)``
  (the likelihood ratios of the two classes), so it is found directly as the root of the
  derivative ``Σ n_i (a_i - b_i)/(b_i + q (a_i - b_i))`` (decreasing in ``q``) by safeguarded
  Newton steps, to float precision, in a few passes over the distinct scores instead of the
  hundreds of EM iterations; 0 or 1 when the maximum is at the edge. The calibration map applied to
  the production scores is fitted on the whole reference: ``"bcts"`` by default (Platt scaling
  on the scores' log-odds when every reference score is a probability in [0, 1], on the scores
  themselves otherwise: for two classes the bias-corrected temperature scaling that Alexandari
  et al. 2020 recommend for EM, and QuaPy's ``EMQ(calib="bcts")``), ``"platt"`` (on the raw
  score), ``"isotonic"``, or ``"none"`` for scores that already are calibrated posteriors. ``π`` is
  the mean of the reference's *cross-fitted* calibrated posteriors
  (:func:`costdash.calibration.cross_fit`, the folds behind :func:`costdash.calibrate_classifier`),
  the prior the map's outputs really carry, as in Alexandari et al. (2020) and QuaPy's
  ``EMQ(exact_train_prev=False)``; with ``"none"`` it is the mean of the scores on the reference
  (the same rule with nothing fitted).
* ``acc`` (adjusted classify-and-count; Forman 2008, two-class BBSE of Lipton et al. 2018): at the
  deployed threshold ``t`` the production rate flagged ``r`` is ``q TPR + (1 - q) FPR``, so
  ``q = (r - FPR)/(TPR - FPR)``, clipped to [0, 1], with TPR and FPR read on the reference.

**The interval** accounts for both samples by a bootstrap of both (``resamples`` replicates,
percentile interval): the reference is resampled within each class (class totals fixed, as
everywhere in costdash), the calibration refitted and cross-fitted again, and the production
sample is resampled as a multinomial over its distinct scores. With ``"none"`` nothing is
fitted and the reference is resampled whole: the only thing it gives is ``π``, the mean
posterior, whose sampling error includes that of the reference's class mix. For ``acc`` the resampled counts
are exactly binomial (flagged positives, flagged negatives, flagged production cases), so they
are drawn as such. For ``em`` a production sample with more than :data:`BOOTSTRAP_BINS` distinct
scores is resampled over that many equal-count bins of its scores (each at its mean score) and
the replicates are shifted by the binning's own effect on the estimate, so that 10⁶ production
scores take well under a second; the point estimate always uses every distinct score. Whether an
interval earns its level is what ``studies/prevalence_shift.py`` measured (docs/production.md):
:attr:`PrevalenceEstimate.calibrated` says so.

Score counts and rows give the same estimate to the last bit: both are reduced to the same
sorted distinct cells with their counts before any arithmetic (weights, never expanded rows).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from costdash._resampling import RngLike, as_generator, check_level, check_replicates
from costdash.calibration import cross_fit, fit_isotonic, fit_platt
from costdash.dataset import Dataset, ScoredClassifier
from costdash.errors import ParameterError

__all__ = ["BOOTSTRAP_BINS", "METHODS", "PrevalenceEstimate", "ReferenceModel", "acc_prevalence",
           "em_prevalence", "estimate_prevalence", "production_counts", "reference_model"]

Method = Literal["em", "acc"]
Calibration = Literal["bcts", "platt", "isotonic", "none"]
METHODS = ("em", "acc")
CALIBRATIONS = ("bcts", "platt", "isotonic", "none")
LOGIT_CLIP = 1e-12
"""``bcts`` on probability scores: scores are clipped to [LOGIT_CLIP, 1 - LOGIT_CLIP] before
their log-odds are taken (0 and 1 become log-odds of -27.6 and +27.6)."""
BOOTSTRAP_BINS = 512
"""Distinct production scores above which the ``em`` bootstrap resamples equal-count bins."""

# Where studies/prevalence_shift.py measured 90 % intervals covering 0.86-0.94 in every design
# (both score families, every prevalence) of a production size: (method, calibration) -> the
# production sizes [lo, hi) around those designs. Filled from the published run
# (docs/production.md); elsewhere an interval shows no level.
_SIZE_BANDS = {1_000: (500, 3_000), 10_000: (3_000, 30_000), 100_000: (30_000, 300_000)}
# Published run (300 sets per family, seed 0, studies/prevalence_shift.csv): em with bcts covered
# 0.867-0.933 in all 24 designs; em with "none" on the true posteriors covered 0.867-0.913 at
# 10,000 and 100,000 cases but 0.843 and 0.853 at 1,000 (beta, p(+) 0.01 and 0.2); acc covered
# 0.863-0.920 at 1,000 and 10,000 but 0.847 and 0.850 at 100,000 (binormal, p(+) 0.01 and 0.05).
# Platt on the raw score and isotonic were not run (the run before bcts: Platt covered 0.660 on
# beta scores at 100,000 cases), so they show no level.
_EARNED: dict[tuple[str, str | None], tuple[int, ...]] = {
    ("em", "bcts"): (1_000, 10_000, 100_000),
    ("em", "none"): (10_000, 100_000),
    ("acc", None): (1_000, 10_000),
}
# What a level earned by the study rests on besides label shift.
_ASSUMES = {("em", "bcts"): "; it assumes the classes' log-odds are linear in the score's "
                            "log-odds (in the score itself for scores outside [0, 1]), as in "
                            "both score families studied",
            ("em", "none"): "; it assumes the scores are calibrated posteriors"}


@dataclass(frozen=True)
class PrevalenceEstimate:
    """The estimated p(+) of a production sample and its interval.

    Attributes
    ----------
    p_pos : float
        The estimate, in [0, 1].
    low, high : float
        The bootstrap percentile interval over both samples (module docstring), ``low <= p_pos
        <= high`` up to the percentile's own spread (both clipped to [0, 1]).
    method : str
        ``"em"`` or ``"acc"``.
    level : float
        The nominal level the interval was computed at.
    n_production : int
        Production cases the estimate is read from.
    calibrated : bool
        True where ``studies/prevalence_shift.py`` measured this method's intervals covering
        within 0.86-0.94 at nominal 0.9 in every design of this production size
        (docs/production.md); otherwise the interval is a range without a level.
    classifier : str
        The reference classifier whose scores the production sample holds.
    n_reference : int
        Labelled reference examples.
    reference_prior : float
        ``em``: the prior the calibrated posteriors carry (mean cross-fitted posterior on the
        reference); ``acc``: the reference prevalence.
    calibration : str or None
        ``em``: ``"bcts"``, ``"platt"``, ``"isotonic"`` or ``"none"``; None for ``acc``.
    threshold : float or None
        ``acc``: the threshold (score >= threshold is flagged); None for ``em``.
    resamples : int
        Bootstrap replicates behind the interval.
    note : str
        Why the interval does or does not carry a level.
    """

    p_pos: float
    low: float
    high: float
    method: str
    level: float
    n_production: int
    calibrated: bool
    classifier: str
    n_reference: int
    reference_prior: float
    calibration: str | None
    threshold: float | None
    resamples: int
    note: str


# --- inputs ---------------------------------------------------------------------------------


def _table_column(table: Any, name: str) -> NDArray | None:
    if isinstance(table, Mapping):
        return None if name not in table else np.asarray(table[name])
    columns = getattr(table, "columns", None)
    if columns is not None:
        return np.asarray(table[name]) if name in columns else None
    return None


def _is_table(production: Any) -> bool:
    return isinstance(production, Mapping) or hasattr(production, "columns")


def production_arrays(production: Any) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The production entries as (score, count) arrays, one per row or score cell, in order.

    Parameters
    ----------
    production : array_like, (score, n) tuple, or table
        Unlabelled scores, one per case; or a tuple of two 1-D arrays ``(score, n)`` (score
        counts); or a mapping / pandas DataFrame with a ``score`` column and optionally an ``n``
        column.
    """
    if _is_table(production):
        score = _table_column(production, "score")
        if score is None:
            raise ParameterError("production scores need a 'score' column")
        n = _table_column(production, "n")
    elif isinstance(production, tuple) and len(production) == 2 \
            and all(np.ndim(part) == 1 for part in production):
        score, n = np.asarray(production[0]), np.asarray(production[1])
    else:
        score, n = np.asarray(production), None
    try:
        s = np.asarray(score, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise ParameterError("production scores must be numbers") from None
    if n is None:
        count = np.ones(s.size, np.int64)
    else:
        raw = np.asarray(n, dtype=np.float64).ravel()
        if raw.shape != s.shape or np.any(raw < 0) or np.any(raw != np.floor(raw)):
            raise ParameterError("production counts 'n' must be whole numbers >= 0, one per "
                                 "score")
        count = raw.astype(np.int64)
    if not np.all(np.isfinite(s)):
        raise ParameterError("production scores must be finite numbers")
    return s, count


def production_counts(production: Any) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The distinct production scores, increasing, with the number of cases at each.

    Rows and the score counts that summarise them give identical arrays, which is why every
    estimate is the same for both (see :func:`production_arrays` for the accepted forms).

    Examples
    --------
    >>> production_counts([0.2, 0.7, 0.2])
    (array([0.2, 0.7]), array([2, 1]))
    >>> production_counts(([0.7, 0.2], [1, 2]))
    (array([0.2, 0.7]), array([2, 1]))
    """
    return _merge(*production_arrays(production))


def _merge(score: NDArray[np.float64], count: NDArray[np.int64]
           ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    keep = count > 0
    # -0.0 and 0.0 are one score to ">=": one cell.
    distinct, inverse = np.unique(score[keep] + 0.0, return_inverse=True)
    n = np.bincount(inverse, weights=count[keep], minlength=distinct.size)
    return distinct, n.astype(np.int64)


def reference_classifier(reference: Dataset | ScoredClassifier, classifier: str | None
                         ) -> ScoredClassifier:
    """The scored classifier of ``reference`` named ``classifier`` (the only one when None)."""
    if isinstance(reference, ScoredClassifier):
        if classifier is not None and classifier != reference.name:
            raise ParameterError(f"the reference classifier is {reference.name!r}, not "
                                 f"{classifier!r}")
        return reference
    if not isinstance(reference, Dataset):
        raise ParameterError("the reference must be a labelled Dataset (costdash.load_predictions)"
                             " or a ScoredClassifier")
    if classifier is None:
        if len(reference.scored) != 1:
            raise ParameterError(f"{reference.source}: name the classifier whose scores the "
                                 f"production sample holds; it has "
                                 f"{', '.join(repr(c.name) for c in reference.scored) or 'none'}")
        return reference.scored[0]
    for c in reference.scored:
        if c.name == classifier:
            return c
    raise ParameterError(f"{reference.source}: no scored classifier named {classifier!r}; it has "
                         f"{', '.join(repr(c.name) for c in reference.scored) or 'none'}")


@dataclass(frozen=True, eq=False)
class _Cells:
    """The reference as sorted distinct (label, fold, score) cells with their counts."""

    score: NDArray[np.float64]
    y: NDArray[np.bool_]
    fold: NDArray[np.int64]
    count: NDArray[np.int64]


def _split_counts(start: NDArray[np.int64], count: NDArray[np.int64], k: int
                  ) -> NDArray[np.int64]:
    """How many of the examples ``start .. start + count - 1`` have index ≡ f (mod k), for each
    f: shape (cells, k)."""
    f = np.arange(k)

    def upto(end: NDArray[np.int64]) -> NDArray[np.int64]:
        return np.maximum(0, (end[:, None] - f[None, :] + k - 1) // k)

    return upto(start + count) - upto(start)


def reference_cells(classifier: ScoredClassifier, folds: int = 5) -> _Cells:
    """The reference's distinct (label, fold, score) cells with their counts.

    With a fold column its folds are used; without one, the examples of each class in
    increasing score order go to folds 0, 1, ..., ``folds - 1``, 0, ... (equal scores are
    interchangeable, so this needs no file order and gives the same folds for rows and for the
    score counts that summarise them).
    """
    score, n_pos, n_neg = classifier.class_counts()
    s = np.r_[score, score] + 0.0
    y = np.r_[np.ones(score.size, bool), np.zeros(score.size, bool)]
    w = np.r_[n_pos, n_neg].astype(np.int64)
    if classifier.fold is not None:
        fold = np.r_[classifier.fold, classifier.fold].astype(np.int64)
        keep = w > 0
        s, y, fold, w = s[keep], y[keep], fold[keep], w[keep]
        keys = np.lexsort((s, fold, ~y))
        s, y, fold, w = s[keys], y[keys], fold[keys], w[keys]
        new = np.r_[True, (np.diff(s) != 0) | (np.diff(fold) != 0) | (np.diff(y) != 0)]
        group = np.cumsum(new) - 1
        total = np.bincount(group, weights=w).astype(np.int64)
        return _Cells(s[new], y[new], fold[new], total)
    out = []
    for cls in (True, False):
        mask = (y == cls) & (w > 0)
        distinct, inverse = np.unique(s[mask], return_inverse=True)
        total = np.bincount(inverse, weights=w[mask], minlength=distinct.size).astype(np.int64)
        start = np.r_[0, np.cumsum(total)[:-1]].astype(np.int64)
        split = _split_counts(start, total, folds)           # (cells, folds)
        cell, f = np.nonzero(split)
        out.append((distinct[cell], np.full(cell.size, cls), f.astype(np.int64), split[cell, f]))
    s, y, fold, w = (np.concatenate(parts) for parts in zip(*out))
    order = np.lexsort((s, fold, ~y))
    return _Cells(s[order], y[order], fold[order], w[order])


# --- the two estimators ----------------------------------------------------------------------


def _em_roots(d: NDArray[np.float64], b: NDArray[np.float64], w: NDArray[np.float64],
              start: NDArray[np.float64]) -> NDArray[np.float64]:
    """Maximum of ``Σ w log(b + q d)`` over q in [0, 1] for each row: the root of the
    decreasing derivative ``g(q) = Σ w d/(b + q d)``, 0 or 1 when ``g`` keeps its sign.
    Arrays of shape (B, m); ``start`` of shape (B,)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g0 = np.sum(w * np.where(d == 0, 0.0, d / b), axis=1)
        g1 = np.sum(w * np.where(d == 0, 0.0, d / (b + d)), axis=1)
    lo = np.zeros(start.size)
    hi = np.ones(start.size)
    q = np.clip(start, 1e-6, 1 - 1e-6)
    flat = np.all(d == 0, axis=1)              # every posterior at the prior: nothing to learn
    active = ~((g0 <= 0) | (g1 >= 0) | flat)
    for _ in range(200):
        if not np.any(active):
            break
        rows = np.flatnonzero(active)
        qa = q[rows]
        denom = b[rows] + qa[:, None] * d[rows]
        ratio = d[rows] / denom
        g = np.sum(w[rows] * ratio, axis=1)
        gp = -np.sum(w[rows] * ratio * ratio, axis=1)
        lo[rows] = np.where(g > 0, qa, lo[rows])
        hi[rows] = np.where(g > 0, hi[rows], qa)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(gp < 0, qa - g / gp, np.nan)
        inside = (step > lo[rows]) & (step < hi[rows])
        new = np.where(g == 0, qa, np.where(inside, step, 0.5 * (lo[rows] + hi[rows])))
        done = (np.abs(new - qa) <= 4e-16 * np.maximum(qa, 1e-300)) | (g == 0) \
            | (hi[rows] - lo[rows] <= 1e-17)
        q[rows] = new
        active[rows[done]] = False
    q = np.where(g0 <= 0, 0.0, np.where(g1 >= 0, 1.0, q))
    return np.where(flat, start, q)


def _ab(posterior: NDArray[np.float64], prior: NDArray[np.float64] | float
        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(d, b) = (a - b, b) with a = p/π and b = (1 - p)/(1 - π)."""
    pi = np.asarray(prior, dtype=np.float64)
    pi = pi[..., None] if pi.ndim else pi
    a = posterior / pi
    b = (1.0 - posterior) / (1.0 - pi)
    return a - b, b


def em_prevalence(posterior: ArrayLike, prior: float, weight: ArrayLike | None = None) -> float:
    """The Saerens-Latinne-Decaestecker EM fixed point: the prior ``q`` maximising the
    likelihood of posteriors calibrated at ``prior``.

    Parameters
    ----------
    posterior : array_like of float, shape (m,)
        p(+ | score) of each production case (or cell), calibrated at ``prior``, in [0, 1].
    prior : float
        The prior the posteriors are calibrated at, in (0, 1).
    weight : array_like of float, shape (m,), optional
        Cases each entry stands for (1 each by default).

    Returns
    -------
    float
        The EM fixed point in [0, 1] (where EM converges, to float precision).

    Examples
    --------
    Two cases with posteriors 0.9 and 0.1 at prior 0.5 are explained best by prior 0.5:

    >>> round(em_prevalence([0.9, 0.1], 0.5), 12)
    0.5
    >>> em_prevalence([0.2, 0.1], 0.5)
    0.0
    """
    p = np.asarray(posterior, dtype=np.float64).ravel()
    w = np.ones(p.size) if weight is None else np.asarray(weight, dtype=np.float64).ravel()
    if p.size == 0 or w.shape != p.shape or np.any(w < 0) or not np.all(np.isfinite(w)) \
            or w.sum() <= 0:
        raise ParameterError("em needs posteriors with non-negative weights, not all zero")
    if np.any((p < 0) | (p > 1)) or not np.all(np.isfinite(p)):
        raise ParameterError("posteriors must lie in [0, 1]")
    if not 0.0 < prior < 1.0:
        raise ParameterError(f"the prior must lie strictly between 0 and 1, got {prior!r}")
    d, b = _ab(p, prior)
    return float(_em_roots(d[None, :], b[None, :], w[None, :], np.array([prior]))[0])


def acc_prevalence(flagged_rate: float, tpr: float, fpr: float) -> float:
    """Adjusted classify-and-count: ``(r - FPR)/(TPR - FPR)`` clipped to [0, 1].

    Examples
    --------
    >>> round(acc_prevalence(0.26, tpr=0.8, fpr=0.1), 12)
    0.228571428571
    """
    if not tpr > fpr:
        raise ParameterError(f"adjusted classify-and-count needs TPR > FPR at the threshold; got "
                             f"TPR {tpr:g}, FPR {fpr:g}")
    return float(min(max((flagged_rate - fpr) / (tpr - fpr), 0.0), 1.0))


# --- calibration on the reference, batched over bootstrap replicates ------------------------


def _platt_batch(s: NDArray[np.float64], y: NDArray[np.bool_], w: NDArray[np.float64],
                 theta: NDArray[np.float64]) -> NDArray[np.float64]:
    """Platt's maximum likelihood (:func:`costdash.calibration.fit_platt`'s smoothed targets)
    for each row of weights ``w`` (B, m), by Newton's method from ``theta`` (B, 2) = (a, b)
    near the optimum (the point estimate's fit): the replicates' fits in a few array passes."""
    n_pos = w[:, y].sum(axis=1)
    n_neg = w[:, ~y].sum(axis=1)
    target = np.where(y[None, :], ((n_pos + 1.0) / (n_pos + 2.0))[:, None],
                      (1.0 / (n_neg + 2.0))[:, None])
    wt = w * target
    centre = float(np.mean(s))
    scale = float(np.std(s)) or 1.0
    z = (s - centre) / scale
    # In standardised coordinates: eta = u z + v with u = a scale, v = b + a centre.
    u = theta[:, 0] * scale
    v = theta[:, 1] + theta[:, 0] * centre
    # Newton converges quadratically from the point estimate's fit: four steps reach ~1e-12,
    # far below the bootstrap's spread.
    for _ in range(4):
        wp = w * expit(u[:, None] * z[None, :] + v[:, None])
        r = wp - wt
        g1, g2 = r @ z, r.sum(axis=1)
        h = wp - wp * wp / np.where(w > 0, w, 1.0)
        h11, h12, h22 = h @ (z * z), h @ z, h.sum(axis=1)
        det = h11 * h22 - h12 * h12
        du = (h22 * g1 - h12 * g2) / det
        dv = (h11 * g2 - h12 * g1) / det
        u, v = u - du, v - dv
    a = u / scale
    return np.c_[a, v - a * centre]


@dataclass(frozen=True, eq=False)
class _Fit:
    """The calibration fitted on (resampled) reference cells: a map to production posteriors."""

    prior: NDArray[np.float64]                 # (B,) the prior the posteriors carry
    platt: NDArray[np.float64] | None          # (B, 2)
    isotonic: tuple | None                     # B fitted Calibrators


def _fit_reference(cells: _Cells, w: NDArray[np.float64], calibration: str,
                   start: _Fit | None) -> _Fit:
    """Fit the map on each row of weights ``w`` (B, m) and the prior of its outputs: the
    weighted mean of the cross-fitted posteriors."""
    bsz = w.shape[0]
    if calibration == "none":
        # The scores are the posteriors: the prior they carry is their mean on the reference
        # (QuaPy's EMQ(exact_train_prev=False)); the replicates resample the reference whole.
        return _Fit(w @ cells.score / w.sum(axis=1), None, None)
    # bcts is Platt on the scores' log-odds (the cells already hold them).
    calibration = "platt" if calibration == "bcts" else calibration
    if start is None:
        # The point estimate's fit: the map on the whole reference, and the prior of its
        # outputs from the cross-fitted posteriors (each example calibrated by the other folds).
        fitter = fit_platt if calibration == "platt" else fit_isotonic
        calibrator = fitter(cells.score, cells.y, w[0])
        held = cross_fit(cells.score, cells.y, cells.fold, calibration, w[0])
        prior = np.array([float(np.dot(w[0], held) / w[0].sum())])
        if calibration == "platt":
            return _Fit(prior, np.array([calibrator.params]), None)
        return _Fit(prior, None, (calibrator,))
    # Replicates: the whole-reference fit only. The prior of its outputs is the in-sample mean
    # posterior plus the point estimate's gap between the cross-fitted and the in-sample means:
    # that gap is O(1/n) and steady, and refitting every fold of every replicate would take six
    # times as long for a change far below the bootstrap's own spread.
    own = _posteriors(start, cells.score)[0]
    gap = start.prior[0] - float(np.dot(cells.count, own) / cells.count.sum())
    if calibration == "isotonic":
        maps = []
        for k in range(bsz):
            keep = w[k] > 0
            maps.append(fit_isotonic(cells.score[keep], cells.y[keep], w[k, keep]))
        fit = _Fit(np.zeros(bsz), None, tuple(maps))
    else:
        assert start.platt is not None
        theta = _platt_batch(cells.score, cells.y, w, np.repeat(start.platt, bsz, axis=0))
        fit = _Fit(np.zeros(bsz), theta, None)
    prior = np.sum(w * _posteriors(fit, cells.score), axis=1) / w.sum(axis=1) + gap
    return _Fit(prior, fit.platt, fit.isotonic)


def _posteriors(fit: _Fit, score: NDArray[np.float64]) -> NDArray[np.float64]:
    """(B, m) posteriors of production scores under each fitted map."""
    if fit.platt is not None:
        return expit(fit.platt[:, :1] * score[None, :] + fit.platt[:, 1:])
    if fit.isotonic is not None:
        return np.array([m(score) for m in fit.isotonic])
    return np.broadcast_to(score, (fit.prior.size, score.size))


def _resample_reference(cells: _Cells, rng: np.random.Generator, b: int,
                        stratified: bool = True) -> NDArray[np.float64]:
    """(b, m) counts of the reference resampled within each class (class totals fixed), or as
    a whole when not ``stratified``."""
    m = cells.count.size
    flat = np.zeros(b * m, np.int64)
    for cls in ((True, False) if stratified else (None,)):
        idx = np.flatnonzero(cells.y == cls) if cls is not None else np.arange(m)
        examples = np.repeat(idx, cells.count[idx])        # one entry per reference example
        draws = examples[rng.integers(0, examples.size, size=(b, examples.size))]
        flat += np.bincount((draws + (np.arange(b) * m)[:, None]).ravel(), minlength=b * m)
    return flat.reshape(b, m).astype(np.float64)


def _bins(score: NDArray[np.float64], count: NDArray[np.int64], bins: int
          ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Equal-count bins of sorted production cells: each bin's mean score and its count."""
    if score.size <= bins:
        return score, count
    before = np.cumsum(count) - count
    which = (before * bins) // int(count.sum())
    n = np.bincount(which, weights=count, minlength=bins)
    total = np.bincount(which, weights=count * score, minlength=bins)
    keep = n > 0
    return total[keep] / n[keep], n[keep].astype(np.int64)


def _earned(method: str, calibration: str | None, n: int) -> tuple[bool, str]:
    """Whether the interval carries its level: the study's verdict for this method and a
    production sample of ``n`` cases, and the reason as text."""
    name = method if calibration is None else f"{method} ({calibration})"
    for size in _EARNED.get((method, calibration), ()):
        lo, hi = _SIZE_BANDS[size]
        if lo <= n < hi:
            return True, (f"{name}: 90 % intervals covered 0.86-0.94 in every design of "
                          f"studies/prevalence_shift.py at {size:,} production cases "
                          f"(docs/production.md){_ASSUMES.get((method, calibration), '')}")
    return False, (f"no level: {name} at {n:,} production cases is not where "
                   f"studies/prevalence_shift.py measured its 90 % intervals covering 0.86-0.94 "
                   f"(docs/production.md); a range, not a confidence interval")


# --- the entry point -------------------------------------------------------------------------


def estimate_prevalence(reference: Dataset | ScoredClassifier, production: Any, *,
                        classifier: str | None = None, method: Method = "em",
                        level: float = 0.9, threshold: float | None = None,
                        calibration: Calibration = "bcts", folds: int = 5,
                        resamples: int = 200, rng: RngLike = 0) -> PrevalenceEstimate:
    """Estimate p(+) of a production sample from its unlabelled scores.

    Parameters
    ----------
    reference : Dataset or ScoredClassifier
        The labelled evaluation data (rows or score counts), from
        :func:`costdash.load_predictions`; the class-conditional score distributions of
        ``classifier`` are read from it.
    production : array_like, (score, n) tuple, or table
        The same classifier's scores in production: one per case, or score counts (a pair of
        arrays, or a mapping / DataFrame with columns ``score`` and ``n``).
    classifier : str, optional
        The reference's classifier (required when it has several scored ones).
    method : {"em", "acc"}
        Saerens EM on calibrated posteriors, or adjusted classify-and-count at ``threshold``
        (module docstring).
    level : float
        Level of the bootstrap percentile interval (whether it earns it: ``calibrated``).
    threshold : float, optional
        ``acc`` only, required there: the deployed threshold (score >= threshold is flagged).
    calibration : {"bcts", "platt", "isotonic", "none"}
        ``em`` only: the map from scores to posteriors fitted on the reference (module
        docstring): ``"bcts"``, Platt on the log-odds of probability scores (on margins, on the
        scores themselves); ``"platt"`` on the raw scores; ``"isotonic"``; ``"none"`` when the
        scores already are calibrated posteriors (of the population the reference samples).
    folds : int
        Folds of the cross-fitting when the reference has no fold column.
    resamples : int
        Bootstrap replicates (1 to 10,000).
    rng : int, Generator or None
        The bootstrap's random generator (a seed by default, so the interval is reproducible).

    Returns
    -------
    PrevalenceEstimate

    Raises
    ------
    ParameterError
        An unknown method or calibration, ``acc`` without a threshold or with TPR <= FPR at it, an
        empty production sample, a reference without both classes.

    Examples
    --------
    >>> import numpy as np
    >>> from costdash.dataset import ScoredClassifier
    >>> rng = np.random.default_rng(1)
    >>> y = rng.random(4000) < 0.3
    >>> ref = ScoredClassifier("m", y, rng.normal(1.5 * y, 1.0))
    >>> prod = rng.normal(1.5 * (rng.random(20000) < 0.1), 1.0)
    >>> est = estimate_prevalence(ref, prod, resamples=50)
    >>> 0.08 < est.p_pos < 0.12, est.low <= est.p_pos <= est.high
    (True, True)
    """
    model = reference_model(reference, classifier=classifier, method=method,
                            threshold=threshold, calibration=calibration, folds=folds,
                            resamples=resamples, rng=rng)
    return model.estimate(production, level=level)


@dataclass(frozen=True, eq=False)
class ReferenceModel:
    """What the reference gives every production sample: the calibration (or the threshold's
    rates) and their bootstrap replicates, fitted once and reused for each period.

    Build it with :func:`reference_model`; :meth:`estimate` reads one production sample.
    """

    classifier: str
    method: str
    calibration: str | None
    threshold: float | None
    n_reference: int
    resamples: int
    reference_prior: float
    rng: np.random.Generator
    fit: _Fit | None = None            # em: the point fit (B = 1)
    fits: _Fit | None = None           # em: the replicates' fits
    rates: tuple[float, float] = (0.0, 0.0)                 # acc: (TPR, FPR)
    rate_reps: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
    on_log_odds: bool = False          # em with bcts on probability scores: maps read log-odds

    def estimate(self, production: Any, *, level: float = 0.9) -> PrevalenceEstimate:
        """The estimate and interval of one production sample (see
        :func:`estimate_prevalence` for the forms ``production`` may take)."""
        lvl = check_level(level)
        alpha = (1.0 - lvl) / 2.0
        p_score, p_count = production_counts(production)
        n_prod = int(p_count.sum())
        if n_prod == 0:
            raise ParameterError("the production sample is empty")
        b, gen = self.resamples, self.rng
        common = dict(method=self.method, level=lvl, n_production=n_prod,
                      classifier=self.classifier, n_reference=self.n_reference,
                      reference_prior=self.reference_prior, calibration=self.calibration,
                      threshold=self.threshold, resamples=b)
        if self.method == "acc":
            assert self.rate_reps is not None and self.threshold is not None
            tpr, fpr = self.rates
            k = int(p_count[p_score >= self.threshold].sum())
            estimate = acc_prevalence(k / n_prod, tpr, fpr)
            # Resampled production cases make the flagged count exactly binomial.
            rate = gen.binomial(n_prod, k / n_prod, size=b) / n_prod
            rt, rf = self.rate_reps
            with np.errstate(divide="ignore", invalid="ignore"):
                reps = np.where(rt > rf, np.clip((rate - rf) / (rt - rf), 0.0, 1.0), np.nan)
            if np.all(np.isnan(reps)):
                low, high = 0.0, 1.0
            else:
                low, high = np.nanquantile(reps, [alpha, 1.0 - alpha])
            ok, note = _earned("acc", None, n_prod)
        else:
            fit, fits = self.fit, self.fits
            assert fit is not None and fits is not None
            if self.calibration == "none" and (np.any(p_score < 0) or np.any(p_score > 1)):
                raise ParameterError("calibration 'none' needs probabilities in [0, 1] as "
                                     "scores")
            if self.on_log_odds:
                if np.any(p_score < 0) or np.any(p_score > 1):
                    raise ParameterError(
                        "calibration 'bcts' was fitted on the log-odds of the reference's "
                        "scores, which are probabilities in [0, 1]; the production scores must "
                        "be too")
                # Increasing, so the cells stay sorted; clipped ends may tie, which is harmless.
                p_score = _log_odds(p_score)
            d, bb = _ab(_posteriors(fit, p_score)[0], fit.prior[0])
            w = p_count.astype(np.float64)
            estimate = float(_em_roots(d[None, :], bb[None, :], w[None, :], fit.prior)[0])
            # Production over equal-count bins when large; the replicates are shifted by the
            # binning's own effect on the estimate.
            r_score, r_count = _bins(p_score, p_count, BOOTSTRAP_BINS)
            d0, b0 = _ab(_posteriors(fit, r_score)[0], fit.prior[0])
            shift = estimate - float(_em_roots(d0[None, :], b0[None, :],
                                               r_count[None, :].astype(np.float64),
                                               fit.prior)[0])
            pw = gen.multinomial(n_prod, r_count / n_prod, size=b).astype(np.float64)
            db, bbb = _ab(_posteriors(fits, r_score), fits.prior)
            # Newton from the binned point estimate: the replicates' roots lie around it.
            reps = _em_roots(db, bbb, pw, np.full(b, estimate - shift)) + shift
            low, high = np.quantile(reps, [alpha, 1.0 - alpha])
            ok, note = _earned("em", self.calibration, n_prod)
        return PrevalenceEstimate(
            p_pos=estimate, low=float(np.clip(min(low, estimate), 0.0, 1.0)),
            high=float(np.clip(max(high, estimate), 0.0, 1.0)), calibrated=ok, note=note,
            **common)


def reference_model(reference: Dataset | ScoredClassifier, *, classifier: str | None = None,
                    method: Method = "em", threshold: float | None = None,
                    calibration: Calibration = "bcts", folds: int = 5, resamples: int = 200,
                    rng: RngLike = 0) -> ReferenceModel:
    """Fit what :func:`estimate_prevalence` needs from the reference, once (its parameters).

    Raises
    ------
    ParameterError
        As :func:`estimate_prevalence`.
    """
    if method not in METHODS:
        raise ParameterError(f"unknown method {method!r}; one of {', '.join(METHODS)}")
    b = check_replicates(resamples, 10_000)
    gen = as_generator(rng)
    clf = reference_classifier(reference, classifier)
    n_ref, ref_pos = clf.n_examples, clf.n_pos
    if ref_pos == 0 or ref_pos == n_ref:
        raise ParameterError(f"{clf.name}: the reference needs examples of both classes")
    if method == "acc":
        if threshold is None or not math.isfinite(float(threshold)):
            raise ParameterError("method 'acc' needs the deployed threshold (a finite number)")
        t = float(threshold)
        score, n_pos, n_neg = clf.class_counts()
        flag = score >= t
        tp, fp = int(n_pos[flag].sum()), int(n_neg[flag].sum())
        pos, neg = int(n_pos.sum()), int(n_neg.sum())
        acc_prevalence(0.5, tp / pos, fp / neg)          # checks TPR > FPR
        # Resampling the reference within classes makes TP and FP exactly binomial.
        reps = (gen.binomial(pos, tp / pos, size=b) / pos, gen.binomial(neg, fp / neg, size=b) / neg)
        return ReferenceModel(classifier=clf.name, method="acc", calibration=None, threshold=t,
                              n_reference=n_ref, resamples=b, reference_prior=pos / n_ref,
                              rng=gen, rates=(tp / pos, fp / neg), rate_reps=reps)
    if threshold is not None:
        raise ParameterError("a threshold is for method 'acc'; 'em' uses every score")
    if calibration not in CALIBRATIONS:
        raise ParameterError(f"unknown calibration {calibration!r}; one of "
                             f"{', '.join(CALIBRATIONS)}")
    cells = reference_cells(clf, folds)
    probabilities = bool(np.all((cells.score >= 0) & (cells.score <= 1)))
    if calibration == "none" and not probabilities:
        raise ParameterError("calibration 'none' needs probabilities in [0, 1] as scores")
    on_log_odds = calibration == "bcts" and probabilities
    if on_log_odds:
        cells = dataclasses.replace(cells, score=_log_odds(cells.score))
    fit = _fit_reference(cells, cells.count[None, :].astype(np.float64), calibration, None)
    reps = _resample_reference(cells, gen, b, stratified=calibration != "none")
    fits = _fit_reference(cells, reps, calibration, fit)
    return ReferenceModel(classifier=clf.name, method="em", calibration=calibration,
                          threshold=None, n_reference=n_ref, resamples=b,
                          reference_prior=float(fit.prior[0]), rng=gen, fit=fit, fits=fits,
                          on_log_odds=on_log_odds)


def _log_odds(score: NDArray[np.float64]) -> NDArray[np.float64]:
    """log(s/(1 - s)) of probability scores clipped to [LOGIT_CLIP, 1 - LOGIT_CLIP]."""
    s = np.clip(score, LOGIT_CLIP, 1.0 - LOGIT_CLIP)
    return np.log(s) - np.log1p(-s)
