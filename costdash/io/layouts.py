"""The four layouts of a predictions table (wide, long, counts, score counts) turned into a
:class:`~costdash.dataset.Dataset` (private; :func:`costdash.io.load_predictions` is the entry):
the column names tried, the columns found, values checked and converted, labels and the
positive class, classifiers selected, rows with missing values dropped or refused."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from costdash._lazy import lazy_module
from costdash.io.messages import (
    _SHOW_LABELS,
    _fail,
    _number,
    _q,
    _quoted,
    _rows_text,
)
from costdash._wording import counted
from costdash.dataset import CountedClassifier, Dataset, ScoredClassifier, Segments
from costdash.errors import InputFileError, ParameterError

pd = lazy_module("pandas")  # imported when first used: plain wide CSV needs none (issue 23)

# Column names tried, in order of preference, when the caller does not name the column.
LABEL_COLUMNS = ("y_true", "label", "target", "y", "class", "actual", "truth")
MODEL_COLUMNS = ("model", "classifier", "name")
SCORE_COLUMNS = ("score", "prediction", "pred", "prob", "probability", "y_score")
FOLD_COLUMNS = ("fold", "run", "cv_fold", "split")
# Row identifiers are numeric too, but never classifiers: the wide layout skips them unless
# ``models`` names them.
ID_COLUMNS = ("id", "row_id", "example_id", "index", "row", "sample_id", "instance")
THRESHOLD_COLUMNS = ("threshold", "thresh", "cutoff")
COUNT_COLUMNS = ("tp", "fp", "fn", "tn")
SCORE_COUNT_COLUMNS = ("n_pos", "n_neg")


# Label pairs whose positive class goes without saying (compared case-insensitively).
_KNOWN_PAIRS = {frozenset(pair): pair[1] for pair in [
    ("0", "1"), ("false", "true"), ("-1", "1"), ("neg", "pos"), ("negative", "positive"),
    ("no", "yes"), ("n", "y")]}
# Counts are used as float64 later (rates, sums): beyond 2**53 not every whole number has a
# float64, so a bigger count could not be what the file says; it also keeps tp+fp+fn+tn far
# from int64 overflow.
_MAX_COUNT = 2**53



def _detect_layout(names: Sequence[str], model_column: str | None,
                   score_column: str | None
                   ) -> Literal["wide", "long", "counts", "score_counts"]:
    """Guess the layout from the column names, counts first since it is the most specific."""
    lower = {n.casefold() for n in names}
    if lower >= set(COUNT_COLUMNS):
        return "counts"
    if lower >= set(SCORE_COUNT_COLUMNS):
        return "score_counts"
    named = model_column is not None or score_column is not None
    return "long" if named or (lower & set(MODEL_COLUMNS) and lower & set(SCORE_COLUMNS)) \
        else "wide"


def _load_scored(df: pd.DataFrame, rows: np.ndarray, source: str, layout: str,
                 label_column: str | None, model_column: str | None, score_column: str | None,
                 fold_column: str | None, positive: str | None, models: Sequence[str] | None,
                 drop_missing: bool, segment_column: str | None = None) -> Dataset:
    """The wide and long layouts: scores per example, one label column, optional folds, and
    (wide only) an optional segment column, kept row for row with the labels."""
    label = _find_column(df.columns, label_column, LABEL_COLUMNS, "label", source)
    fold = _find_column(df.columns, fold_column, FOLD_COLUMNS, "fold", source, required=False)
    segment = None
    if segment_column is not None:
        segment = _find_column(df.columns, segment_column, (), "segment", source)
        if segment == label:
            raise ParameterError(f"{source}: the segment column {_q(segment)} is the label "
                                 "column; each segment needs both classes")
    model = wanted = None
    if layout == "long":
        model = _find_column(df.columns, model_column, MODEL_COLUMNS, "model", source)
        score_cols = [_find_column(df.columns, score_column, SCORE_COLUMNS, "score", source)]
        df, rows, wanted = _keep_models(df, rows, model, models, source)
    else:
        candidates = [c for c in df.columns if c not in (label, fold, segment)]
        scoreish = [c for c in candidates
                    if str(c).lower() not in ID_COLUMNS and _looks_numeric(df[c])]
        score_cols = scoreish if models is None else _select(models, scoreish, source, candidates)
        if not score_cols:
            raise _no_score_columns(source, label, df.columns)
    scores = {c: _numeric(df[c], c, rows, source) for c in score_cols}
    used = {c: df[c].isna().to_numpy() for c in (label, fold, model, segment) if c is not None}
    keep = _rows_to_keep(rows, scores, used, source, drop_missing, "scores")
    if keep is not None:
        if model is not None:
            _check_none_lost(df[model], keep, source)
        df, rows, scores = df[keep], rows[keep], {c: v[keep] for c, v in scores.items()}

    codes, labels = _factorize(df[label], sort=True)
    _check_no_nul(labels, codes, rows, label, source)
    pos = _positive_index(labels, positive, label, source,
                          _target_class_hint(df.columns, labels) if model is None else "")
    y_true = codes == pos
    segments = None
    if segment is not None:  # after the rows were dropped, so it stays row for row
        segment_codes, segment_labels = _factorize(df[segment])
        _check_no_nul(segment_labels, segment_codes, rows, segment, source)
        segments = Segments(segment, segment_codes, tuple(segment_labels))
    folds, fold_labels = (None, []) if fold is None else _factorize(df[fold], sort=True)
    if fold is not None:
        _check_no_nul(fold_labels, folds, rows, fold, source)
    if model is None:
        _check_both_classes(y_true, rows, None, [], folds, fold_labels, labels, pos, source,
                            label)
        scored = [ScoredClassifier(c, y_true, scores[c], folds) for c in score_cols]
    else:
        model_codes, names = _factorize(df[model])
        _check_no_nul(names, model_codes, rows, model, source)
        _check_both_classes(y_true, rows, model_codes, names, folds, fold_labels, labels, pos,
                            source, label)
        score = scores[score_cols[0]]
        scored = [ScoredClassifier(n, y_true[g], score[g], None if folds is None else folds[g])
                  for n, g in _groups(model_codes, names, wanted)]
    return Dataset(source=source, layout=layout, positive_label=labels[pos], scored=tuple(scored),
                   fold_labels=tuple(fold_labels), segments=segments)


def _load_counts(df: pd.DataFrame, rows: np.ndarray, source: str, model_column: str | None,
                 positive: str | None, models: Sequence[str] | None,
                 drop_missing: bool) -> Dataset:
    """The counts layout: one confusion matrix per row, several rows per model allowed."""
    model = _find_column(df.columns, model_column, MODEL_COLUMNS, "model", source)
    count_cols = [_find_column(df.columns, None, (c,), c, source) for c in COUNT_COLUMNS]
    threshold = _find_column(df.columns, None, THRESHOLD_COLUMNS, "threshold", source, required=False)
    df, rows, wanted = _keep_models(df, rows, model, models, source)
    counts = {c: _numeric(df[c], c, rows, source, what="counts") for c in count_cols}
    # A threshold may be missing (NaN), unlike the model and the counts.
    thresholds = None if threshold is None else _numeric(df[threshold], threshold, rows, source,
                                                        what="thresholds")
    keep = _rows_to_keep(rows, counts, {model: df[model].isna().to_numpy()}, source,
                         drop_missing, "counts")
    if keep is not None:
        _check_none_lost(df[model], keep, source)
        df, rows, counts = df[keep], rows[keep], {c: v[keep] for c, v in counts.items()}
        thresholds = None if thresholds is None else thresholds[keep]
    _check_counts(counts, rows, source)
    tp, fp, fn, tn = (counts[c].astype(np.int64) for c in count_cols)
    codes, names = _factorize(df[model])
    _check_no_nul(names, codes, rows, model, source)
    _, first = np.unique(codes, return_index=True)  # each model's first row sets its totals
    n_pos, n_neg = tp + fn, fp + tn
    differ = (n_pos != n_pos[first][codes]) | (n_neg != n_neg[first][codes])
    if differ.any():
        m = codes[np.flatnonzero(differ)[0]]
        f, bad = first[m], differ & (codes == m)
        raise _fail(source, f"model {_q(names[m])}: {_rows_text(rows[[f]])} has tp+fn = "
                    f"{n_pos[f]} and fp+tn = {n_neg[f]}, but {_rows_text(rows[bad])} "
                    f"{'has' if bad.sum() == 1 else 'have'} other totals; every row of a model "
                    f"must count the same test set", model, rows[bad])
    for totals, cls in ((n_pos, "positive (tp+fn)"), (n_neg, "negative (fp+tn)")):
        for m in np.flatnonzero(totals[first] == 0)[:1]:
            raise _fail(source, f"model {_q(names[m])} has no {cls} examples "
                        f"({_rows_text(rows[codes == m])}); both classes are needed", model,
                        rows[codes == m])
    counted = [CountedClassifier(n, tp[g], fp[g], fn[g], tn[g],
                                 None if thresholds is None else thresholds[g])
               for n, g in _groups(codes, names, wanted)]
    return Dataset(source=source, layout="counts",
                   positive_label="1" if positive is None else str(positive),
                   counted=tuple(counted))


def _check_counts(counts: dict[str, np.ndarray], rows: np.ndarray, source: str) -> None:
    """Counts must be whole numbers, 0 or more, small enough to be exact in float64."""
    for c, v in counts.items():
        # Checked before the cast to int64, which would wrap 1e20 round to a negative number.
        for bad, problem in ((v != np.floor(v), "non-integer counts"),
                             (v < 0, "negative counts"), (v >= _MAX_COUNT, "counts too large")):
            if bad.any():
                shown = ", ".join(_number(x) for x in v[bad][:3])
                raise _fail(source, f"column {_q(c)} has {problem} ({shown}) in "
                            f"{_rows_text(rows[bad])}; counts must be whole numbers, 0 or more "
                            f"and below {_MAX_COUNT:,} (2**53)", c, rows[bad])


def _load_score_counts(df: pd.DataFrame, rows: np.ndarray, source: str,
                       model_column: str | None, score_column: str | None,
                       fold_column: str | None, positive: str | None,
                       models: Sequence[str] | None, drop_missing: bool) -> Dataset:
    """The score-count layout: examples of each class per (model, score[, fold]) row."""
    model = _find_column(df.columns, model_column, MODEL_COLUMNS, "model", source)
    score = _find_column(df.columns, score_column, SCORE_COLUMNS, "score", source)
    pos_col, neg_col = (_find_column(df.columns, None, (c,), c, source) for c in SCORE_COUNT_COLUMNS)
    fold = _find_column(df.columns, fold_column, FOLD_COLUMNS, "fold", source, required=False)
    df, rows, wanted = _keep_models(df, rows, model, models, source)
    numbers = {score: _numeric(df[score], score, rows, source),
               pos_col: _numeric(df[pos_col], pos_col, rows, source, what="counts"),
               neg_col: _numeric(df[neg_col], neg_col, rows, source, what="counts")}
    used = {c: df[c].isna().to_numpy() for c in (model, fold) if c is not None}
    keep = _rows_to_keep(rows, numbers, used, source, drop_missing, "scores and counts")
    if keep is not None:
        _check_none_lost(df[model], keep, source)
        df, rows, numbers = df[keep], rows[keep], {c: v[keep] for c, v in numbers.items()}
    _check_counts({c: numbers[c] for c in (pos_col, neg_col)}, rows, source)
    n_pos, n_neg = numbers[pos_col].astype(np.int64), numbers[neg_col].astype(np.int64)
    empty = (n_pos == 0) & (n_neg == 0)
    if empty.any():
        raise _fail(source, f"columns {_q(pos_col)} and {_q(neg_col)} are both 0 in "
                    f"{_rows_text(rows[empty])}; a row counts at least one example (leave out "
                    "scores nobody got)", pos_col, rows[empty])
    codes, names = _factorize(df[model])
    _check_no_nul(names, codes, rows, model, source)
    folds, fold_labels = (None, []) if fold is None else _factorize(df[fold], sort=True)
    if folds is not None:
        _check_no_nul(fold_labels, folds, rows, fold, source)
    n_folds = max(len(fold_labels), 1)
    group = codes * n_folds + (0 if folds is None else folds)
    for totals, column, cls in ((n_pos, pos_col, "positive"), (n_neg, neg_col, "negative")):
        per_model = np.bincount(codes, weights=totals, minlength=len(names))
        per_group = np.bincount(group, weights=totals, minlength=len(names) * n_folds)
        present = np.bincount(group, minlength=len(names) * n_folds) > 0
        for m in np.flatnonzero(per_model == 0)[:1]:
            raise _fail(source, f"model {_q(names[m])} has no {cls} examples ({_q(column)} "
                        f"is 0 in {_rows_text(rows[codes == m])}); both classes are needed",
                        column, rows[codes == m])
        for g in np.flatnonzero(present & (per_group == 0))[:1]:
            where = rows[group == g]
            raise _fail(source, f"model {_q(names[g // n_folds])} in fold "
                        f"{_q(fold_labels[g % n_folds])} has no {cls} examples "
                        f"({_rows_text(where)}); each fold needs both classes", column, where)
    # One entry per (score, label, fold) cell: a row becomes a positive and a negative entry.
    # Interleaved (row 0 positives, row 0 negatives, row 1 ...), so entries keep the file's order.
    entry_count = np.stack((n_pos, n_neg), axis=1).ravel()
    has = entry_count > 0
    entry_count = entry_count[has]
    entry_row = (np.arange(2 * len(rows)) // 2)[has]
    entry_pos = np.tile([True, False], len(rows))[has]
    entry_codes = codes[entry_row]
    score_values = numbers[score]
    scored = [ScoredClassifier(n, np.ascontiguousarray(entry_pos[g]),
                               np.ascontiguousarray(score_values[entry_row[g]]),
                               None if folds is None else folds[entry_row[g]],
                               np.ascontiguousarray(entry_count[g]))
              for n, g in _groups(entry_codes, names, wanted)]
    return Dataset(source=source, layout="score_counts",
                   positive_label="1" if positive is None else str(positive),
                   scored=tuple(scored), fold_labels=tuple(fold_labels))


def _keep_models(df: pd.DataFrame, rows: np.ndarray, model: str, models: Sequence[str] | None,
                 source: str) -> tuple[pd.DataFrame, np.ndarray, list[str] | None]:
    """The rows of the models asked for, and their names in the order asked for."""
    if models is None:
        return df, rows, None
    codes, names = _factorize(df[model])
    wanted = _select(models, names, source)
    keep = np.isin(codes, [names.index(m) for m in wanted])
    return df[keep], rows[keep], wanted


def _check_none_lost(col: pd.Series, keep: np.ndarray, source: str) -> None:
    """Dropping rows must not make a model vanish without a word."""
    codes, names = _factorize(col)
    for m in np.setdiff1d(np.arange(len(names)), codes[keep])[:1]:
        raise InputFileError(f"{source}: model {_q(names[m])} has no rows left after dropping "
                             f"those with missing or infinite values", source=source,
                             column=col.name)


def _groups(codes: np.ndarray, names: list[str],
            wanted: list[str] | None) -> list[tuple[str, np.ndarray]]:
    """Each model's row indices, in file order; models in file order unless ``wanted``."""
    order = np.argsort(codes, kind="stable")
    groups = dict(zip(names, np.split(order, np.cumsum(np.bincount(codes))[:-1])))
    return [(n, groups[n]) for n in (names if wanted is None else wanted) if n in groups]


