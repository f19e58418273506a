"""The in-memory form of an uploaded predictions file, shared by the loader and every analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Layout = Literal["wide", "long", "counts", "score_counts"]


@dataclass(frozen=True, eq=False)
class ScoredClassifier:
    """One classifier's scores on a labelled test set.

    Attributes
    ----------
    name : str
        The classifier's name (a column name in the wide layout, a ``model`` value in the long one).
    y_true : ndarray of bool, shape (n,)
        True for an example of the positive class.
    score : ndarray of float64, shape (n,)
        Higher means more positive; any real numbers, all finite.
    fold : ndarray of int64, shape (n,), or None
        Index into :attr:`Dataset.fold_labels` of each example's fold or run; None without folds.
    count : ndarray of int64, shape (n,), or None
        How many examples each entry stands for (the score-count layout: one entry per distinct
        (score, label, fold) cell, every count positive); None when each entry is one example.
        Every computation on a classifier with counts gives exactly what it gives on the rows
        the counts summarise, while memory grows with the distinct scores, not the examples.
    """

    name: str
    y_true: NDArray[np.bool_]
    score: NDArray[np.float64]
    fold: NDArray[np.int64] | None = None
    count: NDArray[np.int64] | None = None

    @property
    def n_examples(self) -> int:
        """Number of examples (the sum of the counts, or the number of entries)."""
        return int(self.y_true.size) if self.count is None else int(self.count.sum())

    @property
    def n_pos(self) -> int:
        """Number of positive examples."""
        if self.count is None:
            return int(np.count_nonzero(self.y_true))
        return int(self.count[self.y_true].sum())

    def class_counts(self, mask: NDArray[np.bool_] | None = None
                     ) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
        """Scores with the number of positive and of negative examples at each entry.

        Parameters
        ----------
        mask : ndarray of bool, shape (n,), optional
            Only these entries (a fold, say).

        Returns
        -------
        score, n_pos, n_neg : ndarray
            One value per entry; without counts an entry is one example of its class.
        """
        y, score = self.y_true, self.score
        weight = np.ones(y.size, np.int64) if self.count is None else self.count
        if mask is not None:
            y, score, weight = y[mask], score[mask], weight[mask]
        return score, np.where(y, weight, 0), np.where(y, 0, weight)


@dataclass(frozen=True, eq=False)
class CountedClassifier:
    """A classifier known only by confusion matrices: each entry is one ROC point.

    Attributes
    ----------
    name : str
    tp, fp, fn, tn : ndarray of int64, shape (m,)
        Counts of one confusion matrix per entry (all entries have the same class totals).
    threshold : ndarray of float64, shape (m,), or None
        The threshold that produced each matrix, when the file gives one (NaN where missing).
    """

    name: str
    tp: NDArray[np.int64]
    fp: NDArray[np.int64]
    fn: NDArray[np.int64]
    tn: NDArray[np.int64]
    threshold: NDArray[np.float64] | None = None

    @property
    def n_pos(self) -> int:
        return int(self.tp[0] + self.fn[0])

    @property
    def n_neg(self) -> int:
        return int(self.fp[0] + self.tn[0])


@dataclass(frozen=True, eq=False)
class Segments:
    """Each row's segment (region, product, site): a column read with the predictions.

    Attributes
    ----------
    column : str
        The column of the file they were read from.
    codes : ndarray of int64, shape (n,)
        Index into :attr:`labels` of each row's segment, row for row with the classifiers'
        ``y_true`` (rows dropped by the loader are dropped here too).
    labels : tuple of str
        The segments, in order of first appearance among the rows kept.
    """

    column: str
    codes: NDArray[np.int64]
    labels: tuple[str, ...]

    @property
    def values(self) -> NDArray[np.object_]:
        """Each row's segment as text (what :func:`costdash.segments.segment_policy` takes)."""
        return np.asarray(self.labels, dtype=object)[self.codes]


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded predictions file: scored classifiers, or counted ones for the counts layout.

    In the wide layout every classifier shares one ``y_true`` array (the same rows), which is what
    paired comparisons rely on; in the long layout each classifier has its own rows, in file order.
    In the score-count layout every scored classifier has ``count`` (and no other layout has):
    the invariant is checked here, so that a copy that lost the counts cannot pass for the rows.
    ``segments``, when a segment column was read (the wide layout only, where every classifier
    has the same rows), gives each row's segment; copies that select rows leave it out.
    """

    source: str
    layout: Layout
    positive_label: str
    scored: tuple[ScoredClassifier, ...] = ()
    counted: tuple[CountedClassifier, ...] = ()
    fold_labels: tuple[str, ...] = field(default=())
    segments: Segments | None = None

    def __post_init__(self) -> None:
        if self.segments is not None:
            # Rows are matched by position, which only the wide layout's shared rows allow.
            if self.layout != "wide" or not self.scored:
                raise ValueError(f"{self.source}: segments need the wide layout with scored "
                                 f"classifiers, not {self.layout}")
            n = self.scored[0].y_true.size
            if self.segments.codes.shape != (n,):
                raise ValueError(f"{self.source}: {self.segments.codes.size} segments for {n} "
                                 "rows")
        counted_scores = [c.count is not None for c in self.scored]
        if any(counted_scores) and self.layout != "score_counts":
            raise ValueError(f"{self.source}: classifiers with counts need the score_counts "
                             f"layout, not {self.layout}")
        if self.layout == "score_counts" and not all(counted_scores):
            raise ValueError(f"{self.source}: the score_counts layout needs counts on every "
                             "scored classifier; were they lost in a copy?")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.scored) + tuple(c.name for c in self.counted)

    @property
    def n_pos(self) -> int:
        if self.scored:
            return self.scored[0].n_pos
        return self.counted[0].n_pos

    @property
    def n_neg(self) -> int:
        if self.scored:
            return self.scored[0].n_examples - self.n_pos
        return self.counted[0].n_neg

    @property
    def n(self) -> int:
        return self.n_pos + self.n_neg

    @property
    def n_folds(self) -> int:
        return len(self.fold_labels)

    @property
    def prevalence(self) -> float:
        return self.n_pos / self.n

    def classifier(self, name: str) -> ScoredClassifier | CountedClassifier:
        for c in (*self.scored, *self.counted):
            if c.name == name:
                return c
        raise KeyError(name)
