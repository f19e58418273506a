"""Issue 28 on the dashboard: one-vs-rest and segments through the upload API, storage, the
results service, the Segments page (its callback called as a function), the decision export, the
report and read links. Numbers are checked against an independent computation: brute force over
every threshold of every classifier on each segment's rows, and the binary file made by hand for
one-vs-rest."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from costdash.view import View
from dashboard.figures.segments import segments_figure
from dashboard.pages import segments as page
from dashboard.results import segments_result
from dashboard.storage import LoaderOptions, dataset_id

CLASSES = ("cat", "dog", "fox")
MODELS = ("gbm", "logreg", "tree")


def multiclass_frame(n: int = 600, seed: int = 3) -> pd.DataFrame:
    """A predict_proba file: y_true of three classes and per classifier a score column per
    class (rows summing to 1), plus a region column."""
    rng = np.random.default_rng(seed)
    y = rng.choice(CLASSES, size=n, p=[0.5, 0.3, 0.2])
    out: dict[str, object] = {"y_true": y}
    for m, skill in zip(MODELS, (2.0, 1.2, 0.6)):
        logits = rng.normal(size=(n, 3)) + skill * (y[:, None] == np.array(CLASSES))
        p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        for k, c in enumerate(CLASSES):
            out[f"{m}:{c}"] = np.round(p[:, k], 3)
    out["region"] = rng.choice(["north", "south", "east"], size=n, p=[0.5, 0.3, 0.2])
    return pd.DataFrame(out)


def segmented_frame(n: int = 2400, seed: int = 11) -> pd.DataFrame:
    """A binary wide file with a region column whose segments differ in prevalence."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east", "west"], size=n, p=[0.4, 0.3, 0.2, 0.1])
    prev = pd.Series(region).map({"north": 0.05, "south": 0.3, "east": 0.5,
                                  "west": 0.15}).to_numpy()
    y = rng.random(n) < prev
    out: dict[str, object] = {"y_true": y.astype(int)}
    for m, shift in zip(MODELS, (1.8, 1.2, 0.7)):
        out[m] = np.round(rng.normal(size=n) + shift * y, 2)
    out["region"] = region
    return pd.DataFrame(out)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def upload(client, data: bytes, name: str = "p.csv", **fields: str):
    return client.post("/api/v1/datasets", data={"file": (io.BytesIO(data), name), **fields},
                       content_type="multipart/form-data")


# --- an independent computation --------------------------------------------------------------

def brute_best(y: np.ndarray, scores: dict[str, np.ndarray], p_pos: float, cost_fn: float,
               cost_fp: float) -> tuple[float, str, float | None]:
    """The cheapest (expected cost per case, classifier, threshold) over every threshold of every
    classifier and the two trivial choices: flag score >= t."""
    best = (p_pos * cost_fn, "all-negative", None)      # flag nothing
    best = min(best, ((1 - p_pos) * cost_fp, "all-positive", None), key=lambda b: b[0])
    pos, neg = y.sum(), (~y).sum()
    for name, s in scores.items():
        for t in np.unique(s):
            flagged = s >= t
            fnr = 1 - (flagged & y).sum() / pos
            fpr = (flagged & ~y).sum() / neg
            cost = p_pos * fnr * cost_fn + (1 - p_pos) * fpr * cost_fp
            if cost < best[0] - 1e-12:
                best = (cost, name, float(t))
    return best


def cost_at(y: np.ndarray, s: np.ndarray | None, t: float | None, p_pos: float, cost_fn: float,
            cost_fp: float, trivial: str | None = None) -> float:
    if trivial == "all-positive":
        return (1 - p_pos) * cost_fp
    if s is None or t is None:
        return p_pos * cost_fn
    flagged = s >= t
    fnr = 1 - (flagged & y).sum() / y.sum()
    fpr = (flagged & ~y).sum() / (~y).sum()
    return p_pos * fnr * cost_fn + (1 - p_pos) * fpr * cost_fp


# --- storage and the upload API ------------------------------------------------------------

def test_loader_options_keep_old_ids_and_take_the_new_fields():
    # Unset, the new options leave the content id as it was (stored data keeps its id).
    old = LoaderOptions()
    assert json.loads(old.canonical()).keys() == {"layout", "label_column", "model_column",
                                                  "score_column", "fold_column", "positive",
                                                  "models", "drop_missing"}
    new = LoaderOptions.from_form({"target-class": "dog", "segment_column": "region"})
    assert (new.target_class, new.segment_column) == ("dog", "region")
    assert dataset_id("a" * 64, new, "p.csv") != dataset_id("a" * 64, old, "p.csv")
    assert dataset_id("a" * 64, LoaderOptions(target_class="cat"), "p.csv") != \
        dataset_id("a" * 64, LoaderOptions(target_class="dog"), "p.csv")


