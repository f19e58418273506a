"""Coverage study: does every band of :mod:`costdash.bands` cover what it says it covers?

A simulated scoring classifier with a known ROC curve (binormal: negatives score N(0, 1),
positives N(d, 1), d = 1.5) is scored on many independent test sets. Designs: n = 100, 1,000 and
10,000 at prevalence 0.3 with the fixed threshold t0 = 0.75, and the *small-count* design
n = 200, prevalence 0.1 (20 positives) with t0 = d - 1.645, so that FNR = 0.05. For every test set
every method of issue 12 is run, and the table says how often its nominal 90 % band contains its
own estimand (the truth it is a band for):

* **fixed threshold** t0 (chosen beforehand): truth ``NE(x) = Phi(t0 - d) x + (1 - Phi(t0))(1 - x)``;
  Wilson-MOVER (pointwise; the default before issue 24, whose exact coverage scan,
  ``studies/fixed_threshold_coverage.py``, covers the Clopper-Pearson-MOVER default that replaced
  it), Clopper-Pearson rectangle (simultaneous: the whole line),
  percentile bootstrap (paper 000 §8, labelled uncalibrated);
* **selected thresholds** (``select="split"``): at each PC(+) the threshold is chosen on a stratified
  half; truth = the population cost of *that* threshold; Wilson-MOVER and the Bonferroni
  Clopper-Pearson rectangle;
* **whole envelope**: truth = the true optimal cost ``min_t NE_t(x)`` (at the likelihood-ratio
  threshold ``t*(x) = d/2 + log((1 - x)/x)/d``, checked against a 200,001-threshold grid); the
  percentile spread (uncalibrated), the basic interval (its reflection, for comparison) and the
  double-bootstrap calibrated basic band;
* **a nested pair**: a = the score, b = the same score thresholded at 0.75 (equal true cost at
  PC(+) = 0.5). How often is a difference "significant" at PC(+) = 0.5? For the envelope spread
  (what Compare used to call significant: the band excludes 0) and for the calibrated
  selected-threshold difference (Newcombe-MOVER, pointwise and simultaneous; the default before
  issue 24), whose coverage of
  its own truth (the population difference of the two selected thresholds) is tabulated too.

Random streams: one :class:`numpy.random.SeedSequence` per design, spawned into independent
streams for the simulated data, the split, and each bootstrap method, so changing B (or the
methods run) never changes the simulated test sets.

Run ``python studies/band_coverage.py [--quick] [--sets N] [--sets-large N] [--double-sets N]
[--replicates B] [--out FILE] [--json FILE] [--seed S]``; ``docs/bands.md`` gives the command and
the table of the published run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

try:
    from costdash.bands import cost_band, difference_band
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from costdash.bands import cost_band, difference_band

SEPARATION = 1.5
"""d: positives score N(d, 1), negatives N(0, 1) (AUC = Phi(d / sqrt 2) = 0.856)."""

PREVALENCE = 0.3
PC_VALUES = (0.1, 0.3, 0.5, 0.7, 0.9)
GRID = np.linspace(0.0, 1.0, 21)
"""The bands' grid: contains PC_VALUES; "whole curve" means all of these 21 values."""
LEVEL = 0.9
NESTED_THRESHOLD = 0.75
"""b of the nested pair is the score thresholded here (= t*(0.5): equal true cost at PC 0.5)."""

Z_95 = 1.6448536269514722


@dataclass(frozen=True)
class Design:
    name: str
    n: int
    prevalence: float
    threshold: float


DESIGNS = (Design("n=100", 100, PREVALENCE, 0.75), Design("n=1,000", 1000, PREVALENCE, 0.75),
           Design("n=10,000", 10_000, PREVALENCE, 0.75),
           Design("small counts (n=200, prev. 0.1, FNR 0.05)", 200, 0.1, SEPARATION - Z_95))


def _cdf(x: NDArray[np.float64] | float) -> NDArray[np.float64]:
    from scipy.special import ndtr
    return ndtr(np.asarray(x, dtype=np.float64))