# --- columns, values, labels --------------------------------------------------------------------

def _find_column(names: Sequence[str], given: str | None, defaults: Sequence[str], role: str,
                 source: str, required: bool = True) -> str | None:
    """The column of ``names`` named ``given`` (else the first of ``defaults``),
    case-insensitively."""
    columns = list(names)
    by_lower: dict[str, str] = {}
    for c in columns:
        by_lower.setdefault(c.casefold(), c)
    if given is not None:
        if given in columns:
            return given
        if given.strip().casefold() in by_lower:
            return by_lower[given.strip().casefold()]
        raise ParameterError(f"{source}: there is no {role} column {_q(given)}; columns found: "
                             f"{_quoted(columns)}")
    for d in defaults:
        if d in by_lower:
            return by_lower[d]
    if not required:
        return None
    hint = f" (or name it with --{role}-column)" if role in ("label", "model", "score") else ""
    raise InputFileError(f"{source}: no {role} column: expected one named "
                         f"{' or '.join(defaults) if len(defaults) < 3 else ', '.join(defaults)}"
                         f"{hint}; columns found: {_quoted(columns)}", source=source)


def _select(models: Sequence[str], available: Sequence[str], source: str,
            allowed: Sequence[str] | None = None) -> list[str]:
    """Resolve the ``models`` option against ``available`` names (exact, else ignoring case)."""
    allowed = list(available) if allowed is None else list(allowed)
    chosen: list[str] = []
    for m in models:
        m = str(m).strip()
        hits = ([a for a in allowed if a == m]
                or [a for a in allowed if a.casefold() == m.casefold()])
        if len(hits) != 1:
            raise ParameterError(f"{source}: no classifier named {_q(m)}; available: "
                                 f"{_quoted(available)}")
        if hits[0] not in chosen:
            chosen.append(hits[0])
    return chosen


