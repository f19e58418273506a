"""Tests of costdash.multiclass (BCOST / BDELTACOST) and its CLI commands."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costdash.cli import main as cli_main
from costdash.errors import InputFileError, ParameterError
from costdash.multiclass import (
    BcostResult,
    BdeltacostResult,
    bcost,
    bcost_many,
    bdeltacost,
    bdeltacost_many,
    confidence_ranks,
    confusion3d_from_labels,
    confusion_from_labels,
    delta_costs,
    load_confusion_matrix,
    load_cost_matrix,
    load_label_predictions,
    match_labels,
)

ROOT = Path(__file__).resolve().parents[1]
Z95 = 1.959963984540054

# A 3-class case worked by hand (rows predicted, columns actual).
M_HAND = np.array([[5, 1, 0],
                   [2, 6, 1],
                   [0, 0, 5]])
C_HAND = np.array([[0.0, 2.0, 10.0],
                   [1.0, 0.0, 4.0],
                   [3.0, 1.0, 0.0]])
# sum(M * C) = 1*2 + 2*1 + 1*4 = 8 over n = 20 examples -> 0.4 per example.
# Per-example costs: 2 (x1), 1 (x2), 4 (x1), 0 (x16): E[c^2] = 22/20 = 1.1, var = 1.1 - 0.16 = 0.94.


# ------------------------------------------------------------------------------------------------
# BCOST
# ------------------------------------------------------------------------------------------------

def test_two_class_zero_one_cost_is_error_rate() -> None:
    confusion = np.array([[40, 10],
                          [5, 45]])          # 15 errors in 100
    res = bcost(confusion, 1 - np.eye(2), rng=0)
    assert res.cost == pytest.approx(0.15)
    assert res.n == 100 and res.k == 2 and res.level == 0.95
    # Normal interval of a proportion: 0.15 -/+ z sqrt(0.15 * 0.85 / 100).
    half = Z95 * math.sqrt(0.15 * 0.85 / 100)
    assert res.normal_low == pytest.approx(0.15 - half)
    assert res.normal_high == pytest.approx(0.15 + half)
    assert res.low <= 0.15 <= res.high


def test_hand_worked_three_class() -> None:
    res = bcost(M_HAND, C_HAND, rng=1)
    assert res.cost == pytest.approx(0.4)
    se = math.sqrt(0.94 / 20)
    assert res.std_error == pytest.approx(se)
    assert res.normal_low == pytest.approx(0.4 - Z95 * se)
    assert res.normal_high == pytest.approx(0.4 + Z95 * se)


def test_replicates_follow_the_papers_recipe_exactly() -> None:
    lam, b = 0.1, 1000
    res = bcost(M_HAND, C_HAND, laplace=lam, replicates=b, rng=np.random.default_rng(7))
    n, k = 20, 3
    p = (M_HAND + lam) / (k * k * lam + n)
    draws = np.random.default_rng(7).multinomial(n, p.ravel(), size=b)
    expected = np.sort(draws @ C_HAND.ravel() / n)
    np.testing.assert_allclose(res.replicates, expected)
    # 95 %, B = 1000: the 26th and 975th sorted values (Table 2 of the paper).
    assert res.low == expected[25] and res.high == expected[974]


def test_confidence_ranks() -> None:
    assert confidence_ranks(0.95, 1000) == (26, 975)
    assert confidence_ranks(0.9, 1000) == (51, 950)        # no floating-point off-by-one
    assert confidence_ranks(0.99, 1000) == (6, 995)
    assert confidence_ranks(0.95, 1) == (1, 1)
    lb, ub = confidence_ranks(0.01, 10)
    assert 1 <= lb <= ub <= 10


def test_replicate_mean_is_laplace_smoothed_expected_cost() -> None:
    # lambda = 1, k = 3: p = (M + 1) / 29, so E[cost] = (8 + sum(C)) / 29 = (8 + 21) / 29 = 1.
    res = bcost(M_HAND, C_HAND, laplace=1.0, replicates=20000, rng=3)
    assert res.mean_replicate == pytest.approx(1.0, abs=0.02)
    # Without smoothing the replicates are centred on the observed cost.
    res0 = bcost(M_HAND, C_HAND, laplace=0.0, replicates=20000, rng=3)
    assert res0.mean_replicate == pytest.approx(0.4, abs=0.01)


def test_replicate_mean_matches_smoothed_cost_on_larger_problem() -> None:
    rng = np.random.default_rng(11)
    confusion = rng.integers(0, 40, size=(5, 5)) + np.diag([300, 200, 150, 5, 80])
    costs = rng.uniform(0, 100, size=(5, 5))
    lam = 0.5
    p = (confusion + lam) / (25 * lam + confusion.sum())
    res = bcost(confusion, costs, laplace=lam, replicates=5000, rng=12)
    assert res.mean_replicate == pytest.approx(float((p * costs).sum()), rel=0.01)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_interval_contains_point_estimate_in_typical_cases(seed: int) -> None:
    rng = np.random.default_rng(seed)
    confusion = rng.multinomial(1000, rng.dirichlet(np.ones(16) * 2)).reshape(4, 4)
    costs = rng.uniform(0, 10, size=(4, 4))
    res = bcost(confusion, costs, rng=seed)
    assert res.low <= res.cost <= res.high
    assert res.normal_low <= res.cost <= res.normal_high
    assert np.all(np.diff(res.replicates) >= 0)


def test_seed_reproducibility() -> None:
    a = bcost(M_HAND, C_HAND, rng=42)
    b = bcost(M_HAND, C_HAND, rng=42)
    c = bcost(M_HAND, C_HAND, rng=np.random.default_rng(42))
    d = bcost(M_HAND, C_HAND, rng=43)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    np.testing.assert_array_equal(a.replicates, c.replicates)
    assert not np.array_equal(a.replicates, d.replicates)
    assert (a.low, a.high) == (b.low, b.high)


def test_at_level_equals_recomputation() -> None:
    base = bcost(M_HAND, C_HAND, level=0.95, rng=5)
    for level in (0.5, 0.8, 0.9, 0.99):
        again = bcost(M_HAND, C_HAND, level=level, rng=5)
        moved = base.at_level(level)
        assert isinstance(moved, BcostResult)
        for name in ("cost", "low", "high", "normal_low", "normal_high", "n", "k", "level"):
            assert getattr(moved, name) == pytest.approx(getattr(again, name)), name
        np.testing.assert_array_equal(moved.replicates, again.replicates)
    assert base.at_level(0.5).high - base.at_level(0.5).low <= base.high - base.low


def test_result_is_frozen_and_replicates_read_only() -> None:
    res = bcost(M_HAND, C_HAND, rng=0)
    with pytest.raises(AttributeError):
        res.cost = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        res.replicates[0] = 1.0


def test_bcost_many_matches_bcost() -> None:
    single = bcost(M_HAND, C_HAND, replicates=500, rng=9)
    batch = bcost_many(M_HAND[None], C_HAND, replicates=500, rng=9)
    assert batch.low[0] == single.low and batch.high[0] == single.high
    assert batch.cost[0] == pytest.approx(single.cost)
    assert batch.normal_low[0] == pytest.approx(single.normal_low)
    stack = np.stack([M_HAND, M_HAND * 2, M_HAND + 1])
    many = bcost_many(stack, C_HAND, replicates=300, rng=1)
    assert many.cost.shape == (3,) and np.all(many.low <= many.high)
    assert many.covers(many.cost).all()


def test_bcost_many_coverage_on_known_population() -> None:
    rng = np.random.default_rng(21)
    p = rng.dirichlet(np.ones(9) * 3).reshape(3, 3)
    costs = rng.uniform(0, 10, size=(3, 3))
    truth = float((p * costs).sum())
    tests = rng.multinomial(500, p.ravel(), size=300).reshape(-1, 3, 3)
    res = bcost_many(tests, costs, replicates=400, laplace=0.1, rng=22)
    assert 0.88 <= res.covers(truth).mean() <= 0.99


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 4), scale=st.floats(0.5, 100.0))
def test_costs_scale_the_interval(seed: int, k: int, scale: float) -> None:
    rng = np.random.default_rng(seed)
    confusion = rng.integers(0, 20, size=(k, k))
    confusion[0, 0] += 1
    costs = rng.uniform(0, 5, size=(k, k))
    a = bcost(confusion, costs, replicates=50, rng=seed)
    b = bcost(confusion, costs * scale, replicates=50, rng=seed)
    assert b.low == pytest.approx(a.low * scale, rel=1e-9, abs=1e-12)
    assert b.high == pytest.approx(a.high * scale, rel=1e-9, abs=1e-12)
    assert a.low <= a.high


# ------------------------------------------------------------------------------------------------
# BDELTACOST
# ------------------------------------------------------------------------------------------------

def test_delta_costs_definition() -> None:
    d = delta_costs(C_HAND)
    for i1 in range(3):
        for i2 in range(3):
            for j in range(3):
                assert d[i1, i2, j] == C_HAND[i1, j] - C_HAND[i2, j]


def _two_classifiers(seed: int, n: int = 1000, acc1: float = 0.9, acc2: float = 0.9):
    rng = np.random.default_rng(seed)
    labels = ["a", "b", "c"]
    y = rng.choice(labels, size=n, p=[0.5, 0.3, 0.2])
    p1 = np.where(rng.random(n) < acc1, y, rng.choice(labels, size=n))
    p2 = np.where(rng.random(n) < acc2, y, rng.choice(labels, size=n))
    return labels, y, p1, p2


def test_bdeltacost_delta_is_difference_of_costs_and_paired_z() -> None:
    labels, y, p1, p2 = _two_classifiers(0, acc2=0.7)
    m3 = confusion3d_from_labels(p1, p2, y, labels)
    res = bdeltacost(m3, C_HAND, rng=0)
    cost1 = bcost(confusion_from_labels(p1, y, labels), C_HAND, rng=0).cost
    cost2 = bcost(confusion_from_labels(p2, y, labels), C_HAND, rng=0).cost
    assert res.delta == pytest.approx(cost1 - cost2)
    # Paired z interval from the per-example differences (population s.d.).
    idx = {lab: i for i, lab in enumerate(labels)}
    diff = np.array([C_HAND[idx[a], idx[t]] - C_HAND[idx[b], idx[t]]
                     for a, b, t in zip(p1, p2, y, strict=True)])
    se = diff.std() / math.sqrt(diff.size)
    assert res.std_error == pytest.approx(se)
    assert res.normal_low == pytest.approx(diff.mean() - Z95 * se)
    assert res.n == 1000 and res.k == 3 and res.laplace == 0.0


def test_bdeltacost_rejects_clearly_different_classifiers() -> None:
    labels, y, p1, p2 = _two_classifiers(1, acc1=0.95, acc2=0.4)
    m3 = confusion3d_from_labels(p1, p2, y, labels)
    res = bdeltacost(m3, C_HAND, rng=1)
    assert res.reject and res.high < 0 and res.delta < 0
    assert res.normal_reject


def test_bdeltacost_identical_classifiers_not_rejected() -> None:
    labels, y, p1, _ = _two_classifiers(2)
    m3 = confusion3d_from_labels(p1, p1, y, labels)
    res = bdeltacost(m3, C_HAND, rng=2)
    assert res.delta == 0 and res.low == 0 and res.high == 0
    assert not res.reject
    # Same cost matrix for both: swapping the classifiers negates the interval.
    labels, y, p1, p2 = _two_classifiers(3)
    ab = bdeltacost(confusion3d_from_labels(p1, p2, y, labels), C_HAND, rng=3)
    ba = bdeltacost(confusion3d_from_labels(p2, p1, y, labels), C_HAND, rng=3)
    assert ab.delta == pytest.approx(-ba.delta)


def test_bdeltacost_type_one_error_near_nominal() -> None:
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(9)).reshape(3, 3) + np.diag([0.3, 0.2, 0.1])
    p /= p.sum()
    cond = p / p.sum(axis=0)
    p3 = cond[:, None, :] * cond[None, :, :] * p.sum(axis=0)
    tests = rng.multinomial(1000, p3.ravel(), size=300).reshape(-1, 3, 3, 3)
    res = bdeltacost_many(tests, C_HAND, replicates=400, rng=5)
    assert 0.88 <= 1 - res.reject.mean() <= 0.995


def test_bdeltacost_at_level_and_seed() -> None:
    labels, y, p1, p2 = _two_classifiers(6, acc2=0.85)
    m3 = confusion3d_from_labels(p1, p2, y, labels)
    base = bdeltacost(m3, C_HAND, rng=6)
    again = bdeltacost(m3, C_HAND, rng=6, level=0.8)
    moved = base.at_level(0.8)
    assert isinstance(moved, BdeltacostResult)
    assert (moved.low, moved.high, moved.reject) == (again.low, again.high, again.reject)
    assert moved.normal_low == pytest.approx(again.normal_low)
    single = bdeltacost_many(m3[None], C_HAND, rng=6)
    assert single.delta[0] == pytest.approx(base.delta)


# ------------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------------

GOOD = np.array([[5, 1], [2, 6]])
COST2 = np.array([[0.0, 1.0], [2.0, 0.0]])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"confusion": np.ones((2, 3))}, r"square k x k"),
        ({"confusion": np.ones(4)}, r"square k x k"),
        ({"confusion": [[1]]}, r"k >= 2"),
        ({"confusion": [[1, -1], [0, 2]]}, r"non-negative"),
        ({"confusion": [[1.5, 1], [0, 2]]}, r"integer counts"),
        ({"confusion": [[np.nan, 1], [0, 2]]}, r"NaN"),
        ({"confusion": [[0, 0], [0, 0]]}, r"n must be > 0"),
        ({"confusion": [["a", "b"], ["c", "d"]]}, r"numeric"),
        ({"costs": np.ones((3, 3))}, r"2x2"),
        ({"costs": [[0, np.inf], [1, 0]]}, r"finite"),
        ({"costs": [[0, -1], [1, 0]]}, r"allow_negative"),
        ({"level": 0.0}, r"level"),
        ({"level": 1.0}, r"level"),
        ({"level": 95}, r"level"),
        ({"level": "high"}, r"level"),
        ({"replicates": 0}, r"replicates"),
        ({"replicates": 100_001}, r"replicates"),
        ({"replicates": 10.5}, r"replicates must be an integer"),
        ({"replicates": True}, r"replicates must be an integer"),
        ({"laplace": -0.1}, r"laplace"),
        ({"laplace": float("nan")}, r"laplace"),
        ({"rng": -1}, r"non-negative"),
        ({"rng": "seed"}, r"rng must be"),
    ],
)
def test_bcost_validation(kwargs: dict, match: str) -> None:
    args = {"confusion": GOOD, "costs": COST2, **kwargs}
    with pytest.raises(ParameterError, match=match):
        bcost(args.pop("confusion"), args.pop("costs"), **args)


def test_negative_costs_allowed_on_request() -> None:
    res = bcost(GOOD, [[-1.0, 1.0], [2.0, -0.5]], allow_negative=True, rng=0)
    assert res.cost == pytest.approx((-5 + 1 + 4 - 3) / 14)


@pytest.mark.parametrize(
    ("confusion3d", "costs", "match"),
    [
        (np.ones((2, 2)), COST2, r"k x k x k"),
        (np.ones((2, 2, 3)), COST2, r"k x k x k"),
        (np.ones((2, 2, 2)), np.ones((3, 3)), r"2x2"),
        (-np.ones((2, 2, 2)), COST2, r"non-negative"),
        (np.zeros((2, 2, 2)), COST2, r"n must be > 0"),
    ],
)
def test_bdeltacost_validation(confusion3d, costs, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        bdeltacost(confusion3d, costs)


def test_errors_are_costdash_errors() -> None:
    from costdash.errors import CostdashError

    with pytest.raises(CostdashError):
        bcost(GOOD, COST2, level=2)


# ------------------------------------------------------------------------------------------------
# Labels and files
# ------------------------------------------------------------------------------------------------

def test_confusion_from_labels_orientation() -> None:
    m = confusion_from_labels(["cat", "cat", "dog"], ["dog", "cat", "dog"], ["cat", "dog"])
    # rows = predicted, columns = actual: predicted cat / actual dog is M[0, 1].
    np.testing.assert_array_equal(m, [[1, 1], [0, 1]])
    with pytest.raises(ParameterError, match="fox"):
        confusion_from_labels(["cat"], ["fox"], ["cat", "dog"])
    with pytest.raises(ParameterError, match="length"):
        confusion_from_labels(["cat"], ["cat", "dog"], ["cat", "dog"])


def test_confusion3d_from_labels_marginals() -> None:
    labels, y, p1, p2 = _two_classifiers(7, n=200)
    m3 = confusion3d_from_labels(p1, p2, y, labels)
    assert m3.sum() == 200
    np.testing.assert_array_equal(m3.sum(axis=1), confusion_from_labels(p1, y, labels))
    np.testing.assert_array_equal(m3.sum(axis=0), confusion_from_labels(p2, y, labels))


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_load_cost_matrix_reorders_and_transposes(tmp_path: Path) -> None:
    f = _write(tmp_path / "c.csv", "pred\\actual,dog,cat\ncat,5,0\ndog,0,1\n")
    labels, costs = load_cost_matrix(f)
    assert labels == ["cat", "dog"]
    # cost of predicting cat when the truth is dog is 5.
    np.testing.assert_array_equal(costs, [[0, 5], [1, 0]])
    labels_t, costs_t = load_cost_matrix(f, transpose=True)
    assert labels_t == ["cat", "dog"]
    np.testing.assert_array_equal(costs_t, costs.T)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("x,a,b\na,0,1\n", r"same labels|square"),
        ("x,a,a\na,0,1\nb,1,0\n", r"repeated labels"),
        ("x,a,b\na,0,1\nc,1,0\n", r"only as rows: 'c'.*only as columns: 'b'"),
        ("x,a,b\na,0,oops\nb,1,0\n", r"row 1 \('a'\), column 'b': 'oops' is not a number"),
        ("x,a,b\na,0,1\nb,inf,0\n", r"row 2 \('b'\), column 'a'.*not a finite number"),
        ("x,a,b\na,0,-3\nb,1,0\n", r"negative"),
        ("x,a,b\na,0,1\nb,1\n", r"row 2: expected 3 cells"),
        ("x,a,b\na,0,1\na,1,0\n", r"repeats"),
        ("", r"empty"),
    ],
)
def test_load_cost_matrix_errors(tmp_path: Path, text: str, match: str) -> None:
    f = _write(tmp_path / "bad.csv", text)
    with pytest.raises(InputFileError, match=match) as info:
        load_cost_matrix(f)
    assert "bad.csv" in str(info.value)


def test_load_cost_matrix_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="not found"):
        load_cost_matrix(tmp_path / "nope.csv")


def test_readers_take_a_file_object_and_name_it_in_messages(tmp_path: Path) -> None:
    import gzip
    import io

    text = "x,cat,dog\ncat,0,5\ndog,1,0\n"
    labels, costs = load_cost_matrix(io.BytesIO(text.encode()), name="upload.csv")
    assert labels == ["cat", "dog"] and costs[0, 1] == 5
    with pytest.raises(InputFileError, match=r"^upload\.csv, row 1 \('cat'\), column 'dog'"):
        load_cost_matrix(io.BytesIO(b"x,cat,dog\ncat,0,-5\ndog,1,0\n"), name="upload.csv")
    gz = tmp_path / "costs.csv.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    assert load_cost_matrix(gz)[0] == ["cat", "dog"]
    data = load_label_predictions(io.BytesIO(b"y_true,a\ncat,dog\n"), name="labels.csv")
    assert data.source == "labels.csv" and data.names == ("a",)
    with pytest.raises(InputFileError, match=r"^m\.csv: .*binary"):
        load_confusion_matrix(io.BytesIO(bytes(range(256)) * 4), name="m.csv")


def test_load_confusion_matrix(tmp_path: Path) -> None:
    f = _write(tmp_path / "m.csv", "p,a,b\na,5,1\nb,2,6\n")
    labels, counts = load_confusion_matrix(f)
    assert labels == ["a", "b"] and counts.dtype == np.int64
    np.testing.assert_array_equal(counts, GOOD)
    with pytest.raises(InputFileError, match="whole count"):
        load_confusion_matrix(_write(tmp_path / "m2.csv", "p,a,b\na,5.5,1\nb,2,6\n"))


def test_load_label_predictions_wide_and_long(tmp_path: Path) -> None:
    wide = _write(tmp_path / "w.csv", "y_true,clf_a,clf_b\ncat,cat,dog\ndog,dog,dog\n")
    data = load_label_predictions(wide)
    assert data.layout == "wide" and data.names == ("clf_a", "clf_b")
    pa, pb, yt = data.pair("clf_a", "clf_b")
    assert list(yt) == ["cat", "dog"] and list(pb) == ["dog", "dog"]
    long = _write(tmp_path / "l.csv",
                  "model,y_true,y_pred\nA,1,1\nA,2,1\nB,1,2\nB,2,2\n")
    data = load_label_predictions(long)
    assert data.layout == "long" and data.names == ("A", "B")
    assert list(data.classifier("B").y_pred) == ["2", "2"]
    assert data.classifier("A").labels == {"1", "2"}


def test_load_label_predictions_errors(tmp_path: Path) -> None:
    f = _write(tmp_path / "p.csv", "y_true,clf\ncat,cat\n,dog\n")
    with pytest.raises(InputFileError, match=r"column 'y_true': empty label in row\(s\) 2"):
        load_label_predictions(f)
    f = _write(tmp_path / "q.csv", "truth,clf\ncat,cat\n")
    with pytest.raises(InputFileError, match="missing column"):
        load_label_predictions(f)
    f = _write(tmp_path / "r.csv", "y_true,clf\ncat,cat\n")
    with pytest.raises(InputFileError, match="no classifier column 'other'"):
        load_label_predictions(f, models=["other"])
    f = _write(tmp_path / "s.csv", "model,y_true,y_pred\nA,1,1\nB,2,2\n")
    with pytest.raises(InputFileError, match="disagree on the true label"):
        load_label_predictions(f).pair("A", "B")


def test_match_labels_lists_both_sides() -> None:
    assert match_labels(["a", "b", "c"], {"a", "b"}) == ["c"]
    with pytest.raises(InputFileError, match=r"missing from costs.csv: '1.0'.*missing from data"):
        match_labels(["0", "1"], {"0", "1.0"}, matrix_source="costs.csv")


# ------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------

@pytest.fixture
def files(tmp_path: Path) -> dict[str, Any]:
    labels, y, p1, p2 = _two_classifiers(8, n=400, acc1=0.9, acc2=0.5)
    rows = "\n".join(f"{a},{b},{c}" for a, b, c in zip(y, p1, p2, strict=True))
    preds = _write(tmp_path / "preds.csv", "y_true,clf_a,clf_b\n" + rows + "\n")
    header = "pred\\actual," + ",".join(labels)
    body = "\n".join(lab + "," + ",".join(f"{v:g}" for v in C_HAND[i]) for i, lab in
                     enumerate(labels))
    costs = _write(tmp_path / "costs.csv", header + "\n" + body + "\n")
    costs_t = _write(tmp_path / "costs_t.csv", header + "\n" + "\n".join(
        lab + "," + ",".join(f"{v:g}" for v in C_HAND.T[i]) for i, lab in enumerate(labels)))
    conf = confusion_from_labels(p1, y, labels)
    conf_file = _write(tmp_path / "conf.csv", header + "\n" + "\n".join(
        lab + "," + ",".join(str(v) for v in conf[i]) for i, lab in enumerate(labels)))
    return {"preds": preds, "costs": costs, "costs_t": costs_t, "conf": conf_file,
            "expected_a": bcost(conf, C_HAND, rng=0).cost,
            "expected_b": bcost(confusion_from_labels(p2, y, labels), C_HAND, rng=0).cost}


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert cli_main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_bcost_json(files, capsys) -> None:
    out = _json(capsys, ["bcost", str(files["preds"]), "--costs", str(files["costs"]),
                         "--model", "clf_a", "--seed", "1", "--json"])
    for key in ("cost", "low", "high", "normal_low", "normal_high", "n", "k"):
        assert key in out
    assert out["cost"] == pytest.approx(files["expected_a"])
    assert out["n"] == 400 and out["k"] == 3 and out["model"] == "clf_a"
    assert out["low"] <= out["cost"] <= out["high"]
    assert out["normal_low"] < out["cost"] < out["normal_high"]
    again = _json(capsys, ["bcost", str(files["preds"]), "--costs", str(files["costs"]),
                           "--model", "clf_a", "--seed", "1", "--json"])
    assert again == out
    # The same matrix given transposed with --actual-rows gives the same answer.
    flipped = _json(capsys, ["bcost", str(files["preds"]), "--costs", str(files["costs_t"]),
                             "--model", "clf_a", "--seed", "1", "--json", "--actual-rows"])
    assert flipped["cost"] == pytest.approx(out["cost"]) and flipped["low"] == out["low"]


def test_cli_bcost_confusion_file(files, capsys) -> None:
    out = _json(capsys, ["bcost", "--confusion", str(files["conf"]), "--costs",
                         str(files["costs"]), "--seed", "1", "--json", "--level", "0.9"])
    assert out["cost"] == pytest.approx(files["expected_a"])
    assert out["n"] == 400 and out["level"] == 0.9 and out["model"] is None


def test_cli_bdeltacost_json(files, capsys) -> None:
    out = _json(capsys, ["bdeltacost", str(files["preds"]), "--costs", str(files["costs"]),
                         "--a", "clf_a", "--b", "clf_b", "--seed", "2", "--json"])
    for key in ("delta", "low", "high", "reject", "normal_low", "normal_high", "n", "k"):
        assert key in out
    assert out["delta"] == pytest.approx(files["expected_a"] - files["expected_b"])
    assert out["reject"] is True and out["high"] < 0
    assert out["laplace"] == 0.0


def test_cli_readable_output(files, capsys) -> None:
    assert cli_main(["bdeltacost", str(files["preds"]), "--costs", str(files["costs"]),
                     "--a", "clf_a", "--b", "clf_b", "--seed", "2"]) == 0
    text = capsys.readouterr().out
    assert "BDELTACOST" in text and "reject" in text
    assert cli_main(["bcost", str(files["preds"]), "--costs", str(files["costs"]),
                     "--model", "clf_b", "--replicates", "200"]) == 0
    assert "average cost (BCOST)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--model", "nope"], "no classifier column 'nope'"),
        ([], "choose one with --model"),
        (["--model", "clf_a", "--level", "1.5"], "level"),
        (["--model", "clf_a", "--replicates", "0"], "replicates"),
    ],
)
def test_cli_bcost_errors(files, capsys, extra: list[str], match: str) -> None:
    code = cli_main(["bcost", str(files["preds"]), "--costs", str(files["costs"]), *extra])
    assert code == 2
    assert match in capsys.readouterr().err


def test_cli_label_mismatch(files, tmp_path: Path, capsys) -> None:
    costs = _write(tmp_path / "other.csv", "p,a,b,x\na,0,1,1\nb,1,0,1\nx,1,1,0\n")
    code = cli_main(["bcost", str(files["preds"]), "--costs", str(costs), "--model", "clf_a"])
    assert code == 2
    err = capsys.readouterr().err
    assert "'c'" in err and "'x'" in err     # missing on either side


def test_cli_needs_predictions_or_confusion(files, capsys) -> None:
    assert cli_main(["bcost", "--costs", str(files["costs"])]) == 2
    assert "--confusion" in capsys.readouterr().err
    assert cli_main(["bcost", str(files["preds"]), "--confusion", str(files["conf"]),
                     "--costs", str(files["costs"])]) == 2


# ------------------------------------------------------------------------------------------------
# The validation study
# ------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_study_quick_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sklearn")
    path = ROOT / "studies" / "margineantu_dietterich.py"
    spec = importlib.util.spec_from_file_location("md_study", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "md_study", module)   # dataclasses look their module up
    spec.loader.exec_module(module)
    out_file = tmp_path / "tables.md"
    result = module.main(["--quick", "--out", str(out_file)])
    summary = result["summary"]
    assert set(summary) == set(module.MODELS)
    coverage = np.mean([s["bcost_cover"] for s in summary.values()])
    assert coverage >= 0.85
    assert all(s["bcost_cover"] >= 0.7 for s in summary.values())
    accept = np.mean([s["type1_accept"] for s in summary.values()])
    assert accept >= 0.85
    # Power rises with the perturbation of classifier 2.
    for s in summary.values():
        assert s["power"][-1]["reject"] >= s["power"][0]["reject"]
    assert "BCOST coverage" in out_file.read_text()
    assert result["runtime"] < 60
