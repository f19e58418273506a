"""costdash.watch (costdash/monitor.py): periods, the policy's choice, regret and alerts on a
hand-worked reference, the JSON contract, and score counts against rows."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import costdash
from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset, ScoredClassifier
from costdash.errors import ParameterError
from costdash.monitor import pc_at, watch, watch_to_dict

# A reference whose hull is (0, 0), (0.1, 0.8), (1, 1): classifier "m" scores 1 or 0, and 8 of 10
# positives and 1 of 10 negatives score 1. Its cost line 0.2x + 0.1(1 - x) is below the trivial
# ones (x and 1 - x) for 1/9 <= PC(+) <= 9/11.
Y = np.r_[np.ones(10, bool), np.zeros(10, bool)]
S = np.r_[np.ones(8), np.zeros(2), np.ones(1), np.zeros(9)]
REF = Dataset("ref", "wide", "1", scored=(ScoredClassifier("m", Y, S),))


def _period(n: int, flagged: int) -> np.ndarray:
    return np.r_[np.ones(flagged), np.zeros(n - flagged)]


def test_hand_worked_periods_with_acc():
    # Period "a": 380 of 1000 flagged, p = (0.38 - 0.1)/0.7 = 0.4; period "b": 100 of 1000,
    # p = 0 exactly (the rate is the FPR).
    prod = np.r_[_period(1000, 380), _period(1000, 100)]
    labels = np.r_[np.full(1000, "a"), np.full(1000, "b")]
    w = watch(REF, prod, period=labels, p_pos=0.5, method="acc")
    assert w.deployed.classifier == "m" and w.deployed.threshold == 1.0
    assert w.deployed.valid_pc == pytest.approx((1 / 9, 9 / 11), abs=1e-15)
    a, b = w.periods
    assert (a.period, a.n, b.period, b.n) == ("a", 1000, "b", 1000)
    assert a.p_pos == pytest.approx(0.4, abs=1e-15) and a.pc == pytest.approx(0.4, abs=1e-15)
    assert a.choice_classifier == "m" and a.choice_threshold == 1.0
    assert a.deployed_optimal and a.regret_per_period == 0.0 and not a.alert
    assert b.p_pos == 0.0 and b.pc == 0.0
    assert b.choice_classifier == "all-negative" and b.choice_threshold is None
    assert not b.deployed_optimal
    # Flagging 10 % of the negatives costs 0.1 per case against flagging nothing: 100 in 1000.
    assert b.regret_per_period == pytest.approx(100.0, abs=1e-9)
    # Its interval ends well below 1/9 (the reference's FPR of 1/10 has a narrow spread only
    # for the production side; it is checked, not assumed).
    assert b.alert == (b.pc_high < 1 / 9)
    assert b.pc_low <= b.pc <= b.pc_high


def test_costs_turn_p_into_pc_and_money():
    prod = _period(1000, 100)
    cond = OperatingCondition(p_pos=0.5, cost_fn=4.0, cost_fp=2.0, cost_tp=1.0, cost_tn=0.5)
    w = watch(REF, prod, p_pos=0.5, cost_fn=4.0, cost_fp=2.0, cost_tp=1.0, cost_tn=0.5,
              method="acc")
    (p,) = w.periods
    assert p.pc == pc_at(p.p_pos, cond) and p.pc_high == pc_at(p.p_pos_high, cond)
    # p = 0: flagging 10 % of negatives costs 0.1·(C(+|-) - C(-|-)) = 0.15 per case.
    assert p.regret_per_period == pytest.approx(1000 * 0.1 * 1.5, abs=1e-9)
    assert pc_at(0.2, OperatingCondition(p_pos=0.5, cost_fn=4, cost_fp=1)) == 0.5
    assert pc_at(0.0, cond) == 0.0 and pc_at(1.0, cond) == 1.0


def test_a_rounded_threshold_is_the_same_deployed_choice_and_an_off_hull_one_always_alerts():
    prod = _period(1000, 380)
    same = watch(REF, prod, p_pos=0.5, deployed=("m", 0.5), method="acc")
    assert same.deployed.valid_pc == pytest.approx((1 / 9, 9 / 11), abs=1e-15)
    assert same.periods[0].deployed_optimal and not same.periods[0].alert
    # Flagging everything is on the hull (vertex (1, 1)) but optimal only above 9/11.
    allpos = watch(REF, prod, p_pos=0.5, deployed=("all-positive", None), classifier="m")
    assert allpos.deployed.valid_pc == pytest.approx((9 / 11, 1.0), abs=1e-15)
    assert not allpos.periods[0].deployed_optimal
    # A point under the hull: optimal nowhere, so every period alerts.
    y = np.r_[Y, True, False]
    s = np.r_[S, 2.0, 2.0]                       # score 2: one positive and one negative
    ref = Dataset("ref", "wide", "1", scored=(ScoredClassifier("m", y, s),))
    off = watch(ref, prod, p_pos=0.5, deployed=("m", 2.0), resamples=20)
    assert off.deployed.valid_pc is None and off.periods[0].alert


def test_default_deployed_choice_is_the_policys_at_the_planned_prior():
    w = watch(REF, _period(500, 190), p_pos=0.05, method="acc", deployed=("m", 1.0))
    assert w.condition.p_pos == 0.05
    planned = watch(REF, _period(500, 190), p_pos=0.05, classifier="m")
    # At p(+) 0.05 with unit costs PC(+) = 0.05 < 1/9: the policy flags nothing.
    assert planned.deployed.classifier == "all-negative" and planned.deployed.threshold is None
    assert planned.policy == w.policy


def test_json_contract():
    prod = pd.DataFrame({"score": np.r_[_period(300, 120), _period(200, 20)],
                         "week": np.r_[np.full(300, 7), np.full(200, 3)]})
    w = watch(REF, prod, period="week", p_pos=0.5, method="acc")
    out = watch_to_dict(w)
    text = json.dumps(out, allow_nan=False)
    assert set(out) == {"method", "level", "deployed", "periods"}
    assert out["method"] == "acc" and out["level"] == 0.9
    assert out["deployed"] == {"classifier": "m", "threshold": 1.0}
    assert [p["period"] for p in out["periods"]] == [7, 3]      # as given, in file order
    for p in out["periods"]:
        assert set(p) == {"period", "n", "p_pos", "p_pos_low", "p_pos_high", "pc", "pc_low",
                          "pc_high", "choice", "deployed_optimal", "regret_per_period", "alert"}
        assert set(p["choice"]) == {"classifier", "threshold"}
        assert isinstance(p["deployed_optimal"], bool) and isinstance(p["alert"], bool)
    assert out["periods"][0]["n"] == 300 and json.loads(text) == out
    single = watch_to_dict(watch(REF, _period(100, 30), p_pos=0.5, method="acc"))
    assert [p["period"] for p in single["periods"]] == ["all"]


@pytest.mark.parametrize("method", ["em", "acc"])
def test_score_counts_watch_exactly_like_rows(method):
    rng = np.random.default_rng(4)
    y = rng.random(2000) < 0.3
    s = np.round(rng.normal(2.0 * y, 1.0), 1)
    ref = Dataset("ref", "wide", "1", scored=(ScoredClassifier("m", y, s),))
    week = np.repeat(["w1", "w2", "w3"], [3000, 5000, 2000])
    prevalence = np.repeat([0.3, 0.05, 0.6], [3000, 5000, 2000])
    prod = np.round(rng.normal(2.0 * (rng.random(week.size) < prevalence), 1.0), 1)
    rows = pd.DataFrame({"score": prod, "week": week})
    counts = rows.groupby(["week", "score"]).size().reset_index(name="n")
    counts = counts.sort_values(["week", "score"], ascending=[True, False])
    kw = dict(p_pos=0.3, cost_fn=3.0, cost_fp=1.0, method=method, resamples=40)
    a = watch_to_dict(watch(ref, rows, period="week", **kw))
    b = watch_to_dict(watch(ref, counts, period="week", **kw))
    assert a == b
    assert [p["period"] for p in a["periods"]] == ["w1", "w2", "w3"]
    assert [p["n"] for p in a["periods"]] == [3000, 5000, 2000]
    # The low-prevalence week moves PC(+) well below the planned one; the estimate follows.
    assert a["periods"][1]["p_pos"] < a["periods"][0]["p_pos"] < a["periods"][2]["p_pos"]


def test_watch_errors():
    with pytest.raises(ParameterError, match="no column"):
        watch(REF, pd.DataFrame({"score": [1.0, 0.0]}), period="week", p_pos=0.5)
    with pytest.raises(ParameterError, match="one period label per"):
        watch(REF, [1.0, 0.0], period=["a"], p_pos=0.5)
    with pytest.raises(ParameterError, match="no classifier named"):
        watch(REF, [1.0, 0.0], p_pos=0.5, deployed=("z", 0.5))
    with pytest.raises(ParameterError, match="needs a deployed threshold"):
        watch(REF, [1.0, 0.0], p_pos=0.05, method="acc", classifier="m")
    with pytest.raises(ParameterError, match="p\\(\\+\\)"):
        watch(REF, [1.0, 0.0], p_pos=1.5)


def test_public_names():
    assert costdash.watch is watch and costdash.watch_to_dict is watch_to_dict
    assert callable(costdash.watch)