def _line_at(t: NDArray[np.float64], x: NDArray[np.float64], d: float) -> NDArray[np.float64]:
    """(1 - TPR(t)) x + FPR(t) (1 - x) with TPR(t) = 1 - Phi(t - d), FPR(t) = 1 - Phi(t).

    ``t = +inf`` (flag nothing) gives ``x``, ``t = -inf`` (flag everything) ``1 - x``.
    """
    return _cdf(t - d) * x + _cdf(-t) * (1.0 - x)


def true_line(threshold: float | NDArray[np.float64], pc: NDArray[np.float64],
              d: float = SEPARATION) -> NDArray[np.float64]:
    """True normalized expected cost of predicting positive iff score >= threshold."""
    return _line_at(np.asarray(threshold, dtype=np.float64), np.asarray(pc, dtype=np.float64), d)


def true_optimal_cost(pc: NDArray[np.float64], d: float = SEPARATION) -> NDArray[np.float64]:
    """min over thresholds of the true cost line, at the likelihood-ratio threshold."""
    pc = np.asarray(pc, dtype=np.float64)
    out = np.minimum(pc, 1.0 - pc)  # the trivial classifiers (thresholds -inf and +inf)
    inner = (pc > 0) & (pc < 1)
    x = pc[inner]
    t_star = d / 2.0 + np.log((1.0 - x) / x) / d
    out[inner] = np.minimum(out[inner], _line_at(t_star, x, d))
    return out


def true_nested_b(threshold_b: NDArray[np.float64], pc: NDArray[np.float64],
                  d: float = SEPARATION) -> NDArray[np.float64]:
    """True cost of b (the score thresholded at 0.75, scores 0/1) at its own thresholds."""
    t = np.asarray(threshold_b, dtype=np.float64)
    at = np.where(t > 1.0, np.inf, np.where(t > 0.0, NESTED_THRESHOLD, -np.inf))
    return true_line(at, pc, d)


def _check_truth(d: float = SEPARATION) -> float:
    """Largest gap between the closed-form optimum and a 200,001-threshold grid search."""
    pc = np.asarray(PC_VALUES)
    thresholds = np.linspace(-12.0, 12.0 + d, 200_001)
    grid_min = np.min(_line_at(thresholds[:, None], pc[None, :], d), axis=0)
    grid_min = np.minimum(grid_min, np.minimum(pc, 1.0 - pc))
    return float(np.max(np.abs(grid_min - true_optimal_cost(pc, d))))


def simulate(n: int, rng: np.random.Generator, d: float = SEPARATION,
             prevalence: float = PREVALENCE) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """One test set with exactly round(prevalence * n) positives."""
    n_pos = max(1, min(n - 1, round(prevalence * n)))
    y = np.zeros(n, dtype=bool)
    y[:n_pos] = True
    score = rng.standard_normal(n)
    score[:n_pos] += d
    return y, score


# --------------------------------------------------------------------------------------------
# Tallies
# --------------------------------------------------------------------------------------------

_AT = np.array([int(np.argmin(np.abs(GRID - x))) for x in PC_VALUES])
_MID = int(np.argmin(np.abs(GRID - 0.5)))


