"""assets/viewstate.js (the browser's one view object and URL writer) against costdash.view, and
the browser arithmetic of assets/costmath.js that the readouts use beyond the core's conditions
(trivial cost, saving, expected counts, extra cost at a fixed point) against the core, in Node.

The schema reaches the script exactly as on a page: :func:`dashboard.viewstate.schema_script`'s
JSON, read from the element it names.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costdash import OperatingCondition
from costdash.errors import ParameterError
from costdash.view import VIEW_FIELDS, View, field_named
from dashboard.viewstate import SCHEMA_ELEMENT_ID, schema_script

from .conftest import REPO

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

RUNNER = """
const fs = require("fs");
const input = JSON.parse(fs.readFileSync(0, "utf8"));
global.window = {dash_clientside: {}, location: {pathname: "/explore", search: "", hash: ""},
                 history: {state: null, replaceState() {}}};
global.document = {
    getElementById: (id) => (id === input.element ? {textContent: input.schema} : null),
    addEventListener() {}, querySelectorAll: () => [],
};
global.setTimeout = () => 0;
eval(fs.readFileSync(process.argv[1], "utf8"));
const V = window.costdashView;
const out = {
    searches: input.views.map((v) => V.search(v)),
    checks: input.checks.map(([name, raw]) => V.check(name, raw)),
};
process.stdout.write(JSON.stringify(out));
"""


def schema_text() -> str:
    html = schema_script()
    return re.search(r">(.*)</script>$", html, re.S).group(1).replace("<\\/", "</")


def run_viewstate(views: list[dict], checks: list[tuple[str, object]]) -> dict:
    payload = json.dumps({"element": SCHEMA_ELEMENT_ID, "schema": schema_text(),
                          "views": views, "checks": checks})
    done = subprocess.run([NODE, "-e", RUNNER, str(REPO / "assets" / "viewstate.js")],
                          input=payload, capture_output=True, text=True, check=True, timeout=60)
    return json.loads(done.stdout)


def _value(field, rng: np.random.Generator):
    lo = field.low if field.low is not None else -1e6
    hi = field.high if field.high is not None else 1e6
    if field.kind == "int":
        return int(rng.integers(int(lo), int(hi) + 1))
    if field.kind == "float":
        x = float(rng.uniform(lo, hi))
        return x if field.in_bounds(x) else (lo + hi) / 2
    if field.kind == "range":
        a, b = sorted(float(x) for x in rng.uniform(lo if lo > -1e6 else 0.001,
                                                    hi if hi < 1e6 else 1e4, 2))
        return [a, b] if field.in_bounds(a) and field.in_bounds(b) else None
    if field.kind == "flag":
        return bool(rng.integers(2))
    if field.kind == "names":
        return [f"m{k}" for k in rng.choice(20, size=int(rng.integers(1, 4)), replace=False)]
    if field.kind == "id":
        return "".join(rng.choice(list("0123456789abcdef"), 32))
    if field.kind == "pins":
        names = ["gbm", "log:reg", "m 1", "ü"]
        return [{"model": str(rng.choice(names)),
                 "threshold": float(rng.choice([rng.normal() * 10.0 ** rng.integers(-9, 9), 0.5,
                                                -0.0, 1e-7, 1e21, 123456789.125]))}
                for _ in range(int(rng.integers(1, field.max_items + 1)))]
    return f"x{int(rng.integers(1000))}"


def random_views(n: int, seed: int) -> list[View]:
    rng = np.random.default_rng(seed)
    views = []
    for _ in range(n):
        raw = {f.name: _value(f, rng) for f in VIEW_FIELDS if rng.random() < 0.6}
        # Lenient: a random C(+|+) may exceed C(−|+), which the view refuses as a pair.
        views.append(View.parse_lenient({k: v for k, v in raw.items() if v is not None})[0])
    return views


def test_the_browser_writes_the_same_address_as_the_core():
    views = random_views(300, seed=3) + [View(), View.parse("p_pos=0.02&cost_fn=30&unit=USD")]
    js = run_viewstate([v.to_json() for v in views], [])
    for view, search in zip(views, js["searches"]):
        assert search == view.to_search()
        assert View.parse(search) == view


BAD = {"p_pos": ["0", "1", "-0.5", "abc", "1e400"], "cost_fn": ["0", "-1", "x"],
       "volume": ["-3"], "replicates": ["0", "20000", "1.5", "lots"], "level": ["1", "0", "2"],
       "seed": ["-1", "0.5"], "max_fpr": ["1.5", "-0.1"], "capacity": ["-5"],
       "sens_p": ["0,2", "0.5,0.1", "a,b"],
       "pins": ["gbm", "gbm:", ":0.5", "gbm:x", "gbm:nan", "a:1,b:2,c:3,d:4,e:5", "a,b:1",
                ["gbm:0.5", "x"]]}


def test_the_browser_refuses_what_the_core_refuses_in_the_same_words():
    checks = [(name, raw) for name, values in BAD.items() for raw in values]
    js = run_viewstate([], checks)
    for (name, raw), answer in zip(checks, js["checks"]):
        with pytest.raises(ParameterError) as err:
            field_named(name).parse(raw)
        assert answer.get("error") == str(err.value), (name, raw)


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([f.name for f in VIEW_FIELDS
                                            if f.kind in ("float", "int")]),
                          st.floats(allow_nan=False, allow_infinity=False, width=64)),
                min_size=1, max_size=20))
def test_bounds_agree_on_any_number(pairs):
    # A batch of numbers per example: one Node start checks them all (a start per number was
    # nearly all of the test's time), and the batches hold more numbers than 60 single ones.
    answers = run_viewstate([], pairs)["checks"]
    assert len(answers) == len(pairs)
    for (name, x), js in zip(pairs, answers):
        try:
            value = field_named(name).parse(x)
        except ParameterError as exc:
            assert js.get("error") == str(exc), (name, x)
        else:
            # JSON may write a large float as an int.
            assert float(js.get("value")) == value, (name, x)


MATH_RUNNER = """
const fs = require("fs");
global.window = {};
eval(fs.readFileSync(process.argv[1], "utf8"));
const M = window.costdashMath;
const input = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(input.cases.map(([p, fn, fp, f, t, f0, t0, vol, tp, tn]) => {
    const c = M.conditions(p, fn, fp, tp, tn);
    const ne = M.normalizedCost(c, f, t);
    const share = M.saving(c, ne);
    return [M.trivialCost(c), Number.isNaN(share) ? null : share, M.expectedCounts(c, f, t, vol),
            M.extraCost(c, f, t, f0, t0), M.trivialMoney(c), M.savingMoney(c, ne)];
})));
"""


def test_readout_arithmetic_equals_the_core():
    rng = np.random.default_rng(5)
    n = 2000
    p = np.clip(10.0 ** rng.uniform(-7, 0, n), 1e-7, 1 - 1e-7)
    cases = []
    for i in range(n):
        fn, fp = float(10 ** rng.uniform(-4, 4)), float(10 ** rng.uniform(-4, 4))
        # Half the cases with costs of the correct decisions (benefits, each below its error).
        tp, tn = ((0.0, 0.0) if i % 2 else (fn * float(rng.uniform(-3, 0.9)),
                                            fp * float(rng.uniform(-3, 0.9))))
        cases.append((float(p[i]), fn, fp, *(float(x) for x in rng.random(4)),
                      float(10 ** rng.uniform(0, 7)), tp, tn))
    done = subprocess.run([NODE, "-e", MATH_RUNNER, str(REPO / "assets" / "costmath.js")],
                          input=json.dumps({"cases": cases}), capture_output=True, text=True,
                          check=True, timeout=60)
    answers = json.loads(done.stdout)
    for case, (trivial, saving, counts, extra, trivial_money, saved) in zip(cases, answers):
        p_, fn, fp, f, t, f0, t0, vol, tp, tn = case
        cond = OperatingCondition(p_, fn, fp, tp, tn)
        ne = cond.normalized_cost(f, t)
        assert trivial == pytest.approx(cond.trivial_normalized_cost, rel=1e-12)
        scale = 1e-12 * (cond.cost_scale + abs(cond.constant_cost))
        assert trivial_money == pytest.approx(cond.trivial_expected_cost, rel=1e-9, abs=scale)
        assert saved == pytest.approx(cond.saving_money(ne), rel=1e-9, abs=scale)
        share = cond.saving_vs_trivial(ne)
        if math.isnan(share):
            assert saving is None
        else:
            assert saving == pytest.approx(share, rel=1e-9, abs=1e-12)
        assert counts == pytest.approx(list(cond.expected_counts(f, t, vol)), rel=1e-12)
        expected_extra = cond.expected_cost(ne) - cond.expected_cost(cond.normalized_cost(f0, t0))
        assert math.isclose(extra, expected_extra, rel_tol=1e-9,
                            abs_tol=1e-12 * cond.cost_scale)


def test_the_browser_reads_pins_as_the_core_does():
    raws = ["gbm:0.5,logreg:0.42", "a:b:-1.5e-3, gbm:0.5,gbm:0.50,", ["gbm:0.5", "x:1e-9"],
            [{"model": "gbm", "threshold": 0.5}, {"model": " m ", "threshold": "2"}],
            [["gbm", 0.25]]]
    js = run_viewstate([], [("pins", raw) for raw in raws])["checks"]
    for raw, answer in zip(raws, js):
        typed = field_named("pins").parse(raw)
        assert answer == {"value": field_named("pins").to_json_value(typed)}, raw


# --- one validation of the whole view: the rules across fields --------------------------------

WHOLE_RUNNER = """
const fs = require("fs");
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const loc = {pathname: "/explore", search: "", hash: ""};
global.window = {dash_clientside: {no_update: null}, location: loc,
                 history: {state: null, replaceState(s, t, url) {
                     loc.search = url.slice(loc.pathname.length).split("#")[0]; }}};
