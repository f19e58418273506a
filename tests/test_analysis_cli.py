"""``costdash analyze``: the JSON contract, numbers checked against independent computations, and
the readable summary."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

from costdash.cli import main
from costdash.costspace import cost_line, trivial_cost

# The contract as documented in README.md ("analyze --json contract"); --help (JSON_HELP) lists
# all but "source", "layout" and "on_hull".
DATASET_KEYS = {"n", "n_pos", "n_neg", "positive_label", "n_folds", "source", "layout"}
CLASSIFIER_KEYS = {"name", "auc", "roc", "operating_range", "cost_area", "on_hull",
                   "h_measure", "h_measure_beta", "brier_score", "threshold_choice",
                   "threshold_choice_gaps"}
BASE_CLASSIFIER_KEYS = {"name", "auc", "roc", "operating_range", "cost_area", "on_hull"}
"""Without the threshold-choice extras (``--no-threshold-choice``)."""
THRESHOLD_CHOICE_KEYS = {"score_driven", "rate_driven", "fixed", "optimal"}
ROC_KEYS = {"fpr", "tpr", "threshold"}
HULL_KEYS = {"fpr", "tpr", "classifier", "threshold"}
ENVELOPE_KEYS = {"pc", "cost"}
OPERATING_POINT_KEYS = {"p_pos", "cost_fn", "cost_fp", "pc", "slope", "classifier", "threshold",
                        "fpr", "tpr", "normalized_cost", "expected_cost", "cost_tp", "cost_tn"}


def _no_constants(name):
    raise AssertionError(f"non-standard JSON constant {name} in the output")


def run_json(capsys, *argv):
    code = main(["analyze", *map(str, argv), "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out, parse_constant=_no_constants)


@pytest.fixture
def frame():
    rng = np.random.default_rng(11)
    n = 300
    y = (rng.random(n) < 0.3).astype(int)
    a = np.round(rng.normal(size=n) + 1.2 * y, 2)           # ties
    b = np.round(1 / (1 + np.exp(-(rng.normal(size=n) + 0.8 * y))), 3)
    return pd.DataFrame({"y_true": y, "model_a": a, "model_b": b})


@pytest.fixture
def csv_path(tmp_path, frame):
    path = tmp_path / "preds.csv"
    frame.to_csv(path, index=False)
    return path


def min_of_lines(points, x):
    f = np.array([p[0] for p in points])[:, None]
    t = np.array([p[1] for p in points])[:, None]
    return np.minimum(cost_line(f, t, x[None, :]).min(axis=0), trivial_cost(x))


def test_json_contract_and_numbers(capsys, csv_path, frame):
    out = run_json(capsys, csv_path)
    assert set(out) == {"dataset", "classifiers", "hull", "envelope", "operating_point"}
    y = frame["y_true"].to_numpy() == 1

    ds = out["dataset"]
    assert set(ds) == DATASET_KEYS
    assert (ds["n"], ds["n_pos"], ds["n_neg"]) == (300, int(y.sum()), int((~y).sum()))
    assert ds["positive_label"] == "1" and ds["n_folds"] == 0
    assert (ds["source"], ds["layout"]) == ("preds.csv", "wide")

    assert [c["name"] for c in out["classifiers"]] == ["model_a", "model_b"]
    all_points = []
    for c in out["classifiers"]:
        assert set(c) == CLASSIFIER_KEYS and set(c["roc"]) == ROC_KEYS
        s = frame[c["name"]].to_numpy()
        assert c["auc"] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        fpr, tpr, thr = sk_roc_curve(y, s, drop_intermediate=False)
        np.testing.assert_allclose(c["roc"]["fpr"], fpr, atol=1e-15)
        np.testing.assert_allclose(c["roc"]["tpr"], tpr, atol=1e-15)
        assert c["roc"]["threshold"][0] is None
        np.testing.assert_array_equal(c["roc"]["threshold"][1:], thr[1:])
        assert (c["roc"]["fpr"][0], c["roc"]["tpr"][0]) == (0.0, 0.0)
        assert (c["roc"]["fpr"][-1], c["roc"]["tpr"][-1]) == (1.0, 1.0)
        # operating range and cost area against the classifier's own cost lines on a grid
        points = list(zip(c["roc"]["fpr"], c["roc"]["tpr"]))
        all_points += points
        x = np.linspace(0, 1, 20001)
        env = min_of_lines(points, x)
        beats = x[env < trivial_cost(x) - 1e-12]
        lo, hi = c["operating_range"]
        assert lo == pytest.approx(beats.min(), abs=1e-4)
        assert hi == pytest.approx(beats.max(), abs=1e-4)
        assert c["cost_area"] == pytest.approx(np.trapezoid(env, x), abs=1e-7)
        assert isinstance(c["on_hull"], bool)

    hull = out["hull"]
    for v in hull:
        assert set(v) == HULL_KEYS
    assert (hull[0]["fpr"], hull[0]["tpr"], hull[0]["classifier"]) == (0.0, 0.0, "all-negative")
    assert (hull[-1]["fpr"], hull[-1]["tpr"], hull[-1]["classifier"]) == (1.0, 1.0, "all-positive")
    assert hull[0]["threshold"] is None and hull[-1]["threshold"] is None
    fprs = [v["fpr"] for v in hull]
    assert fprs == sorted(fprs)
    for v in hull[1:-1]:
        s = frame[v["classifier"]].to_numpy()
        flagged = s >= v["threshold"]
        assert np.sum(flagged & ~y) / np.sum(~y) == v["fpr"]
        assert np.sum(flagged & y) / np.sum(y) == v["tpr"]
    for c in out["classifiers"]:
        assert c["on_hull"] == (c["name"] in {v["classifier"] for v in hull})

    env = out["envelope"]
    assert set(env) == ENVELOPE_KEYS
    pc = np.array(env["pc"])
    assert pc[0] == 0.0 and pc[-1] == 1.0 and np.all(np.diff(pc) > 0)
    np.testing.assert_allclose(env["cost"], min_of_lines(all_points, pc), atol=1e-14)

    op = out["operating_point"]
    assert set(op) == OPERATING_POINT_KEYS
    prevalence = y.mean()
    # defaults: p(+) = the prevalence, unit costs -> PC(+) = p(+), slope = p(-)/p(+)
    assert (op["p_pos"], op["cost_fn"], op["cost_fp"]) == (pytest.approx(prevalence), 1.0, 1.0)
    assert op["pc"] == pytest.approx(prevalence)
    assert op["slope"] == pytest.approx((1 - prevalence) / prevalence)
    # the chosen vertex maximises TPR - m·FPR over the hull: minimum error rate. At these
    # conditions m = N/P, so an edge with as many positives as negatives is a tie, and the tie
    # rule picks its lower-FPR end (this data set has such an edge at the optimum)
    values = np.array([v["tpr"] - op["slope"] * v["fpr"] for v in hull])
    tied = np.flatnonzero(values >= values.max() - 1e-12)
    assert tied.size == 2
    best = hull[int(tied[0])]
    assert (op["fpr"], op["tpr"], op["classifier"], op["threshold"]) == \
        (best["fpr"], best["tpr"], best["classifier"], best["threshold"])
    ne = (1 - op["tpr"]) * op["pc"] + op["fpr"] * (1 - op["pc"])
    assert op["normalized_cost"] == pytest.approx(ne)
    assert op["expected_cost"] == pytest.approx(ne)  # unit costs: cost scale 1
    # the error rate of that choice, recounted from the data
    s = frame[op["classifier"]].to_numpy()
    errors = np.sum((s >= op["threshold"]) != y)
    assert op["expected_cost"] == pytest.approx(errors / y.size)


def test_json_with_given_conditions(capsys, csv_path):
    out = run_json(capsys, csv_path, "--p-pos", 0.1, "--cost-fn", 5, "--cost-fp", 2)
    op = out["operating_point"]
    assert (op["p_pos"], op["cost_fn"], op["cost_fp"]) == (0.1, 5.0, 2.0)
    assert op["pc"] == pytest.approx(0.5 / (0.5 + 1.8))
    assert op["slope"] == pytest.approx(1.8 / 0.5)
    expected = 0.1 * (1 - op["tpr"]) * 5 + 0.9 * op["fpr"] * 2
    assert op["expected_cost"] == pytest.approx(expected)
    assert op["normalized_cost"] == pytest.approx(expected / (0.5 + 1.8))
    # the envelope at PC(+) is the chosen vertex's cost
    env = out["envelope"]
    assert np.interp(op["pc"], env["pc"], env["cost"]) == pytest.approx(op["normalized_cost"])


def test_json_has_no_infinity_beyond_float_range(capsys, csv_path):
    out = run_json(capsys, csv_path, "--p-pos", 1e-300, "--cost-fp", 1e300)
    op = out["operating_point"]
    assert op["slope"] is None  # infinite slope: null, not Infinity
    # the slope overflows a float but stays finite: a vertex at FPR 0 (if any) still beats (0, 0)
    at_zero = [v for v in out["hull"] if v["fpr"] == 0.0]
    assert (op["fpr"], op["tpr"]) == (0.0, at_zero[-1]["tpr"])
    assert (op["classifier"], op["threshold"]) == \
        (at_zero[-1]["classifier"], at_zero[-1]["threshold"])
    assert op["pc"] < 1e-300 and op["normalized_cost"] < 1e-300  # NE = FPR = 0 at PC(+) ~ 0


def test_max_points_thins_roc_only(capsys, csv_path):
    full = run_json(capsys, csv_path)
    thin = run_json(capsys, csv_path, "--max-points", 5)
    for c_full, c_thin in zip(full["classifiers"], thin["classifiers"]):
        roc = c_thin["roc"]
        assert 2 <= len(roc["fpr"]) <= 5
        assert len(roc["fpr"]) == len(roc["tpr"]) == len(roc["threshold"])
        assert (roc["fpr"][0], roc["tpr"][0], roc["threshold"][0]) == (0.0, 0.0, None)
        assert (roc["fpr"][-1], roc["tpr"][-1]) == (1.0, 1.0)
        assert len(c_full["roc"]["fpr"]) > 5
        # thinned points are a subset of the full curve, in order
        pairs = list(zip(c_full["roc"]["fpr"], c_full["roc"]["tpr"], c_full["roc"]["threshold"]))
        kept = list(zip(roc["fpr"], roc["tpr"], roc["threshold"]))
        idx = [pairs.index(p) for p in kept]
        assert idx == sorted(idx)
        for key in ("auc", "operating_range", "cost_area"):
            assert c_thin[key] == c_full[key]
    for key in ("hull", "envelope", "operating_point", "dataset"):
        assert thin[key] == full[key]


def test_counts_layout_json_has_null_thresholds(capsys, tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("model,tp,fp,fn,tn\nrule,30,10,20,90\nrule,45,40,5,60\nother,20,2,30,98\n")
    out = run_json(capsys, path)
    assert (out["dataset"]["n_pos"], out["dataset"]["n_neg"]) == (50, 100)
    for c in out["classifiers"]:
        assert all(t is None for t in c["roc"]["threshold"])
        assert (c["roc"]["fpr"][0], c["roc"]["tpr"][0]) == (0.0, 0.0)
        assert (c["roc"]["fpr"][-1], c["roc"]["tpr"][-1]) == (1.0, 1.0)
    assert [(v["fpr"], v["tpr"]) for v in out["hull"]] == \
        [(0.0, 0.0), (0.02, 0.4), (0.1, 0.6), (0.4, 0.9), (1.0, 1.0)]
    assert [v["classifier"] for v in out["hull"]] == \
        ["all-negative", "other", "rule", "rule", "all-positive"]
    assert all(v["threshold"] is None for v in out["hull"])


def test_folds_are_counted(capsys, tmp_path, frame):
    path = tmp_path / "folds.csv"
    frame.assign(fold=np.arange(len(frame)) % 3).to_csv(path, index=False)
    out = run_json(capsys, path)
    assert out["dataset"]["n_folds"] == 3
    assert [c["name"] for c in out["classifiers"]] == ["model_a", "model_b"]


def test_readable_summary(capsys, csv_path):
    assert main(["analyze", str(csv_path)]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].startswith("preds.csv: 300 examples")
    header = next(line for line in lines if line.startswith("classifier"))
    for col in ("AUC", "cost area", "operating range (PC(+))", "on hull"):
        assert col in header
    rows = {line.split()[0]: line for line in lines if line.startswith("model_")}
    assert set(rows) == {"model_a", "model_b"}
    assert "ROC convex hull (all classifiers):" in lines
    assert any(line.split()[2:3] == ["all-negative"] for line in lines)
    assert any(line.startswith("Operating conditions: p(+) = ") for line in lines)
    assert lines[-1].startswith("Best: ")
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_errors_are_one_line_with_status_2(capsys, csv_path):
    assert main(["analyze", str(csv_path), "--p-pos", "1.5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("costdash: error: ") and err.count("\n") == 1
    assert main(["analyze", str(csv_path), "--max-points", "1", "--json"]) == 2
    assert "max_points" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--p-pos", "1.5"], "p(+) must be a number strictly between 0 and 1; got '1.5'."),
    (["--p-pos", "nan"], "p(+) must be a number strictly between 0 and 1; got 'nan'."),
    (["--cost-fn", "0"], "C(−|+) must be a number above 0; got '0'."),
    (["--cost-fp", "-3"], "C(+|−) must be a number above 0; got '-3'."),
])
def test_conditions_are_checked_in_the_dashboards_words(capsys, csv_path, argv, message):
    """The CLI reads its conditions with the view's parser: the same bounds and words as the
    dashboard and the HTTP API."""
    assert main(["analyze", str(csv_path), *argv]) == 2
    assert capsys.readouterr().err == f"costdash: error: {message}\n"


def test_absent_conditions_are_the_one_default_rule(capsys, csv_path):
    from costdash.conditions import default_condition
    from costdash.io import load_predictions

    dataset = load_predictions(csv_path)
    point = run_json(capsys, csv_path)["operating_point"]
    expected = default_condition(dataset.prevalence)
    assert (point["p_pos"], point["cost_fn"], point["cost_fp"]) == \
        (expected.p_pos, expected.cost_fn, expected.cost_fp) == (dataset.prevalence, 1.0, 1.0)
    # Given explicitly at their defaults: the same answer.
    assert run_json(capsys, csv_path, "--cost-fn", 1, "--cost-fp", 1)["operating_point"] == point


def test_help_states_the_cost_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "C(-|+): cost of a false negative (default 1)" in text
    assert "C(+|-): cost of a false positive (default 1)" in text
    assert "(default: the data's prevalence)" in text


def test_threshold_choice_is_in_the_default_json_and_can_be_left_out(capsys, csv_path, frame):
    """``analyze --json`` has each classifier's H-measure, Brier score and threshold-choice
    curves by default; ``--no-threshold-choice`` gives the classifiers without them, the rest
    unchanged."""
    out = run_json(capsys, csv_path)
    y = frame["y_true"].to_numpy() == 1
    for c in out["classifiers"]:
        assert set(c) == CLASSIFIER_KEYS
        assert set(c["threshold_choice"]) == THRESHOLD_CHOICE_KEYS
        # The optimal curve's expected loss (PC(+) uniform) is the envelope's area.
        assert c["threshold_choice"]["optimal"]["expected_loss"] == \
            pytest.approx(c["cost_area"], abs=1e-12)
        assert 0.0 < c["h_measure"] < 1.0
    by_name = {c["name"]: c for c in out["classifiers"]}
    # model_a's scores are margins (not in [0, 1]): no Brier score, the score-driven curve refused.
    a, b = by_name["model_a"], by_name["model_b"]
    assert a["brier_score"] is None and a["threshold_choice"]["score_driven"] is None
    assert "not probabilities" in a["threshold_choice_gaps"]["score_driven_refused"]
    s = frame["model_b"].to_numpy()
    assert b["brier_score"] == pytest.approx(np.mean((s - y) ** 2), abs=1e-14)
    plain = run_json(capsys, csv_path, "--no-threshold-choice")
    for c, full in zip(plain["classifiers"], out["classifiers"]):
        assert set(c) == BASE_CLASSIFIER_KEYS
        assert c == {k: full[k] for k in BASE_CLASSIFIER_KEYS}
    for key in ("hull", "envelope", "operating_point", "dataset"):
        assert plain[key] == out[key]
