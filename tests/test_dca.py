"""Decision curves (costdash.dca, ``costdash dca``) against the ``dcurves`` package (a test-only
dependency), brute-force counts, and the exact correspondence with cost space."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from dcurves import dca as dcurves_dca
from hypothesis import given, settings
from hypothesis import strategies as st

from costdash.choice_curves import score_driven_curve
from costdash.cli import main
from costdash.dca import (
    decision_curves,
    net_benefit,
    net_benefit_from_cost,
    net_benefit_of_roc,
    parse_thresholds,
    threshold_grid,
)
from costdash.demo import DEMOS, load_demo
from costdash.errors import ParameterError
from costdash.roc import roc_curve


def synthetic(seed: int, n: int = 500):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.2
    a = np.round(1 / (1 + np.exp(-(rng.normal(size=n) - 1.5 + 1.8 * y))), 2)  # many ties
    b = 1 / (1 + np.exp(-(rng.normal(size=n) - 1.0 + 1.0 * y)))
    return y, {"a": a, "b": b}


def data_sets():
    for name in DEMOS:
        data = load_demo(name)
        yield name, data.scored[0].y_true, {c.name: c.score for c in data.scored}
    y, scores = synthetic(7)
    yield "synthetic", y, scores


@pytest.mark.slow
@pytest.mark.parametrize("name,y,scores", list(data_sets()), ids=lambda v: v if isinstance(v, str) else "")
def test_agrees_with_dcurves(name, y, scores):
    thresholds = np.round(np.arange(0.0, 1.0, 0.01), 2)
    frame = pd.DataFrame({"y": y.astype(int), **scores})
    theirs = dcurves_dca(data=frame, outcome="y", modelnames=list(scores), thresholds=thresholds)
    ours = decision_curves(y, scores, thresholds)
    for model in [*scores, "all", "none"]:
        rows = theirs[theirs["model"] == model].sort_values("threshold")
        np.testing.assert_allclose(rows["threshold"].to_numpy(), thresholds, atol=1e-12)
        mine = (ours.net_benefit[model] if model in scores
                else ours.treat_all if model == "all" else ours.treat_none)
        theirs_nb = rows["net_benefit"].to_numpy()
        # pₜ > 0: the same rule (score >= pₜ) and formula.
        np.testing.assert_allclose(mine[1:], theirs_nb[1:], rtol=0, atol=1e-9)
        # pₜ = 0: dcurves moves scores of exactly 0 to -ε (a zero risk is never flagged); here
        # every case has score >= 0, so the two differ by exactly the positives scored 0.
        if model in scores:
            zero_pos = np.sum((scores[model] == 0) & y) / y.size
            assert mine[0] == pytest.approx(y.mean(), abs=1e-15)
            assert theirs_nb[0] == pytest.approx(mine[0] - zero_pos, abs=1e-9)
        else:
            assert mine[0] == pytest.approx(theirs_nb[0], abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 40).flatmap(lambda n: st.tuples(
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.lists(st.integers(0, 10), min_size=n, max_size=n))), st.integers(0, 9))
def test_net_benefit_by_brute_force_and_from_cost_space(data, k):
    labels, ks = data
    y = np.array(labels, dtype=bool)
    if y.all() or not y.any():
        y[0] = not y[0]
    s = np.array(ks) / 10.0
    pt = np.array([k / 10.0, 0.05, 0.55])
    n = y.size
    flagged = s[None, :] >= pt[:, None]
    tp = (flagged & y).sum(axis=1)
    fp = (flagged & ~y).sum(axis=1)
    expected = tp / n - fp / n * pt / (1 - pt)
    np.testing.assert_allclose(net_benefit(y, s, pt), expected, atol=1e-15)
    roc = roc_curve(y, s)
    np.testing.assert_allclose(net_benefit_of_roc(roc, pt), expected, atol=1e-15)
    # The decision curve is the score-driven (Brier) curve re-scaled: at PC(+) = x(pₜ) the flagged
    # set is score >= pₜ, and net benefit = π - (π(1 - pₜ) + (1 - π)pₜ)/(1 - pₜ) · NE.
    pi = y.mean()
    x = pi * (1 - pt) / (pi * (1 - pt) + (1 - pi) * pt)
    fpr, tpr = fp / (~y).sum(), tp / y.sum()
    ne = (1 - tpr) * x + fpr * (1 - x)
    back_pt, nb = net_benefit_from_cost(x, ne, pi)
    np.testing.assert_allclose(back_pt, pt, atol=1e-12)
    np.testing.assert_allclose(nb, expected, atol=1e-12)
    # and the Brier curve drawn by costdash passes through those points (right-continuous in c)
    curve = score_driven_curve(roc)
    for xi, ni in zip(x, ne):
        if xi == 1.0:  # pₜ = 0: only the point x = 1 itself flags score 0; the drawing ends
            continue   # with the left limit there (a single point, no area)
        at = curve.cost[curve.pc == xi]
        if at.size:  # a jump: one of its two ends
            assert np.min(np.abs(at - ni)) < 1e-12
        else:
            assert np.interp(xi, curve.pc, curve.cost) == pytest.approx(ni, abs=1e-12)


def test_refuses_scores_that_are_not_probabilities_and_reserved_names():
    y = np.array([0, 1, 1, 0], dtype=bool)
    curves = decision_curves(y, {"margin": np.array([-2.0, 1.0, 3.0, 0.5]),
                                 "p": np.array([0.1, 0.8, 0.6, 0.4])}, [0.2, 0.5])
    assert curves.net_benefit["margin"] is None and "not probabilities" in curves.refused["margin"]
    np.testing.assert_allclose(curves.net_benefit["p"], [0.5 - 0.25 * 0.25, 0.5])
    np.testing.assert_allclose(curves.treat_all, [0.5 - 0.5 * 0.25, 0.0])
    with pytest.raises(ParameterError, match="clash"):
        decision_curves(y, {"all": np.array([0.1, 0.8, 0.6, 0.4])})


def test_threshold_grids():
    np.testing.assert_array_equal(parse_thresholds("0.05:0.2:0.05"), [0.05, 0.1, 0.15, 0.2])
    assert threshold_grid().tolist() == [round(0.01 * k, 12) for k in range(1, 100)]
    for bad in ("0.1:0.5", "a:b:c", "0.5:0.1:0.1", "0:1:0.1", "0:0.5:0"):
        with pytest.raises(ParameterError):
            parse_thresholds(bad)


def test_cli_json_contract(capsys):
    path = DEMOS["breast-cancer"].path
    assert main(["dca", str(path), "--thresholds", "0.1:0.5:0.2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    data = load_demo("breast-cancer")
    assert set(out) == {"thresholds", "net_benefit"}
    assert out["thresholds"] == [0.1, 0.3, 0.5]
    assert list(out["net_benefit"]) == [*data.names, "all", "none"]
    y = data.scored[0].y_true
    for c in data.scored:
        np.testing.assert_allclose(out["net_benefit"][c.name],
                                   net_benefit(y, c.score, out["thresholds"]), atol=1e-15)
    assert out["net_benefit"]["none"] == [0.0, 0.0, 0.0]


def test_cli_refused_model_is_null_with_a_note(capsys, tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("y_true,p,margin\n1,0.9,2.5\n0,0.2,-1\n1,0.6,0.3\n0,0.4,-0.2\n")
    assert main(["dca", str(path), "--thresholds", "0.5:0.5:0.1", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["net_benefit"]["margin"] is None and out["net_benefit"]["p"] == [0.5]
    assert "not probabilities" in out["refused"]["margin"]
    assert "margin" in captured.err
    assert main(["dca", str(path), "--thresholds", "0.5:1.5:0.1"]) == 2


def test_cli_table_shows_long_names_whole_in_aligned_columns(capsys, tmp_path):
    long = "gradient_boosting_with_isotonic_calibration"
    path = tmp_path / "p.csv"
    path.write_text(f"y_true,{long},lr\n1,0.9,0.8\n0,0.2,0.3\n1,0.6,0.4\n0,0.4,0.1\n")
    assert main(["dca", str(path), "--thresholds", "0.1:0.5:0.2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header, rule, rows = lines[1], lines[2], lines[3:]
    assert header.split() == ["p_t", long, "lr", "all", "none"]
    assert len(rows) == 3 and len(rule) == len(header)
    # Each column ends where its name ends in the header: the value sits under its name.
    ends = [header.index(n) + len(n) for n in (long, "lr", "all", "none")]
    y = np.array([1, 0, 1, 0], bool)
    for row, pt in zip(rows, (0.1, 0.3, 0.5)):
        assert len(row) == len(header)
        cells = [row[:e].split()[-1] for e in ends]
        assert [row[e:e + 1] for e in ends] == [" ", " ", " ", ""]
        expected = [net_benefit(y, np.array([0.9, 0.2, 0.6, 0.4]), [pt])[0],
                    net_benefit(y, np.array([0.8, 0.3, 0.4, 0.1]), [pt])[0],
                    0.5 - 0.5 * pt / (1 - pt), 0.0]
        np.testing.assert_allclose([float(c) for c in cells], expected, atol=5e-6)
