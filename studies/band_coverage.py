"""Coverage study: do the bootstrap cost-curve bands of :mod:`costdash.bands` contain the truth?

A simulated scoring classifier with a known ROC curve (binormal: negatives score N(0, 1),
positives N(d, 1)) is scored on many independent test sets of ``n`` examples with a fixed
prevalence. For every test set we build

* the **fixed-threshold band** (``cost_band(..., threshold=t0)``, one confusion matrix with binomial
  rows), whose truth is that threshold's true cost line
  ``NE(x) = Phi(t0 - d) x + (1 - Phi(t0)) (1 - x)``;
* the **envelope band** (``cost_band(...)``, the lower envelope re-optimised in every replicate),
  whose truth is the true optimal cost ``min_t NE_t(x)``, attained at the likelihood-ratio threshold
  ``t*(x) = d / 2 + log((1 - x) / x) / d`` (checked against a fine threshold grid),

and count, at several PC(+) values, how often the nominal 90% pointwise band contains the truth.
Misses are split into "truth above the band" and "truth below the band".

Outcome (full run, see ``docs/bands.md``), and why: the fixed-threshold band covers at its nominal
level (its replicates are unbiased binomial draws around the observed point). The envelope band
**under-covers** (about 0.50 at n = 100, 0.70 at n = 1000, 0.81 at n = 10,000 for a nominal 0.90),
and its misses are almost all "truth above the band": the empirical envelope is a minimum over
thresholds chosen on the test set itself, so it is biased low (optimistic) as an estimate of the
true optimal cost, and every bootstrap replicate re-optimises its thresholds on its own resample,
so the replicate envelopes scatter around (and a little below) the already optimistic empirical
envelope instead of around the truth. The percentile band does not correct that bias; it shrinks
with n, but so does the band. The miss rate is worst near PC(+) = 0.1 and 0.9, where the optimum
sits in a tail of one class's scores that a few examples decide. The "basic" bootstrap interval
(the percentile interval reflected about the estimate) is tabulated for comparison: it corrects
part of the bias.

Run ``python studies/band_coverage.py [--quick] [--out FILE] [--seed S]``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

try:
    from costdash.bands import cost_band
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from costdash.bands import cost_band

SEPARATION = 1.5
"""d: positives score N(d, 1), negatives N(0, 1) (AUC = Phi(d / sqrt 2) = 0.856)."""

PREVALENCE = 0.3
PC_VALUES = (0.1, 0.3, 0.5, 0.7, 0.9)
LEVEL = 0.9

def _cdf(x: NDArray[np.float64] | float) -> NDArray[np.float64]:
    from scipy.special import ndtr
    return ndtr(np.asarray(x, dtype=np.float64))


def true_line(threshold: float, pc: NDArray[np.float64], d: float = SEPARATION) -> NDArray[np.float64]:
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


def _line_at(t: NDArray[np.float64], x: NDArray[np.float64], d: float) -> NDArray[np.float64]:
    """(1 - TPR(t)) x + FPR(t) (1 - x) with TPR(t) = 1 - Phi(t - d), FPR(t) = 1 - Phi(t)."""
    return _cdf(t - d) * x + _cdf(-t) * (1.0 - x)


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


def coverage(n: int, test_sets: int, replicates: int, seed: int, *, d: float = SEPARATION,
             threshold: float | None = None) -> dict[str, Any]:
    """Pointwise coverage of both bands at :data:`PC_VALUES` over ``test_sets`` test sets."""
    rng = np.random.default_rng(seed)
    pc = np.asarray(PC_VALUES, dtype=np.float64)
    t0 = d / 2.0 if threshold is None else threshold
    truth_env = true_optimal_cost(pc, d)
    truth_line = true_line(t0, pc, d)
    hits = {"envelope": np.zeros(pc.size), "line": np.zeros(pc.size)}
    basic_hits = np.zeros(pc.size)
    above = {"envelope": np.zeros(pc.size), "line": np.zeros(pc.size)}
    below = {"envelope": np.zeros(pc.size), "line": np.zeros(pc.size)}
    bias = np.zeros(pc.size)
    width = {"envelope": np.zeros(pc.size), "line": np.zeros(pc.size)}
    for _ in range(test_sets):
        y, s = simulate(n, rng, d)
        for kind, truth, kw in (("envelope", truth_env, {}), ("line", truth_line, {"threshold": t0})):
            band = cost_band((y, s), level=LEVEL, replicates=replicates, rng=rng, grid=pc, **kw)
            hits[kind] += band.covers(truth)
            above[kind] += truth > band.high
            below[kind] += truth < band.low
            width[kind] += band.width
            if kind == "envelope":
                bias += band.cost - truth
                # The "basic" bootstrap interval reflects the percentile one about the estimate:
                # [2 cost - high, 2 cost - low]. Shown for comparison only.
                basic_hits += (2 * band.cost - band.high <= truth) & (truth <= 2 * band.cost - band.low)
    r = float(test_sets)
    return {
        "n": n, "test_sets": test_sets, "replicates": replicates, "pc": pc.tolist(),
        "truth_envelope": truth_env.tolist(), "truth_line": truth_line.tolist(),
        "threshold": t0,
        "envelope": {"coverage": (hits["envelope"] / r).tolist(),
                     "truth_above": (above["envelope"] / r).tolist(),
                     "truth_below": (below["envelope"] / r).tolist(),
                     "mean_width": (width["envelope"] / r).tolist(),
                     "mean_bias": (bias / r).tolist(),
                     "basic_coverage": (basic_hits / r).tolist()},
        "line": {"coverage": (hits["line"] / r).tolist(),
                 "truth_above": (above["line"] / r).tolist(),
                 "truth_below": (below["line"] / r).tolist(),
                 "mean_width": (width["line"] / r).tolist()},
    }


def format_tables(results: list[dict[str, Any]]) -> str:
    pcs = results[0]["pc"]
    head = "| n | test sets | band | " + " | ".join(f"PC={x:g}" for x in pcs) + " | mean |"
    rule = "|" + "---|" * (len(pcs) + 4)
    lines = [f"Nominal {LEVEL:.0%} pointwise coverage (Monte Carlo SE about "
             f"{math.sqrt(LEVEL * (1 - LEVEL) / results[0]['test_sets']):.3f}); "
             "binormal d = {SEPARATION}, prevalence {PREVALENCE}.", "", head, rule]
    for r in results:
        for kind, label in (("line", f"fixed threshold t0 = {r['threshold']:g}"),
                            ("envelope", "envelope (re-optimised)")):
            cov = r[kind]["coverage"]
            lines.append(f"| {r['n']} | {r['test_sets']} | {label} | "
                         + " | ".join(f"{c:.3f}" for c in cov) + f" | {np.mean(cov):.3f} |")
    lines += ["", "For comparison only (costdash reports the percentile band of paper 000): coverage "
              "of the basic bootstrap interval [2 cost - high, 2 cost - low] for the envelope.", "",
              "| n | " + " | ".join(f"PC={x:g}" for x in pcs) + " | mean |",
              "|" + "---|" * (len(pcs) + 2)]
    for r in results:
        cov = r["envelope"]["basic_coverage"]
        lines.append(f"| {r['n']} | " + " | ".join(f"{c:.3f}" for c in cov)
                     + f" | {np.mean(cov):.3f} |")
    lines += ["", "Mean band width (high - low):", "",
              "| n | band | " + " | ".join(f"PC={x:g}" for x in pcs) + " |",
              "|" + "---|" * (len(pcs) + 2)]
    for r in results:
        for kind in ("line", "envelope"):
            lines.append(f"| {r['n']} | {kind} | "
                         + " | ".join(f"{w:.4f}" for w in r[kind]["mean_width"]) + " |")
    lines += ["", "Envelope band misses: share of test sets with the truth above / below the band, "
              "and mean bias of the empirical envelope (empirical - true optimal cost).", "",
              "| n | " + " | ".join(f"PC={x:g} above/below" for x in pcs) + " | bias at PC=0.5 |",
              "|" + "---|" * (len(pcs) + 2)]
    mid = pcs.index(0.5) if 0.5 in pcs else len(pcs) // 2
    for r in results:
        e = r["envelope"]
        lines.append(f"| {r['n']} | " + " | ".join(
            f"{a:.3f}/{b:.3f}" for a, b in zip(e["truth_above"], e["truth_below"]))
            + f" | {e['mean_bias'][mid]:+.4f} |")
    return "\n".join(lines).replace("{SEPARATION}", f"{SEPARATION:g}").replace(
        "{PREVALENCE}", f"{PREVALENCE:g}")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small run (a few seconds) for tests and smoke checks")
    parser.add_argument("--out", help="also write the markdown tables to this file")
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.quick:
        plan = [(100, 60, 200), (1000, 60, 200)]
    else:
        plan = [(100, 1000, 1000), (1000, 1000, 1000), (10_000, 500, 1000)]
    gap = _check_truth()
    results = [coverage(n, sets, b, args.seed + i) for i, (n, sets, b) in enumerate(plan)]
    text = format_tables(results)
    runtime = time.perf_counter() - start
    print(text)
    print(f"\n(closed-form optimum vs threshold grid: max gap {gap:.1e}; runtime {runtime:.1f} s)")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return {"results": results, "truth_gap": gap, "runtime": runtime, "text": text}


if __name__ == "__main__":
    main()
