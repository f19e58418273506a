"""Tests of costdash.io.load_predictions: formats, layouts, options and every error message."""

from __future__ import annotations

import gzip
import io
import json
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costdash.dataset import CountedClassifier, Dataset, ScoredClassifier
from costdash.errors import InputFileError, ParameterError
from costdash.io import load_predictions
from costdash.roc import roc_curve, roc_of

WIDE = pd.DataFrame({
    "y_true": [1, 0, 1, 0, 1, 0],
    "a": [0.9, 0.1, 0.8, 0.3, 0.6, 0.2],
    "b": [0.4, 0.5, 0.7, 0.1, 0.2, 0.9],
})


def write(tmp_path, name, content):
    """Write ``content`` (str, bytes or DataFrame as CSV) to ``tmp_path/name``; return the path."""
    path = tmp_path / name
    if isinstance(content, pd.DataFrame):
        content = content.to_csv(index=False)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def check_wide(ds, frame=WIDE, source=None):
    assert ds.layout == "wide"
    assert ds.positive_label == "1"
    assert ds.names == ("a", "b")
    if source:
        assert ds.source == source
    y = frame["y_true"].to_numpy() == 1
    for clf in ds.scored:
        assert isinstance(clf, ScoredClassifier)
        assert clf.y_true is ds.scored[0].y_true  # paired comparisons rely on one shared array
        assert clf.y_true.dtype == bool and clf.score.dtype == np.float64
        assert clf.score.flags.c_contiguous
        np.testing.assert_array_equal(clf.y_true, y)
        np.testing.assert_array_equal(clf.score, frame[clf.name].to_numpy(float))
        assert clf.fold is None


# --- formats ------------------------------------------------------------------------------------

def _bytes_of(df, fmt):
    if fmt == "parquet":
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        return buf.getvalue()
    if fmt == "jsonl":
        return df.to_json(orient="records", lines=True).encode()
    if fmt == "json":
        return df.to_json(orient="records").encode()
    sep = {"csv": ",", "tsv": "\t", "semicolon": ";", "pipe": "|"}[fmt]
    return df.to_csv(index=False, sep=sep).encode()


@pytest.mark.parametrize("fmt, name", [
    ("csv", "p.csv"), ("tsv", "p.tsv"), ("semicolon", "p.csv"), ("pipe", "p.txt"),
    ("parquet", "p.parquet"), ("jsonl", "p.jsonl"), ("jsonl", "p.ndjson"), ("json", "p.json"),
    ("jsonl", "p.txt"),  # JSON lines recognised by content
])
def test_wide_round_trip_each_format(tmp_path, fmt, name):
    path = write(tmp_path, name, _bytes_of(WIDE, fmt))
    check_wide(load_predictions(path), source=name)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "jsonl"])
@pytest.mark.parametrize("name", ["p.gz", "p.data"])  # gzip is found by its magic bytes
def test_gzip_compressed(tmp_path, fmt, name):
    path = write(tmp_path, name, gzip.compress(_bytes_of(WIDE, fmt)))
    check_wide(load_predictions(path))


def test_file_like_input_uses_name(tmp_path):
    data = gzip.compress(_bytes_of(WIDE, "tsv"))
    ds = load_predictions(io.BytesIO(data), name="upload.tsv.gz")
    check_wide(ds, source="upload.tsv.gz")
    check_wide(load_predictions(io.BytesIO(_bytes_of(WIDE, "parquet")), name="x.parquet"))


def test_file_like_input_without_name_and_too_big():
    with pytest.raises(InputFileError, match=r"^upload: is 10\.0 kB, over the 100 bytes limit"):
        load_predictions(io.BytesIO(b"x" * 10240), max_bytes=100)


def test_csv_details_bom_crlf_spaces_and_index_column(tmp_path):
    text = "\ufeff,y_true , a, b\r\n" + "".join(
        f"{i},{r.y_true}, {r.a}, {r.b}\r\n" for i, r in enumerate(WIDE.itertuples()))
    check_wide(load_predictions(write(tmp_path, "p.csv", text)))


def test_pathlike_str_and_bytes_paths(tmp_path):
    path = write(tmp_path, "p.csv", WIDE)
    check_wide(load_predictions(str(path)))
    check_wide(load_predictions(path, name="shown.csv"), source="shown.csv")


# --- layouts ------------------------------------------------------------------------------------

def test_wide_with_folds_and_models_filter(tmp_path):
    df = WIDE.assign(fold=["f2", "f2", "f10", "f10", "f1", "f1"], c=1.0, note="x")
    ds = load_predictions(write(tmp_path, "p.csv", df), models=["c", "A"])
    assert ds.names == ("c", "a")  # in the order asked for, matched ignoring case
    assert ds.fold_labels == ("f1", "f10", "f2")
    np.testing.assert_array_equal(ds.scored[0].fold, [2, 2, 1, 1, 0, 0])
    assert ds.scored[0].fold.dtype == np.int64
    assert ds.n_folds == 3


def test_numeric_folds_sort_numerically(tmp_path):
    df = WIDE.assign(run=[10, 10, 2, 2, 1, 1])
    ds = load_predictions(write(tmp_path, "p.csv", df))
    assert ds.fold_labels == ("1", "2", "10")
    np.testing.assert_array_equal(ds.scored[1].fold, [2, 2, 1, 1, 0, 0])


