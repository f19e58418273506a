"""Tests of costdash.io.load_predictions: formats, layouts, options and every error message."""

from __future__ import annotations

import gzip
import io
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pytest

from costdash.dataset import CountedClassifier, ScoredClassifier
from costdash.errors import InputFileError, ParameterError
from costdash.io import load_predictions

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
