"""Plain wide CSV files read without pandas (private; :func:`costdash.io.load_predictions`).

Most predictions files are the simplest case of the wide layout: a header, a 0/1 (or -1/1)
label column of whole numbers and a numeric column per classifier, nothing missing. For those,
:func:`read_plain_wide` gives the very :class:`~costdash.dataset.Dataset` the general reader
gives (the same separator, decimal mark and header from :func:`~costdash.io.reading._csv_dialect`;
the same pyarrow parse with the options pandas' ``engine="pyarrow"`` passes, so the same float64
values; the same column roles, label and positive class by the same functions of
:mod:`costdash.io.layouts`), without importing pandas (a quarter of a second) nor converting the
table into a DataFrame. Anything else, every file with something to refuse or to explain
included, returns None and goes the general way, whose messages name the file, column and
rows (issue 23: ``costdash analyze FILE --json``).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from costdash.dataset import Dataset, ScoredClassifier
from costdash.errors import CostdashError
from costdash.io.layouts import (
    FOLD_COLUMNS,
    ID_COLUMNS,
    LABEL_COLUMNS,
    _detect_layout,
    _find_column,
    _positive_index,
    _select,
    _target_class_hint,
)
from costdash.io.reading import _as_utf8, _check_line_count, _csv_dialect

NA_VALUES = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
             "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
"""pandas' default missing-value strings, which its pyarrow engine passes as ``null_values``
(tests/test_io_plain_csv.py compares them with pandas')."""


def _parse(data: bytes, sep: str, decimal: str) -> pa.Table:
    """``pandas.read_csv(data, sep=sep, decimal=decimal, engine="pyarrow")``'s own parse."""
    import pyarrow.csv as pa_csv

    return pa_csv.read_csv(
        io.BytesIO(data),
        read_options=pa_csv.ReadOptions(autogenerate_column_names=False, skip_rows=0,
                                        skip_rows_after_names=0, encoding="utf-8"),
        parse_options=pa_csv.ParseOptions(delimiter=sep, quote_char='"',
                                          ignore_empty_lines=True),
        convert_options=pa_csv.ConvertOptions(null_values=list(NA_VALUES),
                                              strings_can_be_null=True, decimal_point=decimal))


def _values(column: pa.ChunkedArray) -> np.ndarray | None:
    """A column of int64 or float64 with nothing missing as a new numpy array of that type;
    None for anything else.

    Read from the chunks' value buffers: pyarrow's own ``to_numpy`` imports pandas.
    """
    if column.null_count or not (pa.types.is_int64(column.type)
                                 or pa.types.is_float64(column.type)):
        return None
    dtype = np.dtype(np.int64 if pa.types.is_int64(column.type) else np.float64)
    out = np.empty(len(column), dtype=dtype)
    at = 0
    for chunk in column.chunks:
        n = len(chunk)
        out[at:at + n] = np.frombuffer(chunk.buffers()[1], dtype=dtype, count=n,
                                       offset=chunk.offset * dtype.itemsize)
        at += n
    return out


def _numbers(column: pa.ChunkedArray) -> np.ndarray | None:
    """:func:`_values` as float64 (what pandas' ``to_numpy(dtype=float64)`` gives)."""
    values = _values(column)
    return None if values is None else values.astype(np.float64, copy=False)


def read_plain_wide(data: bytes, source: str, *, label_column: str | None = None,
                    models: Sequence[str] | None = None,
                    max_rows: int | None = None) -> Dataset | None:
    """The data set of a plain wide CSV/TSV file's bytes, or None to read it the general way.

    Plain: text whose header names distinct non-blank columns, as many as every row has; the
    label column (found as the general reader finds it) of whole numbers, exactly two of them
    and a pair whose positive class goes without saying; no fold column; every other column
    numbers (an id column excepted), each classifier's finite and none missing. A header
    the general reader refuses is refused here with the same message (the same function).

    With ``max_rows`` (a server's limit), a file with more rows is refused as the general reader
    refuses it: first from its line count, before the header is read (the same function, in
    the same order), and a file the count cannot settle is left to the general reader when it
    parses to more rows.
    """
    data = _as_utf8(data)
    if max_rows is not None:
        _check_line_count(data, source, "text", max_rows)
    sep, decimal, header = _csv_dialect(data, source)
    try:
        table = _parse(data, sep, decimal)
    except (pa.ArrowException, ValueError, OSError):
        return None
    names = [str(h).strip() for h in header]
    if (table.num_rows == 0 or (max_rows is not None and table.num_rows > max_rows) or len(names) != table.num_columns or not all(names)
            or len(set(names)) != len(names) or any("\x00" in n for n in names)
            or _detect_layout(names, None, None) != "wide"):
        return None
    columns = dict(zip(names, table.columns))
    try:
        label = _find_column(names, label_column, LABEL_COLUMNS, "label", source)
        if _find_column(names, None, FOLD_COLUMNS, "fold", source, required=False):
            return None
        candidates = [c for c in names if c != label]
        scoreish = []
        for c in candidates:
            if c.lower() in ID_COLUMNS:
                continue
            if not (pa.types.is_integer(columns[c].type)
                    or pa.types.is_floating(columns[c].type)):
                return None  # text, perhaps mostly numbers: the general reader's question
            scoreish.append(c)
        score_cols = scoreish if models is None else _select(models, scoreish, source,
                                                             candidates)
        if not score_cols:
            return None
        if not pa.types.is_int64(columns[label].type):
            return None
        raw = _values(columns[label])
        if raw is None:
            return None
        values = np.unique(raw)
        if values.size != 2:
            return None
        labels = [str(int(v)) for v in values]  # as pandas.factorize then _key name them
        pos = _positive_index(labels, None, label, source,
                              _target_class_hint(names, labels))
        scores = {}
        for c in score_cols:
            numbers = _numbers(columns[c])
            if numbers is None or not np.isfinite(numbers).all():
                return None
            scores[c] = numbers
    except CostdashError:
        return None  # the general reader says what is wrong, in its words
    y_true = raw == values[pos]
    return Dataset(source=source, layout="wide", positive_label=labels[pos],
                   scored=tuple(ScoredClassifier(c, y_true, scores[c], None)
                                for c in score_cols),
                   fold_labels=(), segments=None)
