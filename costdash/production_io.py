"""Reading production scores: unlabelled, in the same file formats as uploads (issue 25).

A production file holds the deployed classifier's scores on new cases, one per row, or as score
counts (``score,n``: what ``costdash aggregate --no-label`` writes for 10⁸ rows), optionally with
a period column. A label column is not needed; when one is there it is ignored, and a note says
so (production labels, when they exist, arrive too late to be what this is for).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO

import numpy as np
import pandas as pd

from costdash.io.layouts import LABEL_COLUMNS, _find_column
from costdash.io.messages import _q, _quoted
from costdash.io.reading import _read_source, _read_table, _sniff_format
from costdash.errors import InputFileError

__all__ = ["ProductionScores", "load_production"]

COUNT_COLUMN = "n"
SCORE_COLUMN = "score"


@dataclass(frozen=True, eq=False)
class ProductionScores:
    """Production scores as read.

    Attributes
    ----------
    source : str
        The file's name.
    table : pandas.DataFrame
        Columns ``score``, ``n`` (cases per entry: 1 per row, or the file's counts) and, when
        the file has periods, ``period``: what :func:`costdash.watch` takes.
    period : str or None
        ``"period"`` when the table has periods.
    score_column : str
        The file's column the scores came from.
    notes : tuple of str
        What was ignored and why.
    """

    source: str
    table: pd.DataFrame
    period: str | None
    score_column: str
    notes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return int(self.table[COUNT_COLUMN].sum())


def _score_column(columns: list[str], classifier: str | None, skip: set[str],
                  source: str) -> str:
    by_lower = {c.casefold(): c for c in columns}
    for wanted in (classifier, SCORE_COLUMN):
        if wanted and wanted.casefold() in by_lower:
            return by_lower[wanted.casefold()]
    left = [c for c in columns if c not in skip]
    if len(left) == 1:
        return left[0]
    named = f"{_q(classifier)} or " if classifier else ""
    raise InputFileError(f"{source}: no score column: expected one named {named}'score' (or a "
                         f"single column besides the period and label); columns found: "
                         f"{_quoted(columns)}", source=source)


def _numbers(values: pd.Series, source: str, column: str) -> np.ndarray:
    number = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(number))
    if bad.size:
        row = int(bad[0]) + 1
        raise InputFileError(f"{source}: column {_q(column)} row {row}: {values.iloc[bad[0]]!r} "
                             f"is not a finite number ({bad.size:,} such rows)", source=source,
                             column=column)
    return number


def load_production(path: str | os.PathLike[str] | IO[bytes], *, name: str | None = None,
                    classifier: str | None = None, period_column: str | None = None,
                    max_bytes: int = 200 * 1024**2) -> ProductionScores:
    """Read a production file.

    Parameters
    ----------
    path : str, os.PathLike or binary file-like
        CSV/TSV (gzip too), Parquet or JSON lines, as uploads.
    name : str, optional
        File name for messages and format detection.
    classifier : str, optional
        The deployed classifier: its column holds the scores when there is one of that name
        (a wide predictions file of new cases); else the ``score`` column, else the only
        column left.
    period_column : str, optional
        The column holding each row's period (a date, a week, a batch id).
    max_bytes : int
        Largest file accepted.

    Returns
    -------
    ProductionScores

    Raises
    ------
    InputFileError
        No score column, a score or count that is not a number, a count below 0 or not whole,
        or no period column of that name; each message names the file, column and row.
    """
    source, data = _read_source(path, name, max_bytes)
    frame = _read_table(data, source, _sniff_format(data, source), None)
    columns = [str(c) for c in frame.columns]
    if len(frame) == 0:
        raise InputFileError(f"{source}: has a header ({_quoted(columns)}) but no data rows",
                             source=source)
    notes: list[str] = []
    period = None
    if period_column is not None:
        found = {c.casefold(): c for c in columns}.get(period_column.casefold())
        if found is None:
            raise InputFileError(f"{source}: there is no period column {_q(period_column)}; "
                                 f"columns found: {_quoted(columns)}", source=source)
        period = found
    label = _find_column(columns, None, LABEL_COLUMNS, "label", source, required=False)
    if label is not None:
        notes.append(f"{source}: column {_q(label)} looks like labels; production scores are "
                     "read without labels, so it is ignored")
    counts = {c.casefold(): c for c in columns}.get(COUNT_COLUMN)
    skip = {c for c in (period, label, counts) if c is not None}
    score_col = _score_column(columns, classifier, skip, source)
    table = {SCORE_COLUMN: _numbers(frame[score_col], source, score_col)}
    if counts is not None and counts != score_col:
        n = _numbers(frame[counts], source, counts)
        bad = np.flatnonzero((n < 0) | (n != np.floor(n)))
        if bad.size:
            raise InputFileError(f"{source}: column {_q(counts)} row {int(bad[0]) + 1}: "
                                 f"{n[bad[0]]:g} is not a whole number of cases >= 0",
                                 source=source, column=counts)
        table[COUNT_COLUMN] = n.astype(np.int64)
    else:
        table[COUNT_COLUMN] = np.ones(len(frame), np.int64)
    if period is not None:
        table["period"] = frame[period].astype(str).to_numpy()
    return ProductionScores(source=source, table=pd.DataFrame(table),
                            period="period" if period is not None else None,
                            score_column=score_col, notes=tuple(notes))