def _looks_numeric(col: pd.Series) -> bool:
    """Numeric, or text that is mostly numbers (a score column with a few typos in it)."""
    if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return True
    sample = col.dropna().iloc[:1000]
    return len(sample) > 0 and pd.to_numeric(sample, errors="coerce").notna().mean() >= 0.5


def _numeric(col: pd.Series, name: str, rows: np.ndarray, source: str,
             what: str = "scores") -> np.ndarray:
    """The column as a contiguous float64 array, NaN where missing; raise on text in it."""
    if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        try:
            return np.ascontiguousarray(col.to_numpy(dtype=np.float64, na_value=np.nan))
        except (TypeError, ValueError):
            pass  # e.g. an object column of booleans with None; take the general route
    converted, bad = _as_numbers(col)
    if bad.any():
        raise _non_numeric(source, name, int(bad.sum()), col[bad].iloc[0], rows[bad], what)
    return np.ascontiguousarray(converted.to_numpy(dtype=np.float64, na_value=np.nan))


def _no_score_columns(source: str, label: str, columns: Sequence[str]) -> InputFileError:
    return InputFileError(
        f"{source}: no score columns besides the label {_q(label)}; the wide layout needs one "
        f"numeric column per classifier (columns found: {_quoted(columns)})", source=source)


