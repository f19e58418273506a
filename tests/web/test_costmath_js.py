"""assets/costmath.js (the browser's mirror of the core's operating-condition arithmetic) against
the Python core, for thousands of conditions at once, in Node when it is installed.

The browser tests check the readouts for a handful of conditions end to end; this one checks the
arithmetic itself far more widely, down to p(+) = 1e-9 and cost ratios of 1e12.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import numpy as np
import pytest

from costdash import OperatingCondition, analyze
from costdash.hull import SAME_LOG_SLOPE, optimal_vertex
from costdash.io import load_predictions
from dashboard.viewmodel import hull_entry

from .conftest import REPO

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

RUNNER = """
const fs = require("fs");
global.window = {};
eval(fs.readFileSync(process.argv[1], "utf8"));
const M = window.costdashMath;
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const out = input.conditions.map(([p, fn, fp]) => {
    const c = M.conditions(p, fn, fp);
    const i = M.optimalIndex(input.log_edges, c.logSlope, input.tie);
    const ne = M.normalizedCost(c, input.fpr[i], input.tpr[i]);
    return [c.pc, c.oneMinusPc, Number.isFinite(c.slope) ? c.slope : null, i, ne,
            M.expectedCost(c, ne), M.valid(p, fn, fp)];
});
process.stdout.write(JSON.stringify(out));
"""


def run_js(entry: dict, conditions: list[tuple[float, float, float]]) -> list:
    payload = json.dumps({**entry, "conditions": conditions, "tie": SAME_LOG_SLOPE})
    done = subprocess.run([NODE, "-e", RUNNER, str(REPO / "assets" / "costmath.js")],
                          input=payload, capture_output=True, text=True, check=True, timeout=60)
    return json.loads(done.stdout)


def random_conditions(n: int, seed: int) -> list[tuple[float, float, float]]:
    rng = np.random.default_rng(seed)
    p = 10.0 ** rng.uniform(-9, 0, n)
    p = np.where(rng.random(n) < 0.5, p, 1.0 - p)          # both tails of p(+)
    p = np.clip(p, 1e-9, 1 - 1e-9)
    fn = 10.0 ** rng.uniform(-6, 6, n)
    fp = 10.0 ** rng.uniform(-6, 6, n)
    return [(float(a), float(b), float(c)) for a, b, c in zip(p, fn, fp)]


@pytest.mark.parametrize("source", ["breast_cancer_csv", "predictions_csv"])
def test_costmath_js_equals_the_core(source, request):
    analysis = analyze(load_predictions(request.getfixturevalue(source)))
    hull = analysis.hull
    conditions = random_conditions(3000, seed=11) + [
        (1e-6, 1e6, 1.0), (1e-6, 1.0, 1.0), (0.5, 1.0, 1e6), (1 - 1e-6, 1e6, 1.0),
        (analysis.dataset.prevalence, 1.0, 1.0)]                 # a slope tie
    entry = hull_entry(hull)
    js = run_js(entry, conditions)
    ties = 0
    for (p, fn, fp), (pc, one_minus_pc, slope, index, ne, ec, valid) in zip(conditions, js):
        cond = OperatingCondition(p, fn, fp)
        vertex = optimal_vertex(hull, cond)
        assert valid
        assert pc == pytest.approx(cond.pc, rel=1e-12, abs=0)
        assert one_minus_pc == pytest.approx(cond.one_minus_pc, rel=1e-12, abs=0)
        if math.isinf(cond.slope):
            assert slope is None
        else:
            assert slope == pytest.approx(cond.slope, rel=1e-12)
        # The same vertex, ties included: both sides use the core's SAME_LOG_SLOPE.
        assert index == vertex.index
        ties += vertex.alternative is not None
        assert ne == pytest.approx(cond.normalized_cost(vertex.fpr, vertex.tpr), rel=1e-9,
                                   abs=1e-300)
        assert ec == pytest.approx(cond.expected_cost(ne), rel=1e-12)
    assert ties >= 1                # the deliberate tie at the prevalence is decided alike


def test_costmath_js_rejects_what_the_core_rejects():
    entry = {"fpr": [0.0, 1.0], "tpr": [0.0, 1.0], "log_edges": [0.0]}
    bad = [(0.0, 1.0, 1.0), (1.0, 1.0, 1.0), (0.5, 0.0, 1.0), (0.5, 1.0, -1.0)]
    assert [row[-1] for row in run_js(entry, bad)] == [False] * 4


POINT_RUNNER = """
const fs = require("fs");
global.window = {};
eval(fs.readFileSync(process.argv[1], "utf8"));
const M = window.costdashMath;
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const nan = (x) => (Number.isNaN(x) ? "nan" : x);
process.stdout.write(JSON.stringify(input.map(([p, fn, fp, tp, tn, f, t, f0, t0, vol]) => {
    const m = M.pointMetrics(M.conditions(p, fn, fp, tp, tn), f, t, f0, t0, vol);
    return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, nan(v)]));
})));
"""


@pytest.mark.slow
def test_pinned_point_metrics_equal_the_core():
    """costmath.pointMetrics (a pinned threshold's live readouts) against
    costdash.pinned.point_metrics, from p(+) = 1e-9 to 1 - 1e-9, with benefits, at the edges
    of ROC space (nothing or everything flagged)."""
    from costdash.pinned import point_metrics

    rng = np.random.default_rng(17)
    cases = []
    for p, fn, fp in random_conditions(2000, seed=23):
        tp_cost = float(-rng.uniform(0, 100)) if rng.random() < 0.3 else 0.0
        tn_cost = float(-rng.uniform(0, 100)) if rng.random() < 0.3 else 0.0
        f, t, f0, t0 = (float(x) for x in rng.random(4))
        if rng.random() < 0.1:
            f, t = (0.0, 0.0) if rng.random() < 0.5 else (1.0, 1.0)
        cases.append((p, fn, fp, tp_cost, tn_cost, f, t, f0, t0, float(10 ** rng.uniform(0, 7))))
    done = subprocess.run([NODE, "-e", POINT_RUNNER, str(REPO / "assets" / "costmath.js")],
                          input=json.dumps(cases), capture_output=True, text=True, check=True,
                          timeout=60)
    names = {"tp": "tp", "fn": "fn", "fp": "fp", "tn": "tn", "precision": "precision",
             "recall": "recall", "specificity": "specificity", "npv": "npv", "f1": "f1",
             "normalizedCost": "normalized_cost", "expectedCost": "expected_cost",
             "periodCost": "period_cost", "regret": "regret", "periodRegret": "period_regret",
             "regretShare": "regret_share"}
    for case, js in zip(cases, json.loads(done.stdout)):
        p, fn, fp, tp_cost, tn_cost, f, t, f0, t0, vol = case
        cond = OperatingCondition(p, fn, fp, tp_cost, tn_cost)
        core = point_metrics(cond, f, t, best=(f0, t0), volume=vol)
        assert set(js) == set(names)
        for key, attr in names.items():
            want = getattr(core, attr)
            if math.isnan(want):
                assert js[key] == "nan", (key, case)
            else:
                # Same operations in the same order: equal to the last bit or nearly; money
                # is a sum of the varying part and the constant one, so its error is relative
                # to their sizes (an ulp of PC(+) from Math.exp).
                terms = abs(cond.cost_scale) + abs(cond.constant_cost)
                money = {"expectedCost": terms, "regret": terms, "periodCost": terms * vol,
                         "periodRegret": terms * vol}.get(key, 0.0)
                assert js[key] == pytest.approx(want, rel=1e-12, abs=1e-300 + 1e-13 * money), \
                    (key, case)


AXES_RUNNER = """
const fs = require("fs");
global.window = {};
eval(fs.readFileSync(process.argv[1], "utf8"));
const M = window.costdashMath;
const input = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify({
    logOdds: input.pcs.map(M.logOdds),
    logOddsOf: input.conditions.map(([p, fn, fp]) => M.logOddsOf(M.conditions(p, fn, fp))),
    floors: input.negatives.map(M.fprFloor),
    logFpr: input.fprs.map(([f, floor]) => M.logFpr(f, floor)),
    fprSamples: input.segments.map(([a, b, floor]) => M.fprSamples(a, b, floor)),
    pcSamples: input.pc_segments.map(([a, b]) => M.pcSamples(a, b, 0.1)),
    zoom: input.zooms.map(([x, h, lo, hi]) => M.zoomRange(x, h, lo, hi)),
}));
"""


def test_rare_event_axes_equal_the_figures():
    """The moving parts' coordinates on the log axes (costmath.js) against the figures' own
    (dashboard/figures/axes.py), from PC(+) = 1e-12 to 1 - 1e-12; and the zoom window."""
    from dashboard.figures.axes import LOG_ODDS_LIMIT, fpr_floor, fpr_samples, log_fpr, log_odds

    rng = np.random.default_rng(29)
    pcs = [0.0, 1.0, 0.5, 1e-12, 1 - 1e-12, 1e-300] + list(10.0 ** rng.uniform(-12, 0, 300)) \
        + list(1 - 10.0 ** rng.uniform(-12, 0, 100))
    conditions = random_conditions(300, seed=31)
    negatives = [1, 7, 1000, 999_999, 0]
    fprs = [(float(f), fpr_floor(n)) for f, n in zip(
        [0.0, 1.0, 1e-9, *rng.uniform(0, 1, 50)], [1000] * 53)]
    segments = [(0.0, 1.0, 5e-4), (0.0, 0.0, 5e-4), (0.01, 0.3, 1e-5), (1e-6, 1e-6, 1e-7),
                (0.2, 0.2000001, 1e-6)]
    pc_segments = [(0.0, 1.0), (1e-6, 0.01), (0.3, 0.3)]
    zooms = [(0.5, 0.1, 0, 1), (0.01, 0.1, 0, 1), (0.99, 0.1, 0, 1), (0.5, 0.6, 0, 1),
             (-7.5, 1.5, -8, 8)]
    payload = json.dumps({"pcs": pcs, "conditions": conditions, "negatives": negatives,
                          "fprs": fprs, "segments": segments, "pc_segments": pc_segments,
                          "zooms": zooms})
    done = subprocess.run([NODE, "-e", AXES_RUNNER, str(REPO / "assets" / "costmath.js")],
                          input=payload, capture_output=True, text=True, check=True, timeout=60)
    js = json.loads(done.stdout)
    np.testing.assert_allclose(js["logOdds"], log_odds(np.array(pcs)), rtol=1e-12, atol=1e-12)
    # Of the conditions, through the log slope: the same number as from PC(+) itself.
    for (p, fn, fp), x in zip(conditions, js["logOddsOf"]):
        pc = OperatingCondition(p, fn, fp).pc
        assert x == pytest.approx(float(log_odds(pc)), rel=1e-9, abs=1e-9)
        assert -LOG_ODDS_LIMIT <= x <= LOG_ODDS_LIMIT
    assert js["floors"] == [fpr_floor(n) for n in negatives]
    np.testing.assert_allclose(js["logFpr"], [float(log_fpr(f, fl)) for f, fl in fprs],
                               rtol=1e-14)
    for (a, b, floor), samples in zip(segments, js["fprSamples"]):
        np.testing.assert_allclose(samples, fpr_samples(a, b, floor), rtol=1e-12)
        assert samples[0] == a and samples[-1] == b            # the ends exactly
    for (a, b), samples in zip(pc_segments, js["pcSamples"]):
        assert samples[0] == a and samples[-1] == b
        steps = np.diff(log_odds(np.array(samples)))
        assert (steps >= 0).all() and (steps <= 0.1 + 1e-6).all()   # PC(+) near 1: ~1e-8
    for (x, h, lo, hi), (a, b) in zip(zooms, js["zoom"]):
        assert lo <= a <= b <= hi
        if 2 * h < hi - lo:
            assert b - a == pytest.approx(2 * h) and a <= x <= b
        else:
            assert (a, b) == (lo, hi)