@dataclass
class Tally:
    """Coverage counts of one method in one design."""

    method: str
    estimand: str
    calibrated: bool
    sets: int = 0
    hits: NDArray[np.float64] = field(default_factory=lambda: np.zeros(len(PC_VALUES)))
    above: NDArray[np.float64] = field(default_factory=lambda: np.zeros(len(PC_VALUES)))
    below: NDArray[np.float64] = field(default_factory=lambda: np.zeros(len(PC_VALUES)))
    width: NDArray[np.float64] = field(default_factory=lambda: np.zeros(len(PC_VALUES)))
    whole: int = 0
    seconds: float = 0.0
    significant: int = 0          # differences: significant at PC 0.5 (either side)
    a_better: int = 0             # ... with a (the score, re-tuned) significantly cheaper

    def add(self, low: NDArray[np.float64], high: NDArray[np.float64],
            truth: NDArray[np.float64], seconds: float) -> None:
        lo, hi, tr = low[_AT], high[_AT], truth[_AT]
        self.sets += 1
        self.hits += (lo <= tr) & (tr <= hi)
        self.above += tr > hi
        self.below += tr < lo
        self.width += hi - lo
        self.whole += int(np.all((low <= truth) & (truth <= high)))
        self.seconds += seconds
        self.significant += int(low[_MID] > 0 or high[_MID] < 0)
        self.a_better += int(high[_MID] < 0)

    def summary(self) -> dict[str, Any]:
        r = float(max(self.sets, 1))
        return {"method": self.method, "estimand": self.estimand, "calibrated": self.calibrated,
                "sets": self.sets, "coverage": (self.hits / r).tolist(),
                "truth_above": (self.above / r).tolist(), "truth_below": (self.below / r).tolist(),
                "mean_width": (self.width / r).tolist(), "whole_curve": self.whole / r,
                "significant_at_0.5": self.significant / r,
                "a_better_at_0.5": self.a_better / r,
                "ms_per_band": 1000.0 * self.seconds / r}