def test_a_multiclass_upload_is_refused_with_its_target_classes(client):
    reply = upload(client, csv_bytes(multiclass_frame().drop(columns="region")))
    assert reply.status_code == 400
    body = reply.get_json()
    assert body["target_classes"] == list(CLASSES)
    assert "--target-class" in body["error"]


def test_a_binary_file_refused_gets_no_target_classes(client):
    frame = segmented_frame()
    frame["y_true"] = np.where(frame["y_true"] == 1, "a", "b")
    frame.loc[0, "y_true"] = "c"          # three labels but no per-class score columns
    body = upload(client, csv_bytes(frame.drop(columns="region"))).get_json()
    assert "target_classes" not in body and "error" in body


@pytest.mark.parametrize("target", CLASSES)
def test_one_vs_rest_upload_is_the_binary_file_made_by_hand(client, services, target):
    frame = multiclass_frame().drop(columns="region")
    reply = upload(client, csv_bytes(frame), target_class=target)
    assert reply.status_code == 200, reply.get_json()
    body = reply.get_json()
    assert body["target_class"] == target and body["classifiers"] == list(MODELS)
    by_hand = pd.DataFrame({"y_true": (frame["y_true"] == target).astype(int),
                            **{m: frame[f"{m}:{target}"] for m in MODELS}})
    binary = upload(client, csv_bytes(by_hand)).get_json()
    got, want = services.store.get(body["id"]), services.store.get(binary["id"])
    assert got.n == want.n and got.n_pos == want.n_pos
    for a, b in zip(got.scored, want.scored):
        assert a.name == b.name
        np.testing.assert_array_equal(a.y_true, b.y_true)
        np.testing.assert_array_equal(a.score, b.score)
    # The decision export of both: identical.
    q = "?p_pos=0.2&cost_fn=5&cost_fp=1"
    d1 = client.get(f"/api/v1/datasets/{body['id']}/decision.json{q}").get_json()
    d2 = client.get(f"/api/v1/datasets/{binary['id']}/decision.json{q}").get_json()
    assert d1 == d2
    # The record keeps the target class (a data-set property): the GET says so.
    info = services.store.info(body["id"])
    assert info.options.target_class == target


def test_an_unknown_target_class_names_the_classes(client):
    reply = upload(client, csv_bytes(multiclass_frame()), target_class="wolf")
    assert reply.status_code == 400
    assert "wolf" in reply.get_json()["error"] and "cat" in reply.get_json()["error"]


def test_segments_survive_storage(client, services):
    frame = segmented_frame()
    body = upload(client, csv_bytes(frame), segment_column="region").get_json()
    assert body["segment_column"] == "region"
    services.views.forget(body["id"])
    ds = services.store.get(body["id"])
    assert ds.segments is not None and ds.segments.column == "region"
    np.testing.assert_array_equal(ds.segments.values.astype(str), frame["region"].to_numpy())


def test_a_segment_column_and_a_target_class_together(client, services):
    frame = multiclass_frame()
    body = upload(client, csv_bytes(frame), target_class="dog",
                  segment_column="region").get_json()
    ds = services.store.get(body["id"])
    np.testing.assert_array_equal(ds.scored[0].y_true, frame["y_true"].to_numpy() == "dog")
    np.testing.assert_array_equal(ds.segments.values.astype(str), frame["region"].to_numpy())


# --- the results service against brute force ----------------------------------------------

