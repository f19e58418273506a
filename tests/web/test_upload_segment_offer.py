"""The segment column offered after an upload (assets/upload.js ``segmentCandidates``), run in
Node: text columns with 2 to 50 distinct values, found without reading every cell of the
columns that have more (issue 23: it runs while the page draws the data set)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ASSET = Path(__file__).resolve().parents[2] / "assets" / "upload.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

HARNESS = """
globalThis.window = {};
globalThis.document = {addEventListener() {}, documentElement: {}, getElementById() { return null; }};
globalThis.MutationObserver = class { observe() {} };
require(process.argv[1]);
const text = require("fs").readFileSync(0, "utf8");
const file = {name: process.argv[2], slice: (a, b) => ({text: async () => text.slice(a, b)})};
window.costdashUpload.segmentCandidates(file).then((c) => console.log(JSON.stringify(c)));
"""


def _candidates(text: str, name: str = "p.csv") -> list[str]:
    out = subprocess.run([NODE, "-e", HARNESS, str(ASSET), name], input=text,
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def _rows(n: int, sep: str = ",") -> str:
    regions = ["north", "south", '"east"', " west "]
    lines = [sep.join(["y_true", "score", "region", "code", "note", "grade"])]
    for i in range(n):
        lines.append(sep.join([str(i % 2), f"0.{i:05d}", regions[i % 4], str(i % 3),
                               f"note {i}", "A" if i < n // 2 else ("" if i % 2 else "B")]))
    return "\n".join(lines) + "\n"


def test_text_columns_with_few_values_are_offered_and_the_rest_are_not():
    # score: numbers; code: numbers, few; note: text, one per row; grade: text, 2 values and
    # blanks (which are not values); region: quoted and padded values count once each.
    assert _candidates(_rows(2000)) == ["region", "grade"]
    assert _candidates(_rows(2000, "\t"), "p.tsv") == ["region", "grade"]


def test_fifty_values_are_segments_and_fifty_one_are_not():
    def table(k: int) -> str:
        return "y,s,site\n" + "".join(f"{i % 2},0.{i},site{i % k}\n" for i in range(400))
    assert _candidates(table(50)) == ["site"]
    assert _candidates(table(51)) == []
    assert _candidates("y,s,site\n1,0.1,a\n0,0.2,a\n1,0.3,a\n0,0.4,a\n") == []  # one value


def test_binary_and_short_files_offer_nothing():
    assert _candidates(_rows(100), "p.parquet") == []
    assert _candidates("y,region\n1,north\n") == []
