"""One-vs-rest: a multiclass score file analysed for one target class (issue 28, item 3).

What scikit-learn's ``predict_proba`` gives, joined per classifier: a label column holding
k >= 3 classes and, per classifier, one score column per class named ``<classifier>:<class>``.
Choosing a target class makes it the binary file every page and command already reads:
``y_true = (label == target)`` and, per classifier, the column ``<classifier>:<target>`` under
the classifier's name (Orange's target-class selector does the same).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from costdash.io.layouts import LABEL_COLUMNS, _factorize, _find_column
from costdash.io.messages import _q, _quoted
from costdash.io.reading import _read_source, _read_table, _sniff_format
from costdash.errors import InputFileError, ParameterError

__all__ = ["CLASS_SEPARATOR", "class_score_columns", "one_vs_rest_frame", "target_classes_of"]

CLASS_SEPARATOR = ":"
"""Between a classifier's name and a class in a score column's name (the last one counts, so
a classifier's name may hold the separator)."""

TARGET_LABEL = "1"
"""The positive label of the binary frame (the target class); the rest are "0"."""


def class_score_columns(columns: list[str]) -> dict[str, dict[str, str]]:
    """Score columns by classifier and class: ``{"gbm": {"cat": "gbm:cat", ...}, ...}``, in the
    file's order; columns without the separator are left out."""
    found: dict[str, dict[str, str]] = {}
    for column in columns:
        head, sep, tail = str(column).rpartition(CLASS_SEPARATOR)
        if sep and head and tail:
            found.setdefault(head, {})[tail] = column
    return found


def one_vs_rest_frame(frame: pd.DataFrame, target_class: str, *, source: str,
                      label_column: str | None = None) -> pd.DataFrame:
    """The binary wide frame of ``frame`` for ``target_class``.

    Parameters
    ----------
    frame : pandas.DataFrame
        A label column and ``<classifier>:<class>`` score columns (other columns, a fold column
        say, are kept as they are).
    target_class : str
        The class analysed as positive, compared with the labels as text (exactly, else
        ignoring case); a missing label stays missing, for the loader to refuse or drop.
    source : str
        The file's name, for messages.
    label_column : str, optional
        The label column (else the usual names: y_true, label, target, ...).

    Returns
    -------
    pandas.DataFrame
        The label column as "1" (the target class) or "0", and one score column per classifier,
        named after it: what :func:`costdash.load_predictions` reads as a wide file with positive
        label "1".

    Raises
    ------
    InputFileError
        No ``<classifier>:<class>`` columns, or a classifier without a column for the target.
    ParameterError
        The target class is not among the labels.
    """
    label = _find_column(frame.columns, label_column, LABEL_COLUMNS, "label", source)
    assert label is not None
    # Labels read as the loader reads them (1.0 is "1", missing stays missing, so that the
    # loader still refuses or drops those rows instead of counting them as the rest).
    codes, classes = _factorize(frame[label])
    target = _resolve(str(target_class).strip(), classes)
    if target is None:
        raise ParameterError(f"{source}: the target class {_q(str(target_class).strip())} is "
                             f"not a label of column {_q(label)}; its labels are "
                             f"{_quoted(classes)}")
    by_classifier = class_score_columns([c for c in frame.columns if c != label])
    for cols in by_classifier.values():  # a column's class spelt in another case still counts
        hit = _resolve(target, list(cols))
        if hit is not None and hit != target:
            cols[target] = cols[hit]
    if not by_classifier:
        raise InputFileError(
            f"{source}: a target class needs one score column per class and classifier, named "
            f"<classifier>{CLASS_SEPARATOR}<class> (e.g. gbm{CLASS_SEPARATOR}{target}); "
            f"columns found: {_quoted(list(frame.columns))}", source=source)
    missing = [name for name, cols in by_classifier.items() if target not in cols]
    if missing:
        raise InputFileError(
            f"{source}: no score column for the target class {_q(target)} of "
            f"{_quoted(missing)} (expected {_q(missing[0] + CLASS_SEPARATOR + target)})",
            source=source, column=missing[0] + CLASS_SEPARATOR + target)
    used = {c for cols in by_classifier.values() for c in cols.values()}
    clash = [name for name in by_classifier if name in frame.columns]
    if clash:
        raise InputFileError(f"{source}: column {_q(clash[0])} has the name of a classifier "
                             f"with per-class score columns; rename one of them",
                             source=source, column=clash[0])
    kept = [c for c in frame.columns if c != label and c not in used]
    binary = np.where(codes == classes.index(target), TARGET_LABEL, "0").astype(object)
    binary[codes < 0] = None
    out = {label: pd.Series(binary, index=frame.index)}
    out.update({c: frame[c] for c in kept})
    out.update({name: frame[cols[target]] for name, cols in by_classifier.items()})
    return pd.DataFrame(out, index=frame.index)


def _resolve(wanted: str, names: list[str]) -> str | None:
    """``wanted`` among ``names``: exactly, else the one name equal to it ignoring case (as
    ``--positive`` is matched)."""
    if wanted in names:
        return wanted
    hits = [n for n in names if n.casefold() == wanted.casefold()]
    return hits[0] if len(hits) == 1 else None


def target_classes_of(path, *, name: str | None = None, label_column: str | None = None,
                      max_bytes: int = 200 * 1024 * 1024) -> tuple[str, ...]:
    """The target classes a file offers: its labels (sorted) when it is a one-vs-rest file,
    k >= 3 labels and a ``<classifier>:<class>`` score column of each class for every
    classifier; else empty (a binary file, or one without per-class scores).

    What an upload form offers in its target-class selector when a file arrives (the loader
    refuses such a file without a target class). Reads the file as
    :func:`costdash.load_predictions` does (``path``, ``name`` and ``max_bytes`` as there).

    Examples
    --------
    >>> import io
    >>> f = io.BytesIO(b"y_true,m:a,m:b,m:c\\na,.7,.2,.1\\nb,.1,.8,.1\\nc,.2,.2,.6\\n")
    >>> target_classes_of(f, name="p.csv")
    ('a', 'b', 'c')
    """
    source, data = _read_source(path, name, max_bytes)
    frame = _read_table(data, source, _sniff_format(data, source), None)
    try:
        label = _find_column(frame.columns, label_column, LABEL_COLUMNS, "label", source)
    except (InputFileError, ParameterError):
        return ()
    assert label is not None
    _, classes = _factorize(frame[label], sort=True)
    by_classifier = class_score_columns([c for c in frame.columns if c != label])
    if len(classes) < 3 or not by_classifier:
        return ()
    return tuple(c for c in classes
                 if all(_resolve(c, list(cols)) is not None for cols in by_classifier.values()))
