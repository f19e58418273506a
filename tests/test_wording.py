"""Counts in the command line's and the core's messages take the noun in the right number."""

from __future__ import annotations

import doctest

import costdash._wording
from costdash._wording import counted
from costdash.cli import main


def test_counted():
    assert doctest.testmod(costdash._wording).failed == 0
    assert [counted(n, "fold") for n in (0, 1, 2)] == ["0 folds", "1 fold", "2 folds"]
    assert counted(1234567, "row") == "1,234,567 rows"
    assert counted(1.0, "case", spec="g") == "1 case" and counted(0.5, "case", spec="g") == \
        "0.5 cases"
    assert counted(1, "analysis", "analyses") == "1 analysis"
    assert counted(2, "analysis", "analyses") == "2 analyses"


def test_one_fold_one_classifier_one_case_in_the_cli(tmp_path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("y_true,fold,m\n1,a,0.9\n0,a,0.2\n1,a,0.6\n0,a,0.4\n")
    assert main(["analyze", str(path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "one.csv: 4 examples, 2 positive ('1'), 2 negative, 1 fold"

    out = tmp_path / "counts.csv"
    assert main(["aggregate", str(path), "-o", str(out)]) == 0
    summary = capsys.readouterr().err
    assert summary.startswith(f"{out}: 4 rows from 4 predictions of 1 classifier (wide layout")

    assert main(["decide", str(path), "--p-pos", "0.5", "--cost-fn", "2", "--cost-fp", "1",
                 "--p-pos-range", "0.4", "0.6", "--volume", "1"]) == 0
    text = capsys.readouterr().out
    assert "per 1 case:" in text and "per 1 cases" not in text
    assert "(policy table, 1 choice in the box)" in text