@pytest.mark.parametrize("cost_fn,cost_fp", [(5.0, 1.0), (1.0, 3.0), (20.0, 1.0)])
def test_segments_result_against_brute_force(client, services, cost_fn, cost_fp):
    frame = segmented_frame()
    body = upload(client, csv_bytes(frame), segment_column="region").get_json()
    view = View().with_values(cost_fn=cost_fn, cost_fp=cost_fp)
    result = segments_result(services.results, body["id"], view)
    assert result["segment_column"] == "region"
    y_all = frame["y_true"].to_numpy() == 1
    scores_all = {m: frame[m].to_numpy(float) for m in MODELS}
    p_all = y_all.mean()
    shared_cost, _, _ = brute_best(y_all, scores_all, p_all, cost_fn, cost_fp)
    assert result["shared"]["expected_cost"] == pytest.approx(shared_cost, abs=1e-12)
    # Ties between equally cheap choices may be broken either way: the shared choice is the
    # result's, checked to cost the brute-force minimum on the whole file.
    shared_name, shared_t = result["shared"]["classifier"], result["shared"]["threshold"]
    assert cost_at(y_all, scores_all.get(shared_name), shared_t, p_all, cost_fn, cost_fp,
                   trivial=shared_name if shared_name not in scores_all else None) == \
        pytest.approx(shared_cost, abs=1e-12)
    assert [r["segment"] for r in result["segments"]] == list(pd.unique(frame["region"]))
    for row in result["segments"]:
        mask = frame["region"].to_numpy() == row["segment"]
        y = y_all[mask]
        scores = {m: s[mask] for m, s in scores_all.items()}
        p = y.mean()
        best, _, _ = brute_best(y, scores, p, cost_fn, cost_fp)
        assert row["n"] == mask.sum() and row["p_pos"] == pytest.approx(p)
        assert row["expected_cost"] == pytest.approx(best, abs=1e-12)
        # its own choice, priced by brute force, costs what it says
        own = cost_at(y, scores.get(row["classifier"]), row["threshold"], p, cost_fn, cost_fp,
                      trivial=row["classifier"] if row["classifier"] not in scores else None)
        assert own == pytest.approx(best, abs=1e-12)
        shared_here = cost_at(y, scores.get(shared_name), shared_t, p, cost_fn, cost_fp,
                              trivial=shared_name if shared_name not in scores else None)
        assert row["shared_expected_cost"] == pytest.approx(shared_here, abs=1e-12)
        assert row["regret_vs_shared"] == pytest.approx(max(shared_here - best, 0), abs=1e-12)
    n = np.array([r["n"] for r in result["segments"]])
    regret = np.array([r["regret_vs_shared"] for r in result["segments"]])
    assert result["saving_per_case"] == pytest.approx((n * regret).sum() / n.sum())
    assert any(r["regret_vs_shared"] > 0 for r in result["segments"])
    # Through the results service: the second call is the cache's (the same answer, a key).
    assert segments_result(services.results, body["id"], view) == result
    assert any(":segments:" in k for k in services.results.keys_of(body["id"]))


def test_segments_result_without_segments(client, services):
    body = upload(client, csv_bytes(segmented_frame().drop(columns="region"))).get_json()
    assert segments_result(services.results, body["id"], View()) == {"segment_column": None}


def test_a_segment_with_one_class_is_a_message(client, services):
    frame = segmented_frame()
    frame.loc[frame["region"] == "west", "y_true"] = 0
    body = upload(client, csv_bytes(frame), segment_column="region").get_json()
    result = segments_result(services.results, body["id"], View())
    assert "west" in result["error"] and "positive" in result["error"]


# --- the page and its figure ------------------------------------------------------------------

def test_page_view_shows_every_segment(client, services):
    frame = segmented_frame()
    body = upload(client, csv_bytes(frame), segment_column="region").get_json()
    ref = page.reference(View().with_values(data=body["id"], volume=1000, unit="€"))
    out = page.segments_view(services, ref, None, 5, 1)
    assert out["error"] == "" and out["message"] == ""
    text = str(out["table"])
    for region in ("north", "south", "east", "west"):
        assert region in text
    fig = out["figure"]
    assert [t.uid for t in fig.data] == ["shared", "own"]
    assert list(fig.data[0].y) == list(pd.unique(frame["region"]))
    # bars are per period: per-case cost x volume x the segment's share of rows
    result = segments_result(services.results, body["id"],
                             View().with_values(cost_fn=5, cost_fp=1))
    first = result["segments"][0]
    assert fig.data[1].x[0] == pytest.approx(first["expected_cost"] * 1000 * first["n"]
                                             / len(frame))
    assert "saves" in str(out["summary"])


def test_page_view_without_segments_says_how(client, services):
    body = upload(client, csv_bytes(segmented_frame().drop(columns="region"))).get_json()
    out = page.segments_view(services, page.reference(View().with_values(data=body["id"])),
                             None, None, None)
    assert out["message"] == page.NO_SEGMENTS


def test_figure_of_many_segments_grows_with_rows():
    rows = [{"segment": f"s{i}", "n": 10, "p_pos": 0.1, "classifier": f"m{i}",
             "threshold": 0.5, "expected_cost": 0.1, "shared_expected_cost": 0.2,
             "regret_vs_shared": 0.1} for i in range(30)]
    fig = segments_figure(rows, index={f"m{i}": i for i in range(30)})
    assert fig.layout.height >= 30 * 30
    # colour and hatching: a style of its own for each of up to 50 classifiers
    assert len(set(zip(fig.data[1].marker.color, fig.data[1].marker.pattern.shape))) == 30
    assert segments_figure(None, message="nothing").layout.annotations[0].text == "nothing"


