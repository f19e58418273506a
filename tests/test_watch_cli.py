"""``costdash watch`` (issue 25): the JSON contract, rows and score counts alike, and messages."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from costdash.cli import main
from costdash.cli.watch import parse_deployed
from costdash.errors import ParameterError

KEYS = {"period", "n", "p_pos", "p_pos_low", "p_pos_high", "pc", "pc_low", "pc_high", "choice",
        "deployed_optimal", "regret_per_period", "alert"}


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(11)
    y = rng.random(4000) < 0.3
    pd.DataFrame({"y_true": y.astype(int), "gbm": np.round(rng.normal(2.0 * y), 2)}).to_csv(
        tmp_path / "ref.csv", index=False)
    truth = rng.random(12000) < np.repeat([0.3, 0.3, 0.04], 4000)
    prod = pd.DataFrame({"week": np.repeat(["w1", "w2", "w3"], 4000),
                         "gbm": np.round(rng.normal(2.0 * truth), 2),
                         "y_true": truth.astype(int)})
    prod.to_csv(tmp_path / "prod.csv", index=False)
    counts = prod.groupby(["week", "gbm"], sort=False).size().rename("n").reset_index()
    counts.rename(columns={"gbm": "score"}).to_csv(tmp_path / "counts.csv", index=False)
    return tmp_path


def _run(capsys, *argv) -> dict:
    assert main(["watch", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_contract_and_an_alert_in_the_shifted_week(files, capsys):
    out = _run(capsys, str(files / "ref.csv"), str(files / "prod.csv"), "--period-column",
               "week", "--p-pos", "0.3", "--cost-fn", "5", "--cost-fp", "1")
    assert {"method", "level", "deployed", "periods"} <= set(out)
    assert out["method"] == "em" and out["level"] == 0.9
    assert set(out["deployed"]) == {"classifier", "threshold"}
    assert [p["period"] for p in out["periods"]] == ["w1", "w2", "w3"]
    assert all(KEYS <= set(p) for p in out["periods"])
    assert [p["alert"] for p in out["periods"]] == [False, False, True]
    assert out["periods"][2]["regret_per_period"] > 0
    assert any("ignored" in note for note in out["notes"])       # the label column


def test_score_counts_give_what_their_rows_give(files, capsys):
    common = ["--period-column", "week", "--p-pos", "0.3", "--cost-fn", "5", "--cost-fp", "1",
              "--deployed", "gbm:1.0", "--method", "acc"]
    rows = _run(capsys, str(files / "ref.csv"), str(files / "prod.csv"), *common)
    counts = _run(capsys, str(files / "ref.csv"), str(files / "counts.csv"), *common)
    assert rows["periods"] == counts["periods"]
    assert rows["deployed"] == {"classifier": "gbm", "threshold": 1.0}


def test_bad_input_is_one_line_naming_file_column_and_row(files, capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("score\n0.1\nabc\n")
    assert main(["watch", str(files / "ref.csv"), str(bad), "--p-pos", "0.3", "--cost-fn", "5",
                 "--cost-fp", "1"]) == 2
    err = capsys.readouterr().err
    assert "bad.csv: column 'score' row 2" in err and "Traceback" not in err
    with pytest.raises(ParameterError, match="expected NAME:THRESHOLD"):
        parse_deployed("gbm")
    assert parse_deployed("a:b:0.5") == ("a:b", 0.5)
    assert parse_deployed("x:none") == ("x", None)


def test_aggregated_production_is_watched_exactly_as_its_rows(files, capsys, tmp_path):
    from costdash.production_aggregation import aggregate_production

    counts = aggregate_production([str(files / "prod.csv")], score_column="gbm",
                                  period_column="week")
    assert counts.rows == 12000 and list(counts.table.columns) == ["period", "score", "n"]
    counts.write(str(tmp_path / "agg.parquet"))
    common = ["--period-column", "period", "--p-pos", "0.3", "--cost-fn", "5", "--cost-fp", "1"]
    from_counts = _run(capsys, str(files / "ref.csv"), str(tmp_path / "agg.parquet"), *common)
    common[1] = "week"
    from_rows = _run(capsys, str(files / "ref.csv"), str(files / "prod.csv"), *common)
    assert from_counts["periods"] == from_rows["periods"]


def test_aggregate_no_label_writes_what_watch_reads(files, capsys, tmp_path):
    out = tmp_path / "weekly.csv"
    assert main(["aggregate", str(files / "prod.csv"), "-o", str(out), "--no-label",
                 "--score-column", "gbm", "--period-column", "week", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["rows"] == 12000
    table = pd.read_csv(out)
    assert list(table.columns) == ["period", "score", "n"] and table["n"].sum() == 12000


def test_calibration_choices_are_the_cores():
    import argparse

    from costdash.cli.watch import register
    from costdash.prevalence import CALIBRATIONS

    sub = argparse.ArgumentParser().add_subparsers()
    register(sub)
    watch_parser = sub.choices["watch"]
    action = next(a for a in watch_parser._actions if a.dest == "calibration")
    assert tuple(action.choices) == CALIBRATIONS and action.default == "bcts"


def test_calibration_reaches_the_estimate(files, capsys):
    from costdash import load_predictions
    from costdash.monitor import watch, watch_to_dict
    from costdash.production_io import load_production

    common = [str(files / "ref.csv"), str(files / "prod.csv"), "--period-column", "week",
              "--p-pos", "0.3", "--cost-fn", "5", "--cost-fp", "1", "--deployed", "gbm:1.0"]
    isotonic = _run(capsys, *common, "--calibration", "isotonic")
    default = _run(capsys, *common)
    production = load_production(str(files / "prod.csv"), classifier="gbm",
                                 period_column="week")
    expected = watch_to_dict(watch(load_predictions(str(files / "ref.csv")), production.table,
                                   period=production.period, p_pos=0.3, cost_fn=5, cost_fp=1,
                                   deployed=("gbm", 1.0), calibration="isotonic"))
    assert [p["p_pos"] for p in isotonic["periods"]] == [p["p_pos"] for p in expected["periods"]]
    assert [p["p_pos"] for p in isotonic["periods"]] != [p["p_pos"] for p in default["periods"]]
