"""Explore's intervals beside the headline numbers, server side: the condition-free limits the
page's store holds (``interval_result``) and the report's intervals, against numbers computed
here from the scores alone (counts by brute force, Clopper-Pearson limits from scipy.stats.beta,
the gamma limit from scipy.stats.gamma, MOVER written out).

The browser's combination of the limits at a PC(+) is checked against the core in
test_readout_intervals_js.py, and on the page in test_e2e_explore.py.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pytest
from scipy import stats

from costdash import OperatingCondition, analyze
from costdash.demo import DEMOS
from costdash.io import load_predictions
from dashboard.pages.explore import interval_result, pinned_result

DEMO = load_predictions(DEMOS["breast-cancer"].path)
TICKED = ["logreg", "gbm"]
PINS = [{"model": "gbm", "threshold": 0.5}, {"model": "logreg", "threshold": 0.3}]


def scores(name):
    c = next(c for c in DEMO.scored if c.name == name)
    return c.y_true, c.score


def cp(k, n, level):
    a = 1 - level
    return (0.0 if k == 0 else stats.beta.ppf(a / 2, k, n - k + 1),
            1.0 if k == n else stats.beta.ppf(1 - a / 2, k + 1, n - k))


def cost_range(fn, n_pos, fp, n_neg, level, cond):
    """The Clopper-Pearson-MOVER interval with the gamma lower limit, written out."""
    x = cond.pc
    p1, p2 = fn / n_pos, fp / n_neg
    (l1, u1), (l2, u2) = cp(fn, n_pos, level), cp(fp, n_neg, level)
    ne = x * p1 + (1 - x) * p2
    low = ne - math.hypot(x * (p1 - l1), (1 - x) * (p2 - l2))
    high = ne + math.hypot(x * (u1 - p1), (1 - x) * (u2 - p2))
    v = x * x * p1 * (1 - p1) / n_pos + (1 - x) ** 2 * p2 * (1 - p2) / n_neg
    if ne > 0 and v > 0:
        low = min(low, stats.gamma.ppf((1 - level) / 2, ne * ne / v) * v / ne)
    return cond.expected_cost(low), cond.expected_cost(high)


def discordant(n11, n10, n01, n00, level):
    """MOVER on the discordant cells with Clopper-Pearson limits, written out."""
    n = n11 + n10 + n01 + n00
    q10, q01 = n10 / n, n01 / n
    (l10, u10), (l01, u01) = cp(n10, n, level), cp(n01, n, level)
    r = -math.sqrt(q10 * q01 / ((1 - q10) * (1 - q01))) if 0 < n10 < n and 0 < n01 < n else 0.0
    da, db, ua, ub = q10 - l10, u01 - q01, u10 - q10, q01 - l01
    d = q10 - q01
    return (d, d - math.sqrt(max(da * da + db * db - 2 * r * da * db, 0)),
            d + math.sqrt(max(ua * ua + ub * ub - 2 * r * ua * ub, 0)))


def regret_range(y, flag_pin, flag_best, level, cond):
    """cost(pin) - cost(best) per case with its interval, from the rows."""
    cells = []
    for cls in (y, ~y):
        a, b = flag_pin[cls], flag_best[cls]
        cells.append(discordant(int(np.sum(a & b)), int(np.sum(a & ~b)), int(np.sum(~a & b)),
                                int(np.sum(~a & ~b)), level))
    (dp, lp, hp), (d2, l2, u2) = cells
    d1, l1, u1 = -dp, -hp, -lp               # FNR difference from the flag-rate difference
    x = cond.pc
    diff = x * d1 + (1 - x) * d2
    low = diff - math.hypot(x * (d1 - l1), (1 - x) * (d2 - l2))
    high = diff + math.hypot(x * (u1 - d1), (1 - x) * (u2 - d2))
    s = cond.cost_scale
    return diff * s, low * s, high * s


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_the_store_holds_each_vertex_and_pin_s_limits(services, level):
    record = services.put_demo("breast-cancer")
    key = {"id": record.id, "models": TICKED}
    pins = pinned_result(services, key, {"id": record.id, "pins": PINS})
    out = interval_result(services, key, pins, level)
    assert out["level"] == level
    view = services.views.view(record.id, TICKED)
    hull = view["hull"]
    assert len(out["hull"]) == len(hull["fpr"])
    y_all = scores("gbm")[0]
    n_pos, n_neg = int(y_all.sum()), int((~y_all).sum())
    for lim, name, thr in zip(out["hull"], hull["classifier"], hull["threshold"]):
        if name in ("all-negative", "all-positive"):
            assert lim["exact"]
            continue
        y, s = scores(name)
        flagged = s >= thr                          # counted from the scores
        fn, fp = int(np.sum(y & ~flagged)), int(np.sum(~y & flagged))
        assert (lim["fn"], lim["n_pos"], lim["fp"], lim["n_neg"]) == (fn, n_pos, fp, n_neg)
        assert (lim["fnr_low"], lim["fnr_high"]) == pytest.approx(cp(fn, n_pos, level), 1e-9)
        assert (lim["fpr_low"], lim["fpr_high"]) == pytest.approx(cp(fp, n_neg, level), 1e-9)
    cond = OperatingCondition(0.02, 30.0, 1.5)
    for pin, entry in zip(PINS, out["pins"]):
        y, s = scores(pin["model"])
        flag = s >= pin["threshold"]
        assert entry["cost"]["fn"] == int(np.sum(y & ~flag))
        assert entry["cost"]["fp"] == int(np.sum(~y & flag))
        for i, (name, thr) in enumerate(zip(hull["classifier"], hull["threshold"])):
            best = (np.zeros_like(y) if name == "all-negative" else np.ones_like(y)
                    if name == "all-positive" else scores(name)[1] >= thr)
            pair = entry["regret"][i]
            want = regret_range(y, flag, best, level, cond)
            x = cond.pc
            got_diff = x * pair["d_fnr"] + (1 - x) * pair["d_fpr"]
            assert got_diff * cond.cost_scale == pytest.approx(want[0], abs=1e-12)
            if name not in ("all-negative", "all-positive"):
                d1 = pair["d_fnr"]
                assert (pair["fnr_low"], pair["fnr_high"]) == pytest.approx(
                    (-discordant(*_cells(y, flag, best), level)[2],
                     -discordant(*_cells(y, flag, best), level)[1]), 1e-9)
                assert d1 == pytest.approx(-discordant(*_cells(y, flag, best), level)[0])


def _cells(y, a, b):
    a, b = a[y], b[y]
    return int(np.sum(a & b)), int(np.sum(a & ~b)), int(np.sum(~a & b)), int(np.sum(~a & ~b))


def test_a_stale_or_empty_key_gives_nothing_and_bad_level_the_default(services):
    assert interval_result(services, None, [], 0.9) is None
    record = services.put_demo("breast-cancer")
    out = interval_result(services, {"id": record.id, "models": None}, [], None)
    assert out["level"] == 0.9 and out["pins"] == []


def _cell(page: str, key: str) -> str:
    m = re.search(rf'<td id="{key}">(.*?)</td>', page, re.S)
    assert m, key
    return html.unescape(m.group(1))


def _nums(text: str) -> list[float]:
    return [float(v.replace(",", "")) for v in re.findall(r"-?[\d,]*\.?\d+(?:e-?\d+)?", text)]


@pytest.mark.slow
def test_the_report_states_the_intervals_of_the_page(client, services):
    record = services.put_demo("breast-cancer")
    query = ("p_pos=0.02&cost_fn=30&cost_fp=1.5&volume=5000&unit=USD&models=logreg,gbm"
             "&pins=gbm:0.5&level=0.95")
    page = client.get(f"/api/v1/datasets/{record.id}/report.html?{query}").get_data(as_text=True)
    cond = OperatingCondition(0.02, 30.0, 1.5)
    dataset = load_predictions(DEMOS["breast-cancer"].path, models=TICKED)
    op = analyze(dataset, cond).operating_point
    y, s = scores(op.vertex.classifier)
    best = s >= op.vertex.threshold
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    low, high = cost_range(int(np.sum(y & ~best)), n_pos, int(np.sum(~y & best)), n_neg, 0.95,
                           cond)
    text = _cell(page, "cost-interval")
    assert "without a confidence level" in text and "95%" in text
    got = _nums(text.split(":")[0])
    assert got == pytest.approx([low * 5000, high * 5000], rel=5e-4)
    # the pin: its 95% interval and its regret range, in the pinned table
    yg, sg = scores("gbm")
    flag = sg >= 0.5
    c_low, c_high = cost_range(int(np.sum(yg & ~flag)), n_pos, int(np.sum(~yg & flag)), n_neg,
                               0.95, cond)
    _, r_low, r_high = regret_range(yg, flag, best, 0.95, cond)
    row = re.search(r'<table class="pinned-money">.*?<tbody>(.*?)</tbody>', page, re.S).group(1)
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert _nums(cells[4]) == pytest.approx([c_low * 5000, c_high * 5000], rel=5e-4)
    assert _nums(cells[6]) == pytest.approx([r_low * 5000, r_high * 5000], rel=5e-4)
    assert "95%, Clopper–Pearson–MOVER" in page

