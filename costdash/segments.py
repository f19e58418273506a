"""One threshold for everyone, or one per segment (region, product, site)?

A segment column splits the rows; each segment has its own prevalence, so the conditions that
matter there differ from the file's even at the same costs. Per segment this module chooses the
classifier and threshold that are optimal on that segment's rows at its p(+) and the shared costs,
prices the shared choice (the one the whole file's analysis makes) on the same rows, and reports
the regret of keeping the shared choice: what a policy per segment would save.

Everything is the core's analysis run on row subsets (:func:`costdash.analyze`,
:func:`costdash.decide`), so each segment's numbers are exactly what the dashboard and the CLI
give for a file holding only that segment's rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from costdash.analysis import analyze
from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset, ScoredClassifier
from costdash.decision import decide
from costdash.errors import ParameterError
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE
from costdash.roc import roc_of

__all__ = ["SegmentChoice", "SegmentPolicy", "segment_policy", "segment_policy_to_dict"]


@dataclass(frozen=True)
class SegmentChoice:
    """The choice on one segment's rows.

    Attributes
    ----------
    segment : str
    n, n_pos : int
        Rows and positives of the segment.
    p_pos : float
        The p(+) the segment is decided at: its prevalence unless one was given.
    classifier : str
    threshold : float or None
        The segment's optimal choice (None for a trivial one).
    expected_cost : float
        Its expected cost per case at the segment's conditions.
    shared_expected_cost : float
        The shared choice's expected cost per case on the same rows and conditions.
    regret_vs_shared : float
        ``shared_expected_cost - expected_cost`` (>= 0): what this segment saves per case with a
        choice of its own.
    """

    segment: str
    n: int
    n_pos: int
    p_pos: float
    classifier: str
    threshold: float | None
    expected_cost: float
    shared_expected_cost: float
    regret_vs_shared: float


@dataclass(frozen=True)
class SegmentPolicy:
    """A choice per segment beside the shared one.

    Attributes
    ----------
    condition : OperatingCondition
        The whole file's conditions (the shared choice's).
    shared_classifier : str
    shared_threshold : float or None
    segments : tuple of SegmentChoice
        In order of first appearance in the file.
    saving_per_case : float
        Mean regret over all rows (each segment weighted by its rows): what choosing per segment
        saves per case against the shared choice.
    """

    condition: OperatingCondition
    shared_classifier: str
    shared_threshold: float | None
    segments: tuple[SegmentChoice, ...]
    saving_per_case: float


def _rows(dataset: Dataset, mask: np.ndarray) -> Dataset:
    scored = tuple(replace(c, y_true=c.y_true[mask], score=c.score[mask],
                           fold=None if c.fold is None else c.fold[mask])
                   for c in dataset.scored)
    return Dataset(source=dataset.source, layout=dataset.layout,
                   positive_label=dataset.positive_label, scored=scored,
                   fold_labels=dataset.fold_labels)


def _cost_of_choice(classifier: ScoredClassifier | None, name: str, threshold: float | None,
                    condition: OperatingCondition) -> float:
    """Expected cost per case of flagging by ``name`` at ``threshold`` on the given rows."""
    if name == ALL_NEGATIVE or classifier is None and threshold is None:
        fpr = tpr = 0.0
    elif name == ALL_POSITIVE:
        fpr = tpr = 1.0
    else:
        assert classifier is not None and threshold is not None
        roc = roc_of(classifier)
        i = roc.point_at_threshold(threshold)
        fpr, tpr = float(roc.fpr[i]), float(roc.tpr[i])
    return condition.expected_cost(condition.normalized_cost(fpr, tpr))


def _check(dataset: Dataset, labels: np.ndarray) -> None:
    if dataset.counted or not dataset.scored:
        raise ParameterError("segments need scores per row; a file of confusion matrices has "
                             "no rows to split")
    if dataset.layout not in ("wide",):
        raise ParameterError(f"segments need the wide layout (one row per case, a column per "
                             f"classifier); this file has the {dataset.layout} layout")
    n = dataset.scored[0].y_true.size
    if labels.shape != (n,):
        raise ParameterError(f"the segment column has {labels.size} values for {n} rows")


def segment_policy(dataset: Dataset, segments: ArrayLike, condition: OperatingCondition, *,
                   segment_p_pos: Mapping[str, float] | None = None,
                   models: Sequence[str] | None = None) -> SegmentPolicy:
    """Choose per segment and price the shared choice on each.

    Parameters
    ----------
    dataset : Dataset
        A wide-layout file (the same rows for every classifier).
    segments : array-like, shape (n,)
        Each row's segment (read as text).
    condition : OperatingCondition
        The whole file's conditions: the shared choice is made at them, and every segment keeps
        their costs.
    segment_p_pos : mapping of str to float, optional
        p(+) of a segment when it should not be its prevalence in the file.
    models : sequence of str, optional
        Only these classifiers (the ticked ones), as in :func:`costdash.analyze`.

    Returns
    -------
    SegmentPolicy

    Raises
    ------
    ParameterError
        Not the wide layout, a segment column of another length, an unknown segment in
        ``segment_p_pos``, or a segment without both classes (no ROC curve on it).
    """
    labels = np.asarray(segments).astype(str)
    _check(dataset, labels)
    given = dict(segment_p_pos or {})
    names, first = np.unique(labels, return_index=True)
    order = names[np.argsort(first)].tolist()
    unknown = sorted(set(given) - set(order))
    if unknown:
        raise ParameterError(f"no segment named {', '.join(unknown)}; the segments are "
                             f"{', '.join(order)}")
    shared = decide(analyze(dataset, condition, models=models))
    chosen: list[SegmentChoice] = []
    for name in order:
        part = _rows(dataset, labels == name)
        if part.n_pos == 0 or part.n_pos == part.n:
            raise ParameterError(f"segment '{name}' has {'no' if part.n_pos == 0 else 'only'} "
                                 "positive rows: it has no ROC curve to choose on")
        p_pos = given.get(name, part.prevalence)
        here = OperatingCondition(p_pos=p_pos, cost_fn=condition.cost_fn,
                                  cost_fp=condition.cost_fp, cost_tp=condition.cost_tp,
                                  cost_tn=condition.cost_tn)
        own = decide(analyze(part, here, models=models))
        scored = {c.name: c for c in part.scored}
        shared_cost = _cost_of_choice(scored.get(shared.classifier), shared.classifier,
                                      shared.threshold, here)
        chosen.append(SegmentChoice(
            segment=name, n=part.n, n_pos=part.n_pos, p_pos=float(p_pos),
            classifier=own.classifier, threshold=own.threshold,
            expected_cost=own.expected_cost, shared_expected_cost=shared_cost,
            regret_vs_shared=max(shared_cost - own.expected_cost, 0.0)))
    total = sum(c.n for c in chosen)
    saving = sum(c.n * c.regret_vs_shared for c in chosen) / total
    return SegmentPolicy(condition=condition, shared_classifier=shared.classifier,
                         shared_threshold=shared.threshold, segments=tuple(chosen),
                         saving_per_case=saving)


def segment_policy_to_dict(policy: SegmentPolicy) -> list[dict]:
    """``decision.segments`` of ``costdash decide --segment-column COL --json``: one object
    per segment with ``segment, n, p_pos, classifier, threshold, expected_cost,
    regret_vs_shared`` (the issue's contract) and ``shared_expected_cost``."""
    return [{"segment": s.segment, "n": s.n, "p_pos": s.p_pos, "classifier": s.classifier,
             "threshold": s.threshold, "expected_cost": s.expected_cost,
             "regret_vs_shared": s.regret_vs_shared,
             "shared_expected_cost": s.shared_expected_cost} for s in policy.segments]
