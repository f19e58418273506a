"""``costdash.show`` (issue 27): the Explore page inline in a real notebook, and ``.decision()``.

A real kernel (nbclient + ipykernel) runs ``costdash.show``; the output cell must hold Dash's
inline frame to 127.0.0.1:<port>, the page must answer while the kernel lives, and
``.decision()`` must be what ``costdash decide`` prints for the same file and conditions. The
view the page records (the callback :func:`dashboard.notebook.record_view_on_screen` adds) is
checked here through the app's own callback route; tests/web/test_e2e_notebook.py changes it in
Chromium.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd
import pytest

import costdash
from costdash.cli import main
from costdash.decision import decision_to_dict
from costdash.errors import ParameterError
from costdash.view import View
from dashboard import ids
from dashboard.notebook import ON_SCREEN_FIELDS, on_screen_view, show

from .helpers import make_predictions
from .notebook_kernel import IFRAME, html_outputs, notebook_kernel


def _get(url: str, *, follow: bool = True) -> tuple[int, str, str]:
    """Status, final address and body of a GET (redirects followed unless ``follow`` is off)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(*([] if follow else [NoRedirect()]))
    try:
        with opener.open(url, timeout=30) as resp:
            return resp.status, resp.url, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Location", ""), ""


def _cli_decision(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["decide", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def predictions_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("notebook") / "predictions.csv"
    make_predictions().to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_a_notebook_shows_the_page_inline_and_decides_as_the_cli(predictions_file, capsys):
    with notebook_kernel() as kernel:
        cell = kernel.run(
            "import costdash\n"
            f"view = costdash.show({str(predictions_file)!r}, p_pos=0.1, cost_fn=20,\n"
            "                      models=['alpha', 'beta'])")
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert errors == []
        frame = IFRAME.search(html_outputs(cell))
        assert frame is not None, cell.outputs          # Dash's inline frame, in the cell
        src, port = frame.group(1), int(frame.group(2))
        assert src == f"http://127.0.0.1:{port}/"

        # The served page answers while the kernel lives: the frame's root opens this
        # notebook's Explore page, with the data set and the conditions given to show().
        status, location, _ = _get(src, follow=False)
        assert status == 302 and location.startswith("/explore?data=")
        status, final, page = _get(src)
        assert status == 200 and "_dash-renderer" in page and "costdash" in page
        query = parse_qs(urlsplit(final).query)
        assert (query["p_pos"], query["cost_fn"], query["models"]) == \
            (["0.1"], ["20"], ["alpha,beta"])
        url = kernel.json("view.url")
        assert url == f"http://127.0.0.1:{port}{location}"
        assert _get(url)[0] == 200

        # .decision() before any change: what `costdash decide` prints for the same file.
        shown = kernel.json("costdash.decision_to_dict(view.decision())")
        cli = _cli_decision(capsys, str(predictions_file), "--p-pos", "0.1", "--cost-fn", "20",
                            "--models", "alpha", "beta")
        assert shown == cli
        assert shown["decision"]["classifier"] in ("alpha", "beta")

        # close() stops the page (the kernel goes on) and removes the store's folder.
        folder = kernel.json("str(view.folder)")
        kernel.run("view.close()")
        with pytest.raises(OSError):
            urllib.request.urlopen(src, timeout=5)
        assert not Path(folder).exists()
        assert kernel.json("1 + 1") == 2


# --- the view on screen (in this process: show() outside a notebook serves from a thread) -------

@pytest.fixture
def shown(predictions_file):
    view = show(predictions_file, p_pos=0.1, cost_fn=20)
    yield view
    view.close()


def _record_callback(app):
    """The callback show() added: no outputs, the data reference and the boxes as inputs."""
    wanted = [ids.DATASET_REF, ids.MODELS_INPUT, ids.P_POS_INPUT, ids.COST_FN_INPUT,
              ids.COST_FP_INPUT, ids.COST_TP_INPUT, ids.COST_TN_INPUT]
    found = [(key, cb) for key, cb in app.callback_map.items()
             if [i["id"] for i in cb["inputs"]] == wanted]
    assert len(found) == 1
    return found[0]


def _post_view(view, ref_id, models, p_pos, cost_fn, cost_fp, cost_tp=0, cost_tn=0):
    """What the page sends when a box changes: Dash's callback request for that callback."""
    key, cb = _record_callback(view.app)
    values = [{"id": ref_id, "models": None}, models, p_pos, cost_fn, cost_fp, cost_tp, cost_tn]
    body = {"output": key, "outputs": [],
            "inputs": [{**i, "value": v} for i, v in zip(cb["inputs"], values)],
            "changedPropIds": [f"{ids.P_POS_INPUT}.value"], "state": []}
    client = view.app.server.test_client()
    return client.post("/_dash-update-component", json=body)


def test_decision_follows_the_view_the_page_records(shown, predictions_file, capsys):
    assert shown.view() == shown.initial
    assert shown.decision() == costdash.decide(costdash.analyze(
        costdash.load_predictions(predictions_file),
        costdash.OperatingCondition(p_pos=0.1, cost_fn=20, cost_fp=1)))
    answer = _post_view(shown, shown.initial.data, ["alpha", "gamma"], 0.4, 3, 2, 0, 0)
    assert answer.status_code in (200, 204)
    assert shown.view().p_pos == 0.4 and shown.view().models == ("alpha", "gamma")
    cli = _cli_decision(capsys, str(predictions_file), "--p-pos", "0.4", "--cost-fn", "3",
                        "--cost-fp", "2", "--models", "alpha", "gamma")
    assert decision_to_dict(shown.decision()) == cli
    # A box being typed in (empty) or out of range keeps the value it had.
    _post_view(shown, shown.initial.data, ["alpha", "gamma"], None, 3, 2)
    _post_view(shown, shown.initial.data, ["alpha", "gamma"], 1.5, 3, 2)
    assert shown.view().p_pos == 0.4


def test_the_root_opens_the_notebooks_page_and_the_url_serves_it(shown):
    root = shown.url.split("/explore")[0] + "/"
    status, location, _ = _get(root, follow=False)
    assert status == 302 and root.rstrip("/") + location == shown.url
    assert _get(shown.url)[0] == 200
    # The factory's own redirect of a root with a query is untouched.
    assert _get(root + "?p_pos=0.2", follow=False)[1] == "/explore?p_pos=0.2"


def test_the_page_may_be_framed_by_a_notebook_and_keeps_no_session_storage(shown):
    from dashboard.notebook import NOTEBOOK_FRAME_ANCESTORS

    client = shown.app.server.test_client()
    for path in ("/", "/explore", "/_dash-layout"):
        headers = client.get(path).headers
        # Every other dashboard answers X-Frame-Options: DENY, frame-ancestors 'none'.
        assert "X-Frame-Options" not in headers
        assert headers["Content-Security-Policy"] == f"frame-ancestors {NOTEBOOK_FRAME_ANCESTORS}"
    assert "http://localhost:*" in NOTEBOOK_FRAME_ANCESTORS and " * " not in NOTEBOOK_FRAME_ANCESTORS
    # A cross-site frame may not use session storage (the page would open without its data).
    layout = client.get("/_dash-layout").get_data(as_text=True)
    assert re.findall(r'"storage_type":\s*"(\w+)"', layout) == ["memory"]   # the shell's one


def test_on_screen_view_keeps_what_the_page_refuses():
    before = View.parse({"data": "a" * 32, "p_pos": 0.1, "cost_fn": 20}, only=ON_SCREEN_FIELDS)
    boxes = {"models": ["x"], "p_pos": "0.25", "cost_fn": 20, "cost_fp": 1, "cost_tp": 0,
             "cost_tn": 0}
    moved = on_screen_view(before, {"id": "b" * 32}, boxes)
    assert (moved.data, moved.models, moved.p_pos) == ("b" * 32, ("x",), 0.25)
    assert on_screen_view(before, None, {**boxes, "p_pos": ""}).p_pos == 0.1
    assert on_screen_view(before, None, {**boxes, "p_pos": 0}).p_pos == 0.1
    assert on_screen_view(before, None, {**boxes, "models": []}).models is None
    assert on_screen_view(before, {"id": "share:xyz"}, boxes).data == "a" * 32
    # A gain above the error's cost breaks a rule across fields: the whole view stays.
    assert on_screen_view(before, None, {**boxes, "cost_tp": 50}) == before


def test_show_takes_a_frame_and_y_true_with_scores(predictions_file):
    frame = make_predictions()
    expected = costdash.decide(costdash.analyze(costdash.load_predictions(predictions_file),
                                                costdash.OperatingCondition(0.3, 4, 1)))
    from_frame = show(frame, p_pos=0.3, cost_fn=4)
    scores = {name: frame[name].to_numpy() for name in ("alpha", "beta", "gamma")}
    from_arrays = show(frame["y_true"].to_numpy(), scores, p_pos=0.3, cost_fn=4)
    try:
        assert from_frame.decision() == from_arrays.decision() == expected
        assert from_frame.url != from_arrays.url   # two apps, two ports
    finally:
        from_frame.close()
        from_arrays.close()
    assert not from_frame.folder.exists()


def test_show_refuses_what_decide_refuses(predictions_file):
    with pytest.raises(ParameterError, match="p\\(\\+\\)"):
        show(predictions_file, p_pos=1.5)
    with pytest.raises(ParameterError, match="no classifier named 'delta'"):
        show(predictions_file, models=["delta"])
    with pytest.raises(ParameterError, match="no option colour"):
        show(predictions_file, colour="red")
    with pytest.raises(ParameterError, match="mapping of classifier names"):
        show(np.array([0, 1]), [0.1, 0.9])
    with pytest.raises(ParameterError, match="DataFrame, the path"):
        show(pd.Series([0, 1]))
