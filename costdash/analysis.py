"""One call from a loaded data set and operating conditions to everything the summary shows.

This is what ``costdash analyze``, the dashboard and the HTTP API share; :func:`analysis_to_dict`
is the stable JSON contract documented in the README.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_FLOOR, Context, Decimal

import numpy as np
from numpy.typing import ArrayLike

from costdash.view import number_text
from costdash.conditions import OperatingCondition, default_condition
from costdash.costspace import LowerEnvelope, lower_envelope, operating_range
from costdash.dataset import Dataset
from costdash.errors import ParameterError
from costdash.hull import (
    OptimalVertex,
    RocHull,
    classifier_hull,
    hull_of_hulls,
    optimal_vertex,
)
from costdash.roc import RocCurve, roc_of, thin_indices


@dataclass(frozen=True, eq=False)
class ClassifierSummary:
    """One classifier's own curves and figures of merit."""

    roc: RocCurve
    hull: RocHull
    envelope: LowerEnvelope
    operating_range: tuple[float, float] | None

    @property
    def name(self) -> str:
        return self.roc.name

    @property
    def cost_area(self) -> float:
        """Area under its own envelope (trivial classifiers included): uniform-PC(+) expected cost."""
        return self.envelope.area

    # The finite distinct scores in increasing order, made on the first readable threshold and
    # kept: the view model asks for one per hull vertex (~60), and copying and filtering the
    # whole threshold array (150k scores) each time was most of an upload's analysis.
    _increasing_scores: np.ndarray | None = field(default=None, init=False, repr=False,
                                                  compare=False)

    def readable_threshold(self, threshold: float | None) -> str:
        """:func:`readable_threshold` of ``threshold`` among this classifier's scores; "none"
        where there is no threshold (the trivial classifiers, counted points)."""
        if threshold is None or not math.isfinite(float(threshold)):
            return "none"
        scores = self._increasing_scores
        if scores is None:
            # The ROC's thresholds are the distinct scores, highest first after the NaN of
            # (0, 0). Two threads making it at once make the same array; either may stay.
            scores = self.roc.threshold[:0:-1]
            scores = np.ascontiguousarray(scores[np.isfinite(scores)], dtype=np.float64)
            scores.flags.writeable = False
            object.__setattr__(self, "_increasing_scores", scores)
        return readable_threshold(scores, float(threshold))


@dataclass(frozen=True, eq=False)
class OperatingPoint:
    """The best choice over all classifiers under one set of conditions."""

    condition: OperatingCondition
    vertex: OptimalVertex
    normalized_cost: float

    @property
    def expected_cost(self) -> float:
        return self.condition.expected_cost(self.normalized_cost)


@dataclass(frozen=True, eq=False)
class Analysis:
    """Everything derived from a data set for one set of operating conditions."""

    dataset: Dataset
    classifiers: tuple[ClassifierSummary, ...]
    hull: RocHull
    envelope: LowerEnvelope
    operating_point: OperatingPoint

    def classifier(self, name: str) -> ClassifierSummary:
        for c in self.classifiers:
            if c.name == name:
                return c
        raise KeyError(name)


def summarize_classifier(roc: RocCurve) -> ClassifierSummary:
    """The hull, envelope and operating range of one classifier's ROC curve."""
    hull = classifier_hull(roc)
    return ClassifierSummary(roc=roc, hull=hull, envelope=lower_envelope(hull),
                             operating_range=operating_range(hull.fpr, hull.tpr))


def choose(hull: RocHull, condition: OperatingCondition) -> OperatingPoint:
    """The optimal hull vertex under ``condition`` and its normalized expected cost."""
    vertex = optimal_vertex(hull, condition)
    return OperatingPoint(condition, vertex, condition.normalized_cost(vertex.fpr, vertex.tpr))