def test_long_layout_with_folds(tmp_path):
    text = ("Model,label,Score,cv_fold\n"
            "a,1,0.9,0\nb,1,0.4,0\na,0,0.1,0\nb,0,0.5,0\n"
            "a,1,0.8,1\nb,0,0.2,1\na,0,0.3,1\nb,1,0.7,1\n")
    ds = load_predictions(write(tmp_path, "long.csv", text))
    assert ds.layout == "long" and ds.names == ("a", "b") and ds.fold_labels == ("0", "1")
    a, b = ds.scored
    np.testing.assert_array_equal(a.score, [0.9, 0.1, 0.8, 0.3])  # file order within a model
    np.testing.assert_array_equal(a.y_true, [True, False, True, False])
    np.testing.assert_array_equal(b.score, [0.4, 0.5, 0.2, 0.7])
    np.testing.assert_array_equal(b.fold, [0, 0, 1, 1])
    assert a.score.flags.c_contiguous and b.y_true.flags.c_contiguous
    ds = load_predictions(write(tmp_path, "long.csv", text), models=["b"])
    assert ds.names == ("b",)


def test_long_layout_by_options(tmp_path):
    text = "who,truth,value\nm1,yes,3\nm1,no,1\nm2,no,2\nm2,yes,5\n"
    ds = load_predictions(write(tmp_path, "p.csv", text), model_column="who",
                          score_column="VALUE")
    assert ds.layout == "long" and ds.names == ("m1", "m2") and ds.positive_label == "yes"
    np.testing.assert_array_equal(ds.scored[1].score, [2.0, 5.0])


def test_counts_layout(tmp_path):
    text = ("model,TP,fp,fn,tn,threshold\n"
            "a,10,0,0,20,inf\na,8,5,2,15,0.5\na,10,20,0,0,\nb,5,2,5,18,0.7\n")
    ds = load_predictions(write(tmp_path, "counts.csv", text))
    assert ds.layout == "counts" and ds.names == ("a", "b") and not ds.scored
    a, b = ds.counted
    assert isinstance(a, CountedClassifier)
    np.testing.assert_array_equal(a.tp, [10, 8, 10])
    np.testing.assert_array_equal(a.tn, [20, 15, 0])
    assert a.tp.dtype == np.int64
    np.testing.assert_array_equal(a.threshold, [np.inf, 0.5, np.nan])
    assert (a.n_pos, a.n_neg, b.n_pos, b.n_neg) == (10, 20, 10, 20)
    assert ds.n == 30


def test_counts_without_threshold_and_filter(tmp_path):
    text = "classifier,tp,fp,fn,tn\nx,1,2,3,4\ny,2,2,2,4\n"
    ds = load_predictions(write(tmp_path, "c.tsv", text.replace(",", "\t")), models=["y"])
    assert ds.names == ("y",) and ds.counted[0].threshold is None
    assert ds.positive_label == "1"


def test_layout_override(tmp_path):
    # "model" and "score" would make it long; forcing wide keeps them as plain columns
    df = pd.DataFrame({"y": [0, 1, 0, 1], "model": [1.0, 2, 3, 4], "score": [4.0, 3, 2, 1]})
    ds = load_predictions(write(tmp_path, "p.csv", df), layout="wide")
    assert ds.layout == "wide" and ds.names == ("model", "score")


def test_label_column_override(tmp_path):
    df = WIDE.rename(columns={"y_true": "outcome"}).assign(label=[0.5] * 6)
    ds = load_predictions(write(tmp_path, "p.csv", df), label_column="OUTCOME")
    assert ds.names == ("a", "b", "label")
    np.testing.assert_array_equal(ds.scored[0].y_true, WIDE["y_true"] == 1)


# --- positive class -----------------------------------------------------------------------------

@pytest.mark.parametrize("labels, positive_label", [
    (["0", "1"], "1"), (["0.0", "1.0"], "1"), (["False", "True"], "True"),
    # text that pyarrow reads as booleans comes back as "True"
    (["false", "true"], "True"), (["FALSE", "TRUE"], "True"), (["-1", "1"], "1"),
    (["neg", "pos"], "pos"), (["Negative", "Positive"], "Positive"), (["no", "yes"], "yes"),
    (["N", "Y"], "Y"), ([" no", "yes "], "yes"),
])
def test_positive_label_rules(tmp_path, labels, positive_label):
    lab = [labels[1], labels[0]] * 2
    text = "y_true,a\n" + "".join(f"{v},{i}\n" for i, v in enumerate(lab))
    ds = load_predictions(write(tmp_path, "p.csv", text))
    assert ds.positive_label == positive_label
    np.testing.assert_array_equal(ds.scored[0].y_true, [True, False, True, False])


def test_positive_option(tmp_path):
    text = "label,a\ncat,1\ndog,2\ncat,3\n"
    ds = load_predictions(write(tmp_path, "p.csv", text), positive="dog")
    assert ds.positive_label == "dog" and ds.n_pos == 1
    ds = load_predictions(write(tmp_path, "p.csv", text), positive="CAT")
    assert ds.positive_label == "cat" and ds.n_pos == 2
    # a number given as text picks the integer label, and can flip the obvious pair
    ds = load_predictions(write(tmp_path, "q.csv", WIDE), positive="0")
    assert ds.positive_label == "0" and ds.n_pos == 3
    np.testing.assert_array_equal(ds.scored[0].y_true, WIDE["y_true"] == 0)


def test_boolean_parquet_labels(tmp_path):
    df = WIDE.assign(y_true=WIDE["y_true"].astype(bool))
    ds = load_predictions(write(tmp_path, "p.parquet", _bytes_of(df, "parquet")))
    assert ds.positive_label == "True" and ds.n_pos == 3


# --- missing values -----------------------------------------------------------------------------

