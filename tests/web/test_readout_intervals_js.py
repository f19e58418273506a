"""assets/costmath.js's intervals beside the headline numbers (costInterval, regretInterval and
the inverse incomplete gamma under them) against costdash.readout_intervals and scipy, in Node.

The browser computes these at every slider step from the server's condition-free limits; this
checks that what it shows is the core's interval, for counts from 0 to millions and conditions
from p(+) = 1e-6 to cost ratios of 1e4.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess

import numpy as np
import pytest
from scipy import special

from costdash.conditions import OperatingCondition
from costdash.readout_intervals import (cost_interval, paired_limits, paired_table, rate_limits,
                                        regret_interval)

from .conftest import REPO

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

RUNNER = """
const fs = require("fs");
global.window = {};
eval(fs.readFileSync(process.argv[1], "utf8"));
const M = window.costdashMath;
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const out = {
    inv: input.gamma.map(([a, p]) => M.gammaPInv(a, p)),
    cost: input.cost.map(([cond, lim]) => {
        const r = M.costInterval(M.conditions(...cond), lim);
        return [r.cost, r.low, r.high];
    }),
    regret: input.regret.map(([cond, lim]) => {
        const r = M.regretInterval(M.conditions(...cond), lim);
        return [r.regret, r.low, r.high];
    }),
};
process.stdout.write(JSON.stringify(out));
"""


def run_js(payload: dict) -> dict:
    done = subprocess.run([NODE, "-e", RUNNER, str(REPO / "assets" / "costmath.js")],
                          input=json.dumps(payload), capture_output=True, text=True, check=True,
                          timeout=120)
    return json.loads(done.stdout)


CONDS = [(0.5, 1.0, 1.0, 0.0, 0.0), (0.01, 50.0, 1.0, 0.0, 0.0), (1e-6, 1e4, 1.0, 0.0, 0.0),
         (0.3, 2.0, 7.0, -1.0, 0.5), (0.999, 1.0, 30.0, 0.0, 0.0)]
COUNTS = [(4, 20, 4, 10), (0, 50, 3, 400), (1, 30, 0, 900), (120, 1000, 2500, 99000),
          (0, 7, 0, 9), (7, 7, 9, 9), (3, 200_000, 15_000, 3_800_000),
          (50_000, 1_000_000, 0, 19_000_000), (1, 2, 1, 3)]


def test_inverse_gamma_is_scipys():
    # The shape is (weighted count)^2 / its variance: at least about 1 for any non-zero count
    # (k / (1 - k/n) for one count), so 0.1 to 1e7 covers what a cost line can ask.
    rng = np.random.default_rng(0)
    a = np.concatenate([10.0 ** rng.uniform(-1, 7, 300), [0.5, 1.0, 1.5, 2.0, 1e6, 3.7e6]])
    p = np.concatenate([rng.choice([0.005, 0.025, 0.05, 0.1, 0.25, 0.4], 300),
                        [0.05] * 6])
    got = np.array(run_js({"gamma": list(zip(a.tolist(), p.tolist())), "cost": [],
                           "regret": []})["inv"])
    want = special.gammaincinv(a, p)
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_cost_interval_is_the_cores():
    cases, want = [], []
    for level in (0.8, 0.9, 0.95):
        for fn, n_pos, fp, n_neg in COUNTS:
            for exact in (False, True):
                lim = rate_limits(fn, n_pos, fp, n_neg, level, exact=exact)
                for cond in CONDS:
                    cases.append([list(cond), dataclasses.asdict(lim)])
                    want.append(cost_interval(lim, OperatingCondition(*cond)))
    got = run_js({"gamma": [], "cost": cases, "regret": []})["cost"]
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-9, atol=1e-13)


def test_regret_interval_is_the_cores():
    rng = np.random.default_rng(5)
    cases, want = [], []
    for n, prevalence in ((60, 0.3), (2000, 0.05), (200_000, 0.01)):
        y = rng.random(n) < prevalence
        sa = rng.normal(size=n) + 1.5 * y
        sb = 0.6 * sa + rng.normal(size=n) * 0.8
        for ta, tb in ((0.5, 0.5), (1.5, 0.2), (-0.5, 2.0)):
            lim = paired_limits(paired_table(y, sa >= ta, sb >= tb), 0.9)
            for cond in CONDS:
                cases.append([list(cond), dataclasses.asdict(lim)])
                want.append(regret_interval(lim, OperatingCondition(*cond)))
    got = run_js({"gamma": [], "cost": [], "regret": cases})["regret"]
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-9, atol=1e-13)