def select_classifiers(dataset: Dataset, models: Sequence[str] | None) -> Dataset:
    """``dataset`` with only the classifiers named in ``models``, in the data set's order.

    Parameters
    ----------
    dataset : Dataset
    models : sequence of str or None
        Exact names (the ticked classifiers of a view); None or empty keeps every classifier.

    Returns
    -------
    Dataset
        The same arrays (nothing is copied); ``dataset`` itself when all are kept.

    Raises
    ------
    ParameterError
        Naming every name the data set does not have, and the names it has.
    """
    if not models:
        return dataset
    wanted = set(models)
    unknown = [m for m in dict.fromkeys(models) if m not in set(dataset.names)]
    if unknown:
        raise ParameterError(
            f"{dataset.source}: no classifier named {', '.join(repr(m) for m in unknown)}; "
            f"it has {', '.join(repr(n) for n in dataset.names)}")
    if wanted >= set(dataset.names):
        return dataset
    return replace(dataset, scored=tuple(c for c in dataset.scored if c.name in wanted),
                   counted=tuple(c for c in dataset.counted if c.name in wanted))


def analyze(dataset: Dataset, condition: OperatingCondition | None = None, *,
            models: Sequence[str] | None = None, threads: int = 1) -> Analysis:
    """Analyse the classifiers of ``dataset`` and choose under ``condition``.

    Parameters
    ----------
    dataset : Dataset
        A loaded predictions file (see :func:`costdash.load_predictions`).
    condition : OperatingCondition, optional
        Defaults to the data's prevalence with unit costs
        (:func:`costdash.conditions.default_condition`).
    models : sequence of str, optional
        Analyse only these classifiers (exact names; all when None): the hull, the envelope and
        the choice are theirs alone, as on the dashboard when others are unticked. The default
        condition is still the prevalence of the whole data set.
    threads : int
        Classifiers analysed on this many threads at once (numpy's sorts run without the
        interpreter lock: two threads take about half the time on two idle cores); the same
        result.

    Raises
    ------
    ParameterError
        ``models`` names a classifier the data set does not have.
    """
    if condition is None:
        condition = default_condition(dataset.prevalence)
    dataset = select_classifiers(dataset, models)
    classifiers = (*dataset.scored, *dataset.counted)
    if threads > 1 and len(classifiers) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=threads) as pool:
            summaries = tuple(pool.map(lambda c: summarize_classifier(roc_of(c)), classifiers))
    else:
        summaries = tuple(summarize_classifier(roc_of(c)) for c in classifiers)
    hull = hull_of_hulls([s.hull for s in summaries])
    return Analysis(dataset=dataset, classifiers=summaries, hull=hull,
                    envelope=lower_envelope(hull), operating_point=choose(hull, condition))


def threshold_text(value: float | None) -> str:
    """A score threshold as text: the shortest text that reads back as the same number
    (:func:`costdash.view.number_text`, as the browser writes it too); "none" for the trivial
    classifiers.

    Thresholds are compared with scores, so a text that rounds ``0.499996`` to ``0.5`` would
    name another operating point than the one chosen.
    """
    if value is None or not math.isfinite(float(value)):
        return "none"
    return number_text(float(value))


_WIDE = Context(prec=60)
"""Room for every digit a float's floor at up to 18 significant digits needs."""


def readable_threshold(sorted_scores: ArrayLike, threshold: float) -> str:
    """The shortest decimal that flags exactly the cases ``threshold`` flags.

    A case is flagged when its score >= the threshold, so any number ``r`` with
    ``s < r <= threshold`` flags the same cases, where ``s`` is the highest score below the
    threshold: no score lies between ``r`` and the exact threshold. Of those numbers this is the
    one with the fewest significant digits, and of those the nearest to ``threshold``; the
    comparison is the float one a deployment makes (``float(text)``), and the text is written
    by :func:`costdash.view.number_text`.

    Parameters
    ----------
    sorted_scores : array_like of float
        The classifier's scores (or its distinct scores), finite, in increasing order.
    threshold : float
        The exact threshold, finite (usually one of the scores: a hull vertex's).

    Returns
    -------
    str
        ``"0.4"`` for a threshold of 0.4999996 when the next score down is 0.2; the exact
        threshold's own shortest text when no shorter number flags the same cases.

    Raises
    ------
    ParameterError
        A threshold that is not finite.
    """
    t = float(threshold)
    if not math.isfinite(t):
        raise ParameterError(f"a threshold must be a finite number, got {threshold!r}")
    scores = np.asarray(sorted_scores, dtype=np.float64)
    below = int(np.searchsorted(scores, t, side="left"))
    lowest = float(scores[below - 1]) if below else -math.inf
    return _shortest_decimal(lowest, t)