def test_drop_missing_wide_drops_rows_missing_any_used_column(tmp_path):
    text = ("y_true,a,b,note\n1,0.9,0.4,\n0,,0.5,x\n1,0.8,inf,\n,0.3,0.1,\n"
            "1,0.6,0.2,\n0,0.2,0.9,\n")
    ds = load_predictions(write(tmp_path, "p.csv", text), drop_missing=True)
    np.testing.assert_array_equal(ds.scored[0].score, [0.9, 0.6, 0.2])
    np.testing.assert_array_equal(ds.scored[1].score, [0.4, 0.2, 0.9])
    # with only column a in use, b's infinity does not cost a row
    ds = load_predictions(write(tmp_path, "p.csv", text), drop_missing=True, models=["a"])
    np.testing.assert_array_equal(ds.scored[0].score, [0.9, 0.8, 0.6, 0.2])


def test_drop_missing_long_and_counts(tmp_path):
    text = "model,y,score\na,1,0.9\na,0,\nb,1,0.4\nb,0,0.3\na,0,0.2\n"
    ds = load_predictions(write(tmp_path, "l.csv", text), drop_missing=True)
    np.testing.assert_array_equal(ds.scored[0].score, [0.9, 0.2])
    text = "model,tp,fp,fn,tn\na,1,1,1,1\na,,1,1,1\n"
    ds = load_predictions(write(tmp_path, "c.csv", text), drop_missing=True)
    assert len(ds.counted[0].tp) == 1


# --- errors -------------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
RANDOM = np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes()
MANY_NAN = "y_true,a\n" + "".join(f"{i % 2},{'' if i > 2 else i}\n" for i in range(12))
FOLD_ONE_CLASS = "y_true,a,fold\n1,0.1,1\n0,0.2,1\n1,0.3,2\n1,0.4,2\n"
COUNTS = "model,tp,fp,fn,tn\n"

ERRORS = [
    # (file name, content, options, message regex)
    ("empty.csv", b"", {}, r"^empty\.csv: is empty \(0 bytes\)$"),
    ("blank.csv", "\n\n  \n", {}, r"^blank\.csv: contains only blank space"),
    ("head.csv", "y_true,a,b\n", {},
     r"^head\.csv: has a header \('y_true', 'a', 'b'\) but no data"),
    ("nolabel.csv", "truthy,a\n1,0.5\n", {},
     r"^nolabel\.csv: no label column: expected one named y_true, label, target.*"
     r"--label-column.*columns found: 'truthy', 'a'$"),
    ("one.csv", "y_true,a\n1,0.5\n1,0.2\n", {},
     r"^one\.csv: column 'y_true' has only one label, '1'"),
    ("three.csv", "label,a\na,1\nb,2\nc,3\n", {},
     r"^three\.csv: column 'label' has 3 labels \('a', 'b', 'c'\); expected two classes"),
    ("many.csv", "y,s\n" + "".join(f"{i},0\n" for i in range(12)), {},
     r"has 12 labels \('0', '1', '2', '3', .*'9' and 2 more\)"),
    ("pets.csv", "y_true,a\ncat,1\ndog,2\n", {},
     r"^pets\.csv: column 'y_true' has labels 'cat', 'dog'; say which is positive with "
     r"--positive LABEL$"),
    ("text.csv", "y_true,a,b\n1,0.5,0.1\n0,0.2,abc\n1,0.3,0.2\n0,0.4,x\n", {},
     r"^text\.csv: column 'b' has 2 non-numeric values \(first: 'abc'\) in rows 2, 4; "
     r"scores must be numbers"),
    ("text_long.csv", "model,y,score\na,1,0.5\na,0,high\n", {},
     r"column 'score' has 1 non-numeric value \(first: 'high'\) in row 2"),
    ("nan.csv", "y_true,a\n1,0.5\n0,\n1,NaN\n0,0.1\n", {},
     r"^nan\.csv: column 'a' has 2 missing values in rows 2, 3; fix them or use --drop-missing"),
    ("nanlabel.csv", "y_true,a\n1,0.5\n,0.3\n0,0.1\n", {},
     r"column 'y_true' has 1 missing value in row 2; fix it or use --drop-missing"),
    ("many_nan.csv", MANY_NAN, {}, r"9 missing values in rows 4, 5, 6, 7, 8 and 4 more;"),
    ("inf.csv", "y_true,a\n1,inf\n0,0.2\n1,-inf\n", {},
     r"^inf\.csv: column 'a' has 2 infinite values in rows 1, 3; scores must be finite; "
     r".*--drop-missing"),
    ("allnan.csv", "y_true,a\n1,\n0,\n", {"drop_missing": True},
     r"^allnan\.csv: no rows left after dropping all 2 rows"),
    ("dup.csv", "y_true,a,b,a\n1,1,2,3\n0,2,3,4\n", {},
     r"^dup\.csv: column name 'a' appears more than once in the header \(columns 2 and 4\)"),
    ("fold.csv", FOLD_ONE_CLASS, {},
     r"^fold\.csv: fold '2' has only '1' labels in column 'y_true' \(rows 3, 4\); each fold"),
    ("lfold.csv", "model,y,score,fold\na,1,1,x\na,0,2,x\na,1,3,z\na,0,4,z\nb,1,1,x\nb,0,2,x\n"
     "b,0,3,z\nb,0,4,z\n", {}, r"model 'b' in fold 'z' has only '0' labels .*rows 7, 8"),
    ("longone.csv", "model,y,score\na,1,0.5\na,0,0.2\nb,0,0.1\nb,0,0.3\n", {},
     r"^longone\.csv: model 'b' has only '0' labels in column 'y' \(rows 3, 4\); each "
     r"classifier needs both classes"),
    ("neg.csv", COUNTS + "a,1,0,1,1\na,1,-1,1,2\n", {},
     r"^neg\.csv: column 'fp' has negative counts \(-1\) in row 2; counts must be whole"),
    ("frac.csv", COUNTS + "a,1,0,1,1\na,2.5,0,-0.5,1\n", {},
     r"column 'tp' has non-integer counts \(2.5\) in row 2"),
    ("nancount.csv", COUNTS + "a,1,0,1,\n", {}, r"column 'tn' has 1 missing value in row 1"),
    ("wordcount.csv", COUNTS + "a,1,0,1,many\n", {}, r"column 'tn' has 1 non-numeric value"),
    ("totals.csv", COUNTS + "a,5,0,5,10\nb,1,1,1,1\na,4,1,6,9\na,4,1,5,10\na,3,0,5,9\n", {},
     r"^totals\.csv: model 'a': row 1 has tp\+fn = 10 and fp\+tn = 10, but rows 4, 5 have "
     r"other totals"),
    ("nopos.csv", COUNTS + "a,0,1,0,4\n", {},
     r"model 'a' has no positive \(tp\+fn\) examples \(row 1\)"),
    ("thr.csv", "model,tp,fp,fn,tn,cutoff\na,1,1,1,1,high\n", {},
     r"column 'cutoff' has 1 non-numeric value \(first: 'high'\) in row 1; thresholds must"),
    ("nomodel.csv", "tp,fp,fn,tn\n1,1,1,1\n", {}, r"^nomodel\.csv: no model column"),
    ("random.csv", RANDOM, {}, r"^random\.csv: is a binary file"),
    ("image.csv", PNG, {}, r"^image\.csv: looks like a PNG image"),
    ("book.csv", b"PK\x03\x04" + RANDOM, {}, r"Excel workbook \(export the sheet as CSV\)"),
    ("big.csv", "y_true,a\n" + "1,0.5\n0,0.25\n" * 100, {"max_bytes": 1000},
     r"^big\.csv: is 1\.3 kB, over the 1000 bytes limit$"),
    ("bomb.csv.gz", gzip.compress(b"y_true,a\n" + b"1,0.5\n" * 1000), {"max_bytes": 1000},
     r"^bomb\.csv\.gz: unpacks to more than the 1000 bytes limit"),
    ("broken.gz", b"\x1f\x8b\x08\x00" + RANDOM[:50], {}, r"^broken\.gz: is not a valid gzip"),
    ("broken.parquet", b"PAR1" + RANDOM[:100], {}, r"^broken\.parquet: cannot be read as Parquet"),
    ("fake.parquet", "y_true,a\n1,2\n", {}, r"fake\.parquet: is not a valid Parquet file"),
    ("bad.jsonl", '{"y_true": 1, "a": 0.5}\n{"y_true": 0, "a": \n', {},
     r"^bad\.jsonl: is not valid JSON lines"),
    ("ragged.csv", "y_true,a\n1,0.5\n0,0.5,7\n", {},
     r"^ragged\.csv: row 2 has 3 fields but the header has 2"),
    ("nanfold.csv", "y_true,a,fold\n1,0.5,1\n0,0.2,\n", {},
     r"column 'fold' has 1 missing value in row 2"),
    ("nanmodel.csv", "model,y,score\na,1,0.5\n,0,0.2\n", {},
     r"column 'model' has 1 missing value in row 2"),
    ("widehead.csv", ",".join(["y_true"] + [f"m{i:05d}" for i in range(3000)] + ["m00007"])
     + "\n" + ",".join(["1"] * 3002) + "\n", {},
     r"column name 'm00007' appears more than once in the header \(columns 9 and 3002\)"),
    ("noscore.csv", "y_true,comment\n1,good\n0,bad\n", {},
     r"^noscore\.csv: no score columns besides the label 'y_true'.*columns found: "
     r"'y_true', 'comment'"),
]


