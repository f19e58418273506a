"""Plain wide CSV files read without pandas (costdash.io.plain_csv, issue 23): the same data
set, array for array and bit for bit, as the general reader; every other file left to it (so
its messages); pandas not imported at all."""

from __future__ import annotations

import gzip
import subprocess
import sys

import numpy as np
import pytest

import costdash.io.plain_csv as plain_csv
from costdash.io import load_predictions

from tests.support.processes import REPO


def _general(monkeypatch, path, **options):
    with monkeypatch.context() as m:
        m.setattr(plain_csv, "read_plain_wide", lambda *a, **k: None)
        return load_predictions(path, **options)


def _same(fast, slow):
    assert (fast.source, fast.layout, fast.positive_label, fast.fold_labels) == \
        (slow.source, slow.layout, slow.positive_label, slow.fold_labels)
    assert fast.segments is None and slow.segments is None and fast.counted == slow.counted == ()
    assert [c.name for c in fast.scored] == [c.name for c in slow.scored]
    for f, s in zip(fast.scored, slow.scored):
        assert f.y_true.dtype == s.y_true.dtype == np.bool_
        np.testing.assert_array_equal(f.y_true, s.y_true)
        assert f.score.dtype == s.score.dtype == np.float64
        assert f.score.tobytes() == s.score.tobytes()  # bit for bit
        assert f.score.flags.writeable and f.score.flags.c_contiguous
        assert f.fold is None and s.fold is None and f.count is None and s.count is None
    # one labels array shared by the classifiers, as the general reader does
    assert len({id(c.y_true) for c in fast.scored}) == 1


def _table(rng, n, sep=",", decimal=".", label="y_true", labels=(0, 1), label_at=0,
           extra=(), newline="\n", quoted=False, ints=False):
    y = rng.random(n) < 0.3
    y[:2] = (True, False)
    cols = {label: np.where(y, labels[1], labels[0]).astype(str)}
    for k in range(3):
        score = rng.normal(size=n) + y * k
        cols[f"model {k}"] = (np.round(score * 100).astype(int).astype(str) if ints
                              else np.char.replace(np.round(score, 6).astype(str), ".", decimal))
    cols.update(extra)
    names = list(cols)
    names.insert(label_at, names.pop(0))
    head = sep.join(f'"{c}"' if quoted else c for c in names)
    rows = [sep.join(str(cols[c][i]) for c in names) for i in range(n)]
    return (head + newline + newline.join(rows) + newline).encode()


def _plain_files(rng):
    yield "plain.csv", _table(rng, 500), {}
    yield "label_last.csv", _table(rng, 300, label="Label", labels=(-1, 1), label_at=3), {}
    yield "tab.tsv", _table(rng, 300, sep="\t"), {}
    yield "comma_decimal.csv", _table(rng, 300, sep=";", decimal=","), {}
    yield "crlf_quoted.csv", _table(rng, 300, newline="\r\n", quoted=True), {}
    yield "bom.csv", b"\xef\xbb\xbf" + _table(rng, 300), {}
    yield "no_last_newline.csv", _table(rng, 300).rstrip(b"\n"), {}
    yield "blank_lines.csv", _table(rng, 300) + b"\n\n", {}
    yield "whole_numbers.csv", _table(rng, 300, ints=True), {}
    n = 300
    yield "ids.csv", _table(rng, n, extra={"id": np.arange(n).astype(str),
                                          "row_id": np.array([f"r{i}" for i in range(n)])}), {}
    yield "models.csv", _table(rng, 300), {"models": ["MODEL 2", "model 0"]}
    yield "label_option.csv", _table(rng, 300, label="outcome"), {"label_column": "OUTCOME"}
    yield "zipped.csv.gz", gzip.compress(_table(rng, 300)), {}
    yield "chunks.csv", _table(rng, 60_000), {}  # several MB: pyarrow parses it in blocks
    yield "edge.csv", (b"y,a,b\n1,1e-5,+0.5\n0,-0.0,12345678901234567890\n1,0.1,-7\n"
                       b"0,5E3,9007199254740993\n"), {}


@pytest.mark.parametrize("case", range(15))
def test_plain_files_give_the_general_readers_data_set(tmp_path, monkeypatch, case):
    name, data, options = list(_plain_files(np.random.default_rng(11)))[case]
    path = tmp_path / name
    path.write_bytes(data)
    source, raw = name, data
    if name.endswith(".gz"):
        raw = gzip.decompress(data)
    fast = plain_csv.read_plain_wide(raw, source, **options)
    assert fast is not None, name
    _same(fast, _general(monkeypatch, path, **options))
    _same(load_predictions(path, **options), fast)  # and load_predictions takes this way


