"""Unlabelled production scores of any size to score counts (``costdash aggregate --no-label``).

10⁸ production rows are watched exactly through their score counts: one row per period and
distinct score with the number of cases, ``[period,] score, n``, which
:func:`costdash.production_io.load_production` and :func:`costdash.watch` read like the rows.
Out of core with DuckDB, as the labelled aggregation.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from costdash.errors import InputFileError, ParameterError

__all__ = ["ProductionCounts", "aggregate_production"]


@dataclass(frozen=True, eq=False)
class ProductionCounts:
    """Score counts of production rows.

    Attributes
    ----------
    table : pandas.DataFrame
        ``[period,] score, n``, sorted by period (as text), then score.
    rows : int
        Production rows read.
    """

    table: pd.DataFrame
    rows: int

    def write(self, path: str) -> None:
        """CSV, or Parquet for a ``.parquet``/``.pq`` name."""
        if str(path).lower().endswith((".parquet", ".pq")):
            self.table.to_parquet(path, index=False)
        else:
            self.table.to_csv(path, index=False)


def _files(inputs: Sequence[str]) -> list[str]:
    found: list[str] = []
    for item in inputs:
        matches = sorted(glob.glob(item)) if any(ch in item for ch in "*?[") else [item]
        if not matches:
            raise InputFileError(f"{item}: no file matches", source=item)
        for path in matches:
            if not os.path.isfile(path):
                raise InputFileError(f"{path}: no such file", source=path)
        found.extend(matches)
    return found


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def aggregate_production(inputs: Sequence[str], *, score_column: str = "score",
                         period_column: str | None = None,
                         memory_limit: str = "1GB") -> ProductionCounts:
    """Count production rows per (period,) distinct score.

    Parameters
    ----------
    inputs : sequence of str
        CSV/TSV (gzip too) or Parquet files or globs, all with the same columns.
    score_column : str
        The deployed classifier's score column.
    period_column : str, optional
        The column holding each row's period.
    memory_limit : str
        DuckDB's memory limit (it spills to disk past it).

    Returns
    -------
    ProductionCounts

    Raises
    ------
    InputFileError
        A file is missing, a column is not there, or a score is not a finite number (the message
        names the file and column).
    """
    import duckdb

    files = _files(inputs)
    if not files:
        raise ParameterError("no production file given")
    parquet = all(f.lower().endswith((".parquet", ".pq")) for f in files)
    listing = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
    reader = (f"read_parquet({listing})" if parquet
              else f"read_csv({listing}, header=true, union_by_name=true)")
    con = duckdb.connect()
    try:
        con.execute(f"SET memory_limit='{memory_limit}'")
        columns = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {reader}").fetchall()]
        for wanted in (score_column, period_column):
            if wanted is not None and wanted not in columns:
                raise InputFileError(f"{files[0]}: there is no column '{wanted}'; columns found: "
                                     f"{', '.join(repr(c) for c in columns)}", source=files[0])
        score = f"TRY_CAST({_quote(score_column)} AS DOUBLE)"
        bad = con.execute(f"SELECT count(*) FROM {reader} WHERE {score} IS NULL "
                          f"OR NOT isfinite({score})").fetchone()[0]
        if bad:
            raise InputFileError(f"{files[0]}: column '{score_column}': {bad:,} rows are not "
                                 "finite numbers", source=files[0], column=score_column)
        keys = ([f"CAST({_quote(period_column)} AS VARCHAR) AS period"] if period_column
                else []) + [f"{score} AS score"]
        groups = ", ".join(str(i + 1) for i in range(len(keys)))
        table = con.execute(f"SELECT {', '.join(keys)}, count(*)::BIGINT AS n FROM {reader} "
                            f"GROUP BY {groups} ORDER BY {groups}").df()
    except duckdb.Error as exc:
        raise InputFileError(f"{files[0]}: cannot be read as production scores: "
                             f"{str(exc).splitlines()[0]}", source=files[0]) from None
    finally:
        con.close()
    return ProductionCounts(table=table, rows=int(table["n"].sum()))