global.document = {
    getElementById: (id) => (id === input.element ? {textContent: input.schema} : null),
    addEventListener() {}, querySelectorAll: () => [],
};
global.setTimeout = (fn) => { fn(); return null; };    // every write happens at once
eval(fs.readFileSync(process.argv[1], "utf8"));
const V = window.costdashView;
const validated = input.combos.map((values) => V.validate(values));
V.load({path: "/explore", view: input.start});
const steps = input.steps.map((values) => {
    const found = V.set(values);
    return {found: found, view: V.get(), search: loc.search};
});
process.stdout.write(JSON.stringify({validated: validated, steps: steps}));
"""


def run_whole(combos: list[dict], start: dict, steps: list[dict]) -> dict:
    payload = json.dumps({"element": SCHEMA_ELEMENT_ID, "schema": schema_text(),
                          "combos": combos, "start": start, "steps": steps})
    done = subprocess.run([NODE, "-e", WHOLE_RUNNER, str(REPO / "assets" / "viewstate.js")],
                          input=payload, capture_output=True, text=True, check=True, timeout=60)
    return json.loads(done.stdout)


def test_the_browser_judges_combinations_in_the_cores_words():
    from costdash.view import combination_problems

    rng = np.random.default_rng(9)
    combos = []
    for _ in range(400):
        values = {"cost_fn": float(rng.choice([0.5, 1.0, 40.0, 2.5])),
                  "cost_fp": float(rng.choice([1.0, 2.0, 0.25])),
                  "cost_tp": float(rng.choice([-5.0, 0.0, 0.5, 1.0, 2.5, 50.0])),
                  "cost_tn": float(rng.choice([-1.0, 0.0, 0.25, 1.0, 3.0]))}
        if rng.random() < 0.5:
            lo = float(rng.choice([0.1, 0.5, 2.0, 30.0]))
            values["sens_fn"] = [lo, lo * 3]
        if rng.random() < 0.5:
            lo = float(rng.choice([0.1, 0.5, 2.0]))
            values["sens_fp"] = [lo, lo * 3]
        combos.append(values)
    js = run_whole(combos, {}, [])["validated"]
    seen = 0
    for values, found in zip(combos, js):
        typed = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
        expected = {str(p) for _, p in combination_problems(typed)}
        assert set(found.values()) == expected, values
        seen += bool(expected)
    assert 50 < seen < 400       # both valid and invalid combinations were tried


def test_an_invalid_combination_never_reaches_the_address():
    # Issue 24: C(+|+) = 50 above C(−|+) = 40 showed the error but wrote cost_tp=50 into the
    # address, every nav link and every export link.
    start = {"data": "ab" * 16, "p_pos": 0.02, "cost_fn": 40.0, "cost_fp": 2.0}
    steps = [{"cost_tp": 50}, {"cost_fn": 60}, {"cost_fn": 20}, {"cost_tp": "x"},
             {"cost_fn": 20, "cost_tp": -5}, {"sens_fn": [1, 80]}, {"cost_tp": 3}]
    out = run_whole([], start, steps)["steps"]
    first, fixed, broken, typo, both, sens, tp3 = out
    assert "cost_tp" in first["found"] and first["found"]["cost_tp"].startswith(
        "C(+|+) must be below C(−|+)")
    assert "cost_tp" not in first["view"] and "cost_tp" not in first["search"]
    # The error box fixed by raising C(−|+): the pair is valid now and both are taken.
    assert fixed["found"] == {} and (fixed["view"]["cost_tp"], fixed["view"]["cost_fn"]) == (50, 60)
    assert "cost_tp=50" in fixed["search"] and "cost_fn=60" in fixed["search"]
    # Lowering C(−|+) under C(+|+) again: the view keeps 60.
    assert set(broken["found"]) == {"cost_fn"} and broken["view"]["cost_fn"] == 60
    assert "cost_fn=60" in broken["search"]
    # A box holding no number gives no value: the view's stands, and the C(−|+) box, still
    # holding 20, is still refused.
    assert set(typo["found"]) == {"cost_tp", "cost_fn"} and typo["view"]["cost_tp"] == 50
    assert typo["view"]["cost_fn"] == 60
    # Both changed at once and valid together.
    assert both["found"] == {} and (both["view"]["cost_fn"], both["view"]["cost_tp"]) == (20, -5)
    # A range below a correct decision's cost is the range's problem.
    assert sens["found"] == {} and sens["view"]["sens_fn"] == [1, 80]
    assert set(tp3["found"]) == {"cost_tp"} and tp3["view"]["cost_tp"] == -5
    assert tp3["found"]["cost_tp"].startswith("Sensitivity range of C(−|+) must lie above C(+|+)")
    # Every address the browser wrote is a view the server parses strictly.
    for step in out:
        View.parse(step["search"])
