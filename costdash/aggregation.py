"""Row-level predictions of any size summarised, exactly, as counts per classifier and score.

Everything costdash computes about a scoring classifier (ROC points and thresholds, the hull, the
envelope, criteria, folds, bootstrap bands) depends on the rows only through the number of
positive and negative examples at each distinct score (in each fold). :func:`aggregate` computes
that table, the **score-count layout** ``model, score, n_pos, n_neg`` (+ ``fold``) that
:func:`costdash.load_predictions` reads, with an engine built for the scale: DuckDB (embedded,
out of core: it spills to disk past its memory limit) or Spark (a cluster, or local mode).

Both engines run the same SQL, in two passes. The first counts the rows per label, reading the
label column alone, and the labels are interpreted with the loader's rules (0/1, true/false,
no/yes... or ``positive``); the second counts rows and positives per ``(model, score[, fold])``
(in the wide layout, one aggregate per score column): its groups are the output's rows. Missing
labels, scores or folds and non-finite scores are counted by those same passes (they form groups
of their own) and refused. The score columns are the ones :func:`costdash.load_predictions` takes
(numbers, booleans, and text that is mostly numbers); one held as text is read value by value
first and refused, as ``costdash analyze`` refuses it and with its message, when a value is not
a number (:func:`_check_text_scores`).

The embedded engine counts the Parquet score columns whose scores are decimals with a fixed
number of places (most written scores are) by an integer key instead of the double itself, all
of them in one pass over the files' row groups, read by Arrow and counted by a compiled loop
(:mod:`costdash._grid_counting`, numba) in parallel: the same groups and numbers, about twice as
fast as DuckDB's aggregate for a million distinct scores (:meth:`_DuckDBReader.count_on_grid`
says when the keys are trusted).

``round_digits`` rounds scores half up to that many decimals before grouping, which bounds the
output (at most ``10**digits`` scores per unit of score range) at a stated cost: the rounded
curve replaces the exact staircase inside every merged bin by its diagonal, so no point of the
exact ROC curve (pooled, or of one fold) is further than ``dx dy / sqrt(dx**2 + dy**2)`` from
it, with ``dx, dy`` the bin's share of the negatives and positives. The largest of those bounds
over the bins that really merged different scores is reported as ``max_roc_distance``; the hull
can move inward by no more than that.
"""

from __future__ import annotations

import dataclasses
import glob
import itertools
import math
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from costdash import _grid_counting
from costdash.io.layouts import (
    _as_numbers,
    _find_column,
    _key,
    _looks_numeric,
    _no_score_columns,
    _non_numeric,
    _positive_index,
)
from costdash.io.messages import _SHOW_ROWS, _quoted
from costdash.errors import InputFileError, ParameterError
from costdash.io import (
    FOLD_COLUMNS,
    ID_COLUMNS,
    LABEL_COLUMNS,
    MODEL_COLUMNS,
    SCORE_COLUMNS,
)

__all__ = ["Aggregate", "AggregateStats", "ENGINES", "aggregate", "max_roc_distance"]

ENGINES = ("duckdb", "spark")
DEFAULT_MEMORY_LIMIT = "1GB"
"""DuckDB's memory limit: its hash tables spill to disk past it (peak RSS stays near 1.5 GB)."""

