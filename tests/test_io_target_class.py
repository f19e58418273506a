"""``load_predictions(..., target_class=)`` and ``--target-class`` (issue 28, item 3): a
predict_proba file read for one class is exactly the binary file of ``y_true == CLASS`` with the
scores ``<classifier>:<CLASS>``, in the loader and in every command that reads a file."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from costdash.cli import main
from costdash.errors import InputFileError, ParameterError
from costdash.io import load_predictions

CLASSES = ("cat", "dog", "bird")


def _proba(seed: int = 0, n: int = 400, classes=CLASSES) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    labels = np.asarray(classes)
    y = rng.choice(labels, size=n)
    frame = {"y_true": y, "fold": rng.integers(0, 3, size=n)}
    for model, signal in (("gbm", 2.0), ("logreg", 1.0)):
        logits = rng.normal(size=(n, len(labels))) + signal * (y[:, None] == labels[None, :])
        proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        for k, c in enumerate(labels):
            frame[f"{model}:{c}"] = np.round(proba[:, k], 3)
    return pd.DataFrame(frame)


def _binary(frame: pd.DataFrame, target: str) -> pd.DataFrame:
    return pd.DataFrame({"y_true": (frame["y_true"].astype(str) == target).astype(int),
                         "fold": frame["fold"], "gbm": frame[f"gbm:{target}"],
                         "logreg": frame[f"logreg:{target}"]})


def _bytes(frame: pd.DataFrame) -> io.BytesIO:
    return io.BytesIO(frame.to_csv(index=False).encode())


def _same(a, b) -> None:
    assert a.names == b.names and a.positive_label == b.positive_label == "1"
    assert a.fold_labels == b.fold_labels and a.layout == b.layout == "wide"
    for x, y in zip(a.scored, b.scored, strict=True):
        np.testing.assert_array_equal(x.y_true, y.y_true)
        np.testing.assert_array_equal(x.score, y.score)
        np.testing.assert_array_equal(x.fold, y.fold)


@pytest.mark.parametrize("target", CLASSES)
def test_the_loader_reads_the_target_class_as_the_binary_file(target):
    frame = _proba()
    got = load_predictions(_bytes(frame), name="proba.csv", target_class=target)
    _same(got, load_predictions(_bytes(_binary(frame, target)), name="binary.csv"))
    assert got.n_pos == int((frame["y_true"] == target).sum())


def test_models_and_a_target_spelt_in_another_case():
    frame = _proba(1)
    got = load_predictions(_bytes(frame), name="proba.csv", target_class="DOG",
                           models=["logreg"])
    want = load_predictions(_bytes(_binary(frame, "dog")), name="binary.csv", models=["logreg"])
    _same(got, want)


def test_numeric_classes_with_a_missing_label_are_refused_by_row_or_dropped():
    frame = _proba(2, classes=("0", "1", "2"))
    frame["y_true"] = frame["y_true"].astype(int).astype(object)
    frame.loc[6, "y_true"] = None           # data row 7: the label is missing
    with pytest.raises(InputFileError, match=r"proba.csv: column 'y_true' has 1 missing value "
                                             r"in row 7") as info:
        load_predictions(_bytes(frame), name="proba.csv", target_class="2")
    assert info.value.rows == (7,) and info.value.column == "y_true"
    got = load_predictions(_bytes(frame), name="proba.csv", target_class="2", drop_missing=True)
    kept = frame.drop(index=6)
    _same(got, load_predictions(_bytes(_binary(kept, "2")), name="binary.csv"))
    assert got.n == len(frame) - 1          # the missing label was not counted as "the rest"


@pytest.mark.parametrize("command", [["decide", "--cost-fn", "4"], ["analyze", "--cost-fn", "4"],
                                     ["dca"]])
def test_every_command_takes_target_class_and_gives_the_binary_files_output(
        command, tmp_path, capsys):
    frame = _proba(3)
    proba, binary = tmp_path / "proba.csv", tmp_path / "binary.csv"
    frame.to_csv(proba, index=False)
    _binary(frame, "bird").to_csv(binary, index=False)
    outputs = []
    for path, extra in ((proba, ["--target-class", "bird"]), (binary, [])):
        assert main([command[0], str(path), *command[1:], *extra, "--json"]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    text = json.dumps(outputs[0]).replace("proba.csv", "binary.csv")
    assert json.loads(text) == outputs[1]


def test_a_multiclass_file_without_a_target_class_suggests_one(tmp_path, capsys):
    frame = _proba(4)
    for positive in (None, "cat"):
        with pytest.raises(InputFileError) as info:
            load_predictions(_bytes(frame), name="proba.csv", positive=positive)
        message = str(info.value)
        assert "proba.csv: column 'y_true' has 3 labels" in message
        assert "--target-class CLASS, one of 'bird', 'cat', 'dog'" in message
        assert "a score column per class ('gbm:cat'" in message
    plain = pd.DataFrame({"y_true": ["a", "b", "c", "a"], "m": [0.1, 0.2, 0.3, 0.4]})
    with pytest.raises(InputFileError, match="with one score column per class named "
                                             "<classifier>:<class>.*one of 'a', 'b', 'c'"):
        load_predictions(_bytes(plain), name="plain.csv")
    path = tmp_path / "proba.csv"
    frame.to_csv(path, index=False)
    assert main(["decide", str(path)]) == 2
    assert "--target-class CLASS, one of 'bird', 'cat', 'dog'" in capsys.readouterr().err


def test_bad_target_class_options_are_named():
    frame = _proba(5, n=60)
    with pytest.raises(ParameterError, match="proba.csv: the target class 'fish' is not a label "
                                             "of column 'y_true'; its labels are"):
        load_predictions(_bytes(frame), name="proba.csv", target_class="fish")
    with pytest.raises(ParameterError, match="--positive does not apply with --target-class"):
        load_predictions(_bytes(frame), name="proba.csv", target_class="cat", positive="dog")
    got = load_predictions(_bytes(frame), name="proba.csv", target_class="cat", positive="1")
    assert got.positive_label == "1"
    with pytest.raises(ParameterError, match="a target class needs the wide layout"):
        load_predictions(_bytes(frame), name="proba.csv", target_class="cat", layout="long")
    counts = pd.DataFrame({"model": ["m"], "tp": [3], "fp": [1], "fn": [1], "tn": [5]})
    with pytest.raises(ParameterError, match="c.csv: a target class needs the wide layout .*"
                                             "this file has the counts layout"):
        load_predictions(_bytes(counts), name="c.csv", target_class="cat")
    with pytest.raises(InputFileError, match="no score column for the target class 'dog' of "
                                             "'gbm'") as info:
        load_predictions(_bytes(frame.drop(columns=["gbm:dog"])), name="proba.csv",
                         target_class="dog")
    assert info.value.column == "gbm:dog"
    frame.loc[[2, 8], "gbm:cat"] = np.nan
    with pytest.raises(InputFileError, match="column 'gbm' has 2 missing values in rows 3, 9"):
        load_predictions(_bytes(frame), name="proba.csv", target_class="cat")
