"""Where an approximate band shows its level (costdash.bands.regime): the table in code against
the shipped study's raw results, the reading rules on a hand-made table, and what a band, the
CLI and the page say with and without a level."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import costdash.bands.regime as regime
from costdash.bands import cost_band
from costdash.cli import main

ROOT = Path(__file__).resolve().parents[1]
STUDY_CSV = ROOT / "studies" / "double_bootstrap_coverage.csv"


@pytest.fixture(scope="module")
def study():
    path = ROOT / "studies" / "double_bootstrap_coverage.py"
    spec = importlib.util.spec_from_file_location("double_bootstrap_coverage_study", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def scores(n_pos: int, n_neg: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.zeros(n_pos + n_neg, dtype=bool)
    y[:n_pos] = True
    s = rng.standard_normal(y.size)
    s[:n_pos] += 1.5
    return y, s


def double(y, s, **options):
    return cost_band((y, s), method="double-bootstrap", replicates=200,
                     inner_replicates=options.pop("inner_replicates", 10), rng=1, **options)


# --- the table in code is the study's -------------------------------------------------------------

def test_the_earned_table_is_the_shipped_studys(study) -> None:
    rows = study.read_csv(str(STUDY_CSV))
    # The raw tallies are self-consistent: coverage and its Monte Carlo SE from the counts.
    for r in rows:
        assert r["covered"] + r["truth_above"] + r["truth_below"] == r["sets"]
        p = r["covered"] / r["sets"]
        assert r["coverage"] == pytest.approx(p, abs=5e-5)
        assert r["mc_se"] == pytest.approx(np.sqrt(p * (1 - p) / r["sets"]), abs=5e-5)
        assert (r["replicates"], r["inner_replicates"]) == (200, 100)
    designs = {(r["minority"], r["majority"]) for r in rows}
    assert designs == {(m, k * m) for m in regime.STUDY_COUNTS for k in study.RATIOS}
    assert {r["level"] for r in rows} == set(regime.STUDY_LEVELS)
    assert sorted({round(r["pc"], 2) for r in rows}) == list(regime.STUDY_PC)
    assert study.earned_table(rows) == regime.DOUBLE_BOOTSTRAP_COVERAGE
    # ... and the table's cell is the worse of the two majority sizes, by hand for one cell.
    cells = [r["coverage"] for r in rows
             if r["minority"] == 10 and r["level"] == 0.9 and abs(r["pc"] - 0.9) < 1e-9]
    assert len(cells) == 2
    worse = max(cells, key=lambda c: abs(c - 0.9))
    assert regime.DOUBLE_BOOTSTRAP_COVERAGE[0.9][10][regime.STUDY_PC.index(0.9)] == \
        pytest.approx(worse, abs=5e-4)


def test_level_regime_reads_the_table_at_the_bands_counts_and_pc() -> None:
    """Every grid PC(+) of a band judged by the table cells around it, at the count tier."""
    table = regime.DOUBLE_BOOTSTRAP_COVERAGE[0.9]
    pc = np.array(regime.STUDY_PC)
    for m in regime.STUDY_COUNTS:
        r = regime.level_regime("double-bootstrap", m, 19 * m, pc, 0.9)
        earned = np.abs(np.array(table[m]) - 0.9) <= regime.TOLERANCE + 1e-9
        np.testing.assert_array_equal(r.coverage, table[m])
        # The level is claimed on the longest earned run, never where the study did not earn it.
        assert not np.any(r.holds & ~earned)
        if earned.any():
            assert r.holds.sum() == max(len(run) for run in
                                        "".join("1" if e else "0" for e in earned).split("0"))


# --- the reading rules, on a hand-made table --------------------------------------------------------

def fake_table() -> dict[float, dict[int, tuple[float, ...]]]:
    """Coverage 0.9 at PC(+) 0.3-0.6 and 0.5 elsewhere for 10 positives; 0.88 everywhere but
    0.95 (0.80) for 100; every count at 0.8 and 0.95 earns its level on 0.2-0.7."""
    pcs = np.array(regime.STUDY_PC)
    mid = (pcs >= 0.3 - 1e-9) & (pcs <= 0.6 + 1e-9)
    wide = (pcs >= 0.2 - 1e-9) & (pcs <= 0.7 + 1e-9)
    out: dict[float, dict[int, tuple[float, ...]]] = {}
    for level in regime.STUDY_LEVELS:
        out[level] = {}
        for m in regime.STUDY_COUNTS:
            if level != 0.9:
                values = np.where(wide, level, level - 0.2)
            elif m < 100:
                values = np.where(mid, 0.9, 0.5)
            else:
                values = np.where(pcs > 0.9, 0.80, 0.88)
            out[level][m] = tuple(float(v) for v in values)
    return out


@pytest.fixture
def fake(monkeypatch):
    table = fake_table()
    monkeypatch.setitem(regime.APPROXIMATE_METHODS, "double-bootstrap", table)
    return table


def test_rules_count_tier_pc_between_and_outside(fake) -> None:
    grid = np.array([0.0, 0.04, 0.3, 0.32, 0.6, 0.61, 0.95, 0.97, 1.0])
    # 99 positives: the row of 50 (the largest studied count not above it).
    r = regime.level_regime("double-bootstrap", 99, 900, grid, 0.9)
    # 0.3 and 0.6 are studied and earned; 0.32 lies between 0.30 and 0.35 (both earned);
    # 0.61 between 0.60 (earned) and 0.65 (not); outside 0.05-0.95 nothing was studied.
    np.testing.assert_array_equal(r.holds, [0, 0, 1, 1, 1, 0, 0, 0, 0])
    assert r.reason == ("no level outside PC(+) 0.3–0.6: with 99 positives the study measured "
                        "coverage 0.50 at PC(+) 0.61 for 50 positives, more than 0.04 from "
                        "the nominal 90%")
    # 100 positives: its own row, earned from 0.05 to 0.90, and 0.95 is 0.10 off.
    r = regime.level_regime("double-bootstrap", 100, 100, grid, 0.9)
    np.testing.assert_array_equal(r.holds, [0, 0, 1, 1, 1, 1, 0, 0, 0])
    assert "coverage 0.80 at PC(+) 0.95," in r.reason and "for 100" not in r.reason
    # Fewer than 10 of the smaller class: never studied, never a level.
    r = regime.level_regime("double-bootstrap", 9, 5000, grid, 0.9)
    assert not r.holds.any() and "fewer than the smallest studied count of 10" in r.reason
    # Not an approximate method: no regime at all.
    assert regime.level_regime("wilson-mover", 3, 5, grid, 0.9) is None


def test_rules_mirror_when_the_negatives_are_fewer(fake) -> None:
    grid = np.linspace(0.0, 1.0, 21)
    pos = regime.level_regime("double-bootstrap", 20, 400, grid, 0.9)
    neg = regime.level_regime("double-bootstrap", 400, 20, grid, 0.9)
    np.testing.assert_array_equal(neg.holds, pos.holds[::-1])
    np.testing.assert_array_equal(neg.coverage, pos.coverage[::-1])
    assert "with 20 negatives" in neg.reason


def test_rules_levels_between_studied_ones_need_both(fake) -> None:
    grid = np.array([0.25, 0.5, 0.65])
    # 0.85 lies between 0.8 (earned on 0.2-0.7) and 0.9 (earned on 0.3-0.6 for 10 positives).
    r = regime.level_regime("double-bootstrap", 10, 10, grid, 0.85)
    np.testing.assert_array_equal(r.holds, [0, 1, 0])
    assert "more than 0.04 from the nominal 90%" in r.reason
    r = regime.level_regime("double-bootstrap", 10, 10, grid, 0.8)
    assert r.holds.all() and r.reason == ""
    r = regime.level_regime("double-bootstrap", 10, 10, grid, 0.99)
    assert not r.holds.any()
    assert r.reason == ("no level: the double bootstrap was measured at levels 80%, 90% and "
                        "95% only, not at 99%")


def test_band_fields_follow_the_regime_and_at_level(fake) -> None:
    y, s = scores(12, 188)
    band = double(y, s, grid=21)
    assert band.calibrated and band.level_range == pytest.approx((0.3, 0.6))
    assert band.label == ("90% double-bootstrap calibrated (approximate) band (pointwise) for "
                          "PC(+) 0.3–0.6 only (a spread without a level elsewhere)")
    assert band.level_at(0.45) and not band.level_at(0.9)
    assert band.no_level.startswith("no level outside PC(+) 0.3–0.6: with 12 positives")
    none = band.at_level(0.99)
    assert not none.calibrated and none.level_range is None and "%" not in none.label.split(";")[0]
    assert none.label.endswith("not at 99%)")
    # Back at a studied level the level returns: at_level never resamples.
    again = none.at_level(0.9)
    assert again.calibrated and again.label == band.label
    np.testing.assert_array_equal(again.low, band.low)


# --- the shipped regime: no level where the study did not earn it ---------------------------------

def test_ten_positives_at_pc_09_have_no_level_and_say_why() -> None:
    y, s = scores(10, 190)
    band = double(y, s, grid=[0.9])
    measured = regime.DOUBLE_BOOTSTRAP_COVERAGE[0.9][10][regime.STUDY_PC.index(0.9)]
    assert abs(measured - 0.9) > regime.TOLERANCE          # what the study found there
    assert not band.calibrated and band.level_range is None
    assert "%" not in band.label.split("no level")[0] and "90% " not in band.label
    assert band.no_level == (f"no level: with 10 positives the study measured coverage "
                             f"{measured:.2f} at PC(+) 0.9, more than 0.04 from the nominal 90%")
    assert band.no_level in band.label
    # The whole curve of such a band, too: a spread whose label says why.
    whole = double(y, s, grid=21)
    assert whole.label.startswith("double-bootstrap spread of the re-tuned envelope (200 × 10 "
                                  "replicates; no level")


# --- every surface that labels a band reads the same regime -----------------------------------------

def test_cli_band_json_and_text_say_where_the_level_holds(tmp_path, capsys) -> None:
    y, s = scores(10, 190)
    path = tmp_path / "few.csv"
    path.write_text("y_true,model\n" + "".join(f"{int(t)},{v:.6f}\n" for t, v in zip(y, s)))
    args = ["band", str(path), "--method", "double-bootstrap", "--replicates", "200",
            "--seed", "1", "--grid", "21"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    band = cost_band((y, s), method="double-bootstrap", replicates=200, rng=1, grid=21)
    assert out["calibrated"] is band.calibrated
    assert out["level_range"] == (None if band.level_range is None else list(band.level_range))
    assert out["no_level"] == band.no_level and out["no_level"].startswith("no level")
    assert main(args) == 0
    text = capsys.readouterr().out
    assert band.label in text and "with 10 positives" in text


@pytest.mark.slow
def test_study_quick_mode_writes_what_the_table_is_read_from(study, tmp_path) -> None:
    csv_path = tmp_path / "quick.csv"
    result = study.main(["--quick", "--csv", str(csv_path), "--out", str(tmp_path / "t.md")])
    rows = study.read_csv(str(csv_path))
    assert len(rows) == 2 * 2 * len(regime.STUDY_LEVELS) * len(regime.STUDY_PC)
    assert rows == [{k: r[k] for k in study.FIELDS} for r in result["rows"]]
    table = study.earned_table(rows)
    assert set(table) == set(regime.STUDY_LEVELS) and set(table[0.9]) == {10, 25}
    assert all(len(v) == len(regime.STUDY_PC) for v in table[0.9].values())
    assert "Earned regime" in (tmp_path / "t.md").read_text()
    # A design's stream is its own: the same test sets whichever other designs ran.
    again = study.run_design(25, 19, 4, inner=10)
    assert again == [r for r in result["rows"] if (r["minority"], r["majority"]) == (25, 475)]
    # The tables print again from the saved CSV alone.
    assert study.main(["--from-csv", str(csv_path)])["text"].split("(command")[0] == \
        result["text"].split("(command")[0]


def test_page_and_figure_show_the_level_only_where_it_holds(fake) -> None:
    figures = pytest.importorskip("dashboard.figures.bands")
    confidence = pytest.importorskip("dashboard.pages.confidence")
    y, s = scores(12, 188)
    band = double(y, s, grid=21)                      # a level on PC(+) 0.3-0.6 (fake table)
    fig = figures.band_figure(band, name="m", index=0, pc=0.9)
    cost = next(t for t in fig.data if t.uid == "cost")
    names = [row[2] for row in cost.customdata]
    assert names == ["90% band" if band.level_at(x) else figures.NO_LEVEL_HERE for x in band.pc]
    assert "%{customdata[2]}" in cost.hovertemplate
    assert figures.band_name(band, 0.45) == "90% band"
    assert figures.band_name(band, 0.9) == figures.NO_LEVEL_HERE
    outside = str(confidence.band_summary(band, 0.9))
    assert "no level at this PC(+)" in outside and "90% band" not in outside
    assert "No level outside PC(+) 0.3–0.6: with 12 positives" in outside
    assert "90% band" in str(confidence.band_summary(band, 0.45))
    # Without any level (at 99%): the legend is the spread's label, which says why.
    none = band.at_level(0.99)
    assert figures.band_name(none, 0.45) == "resampling spread"
    high = next(t for t in figures.band_figure(none, name="m", index=0).data
                if t.uid == "band-high")
    assert "%" not in high.name.split(";")[0] and "not at 99%" in high.name.replace("<br>", " ")


def test_a_band_in_the_earned_regime_keeps_its_level() -> None:
    at = regime.STUDY_PC.index(0.5)
    measured = regime.DOUBLE_BOOTSTRAP_COVERAGE[0.9][50][at]
    assert abs(measured - 0.9) <= regime.TOLERANCE           # the study earned it there
    y, s = scores(50, 950)
    band = double(y, s, grid=[0.45, 0.5, 0.55])
    assert band.calibrated and band.level_holds.all() and band.no_level == ""
    assert band.label == "90% double-bootstrap calibrated (approximate) band (pointwise)"
    # Its whole curve: the level on the earned range only, and why not outside it.
    whole = double(y, s, grid=21)
    lo, hi = whole.level_range
    assert whole.calibrated and lo <= 0.5 <= hi and (lo, hi) != (0.0, 1.0)
    assert f"for PC(+) {lo:.3g}–{hi:.3g} only" in whole.label
    assert whole.no_level.startswith(f"no level outside PC(+) {lo:.3g}–{hi:.3g}: with 50 "
                                     "positives the study measured coverage")
