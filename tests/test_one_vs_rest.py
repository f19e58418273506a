"""One-vs-rest on a predict_proba file (issue 28, item 3): exactly the binary file of
``y_true == CLASS`` with the scores ``<classifier>:<CLASS>``."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_curve as sk_roc_curve

from costdash import analyze
from costdash.errors import InputFileError, ParameterError
from costdash.io import load_predictions
from costdash.one_vs_rest import one_vs_rest_frame
from costdash.roc import roc_of


def _proba_frame(seed: int = 0, n: int = 900) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    classes = np.array(["cat", "dog", "bird"])
    y = rng.choice(classes, size=n)
    frame = {"y_true": y}
    for model, signal in (("gbm", 2.0), ("logreg", 1.0)):
        logits = rng.normal(size=(n, 3)) + signal * (y[:, None] == classes[None, :])
        proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        for k, c in enumerate(classes):
            frame[f"{model}:{c}"] = np.round(proba[:, k], 4)
    return pd.DataFrame(frame)


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


@pytest.mark.parametrize("target", ["cat", "bird"])
def test_the_target_class_reads_as_the_binary_file(target):
    frame = _proba_frame()
    binary = pd.DataFrame({"y_true": (frame["y_true"] == target).astype(int),
                           "gbm": frame[f"gbm:{target}"], "logreg": frame[f"logreg:{target}"]})
    expected = load_predictions(io.BytesIO(_csv(binary)), name="binary.csv")
    got = one_vs_rest_frame(frame, target, source="proba.csv")
    dataset = load_predictions(io.BytesIO(_csv(got)), name="proba.csv", positive="1")
    assert dataset.names == ("gbm", "logreg")
    for a, b in zip(dataset.scored, expected.scored):
        np.testing.assert_array_equal(a.y_true, b.y_true)
        np.testing.assert_array_equal(a.score, b.score)
    a, b = analyze(dataset), analyze(expected)
    assert a.operating_point.expected_cost == b.operating_point.expected_cost
    fpr, tpr, _ = sk_roc_curve(frame["y_true"] == target, frame[f"gbm:{target}"],
                               drop_intermediate=False)
    roc = roc_of(dataset.scored[0])
    np.testing.assert_allclose(roc.fpr, fpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(roc.tpr, tpr, rtol=0, atol=1e-15)


def test_messages_name_the_file_the_class_and_the_column():
    frame = _proba_frame(1, n=60)
    with pytest.raises(ParameterError, match="proba.csv: the target class 'fish' is not a label"):
        one_vs_rest_frame(frame, "fish", source="proba.csv")
    with pytest.raises(InputFileError, match="no score column for the target class 'dog' of "
                                             "'logreg'"):
        one_vs_rest_frame(frame.drop(columns=["logreg:dog"]), "dog", source="proba.csv")
    with pytest.raises(InputFileError, match="one score column per class and classifier"):
        one_vs_rest_frame(pd.DataFrame({"y_true": ["a", "b", "c"], "m": [1, 2, 3]}), "a",
                          source="plain.csv")