_PARQUET_EXTENSIONS = (".parquet", ".pq", ".parq")
_TEXT_EXTENSIONS = (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz", ".txt.gz")


@dataclass(frozen=True)
class AggregateStats:
    """What an aggregation read, wrote and changed.

    Attributes
    ----------
    engine : str
        "duckdb" or "spark".
    layout : str
        The input's layout, "wide" or "long".
    input_rows : int
        Row-level predictions counted (rows x score columns in the wide layout).
    output_rows : int
        Rows of the score-count table.
    classifiers : tuple of str
        In the output's order: the score columns' order (wide) or sorted names (long).
    positive_label : str
        The input's label taken as the positive class.
    round_digits : int or None
        Decimals the scores were rounded to; None: exact scores.
    merged_bins : int
        Output rows (pooled over folds) in which rounding merged different scores.
    max_roc_distance : float
        Largest distance in ROC space (FPR, TPR) from a point of an exact ROC curve (pooled or
        per fold) to the rounded one; 0.0 without rounding or when nothing merged.
    seconds : float
        Wall time of the aggregation.
    counted_by_key : tuple of str
        Classifiers whose scores sat on a decimal grid (Parquet, wide layout, exact scores) and
        were counted by an integer key, the fast route; the others were grouped by the score
        itself. Empty for Spark.
    """

    engine: str
    layout: str
    input_rows: int
    output_rows: int
    classifiers: tuple[str, ...]
    positive_label: str
    round_digits: int | None
    merged_bins: int
    max_roc_distance: float
    seconds: float
    counted_by_key: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Aggregate:
    """The score-count table of some row-level predictions, and how it was made.

    Attributes
    ----------
    table : pandas.DataFrame
        Columns ``model, score, n_pos, n_neg`` (+ ``fold`` when the input has folds), one row per
        classifier, distinct score (and fold), sorted by classifier, then score decreasing.
    stats : AggregateStats
    """

    table: pd.DataFrame
    stats: AggregateStats

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the table as Parquet (``.parquet``/``.pq``) or CSV (anything else).

        CSV holds every score exactly: each is written as the shortest text that reads back as
        the same float64.
        """
        text = os.fspath(path)
        if text.lower().endswith(_PARQUET_EXTENSIONS):
            self.table.to_parquet(text, index=False)
        else:
            self.table.to_csv(text, index=False, float_format=None)


def aggregate(source: Any, *, engine: Literal["duckdb", "spark"] | None = None,
              label_column: str | None = None, model_column: str | None = None,
              score_column: str | None = None, fold_column: str | None = None,
              positive: str | None = None, models: Sequence[str] | None = None,
              round_digits: int | None = None, master: str | None = None,
              memory_limit: str = DEFAULT_MEMORY_LIMIT, threads: int | None = None,
              temp_directory: str | None = None) -> Aggregate:
    """Count positives and negatives per classifier and distinct score, out of core.

    Parameters
    ----------
    source : path, glob, sequence of them, DuckDB relation or Spark DataFrame
        Row-level predictions in the wide (``y_true, model_a, model_b, ...``) or long
        (``model, y_true, score``) layout, optional ``fold``. Files are CSV/TSV (``.gz`` too) or
        Parquet, told apart by extension; a glob reads every file it matches as one table.
    engine : {"duckdb", "spark"}, optional
        Default: Spark for a Spark DataFrame, else DuckDB (embedded, no server).
    label_column, model_column, score_column, fold_column : str, optional
        Column names, overriding the loader's defaults (``y_true``/``label``..., ``model``...,
        ``score``..., ``fold``...), matched case-insensitively.
    positive : str, optional
        The positive label, needed unless the labels are an obvious pair (0/1, false/true...).
    models : sequence of str, optional
        Only these classifiers (score columns in the wide layout, model names in the long one).
    round_digits : int, optional
        Round scores half up to this many decimals first (0 to 15); see the module notes.
    master : str, optional
        Spark master URL (e.g. ``local[4]``, ``spark://host:7077``) for a new session; default:
        the active session, else ``local[*]``.
    memory_limit, threads, temp_directory : optional
        DuckDB's settings: past ``memory_limit`` it spills to ``temp_directory`` (default: a
        fresh directory under the system's temporary one). ``threads`` also bounds the threads
        of the compiled counting loop.

    Returns
    -------
    Aggregate
        The table (write it with :meth:`Aggregate.write`) and :class:`AggregateStats`.

    Raises
    ------
    InputFileError
        No file matches, a column is missing, labels are not two classes, or some rows have a
        missing label, score or fold, or a non-finite score.
    ParameterError
        Invalid options.
    """
    started = time.perf_counter()
    if round_digits is not None and (isinstance(round_digits, bool)
                                     or not isinstance(round_digits, (int, np.integer))
                                     or not 0 <= round_digits <= 15):
        raise ParameterError(f"round_digits must be a whole number from 0 to 15; got "
                             f"{round_digits!r}")
    engine = _engine_of(source, engine)
    if engine == "duckdb":
        _grid_counting.warm_up()
        reader: _Reader = _DuckDBReader(source, memory_limit, threads, temp_directory)
    else:
        reader = _SparkReader(source, master)
    try:
        plan = _plan(reader.columns(), reader.numeric, reader.name, label_column, model_column,
                     score_column, fold_column, models, reader.looks_numeric)
        reader.labels_as_written(plan.label)
        plan = _check_text_scores(reader, plan)
        # The positive label must be known to count each class in the main pass, whose groups
        # are then the output's rows; finding the labels costs next to nothing (see below).
        labels = _label_values(reader, plan)
        positive_values, positive_label = _positive_values(labels, plan, reader.name, positive)
        flags = _labels_are_flags(labels, positive_values)
        try:
            grouped, by_key = _count(reader, plan, round_digits, positive_values, flags)
        except _TextInNumbers:
            # A CSV column DuckDB typed as numbers from its first rows holds text further down:
            # read the scores as text, refused like analyze refuses them, or else counted.
            reader.read_as_text(_score_columns(plan))
            plan = _check_text_scores(reader, plan)
            grouped, by_key = _count(reader, plan, round_digits, positive_values, flags)
    finally:
        reader.close()
    table, stats = _finish(grouped, plan, reader.name, round_digits)
    return Aggregate(table=table, stats=AggregateStats(
        engine=engine, seconds=time.perf_counter() - started, positive_label=positive_label,
        counted_by_key=tuple(m for m in plan.models if m in by_key), **stats))


def max_roc_distance(n_pos: np.ndarray, n_neg: np.ndarray, total_pos: int | np.ndarray,
                     total_neg: int | np.ndarray) -> float:
    """Largest distance from a point inside merged bins to the bins' diagonals, in ROC units.

    A bin holding ``n_pos`` positives and ``n_neg`` negatives spans a ``dx`` by ``dy`` rectangle
    of ROC space (``dx = n_neg / total_neg``, ``dy = n_pos / total_pos``); every exact point
    inside it lies in the rectangle, whose farthest points from the diagonal are its corners,
    at ``dx dy / sqrt(dx**2 + dy**2)``. The totals are those of each bin's curve (arrays
    when the bins belong to different curves).
    """
    dx = np.asarray(n_neg, dtype=np.float64) / total_neg
    dy = np.asarray(n_pos, dtype=np.float64) / total_pos
    norm = np.hypot(dx, dy)
    distance = np.divide(dx * dy, norm, out=np.zeros_like(norm), where=norm > 0)
    return float(distance.max(initial=0.0))


# --- the plan: which columns mean what -----------------------------------------------------------

@dataclass(frozen=True)
class _Plan:
    layout: str
    label: str
    fold: str | None
    model: str | None          # long layout
    score: str | None          # long layout
    models: tuple[str, ...]    # wide: score columns, in order; long: the names asked for
    text: tuple[str, ...] = ()  # score columns the input holds as text, checked to be numbers
    booleans: tuple[str, ...] = ()  # score columns of booleans (a hard classifier's flags)


def _score_columns(plan: _Plan) -> tuple[str, ...]:
    return plan.models if plan.layout == "wide" else (str(plan.score),)


def _plan(columns: Sequence[str], numeric: set[str], source: str, label_column: str | None,
          model_column: str | None, score_column: str | None, fold_column: str | None,
          models: Sequence[str] | None,
          looks_numeric: Callable[[str], bool] = lambda column: False) -> _Plan:
    """Which columns mean what. In the wide layout the score columns are the numeric ones and,
    as :func:`costdash.load_predictions` takes them, those holding text that is mostly numbers
    (``looks_numeric``): a score column with a few typos in it is refused by
    :func:`_check_text_scores`, not dropped."""
    lower = {c.casefold() for c in columns}
    if {"n_pos", "n_neg"} <= lower or {"tp", "fp", "fn", "tn"} <= lower:
        raise InputFileError(f"{source}: is already counts (columns {_quoted(columns)}); "
                             "aggregate reads row-level predictions", source=source)
    label = _find_column(columns, label_column, LABEL_COLUMNS, "label", source)
    fold = _find_column(columns, fold_column, FOLD_COLUMNS, "fold", source, required=False)
    long = (model_column is not None or score_column is not None
            or (lower & set(MODEL_COLUMNS) and lower & set(SCORE_COLUMNS)))
    if long:
        model = _find_column(columns, model_column, MODEL_COLUMNS, "model", source)
        score = _find_column(columns, score_column, SCORE_COLUMNS, "score", source)
        return _Plan("long", label, fold, model, score, tuple(str(m) for m in models or ()))
    candidates = [c for c in columns if c not in (label, fold)]
    scoreish = [c for c in candidates
                if c.casefold() not in ID_COLUMNS and (c in numeric or looks_numeric(c))]
    if models:
        by_lower = {c.casefold(): c for c in candidates}
        missing = [m for m in models if str(m).casefold() not in by_lower]
        if missing:
            raise ParameterError(f"{source}: no classifier named {_quoted(missing)}; available: "
                                 f"{_quoted(scoreish)}")
        scoreish = list(dict.fromkeys(by_lower[str(m).casefold()] for m in models))
    if not scoreish:
        raise _no_score_columns(source, label, columns)
    return _Plan("wide", label, fold, None, None, tuple(scoreish))


def _check_text_scores(reader: _Reader, plan: _Plan) -> _Plan:
    """Refuse the score columns the input holds as text when a value in them is not a number,
    with the message :func:`costdash.load_predictions` gives for that file (the same test of
    each value, the file's name, its first rows); the plan, naming the text columns, which are
    then read with ``TRY_CAST`` (text that ``analyze`` reads as missing, such as NA, is missing
    here too, and refused as such)."""
    text = tuple(c for c in _score_columns(plan) if reader.is_text(c))
    only = plan.models if plan.layout == "long" and plan.models else None
    for column in text:
        found: dict[str, list[Any]] = {}   # file: [count, first value, first rows]
        seen: dict[str, int] = {}
        for file, values, model in reader.in_order(column, plan.model if only else None):
            start = seen.get(file, 0)
            seen[file] = start + len(values)
            if reader.missing_text:
                values = values.mask(values.isin(reader.missing_text))
            bad = _as_numbers(values)[1]
            if only is not None and model is not None:
                bad = bad & model.isin(only).to_numpy()
            if bad.any():
                hit = found.setdefault(file, [0, values[bad].iloc[0], []])
                hit[0] += int(bad.sum())
                hit[2] += (start + 1 + np.flatnonzero(bad)[:_SHOW_ROWS]).tolist()
        for file, (count, first, rows) in found.items():
            raise _non_numeric(file, column, count, first, np.array(sorted(rows)[:_SHOW_ROWS]))
    return dataclasses.replace(plan, text=text, booleans=tuple(
        c for c in _score_columns(plan) if reader.is_boolean(c)))


def _long_rows_sql(plan: _Plan, quote: Any) -> str:
    """The long input as (model, exact, label[, fold]) rows, only the models asked for."""
    fold = f", {quote(plan.fold)} AS fold" if plan.fold else ""
    model = f"CAST({quote(plan.model)} AS STRING)"
    where = ""
    if plan.models:
        where = " WHERE " + model + " IN (" + ", ".join(_literal(m) for m in plan.models) + ")"
    return (f"SELECT {model} AS model, {_as_double(plan, plan.score, quote)} AS exact, "
            f"{quote(plan.label)} AS label{fold} FROM src{where}")


def _as_double(plan: _Plan, column: str | None, quote: Any) -> str:
    if column in plan.booleans:
        # Through an integer: DuckDB 2.0 pushes a boolean's cast to DOUBLE into its CSV
        # reader, which then parses "true" as a number and fails.
        return f"CAST(CAST({quote(column)} AS TINYINT) AS DOUBLE)"
    if column not in plan.text:
        return f"CAST({quote(column)} AS DOUBLE)"
    # Text columns passed _check_text_scores: what does not convert is what analyze reads as
    # missing (NA, null...), which becomes NULL and is refused as missing by _finish. The trim
    # changes no value (both engines read " 0.5" as 0.5) but keeps DuckDB 2.0 from pushing the
    # cast into its CSV reader, which then converts strictly and fails on the NA.
    return f"TRY_CAST(trim({quote(column)}) AS DOUBLE)"


def _label_values(reader: _Reader, plan: _Plan) -> pd.DataFrame:
    """The label column's distinct values (``label``) with their rows (``n``, or NULL).

    Two labels are the rule, and checking that takes no pass over the data where the input
    keeps statistics (Parquet): the minimum, maximum and number of NULLs come from them, and
    DuckDB answers "how many rows have another label" from the value range alone. Only when
    there are other labels (an error, or text labels written two ways) is every label counted.
    """
    label = reader.quote(plan.label)
    summary = reader.run(f"SELECT MIN({label}) AS low, MAX({label}) AS high, "
                         f"COUNT(*) - COUNT({label}) AS missing FROM src")
    low, high, missing = (summary[c].iloc[0] for c in ("low", "high", "missing"))
    if missing or pd.isna(low) or pd.isna(high) or _key(low) == _key(high):
        return reader.run(_labels_sql(plan, reader.quote))
    others = reader.run(f"SELECT COUNT(*) AS n FROM src WHERE {label} NOT IN "
                        f"({_literal(low)}, {_literal(high)})")
    if others["n"].iloc[0]:
        return reader.run(_labels_sql(plan, reader.quote))
    return pd.DataFrame({"label": [low, high], "n": [None, None]})


def _labels_sql(plan: _Plan, quote: Any) -> str:
    """Rows per label value (NULL included), reading the label column alone."""
    return (f"SELECT {quote(plan.label)} AS label, COUNT(*) AS n FROM src "
            f"GROUP BY {quote(plan.label)}")


def _count(reader: _Reader, plan: _Plan, round_digits: int | None,
           positive_values: Sequence[Any], labels_are_flags: bool = False
           ) -> tuple[pd.DataFrame, list[str]]:
    """The main pass: positives and rows per (model, score[, fold]), as :func:`_finish` reads.

    Exact wide score columns that the reader can count on an integer grid
    (:meth:`_DuckDBReader.count_on_grid`) are counted so; the others by the generic query.
    Returns the counts and the columns counted on the grid.
    """
    if plan.layout == "long" or plan.fold is not None or round_digits is not None:
        return reader.run(_counting_sql(plan, reader.quote, round_digits, positive_values)), []
    parts, rest = reader.count_on_grid([m for m in plan.models if m not in plan.text],
                                       plan.label, positive_values, labels_are_flags)
    rest = [m for m in plan.models if m in rest or m in plan.text]
    by_key = [m for m in plan.models if m not in rest]
    if rest:
        parts.append(reader.run(_counting_sql(dataclasses.replace(plan, models=tuple(rest)),
                                              reader.quote, round_digits, positive_values)))
    return (parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)), by_key


def _labels_are_flags(labels: pd.DataFrame, positive_values: Sequence[Any]) -> bool:
    """Whether the labels are the integers (or booleans) 0 and 1 with 1 positive: then the label
    column itself is the positive flag, which DuckDB hands over faster than a computed one."""
    values = labels["label"].tolist() + list(positive_values)
    if not all(isinstance(v, (bool, int, np.integer, np.bool_)) for v in values):
        return False
    return ({int(v) for v in labels["label"]} == {0, 1}
            and [int(v) for v in positive_values] == [1])


def _is_positive_sql(positive_values: Sequence[Any]) -> str:
    return "label IN (" + ", ".join(_literal(v) for v in positive_values) + ")"


def _counting_sql(plan: _Plan, quote: Any, round_digits: int | None,
                  positive_values: Sequence[Any]) -> str:
    """The main pass: positives and rows per (model, score[, fold]).

    In the wide layout each score column is aggregated on its own and the classifier's name
    added to the (small) result: a constant text column in the group key, as a ``UNION ALL``
    of rows would need, makes DuckDB's aggregation about three times slower. Missing or
    non-finite scores and missing folds form groups of their own, which :func:`_finish`
    refuses, so that no extra pass looks for them.
    """
    if round_digits is None:
        score, extra, bounds = "exact", "", ""
    else:
        # Half up by plain float64 arithmetic, which both engines do alike (their ROUND
        # functions differ at ties); monotone, so only adjacent scores merge.
        scale = f"{10.0 ** round_digits!r}"
        score = f"FLOOR(exact * {scale} + 0.5) / {scale}"
        extra = ", MIN(exact) AS score_min, MAX(exact) AS score_max"
        bounds = ", score_min, score_max"
    counts = f"COUNT(*) FILTER (WHERE {_is_positive_sql(positive_values)}) AS n_pos, COUNT(*) AS n{extra}"
    fold = ", fold" if plan.fold else ""
    if plan.layout == "long":
        return (f"SELECT model, {score} AS score{fold}, {counts} "
                f"FROM ({_long_rows_sql(plan, quote)}) AS r GROUP BY model, {score}{fold}")
    fold_column = f", {quote(plan.fold)} AS fold" if plan.fold else ""
    return " UNION ALL ".join(
        f"SELECT {_literal(m)} AS model, score{fold}, n_pos, n{bounds} FROM ("
        f"SELECT {score} AS score{fold}, {counts} FROM ("
        f"SELECT {_as_double(plan, m, quote)} AS exact, {quote(plan.label)} AS label{fold_column} "
        f"FROM src) AS r GROUP BY {score}{fold}) AS g" for m in plan.models)


def _literal(value: Any) -> str:
    """A value of the input as an SQL literal of its own type."""
    if isinstance(value, (bool, np.bool_)):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return "'" + str(value).replace("'", "''") + "'"


def _positive_values(labels: pd.DataFrame, plan: _Plan, source: str, positive: str | None
                     ) -> tuple[list[Any], str]:
    """The input's values meaning the positive class, and the positive label as text."""
    missing = labels["label"].isna()
    if missing.any():
        raise _bad_rows(source, plan.label, int(labels.loc[missing, "n"].sum()), "missing",
                        "every row needs a label")
    values = labels["label"].tolist()
    texts = [_key(v) for v in values]
    numeric = all(isinstance(v, (int, float, np.integer, np.floating))
                  and not isinstance(v, (bool, np.bool_)) for v in values)
    distinct = sorted(set(texts), key=lambda k: (float(k), k) if numeric else (0.0, k))
    pos = _positive_index(distinct, positive, plan.label, source)
    chosen = [v for v, k in zip(values, texts) if k == distinct[pos]]
    return chosen, distinct[pos]


# --- engines -------------------------------------------------------------------------------------

def _engine_of(source: Any, engine: str | None) -> str:
    if engine is not None and engine not in ENGINES:
        raise ParameterError(f"unknown engine '{engine}'; choose one of {', '.join(ENGINES)}")
    is_spark = type(source).__module__.startswith("pyspark.")
    is_duckdb = type(source).__module__.startswith("duckdb")
    if engine is None:
        return "spark" if is_spark else "duckdb"
    if (is_spark and engine != "spark") or (is_duckdb and engine != "duckdb"):
        raise ParameterError(f"a {type(source).__name__} is aggregated by its own engine, not "
                             f"{engine}")
    return engine


def _expand(source: Any) -> tuple[list[str], str, str]:
    """The files of paths and globs, their format ("parquet" or "csv") and a display name."""
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if not items:
        raise ParameterError("no input files given")
    files: list[str] = []
    for item in items:
        text = os.fspath(item)
        found = sorted(glob.glob(text)) if glob.has_magic(text) else [text]
        found = [f for f in found if os.path.isfile(f)]
        if not found:
            name = os.path.basename(text) or text
            raise InputFileError(f"{name}: no such file ({text})", source=name)
        files += found
    kinds = {"parquet" if f.lower().endswith(_PARQUET_EXTENSIONS) else "csv" for f in files}
    if len(kinds) > 1:
        raise ParameterError("the inputs mix Parquet and CSV files; aggregate one kind at a time")
    name = os.path.basename(files[0]) + (f" and {len(files) - 1} more" if len(files) > 1 else "")
    return files, kinds.pop(), name


class _Reader:
    name: str
    numeric: set[str]
    missing_text: frozenset[str] = frozenset()
    """Text read as a missing value: what pandas reads so in a CSV file (NA, null, NaN...)."""

    def columns(self) -> list[str]:
        raise NotImplementedError

    def labels_as_written(self, column: str) -> None:
        """Read this column of text files as text: labels such as yes/no stay what they are."""

    def read_as_text(self, columns: Sequence[str]) -> None:
        """Read these columns of text files as text (after a failed conversion to numbers)."""

    def is_text(self, column: str) -> bool:
        raise NotImplementedError

    def is_boolean(self, column: str) -> bool:
        raise NotImplementedError

    def sample(self, column: str) -> pd.Series:
        """The column's first values that are not missing (up to 1,000), in the input's order."""
        raise NotImplementedError

    def looks_numeric(self, column: str) -> bool:
        """Whether a column that is not numeric holds scores as costdash.load_predictions sees
        them: booleans, or text that is mostly numbers."""
        return self.is_text(column) and _looks_numeric(self.sample(column))

    def in_order(self, column: str, model: str | None = None
                 ) -> Iterator[tuple[str, pd.Series, pd.Series | None]]:
        """The column's values as text, in chunks in the input's order: (the file they come
        from, the values, the model column's values when ``model`` names it)."""
        raise NotImplementedError

    def quote(self, column: str) -> str:
        raise NotImplementedError

    def run(self, sql: str) -> pd.DataFrame:
        raise NotImplementedError

    def count_on_grid(self, columns: Sequence[str], label: str, positive_values: Sequence[Any],
                      labels_are_flags: bool = False) -> tuple[list[pd.DataFrame], list[str]]:
        """Exact score columns' counts by a faster route, and the columns left to the generic
        query."""
        return [], list(columns)

    def close(self) -> None:
        pass


class _TextInNumbers(InputFileError):
    """DuckDB met text in a CSV column it had typed as numbers from the first rows."""


_SCAN_ROWS = 1 << 16
_SAMPLE_ROWS = 1000   # as many as costdash.load_predictions looks at to tell a score column
_TEXT_TYPES = {"VARCHAR"}


class _DuckDBReader(_Reader):
    """DuckDB in this process: the input is the view ``src``, the result a small DataFrame.

    Files get a connection of their own with the memory settings; a relation is queried on its
    own connection, whose settings are the caller's.
    """

    def __init__(self, source: Any, memory_limit: str, threads: int | None,
                 temp_directory: str | None) -> None:
        import duckdb

        self._temp: tempfile.TemporaryDirectory[str] | None = None
        self._threads = threads
        self.relation = None
        self.con = None
        if isinstance(source, duckdb.DuckDBPyRelation):
            self.relation = source
            self.name = "DuckDB relation"
            names, types = list(source.columns), [str(t) for t in source.types]
        else:
            files, kind, self.name = _expand(source)
            if temp_directory is None:
                self._temp = tempfile.TemporaryDirectory(prefix="costdash-duckdb-")
                temp_directory = self._temp.name
            self.con = duckdb.connect()
            self.con.execute(f"SET memory_limit = '{memory_limit}'")
            self.con.execute(f"SET temp_directory = '{_sql_text(temp_directory)}'")
            # Row order means nothing to a GROUP BY; not keeping it lets DuckDB stream.
            self.con.execute("SET preserve_insertion_order = false")
            # DuckDB draws its progress bar on stdout, where it would corrupt --json output.
            self.con.execute("SET enable_progress_bar = false")
            if threads is not None:
                self.con.execute(f"SET threads = {int(threads)}")
            self._files = files
            self._kind = kind
            self._as_text: list[str] = []
            if kind == "csv":
                self.missing_text = _PANDAS_MISSING_TEXT
            self._view()
            described = self.con.execute("DESCRIBE src").fetchall()
            names, types = [str(r[0]) for r in described], [str(r[1]) for r in described]
        self._columns = names
        self._types = dict(zip(names, types))
        self.numeric = {n for n, t in zip(names, types) if t.split("(")[0] in _DUCKDB_NUMERIC}

    def _read(self, files: Sequence[str]) -> str:
        """The table function reading these of the input files, columns typed as the view's."""
        listed = "[" + ", ".join(f"'{_sql_text(f)}'" for f in files) + "]"
        if self._kind == "parquet":
            return f"read_parquet({listed})"
        types = ", ".join(f"'{_sql_text(c)}': 'VARCHAR'" for c in self._as_text)
        return f"read_csv({listed}, header = true{f', types = {{{types}}}' if types else ''})"

    def _view(self) -> None:
        import duckdb

        assert self.con is not None
        try:
            self.con.execute(f"CREATE OR REPLACE VIEW src AS SELECT * FROM "
                             f"{self._read(self._files)}")
        except duckdb.Error as exc:
            raise InputFileError(f"{self.name}: cannot be read ({_reason(exc)})",
                                 source=self.name) from None

    def labels_as_written(self, column: str) -> None:
        # DuckDB's CSV sniffer reads yes/no as booleans, which would rename the classes.
        if self.con is not None and self._kind == "csv":
            self._as_text.append(column)
            self._view()

    def read_as_text(self, columns: Sequence[str]) -> None:
        if self.con is None or self._kind != "csv":
            return
        self._as_text += [c for c in columns if c not in self._as_text]
        self._view()
        self._types.update({c: "VARCHAR" for c in columns})
        self.numeric -= set(columns)

    def is_text(self, column: str) -> bool:
        return self._types[column] in _TEXT_TYPES

    def is_boolean(self, column: str) -> bool:
        return self._types[column] == "BOOLEAN"

    def looks_numeric(self, column: str) -> bool:
        return self.is_boolean(column) or super().looks_numeric(column)

    def _ordered(self, sql: str) -> Iterator[Any]:
        """Arrow batches of a query over ``src`` in the input's order (which this connection
        does not keep otherwise: it lets DuckDB stream)."""
        if self.relation is not None:   # its connection's settings are the caller's
            yield from self.relation.query("src", sql).to_arrow_reader(_SCAN_ROWS)
            return
        assert self.con is not None
        self.con.execute("SET preserve_insertion_order = true")
        try:
            yield from self.con.sql(sql).to_arrow_reader(_SCAN_ROWS)
        finally:
            self.con.execute("SET preserve_insertion_order = false")

    def sample(self, column: str) -> pd.Series:
        value = self.quote(column)
        batches = list(self._ordered(f"SELECT {value} AS value FROM src WHERE {value} IS NOT "
                                     f"NULL LIMIT {_SAMPLE_ROWS}"))
        values = [b.to_pandas()["value"] for b in batches]
        return pd.concat(values, ignore_index=True) if values else pd.Series([], dtype=object)

    def in_order(self, column: str, model: str | None = None
                 ) -> Iterator[tuple[str, pd.Series, pd.Series | None]]:
        picked = f"CAST({self.quote(column)} AS VARCHAR) AS value" + (
            f", CAST({self.quote(model)} AS VARCHAR) AS model" if model else "")
        # One file at a time: each file's own rows are numbered, as analyze numbers them.
        parts = ([(self.name, "src")] if self.relation is not None else
                 [(os.path.basename(f), self._read([f])) for f in self._files])
        for name, table in parts:
            for batch in self._ordered(f"SELECT {picked} FROM {table}"):
                frame = batch.to_pandas()
                yield name, frame["value"], frame["model"] if model else None

    def columns(self) -> list[str]:
        return self._columns

    def quote(self, column: str) -> str:
        return '"' + column.replace('"', '""') + '"'

    def run(self, sql: str) -> pd.DataFrame:
        import duckdb

        sql = sql.replace("AS STRING", "AS VARCHAR")
        try:
            # Through Arrow: faster than DuckDB's own DataFrame conversion, and keeps NULLs.
            if self.relation is not None:
                return self.relation.query("src", sql).to_arrow_table().to_pandas()
            assert self.con is not None
            return self.con.sql(sql).to_arrow_table().to_pandas()
        except duckdb.Error as exc:
            unread = (isinstance(exc, duckdb.ConversionException) and self.con is not None
                      and self._kind == "csv")
            raise (_TextInNumbers if unread else InputFileError)(
                f"{self.name}: cannot be aggregated ({_reason(exc)})", source=self.name) from None

    def count_on_grid(self, columns: Sequence[str], label: str, positive_values: Sequence[Any],
                      labels_are_flags: bool = False) -> tuple[list[pd.DataFrame], list[str]]:
        """Count the score columns of Parquet files that fit an integer grid by their keys.

        Most scores written to files have a few decimals, so ``key = round(score * 10**d)``,
        with ``d`` the fewest decimals that carry a column's first rows exactly, is an integer
        whose range the Parquet statistics give for free. Counting by key is much faster than
        hashing a million doubles: with numba, every such column is counted in one pass over
        the files' row groups by :mod:`costdash._grid_counting`'s compiled loop (float and
        integer columns; others take the generic query); without numba, DuckDB counts
        each column on its own into a "perfect hash" (an array indexed by the key), which pays
        only from ``2**17`` keys on. Either way the same pass counts the rows whose score does
        not come back as ``key / 10**d`` to the last bit, and the keys are trusted only when
        there are none (then distinct scores have distinct keys, and ``key / 10**d`` is each
        score bit for bit). A column with such rows, a NULL, a non-finite score, or a range
        over ``2**22`` keys is left to the generic query. ``labels_are_flags``: the label
        column holds only 0 and 1 (or false and true), 1 positive, and can be read as it is.

        Returns
        -------
        list of pandas.DataFrame, list of str
            Counts (``model, score, n_pos, n``) of the columns counted here; the columns left
            to the generic query.
        """
        grids = self._grids(columns) if self.con is not None and self._kind == "parquet" else {}
        if not grids:
            return [], list(columns)
        compiled = [grid for column, grid in grids.items() if _grid_counting.available()
                    and self._types[column].split("(")[0] in _ARROW_READS_AS_DOUBLE]
        counted: dict[str, pd.DataFrame | None] = {}
        workers = self._threads or os.cpu_count() or 1
        for group in _passes(compiled, workers) if compiled else []:
            counted.update(self._count_grids_compiled(group, label, positive_values,
                                                      labels_are_flags))
        for column, grid in grids.items():
            if grid not in compiled and _GRID_BITS[0] <= max(int(grid.keys - 1).bit_length(), 1):
                counted[column] = self._count_grid_in_duckdb(grid, label, positive_values)
        frames = {c: f for c, f in counted.items() if f is not None}
        return list(frames.values()), [c for c in columns if c not in frames]

    def _grids(self, columns: Sequence[str]) -> dict[str, _grid_counting.GridColumn]:
        """The columns whose first rows sit on a decimal grid of at most ``2**22`` keys."""
        assert self.con is not None
        scores = [f"CAST({self.quote(c)} AS DOUBLE)" for c in columns]
        # fetchall, not fetchone: a result left unfinished blocks the connection (DuckDB 2).
        bounds = self.con.execute("SELECT " + ", ".join(f"MIN({s}), MAX({s})" for s in scores)
                                  + " FROM src").fetchall()[0]
        first = self.con.sql("SELECT " + ", ".join(scores) + f" FROM src LIMIT {_GRID_SAMPLE}"
                             ).to_arrow_table()
        grids = {}
        for j, column in enumerate(columns):
            low, high = bounds[2 * j], bounds[2 * j + 1]
            if low is None or not (math.isfinite(low) and math.isfinite(high)):
                continue
            sample = first.column(j).drop_null().to_numpy().astype(np.float64)
            decimals = next((d for d in range(_GRID_MAX_DECIMALS + 1)
                             if np.array_equal(np.round(sample * 10.0 ** d) / 10.0 ** d, sample)),
                            None)
            if decimals is None:
                continue
            scale = 10.0 ** decimals
            low_key, high_key = round(low * scale), round(high * scale)
            keys = high_key - low_key + 1
            # Keys past 2**53 are not exact doubles: key / scale could not give scores back.
            if (max(int(keys - 1).bit_length(), 1) <= _GRID_BITS[1]
                    and max(abs(low_key), abs(high_key)) < 2**53):
                grids[column] = _grid_counting.GridColumn(column, scale, low_key, keys)
        return grids

    def _count_grids_compiled(self, grids: list[_grid_counting.GridColumn], label: str,
                              positive_values: Sequence[Any], labels_are_flags: bool
                              ) -> dict[str, pd.DataFrame | None]:
        """All grid columns in one pass over the files' row groups, read by Arrow's Parquet
        reader and counted by the compiled loop in the same worker thread.

        Reading the row groups directly costs about DuckDB's own scan; having DuckDB hand the
        columns over as Arrow batches instead costs about twice that (it flattens the label's
        and low-cardinality columns' dictionaries), which made the whole pass 2.7-3.1 times the
        scan where this one is well under it (docs/benchmarks.md).
        """
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        names = [label] + [g.name for g in grids]
        opened = threading.local()
        wanted_as: dict[Any, Any] = {}   # the positive values as an Arrow array of each type

        def read(part: tuple[str, int]) -> Any:
            path, row_group = part
            files = opened.__dict__.setdefault("files", {})
            if path not in files:
                files[path] = pq.ParquetFile(path)
            for batch in files[path].iter_batches(_GRID_BATCH_ROWS, row_groups=[row_group],
                                                  columns=names, use_threads=False):
                labels = batch.column(0)
                if labels_are_flags:
                    positive = labels.to_numpy(zero_copy_only=False).astype(np.uint8, copy=False)
                else:
                    if labels.type not in wanted_as:
                        wanted_as[labels.type] = pa.array(list(positive_values)).cast(labels.type)
                    positive = pc.is_in(labels, value_set=wanted_as[labels.type]).to_numpy(
                        zero_copy_only=False).view(np.uint8)
                yield positive, [_as_float64(batch.column(1 + j)) for j in range(len(grids))]

        try:
            parts = [(path, i) for path in self._files
                     for i in range(pq.ParquetFile(path).metadata.num_row_groups)]
            counted = _grid_counting.count_parts(parts, read, grids, self._threads)
        except (pa.ArrowException, KeyError, ValueError, TypeError):
            # Files DuckDB reads but Arrow reads otherwise (a column missing from one file of
            # a glob, types that differ between files): the generic query counts them.
            return {g.name: None for g in grids}
        frames: dict[str, pd.DataFrame | None] = {}
        for counts in counted:
            if counts.off_grid:
                frames[counts.column.name] = None
                continue
            score, n_pos, n = counts.scores()
            frames[counts.column.name] = pd.DataFrame({
                "model": counts.column.name, "score": score, "n_pos": n_pos, "n": n})
        return frames

    def _count_grid_in_duckdb(self, grid: _grid_counting.GridColumn, label: str,
                              positive_values: Sequence[Any]) -> pd.DataFrame | None:
        """One column counted by DuckDB into an array indexed by the key (its "perfect hash")."""
        import duckdb

        assert self.con is not None
        scale = repr(grid.scale)
        score = f"CAST({self.quote(grid.name)} AS DOUBLE)"
        sql = (f"SELECT {_literal(grid.name)} AS model, CAST(k AS DOUBLE) / {scale} AS score, "
               f"n_pos, n, off FROM (SELECT CAST(round(x * {scale}) AS BIGINT) AS k, "
               f"COUNT(*) FILTER (WHERE {_is_positive_sql(positive_values)}) AS n_pos, "
               f"COUNT(*) AS n, COUNT(*) FILTER (WHERE round(x * {scale}) / {scale} <> x) AS off "
               f"FROM (SELECT {score} AS x, {self.quote(label)} AS label FROM src) AS r "
               f"GROUP BY k) AS g")
        bits = max(int(grid.keys - 1).bit_length(), 1)
        default = self.con.execute("SELECT current_setting('perfect_ht_threshold')"
                                   ).fetchall()[0][0]
        try:
            self.con.execute(f"SET perfect_ht_threshold = {bits}")
            counted = self.con.sql(sql).to_arrow_table().to_pandas()
        except duckdb.Error:
            return None  # a NaN, whose key DuckDB refuses to make: the generic query says so
        finally:
            self.con.execute(f"SET perfect_ht_threshold = {int(default)}")
        if counted["off"].sum() or counted["score"].isna().any():
            return None
        return counted.drop(columns="off")

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
        if self._temp is not None:
            self._temp.cleanup()


def _passes(grids: list[_grid_counting.GridColumn], workers: int
            ) -> list[list[_grid_counting.GridColumn]]:
    """Grid columns in groups counted in one pass each, whose arrays together stay within
    ``_GRID_PASS_BYTES`` (a column at the largest grid takes 134 MB with 2 workers)."""
    groups: list[list[_grid_counting.GridColumn]] = [[]]
    held = 0
    for grid in grids:
        size = grid.keys * 2 * (4 * workers + 8)   # each worker's int32 counts, the int64 sum
        if groups[-1] and held + size > _GRID_PASS_BYTES:
            groups.append([])
            held = 0
        groups[-1].append(grid)
        held += size
    return groups


def _as_float64(scores: Any) -> NDArray[np.float64]:
    """An Arrow column of scores as float64 values, NaN for NULL: what DuckDB's CAST gives for
    floats and integers (exactly, up to 2**53); other types (decimals) raise TypeError."""
    import pyarrow as pa

    if not (pa.types.is_floating(scores.type) or pa.types.is_integer(scores.type)):
        raise TypeError(f"scores of type {scores.type} are left to DuckDB's cast")
    return np.asarray(scores.to_numpy(zero_copy_only=False), dtype=np.float64)


def _pandas_missing_text() -> frozenset[str]:
    # pandas' default na_values (documented under read_csv), which costdash.load_predictions
    # reads CSV files with.
    try:
        from pandas._libs.parsers import STR_NA_VALUES
    except ImportError:   # pragma: no cover - the documented list, should pandas move it
        return frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                          "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
                          "nan", "null"})
    return frozenset(STR_NA_VALUES)


