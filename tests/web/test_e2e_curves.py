"""The Curves page end to end in headless Chromium: opened from Explore with the view's
conditions, ticked classifiers, pin and capacity; the current choice it marks in precision–recall
space against a brute force over the scores; the hover link between the plots; the view kept
through navigation.

A real ``python app.py`` (conftest's ``live_server``); the data set is stored through the upload
API, as the page's own upload does.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Page

from costdash.demo import DEMOS

from .test_e2e_view import CONDITIONS, READY, TICKED, address, open_view, upload

pytestmark = pytest.mark.browser

P, C_FN, C_FP = 0.02, 30.0, 1.5          # CONDITIONS of test_e2e_view
PIN = ("gbm", 0.5)
EXTRA = {"pins": f"{PIN[0]}:{PIN[1]}", "capacity": "400"}
CHOICE_READY = ("() => { const el = document.getElementById('curves-row-choice-precision');"
                " return el !== null && el.textContent !== ''; }")


def brute_force_choice(frame: pd.DataFrame) -> tuple[str, float, float, float]:
    """The cheapest (classifier, threshold) over every score of the ticked classifiers at the
    conditions, by trying them all: its name, threshold, TPR and FPR."""
    y = frame["y_true"].to_numpy().astype(bool)
    best = None
    for name in TICKED:
        score = frame[name].to_numpy()
        for t in np.unique(score):
            flagged = score >= t
            tpr, fpr = np.mean(flagged[y]), np.mean(flagged[~y])
            cost = P * C_FN * (1 - tpr) + (1 - P) * C_FP * fpr
            if best is None or cost < best[0] - 1e-12:
                best = (cost, name, float(t), tpr, fpr)
    _, name, t, tpr, fpr = best
    return name, t, float(tpr), float(fpr)


def trace(page: Page, graph: str, uid: str) -> dict:
    """A trace's decoded x, y of a plot, by uid (plotly.js keeps the decoded arrays)."""
    return page.evaluate(
        """([graph, uid]) => {
            const gd = document.querySelector('#' + graph + ' .js-plotly-plot');
            const t = gd._fullData.find((d) => d.uid === uid);
            return t ? {x: Array.from(t.x || []), y: Array.from(t.y || []), name: t.name} : null;
        }""", [graph, uid])


def test_curves_from_explore_mark_the_brute_force_choice(live_server, page: Page):
    path = DEMOS["breast-cancer"].path
    data_id = upload(live_server, path)
    errors = open_view(live_server, page, data_id, **EXTRA)

    page.click("#nav-curves")
    page.wait_for_function("() => location.pathname.endsWith('/curves')")
    page.wait_for_function(CHOICE_READY)
    assert page.input_value("#curves-p-pos") == CONDITIONS["p_pos"]
    assert page.input_value("#curves-capacity") == EXTRA["capacity"]

    # The current choice, by brute force over the scores, in PR space at p(+) = 0.02.
    frame = pd.read_csv(path)
    name, threshold, tpr, fpr = brute_force_choice(frame)
    precision = P * tpr / (P * tpr + (1 - P) * fpr)
    mark = trace(page, "curves-pr-graph", "mark-choice")
    assert mark["name"] == f"current choice: {name}"
    assert mark["x"] == [pytest.approx(tpr, rel=1e-12)]
    assert mark["y"] == [pytest.approx(precision, rel=1e-12)]
    assert page.inner_text("#curves-row-choice-precision") == f"{precision:.4g}"
    assert page.inner_text("#curves-row-choice-recall") == f"{tpr:.4g}"
    assert f"score ≥ {threshold:g}" in page.inner_text("#curves-row-choice")
    # On the gains chart: the share of cases flagged at p(+) = 0.02.
    gains = trace(page, "curves-gains-graph", "mark-choice")
    assert gains["x"] == [pytest.approx(P * tpr + (1 - P) * fpr, rel=1e-12)]

    # The pin, also by brute force (score >= 0.5 flagged), in both plots.
    y = frame["y_true"].to_numpy().astype(bool)
    flagged = frame[PIN[0]].to_numpy() >= PIN[1]
    pin_tpr, pin_fpr = np.mean(flagged[y]), np.mean(flagged[~y])
    pin = trace(page, "curves-pr-graph", "mark-pin-0")
    assert pin["x"] == [pytest.approx(pin_tpr, rel=1e-12)]
    assert pin["y"] == [pytest.approx(P * pin_tpr / (P * pin_tpr + (1 - P) * pin_fpr),
                                      rel=1e-12)]
    # The capacity line at 400 of 5,000 cases.
    assert trace(page, "curves-gains-graph", "capacity")["x"] == [0.08, 0.08]

    # Hover a point of gbm's PR curve: the same threshold is marked on the gains and lift
    # curves. Whatever point the mouse lands on, recall = share caught and the share flagged
    # is p·recall / precision at that threshold.
    pos = page.evaluate("""() => {
        const gd = document.querySelector('#curves-pr-graph .js-plotly-plot');
        const t = gd._fullData.find((d) => d.uid === 'pr-2');
        const k = Math.floor(t.x.length / 2);
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
        const r = gd.getBoundingClientRect();
        return [r.left + xa._offset + xa.l2p(t.x[k]), r.top + ya._offset + ya.l2p(t.y[k])];
    }""")
    page.mouse.move(pos[0] - 3, pos[1])
    page.mouse.move(pos[0], pos[1])
    # The first move may hover a neighbouring point: wait until the gains chart marks the
    # threshold the PR plot marks now (both are restyled by the same clientside callback).
    # The three marks are read in the same task as the check: a later hover event (the mouse
    # resting between two points on a loaded machine) cannot slip in between.
    marks = page.wait_for_function("""() => {
        const at = (id, uid) => {
            const t = document.querySelector('#' + id + ' .js-plotly-plot')
                ._fullData.find((d) => d.uid === uid);
            return t ? {x: Array.from(t.x || []), y: Array.from(t.y || [])} : null;
        };
        const g = at('curves-gains-graph', 'hover'), p = at('curves-pr-graph', 'hover');
        const lift = at('curves-gains-graph', 'hover-lift');
        return g && g.x.length === 1 && p && p.x.length === 1 && lift && lift.y.length === 1 &&
            g.y[0] === p.x[0] && [p, g, lift];
    }""").json_value()
    pr_hover, gains_hover, lift_hover = marks
    (r,), (prec,) = pr_hover["x"], pr_hover["y"]
    assert gains_hover["y"] == [pytest.approx(r, rel=1e-12)]
    assert gains_hover["x"] == [pytest.approx(P * r / prec, rel=1e-9)]
    assert lift_hover["y"] == [pytest.approx(prec / P, rel=1e-9)]

    # The view survives navigation: Explore gets it back whole, and Curves again from there.
    page.click("#nav-explore")
    page.wait_for_function(READY)
    time.sleep(0.3)
    carried = address(page)
    for key, value in {**CONDITIONS, **EXTRA}.items():
        assert carried.get(key) == value, (key, carried)
    page.click("#nav-curves")
    page.wait_for_function("() => location.pathname.endsWith('/curves')")
    page.wait_for_function(CHOICE_READY)
    assert trace(page, "curves-pr-graph", "mark-choice")["y"] == [
        pytest.approx(precision, rel=1e-12)]
    assert page.input_value("#curves-cost-fn") == CONDITIONS["cost_fn"]
    assert errors == []