def _timed(f: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.process_time()
    out = f(*args, **kwargs)
    return out, time.process_time() - start


def run_design(design: Design, seq: np.random.SeedSequence, *, sets: int, replicates: int,
               double_sets: int, double_replicates: int, inner: int,
               d: float = SEPARATION) -> dict[str, Any]:
    """Every method on ``sets`` simulated test sets of one design (the double bootstrap on the
    first ``double_sets`` of them)."""
    data_seq, split_seq, boot_seq = seq.spawn(3)
    data = np.random.default_rng(data_seq)
    split = np.random.default_rng(split_seq)
    split_diff = np.random.default_rng(split_seq.spawn(1)[0])
    boot_line, boot_env, boot_double, boot_diff = (np.random.default_rng(s)
                                                   for s in boot_seq.spawn(4))
    pc = GRID
    t0 = design.threshold
    truth_line = true_line(t0, pc, d)
    truth_env = true_optimal_cost(pc, d)
    names = {
        "fixed-wilson": ("fixed t0: Wilson–MOVER (default before issue 24)", "cost line of t0",
                         True),
        "fixed-cp": ("fixed t0: Clopper–Pearson rectangle (simultaneous)", "cost line of t0",
                     True),
        "fixed-pct": (f"fixed t0: percentile bootstrap (B = {replicates})", "cost line of t0",
                      False),
        "sel-wilson": ("selected on a half: Wilson–MOVER (default before issue 24)",
                       "held-out cost of selected thresholds", True),
        "sel-cp": ("selected on a half: Clopper–Pearson rectangle (simultaneous)",
                   "held-out cost of selected thresholds", True),
        "env-pct": (f"envelope: percentile spread (B = {replicates})", "optimal cost", False),
        "env-basic": (f"envelope: basic interval (B = {replicates}), comparison only",
                      "optimal cost", False),
        "env-double": (f"envelope: double bootstrap ({double_replicates} x {inner})",
                       "optimal cost", True),
        "diff-env": (f"nested pair: envelope difference spread (B = {replicates})",
                     "none (old 'significant')", False),
        "diff-sel": ("nested pair: selected on a half, Newcombe–MOVER (default before issue 24)",
                     "held-out difference of selected thresholds", True),
        "diff-sel-sim": ("nested pair: selected on a half, Newcombe rectangle (simultaneous)",
                         "held-out difference of selected thresholds", True),
    }
    tallies = {k: Tally(*v) for k, v in names.items()}
    diff_truth_mid = 0.0
    for i in range(sets):
        y, s = simulate(design.n, data, d, design.prevalence)
        nested = np.where(s >= NESTED_THRESHOLD, 1.0, 0.0)
        band, sec = _timed(cost_band, (y, s), threshold=t0, grid=pc, level=LEVEL,
                           method="wilson-mover")
        tallies["fixed-wilson"].add(band.low, band.high, truth_line, sec)
        band, sec = _timed(cost_band, (y, s), threshold=t0, grid=pc, level=LEVEL,
                           simultaneous=True)
        tallies["fixed-cp"].add(band.low, band.high, truth_line, sec)
        band, sec = _timed(cost_band, (y, s), threshold=t0, grid=pc, level=LEVEL,
                           method="percentile", replicates=replicates,
                           rng=boot_line)
        tallies["fixed-pct"].add(band.low, band.high, truth_line, sec)
        # Selected thresholds: the same split for the pointwise and the simultaneous band.
        state = split.bit_generator.state
        band, sec = _timed(cost_band, (y, s), select="split", rng=split, grid=pc,
                           level=LEVEL, method="wilson-mover")
        truth_sel = true_line(band.thresholds, pc, d)
        tallies["sel-wilson"].add(band.low, band.high, truth_sel, sec)
        split.bit_generator.state = state
        band, sec = _timed(cost_band, (y, s), select="split", rng=split, grid=pc,
                           level=LEVEL, simultaneous=True)
        tallies["sel-cp"].add(band.low, band.high, truth_sel, sec)
        band, sec = _timed(cost_band, (y, s), grid=pc, level=LEVEL,
                           replicates=replicates, rng=boot_env)
        tallies["env-pct"].add(band.low, band.high, truth_env, sec)
        tallies["env-basic"].add(2 * band.cost - band.high, 2 * band.cost - band.low, truth_env,
                                 sec)
        if i < double_sets:
            band, sec = _timed(cost_band, (y, s), grid=pc, level=LEVEL,
                               method="double-bootstrap",
                               replicates=double_replicates,
                               inner_replicates=inner, rng=boot_double)
            tallies["env-double"].add(band.low, band.high, truth_env, sec)
        # The nested pair.
        diff, sec = _timed(difference_band, (y, s), (y, nested), grid=pc, level=LEVEL,
                           replicates=replicates, rng=boot_diff)
        tallies["diff-env"].add(diff.low, diff.high, np.zeros(pc.size), sec)
        state = split_diff.bit_generator.state
        diff, sec = _timed(difference_band, (y, s), (y, nested), select="split",
                           rng=split_diff, grid=pc, level=LEVEL, method="newcombe-mover")
        truth_diff = (true_line(diff.thresholds[0], pc, d)
                      - true_nested_b(diff.thresholds[1], pc, d))
        diff_truth_mid += truth_diff[_MID]
        tallies["diff-sel"].add(diff.low, diff.high, truth_diff, sec)
        split_diff.bit_generator.state = state
        diff, sec = _timed(difference_band, (y, s), (y, nested), select="split",
                           rng=split_diff, grid=pc, level=LEVEL, method="newcombe-mover",
                           simultaneous=True)
        tallies["diff-sel-sim"].add(diff.low, diff.high, truth_diff, sec)
    return {"design": design.name, "n": design.n, "prevalence": design.prevalence,
            "threshold": t0, "sets": sets, "double_sets": min(double_sets, sets),
            "replicates": replicates, "double": [double_replicates, inner],
            "mean_true_difference_at_0.5": diff_truth_mid / max(sets, 1),
            "methods": {k: t.summary() for k, t in tallies.items()}}


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

_BAND_KEYS = ("fixed-wilson", "fixed-cp", "fixed-pct", "sel-wilson", "sel-cp", "env-pct",
              "env-basic", "env-double")
_DIFF_KEYS = ("diff-env", "diff-sel", "diff-sel-sim")


def format_tables(results: list[dict[str, Any]]) -> str:
    pcs = " | ".join(f"PC={x:g}" for x in PC_VALUES)
    intro = (f"Nominal {LEVEL:.0%}; binormal d = {SEPARATION:g}. Coverage of each band's own "
             "estimand at PC(+) = 0.1 ... 0.9 (pointwise), its mean, the share of test sets "
             "whose band contains the truth at all 21 grid PC(+) values at once (whole curve), "
             "mean width over the five PC(+) values, and CPU time per band.")
    head = (f"| design | sets | method | estimand | calibrated | {pcs} | mean | whole curve | "
            "width | ms/band |")
    lines = [intro, "", head, "|" + "---|" * (len(PC_VALUES) + 9)]
    for r in results:
        for key in _BAND_KEYS:
            m = r["methods"][key]
            if m["sets"] == 0:
                continue
            cov = m["coverage"]
            lines.append(
                f"| {r['design']} | {m['sets']} | {m['method']} | {m['estimand']} | "
                f"{'yes' if m['calibrated'] else 'no'} | "
                + " | ".join(f"{c:.3f}" for c in cov)
                + f" | {np.mean(cov):.3f} | {m['whole_curve']:.3f} | "
                f"{np.mean(m['mean_width']):.4f} | {m['ms_per_band']:.1f} |")
    intro = ("Nested pair (a = score, b = score >= 0.75; equal true optimal cost at "
             "PC(+) = 0.5): share of test sets declared significantly different at PC(+) = 0.5 "
             "(either side, and with a cheaper), and coverage of the difference's own truth. For "
             "the envelope spread 'significant' means the band excludes 0 (what Compare showed "
             "before; costdash no longer reports it); its truth column is against 0.")
    head = (f"| design | sets | method | significant at 0.5 | of which a better | {pcs} | "
            "whole curve | ms/band |")
    lines += ["", intro, "", head, "|" + "---|" * (len(PC_VALUES) + 6)]
    for r in results:
        for key in _DIFF_KEYS:
            m = r["methods"][key]
            lines.append(f"| {r['design']} | {m['sets']} | {m['method']} | "
                         f"{m['significant_at_0.5']:.3f} | {m['a_better_at_0.5']:.3f} | "
                         + " | ".join(f"{c:.3f}" for c in m["coverage"])
                         + f" | {m['whole_curve']:.3f} | {m['ms_per_band']:.1f} |")
    lines += ["", "Mean true difference at PC(+) = 0.5 of the selected pair (a's selected threshold "
              "costs a little more than b's at 0.75, the optimum): "
              + ", ".join(f"{r['design']}: {r['mean_true_difference_at_0.5']:+.4f}"
                          for r in results)]
    intro = ("Envelope misses (percentile spread): share of test sets with the truth above "
             "/ below the band.")
    lines += ["", intro, "", f"| design | {pcs} |", "|" + "---|" * (len(PC_VALUES) + 1)]
    for r in results:
        m = r["methods"]["env-pct"]
        lines.append(f"| {r['design']} | " + " | ".join(
            f"{a:.3f}/{b:.3f}" for a, b in zip(m["truth_above"], m["truth_below"])) + " |")
    return "\n".join(lines)


def acceptance(results: list[dict[str, Any]]) -> list[tuple[str, bool, str]]:
    """The "done when" checks of issue 12, on the designs that were run."""
    by = {r["design"]: r["methods"] for r in results}
    out: list[tuple[str, bool, str]] = []

    def cov(design: str, key: str) -> list[float]:
        return by[design][key]["coverage"]

    if "n=1,000" in by:
        c = cov("n=1,000", "fixed-wilson")
        out.append(("fixed Wilson-MOVER within [0.86, 0.94] at n = 1,000",
                    all(0.86 <= v <= 0.94 for v in c), " ".join(f"{v:.3f}" for v in c)))
    small = DESIGNS[3].name
    if small in by:
        c = cov(small, "fixed-wilson")
        out.append(("fixed Wilson-MOVER within [0.86, 0.96], small counts",
                    all(0.86 <= v <= 0.96 for v in c), " ".join(f"{v:.3f}" for v in c)))
    for name in ("n=100", "n=1,000", "n=10,000"):
        if name in by:
            c = cov(name, "sel-wilson")
            out.append((f"selected Wilson-MOVER within [0.86, 0.95] at {name}",
                        all(0.86 <= v <= 0.95 for v in c), " ".join(f"{v:.3f}" for v in c)))
    for name, m in by.items():
        for key in ("fixed-cp", "sel-cp"):
            w = m[key]["whole_curve"]
            out.append((f"simultaneous {key} whole curve >= 0.88 at {name}", w >= 0.88,
                        f"{w:.3f}"))
        s = m["diff-sel"]["significant_at_0.5"]
        out.append((f"nested pair significant at 0.5 <= 0.14 at {name} (selected, Newcombe)",
                    s <= 0.14, f"{s:.3f}"))
    for name in ("n=1,000", "n=10,000"):
        if name in by and by[name]["env-double"]["sets"]:
            v = float(np.mean(cov(name, "env-double")))
            label = ("whole envelope with a level (double bootstrap) mean within "
                     f"[0.86, 0.94] at {name}")
            out.append((label, 0.86 <= v <= 0.94, f"{v:.3f}"))
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small run (a few seconds) for tests and smoke checks")
    parser.add_argument("--sets", type=int, default=400,
                        help="test sets per design (default 400)")
    parser.add_argument("--sets-large", type=int, default=None,
                        help="test sets for n = 10,000 (default: --sets)")
    parser.add_argument("--double-sets", type=int, default=None,
                        help="test sets that also run the double bootstrap (default: all; "
                             "capped by --double-sets-large for n = 10,000)")
    parser.add_argument("--double-sets-large", type=int, default=None,
                        help="double-bootstrap test sets for n = 10,000 (default: as the others)")
    parser.add_argument("--replicates", type=int, default=1000,
                        help="B of the percentile methods (default 1000)")
    parser.add_argument("--double", type=int, nargs=2, default=(200, 100), metavar=("B1", "B2"),
                        help="outer and inner replicates of the double bootstrap (200 100)")
    parser.add_argument("--designs", default=None,
                        help="comma-separated design numbers 0-3 (default: all)")
    parser.add_argument("--out", help="also write the markdown tables to this file")
    parser.add_argument("--json", help="also write the raw results as JSON to this file")
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args(argv)
    if args.quick:
        args.sets, args.sets_large, args.replicates = 30, 10, 200
        args.double_sets, args.double_sets_large, args.double = 4, 0, (200, 20)
        chosen = [0, 1, 3]
    else:
        chosen = (list(range(len(DESIGNS))) if args.designs is None
                  else [int(v) for v in args.designs.split(",")])
    start = time.perf_counter()
    cpu = time.process_time()
    gap = _check_truth()
    # One SeedSequence per design, whatever subset is run: a design's test sets never depend on
    # the other designs, on B, or on which methods ran.
    seqs = np.random.SeedSequence(args.seed).spawn(len(DESIGNS))
    results = []
    for i in chosen:
        design = DESIGNS[i]
        large = design.n >= 10_000
        sets = args.sets_large if large and args.sets_large is not None else args.sets
        double_sets = args.double_sets if args.double_sets is not None else sets
        if large and args.double_sets_large is not None:
            double_sets = args.double_sets_large
        t = time.perf_counter()
        results.append(run_design(design, seqs[i], sets=sets, replicates=args.replicates,
                                  double_sets=double_sets, double_replicates=args.double[0],
                                  inner=args.double[1]))
        print(f"[{design.name}: {sets} test sets, {time.perf_counter() - t:.0f} s]",
              file=sys.stderr)
    text = format_tables(results)
    checks = acceptance(results)
    runtime = time.perf_counter() - start
    cpu_time = time.process_time() - cpu
    command = "python studies/band_coverage.py " + " ".join(
        argv if argv is not None else sys.argv[1:])
    text += "\n\nAcceptance checks of issue 12:\n\n" + "\n".join(
        f"- [{'x' if ok else ' '}] {label}: {value}" for label, ok, value in checks)
    text += (f"\n\n(command: `{command.strip()}`; seed {args.seed}; closed-form optimum vs "
             f"threshold grid: max gap {gap:.1e}; wall {runtime:.0f} s, CPU {cpu_time:.0f} s)")
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    payload = {"results": results, "truth_gap": gap, "runtime": runtime, "cpu": cpu_time,
               "text": text, "checks": checks}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({k: v for k, v in payload.items() if k != "text"}, fh, indent=1)
    return payload


if __name__ == "__main__":
    main()