_PANDAS_MISSING_TEXT = _pandas_missing_text()

_GRID_BATCH_ROWS = 1 << 16
_GRID_PASS_BYTES = 512 << 20
_GRID_SAMPLE = 65536
_GRID_MAX_DECIMALS = 9
_GRID_BITS = (17, 22)

_ARROW_READS_AS_DOUBLE = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
                          "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "REAL"}
"""DuckDB types of Parquet columns whose values Arrow converts to the doubles DuckDB's CAST
gives (decimals and 128-bit integers are left to DuckDB)."""
_DUCKDB_NUMERIC = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
                   "USMALLINT", "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL"}


def _sql_text(text: str) -> str:
    """Text inside a single-quoted SQL literal."""
    return text.replace("'", "''")


class _SparkReader(_Reader):
    """Spark SQL over the temporary view ``src``; the grouped result comes back as a DataFrame."""

    def __init__(self, source: Any, master: str | None) -> None:
        if type(source).__module__.startswith("pyspark."):
            self.frame = source
            self.spark = source.sparkSession
            self.name = "Spark DataFrame"
        else:
            files, kind, self.name = _spark_paths(source)
            self.spark = _spark_session(master)
            reader = self.spark.read
            self.frame = (reader.parquet(*files) if kind == "parquet"
                          else reader.csv(files, header=True, inferSchema=True))
            if kind == "csv":
                self.missing_text = _PANDAS_MISSING_TEXT
        self._view = f"costdash_src_{os.getpid()}_{id(self)}"
        self.frame.createOrReplaceTempView(self._view)
        numeric_types = ("byte", "short", "int", "bigint", "long", "float", "double", "decimal")
        self._types = {f.name: f.dataType.simpleString().split("(")[0]
                       for f in self.frame.schema.fields}
        self.numeric = {n for n, t in self._types.items() if t in numeric_types}

    def is_text(self, column: str) -> bool:
        return self._types[column] == "string"

    def is_boolean(self, column: str) -> bool:
        return self._types[column] == "boolean"

    def looks_numeric(self, column: str) -> bool:
        return self.is_boolean(column) or super().looks_numeric(column)

    def sample(self, column: str) -> pd.Series:
        from pyspark.sql import functions as F

        rows = (self.frame.select(F.col(self.quote(column)).alias("value"))
                .where(F.col("value").isNotNull()).limit(_SAMPLE_ROWS).collect())
        return pd.Series([r["value"] for r in rows], dtype=object)

    def in_order(self, column: str, model: str | None = None
                 ) -> Iterator[tuple[str, pd.Series, pd.Series | None]]:
        # Spark reads each file's parts in order (a file's splits keep their offsets' order),
        # so each file's rows are numbered as analyze numbers them.
        from pyspark.sql import functions as F

        picked = [F.input_file_name().alias("file"),
                  F.col(self.quote(column)).cast("string").alias("value")]
        if model:
            picked.append(F.col(self.quote(model)).cast("string").alias("model"))
        rows = self.frame.select(*picked).toLocalIterator()
        while chunk := list(itertools.islice(rows, _SCAN_ROWS)):
            frame = pd.DataFrame([r.asDict() for r in chunk],
                                 columns=["file", "value"] + (["model"] if model else []))
            for file, part in frame.groupby("file", sort=False):
                name = os.path.basename(str(file).rstrip("/")) or self.name
                part = part.reset_index(drop=True)
                yield name, part["value"], part["model"] if model else None

    def columns(self) -> list[str]:
        return list(self.frame.columns)

    def quote(self, column: str) -> str:
        return "`" + column.replace("`", "``") + "`"

    def run(self, sql: str) -> pd.DataFrame:
        result = self.spark.sql(sql.replace(" FROM src", f" FROM {self._view}"))
        rows = result.collect()
        return pd.DataFrame([r.asDict() for r in rows], columns=result.columns)

    def close(self) -> None:
        self.spark.catalog.dropTempView(self._view)


