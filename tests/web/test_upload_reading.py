"""Uploads read plain wide CSV files the fast way under the server's row limit (issue 23):
the same data set as the general reader, bit for bit, and every refusal in the same words."""

from __future__ import annotations

import io

import numpy as np
import pytest

import costdash.io.plain_csv as plain_csv
from costdash.errors import InputFileError
from costdash.io import load_predictions


def _csv(n: int, seed: int = 5) -> bytes:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.2
    y[:2] = (True, False)
    cols = [np.where(y, 1, 0).astype(str)]
    for k in range(3):
        cols.append(np.round(rng.normal(size=n) + y * k, 6).astype(str))
    rows = "\n".join(",".join(c[i] for c in cols) for i in range(n))
    return ("y_true,a,b,c\n" + rows + "\n").encode()


def _general(monkeypatch, data: bytes, **options):
    with monkeypatch.context() as m:
        m.setattr(plain_csv, "read_plain_wide", lambda *a, **k: None)
        return load_predictions(io.BytesIO(data), name="p.csv", **options)


def test_a_row_limit_still_takes_the_plain_way_with_the_same_data_set(monkeypatch):
    data = _csv(3000)
    calls = []
    real = plain_csv.read_plain_wide
    monkeypatch.setattr(plain_csv, "read_plain_wide",
                        lambda *a, **k: calls.append(k) or real(*a, **k))
    fast = load_predictions(io.BytesIO(data), name="p.csv", max_rows=3000)
    assert calls and calls[0]["max_rows"] == 3000
    monkeypatch.undo()
    slow = _general(monkeypatch, data, max_rows=3000)
    assert [c.name for c in fast.scored] == [c.name for c in slow.scored] == ["a", "b", "c"]
    assert fast.positive_label == slow.positive_label
    for f, s in zip(fast.scored, slow.scored):
        np.testing.assert_array_equal(f.y_true, s.y_true)
        assert f.score.tobytes() == s.score.tobytes()


@pytest.mark.parametrize("data", [_csv(3001), _csv(3001) + b"\n\n\n"],
                         ids=["over", "over_with_blank_lines"])
def test_over_the_row_limit_is_refused_as_the_general_reader_refuses(monkeypatch, data):
    with pytest.raises(InputFileError) as fast:
        load_predictions(io.BytesIO(data), name="p.csv", max_rows=3000)
    with pytest.raises(InputFileError) as slow:
        _general(monkeypatch, data, max_rows=3000)
    assert str(fast.value) == str(slow.value)
    assert "p.csv" in str(fast.value) and "3,000" in str(fast.value)


def test_blank_lines_do_not_count_as_rows():
    # More lines than the limit, not more rows: read, not refused.
    data = _csv(3000) + b"\n" * 50
    dataset = load_predictions(io.BytesIO(data), name="p.csv", max_rows=3000)
    assert dataset.n == 3000


def test_the_row_limit_comes_before_the_header_as_in_the_general_reader(monkeypatch):
    data = _csv(3001).replace(b"y_true,a,b,c", b"y_true,a,a,c", 1)
    with pytest.raises(InputFileError) as fast:
        load_predictions(io.BytesIO(data), name="p.csv", max_rows=3000)
    with pytest.raises(InputFileError) as slow:
        _general(monkeypatch, data, max_rows=3000)
    assert str(fast.value) == str(slow.value)
