"""``costdash analyze --json`` after issue 23: thinned point lists by default (``--all-points``
for every point), the threshold-choice section computed in forked processes on large inputs,
and the rate-driven quadrature in chunks -- each with the same numbers as before (the uniform
rate-driven loss, now a closed form, to rounding)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import costdash.choice_curves as cc
import costdash.cli.analyze as cli_analyze
from costdash.analysis import analysis_to_dict, analyze
from costdash.cli import main
from costdash.io import load_predictions
from costdash.roc import roc_curve

POINT_LISTS = {"pc", "cost"}


@pytest.fixture
def big_csv(tmp_path):
    """3 classifiers x 3,000 rows of probabilities with 6 decimals: about 3,000 ROC points each,
    more than the default 1,000 kept."""
    rng = np.random.default_rng(7)
    n = 3000
    y = rng.random(n) < 0.2
    cols = {"y_true": y.astype(int)}
    for k in range(3):
        z = rng.normal(size=n) + y * (0.5 + k) - 1.0
        cols[f"m{k}"] = np.round(1.0 / (1.0 + np.exp(-z)), 6)
    path = tmp_path / "big.csv"
    pd.DataFrame(cols).to_csv(path, index=False)
    return path


def run_json(capsys, *argv) -> dict:
    assert main(["analyze", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _is_subsequence(part: list, whole: list) -> bool:
    it = iter(whole)
    return all(any(p == w or (p is None and w is None) for w in it) for p in part)


def test_default_thins_every_curve_and_keeps_every_number(capsys, big_csv):
    full = run_json(capsys, big_csv, "--all-points")
    thin = run_json(capsys, big_csv)
    assert set(thin) == set(full)
    for key in ("dataset", "hull", "envelope", "operating_point"):
        assert thin[key] == full[key]
    for cf, ct in zip(full["classifiers"], thin["classifiers"]):
        assert set(ct) == set(cf)
        assert len(cf["roc"]["fpr"]) > cli_analyze.DEFAULT_MAX_POINTS  # thinning was needed
        assert len(ct["roc"]["fpr"]) == cli_analyze.DEFAULT_MAX_POINTS
        for axis in ("fpr", "tpr", "threshold"):
            assert ct["roc"][axis][0] == cf["roc"][axis][0]
            assert ct["roc"][axis][-1] == cf["roc"][axis][-1]
        kept = list(zip(ct["roc"]["fpr"], ct["roc"]["tpr"], ct["roc"]["threshold"]))
        assert _is_subsequence(kept, list(zip(cf["roc"]["fpr"], cf["roc"]["tpr"],
                                              cf["roc"]["threshold"])))
        for key in set(cf) - {"roc", "threshold_choice"}:
            assert ct[key] == cf[key], key
        for method, curve in cf["threshold_choice"].items():
            if curve is None:
                assert ct["threshold_choice"][method] is None
                continue
            t = ct["threshold_choice"][method]
            assert {k: v for k, v in t.items() if k not in POINT_LISTS} == \
                {k: v for k, v in curve.items() if k not in POINT_LISTS}
            assert len(t["pc"]) <= cli_analyze.DEFAULT_MAX_POINTS
            assert (t["pc"][0], t["pc"][-1]) == (curve["pc"][0], curve["pc"][-1])
        assert len(cf["threshold_choice"]["rate_driven"]["pc"]) > cli_analyze.DEFAULT_MAX_POINTS


def test_all_points_is_the_analysis_as_it_was(capsys, big_csv):
    """--all-points writes what analysis_to_dict gives with every point (the contract's
    numbers: no thinning, no rounding)."""
    out = run_json(capsys, big_csv, "--all-points", "--no-threshold-choice")
    ds = load_predictions(big_csv)
    assert out == json.loads(json.dumps(analysis_to_dict(analyze(ds))))
    for c, summary in zip(out["classifiers"], analyze(ds).classifiers):
        assert len(c["roc"]["fpr"]) == summary.roc.size
        assert c["roc"]["threshold"][1:] == summary.roc.threshold[1:].tolist()


def test_max_points_and_all_points_exclude_each_other(capsys, big_csv):
    with pytest.raises(SystemExit):
        main(["analyze", str(big_csv), "--json", "--all-points", "--max-points", "5"])
    assert "not allowed with" in capsys.readouterr().err
    assert main(["analyze", str(big_csv), "--json", "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err


def test_forked_processes_give_the_same_numbers(capsys, big_csv, monkeypatch):
    serial = run_json(capsys, big_csv, "--jobs", "1", "--all-points")
    monkeypatch.setattr(cli_analyze, "PARALLEL_MIN_SCORES", 0)  # fork at this size too
    groups = cli_analyze._groups(load_predictions(big_csv), 2)
    # 3,000 scores each: two groups, of two and one, each in the file's order
    assert sorted(len(g) for g in groups) == [1, 2]
    assert sorted(sum(groups, [])) == ["m0", "m1", "m2"] and all(g == sorted(g) for g in groups)
    forked = run_json(capsys, big_csv, "--jobs", "2", "--all-points")
    assert forked == serial
    # Their order is the file's, whichever process computed them.
    assert [c["name"] for c in forked["classifiers"]] == ["m0", "m1", "m2"]


def test_an_error_in_a_forked_process_reaches_the_user(capsys, big_csv, monkeypatch):
    monkeypatch.setattr(cli_analyze, "PARALLEL_MIN_SCORES", 0)
    assert main(["analyze", str(big_csv), "--json", "--jobs", "3",
                 "--h-beta", "-1", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("costdash: error:") and "Traceback" not in err


def _unchunked_rate_driven(roc, beta):
    """The rate-driven curve's losses as computed before issue 23: every node at once, every
    rate interpolated."""
    a, b = beta
    pi = roc.n_pos / (roc.n_pos + roc.n_neg)
    n = roc.n_pos + roc.n_neg
    rates = (roc.tp.astype(np.float64) + roc.fp) / n
    r0, r1 = rates[:-1], rates[1:]

    def q(r):
        f, t = np.interp(r, rates, roc.fpr), np.interp(r, rates, roc.tpr)
        return 2.0 * ((1.0 - r) * (1.0 - pi) * f + r * pi * (1.0 - t))

    cp_loss = float(np.sum((r1 - r0) / 6.0 * (q(r0) + 4.0 * q((r0 + r1) / 2.0) + q(r1))))
    breaks = pi * rates / (pi * rates + (1.0 - pi) * (1.0 - rates))
    pc = np.union1d(np.clip(breaks, 0.0, 1.0), np.linspace(0.0, 1.0, 201))
    lo, hi = pc[:-1], pc[1:]
    half = (hi - lo)[:, None] / 2.0
    nodes = (lo + hi)[:, None] / 2.0 + half * cc._GAUSS_X[None, :]
    log_density = ((a - 1.0) * np.log(nodes) + (b - 1.0) * np.log1p(-nodes) - cc.betaln(a, b))
    values = cc._rate_cost(roc, nodes) * np.exp(log_density)
    pieces = np.sum(values * cc._GAUSS_W[None, :], axis=1) * half[:, 0]
    for k, singular in ((0, a < 1.0), (pieces.size - 1, b < 1.0)):
        if singular:
            pieces[k] = cc._singular_end_piece(roc, float(lo[k]), float(hi[k]), a, b)
    return pc, float(np.sum(pieces)), cp_loss


def _twelve_thousand_points():
    rng = np.random.default_rng(3)
    n = 12_000  # about 12,000 breakpoints: three chunks of 4,096 intervals
    y = rng.random(n) < 0.1
    return roc_curve(y, np.round(rng.random(n) * 0.6 + 0.4 * y, 7))


@pytest.mark.parametrize("beta", [(2.0, 5.0), (0.5, 0.7)])
def test_chunked_rate_driven_quadrature_is_bit_for_bit_the_same(beta):
    roc = _twelve_thousand_points()
    pc, expected, cp_loss = _unchunked_rate_driven(roc, beta)
    curve = cc.rate_driven_curve(roc, beta=beta)
    assert pc.size - 1 > 2 * cc._RATE_CHUNK
    np.testing.assert_array_equal(curve.pc, pc)  # (merged, not sorted, since: the same points)
    assert curve.expected_loss == expected  # exactly: the same operations on the same numbers
    assert curve.cost_proportion_loss == cp_loss
    assert math.isfinite(expected)


def test_uniform_rate_driven_closed_form_against_the_quadrature_it_replaced():
    """PC(+) uniform: the closed form (tests/test_rate_driven_closed_form.py checks it against
    80 digits) and the Gauss-Legendre quadrature of before agree to rounding."""
    roc = _twelve_thousand_points()
    pc, expected, cp_loss = _unchunked_rate_driven(roc, (1.0, 1.0))
    curve = cc.rate_driven_curve(roc)
    np.testing.assert_array_equal(curve.pc, pc)
    assert curve.expected_loss == pytest.approx(expected, rel=2e-15, abs=0)
    assert curve.cost_proportion_loss == cp_loss


def test_the_readable_output_still_has_the_losses(capsys, big_csv):
    assert main(["analyze", str(big_csv), "--threshold-choice"]) == 0
    out = capsys.readouterr().out
    full = analyze(load_predictions(big_csv))
    from costdash.choice_summary import classifier_choices

    choice = classifier_choices(full)[0].choice
    assert f"{choice.rate_driven.expected_loss:.4f}" in out


def test_python_dash_m_costdash_analyze_prints_the_same_json(big_csv, capsys):
    """The installed entry point (a fresh process, forks allowed) and main() agree."""
    proc = subprocess.run([sys.executable, "-m", "costdash", "analyze", str(big_csv), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == run_json(capsys, big_csv)


def test_threshold_lists_are_written_as_before():
    """analysis_to_dict's vectorised list of thresholds: None exactly where the per-number
    conversion it replaced gave None (NaN, infinities), the floats themselves elsewhere."""
    from costdash.analysis import _num, _nums

    values = np.array([np.nan, np.inf, 0.7, -np.inf, 1e-300, -0.0, 0.1 + 0.2, 5e-324])
    assert _nums(values) == [_num(v) for v in values.tolist()]
    assert [type(v) for v in _nums(values)] == [type(_num(v)) for v in values.tolist()]
