"""Benchmark of the prior in production (issue 25): estimate with interval on 10⁶ production
scores (bar: 2 s), and ``costdash.watch`` on the score counts of 10⁸ production rows.

Workloads, each timed in the same run as its baselines on the same scores:

* ``estimate 10^6``: :func:`costdash.estimate_prevalence` (``em`` at its default calibration,
  bcts, which on these margin scores is Platt; 200 bootstrap replicates over the 5,000-row
  reference and the production sample), against
  (a) ``numpy.histogram`` of the same scores into 1,024 bins (one pass over the data: what any
  summary of it costs), and (b) QuaPy's ``EMQ.EM`` on the same posteriors at its default
  tolerance (the point estimate alone, no interval); the same on the scores as probabilities
  (their logistic transform: bcts then fits Platt on their log-odds), and with
  ``calibration="none"`` (the probabilities read as posteriors);
* ``watch 10^8 as counts``: :func:`costdash.watch` (``em``) on the score counts of 10⁸ rows
  (scores rounded to 4 decimals, three periods), after aggregation.

Each timing is the median of ``--repeats`` runs (wall clock, interleaved).

Usage::

    .venv/bin/python benchmarks/prevalence_bench.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

try:
    import costdash
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import costdash
from costdash.calibration import fit_platt
from costdash.dataset import Dataset, ScoredClassifier


CPU: list[str] = []


def median_time(fn, repeats: int, name: str = "") -> float:
    """Median wall time; the median CPU time of the process is noted under ``name`` (on a
    shared machine the wall clock also counts the neighbours)."""
    times, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    if name:
        CPU.append(f"{name}: {statistics.median(cpu):.3f} s of CPU")
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    y = rng.random(5000) < 0.3
    ref = ScoredClassifier("m", y, rng.normal(1.5 * y, 1.0))
    data = Dataset("reference", "wide", "1", scored=(ref,))
    prod = rng.normal(1.5 * (rng.random(1_000_000) < 0.05), 1.0)

    from quapy.method.aggregative import EMQ
    platt = fit_platt(ref.score, ref.y_true)
    posterior = platt(prod)
    prior = np.array([0.7, 0.3])

    ours = median_time(lambda: costdash.estimate_prevalence(data, prod), args.repeats,
                       "estimate 10^6")
    hist = median_time(lambda: np.histogram(prod, bins=1024), args.repeats)
    quapy = median_time(lambda: EMQ.EM(prior, np.c_[1 - posterior, posterior]), args.repeats)
    est = costdash.estimate_prevalence(data, prod)
    print("| workload | ours | baseline | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| estimate with interval, 10^6 scores (em, 200 replicates) | {ours:.3f} s | "
          f"numpy.histogram {hist:.3f} s | {ours / hist:.1f}x |")
    print(f"| same | {ours:.3f} s | QuaPy EMQ.EM, point only {quapy:.3f} s | "
          f"{ours / quapy:.2f}x |")
    # The same scores as probabilities: bcts reads their log-odds; "none" reads them as they are.
    as_prob = Dataset("reference", "wide", "1",
                      scored=(ScoredClassifier("m", y, 1.0 / (1.0 + np.exp(-ref.score))),))
    prod_prob = 1.0 / (1.0 + np.exp(-prod))
    for calibration in ("bcts", "none"):
        t = median_time(lambda: costdash.estimate_prevalence(as_prob, prod_prob,
                                                             calibration=calibration),
                        args.repeats, f"estimate 10^6 probabilities, {calibration}")
        print(f"| same, scores as probabilities, calibration {calibration!r} | {t:.3f} s | "
              f"numpy.histogram {hist:.3f} s | {t / hist:.1f}x |")

    # 10^8 production rows as score counts: three periods of a multinomial over rounded scores.
    grid = np.round(np.arange(-6.0, 8.0, 1e-4), 4)
    from scipy.stats import norm
    scores, counts, weeks = [], [], []
    for week, p in (("w1", 0.3), ("w2", 0.05), ("w3", 0.5)):
        dens = (1 - p) * norm.pdf(grid) + p * norm.pdf(grid, 1.5)
        n = rng.multinomial(100_000_000 // 3, dens / dens.sum())
        keep = n > 0
        scores.append(grid[keep])
        counts.append(n[keep])
        weeks.append(np.full(int(keep.sum()), week))
    table = {"score": np.concatenate(scores), "n": np.concatenate(counts),
             "week": np.concatenate(weeks)}
    rows = int(table["n"].sum())
    watched = median_time(lambda: costdash.watch(data, table, period="week", p_pos=0.3),
                          args.repeats, "watch 10^8 as counts")
    print(f"| watch, {rows:,} rows as {table['score'].size:,} score counts, 3 periods | "
          f"{watched:.3f} s | bar 2 s | {watched / 2.0:.2f} of the bar |")
    print(f"\nestimate {est.p_pos:.4f} [{est.low:.4f}, {est.high:.4f}] (true 0.05); "
          f"median of {args.repeats}; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.1f}")
    print("; ".join(CPU))


if __name__ == "__main__":
    main()
