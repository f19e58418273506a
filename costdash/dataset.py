"""The in-memory form of an uploaded predictions file, shared by the loader and every analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Layout = Literal["wide", "long", "counts"]


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
    """

    name: str
    y_true: NDArray[np.bool_]
    score: NDArray[np.float64]
    fold: NDArray[np.int64] | None = None


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
class Dataset:
    """A loaded predictions file: scored classifiers, or counted ones for the counts layout.

    In the wide layout every classifier shares one ``y_true`` array (the same rows), which is what
    paired comparisons rely on; in the long layout each classifier has its own rows, in file order.
    """

    source: str
    layout: Layout
    positive_label: str
    scored: tuple[ScoredClassifier, ...] = ()
    counted: tuple[CountedClassifier, ...] = ()
    fold_labels: tuple[str, ...] = field(default=())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.scored) + tuple(c.name for c in self.counted)

    @property
    def n_pos(self) -> int:
        if self.scored:
            return int(np.count_nonzero(self.scored[0].y_true))
        return self.counted[0].n_pos

    @property
    def n_neg(self) -> int:
        if self.scored:
            return int(self.scored[0].y_true.size) - self.n_pos
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
