"""The compiled counting loop of the grid route (:mod:`costdash._grid_counting`) against numpy's
own counting of the same rows, and its thread pipeline's failure handling."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costdash import _grid_counting
from costdash._grid_counting import GridColumn, count_column, count_parts

pytestmark = pytest.mark.skipif(not _grid_counting.available(), reason="numba is a dependency")


def expected_counts(scores: np.ndarray, positive: np.ndarray, column: GridColumn):
    """Counts per key the slow way: which rows are exactly on the grid, then np.add.at."""
    with np.errstate(invalid="ignore"):
        key = np.round(scores * column.scale)
        index = key - column.low_key
        on = (key / column.scale == scores) & (index >= 0) & (index < column.keys)
    n = np.zeros(column.keys, np.int64)
    n_pos = np.zeros(column.keys, np.int64)
    np.add.at(n, index[on].astype(np.int64), 1)
    np.add.at(n_pos, index[on & (positive == 1)].astype(np.int64), 1)
    return n, n_pos, int((~on).sum())


@settings(max_examples=60, deadline=None)
@given(decimals=st.integers(0, 6), low=st.integers(-10**6, 10**6), keys=st.integers(1, 3000),
       rows=st.integers(0, 400), seed=st.integers(0, 2**32 - 1))
def test_counts_agree_with_numpy_on_and_off_the_grid(decimals, low, keys, rows, seed):
    rng = np.random.default_rng(seed)
    column = GridColumn("m", 10.0 ** decimals, low, keys)
    scores = (low + rng.integers(-3, keys + 3, rows)) / column.scale   # some outside the range
    odd = rng.random(rows)
    scores[odd < 0.05] += 0.5 / column.scale / 7                           # between two keys
    scores[(odd >= 0.05) & (odd < 0.07)] = np.nan
    scores[(odd >= 0.07) & (odd < 0.08)] = np.inf
    scores[(odd >= 0.08) & (odd < 0.09)] = -np.inf
    positive = (rng.random(rows) < 0.3).astype(np.uint8)
    counted = count_column(scores, positive, column)
    n, n_pos, off = expected_counts(scores, positive, column)
    np.testing.assert_array_equal(counted.n, n)
    np.testing.assert_array_equal(counted.n_pos, n_pos)
    assert counted.off_grid == off
    assert counted.n.sum() + counted.off_grid == rows


def test_scores_come_back_bit_for_bit_and_batches_add_up():
    rng = np.random.default_rng(3)
    column = GridColumn("m", 1e6, -250_000, 1_000_001)
    scores = np.round(rng.random(50_000) - 0.25, 6)
    positive = (rng.random(50_000) < 0.1).astype(np.uint8)
    whole = count_column(scores, positive, column)
    score, n_pos, n = whole.scores()
    np.testing.assert_array_equal(score, np.unique(scores))       # exactly the rows' scores
    assert n.sum() == 50_000 and n_pos.sum() == positive.sum()
    mirrored = GridColumn("b", 1e6, -750_000, 1_000_001)
    parts = [(i, i + 7_000) for i in range(0, 50_000, 7_000)]

    def read(part):
        start, stop = part
        yield positive[start:stop], [scores[start:stop], -scores[start:stop]]

    in_parts = count_parts(parts, read, [column, mirrored], workers=2)
    np.testing.assert_array_equal(in_parts[0].n, whole.n)
    np.testing.assert_array_equal(in_parts[0].n_pos, whole.n_pos)
    assert in_parts[1].off_grid == 0
    np.testing.assert_array_equal(in_parts[1].scores()[0], np.unique(-scores))


def test_nulls_are_off_the_grid():
    scores = pa.array([0.5, None, 0.25]).to_numpy(zero_copy_only=False)
    counted = count_column(scores, np.array([1, 0, 1], np.uint8), GridColumn("s", 100.0, 25, 26))
    assert (counted.n.sum(), counted.off_grid) == (2, 1)


def test_a_failing_part_stops_the_workers_and_reaches_the_caller():
    taken = []

    def read(part):
        taken.append(part)
        if part == 3:
            raise OSError("row group 3 is damaged")
        yield np.ones(2, np.uint8), [np.array([0.0, 1.0])]

    with pytest.raises(OSError, match="row group 3 is damaged"):
        count_parts(range(100_000), read, [GridColumn("s", 1.0, 0, 2)], workers=2)
    assert len(taken) < 100_000       # the workers stopped taking parts


def test_counts_flushed_to_int64_before_the_int32_array_could_overflow(monkeypatch):
    rng = np.random.default_rng(5)
    column = GridColumn("m", 100.0, 0, 101)
    scores = rng.integers(0, 101, 10_000) / 100.0
    positive = (rng.random(10_000) < 0.5).astype(np.uint8)
    whole = count_column(scores, positive, column)
    monkeypatch.setattr(_grid_counting._Counter, "_ROWS_BEFORE_FLUSH", 1_500)

    def read(start):
        yield positive[start:start + 1_000], [scores[start:start + 1_000]]

    flushed, = count_parts(range(0, 10_000, 1_000), read, [column], workers=1)
    np.testing.assert_array_equal(flushed.n, whole.n)
    np.testing.assert_array_equal(flushed.n_pos, whole.n_pos)
