"""Scores on a decimal grid counted per (key, label) by a compiled loop, in one pass over batches.

:func:`costdash.aggregate` counts the exact score columns of Parquet files this way when numba
is installed (a dependency of the package; without it DuckDB's own aggregate does the work).
The reason is speed: DuckDB's vectorised ``GROUP BY`` over a million distinct keys spends most
of its time on random writes into per-thread tables of 24-32 MB, and reads the file once per
score column. Here each worker thread reads a part of the input (a row group), and counts each
batch of it at once, while it is in the CPU's cache, by a loop of a few instructions per row
into an array of ``2 * keys`` entries per column; the loop releases the GIL, and so does Arrow's
reader. ``benchmarks/bench_aggregate.py`` measures both routes against the same scan floor.

A row counts only when its score is ``key / scale`` to the last bit, with ``key`` the nearest
integer to ``score * scale`` inside the column's key range: then distinct scores have distinct
keys and ``key / scale`` gives each score back exactly. Every other row (NULL, NaN, infinite,
more decimals than the grid, outside the range) is counted as *off the grid*, and a column with
any such row must be counted by the generic query instead.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

try:
    import numba
except ImportError:  # pragma: no cover - numba is a dependency; this keeps a bare install working
    numba = None

__all__ = ["GridColumn", "GridCounts", "available", "count_column", "count_parts", "warm_up"]


def available() -> bool:
    """Whether the compiled loop can run (numba imports)."""
    return numba is not None


@dataclass(frozen=True)
class GridColumn:
    """One score column's grid: scores ``(low_key + i) / scale`` for ``i`` in ``range(keys)``.

    Attributes
    ----------
    name : str
        The column's name, as the counts report it.
    scale : float
        ``10.0 ** decimals``.
    low_key : int
        The smallest key, ``round(min(score) * scale)``.
    keys : int
        Number of keys from the smallest to the largest score.
    """

    name: str
    scale: float
    low_key: int
    keys: int


@dataclass(frozen=True)
class GridCounts:
    """Rows and positives per key of one column, and the rows that were off its grid.

    Attributes
    ----------
    column : GridColumn
    n_pos, n : numpy.ndarray of int64
        Positives and rows per key, ``keys`` entries each.
    off_grid : int
        Rows whose score is not exactly a key of the grid; when positive, ``n_pos`` and ``n``
        leave those rows out and must not be used.
    """

    column: GridColumn
    n_pos: NDArray[np.int64]
    n: NDArray[np.int64]
    off_grid: int

    def scores(self) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
        """The keys that hold rows, as ``(score, n_pos, n)``, scores increasing."""
        held = np.flatnonzero(self.n)
        score = (np.float64(self.column.low_key) + held) / self.column.scale
        return score, self.n_pos[held], self.n[held]


def _count_into(scores: NDArray[np.float64], positive: NDArray[np.uint8], scale: float,
                low_key: float, counts: NDArray[np.int32]) -> int:
    """Add each row to ``counts[2 * key_index + positive]``; return the rows off the grid.

    Two loops: the first finds each row's entry (or -1) without a branch, so the compiler
    makes it SIMD (the exactness check is a division); the second only increments, the part
    bound by memory. Together about a third faster than one loop doing both. The comparison
    ``key / scale == score`` is False for NaN, so NULLs (NaN after Arrow) and NaNs are off the
    grid; infinities pass it and fall outside the range.
    """
    keys = counts.shape[0] // 2
    entries = np.empty(scores.shape[0], dtype=np.int32)
    for i in range(scores.shape[0]):
        score = scores[i]
        key = np.rint(score * scale)
        index = key - low_key
        on_grid = (key / scale == score) & (index >= 0.0) & (index < keys)
        entries[i] = np.int32(index) * 2 + np.int32(positive[i]) if on_grid else np.int32(-1)
    off = 0
    for i in range(entries.shape[0]):
        entry = entries[i]
        if entry < 0:
            off += 1
        else:
            counts[entry] += 1
    return off


if numba is not None:
    # cache=True keeps the machine code on disk (next to this file, or in the user's cache when
    # the package directory is read-only): a new process skips compiling it, though not
    # numba's own start (see warm_up).
    _count_into = numba.njit(nogil=True, cache=True)(_count_into)


def warm_up() -> threading.Thread | None:
    """Load the compiled loop in a background thread, ahead of the first batch.

    numba's first call in a process takes about half a second even when the machine code
    comes from its disk cache (it starts LLVM); started first, that overlaps with the engine's
    planning queries and first batches instead of stalling the pass. Returns the thread, or
    None without numba.
    """
    if numba is None:
        return None

    def load() -> None:
        # The signature of float64 scores without NULLs: Arrow's read-only array of them,
        # the labels converted to a new uint8 array, the counts' int32 array.
        scores = np.zeros(1)
        scores.flags.writeable = False
        _count_into(scores, np.zeros(1, dtype=np.uint8), 1.0, 0.0, np.zeros(2, dtype=np.int32))

    thread = threading.Thread(target=load, name="costdash-grid-warm-up", daemon=True)
    thread.start()
    return thread


def count_column(scores: NDArray[np.float64], positive: NDArray[np.uint8], column: GridColumn
                 ) -> GridCounts:
    """Count one column held in memory (the loop :func:`count_parts` runs per batch).

    Parameters
    ----------
    scores : numpy.ndarray of float64
    positive : numpy.ndarray of uint8
        1 for a positive example, 0 for a negative one.
    column : GridColumn

    Returns
    -------
    GridCounts

    Examples
    --------
    >>> column = GridColumn("m", scale=10.0, low_key=1, keys=3)
    >>> counted = count_column(np.array([0.1, 0.3, 0.3, 0.25]), np.array([1, 0, 1, 0], np.uint8),
    ...                        column)
    >>> counted.n.tolist(), counted.n_pos.tolist(), counted.off_grid
    ([1, 0, 2], [1, 0, 1], 1)
    """
    counter = _Counter(column)
    counter.add(np.ascontiguousarray(scores, dtype=np.float64),
                np.ascontiguousarray(positive, dtype=np.uint8))
    return _Counter.sum([counter])


def _counts_of(column: GridColumn, counts: NDArray[np.int64], off: int) -> GridCounts:
    pairs = counts.reshape(-1, 2)
    return GridCounts(column=column, n_pos=pairs[:, 1].copy(), n=pairs.sum(axis=1), off_grid=off)


def count_parts(parts: Sequence[Any], read: Callable[[Any], Iterable[tuple[Any, list[Any]]]],
                columns: Sequence[GridColumn], workers: int | None = None) -> list[GridCounts]:
    """Count every column over independent parts of the input, in parallel worker threads.

    Each worker takes the next part, reads it and counts it at once, while its batches are
    still in the CPU's cache, into counts of its own; the workers' counts are added at the end.
    This is the route for Parquet files, whose row groups are such parts.

    Parameters
    ----------
    parts : sequence
        Whatever ``read`` takes (for Parquet: a file and a row group).
    read : callable
        ``read(part)`` yields ``(positive, [scores of columns[0], scores of columns[1], ...])``
        batches: ``uint8`` arrays of 0/1 and ``float64`` arrays (NaN for NULL). It runs in the
        worker threads, so it must release the GIL to gain from them (Arrow's readers do).
    columns : sequence of GridColumn
    workers : int, optional
        Threads; default: one per CPU, at most one per part.

    Returns
    -------
    list of GridCounts
        In the order of ``columns``.
    """
    workers = max(1, min(len(parts), workers or os.cpu_count() or 1))
    pending = iter(parts)
    taking = threading.Lock()
    failures: list[BaseException] = []
    counters = [[_Counter(c) for c in columns] for _ in range(workers)]

    def work(mine: list[_Counter]) -> None:
        while not failures:
            with taking:
                part = next(pending, None)
            if part is None:
                return
            try:
                for positive, scores in read(part):
                    for counter, column_scores in zip(mine, scores):
                        counter.add(column_scores, positive)
            except BaseException as exc:  # handed to the caller's thread below
                failures.append(exc)

    threads = [threading.Thread(target=work, args=(mine,), name=f"costdash-grid-{w}",
                                daemon=True) for w, mine in enumerate(counters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return [_Counter.sum(per_column) for per_column in zip(*counters)]


class _Counter:
    """One column's counts: an ``int32`` array for the loop (half the memory traffic of
    ``int64``), added into ``int64`` totals before any entry could overflow."""

    _ROWS_BEFORE_FLUSH = 2**31 - 1

    def __init__(self, column: GridColumn) -> None:
        self.column = column
        self.counts = np.zeros(2 * column.keys, dtype=np.int32)
        self.totals: NDArray[np.int64] | None = None   # needed only past 2**31 - 1 rows
        self.pending = 0
        self.off = 0

    def add(self, scores: NDArray[np.float64], positive: NDArray[np.uint8]) -> None:
        if self.pending + len(scores) > self._ROWS_BEFORE_FLUSH:
            self._flush()
        self.pending += len(scores)
        self.off += int(_count_into(scores, positive, float(self.column.scale),
                                    float(self.column.low_key), self.counts))

    def _flush(self) -> None:
        if self.totals is None:
            self.totals = np.zeros(self.counts.shape, dtype=np.int64)
        self.totals += self.counts
        self.counts[:] = 0
        self.pending = 0

    def _total(self) -> NDArray[np.int64]:
        totals = self.counts + (0 if self.totals is None else self.totals)
        return totals.astype(np.int64, copy=False)

    @staticmethod
    def sum(counters: Sequence[_Counter]) -> GridCounts:
        """The counts of several workers' counters of one column, added."""
        totals = counters[0]._total()
        for other in counters[1:]:
            totals = totals + other._total()
        return _counts_of(counters[0].column, totals, sum(c.off for c in counters))
