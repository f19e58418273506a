"""Load a predictions file (CSV/TSV, gzip, Parquet, JSON lines) into a :class:`Dataset`.

Three layouts are understood, detected from the column names unless the caller says which:

* **wide** -- one label column and one numeric score column per classifier;
* **long** -- ``model``, label and ``score`` columns, one row per (classifier, example);
* **counts** -- ``model, tp, fp, fn, tn`` (optional ``threshold``), one confusion matrix per row;
* **score_counts** -- ``model, score, n_pos, n_neg`` (optional ``fold``): how many positive and
  negative examples each classifier gave each distinct score (in each fold), which is all that
  ROC curves, hulls, envelopes, folds and bootstrap bands depend on. ``costdash aggregate`` writes
  it from row-level files of any size; loading it gives the same results as loading those rows,
  in memory that grows with the distinct scores. Counts are whole numbers, 0 or more, not both 0
  in one row; rows repeating a (model, score, fold) add up.

Everything a user can get wrong in the file raises :class:`InputFileError` with a message meant
to be shown as it is: it names the file, the column and the first offending data rows (1-based,
header not counted). Bad options raise :class:`ParameterError`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:  # pandas is imported when a file needs it: plain wide CSV does not (issue 23)
    import pandas as pd

from costdash.io.layouts import (
    COUNT_COLUMNS,
    FOLD_COLUMNS,
    LABEL_COLUMNS,
    MODEL_COLUMNS,
    SCORE_COLUMNS,
    SCORE_COUNT_COLUMNS,
    THRESHOLD_COLUMNS,
    _detect_layout,
    _load_counts,
    _load_score_counts,
    _load_scored,
)
from costdash.io.layouts import (
    ID_COLUMNS as ID_COLUMNS,
)
from costdash.io.messages import _q, _quoted, _too_many_rows
from costdash.io.reading import _read_source, _read_table, _sniff_format
from costdash._wording import counted
from costdash.dataset import Dataset
from costdash.errors import InputFileError, ParameterError

__all__ = ["load_predictions", "LABEL_COLUMNS", "MODEL_COLUMNS", "SCORE_COLUMNS", "FOLD_COLUMNS",
           "THRESHOLD_COLUMNS", "COUNT_COLUMNS", "SCORE_COUNT_COLUMNS"]

_LAYOUTS = ("auto", "wide", "long", "counts", "score_counts")


def load_predictions(path: str | os.PathLike[str] | IO[bytes], *, name: str | None = None,
                     layout: Literal["auto", "wide", "long", "counts", "score_counts"] = "auto",
                     label_column: str | None = None, model_column: str | None = None,
                     score_column: str | None = None, fold_column: str | None = None,
                     positive: str | None = None, models: Sequence[str] | None = None,
                     drop_missing: bool = False, max_bytes: int = 200 * 1024**2,
                     max_rows: int | None = None, max_classifiers: int | None = None,
                     target_class: str | None = None,
                     segment_column: str | None = None) -> Dataset:
    """Read a predictions file and check it thoroughly.

    Parameters
    ----------
    path : str, os.PathLike or binary file-like
        The file, or its bytes already opened (an upload); the format is detected from the
        content (gzip, Parquet and JSON magic) and the extension of ``name``.
    name : str, optional
        File name used in messages and for format detection; defaults to the path's basename.
    layout : {"auto", "wide", "long", "counts", "score_counts"}
        "auto" picks counts when there are ``tp, fp, fn, tn`` columns, score_counts when there
        are ``n_pos, n_neg`` columns, long when there are model and score columns (or
        ``model_column``/``score_column`` is given), else wide.
    label_column, model_column, score_column, fold_column : str, optional
        Column names, matched case-insensitively, overriding the default names tried.
    positive : str, optional
        The positive label, compared with the labels as text (so "1" matches an integer 1).
        Needed unless the labels are an obvious pair such as 0/1, true/false, no/yes.
    models : sequence of str, optional
        Keep only these classifiers (score columns in the wide layout, model names otherwise),
        in this order; None or empty keeps them all, in file order.
    drop_missing : bool
        Drop rows with a missing or infinite value in any column used instead of failing.
    max_bytes : int
        Largest file (and largest decompressed content) accepted.
    max_rows, max_classifiers : int, optional
        Largest number of data rows, and of classifiers, accepted (None: no limit). A server
        sets them so that one upload cannot take all of its memory or time.
    target_class : str, optional
        One-vs-rest on a multiclass file: a label column with k >= 3 classes and, per
        classifier, one score column per class named ``<classifier>:<class>`` (what
        ``predict_proba`` gives, joined). The file is read exactly as the binary wide file with
        labels ``label == target_class`` (positive label "1", the rest "0") and, per
        classifier, the column ``<classifier>:<target_class>`` under the classifier's name
        (:func:`costdash.one_vs_rest.one_vs_rest_frame`). Wide layout only; ``positive``, if
        given, must be "1".
    segment_column : str, optional
        A column of segments (region, product, site): left out of the classifiers and kept row
        for row, through ``drop_missing``, in :attr:`Dataset.segments` (a missing segment is a
        missing value like any other). Wide layout only.

    Returns
    -------
    Dataset
        With ``segments`` when ``segment_column`` is given. Counts files give ``counted``
        classifiers (``positive_label`` is ``positive`` or "1");
        the others give ``scored`` ones, all sharing one ``y_true`` array in the wide layout.
        Score-count files give ``scored`` classifiers whose entries are the (score, label,
        fold) cells with their ``count`` (``positive_label`` is ``positive`` or "1").

    Raises
    ------
    InputFileError
        The file is missing, too big, unreadable or its content cannot be used.
    ParameterError
        An option is invalid or names a column, label or model the file does not have.
    """
    if layout not in _LAYOUTS:
        raise ParameterError(f"unknown layout {_q(layout)}; choose one of {', '.join(_LAYOUTS)}")
    if isinstance(models, str):
        models = [models]
    models = models or None  # asking for no classifiers at all can only mean "no filter"
    source, data = _read_source(path, name, max_bytes)
    fmt = _sniff_format(data, source)
    if (fmt == "text" and layout in ("auto", "wide") and positive is None
            and target_class is None and segment_column is None and model_column is None
            and score_column is None and fold_column is None):
        # The simplest wide files, read as the rest are but without pandas (issue 23; with a
        # server's row limit too: uploads); None for anything else, read below.
        from costdash.io.plain_csv import read_plain_wide

        dataset = read_plain_wide(data, source, label_column=label_column, models=models,
                                  max_rows=max_rows)
        if dataset is not None:
            _check_classifier_count(dataset, source, max_classifiers)
            return dataset
    df = _read_table(data, source, fmt, max_rows)
    if positive is not None and "\x00" in str(positive):
        # A counts file's positive label is this option as given, and no stored text may hold NUL.
        raise ParameterError(f"{source}: --positive {_q(positive)} has a NUL character, which a "
                             "label cannot contain")
    names = list(df.columns)
    if len(df) == 0:
        raise InputFileError(f"{source}: has a header ({_quoted(names)}) but no data rows",
                             source=source)
    if target_class is not None:
        if layout == "auto" and _detect_layout(names, model_column, score_column) != "wide":
            layout = _detect_layout(names, model_column, score_column)  # refused just below
        df, layout, positive = _one_vs_rest(df, source, layout, target_class, label_column,
                                            positive)
    if layout == "auto":
        layout = _detect_layout(names, model_column, score_column)
    if segment_column is not None and layout != "wide":
        raise ParameterError(f"{source}: a segment column needs the wide layout (one row per "
                             f"case, a score column per classifier); this file has the {layout} "
                             "layout")
    given = {"model_column": model_column, "score_column": score_column,
             "label_column": label_column, "fold_column": fold_column}
    for option in {"wide": given.keys() - {"label_column", "fold_column"}, "long": (),
                   "counts": given.keys() - {"model_column"},
                   "score_counts": {"label_column"}}[layout]:
        if given[option] is not None:  # silently ignoring it would hide a mistake
            raise ParameterError(f"{source}: {option} does not apply to the {layout} layout")
    if max_rows is not None and len(df) > max_rows:
        raise _too_many_rows(source, f"{len(df):,}", max_rows)
    rows = np.arange(1, len(df) + 1)  # original data row numbers, kept through row filtering
    if layout == "counts":
        dataset = _load_counts(df, rows, source, model_column, positive, models, drop_missing)
    elif layout == "score_counts":
        dataset = _load_score_counts(df, rows, source, model_column, score_column, fold_column,
                                     positive, models, drop_missing)
    else:
        dataset = _load_scored(df, rows, source, layout, label_column, model_column,
                               score_column, fold_column, positive, models, drop_missing,
                               segment_column)
    _check_classifier_count(dataset, source, max_classifiers)
    return dataset


def _check_classifier_count(dataset: Dataset, source: str, max_classifiers: int | None) -> None:
    if max_classifiers is not None and len(dataset.names) > max_classifiers:
        raise InputFileError(f"{source}: has {counted(len(dataset.names), 'classifier')}, more "
                             f"than the "
                             f"limit of {max_classifiers:,}; choose some with the models "
                             "option", source=source)


def _one_vs_rest(df: pd.DataFrame, source: str, layout: str, target_class: str,
                 label_column: str | None, positive: str | None
                 ) -> tuple[pd.DataFrame, Literal["wide"], str]:
    """The binary wide frame of ``target_class``, its layout and positive label."""
    from costdash.one_vs_rest import TARGET_LABEL, one_vs_rest_frame

    if layout not in ("auto", "wide"):
        raise ParameterError(f"{source}: a target class needs the wide layout (a score column "
                             f"per classifier and class); this file has the {layout} layout")
    if positive is not None and str(positive).strip() != TARGET_LABEL:
        # The target class is the positive one; another --positive would contradict it.
        raise ParameterError(f"{source}: --positive does not apply with --target-class (the "
                             f"target class {_q(target_class)} is the positive class)")
    frame = one_vs_rest_frame(df, target_class, source=source, label_column=label_column)
    return frame, "wide", TARGET_LABEL