def _significant_digits(value: Decimal) -> int:
    return 0 if value.is_zero() else len(value.normalize(_WIDE).as_tuple().digits)


def _shortest_decimal(low: float, high: float) -> str:
    """Text of the number with fewest significant digits, then nearest ``high``, among those
    whose float lies in (low, high]."""
    if low < 0.0 <= high:
        return "0"
    exact = Decimal(high)
    top = exact.adjusted()                       # 10**top <= |high| < 10**(top + 1)
    best: Decimal | None = None
    # The floor of ``high`` on a grid of 10**-places: any number in the interval on that grid
    # is at most it, so when it is out of the interval (at or below ``low``) so are they, and
    # when it is in, none on a coarser grid was. Places start where the floor is 0 (or
    # -10**(top + 1)) and stop at 18 significant digits, beyond which only ``high`` is left.
    for places in range(-(top + 1), -top + 18):
        floor = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_FLOOR, context=_WIDE)
        if not low < float(floor):               # (never above ``high``: a floor of it)
            continue
        if best is not None and _significant_digits(floor) > _significant_digits(best):
            break
        best = floor                             # as short, and nearer ``high``
    return number_text(high) if best is None else number_text(float(best))


def _num(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _nums(values: np.ndarray) -> list[float | None]:
    """``values`` as a list for JSON, None where not finite.

    Vectorised: one ``tolist`` and a Python write per non-finite entry only (a threshold list
    holds one NaN, at (0, 0)), not a Python call per entry (issue 23: 3 million thresholds)."""
    out = values.tolist()
    for i in np.flatnonzero(~np.isfinite(values)).tolist():
        out[i] = None
    return out


def analysis_to_dict(analysis: Analysis, *, max_points: int | None = None) -> dict:
    """The JSON contract of ``costdash analyze --json`` (no NaN or infinity anywhere).

    ``max_points`` thins each classifier's ROC arrays for display; hull and envelope stay exact.
    """
    ds = analysis.dataset
    classifiers = []
    for c in analysis.classifiers:
        # Every point: a slice (a view), not an index array (a copy of each array).
        idx = (slice(None) if max_points is None
               else thin_indices(c.roc.size, max_points))
        classifiers.append({
            "name": c.name,
            "auc": _num(c.roc.auc),
            "roc": {"fpr": c.roc.fpr[idx].tolist(), "tpr": c.roc.tpr[idx].tolist(),
                    "threshold": _nums(c.roc.threshold[idx])},
            "operating_range": list(c.operating_range) if c.operating_range else None,
            "cost_area": _num(c.cost_area),
            "on_hull": c.name in analysis.hull.classifier,
        })
    hull = analysis.hull
    op = analysis.operating_point
    cond = op.condition
    return {
        "dataset": {"n": ds.n, "n_pos": ds.n_pos, "n_neg": ds.n_neg,
                    "positive_label": ds.positive_label, "n_folds": ds.n_folds,
                    "source": ds.source, "layout": ds.layout},
        "classifiers": classifiers,
        "hull": [{"fpr": float(f), "tpr": float(t), "classifier": name, "threshold": _num(thr)}
                 for f, t, name, thr in zip(hull.fpr, hull.tpr, hull.classifier, hull.threshold)],
        "envelope": {"pc": analysis.envelope.pc.tolist(), "cost": analysis.envelope.cost.tolist()},
        "operating_point": {
            "p_pos": cond.p_pos, "cost_fn": cond.cost_fn, "cost_fp": cond.cost_fp,
            "pc": cond.pc, "slope": _num(cond.slope), "classifier": op.vertex.classifier,
            "threshold": _num(op.vertex.threshold), "fpr": op.vertex.fpr, "tpr": op.vertex.tpr,
            "normalized_cost": op.normalized_cost, "expected_cost": op.expected_cost,
            "cost_tp": cond.cost_tp, "cost_tn": cond.cost_tn},
    }
