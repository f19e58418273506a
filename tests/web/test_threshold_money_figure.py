"""The money-against-threshold figure (issue 28, item 1) draws the core's numbers as they are."""

from __future__ import annotations

import numpy as np
import pytest

from costdash.conditions import OperatingCondition
from costdash.roc import roc_curve
from costdash.threshold_money import cost_by_threshold
from dashboard.figures.threshold_money import money_by_threshold_figure


def _curve():
    rng = np.random.default_rng(0)
    y = rng.random(500) < 0.2
    score = np.round(rng.normal(size=500) + 1.3 * y, 2)
    cond = OperatingCondition(p_pos=0.05, cost_fn=30.0, cost_fp=1.0)
    return cost_by_threshold(roc_curve(y, score, name="gbm"), cond)


def test_steps_cheapest_and_pins_carry_the_cores_money():
    curve = _curve()
    pins = [float(curve.threshold[5]), float(curve.threshold[40])]
    fig = money_by_threshold_figure(curve, volume=1000, unit="€", index=2, pins=pins)
    traces = {t.uid: t for t in fig.data}
    assert set(traces) == {"cost", "cheapest", "pin-0", "pin-1"}
    cost = traces["cost"]
    np.testing.assert_array_equal(cost.x, curve.threshold[1:])
    np.testing.assert_allclose(cost.y, curve.expected_cost[1:] * 1000, rtol=1e-15)
    assert cost.line.shape == "hv"
    assert traces["cheapest"].x[0] == curve.best_threshold
    assert traces["cheapest"].y[0] == pytest.approx(curve.best_expected_cost * 1000)
    assert traces["pin-1"].y[0] == pytest.approx(curve.expected_cost[40] * 1000)
    assert np.all(np.asarray(cost.y) >= traces["cheapest"].y[0] - 1e-9)
    assert "1000 cases (€)" in fig.layout.yaxis.title.text
    assert list(traces["pin-0"].customdata) == [pins[0]]      # a click pins this threshold
