"""``costdash push --target-class`` and ``--segment-column`` (issue 28): a real server takes the
one-vs-rest options (they were refused as unknown loader options before), and what it saved is
the analysis of the binary file made by hand."""

from __future__ import annotations

import urllib.request

import pandas as pd
import pytest

from tests.test_push_cli import push, saved, server  # noqa: F401 - the module's server fixture
from tests.web.test_segments_page import MODELS, multiclass_frame


@pytest.mark.slow
def test_push_target_class_is_the_binary_file_by_hand(server, capsys, tmp_path):  # noqa: F811
    frame = multiclass_frame(n=250)
    multi = tmp_path / "proba.csv"
    frame.to_csv(multi, index=False)
    by_hand = tmp_path / "binary.csv"
    pd.DataFrame({"y_true": (frame["y_true"] == "dog").astype(int),
                  **{m: frame[f"{m}:dog"] for m in MODELS},
                  "region": frame["region"]}).to_csv(by_hand, index=False)
    answers = []
    for path, extra in ((multi, ["--target-class", "dog"]), (by_hand, [])):
        code, out, err = push(capsys, path, "--server", server, "--p-pos", 0.2, "--cost-fn", 5,
                              "--segment-column", "region", *extra)
        assert code == 0, err
        link = out.splitlines()[0]
        answers.append(saved(server, link))
        # the read link's Segments page is there
        with urllib.request.urlopen(f"{link}/segments", timeout=30) as page:
            assert page.status == 200
    got, want = answers
    assert (got["dataset"].pop("source"), want["dataset"].pop("source")) == \
        ("proba.csv", "binary.csv")
    for key in set(want) - {"analysis"}:
        assert got[key] == want[key], key


@pytest.mark.slow
def test_push_without_target_class_names_the_classes(server, capsys, tmp_path):  # noqa: F811
    multi = tmp_path / "proba.csv"
    multiclass_frame(n=250).to_csv(multi, index=False)
    code, _, err = push(capsys, multi, "--server", server)
    assert code == 2 and "--target-class" in err and "cat" in err
