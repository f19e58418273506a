"""The Production figure (issue 25) draws the watch's numbers where they belong."""

from __future__ import annotations

import numpy as np
import pandas as pd

from costdash.dataset import Dataset, ScoredClassifier
from costdash.monitor import watch
from dashboard.figures.production import production_figure


def test_periods_intervals_policy_bands_and_alerts():
    rng = np.random.default_rng(3)
    y = rng.random(3000) < 0.3
    ref = Dataset("ref", "wide", "1",
                  scored=(ScoredClassifier("m", y, rng.normal(2.0 * y)),))
    shifted = rng.random(8000) < np.repeat([0.3, 0.05], 4000)
    prod = pd.DataFrame({"score": rng.normal(2.0 * shifted),
                         "week": np.repeat(["w1", "w2"], 4000)})
    result = watch(ref, prod, period="week", p_pos=0.3, resamples=50)
    fig = production_figure(result, ["m"])
    traces = {t.uid: t for t in fig.data}
    est = traces["estimate"]
    assert list(est.x) == ["w1", "w2"]
    np.testing.assert_allclose(est.y, [p.pc for p in result.periods])
    np.testing.assert_allclose(np.asarray(est.y) + np.asarray(est.error_y.array),
                               [p.pc_high for p in result.periods])
    np.testing.assert_allclose(np.asarray(est.y) - np.asarray(est.error_y.arrayminus),
                               [p.pc_low for p in result.periods])
    alerts = [str(p.period) for p in result.periods if p.alert]
    assert list(traces["alert"].x) == alerts and alerts == ["w2"]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [(r.y0, r.y1) for r in rects] == [(p.pc_lo, p.pc_hi) for p in result.policy]
    edges = sorted(s.y0 for s in fig.layout.shapes if s.type == "line")
    assert edges == sorted(result.deployed.valid_pc)