def _as_numbers(col: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """The values as numbers (NaN where missing or not a number) and the mask of those present
    but not numbers: what :func:`_numeric` refuses, for ``costdash aggregate`` too."""
    converted = pd.to_numeric(col, errors="coerce")
    return converted, (converted.isna() & col.notna()).to_numpy()


def _non_numeric(source: str, name: str, count: int, first: object, rows: np.ndarray,
                 what: str = "scores") -> InputFileError:
    """The refusal of a column holding text: ``count`` values, the ``first`` of them, in
    ``rows`` (at least the first few of them, 1-based data rows)."""
    return _fail(source, f"column {_q(name)} has {counted(count, 'non-numeric value')} "
                 f"(first: {_q(first)}) in {_rows_text(rows, count)}; {what} must be numbers",
                 name, rows)


def _rows_to_keep(rows: np.ndarray, numbers: dict[str, np.ndarray],
                  missing: dict[str, np.ndarray], source: str, drop: bool,
                  what: str) -> np.ndarray | None:
    """Fail on missing or infinite values; with ``drop``, the mask of rows without any."""
    problems = [(c, "missing", m) for c, m in missing.items()]
    for c, v in numbers.items():
        problems += [(c, "missing", np.isnan(v)), (c, "infinite", np.isinf(v))]
    any_bad = np.zeros(len(rows), bool)
    for column, kind, mask in problems:
        if not drop and mask.any():
            n = int(mask.sum())
            must = f"; {what} must be finite" if kind == "infinite" else ""
            raise _fail(source, f"column {_q(column)} has {n} {kind} value{'s' if n > 1 else ''} "
                        f"in {_rows_text(rows[mask])}{must}; fix {'them' if n > 1 else 'it'} or "
                        f"use --drop-missing to skip those rows", column, rows[mask])
        any_bad |= mask
    if not any_bad.any():
        return None
    if any_bad.all():
        raise InputFileError(f"{source}: no rows left after dropping all "
                             f"{counted(len(rows), 'row', spec='')} with "
                             f"missing or infinite values", source=source)
    return ~any_bad


def _key(value: object) -> str:
    """A label, fold or model name as text: 1.0 reads as "1", True as "True"."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, bytes):  # pyarrow leaves text that is not UTF-8 as bytes
        return value.decode("cp1252", errors="replace").strip()
    return str(value).strip()


def _factorize(col: pd.Series, sort: bool = False) -> tuple[np.ndarray, list[str]]:
    """Integer codes (-1 for missing) into distinct names, merging values that read the same."""
    try:
        codes, uniques = pd.factorize(col, sort=sort)
    except TypeError:  # mixed types cannot be sorted; first-appearance order will do
        codes, uniques = pd.factorize(col)
    index: dict[str, int] = {}
    remap = np.array([index.setdefault(_key(u), len(index)) for u in uniques] + [-1], np.int64)
    return remap[codes], list(index)  # codes of -1 pick the trailing -1


def _check_no_nul(names: Sequence[str], codes: np.ndarray, rows: np.ndarray, column: str,
                  source: str) -> None:
    """Refuse a label, fold or model name holding NUL, which no stored text may contain.

    Text files with a NUL byte are refused as they are read; this catches the values of JSON
    ("\\u0000") and Parquet, which can hold one without a NUL byte in the file. Only the
    distinct values are looked at, so it costs next to nothing.
    """
    for i in [i for i, n in enumerate(names) if "\x00" in n][:1]:
        bad = rows[codes == i]
        raise _fail(source, f"column {_q(column)} has a value with a NUL character "
                    f"({_q(names[i])}) in {_rows_text(bad)}; labels and names cannot contain "
                    "one", column, bad)


def _target_class_hint(columns: Sequence[str], labels: Sequence[str]) -> str:
    """What to say about ``--target-class`` when a wide file has more than two labels: the
    classes to choose from, and whether the file already has a score column per class."""
    if len(labels) <= 2:
        return ""
    classes = _quoted(labels, _SHOW_LABELS)
    per_class = [c for c in columns if str(c).rpartition(":")[2] in labels
                 and str(c).rpartition(":")[0]]
    if per_class:
        return (f"; this file has a score column per class ({_quoted(per_class, 3)}): analyse "
                f"one class against the rest with --target-class CLASS, one of {classes}")
    return (f"; or, with one score column per class named <classifier>:<class> (predict_proba's "
            f"columns), analyse one class against the rest with --target-class CLASS, one of "
            f"{classes}")


def _positive_index(labels: list[str], positive: str | None, column: str, source: str,
                    hint: str = "") -> int:
    """Which of the two labels is the positive class (``hint`` ends the refusal of more than
    two labels)."""
    found = _quoted(labels, _SHOW_LABELS)
    if len(labels) == 1:
        raise InputFileError(f"{source}: column {_q(column)} has only one label, {_q(labels[0])}; "
                             f"both classes are needed", source=source, column=column)
    if len(labels) > 2:
        raise InputFileError(f"{source}: column {_q(column)} has {len(labels)} labels ({found}); "
                             f"expected two classes (is {_q(column)} the label column? say which "
                             f"with --label-column){hint}", source=source, column=column)
    if positive is not None:
        p = str(positive).strip()
        for same in (str.__eq__, lambda a, b: a.casefold() == b.casefold()):
            hits = [i for i, k in enumerate(labels) if same(k, p)]
            if len(hits) == 1:
                return hits[0]
        raise ParameterError(f"{source}: --positive {_q(p)} is not a label in column "
                             f"{_q(column)}; labels found: {found}")
    known = _KNOWN_PAIRS.get(frozenset(k.casefold() for k in labels))
    if known is None:
        raise InputFileError(f"{source}: column {_q(column)} has labels {found}; say which is "
                             f"positive with --positive LABEL", source=source, column=column)
    return [k.casefold() for k in labels].index(known)


def _check_both_classes(y_true: np.ndarray, rows: np.ndarray, models: np.ndarray | None,
                        model_names: Sequence[str], folds: np.ndarray | None,
                        fold_labels: Sequence[str], labels: Sequence[str], pos: int, source: str,
                        label: str) -> None:
    """Each model, and each fold of it, needs both classes or its ROC curve is undefined."""
    n_models, n_folds = max(len(model_names), 1), len(fold_labels)
    model = np.zeros(len(y_true), np.int64) if models is None else models
    splits = [(model, n_models, False)]
    if folds is not None:
        splits.append((model * n_folds + folds, n_models * n_folds, True))
    for group, n_groups, by_fold in splits:
        total = np.bincount(group, minlength=n_groups)
        n_pos = np.bincount(group, weights=y_true, minlength=n_groups)
        for g in np.flatnonzero((total > 0) & ((n_pos == 0) | (n_pos == total)))[:1]:
            where = [f"fold {_q(fold_labels[g % n_folds])}"] if by_fold else []
            if models is not None:
                where.insert(0, f"model {_q(model_names[g // n_folds if by_fold else g])}")
            only = labels[pos] if n_pos[g] else labels[1 - pos]
            raise _fail(source, f"{' in '.join(where)} has only {_q(only)} labels in column "
                        f"{_q(label)} ({_rows_text(rows[group == g])}); each "
                        f"{'fold' if by_fold else 'classifier'} needs both classes", label,
                        rows[group == g])
