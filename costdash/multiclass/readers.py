"""Readers of the files :mod:`costdash.multiclass` works from: labelled cost and confusion
matrices, and predicted class labels (wide or long). Private; the public names are there.

Every reader takes a path or a binary file object (an upload) and a ``name`` for its messages.
The bytes are read by the helpers of :func:`costdash.io.load_predictions`
(:mod:`costdash.io.reading`), as predictions files are: the same size limit handling, gzip, UTF-16
and Windows-1252 text, the same refusal of empty and binary files, and the same separator sniffing
(:func:`~costdash.io.reading.sniff_separator`), among comma, tab and semicolon. Cells are kept as
text (``"1"`` and ``"1.0"`` are different labels).
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Literal, Union

import numpy as np
from numpy.typing import NDArray

from costdash.io.reading import _as_utf8, _read_source, _sniff_format, sniff_separator
from costdash.multiclass.confusion import _fmt_labels
from costdash._wording import counted
from costdash.errors import InputFileError, ParameterError

Source = Union[str, os.PathLike, IO[bytes]]
"""A file to read: its path, or its bytes already opened."""

MAX_BYTES = 256 * 1024**2
"""The largest file (unpacked) a reader takes."""


def _read_csv(path: Source, name: str | None) -> tuple[str, list[str], list[list[str]]]:
    """The name for messages, the header and the data rows of a CSV file, cells stripped,
    blank lines skipped."""
    if not hasattr(path, "read"):
        fspath = os.fsdecode(os.fspath(path))
        name = name or fspath
        if not os.path.exists(fspath):
            raise InputFileError(f"{name}: file not found", source=name)
    source, data = _read_source(path, name, MAX_BYTES)
    if _sniff_format(data, source) != "text":
        raise InputFileError(f"{source}: is not a CSV file (comma, tab or semicolon separated "
                             "text)", source=source)
    data = _as_utf8(data)
    delimiter, _ = sniff_separator(data, ",\t;")
    text = data.decode("utf-8")
    try:
        rows = [[cell.strip() for cell in row]
                for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)]
    except csv.Error as exc:
        raise InputFileError(f"{source}: cannot read as a CSV file ({exc})",
                             source=source) from None
    rows = [r for r in rows if any(cell for cell in r)]
    if not rows:
        raise InputFileError(f"{source}: the file is empty", source=source)
    return source, rows[0], rows[1:]


def _read_labelled_matrix(path: Source, name: str | None, what: str
                          ) -> tuple[str, list[str], list[str], list[list[str]]]:
    """Row labels, column labels and raw cells of a square labelled CSV matrix."""
    source, header, rows = _read_csv(path, name)
    col_labels = header[1:]
    if len(col_labels) < 2:
        raise InputFileError(f"{source}: a {what} needs a header row with a corner cell and at "
                             f"least 2 class labels; got {header!r}", source=source)
    dup = sorted({x for x in col_labels if col_labels.count(x) > 1})
    if dup or "" in col_labels:
        bad = "an empty label" if "" in col_labels else f"repeated labels {_fmt_labels(dup)}"
        raise InputFileError(f"{source}: the header row has {bad}", source=source)
    row_labels: list[str] = []
    cells: list[list[str]] = []
    for r, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise InputFileError(f"{source}, row {r}: expected {counted(len(header), 'cell')} (a "
                                 f"label and {counted(len(col_labels), 'value')}), got "
                                 f"{len(row)}",
                                 source=source, rows=(r,))
        if row[0] == "":
            raise InputFileError(f"{source}, row {r}: the first cell (the row's class label) is "
                                 "empty", source=source, rows=(r,))
        if row[0] in row_labels:
            raise InputFileError(f"{source}, row {r}: label {row[0]!r} repeats an earlier row",
                                 source=source, rows=(r,))
        row_labels.append(row[0])
        cells.append(row[1:])
    if set(row_labels) != set(col_labels):
        only_rows = [x for x in row_labels if x not in col_labels]
        only_cols = [x for x in col_labels if x not in row_labels]
        parts = []
        if only_rows:
            parts.append(f"only as rows: {_fmt_labels(only_rows)}")
        if only_cols:
            parts.append(f"only as columns: {_fmt_labels(only_cols)}")
        raise InputFileError(f"{source}: a {what} must be square with the same labels on rows and "
                             f"columns; {'; '.join(parts)}", source=source)
    return source, row_labels, col_labels, cells


def _parse_matrix(source: str, row_labels: list[str], col_labels: list[str],
                  cells: list[list[str]], *, integer: bool, allow_negative: bool,
                  hint: str) -> NDArray[np.float64]:
    k = len(row_labels)
    col_pos = {lab: j for j, lab in enumerate(col_labels)}
    out = np.empty((k, k), dtype=np.float64)
    for r, (rlab, row) in enumerate(zip(row_labels, cells, strict=True), start=1):
        for clab, text in zip(col_labels, row, strict=True):
            where = f"{source}, row {r} ({rlab!r}), column {clab!r}"
            try:
                value = float(text)
            except ValueError:
                raise InputFileError(f"{where}: {text!r} is not a number", source=source,
                                     column=clab, rows=(r,)) from None
            if not math.isfinite(value):
                raise InputFileError(f"{where}: {text!r} is not a finite number", source=source,
                                     column=clab, rows=(r,))
            if integer and value != round(value):
                raise InputFileError(f"{where}: {text!r} is not a whole count", source=source,
                                     column=clab, rows=(r,))
            if value < 0 and not allow_negative:
                raise InputFileError(f"{where}: {text!r} is negative{hint}", source=source,
                                     column=clab, rows=(r,))
            out[r - 1, col_pos[clab]] = value
    # Reorder the columns to the row order so the matrix is indexed by one label list.
    order = [col_pos[lab] for lab in row_labels]
    return out[:, order]


def load_cost_matrix(path: Source, *, transpose: bool = False, allow_negative: bool = False,
                     name: str | None = None) -> tuple[list[str], NDArray[np.float64]]:
    """Read a labelled cost matrix from a CSV file.

    The file has a header row (a corner cell, then the class labels) and one row per class (its
    label first, then the costs). By default **rows = predicted class, columns = actual class**:
    the cell in row ``i``, column ``j`` is the cost of predicting ``i`` when the truth is ``j``.
    Columns may come in any order; they are reordered to the rows' order. Comma, tab or
    semicolon separated.

    Parameters
    ----------
    path : str, path-like or binary file object
        The file, or its bytes already opened (an upload); ``.gz`` is unpacked.
    transpose : bool, default False
        The file has rows = actual class and columns = predicted class (the layout of
        scikit-learn's ``confusion_matrix``); it is transposed on reading.
    allow_negative : bool, default False
        Accept negative costs.
    name : str, optional
        What messages call the file (default: the path as given, or the file object's name).

    Returns
    -------
    labels : list of str
        Class labels in the file's row order.
    costs : ndarray of float64, shape (k, k)
        ``costs[i, j]`` = cost of predicting ``labels[i]`` when the truth is ``labels[j]``.

    Raises
    ------
    InputFileError
        Unreadable file, not square, repeated/mismatched labels, or a non-numeric, non-finite or
        negative cell (the message names the file, the row and the column).
    """
    source, rlabs, clabs, cells = _read_labelled_matrix(path, name, "cost matrix")
    hint = " (pass --allow-negative / allow_negative=True to accept benefits)"
    c = _parse_matrix(source, rlabs, clabs, cells, integer=False, allow_negative=allow_negative,
                      hint=hint)
    return rlabs, (c.T.copy() if transpose else c)


def load_confusion_matrix(path: Source, *, transpose: bool = False, name: str | None = None
                          ) -> tuple[list[str], NDArray[np.int64]]:
    """Read a labelled k x k confusion (count) matrix from a CSV file.

    Same layout as :func:`load_cost_matrix`: by default **rows = predicted, columns = actual**;
    ``transpose=True`` for rows = actual, columns = predicted.

    Parameters
    ----------
    path : str, path-like or binary file object
    transpose : bool, default False
    name : str, optional
        As for :func:`load_cost_matrix`.

    Returns
    -------
    labels : list of str
    counts : ndarray of int64, shape (k, k)

    Raises
    ------
    InputFileError
        As for :func:`load_cost_matrix`, and for counts that are not non-negative whole numbers
        or that sum to zero.
    """
    source, rlabs, clabs, cells = _read_labelled_matrix(path, name, "confusion matrix")
    m = _parse_matrix(source, rlabs, clabs, cells, integer=True, allow_negative=False, hint="")
    counts = m.astype(np.int64)
    if counts.sum() == 0:
        raise InputFileError(f"{source}: the confusion matrix has no examples (all counts are 0)",
                             source=source)
    return rlabs, (counts.T.copy() if transpose else counts)


@dataclass(frozen=True, eq=False)
class LabeledClassifier:
    """One classifier's label predictions on a labelled test set.

    Attributes
    ----------
    name : str
    y_true : ndarray of str (object), shape (n,)
    y_pred : ndarray of str (object), shape (n,)
    """

    name: str
    y_true: NDArray[np.object_]
    y_pred: NDArray[np.object_]

    @property
    def labels(self) -> set[str]:
        """Every label appearing as truth or prediction."""
        return set(self.y_true.tolist()) | set(self.y_pred.tolist())


@dataclass(frozen=True, eq=False)
class LabelPredictions:
    """A loaded file of predicted class labels (see :func:`load_label_predictions`).

    Attributes
    ----------
    source : str
        The file's name in messages: its path as given, or the loader's ``name``.
    layout : {"wide", "long"}
    classifiers : tuple of LabeledClassifier
    """

    source: str
    layout: Literal["wide", "long"]
    classifiers: tuple[LabeledClassifier, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.classifiers)

    def classifier(self, name: str) -> LabeledClassifier:
        """The classifier called ``name``; InputFileError listing the names if absent."""
        for c in self.classifiers:
            if c.name == name:
                return c
        raise InputFileError(f"{self.source}: no classifier named {name!r}; the file has "
                             f"{_fmt_labels(list(self.names))}", source=self.source)

    def pair(self, a: str, b: str) -> tuple[NDArray[np.object_], NDArray[np.object_],
                                            NDArray[np.object_]]:
        """``(y_pred_a, y_pred_b, y_true)`` for two classifiers scored on the same examples.

        In the long layout the rows of the two models are paired in file order; they must have
        the same number of rows and the same true label row by row.
        """
        ca, cb = self.classifier(a), self.classifier(b)
        if ca.y_true.shape != cb.y_true.shape:
            raise InputFileError(f"{self.source}: {a!r} has {counted(ca.y_true.size, 'row')} and "
                                 f"{b!r} has "
                                 f"{cb.y_true.size}; a paired comparison needs the same examples",
                                 source=self.source)
        differ = np.flatnonzero(ca.y_true != cb.y_true)
        if differ.size:
            raise InputFileError(f"{self.source}: {a!r} and {b!r} disagree on the true label of "
                                 f"their example {int(differ[0]) + 1} (rows are paired in file "
                                 "order); a paired comparison needs the same examples",
                                 source=self.source, rows=tuple(int(i) + 1 for i in differ[:5]))
        return ca.y_pred, cb.y_pred, ca.y_true


def load_label_predictions(path: Source, *,
                           layout: Literal["auto", "wide", "long"] = "auto",
                           true_column: str = "y_true", model_column: str = "model",
                           pred_column: str = "y_pred",
                           models: Sequence[str] | None = None,
                           name: str | None = None) -> LabelPredictions:
    """Read predicted class labels of one or more classifiers from a CSV file.

    Two layouts (labels are read as text, so ``cat``/``dog`` and ``0``/``1`` both work):

    * wide - a true-label column and one predicted-label column per classifier, all on the same
      rows: ``y_true,clf_a,clf_b``;
    * long - one row per (classifier, example): ``model,y_true,y_pred``.

    Parameters
    ----------
    path : str, path-like or binary file object
    layout : {"auto", "wide", "long"}, default "auto"
        "auto" picks long when the header has ``model_column`` and ``pred_column``.
    true_column, model_column, pred_column : str
        Column names.
    models : sequence of str, optional
        Only these classifiers are read and checked (others are ignored); error if one is absent.
    name : str, optional
        As for :func:`load_cost_matrix`.

    Returns
    -------
    LabelPredictions

    Raises
    ------
    InputFileError
        Missing columns, ragged rows, empty label cells (the message names the column and the
        first rows), unknown model names.
    """
    source, header, rows = _read_csv(path, name)
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise InputFileError(f"{source}: repeated column names {_fmt_labels(dup)}", source=source)
    if layout == "auto":
        layout = "long" if (model_column in header and pred_column in header) else "wide"
    if layout not in ("wide", "long"):
        raise ParameterError(f"layout must be 'auto', 'wide' or 'long'; got {layout!r}")
    need = [true_column] + ([model_column, pred_column] if layout == "long" else [])
    missing = [c for c in need if c not in header]
    if missing:
        raise InputFileError(f"{source}: missing column(s) {_fmt_labels(missing)} for the {layout} "
                             f"layout; the header has {_fmt_labels(header)}", source=source)
    for r, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise InputFileError(f"{source}, row {r}: {counted(len(row), 'cell')} where the "
                                 f"header has "
                                 f"{len(header)}", source=source, rows=(r,))
    if not rows:
        raise InputFileError(f"{source}: no data rows", source=source)
    table = np.array(rows, dtype=object).reshape(len(rows), len(header))
    col = {name: table[:, i] for i, name in enumerate(header)}

    def check_filled(name: str, values: NDArray[np.object_], offset: NDArray[np.intp] | None
                     ) -> None:
        empty = np.flatnonzero(values == "")
        if empty.size:
            where = (offset[empty] if offset is not None else empty) + 1
            shown = ", ".join(str(int(x)) for x in where[:5])
            raise InputFileError(f"{source}, column {name!r}: empty label in row(s) {shown}"
                                 + (f" and {empty.size - 5} more" if empty.size > 5 else ""),
                                 source=source, column=name,
                                 rows=tuple(int(x) for x in where[:5]))

    classifiers: list[LabeledClassifier] = []
    if layout == "wide":
        names = [h for h in header if h != true_column]
        if not names:
            raise InputFileError(f"{source}: no predicted-label column besides {true_column!r}",
                                 source=source)
        wanted = list(models) if models is not None else names
        absent = [m for m in wanted if m not in names]
        if absent:
            raise InputFileError(f"{source}: no classifier column {_fmt_labels(absent)}; the file "
                                 f"has {_fmt_labels(names)}", source=source)
        y_true = col[true_column]
        check_filled(true_column, y_true, None)
        for name in wanted:
            check_filled(name, col[name], None)
            classifiers.append(LabeledClassifier(name, y_true, col[name]))
    else:
        model = col[model_column]
        check_filled(model_column, model, None)
        names = list(dict.fromkeys(model.tolist()))
        wanted = list(models) if models is not None else names
        absent = [m for m in wanted if m not in names]
        if absent:
            raise InputFileError(f"{source}: no model {_fmt_labels(absent)} in column "
                                 f"{model_column!r}; the file has {_fmt_labels(names)}",
                                 source=source, column=model_column)
        for name in wanted:
            idx = np.flatnonzero(model == name)
            yt, yp = col[true_column][idx], col[pred_column][idx]
            check_filled(true_column, yt, idx)
            check_filled(pred_column, yp, idx)
            classifiers.append(LabeledClassifier(name, yt, yp))
    return LabelPredictions(source=source, layout=layout, classifiers=tuple(classifiers))

