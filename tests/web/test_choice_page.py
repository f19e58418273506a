"""The Threshold choice page without a browser: its figure builders draw the core's arrays, its
handler (``choice_view``) puts the core's numbers on the page for a stored data set, the API
route answers what the command line prints, and the report carries the same section."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dash import html

from costdash import OperatingCondition, analyze
from costdash.choice_curves import threshold_choice
from costdash.choice_summary import choice_summary, threshold_probability
from costdash.cli import main
from costdash.dca import net_benefit
from costdash.demo import DEMOS, load_demo
from costdash.hmeasure import h_measure
from costdash.io import load_predictions
from costdash.robust import ConditionBox, robust_choice, robust_choice_pc
from costdash.view import View, number_text
from dashboard import ids
from dashboard.figures.choice import decision_curve_figure, threshold_choice_figure
from dashboard.pages import choice
from dashboard.report import build_report
from dashboard.shell import route

from .helpers import find
from .test_ids import ROOT, _bare_ids


def by_uid(fig):
    return {t.uid: t for t in fig.data}


@pytest.fixture(scope="module")
def mixed_csv(tmp_path_factory) -> Path:
    """Two classifiers: probabilities (with ties) and margins (not probabilities), 5 folds."""
    rng = np.random.default_rng(13)
    n = 400
    y = rng.random(n) < 0.3
    prob = np.round(1 / (1 + np.exp(-(rng.normal(size=n) + 1.4 * y))), 2)
    margin = np.round(rng.normal(size=n) + 1.1 * y, 3)
    path = tmp_path_factory.mktemp("choice") / "mixed.csv"
    pd.DataFrame({"y_true": y.astype(int), "prob": prob, "margin": margin,
                  "fold": np.arange(n) % 5}).to_csv(path, index=False)
    return path


# --- figures -------------------------------------------------------------------------------------

def test_threshold_choice_figure_draws_the_cores_curves(mixed_csv):
    dataset = load_predictions(mixed_csv)
    analysis = analyze(dataset, OperatingCondition(0.2, 5.0, 1.0))
    summary = choice_summary(analysis, pins={"prob": 0.5})
    fig = threshold_choice_figure(summary["classifiers"], {"prob": 0, "margin": 1},
                                  pc_now=analysis.operating_point.condition.pc)
    t = by_uid(fig)
    prob = threshold_choice(roc=analysis.classifier("prob").roc, fixed_threshold=0.5)
    for method in ("optimal", "score_driven", "rate_driven", "fixed"):
        curve = getattr(prob, method)
        assert np.array_equal(t[f"{method}-0"].x, curve.pc), method
        assert np.array_equal(t[f"{method}-0"].y, curve.cost), method
    # The Brier curve's jumps are vertical segments: a PC(+) repeated with two costs.
    x, y = np.asarray(t["score_driven-0"].x), np.asarray(t["score_driven-0"].y)
    jumps = (np.diff(x) == 0) & (np.diff(y) != 0)
    assert jumps.sum() >= 10
    # The margins' score-driven curve is refused: the reason is drawn in its panel instead.
    assert "score_driven-1" not in t and "optimal-1" in t and "rate_driven-1" in t
    notes = [a.text for a in fig.layout.annotations if "No score-driven curve" in (a.text or "")]
    assert len(notes) == 1 and "not within [0, 1]" in notes[0].replace("<br>", " ")
    assert notes[0] and fig.layout.annotations[1].text == "margin"   # panel titles
    # The current PC(+) in both panels; one legend entry per method.
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert len(lines) == 2 and all(s.x0 == analysis.operating_point.condition.pc for s in lines)
    assert sum(1 for d in fig.data if d.showlegend is not False) == 5


def test_decision_curve_figure_draws_net_benefit(mixed_csv):
    frame = pd.read_csv(mixed_csv)
    dataset = load_predictions(mixed_csv)
    analysis = analyze(dataset, OperatingCondition(0.2, 9.0, 1.0))
    dca = choice_summary(analysis)["decision_curves"]
    fig = decision_curve_figure(dca, {"prob": 0, "margin": 1})
    t = by_uid(fig)
    y = frame["y_true"].to_numpy() == 1
    pt = np.asarray(dca["thresholds"])
    assert np.array_equal(t["dca-0"].y, net_benefit(y, frame["prob"].to_numpy(), pt))
    pi = y.mean()
    assert np.allclose(t["dca-all"].y, pi - (1 - pi) * pt / (1 - pt), atol=1e-15)
    assert not np.any(t["dca-none"].y)
    assert "dca-1" not in t                            # margins: refused, named on the plot
    assert any("margin" in (a.text or "") for a in fig.layout.annotations)
    # pₜ of the costs C(+|-)/(C(-|+) + C(+|-)) = 1/10, marked.
    assert dca["current"]["pt"] == pytest.approx(0.1, abs=1e-15)
    assert [s.x0 for s in fig.layout.shapes] == [dca["current"]["pt"]]
    assert any(a.text == "your pₜ = 0.1" for a in fig.layout.annotations)


# --- the handler ---------------------------------------------------------------------------------

VIEW = ("p_pos=0.1&cost_fn=20&cost_fp=1&volume=1000&unit=€&sens_p=0.05,0.2&sens_fn=10,40"
        "&pins=gbm:0.5&models=logreg,gbm,stump")


def _text(component) -> str:
    """The text of a component tree."""
    if component is None:
        return ""
    if isinstance(component, (str, int, float)):
        return str(component)
    if isinstance(component, (list, tuple)):
        return "".join(_text(c) for c in component)
    return _text(getattr(component, "children", None))


@pytest.mark.slow
def test_handler_puts_the_cores_numbers_on_the_page(services):
    record = services.put_demo("breast-cancer")
    view = View.parse(f"data={record.id}&{VIEW}")
    out = choice.choice_view(services, choice.reference(view), "", None, None)
    assert out.error == "" and out.message == "" and out.data_id == record.id

    dataset = load_demo("breast-cancer")
    analysis = analyze(dataset, OperatingCondition(0.1, 20.0, 1.0),
                       models=["logreg", "gbm", "stump"])
    table = html.Div(out.table)
    for k, c in enumerate(analysis.classifiers):
        row = [_text(td) for td in find(table, f"{ids.CHOICE_TABLE}-row-{k}").children]
        assert row[0] == c.name
        assert row[2] == f"{h_measure(c.roc).h:.4g}"
        tc = threshold_choice(roc=c.roc, fixed_threshold=0.5) if c.name == "gbm" else \
            threshold_choice(roc=c.roc, fixed_point=0)  # only the fixed curve differs
        assert row[3] == f"{tc.brier_score:.4g}"
        assert row[4:7] == [f"{tc.optimal.expected_loss:.4f}",
                            f"{tc.score_driven.expected_loss:.4f}",
                            f"{tc.rate_driven.expected_loss:.4f}"]
        if c.name == "gbm":
            assert row[7] == f"{tc.fixed.expected_loss:.4f}"
            assert row[8] == "≥ 0.5 (pinned)"
        else:
            assert row[8].endswith("(best now)")
    # The robust panel: the core's choices over the box, per 1,000 cases.
    box = ConditionBox.around(analysis.operating_point.condition, (0.05, 0.2), (10.0, 40.0))
    robust = robust_choice(analysis, box, volume=1000.0)
    panel = html.Div(out.robust)
    mm = robust.minimax_regret
    assert _text(find(panel, ids.CHOICE_MINIMAX)) == \
        f"{mm.classifier} at score ≥ {number_text(mm.threshold)}"
    assert _text(find(panel, ids.CHOICE_MINIMAX_REGRET)) == f"{mm.value:,.2f} €"
    assert _text(find(panel, ids.CHOICE_BAYES_COST)) == f"{robust.bayes.value:,.2f} €"
    assert "worth it" in _text(find(panel, ids.CHOICE_SWITCHING))
    # Decision curves: pₜ = 1/21 and the PC(+) of the conditions.
    note = html.Div(out.dca_note)
    assert _text(find(note, ids.CHOICE_PT)) == f"{1 / 21:.4g}"
    assert threshold_probability(analysis.operating_point.condition) == pytest.approx(1 / 21)
    assert set(by_uid(out.dca)) == {"dca-none", "dca-all", "dca-0", "dca-2", "dca-4"}
    assert "score_driven-1" in by_uid(out.cost)

    # Cached: a second call reads the same JSON; another Beta is another entry.
    again = choice.choice_view(services, choice.reference(view), "", None, None)
    assert _text(html.Div(again.table)) == _text(table)
    beta = choice.choice_view(services, choice.reference(view), "", 2, 2)
    assert _text(html.Div(beta.table)) != _text(table)
    assert "Beta(2, 2)" in _text(html.Div(beta.conditions))
    # With a Beta over PC(+), the robust choices under it too (robust_choice_pc).
    assert find(panel, ids.CHOICE_BETA_CHOICES) is None
    pc_choice = robust_choice_pc(analysis, (2.0, 2.0))
    words = _text(find(html.Div(beta.robust), ids.CHOICE_BETA_CHOICES))
    assert (f"{pc_choice.bayes.classifier} at score ≥ "
            f"{number_text(pc_choice.bayes.threshold)} ({pc_choice.bayes.value:.4f})") in words
    assert f"({pc_choice.minimax_regret.value:.4f})" in words


def test_handler_calibrates_margins_and_refuses_bad_controls(services, mixed_csv):
    record = services.store.put(mixed_csv, "mixed.csv")
    ref = choice.reference(View.parse(f"data={record.id}&p_pos=0.3"))
    plain = choice.choice_view(services, ref, "", None, None)
    assert "score_driven-1" not in by_uid(plain.cost)
    assert "not within [0, 1]" in _text(html.Div(plain.refused))
    calibrated = choice.choice_view(services, ref, "platt", None, None)
    assert calibrated.error == "" and "score_driven-1" in by_uid(calibrated.cost)
    assert "dca-1" in by_uid(calibrated.dca)
    bad = choice.choice_view(services, ref, "magic", None, None)
    assert "platt or isotonic" in _text(bad.error)
    bad = choice.choice_view(services, ref, "", -1, None)
    assert "Beta a of PC(+) must be a number above 0" in _text(bad.error)
    # No box: the robust part says how to get one.
    assert "no sensitivity box" in _text(html.Div(plain.robust))


def test_no_data_and_unknown_classifiers(services):
    assert choice.choice_view(services, None, "", None, None).message == choice.NO_DATA
    record = services.put_demo("breast-cancer")
    ref = choice.reference(View.parse(f"data={record.id}&models=nope"))
    assert "nope" in choice.choice_view(services, ref, "", None, None).error


# --- routes --------------------------------------------------------------------------------------

def test_the_page_is_routed_and_takes_its_ids_from_the_module(services):
    record = services.put_demo("breast-cancer")
    content, classes = route("/choice", f"?data={record.id}&calibration=isotonic&beta_a=3",
                             services)
    assert "nav-link active" in classes
    assert find(content, ids.CHOICE_CALIBRATION).value == "isotonic"
    assert find(content, ids.CHOICE_BETA_A).value == 3
    assert find(content, ids.CHOICE_DATA_ID).data == record.id
    assert _bare_ids(ROOT / "dashboard/pages/choice.py") == []


def test_a_read_only_link_shows_the_page_without_recording_the_data(services,
                                                                   breast_cancer_csv):
    record = services.store.put(breast_cancer_csv, "b.csv")
    new = services.sharing.create(record.id, name="Shared", view={
        "p_pos": 0.1, "cost_fn": 20, "sens_p": [0.05, 0.2], "models": ["gbm", "logreg"]})
    token = new.record.share_token
    content, _ = route(f"/s/{token}/choice", "", services)
    assert find(content, "shared-view-choice") is not None
    ref = find(content, ids.CHOICE_REF).data
    assert ref["id"] == f"share:{token}" and ref["shared"] is True     # no handle (issue 22)
    assert find(content, ids.CHOICE_DATA_ID).data is None
    assert record.id not in str(content.to_plotly_json())
    out = choice.choice_view(services, ref, "", None, None)
    assert out.data_id is None and out.error == ""
    assert _text(find(html.Div(out.robust), ids.CHOICE_MINIMAX))


def test_choice_json_is_what_the_command_line_prints(client, capsys, tmp_path):
    path = DEMOS["breast-cancer"].path
    with path.open("rb") as f:
        data_id = client.post("/api/v1/datasets", data={"file": (f, "bc.csv")},
                              content_type="multipart/form-data").get_json()["id"]
    got = client.get(f"/api/v1/datasets/{data_id}/choice.json?p_pos=0.1&cost_fn=20"
                     "&sens_p=0.05,0.2&sens_fn=10,40&volume=1000").get_json()
    assert main(["analyze", str(path), "--p-pos", "0.1", "--cost-fn", "20", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    for ours, theirs in zip(got["classifiers"], cli["classifiers"]):
        assert ours["name"] == theirs["name"]
        for key in ("h_measure", "h_measure_beta", "brier_score", "threshold_choice",
                    "threshold_choice_gaps"):
            assert ours[key] == theirs[key], (ours["name"], key)
    assert main(["dca", str(path), "--json"]) == 0
    dca = json.loads(capsys.readouterr().out)
    assert {k: got["decision_curves"][k] for k in dca} == dca
    assert main(["decide", str(path), "--p-pos", "0.1", "--cost-fn", "20", "--p-pos-range",
                 "0.05", "0.2", "--cost-fn-range", "10", "40", "--volume", "1000",
                 "--json"]) == 0
    robust = json.loads(capsys.readouterr().out)["robust"]
    assert {k: got["robust"][k] for k in robust} == robust


def test_the_report_has_the_section():
    dataset = load_demo("breast-cancer")
    view = View.parse(VIEW)
    page = build_report(dataset, view=view)
    section = page[page.index('<section id="threshold-choice">'):]
    section = section[:section.index("</section>")]
    analysis = analyze(dataset, OperatingCondition(0.1, 20.0, 1.0),
                       models=["logreg", "gbm", "stump"])
    box = ConditionBox.around(analysis.operating_point.condition, (0.05, 0.2), (10.0, 40.0))
    mm = robust_choice(analysis, box, volume=1000.0).minimax_regret
    assert f"{mm.classifier} at score ≥ {number_text(mm.threshold)}" in section
    assert f"{mm.value:,.2f} €" in section
    assert 'id="choice-cost-figure"' in section and 'id="choice-dca-figure"' in section
    logreg = threshold_choice(roc=analysis.classifier("logreg").roc)
    assert f"<td>{logreg.score_driven.expected_loss:.4g}</td>" in section
    assert "score ≥ 0.5 (pinned)" in section


def test_the_page_graphs_download_under_their_own_names(services):
    from dashboard.figures.common import graph_config

    from .test_plot_export import DOWNLOAD_NAMES, graphs_in

    graphs = graphs_in(choice.layout({}, services))
    names = {g.id: g.config["toImageButtonOptions"]["filename"] for g in graphs}
    assert names == {ids.CHOICE_COST_GRAPH: "costdash-choice-cost",
                     ids.CHOICE_DCA_GRAPH: "costdash-choice-dca",
                     choice.MONEY_GRAPH: "costdash-choice-money"}
    assert all(g.config == graph_config(n.removeprefix("costdash-"))
               for g, n in zip(graphs, names.values()))
    taken = {n for per_page in DOWNLOAD_NAMES.values() for n in per_page.values()}
    assert not taken & set(names.values())
