"""Confusion matrices from predicted labels, and the check that a cost matrix covers the data's
labels: the middle layer of :mod:`costdash.multiclass` (private; the public names are there).
Matrices have **rows = predicted, columns = actual**, as everywhere in that module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash.errors import InputFileError, ParameterError


def _label_codes(values: ArrayLike, labels: Sequence[object], name: str) -> NDArray[np.intp]:
    arr = np.asarray(values, dtype=object).ravel()
    index = {lab: i for i, lab in enumerate(labels)}
    if len(index) != len(labels):
        raise ParameterError("labels must be unique")
    codes = np.fromiter((index.get(v, -1) for v in arr), dtype=np.intp, count=arr.size)
    if np.any(codes < 0):
        unknown = sorted({str(v) for v in arr[codes < 0]})
        shown = ", ".join(repr(u) for u in unknown[:10])
        raise ParameterError(f"{name} has labels not in labels: {shown}"
                             + (f" (and {len(unknown) - 10} more)" if len(unknown) > 10 else ""))
    return codes


def confusion_from_labels(y_pred: ArrayLike, y_true: ArrayLike,
                          labels: Sequence[object]) -> NDArray[np.int64]:
    """Count matrix of one classifier, **rows = predicted, columns = actual**.

    Parameters
    ----------
    y_pred, y_true : array_like, shape (n,)
        Predicted and true labels (any hashable values, e.g. strings).
    labels : sequence
        The k class labels; row/column ``i`` is ``labels[i]``.

    Returns
    -------
    ndarray of int64, shape (k, k)

    Raises
    ------
    ParameterError
        If the lengths differ, labels repeat, or a value is not in ``labels``.
    """
    k = len(labels)
    pred = _label_codes(y_pred, labels, "y_pred")
    true = _label_codes(y_true, labels, "y_true")
    if pred.size != true.size:
        raise ParameterError(f"y_pred and y_true differ in length ({pred.size} vs {true.size})")
    return np.bincount(pred * k + true, minlength=k * k).reshape(k, k).astype(np.int64)


def confusion3d_from_labels(y_pred1: ArrayLike, y_pred2: ArrayLike, y_true: ArrayLike,
                            labels: Sequence[object]) -> NDArray[np.int64]:
    """Joint count array of two classifiers on the same examples, axes (pred 1, pred 2, actual).

    Parameters
    ----------
    y_pred1, y_pred2, y_true : array_like, shape (n,)
        The two classifiers' predictions and the truth, example by example.
    labels : sequence
        The k class labels.

    Returns
    -------
    ndarray of int64, shape (k, k, k)
    """
    k = len(labels)
    p1 = _label_codes(y_pred1, labels, "y_pred1")
    p2 = _label_codes(y_pred2, labels, "y_pred2")
    t = _label_codes(y_true, labels, "y_true")
    if not p1.size == p2.size == t.size:
        raise ParameterError(f"y_pred1, y_pred2 and y_true differ in length "
                             f"({p1.size}, {p2.size}, {t.size})")
    flat = (p1 * k + p2) * k + t
    return np.bincount(flat, minlength=k ** 3).reshape(k, k, k).astype(np.int64)


def match_labels(matrix_labels: Sequence[str], data_labels: Iterable[str], *,
                 matrix_source: str = "cost matrix", data_source: str = "data") -> list[str]:
    """Check that every label in the data has a row and column in the (cost) matrix.

    Parameters
    ----------
    matrix_labels : sequence of str
        Labels of the cost matrix, in its order.
    data_labels : iterable of str
        Labels seen in the data (true and predicted).
    matrix_source, data_source : str
        Names used in the error message.

    Returns
    -------
    list of str
        Matrix labels never seen in the data (allowed: a class can be absent from a test set).

    Raises
    ------
    InputFileError
        If the data holds labels the matrix lacks; the message lists the labels missing on
        either side, which usually reveals a spelling or type mismatch ("1" vs "1.0").
    """
    mset = list(dict.fromkeys(matrix_labels))
    dset = set(data_labels)
    extra = sorted(dset.difference(mset))
    unseen = [lab for lab in mset if lab not in dset]
    if extra:
        msg = (f"labels do not match: {data_source} has labels missing from {matrix_source}: "
               f"{_fmt_labels(extra)}")
        if unseen:
            msg += f"; {matrix_source} has labels missing from {data_source}: {_fmt_labels(unseen)}"
        raise InputFileError(msg, source=matrix_source)
    return unseen


def _fmt_labels(labels: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(repr(x) for x in labels[:limit])
    return shown + (f" (and {len(labels) - limit} more)" if len(labels) > limit else "")