def _spark_paths(source: Any) -> tuple[list[str], str, str]:
    """Local files as :func:`_expand` finds them; URIs (``hdfs://``, ``s3a://``...) are the
    cluster's to resolve, globs included, and a directory of them is read as Parquet."""
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    uris = [os.fspath(i) for i in items if "://" in os.fspath(i)]
    if not uris:
        return _expand(source)
    if len(uris) < len(items):
        raise ParameterError("give either local paths or URIs (hdfs://, s3a://...), not both")
    text = [u.lower().rstrip("/") for u in uris]
    kind = "csv" if all(u.endswith(_TEXT_EXTENSIONS) for u in text) else "parquet"
    name = uris[0] + (f" and {len(uris) - 1} more" if len(uris) > 1 else "")
    return uris, kind, name


def _spark_session(master: str | None) -> Any:
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = (SparkSession.builder.appName("costdash aggregate")
               .config("spark.ui.showConsoleProgress", "false"))
    return builder.master(master or "local[*]").getOrCreate()


# --- from grouped rows to the score-count table --------------------------------------------------

def _finish(grouped: pd.DataFrame, plan: _Plan, source: str, round_digits: int | None
            ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Refuse bad groups, then the table in its order: classifier, score decreasing, fold."""
    has_fold = plan.fold is not None
    n = grouped["n"].to_numpy(dtype=np.int64)
    model_codes, model_uniques = pd.factorize(grouped["model"])
    model_names = np.array([_key(m) for m in model_uniques] + [""], dtype=object)
    if plan.model is not None and (model_codes < 0).any():
        raise _bad_rows(source, plan.model, int(n[model_codes < 0].sum()), "missing",
                        "every row needs a model")
    if has_fold and grouped["fold"].isna().any():
        missing = grouped["fold"].isna().to_numpy()
        raise _bad_rows(source, plan.fold, int(n[missing].sum()), "missing",
                        "every row needs a fold")
    score = grouped["score"].to_numpy(dtype=np.float64, na_value=np.nan)
    if round_digits is not None:  # a rounded NaN or infinity says nothing about the exact score
        exact = grouped["score_min"].to_numpy(dtype=np.float64, na_value=np.nan)
        score = np.where(np.isfinite(exact), score, exact)
    for kind, bad in (("missing", np.isnan(score)), ("infinite", np.isinf(score))):
        if bad.any():
            first = model_names[model_codes[np.flatnonzero(bad)[0]]]
            column = first if plan.layout == "wide" else plan.score
            rows = int(n[bad & (model_codes == model_codes[np.flatnonzero(bad)[0]])].sum())
            raise _bad_rows(source, column, rows, kind, "scores must be finite numbers")
    order = list(plan.models) if plan.layout == "wide" else sorted(set(model_names[:-1]))
    if plan.layout == "long" and plan.models:
        order = [m for m in plan.models if m in set(order)]
    rank = np.array([order.index(m) if m in order else len(order) for m in model_names],
                    dtype=np.int64)[model_codes]
    n_pos = grouped["n_pos"].to_numpy(dtype=np.int64)
    # The names once as text, then taken by code: building a million Python strings first would
    # cost more than the rest of this function.
    model_text = pd.array(list(model_names), dtype="str")
    columns: dict[str, Any] = {"model": model_codes, "score": score,
                               "n_pos": n_pos, "n_neg": n - n_pos}
    keys = [rank, -score]
    if has_fold:
        fold_codes, _ = pd.factorize(grouped["fold"], sort=True)
        columns["fold"] = grouped["fold"].to_numpy()
        keys.append(fold_codes)
    sort = np.lexsort(keys[::-1])
    table = pd.DataFrame({k: model_text.take(v[sort]) if k == "model" else v[sort]
                          for k, v in columns.items()})
    for i, name in enumerate(order):
        mine = rank[sort] == i
        for column, cls in (("n_pos", "positive"), ("n_neg", "negative")):
            if not table[column].to_numpy()[mine].any():
                raise InputFileError(f"{source}: classifier '{name}' has no {cls} examples; "
                                     "both classes are needed", source=source,
                                     column=plan.label)
    distance, merged = 0.0, 0
    if round_digits is not None:
        bounds = table.assign(score_min=grouped["score_min"].to_numpy(np.float64)[sort],
                              score_max=grouped["score_max"].to_numpy(np.float64)[sort])
        distance, merged = _rounding_effect(bounds, has_fold)
    return table, {"layout": plan.layout, "input_rows": int(n.sum()),
                   "output_rows": len(table), "classifiers": tuple(order),
                   "round_digits": round_digits, "merged_bins": merged,
                   "max_roc_distance": distance}


def _rounding_effect(table: pd.DataFrame, has_fold: bool) -> tuple[float, int]:
    """The largest ROC distance rounding introduced (pooled and per-fold curves) and how many
    output bins (pooled over folds) merged different scores."""
    pooled = table.groupby(["model", "score"], sort=False).agg(
        n_pos=("n_pos", "sum"), n_neg=("n_neg", "sum"), score_min=("score_min", "min"),
        score_max=("score_max", "max")).reset_index()
    merged = int((pooled["score_min"] < pooled["score_max"]).sum())
    worst = 0.0
    for frame, curve in [(pooled, ["model"])] + ([(table, ["model", "fold"])] if has_fold else []):
        totals = frame.groupby(curve, sort=False)[["n_pos", "n_neg"]].transform("sum")
        mixed = (frame["score_min"] < frame["score_max"]).to_numpy()
        worst = max(worst, max_roc_distance(
            frame["n_pos"].to_numpy()[mixed], frame["n_neg"].to_numpy()[mixed],
            totals["n_pos"].to_numpy()[mixed], totals["n_neg"].to_numpy()[mixed]))
    return worst, merged


def _bad_rows(source: str, column: str | None, rows: int, kind: str, rule: str
              ) -> InputFileError:
    many = rows > 1
    article = "" if many else ("an " if kind[0] in "aeiou" else "a ")
    return InputFileError(f"{source}: column '{column}' has {rows:,} row{'s' if many else ''} "
                          f"with {article}{kind} value{'s' if many else ''}; {rule}",
                          source=source, column=column)


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:300] + "..."