@pytest.mark.parametrize("name, content, options, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_input_errors(tmp_path, name, content, options, message):
    path = write(tmp_path, name, content)
    with pytest.raises(InputFileError, match=message) as info:
        load_predictions(path, **options)
    assert info.value.source == name


def test_missing_path_and_directory(tmp_path):
    with pytest.raises(InputFileError, match=r"^nope\.csv: no such file \(.*nope\.csv\)"):
        load_predictions(tmp_path / "nope.csv")
    with pytest.raises(InputFileError, match=r"is a directory"):
        load_predictions(tmp_path)


def test_error_attributes(tmp_path):
    text = "y_true,a\n" + "1,0.5\n0,\n" * 8
    with pytest.raises(InputFileError) as info:
        load_predictions(write(tmp_path, "p.csv", text))
    assert info.value.column == "a"
    assert info.value.rows == (2, 4, 6, 8, 10)
    assert "and 3 more" in str(info.value)


def test_row_numbers_refer_to_the_file_after_dropping(tmp_path):
    text = "y_true,a,fold\n1,,1\n1,0.2,1\n0,0.3,1\n1,0.4,2\n1,0.5,2\n"
    with pytest.raises(InputFileError, match=r"fold '2' has only '1' labels .*\(rows 4, 5\)"):
        load_predictions(write(tmp_path, "p.csv", text), drop_missing=True)


@pytest.mark.parametrize("options, message", [
    ({"layout": "tall"}, r"unknown layout 'tall'; choose one of auto, wide, long, counts"),
    ({"models": ["a", "zz"]}, r"^p\.csv: no classifier named 'zz'; available: 'a', 'b'$"),
    ({"models": ["y_true"]}, r"no classifier named 'y_true'"),
    ({"label_column": "outcome"},
     r"^p\.csv: there is no label column 'outcome'; columns found: 'y_true', 'a', 'b'$"),
    ({"fold_column": "cv"}, r"there is no fold column 'cv'"),
    ({"positive": "2"}, r"^p\.csv: --positive '2' is not a label in column 'y_true'; labels "
                        r"found: '0', '1'$"),
    ({"layout": "wide", "score_column": "a"}, r"score_column does not apply to the wide layout"),
    ({"max_bytes": 0}, r"max_bytes must be positive"),
])
def test_parameter_errors(tmp_path, options, message):
    with pytest.raises(ParameterError, match=message):
        load_predictions(write(tmp_path, "p.csv", WIDE), **options)


def test_long_models_filter_unknown_lists_models(tmp_path):
    text = "model,y,score\nm1,1,0.5\nm1,0,0.2\nm2,1,0.1\nm2,0,0.3\n"
    with pytest.raises(ParameterError, match=r"no classifier named 'm3'; available: 'm1', 'm2'"):
        load_predictions(write(tmp_path, "p.csv", text), models=["m3"])


def test_errors_are_never_raw_library_errors(tmp_path):
    for content in (b"\x00\x01\x02", b'{"a": 1', b"a,b\n\"unclosed,1\n", b"[1, 2", b"PAR1"):
        with pytest.raises((InputFileError, ParameterError)):
            load_predictions(write(tmp_path, "f.csv", content))


# --- size ---------------------------------------------------------------------------------------

def test_200k_row_wide_file(tmp_path):
    rng = np.random.default_rng(0)
    n = 200_000
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({"label": y, **{f"m{i}": rng.random(n) for i in range(3)},
                       "fold": rng.integers(0, 5, n)})
    path = tmp_path / "big.csv"
    pa_csv.write_csv(pa.Table.from_pandas(df, preserve_index=False), path)  # to_csv is slow
    ds = load_predictions(path)
    assert ds.names == ("m0", "m1", "m2")
    assert (ds.n, ds.n_pos, ds.n_neg) == (n, int(y.sum()), n - int(y.sum()))
    assert ds.fold_labels == ("0", "1", "2", "3", "4")
    np.testing.assert_array_equal(ds.scored[2].score, df["m2"].to_numpy())
    np.testing.assert_array_equal(np.bincount(ds.scored[0].fold), np.bincount(df["fold"]))
    assert json.dumps(ds.fold_labels)


def test_decimal_commas_in_semicolon_files(tmp_path):
    text = "y_true;a;b\n1;0,9;-1,5\n0;0,1;2\n"
    ds = load_predictions(write(tmp_path, "p.csv", text))
    np.testing.assert_array_equal(ds.scored[1].score, [-1.5, 2.0])


def test_empty_models_means_all(tmp_path):
    assert load_predictions(write(tmp_path, "p.csv", WIDE), models=[]).names == ("a", "b")


def test_drop_missing_can_remove_a_whole_model(tmp_path):
    text = "model,y,score\na,1,0.9\na,0,0.1\nb,1,\nb,0,\n"
    with pytest.raises(InputFileError, match=r"^p\.csv: model 'b' has no rows left after"):
        load_predictions(write(tmp_path, "p.csv", text), drop_missing=True)
    ds = load_predictions(write(tmp_path, "p.csv", text), drop_missing=True, models=["a"])
    assert ds.names == ("a",)


def test_row_and_classifier_limits_name_the_limit(tmp_path):
    path = tmp_path / "many.csv"
    header = ",".join(["y_true"] + [f"m{i}" for i in range(5)])
    rows = "\n".join(f"{i % 2}," + ",".join(str((i * 7 + j) % 10 / 10) for j in range(5))
                     for i in range(12))
    path.write_text(f"{header}\n{rows}\n")
    assert load_predictions(path, max_rows=12, max_classifiers=5).n == 12
    with pytest.raises(InputFileError, match=r"many.csv: has 12 data rows, more than the "
                                             r"limit of 11"):
        load_predictions(path, max_rows=11)
    with pytest.raises(InputFileError, match=r"has 5 classifiers, more than the limit of 4"):
        load_predictions(path, max_classifiers=4)
    # Choosing fewer classifiers brings a file under the limit.
    assert load_predictions(path, max_classifiers=2, models=["m0", "m3"]).names == ("m0", "m3")


# --- hostile and odd input (bugs found by the API fuzz table) -----------------------------------

def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def test_header_line_over_the_limit_is_refused_briefly(tmp_path):
    # 5 MB with no line break once made csv.reader raise "field larger than field limit".
    path = write(tmp_path, "huge.csv", b"y_true," + b"a" * 5_000_000)
    with pytest.raises(InputFileError, match=r"^huge\.csv: the first line \(the header\) is "
                                             r"over 1\.0 MB long") as info:
        load_predictions(path, max_bytes=8 * 1024**2)
    assert len(str(info.value)) < 200


def test_header_name_over_the_csv_field_limit_is_an_input_error(tmp_path):
    content = b"y_true," + b"a" * 200_000 + b"\n1,0.5\n0,0.2\n"  # a line under 1 MB
    with pytest.raises(InputFileError, match=r"^long\.csv: the header cannot be read as CSV "
                                             r"\(a column name is over 128\.0 kB long\)$"):
        load_predictions(write(tmp_path, "long.csv", content))


@pytest.mark.parametrize("rows", [6, 3000], ids=["small", "past-the-sniffed-head"])
def test_cr_only_line_endings_are_read(tmp_path, rows):
    frame = pd.concat([WIDE] * (rows // 6), ignore_index=True)
    text = frame.to_csv(index=False, lineterminator="\r")
    assert "\n" not in text
    ds = load_predictions(write(tmp_path, "mac.csv", text))
    check_wide(ds, frame)


def test_cr_only_semicolons_with_decimal_commas(tmp_path):
    ds = load_predictions(write(tmp_path, "p.csv", "y_true;a\r1;0,9\r0;0,1\r1;0,4\r"))
    np.testing.assert_array_equal(ds.scored[0].score, [0.9, 0.1, 0.4])


def test_huge_cell_is_quoted_short(tmp_path):
    content = b"y_true,a\n1," + b"5" * 5_000_000 + b"\n0,0.1\n"
    with pytest.raises(InputFileError, match=r"^huge\.csv: column 'a' has 1 non-numeric value "
                                             r"\(first: '5{60}\.\.\.' \(5,000,000 characters\)\) "
                                             r"in row 1; scores must be numbers$") as info:
        load_predictions(write(tmp_path, "huge.csv", content), max_bytes=8 * 1024**2)
    assert len(str(info.value)) < 500


def test_header_of_100k_quotes_is_quoted_short(tmp_path):
    with pytest.raises(InputFileError, match=r"^q\.csv: has a header \('\"{60}\.\.\.' "
                                             r"\(49,999 characters\)\) but no data rows$") as info:
        load_predictions(write(tmp_path, "q.csv", b'"' * 100_000))
    assert len(str(info.value)) < 500


def test_lists_of_names_in_messages_are_cut_short(tmp_path):
    names = [f"{i:03d}" + "x" * 500 for i in range(300)]
    content = ",".join(["truthy", *names]) + "\n" + ",".join(["1"] * 301) + "\n"
    with pytest.raises(InputFileError, match=r"^many\.csv: no label column: .*columns found: "
                                             r"'truthy', '000x{57}\.\.\.' \(503 characters\), .*"
                                             r" and 29\d more$") as info:
        load_predictions(write(tmp_path, "many.csv", content))
    assert len(str(info.value)) < 500


def test_control_characters_in_quoted_values_are_escaped(tmp_path):
    with pytest.raises(ParameterError, match=r"no classifier named 'a\\x07b'"):
        load_predictions(write(tmp_path, "p.csv", WIDE), models=["a\x07b"])


def test_parquet_row_limit_is_checked_before_decoding(tmp_path):
    data = bytearray(_parquet(pa.table({"y_true": np.arange(2000) % 2,
                                        "a": np.linspace(0, 1, 2000)})))
    # Garbage between the magic and the footer: no row can be decoded, only the footer's count.
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    data[4:footer] = b"\xff" * (footer - 4)
    path = write(tmp_path, "p.parquet", bytes(data))
    with pytest.raises(InputFileError, match=r"^p\.parquet: has 2,000 data rows, more than the "
                                             r"limit of 100$"):
        load_predictions(path, max_rows=100)
    with pytest.raises(InputFileError, match=r"cannot be read as Parquet"):
        load_predictions(path, max_rows=5000)  # under the limit, the damage is what is said


def test_csv_row_limit_reads_only_the_rows_up_to_the_limit(tmp_path):
    # A ragged row far past the limit: refused for the limit, so the rest was not parsed.
    content = "y_true,a\n" + "1,0.5\n0,0.2\n" * 50_000 + "1,0.5,7\n"
    with pytest.raises(InputFileError, match=r"^p\.csv: has about 100,001 data rows, more than "
                                             r"the limit of 1,000$"):
        load_predictions(write(tmp_path, "p.csv", content), max_rows=1000)
    with pytest.raises(InputFileError, match=r"row 100001 has 3 fields"):
        load_predictions(write(tmp_path, "p.csv", content), max_rows=200_000)


@pytest.mark.parametrize("content", [
    "y_true,a\n" + "\n" * 50 + "1,0.5\n\n\n0,0.2\n\n1,0.7\n" + "\n" * 50,
    'label,a\n"x\n\n\n\ny",0.5\n"z\n\n\nw",0.2\n"x\n\n\n\ny",0.7\n',
], ids=["blank-lines", "line-breaks-in-quoted-labels"])
def test_csv_row_limit_counts_rows_not_lines(tmp_path, content):
    ds = load_predictions(write(tmp_path, "p.csv", content), max_rows=3,
                          positive=None if content.startswith("y_true") else "z\n\n\nw")
    assert ds.n == 3


def test_jsonl_row_limit(tmp_path):
    content = "".join(f'{{"y_true": {i % 2}, "a": 0.5}}\n' for i in range(50))
    with pytest.raises(InputFileError, match=r"has about 50 data rows, more than the limit of 9"):
        load_predictions(write(tmp_path, "p.jsonl", content), max_rows=9)
    assert load_predictions(write(tmp_path, "p.jsonl", content), max_rows=50).n == 50


@pytest.mark.parametrize("value, shown", [
    ("99999999999999999999", "1e+20"),  # over int64: the cast used to wrap it to -2**63
    ("18446744073709551615", "1.84467e+19"),  # uint64's largest
    ("9007199254740993", "9007199254740992"),  # past 2**53 float64 cannot hold it exactly
    ("1e300", "1e+300"),
])
def test_counts_too_large_are_refused(tmp_path, value, shown):
    content = COUNTS + f"a,5,5,5,5\na,{value},1,2,3\n"
    with pytest.raises(InputFileError, match=rf"^c\.csv: column 'tp' has counts too large "
                                             rf"\({re.escape(shown)}\) in row 2; counts must be "
                                             rf"whole numbers, 0 or more and below "
                                             rf"9,007,199,254,740,992") as info:
        load_predictions(write(tmp_path, "c.csv", content))
    assert (info.value.column, info.value.rows) == ("tp", (2,))


def test_counts_just_under_the_limit_are_kept_exactly(tmp_path):
    big = 2**53 - 1
    ds = load_predictions(write(tmp_path, "c.csv", COUNTS + f"a,{big},1,1,1\n"))
    assert int(ds.counted[0].tp[0]) == big


def test_nul_past_the_sniffed_head_is_refused_with_row_and_column(tmp_path):
    head = "".join(f"pos,{i % 7 / 10}\n" for i in range(3000))  # ~21 kB: past the 16 kB sniffed
    content = "y_true,a\n" + head + "neg,0.1\nneg\x00,0.2\n"
    with pytest.raises(InputFileError, match=r"^late\.csv: has a NUL character \(byte 0\) in row "
                                             r"3002, column 'y_true' \(line 3003\)") as info:
        load_predictions(write(tmp_path, "late.csv", content), positive="neg\x00")
    assert (info.value.column, info.value.rows) == ("y_true", (3002,))


def test_nul_in_json_and_parquet_values_is_refused(tmp_path):
    jsonl = '{"y_true": "neg\\u0000", "a": 0.5}\n{"y_true": "pos", "a": 0.2}\n'
    assert "\x00" not in jsonl  # an escape: no NUL byte for a scan to find
    with pytest.raises(InputFileError, match=r"^p\.jsonl: column 'y_true' has a value with a NUL "
                                             r"character \('neg\\x00'\) in row 1"):
        load_predictions(write(tmp_path, "p.jsonl", jsonl), positive="pos")
    model = _parquet(pa.table({"model": ["m\x00", "m\x00"], "y": [1, 0], "score": [0.5, 0.2]}))
    with pytest.raises(InputFileError, match=r"column 'model' has a value with a NUL character "
                                             r"\('m\\x00'\) in rows 1, 2"):
        load_predictions(write(tmp_path, "p.parquet", model))
    name = _parquet(pa.table({"y_true": [1, 0], "a\x00": [0.5, 0.2]}))
    with pytest.raises(InputFileError, match=r"column name 'a\\x00' \(column 2\) has a NUL"):
        load_predictions(write(tmp_path, "p.parquet", name))


def test_nul_in_the_positive_option_is_refused(tmp_path):
    # A counts file's positive label is the option itself, stored as it is given.
    with pytest.raises(ParameterError, match=r"^c\.csv: --positive 'x\\x00' has a NUL character"):
        load_predictions(write(tmp_path, "c.csv", COUNTS + "a,1,1,1,1\n"), positive="x\x00")


def test_utf16_with_bom_is_read_and_without_bom_refused(tmp_path):
    text = WIDE.to_csv(index=False)
    check_wide(load_predictions(write(tmp_path, "p.csv", text.encode("utf-16"))))
    with pytest.raises(InputFileError, match=r"is a binary file"):
        load_predictions(write(tmp_path, "p.csv", text.encode("utf-16-le")))


def test_latin1_header_and_cells_are_decoded_alike(tmp_path):
    # Two names differing only in an accent, which once both read as 'pr\ufffdcision' (a
    # "duplicate" column), labels with accents, and a Windows-1252 euro sign (0x80).
    content = ("y_true,précision,prècision,coût €\n"
               + "".join(f"{'négatif' if i % 2 else 'élevé'},0.{i},0.{9 - i},{i}\n"
                         for i in range(6))).encode("cp1252")
    ds = load_predictions(write(tmp_path, "latin1.csv", content), positive="élevé")
    assert ds.names == ("précision", "prècision", "coût €")
    assert ds.positive_label == "élevé"
    np.testing.assert_array_equal(ds.scored[0].y_true, [True, False] * 3)


def test_latin1_undefined_in_cp1252_falls_back_to_latin1(tmp_path):
    content = "y_true,a\x81b\n1,0.5\n0,0.2\n".encode("latin-1")
    assert load_predictions(write(tmp_path, "p.csv", content)).names == ("a\x81b",)


def test_utf8_is_not_mistaken_for_latin1_across_chunks():
    from costdash.io.reading import _as_utf8, _is_utf8
    text = "é€" * 1000  # 2- and 3-byte characters cut by every small chunk size
    for chunk in (1, 2, 5, 7, 4096):
        assert _is_utf8(text.encode(), chunk=chunk)
        assert not _is_utf8(text.encode() + b"\xe9", chunk=chunk)
    assert _as_utf8(b"\xef\xbb\xbf" + text.encode()) == text.encode()


# --- the score-count layout ---------------------------------------------------------------------

SCORE_COUNTS = ("model,score,n_pos,n_neg,fold\n"
                "a,0.9,3,0,f1\na,0.5,1,2,f1\na,0.5,0,1,f2\na,0.1,0,4,f2\na,0.9,2,1,f2\n"
                "b,7,1,1,f1\nb,3,4,7,f2\n")


def test_score_counts_layout(tmp_path):
    ds = load_predictions(write(tmp_path, "sc.csv", SCORE_COUNTS))
    assert ds.layout == "score_counts" and ds.names == ("a", "b") and not ds.counted
    assert ds.positive_label == "1" and ds.fold_labels == ("f1", "f2")
    a, b = ds.scored
    # One entry per (score, label, fold) cell with examples, in file order.
    np.testing.assert_array_equal(a.score, [0.9, 0.5, 0.5, 0.5, 0.1, 0.9, 0.9])
    np.testing.assert_array_equal(a.y_true, [True, True, False, False, False, True, False])
    np.testing.assert_array_equal(a.count, [3, 1, 2, 1, 4, 2, 1])
    np.testing.assert_array_equal(a.fold, [0, 0, 0, 1, 1, 1, 1])
    assert a.count.dtype == np.int64 and a.score.dtype == np.float64
    assert (a.n_examples, a.n_pos) == (14, 6) and (b.n_examples, b.n_pos) == (13, 5)
    assert (ds.n, ds.n_pos, ds.n_neg) == (14, 6, 8)
    # The rows these counts stand for give the same ROC points.
    rows = load_predictions(write(tmp_path, "rows.csv", "y_true,s\n" + "".join(
        f"{int(y)},{s}\n" for s, y, c in zip(a.score, a.y_true, a.count) for _ in range(c))))
    expected, got = roc_of(rows.scored[0]), roc_of(a)
    np.testing.assert_array_equal(expected.tp, got.tp)
    np.testing.assert_array_equal(expected.fp, got.fp)
    np.testing.assert_array_equal(expected.threshold, got.threshold)


def test_score_counts_options(tmp_path):
    text = "Classifier,prob,N_POS,n_neg\nx,0.2,1,0\ny,0.3,1,1\nx,0.1,0,2\n"
    ds = load_predictions(write(tmp_path, "sc.parquet", pd.read_csv(io.StringIO(text))
                                .to_parquet()), models=["x"], positive="fraud")
    assert ds.names == ("x",) and ds.positive_label == "fraud" and ds.fold_labels == ()
    assert ds.scored[0].fold is None
    np.testing.assert_array_equal(ds.scored[0].count, [1, 2])
    forced = load_predictions(write(tmp_path, "sc.csv", text), layout="score_counts",
                              model_column="classifier", score_column="prob")
    assert forced.names == ("x", "y")
    with pytest.raises(ParameterError, match="label_column does not apply to the score_counts"):
        load_predictions(write(tmp_path, "sc.csv", text), label_column="y")
    dropped = load_predictions(write(tmp_path, "gap.csv", text + "y,,1,1\n"), drop_missing=True)
    assert dropped.scored[1].n_examples == 2


SCORE_COUNT_ERRORS = [
    ("model,score,n_pos,n_neg\na,0.1,2,-1\na,0.2,1,1\n",
     r"^e\.csv: column 'n_neg' has negative counts \(-1\) in row 1; counts must be whole",
     "n_neg", (1,)),
    ("model,score,n_pos,n_neg\na,0.1,2,1\na,0.2,1.5,1\n",
     r"column 'n_pos' has non-integer counts \(1\.5\) in row 2", "n_pos", (2,)),
    ("model,score,n_pos,n_neg\na,0.1,2,1\na,0.2,0,0\na,0.3,0,0\n",
     r"columns 'n_pos' and 'n_neg' are both 0 in rows 2, 3; a row counts at least one",
     "n_pos", (2, 3)),
    ("model,score,n_pos,n_neg\na,0.1,2,1\nb,0.2,0,3\n",
     r"model 'b' has no positive examples \('n_pos' is 0 in row 2\)", "n_pos", (2,)),
    ("model,score,n_pos,n_neg,fold\na,0.1,2,1,1\na,0.2,3,0,2\n",
     r"model 'a' in fold '2' has no negative examples \(row 2\); each fold needs both",
     "n_neg", (2,)),
    ("model,score,n_pos,n_neg\na,0.1,2,1\na,inf,1,1\n",
     r"column 'score' has 1 infinite value in row 2; scores and counts must be finite",
     "score", (2,)),
    ("model,score,n_pos,n_neg\na,0.1,2,1\na,x,1,1\n",
     r"column 'score' has 1 non-numeric value \(first: 'x'\) in row 2", "score", (2,)),
    ("model,score,n_pos,n_neg\na,0.1,2,1\n,0.2,1,1\n",
     r"column 'model' has 1 missing value in row 2", "model", (2,)),
]


@pytest.mark.parametrize("content, message, column, rows", SCORE_COUNT_ERRORS)
def test_score_counts_errors_name_file_column_and_rows(tmp_path, content, message, column, rows):
    with pytest.raises(InputFileError, match=message) as info:
        load_predictions(write(tmp_path, "e.csv", content))
    assert (info.value.source, info.value.column, info.value.rows) == ("e.csv", column, rows)


def test_score_counts_missing_columns(tmp_path):
    with pytest.raises(InputFileError, match=r"^e\.csv: no n_neg column: expected one named "
                                             r"n_neg; columns found: 'model', 'score', 'n_pos'"):
        load_predictions(write(tmp_path, "e.csv", "model,score,n_pos\na,0.1,1\n"),
                         layout="score_counts")
    with pytest.raises(InputFileError, match=r"no score column: expected one named score, "):
        load_predictions(write(tmp_path, "e.csv", "model,n_pos,n_neg\na,1,1\n"))


def test_score_counts_need_counts_on_every_classifier():
    plain = ScoredClassifier("a", np.array([True, False]), np.array([0.3, 0.1]))
    with pytest.raises(ValueError, match="needs counts on every scored classifier"):
        Dataset(source="x", layout="score_counts", positive_label="1", scored=(plain,))
    counted = ScoredClassifier("a", plain.y_true, plain.score, count=np.array([2, 3]))
    with pytest.raises(ValueError, match="need the score_counts layout, not long"):
        Dataset(source="x", layout="long", positive_label="1", scored=(counted,))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(-3, 3), st.integers(0, 3),
                          st.integers(0, 3)), min_size=1, max_size=25))
def test_score_counts_load_or_refuse_like_their_rows(tmp_path_factory, cells):
    """A random score-count file loads exactly when every model has both classes, and then
    its ROC curves are those of the rows it stands for."""
    frame = pd.DataFrame(cells, columns=["model", "score", "n_pos", "n_neg"])
    path = tmp_path_factory.mktemp("sc") / "sc.csv"
    frame.to_csv(path, index=False)
    totals = frame.groupby("model")[["n_pos", "n_neg"]].sum()
    if ((frame.n_pos + frame.n_neg) == 0).any() or (totals == 0).any().any():
        with pytest.raises(InputFileError):
            load_predictions(path)
        return
    ds = load_predictions(path)
    for name in ds.names:
        mine = frame[frame.model == name]
        y = np.repeat([True, False], [mine.n_pos.sum(), mine.n_neg.sum()])
        s = np.concatenate([np.repeat(mine.score, mine.n_pos), np.repeat(mine.score, mine.n_neg)])
        expected, got = roc_curve(y, s.astype(float)), roc_of(ds.classifier(name))
        np.testing.assert_array_equal(expected.tp, got.tp)
        np.testing.assert_array_equal(expected.fp, got.fp)
        np.testing.assert_array_equal(expected.threshold, got.threshold)
