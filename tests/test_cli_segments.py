"""``costdash decide FILE --segment-column COL [--segment-p-pos SEG=P ...]`` (issue 28, item 4):
``decision.segments`` against :func:`costdash.segments.segment_policy` and a brute force over
every threshold of every classifier on each segment's rows; the segment column kept row for row
through ``--drop-missing``; the messages."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from costdash.cli import main
from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset, ScoredClassifier, Segments
from costdash.errors import InputFileError, ParameterError
from costdash.io import load_predictions
from costdash.segments import segment_policy, segment_policy_to_dict

CONTRACT = {"segment", "n", "p_pos", "classifier", "threshold", "expected_cost",
            "regret_vs_shared"}


def _frame(seed: int = 0, n: int = 900) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.choice(np.array(["north", "south", "west"]), size=n, p=[0.5, 0.3, 0.2])
    base = np.select([region == "north", region == "south"], [0.06, 0.3], 0.6)
    y = rng.random(n) < base
    return pd.DataFrame({
        "y_true": y.astype(int), "region": region,
        "a": np.round(rng.normal(size=n) + 1.5 * y, 2),
        "b": np.round(rng.normal(size=n) + 1.0 * y + 0.9 * (region == "west") * y, 2)})


def _decide(capsys, path, *argv) -> dict:
    assert main(["decide", str(path), *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _cost(y, flagged, p, cost_fn, cost_fp):
    fnr = np.sum(~flagged & y) / y.sum()
    fpr = np.sum(flagged & ~y) / (~y).sum()
    return p * fnr * cost_fn + (1 - p) * fpr * cost_fp


def _brute(frame, mask, p, cost_fn, cost_fp):
    """The least expected cost over every threshold of every classifier (and flag nobody)."""
    y = frame["y_true"].to_numpy()[mask].astype(bool)
    return min(_cost(y, s >= t, p, cost_fn, cost_fp)
               for c in ("a", "b") for s in [frame[c].to_numpy()[mask]]
               for t in [np.inf, *np.unique(s)])


@pytest.mark.parametrize("seed", [0, 1])
def test_segments_json_is_the_contract_the_core_and_the_brute_force(seed, tmp_path, capsys):
    frame = _frame(seed)
    path = tmp_path / "seg.csv"
    frame.to_csv(path, index=False)
    out = _decide(capsys, path, "--segment-column", "region", "--cost-fn", 8,
                  "--segment-p-pos", "south=0.1")["decision"]
    rows = out["segments"]
    assert all(CONTRACT <= set(r) for r in rows)
    assert out["segment_column"] == "region"
    assert [r["segment"] for r in rows] == list(dict.fromkeys(frame["region"]))

    dataset = load_predictions(path)
    cond = OperatingCondition(p_pos=dataset.prevalence, cost_fn=8.0, cost_fp=1.0)
    policy = segment_policy(dataset, frame["region"].to_numpy(), cond,
                            segment_p_pos={"south": 0.1})
    assert rows == segment_policy_to_dict(policy)
    assert out["segment_saving_per_case"] == pytest.approx(policy.saving_per_case)

    shared = frame[out["classifier"]].to_numpy() >= out["threshold"]
    for r in rows:
        mask = (frame["region"] == r["segment"]).to_numpy()
        y = frame["y_true"].to_numpy()[mask].astype(bool)
        p = 0.1 if r["segment"] == "south" else y.mean()
        assert r["n"] == mask.sum() and r["p_pos"] == pytest.approx(p, rel=1e-15)
        assert r["expected_cost"] == pytest.approx(_brute(frame, mask, p, 8.0, 1.0), rel=1e-12)
        mine = frame[r["classifier"]].to_numpy()[mask] >= r["threshold"]
        assert _cost(y, mine, p, 8.0, 1.0) == pytest.approx(r["expected_cost"], rel=1e-12)
        shared_cost = _cost(y, shared[mask], p, 8.0, 1.0)
        assert r["regret_vs_shared"] == pytest.approx(shared_cost - r["expected_cost"],
                                                      abs=1e-12)
    assert any(r["regret_vs_shared"] > 0 for r in rows)


def test_without_segment_column_the_json_is_unchanged(tmp_path, capsys):
    path = tmp_path / "seg.csv"
    _frame(2).to_csv(path, index=False)
    plain = _decide(capsys, path)
    with_segments = _decide(capsys, path, "--segment-column", "region")
    for key in ("segments", "segment_column", "segment_saving_per_case"):
        assert key not in plain["decision"]
        del with_segments["decision"][key]
    assert with_segments == plain


def test_drop_missing_keeps_each_rows_segment(tmp_path, capsys):
    frame = _frame(3, n=600)
    dirty = frame.copy()
    dirty.loc[[0, 17, 40], "a"] = np.nan
    dirty.loc[[5, 99], "y_true"] = np.nan
    dirty.loc[123, "b"] = np.inf
    dropped = sorted({0, 17, 40, 5, 99, 123})
    data = load_predictions(io.BytesIO(dirty.to_csv(index=False).encode()), name="d.csv",
                            segment_column="region", drop_missing=True)
    kept = frame.drop(index=dropped)
    assert data.n == len(kept) and data.names == ("a", "b")
    np.testing.assert_array_equal(data.segments.values, kept["region"].to_numpy())
    np.testing.assert_array_equal(data.scored[0].y_true, kept["y_true"].to_numpy() == 1)
    assert data.segments.labels == tuple(dict.fromkeys(kept["region"]))

    dirty_path, clean_path = tmp_path / "dirty.csv", tmp_path / "clean.csv"
    dirty.to_csv(dirty_path, index=False)
    kept.to_csv(clean_path, index=False)
    got = _decide(capsys, dirty_path, "--segment-column", "region", "--drop-missing")
    assert got == _decide(capsys, clean_path, "--segment-column", "region")


def test_a_missing_segment_is_a_missing_value(tmp_path):
    frame = _frame(4, n=200)
    frame["region"] = frame["region"].astype(object)
    frame.loc[[3, 7], "region"] = None
    raw = frame.to_csv(index=False).encode()
    with pytest.raises(InputFileError, match="column 'region' has 2 missing values in rows 4, "
                                             "8") as info:
        load_predictions(io.BytesIO(raw), name="s.csv", segment_column="region")
    assert info.value.rows == (4, 8)
    data = load_predictions(io.BytesIO(raw), name="s.csv", segment_column="Region",
                            drop_missing=True)
    assert data.n == 198 and data.segments.column == "region"


def test_a_numeric_segment_column_is_not_a_classifier():
    frame = _frame(5, n=300)
    frame["site"] = np.where(frame["region"] == "north", 1, 2)
    raw = frame.drop(columns="region").to_csv(index=False).encode()
    assert load_predictions(io.BytesIO(raw), name="s.csv").names == ("a", "b", "site")
    data = load_predictions(io.BytesIO(raw), name="s.csv", segment_column="site")
    assert data.names == ("a", "b") and data.segments.labels == tuple(
        dict.fromkeys(frame["site"].astype(str)))


def test_the_text_output_has_a_row_per_segment(tmp_path, capsys):
    frame = _frame(6)
    path = tmp_path / "seg.csv"
    frame.to_csv(path, index=False)
    assert main(["decide", str(path), "--segment-column", "region"]) == 0
    text = capsys.readouterr().out
    assert "Per segment (column 'region')" in text
    table = text.split("Per segment", 1)[1].splitlines()
    for name in ("north", "south", "west"):
        row = next(line.split() for line in table if line.split()[:1] == [name])
        assert int(row[1]) == (frame["region"] == name).sum()
    assert "A decision per segment saves" in text


def test_segment_options_are_checked_with_clear_messages(tmp_path, capsys):
    frame = _frame(7, n=300)
    path = tmp_path / "seg.csv"
    frame.to_csv(path, index=False)

    def error(*argv) -> str:
        """stderr of a refused command: argparse exits (a bad SEG=P), main returns 2."""
        try:
            code = main(["decide", str(path), *argv])
        except SystemExit as exit_:
            code = exit_.code
        assert code == 2
        return capsys.readouterr().err

    assert "expected SEG=P" in error("--segment-column", "region", "--segment-p-pos", "south")
    assert "p(+) of segment 'south' is not a number: 'x'" in error(
        "--segment-column", "region", "--segment-p-pos", "south=x")
    assert "strictly between 0 and 1; got '1'" in error(
        "--segment-column", "region", "--segment-p-pos", "south=1")
    assert "gives segment 'south' two values, 0.1 and 0.2" in error(
        "--segment-column", "region", "--segment-p-pos", "south=0.1", "south=0.2")
    assert "--segment-p-pos needs --segment-column" in error("--segment-p-pos", "south=0.1")
    unknown = error("--segment-column", "region", "--segment-p-pos", "east=0.1")
    order = ", ".join(dict.fromkeys(frame["region"]))
    assert f"no segment named east; the segments are {order}" in unknown
    assert "there is no segment column 'area'" in error("--segment-column", "area")
    assert "the segment column 'y_true' is the label column" in error(
        "--segment-column", "y_true")


def test_other_layouts_refuse_a_segment_column():
    long = pd.DataFrame({"model": ["m"] * 4, "y_true": [0, 1, 0, 1], "score": [.1, .9, .2, .8],
                         "region": ["n", "n", "s", "s"]})
    with pytest.raises(ParameterError, match="l.csv: a segment column needs the wide layout .* "
                                             "this file has the long layout"):
        load_predictions(io.BytesIO(long.to_csv(index=False).encode()), name="l.csv",
                         segment_column="region")
    counts = pd.DataFrame({"model": ["m"], "tp": [3], "fp": [1], "fn": [1], "tn": [5]})
    with pytest.raises(ParameterError, match="this file has the counts layout"):
        load_predictions(io.BytesIO(counts.to_csv(index=False).encode()), name="c.csv",
                         segment_column="region")
    y = np.array([True, False, True])
    scored = (ScoredClassifier("m", y, np.array([0.9, 0.1, 0.5])),)
    with pytest.raises(ValueError, match="2 segments for 3 rows"):
        Dataset("x", "wide", "1", scored=scored,
                segments=Segments("r", np.array([0, 1]), ("a", "b")))


def test_segments_of_a_target_class_are_those_of_the_binary_file(tmp_path, capsys):
    frame = _frame(8)
    rng = np.random.default_rng(8)
    classes = np.where(frame["y_true"] == 1, "fraud", rng.choice(["ok", "late"], len(frame)))
    proba = pd.DataFrame({"y_true": classes, "region": frame["region"]})
    for model in ("a", "b"):
        proba[f"{model}:fraud"] = frame[model]
        proba[f"{model}:ok"] = -frame[model]
        proba[f"{model}:late"] = 0.5
    proba_path, binary_path = tmp_path / "proba.csv", tmp_path / "binary.csv"
    proba.to_csv(proba_path, index=False)
    frame.to_csv(binary_path, index=False)
    argv = ("--segment-column", "region", "--cost-fn", 6)
    got = _decide(capsys, proba_path, "--target-class", "fraud", *argv)
    assert got == _decide(capsys, binary_path, *argv)
    assert len(got["decision"]["segments"]) == 3


def test_a_segment_with_one_class_is_named(tmp_path, capsys):
    frame = _frame(9, n=300)
    frame["region"] = frame["region"].astype(object)
    frame.loc[np.flatnonzero(frame["y_true"] == 0)[:4], "region"] = "tiny"
    path = tmp_path / "seg.csv"
    frame.to_csv(path, index=False)
    assert main(["decide", str(path), "--segment-column", "region"]) == 2
    assert "segment 'tiny' has no positive rows" in capsys.readouterr().err
