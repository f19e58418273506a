"""Issue 28 in headless Chromium against a real ``python app.py``: a 3-class predict_proba file
uploaded on Explore shows the target-class selector, and the class chosen is analysed as the
binary file made by hand; a file with a region column offers it as segments, and the Segments
page shows each segment's choice as the core computes it (20 classifiers). Screenshots at 1440
and 390 px."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from costdash.analysis import analyze
from costdash.conditions import OperatingCondition
from costdash.io import load_predictions
from costdash.segments import segment_policy
from tests.web.helpers import wait_data_drawn
from tests.web.test_segments_page import MODELS, multiclass_frame

pytestmark = pytest.mark.browser


def many_segments_frame(n: int = 4000, k: int = 20, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east", "west", "centre"], size=n,
                        p=[0.35, 0.25, 0.2, 0.12, 0.08])
    prev = pd.Series(region).map({"north": 0.04, "south": 0.25, "east": 0.5, "west": 0.12,
                                  "centre": 0.3}).to_numpy()
    y = rng.random(n) < prev
    out: dict[str, object] = {"y_true": y.astype(int)}
    for i in range(k):
        out[f"model_{i:02d}"] = np.round(rng.normal(size=n) + (0.4 + 0.08 * i) * y, 2)
    out["region"] = region
    return pd.DataFrame(out)


def choose_bytes(page: Page, name: str, data: bytes) -> None:
    page.set_input_files("#upload input[type=file]", files=[
        {"name": name, "mimeType": "text/csv", "buffer": data}])


def shot(page: Page, screenshot_dir, name: str) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.mouse.move(0, 0)
    page.wait_for_timeout(400)
    (screenshot_dir / name).write_bytes(page.screenshot(full_page=True))


def test_a_three_class_file_asks_for_the_target_class(live_server, page: Page, screenshot_dir):
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(live_server.url + "/explore")
    frame = multiclass_frame().drop(columns="region")
    choose_bytes(page, "proba.csv", frame.to_csv(index=False).encode())
    select = page.locator("#upload-target-class")
    expect(select).to_be_visible()
    assert page.locator("#upload-target-class option").all_inner_texts() == \
        ["choose a class…", "cat", "dog", "fox"]
    expect(page.locator("#upload-error")).to_have_text("")
    shot(page, screenshot_dir, "segments-target-class-1440.png")
    select.select_option("dog")
    by_hand = pd.DataFrame({"y_true": (frame["y_true"] == "dog").astype(int),
                            **{m: frame[f"{m}:dog"] for m in MODELS}})
    dataset = load_predictions(io.BytesIO(by_hand.to_csv(index=False).encode()), name="b.csv")
    wait_data_drawn(page, dataset)
    op = analyze(dataset, OperatingCondition(dataset.prevalence, 1.0, 1.0)).operating_point
    expect(page.locator("#chosen-classifier")).to_have_text(op.vertex.classifier)
    # The selector stays, with the class chosen, to switch to another one.
    expect(page.locator("#upload-target-class")).to_have_value("dog")
    page.set_viewport_size({"width": 390, "height": 844})
    shot(page, screenshot_dir, "segments-target-class-390.png")
    assert errors == []


def test_a_segment_column_and_the_segments_page(live_server, page: Page, screenshot_dir):
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(live_server.url + "/explore")
    frame = many_segments_frame()
    data = frame.to_csv(index=False).encode()
    choose_bytes(page, "regions.csv", data)
    # Detected: the region column is offered as segments; the user confirms.
    expect(page.locator("#upload-segment")).to_contain_text("region")
    expect(page.locator("#upload-segment-column")).to_have_value("region")
    with page.expect_response("**/api/v1/datasets") as reply:
        page.click("#upload-segment-read")
    new_id = reply.value.json()["id"]
    expect(page.locator("#upload-segment")).to_contain_text("Segments: column “region”")
    # The nav links carry the new data set once the page has switched to it.
    page.wait_for_function("(id) => document.getElementById('nav-segments')"
                           ".getAttribute('href').includes(id)", arg=new_id)
    page.click("#nav-segments")
    table = page.locator("#segments-table table")
    expect(table).to_be_visible(timeout=30_000)
    dataset = load_predictions(io.BytesIO(data), name="regions.csv", segment_column="region")
    policy = segment_policy(dataset, dataset.segments.values,
                            OperatingCondition(dataset.prevalence, 1.0, 1.0))
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(len(policy.segments))
    for k, s in enumerate(policy.segments):
        cells = rows.nth(k).locator("td").all_inner_texts()
        assert cells[0] == s.segment and cells[1] == f"{s.n:,}"
        assert cells[3] == s.classifier
        assert float(cells[5]) == pytest.approx(s.expected_cost, rel=1e-3)
        assert float(cells[6]) == pytest.approx(s.regret_vs_shared, rel=1e-3, abs=1e-6)
    expect(page.locator("#segments-summary")).to_contain_text("saves")
    # Costs typed on the page change the choice; the address keeps them.
    page.fill("#segments-cost-fn", "10")
    page.keyboard.press("Tab")
    tenfold = segment_policy(dataset, dataset.segments.values,
                             OperatingCondition(dataset.prevalence, 10.0, 1.0))
    expect(rows.nth(0).locator("td").nth(3)).to_have_text(tenfold.segments[0].classifier)
    page.wait_for_function("() => location.search.includes('cost_fn=10')")
    shot(page, screenshot_dir, "segments-1440.png")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(500)
    # At 390 px nothing overflows the page sideways (the table scrolls in its box).
    assert page.evaluate("document.documentElement.scrollWidth") <= 392
    shot(page, screenshot_dir, "segments-390.png")
    assert errors == []


def test_fifty_classifiers_and_ten_segments_stay_legible(live_server, page: Page,
                                                         screenshot_dir):
    """50 classifiers, 10 segments: one row per segment whatever the classifiers, each chosen
    classifier in its own colour and hatching; at 390 px nothing overflows sideways."""
    import json
    import urllib.request
    import uuid

    rng = np.random.default_rng(9)
    n, names = 6000, [f"clf_{i:02d}" for i in range(50)]
    region = rng.choice([f"site {c}" for c in "ABCDEFGHIJ"], size=n)
    y = rng.random(n) < 0.05 + 0.4 * (np.char.find(region.astype(str), "A") >= 0)
    table = {"y_true": y.astype(int), "site": region,
             **{m: np.round(rng.normal(size=n) + (0.3 + 0.03 * i) * y, 2)
                for i, m in enumerate(names)}}
    data = pd.DataFrame(table).to_csv(index=False).encode()
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"segment_column\"\r\n\r\n"
            f"site\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"sites.csv\"\r\nContent-Type: text/csv\r\n\r\n").encode() + data + \
        f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(
        live_server.url + "/api/v1/datasets", data=body, method="POST",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        data_id = json.load(reply)["id"]
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    for width, height in ((1440, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{live_server.url}/segments?data={data_id}&cost_fn=20&cost_fp=1")
        rows = page.locator("#segments-table tbody tr")
        expect(rows).to_have_count(10, timeout=60_000)
        page.wait_for_function("() => { const gd = document.querySelector("
                               "'#segments-graph .js-plotly-plot'); return gd && gd._fullData"
                               " && gd._fullData.length === 2; }", timeout=30_000)
        ticks = page.evaluate("() => [...document.querySelectorAll('#segments-graph .ytick')]"
                              ".map((t) => t.textContent).filter(Boolean)")
        assert sorted(ticks) == [f"site {c}" for c in "ABCDEFGHIJ"]   # every one labelled
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 2
        shot(page, screenshot_dir, f"segments-50-{width}.png")
    assert errors == []
