"""One call from a loaded data set and operating conditions to everything the summary shows.

This is what ``costdash analyze``, the dashboard and the HTTP API share; :func:`analysis_to_dict`
is the stable JSON contract documented in the README.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

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
            models: Sequence[str] | None = None) -> Analysis:
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

    Raises
    ------
    ParameterError
        ``models`` names a classifier the data set does not have.
    """
    if condition is None:
        condition = default_condition(dataset.prevalence)
    dataset = select_classifiers(dataset, models)
    summaries = tuple(summarize_classifier(roc_of(c)) for c in (*dataset.scored, *dataset.counted))
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


def _num(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _nums(values: np.ndarray) -> list[float | None]:
    return [_num(v) for v in values.tolist()]


def analysis_to_dict(analysis: Analysis, *, max_points: int | None = None) -> dict:
    """The JSON contract of ``costdash analyze --json`` (no NaN or infinity anywhere).

    ``max_points`` thins each classifier's ROC arrays for display; hull and envelope stay exact.
    """
    ds = analysis.dataset
    classifiers = []
    for c in analysis.classifiers:
        idx = (np.arange(c.roc.size) if max_points is None
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