NOT_PLAIN = {
    "missing.csv": b"y,a,b\n1,0.5,0.2\n0,,0.1\n1,0.7,0.3\n",
    "na.csv": b"y,a,b\n1,0.5,0.2\n0,NA,0.1\n1,0.7,0.3\n",
    "infinite.csv": b"y,a,b\n1,0.5,0.2\n0,inf,0.1\n1,0.7,0.3\n",
    "text_column.csv": b"y,a,notes\n1,0.5,x\n0,0.4,y\n1,0.7,z\n",
    "mostly_numbers.csv": b"y,a,b\n1,0.5,0.2\n0,0.4,oops\n1,0.7,0.3\n",
    "fold.csv": b"y,a,fold\n1,0.5,1\n0,0.4,1\n1,0.7,2\n0,0.1,2\n",
    "three_labels.csv": b"y,a\n1,0.5\n0,0.4\n2,0.7\n",
    "unknown_pair.csv": b"y,a\n1,0.5\n2,0.4\n1,0.7\n",
    "float_labels.csv": b"y,a\n1.0,0.5\n0.0,0.4\n1.0,0.7\n",
    "word_labels.csv": b"y,a\nyes,0.5\nno,0.4\nyes,0.7\n",
    "one_label.csv": b"y,a\n1,0.5\n1,0.4\n",
    "same_names.csv": b"y,a,a \n1,0.5,0.1\n0,0.4,0.2\n",
    "blank_name.csv": b"y,a,\n1,0.5,0.1\n0,0.4,0.2\n",
    "no_scores.csv": b"y,id\n1,1\n0,2\n",
    "no_label.csv": b"a,b\n0.5,0.1\n0.4,0.2\n",
    "header_only.csv": b"y,a,b\n",
    "ragged.csv": b"y,a,b\n1,0.5,0.2\n0,0.4\n1,0.7,0.3\n",
    "long.csv": b"model,y,score\na,1,0.5\na,0,0.4\nb,1,0.7\nb,0,0.2\n",
    "counts.csv": b"model,tp,fp,fn,tn\na,1,2,3,4\n",
}


@pytest.mark.parametrize("name", sorted(NOT_PLAIN))
def test_other_files_are_left_to_the_general_reader(name):
    assert plain_csv.read_plain_wide(NOT_PLAIN[name], name) is None


@pytest.mark.parametrize("options", [{"models": ["nope"]}, {"label_column": "nope"}])
def test_options_the_file_cannot_meet_are_left_to_the_general_reader(tmp_path, options):
    path = tmp_path / "p.csv"
    path.write_bytes(_table(np.random.default_rng(2), 50))
    assert plain_csv.read_plain_wide(path.read_bytes(), "p.csv", **options) is None
    with pytest.raises(Exception, match="nope"):  # the general reader's message, naming it
        load_predictions(path, **options)


def test_a_header_the_general_reader_refuses_is_refused_with_its_words(tmp_path, monkeypatch):
    rows = [b"%d,0.%d" % (i % 2, i) for i in range(300)]
    rows[150] += b"\x00"
    data = b"y,a\n" + b"\n".join(rows) + b"\n"
    path = tmp_path / "nul.csv"
    path.write_bytes(data)
    with pytest.raises(Exception) as fast:
        load_predictions(path)
    with pytest.raises(Exception) as slow:
        _general(monkeypatch, path)
    assert str(fast.value) == str(slow.value)
    assert "NUL" in str(fast.value) and "row 151" in str(fast.value)


def test_na_values_are_pandas_defaults():
    from pandas._libs.parsers import STR_NA_VALUES

    assert set(plain_csv.NA_VALUES) == set(STR_NA_VALUES)


def test_reading_a_plain_file_imports_no_pandas(tmp_path):
    path = tmp_path / "p.csv"
    path.write_bytes(_table(np.random.default_rng(3), 2000))
    probe = ("import sys\nfrom costdash.io import load_predictions\n"
             f"d = load_predictions({str(path)!r})\n"
             "print(len(d.scored), 'pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["3", "False"], out.stderr[-2000:]
    # ... and a file that is not plain still reads, pandas imported when needed
    path.write_bytes(NOT_PLAIN["word_labels.csv"])
    probe = probe.replace("load_predictions({", "load_predictions(positive='yes', path={")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["1", "True"], out.stderr[-2000:]