# --- the decision export, the report, read links -------------------------------------------

@pytest.mark.slow
def test_decision_json_has_the_clis_segments(client, tmp_path):
    import subprocess
    import sys

    frame = segmented_frame()
    path = tmp_path / "segmented.csv"
    frame.to_csv(path, index=False)
    body = upload(client, path.read_bytes(), segment_column="region").get_json()
    got = client.get(f"/api/v1/datasets/{body['id']}/decision.json?cost_fn=5&cost_fp=1")
    assert got.status_code == 200
    decision = got.get_json()["decision"]
    cli = subprocess.run([sys.executable, "-m", "costdash", "decide", str(path),
                          "--segment-column", "region", "--cost-fn", "5", "--cost-fp", "1",
                          "--json"], capture_output=True, text=True, check=True)
    want = json.loads(cli.stdout)["decision"]
    assert decision["segment_column"] == want["segment_column"] == "region"
    assert decision["segments"] == want["segments"]
    assert decision["segment_saving_per_case"] == pytest.approx(want["segment_saving_per_case"])
    # Without a segment column the export is what it was.
    plain = upload(client, path.read_bytes()).get_json()
    assert "segments" not in client.get(
        f"/api/v1/datasets/{plain['id']}/decision.json").get_json()["decision"]


@pytest.mark.slow
def test_report_has_a_segments_section(client, services):
    import re

    body = upload(client, csv_bytes(segmented_frame()), segment_column="region").get_json()
    html = client.get(f"/api/v1/datasets/{body['id']}/report.html?cost_fn=5&cost_fp=1"
                      "&volume=1000&unit=EUR").get_data(as_text=True)
    section = re.search(r'<section id="segments">(.*?)</section>', html, re.S)
    assert section, "no segments section"
    result = segments_result(services.results, body["id"],
                             View().with_values(cost_fn=5, cost_fp=1))
    for row in result["segments"]:
        assert f">{row['segment']}<" in section.group(1)
    assert "per period" in section.group(1)
    plain = upload(client, csv_bytes(segmented_frame().drop(columns="region"))).get_json()
    assert 'id="segments"' not in client.get(
        f"/api/v1/datasets/{plain['id']}/report.html").get_data(as_text=True)


@pytest.mark.slow
def test_read_link_opens_the_segments_page_read_only(client, services):
    from dashboard.shell import routed

    data = {"file": (io.BytesIO(csv_bytes(segmented_frame())), "seg.csv"),
            "segment_column": "region", "cost_fn": "5", "cost_fp": "1"}
    reply = client.post("/api/v1/analyses", data=data, content_type="multipart/form-data")
    assert reply.status_code == 201, reply.get_json()
    token = reply.get_json()["url"].rsplit("/", 1)[-1]
    assert client.get(f"/s/{token}/segments").status_code == 200
    content, _, _ = routed(f"/s/{token}/segments", "", services)
    ref = next(c for c in _walk(content) if getattr(c, "id", None) == "segments-ref").data
    assert ref["id"] == f"share:{token}" and ref["shared"] is True
    data_id = next(c for c in _walk(content) if getattr(c, "id", None) == "segments-data-id")
    assert data_id.data is None          # the address never holds the data handle
    out = page.segments_view(services, ref, None, "5", "1")
    assert out["error"] == "" and "north" in str(out["table"])
    # the link's nav offers the page
    assert f"/s/{token}/segments" in str(content)


def _walk(component):
    yield component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if child is not None and not isinstance(child, (str, int, float)):
            yield from _walk(child)


def test_a_refused_slot_is_said_and_not_cached(client, services, monkeypatch):
    from contextlib import contextmanager

    import dashboard.api as api_module
    from dashboard.jobs.gate import ComputeRefused

    @contextmanager
    def busy(*_args, **_kwargs):
        raise ComputeRefused("The server is busy; try again in a moment.", 503, 5)
        yield  # pragma: no cover

    body = upload(client, csv_bytes(segmented_frame()), segment_column="region").get_json()
    monkeypatch.setattr(page, "heavy_work", busy)
    out = page.segments_view(services, page.reference(View().with_values(data=body["id"])),
                             None, "3", "1")
    assert out["error"] == "The server is busy; try again in a moment."
    monkeypatch.setattr(api_module, "heavy_work", busy)
    q = f"/api/v1/datasets/{body['id']}/decision.json?cost_fn=3"
    refused = client.get(q).get_json()["decision"]
    assert refused["segments_error"].startswith("The server is busy") and "classifier" in refused
    monkeypatch.undo()
    # Not cached so: the next request, with a slot, has the segments.
    assert len(client.get(q).get_json()["decision"]["segments"]) == 4
