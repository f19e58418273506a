"""Benchmark of :mod:`costdash.bands` against a naive per-replicate loop.

1. Whole-curve band of one scoring classifier, n = 100,000 (binormal scores, d = 1.5, prevalence
   0.3, continuous scores), B = 1000 replicates, 201-point PC(+) grid: ``cost_band`` versus the
   naive loop (stratified row resampling with ``rng.choice``, ``sklearn.metrics.roc_curve``, the
   upper hull of its points and the minimum of the hull vertices' cost lines on the grid, one
   replicate at a time). The naive loop is timed on a subset of replicates and extrapolated
   linearly to B (it is the same work for every replicate).
2. Peak memory of a band for n = 10,000,000 with the default batch budget (run in a child process;
   tracemalloc sees numpy's allocations), and its time per replicate.
3. Difference band of two classifiers, n = 100,000, B = 1000.

Wall-clock times on a shared machine vary with the load of other processes; CPU time of this
process (``time.process_time``) is printed beside them, and every fast timing is the best of a few
runs.

Run ``python benchmarks/bench_bands.py [--quick] [--naive-replicates 30] [--skip-memory]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

try:
    from costdash.bands import cost_band, difference_band
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from costdash.bands import cost_band, difference_band

from costdash._geometry import upper_hull

GRID = np.linspace(0.0, 1.0, 201)


def data(n: int, seed: int = 0, d: float = 1.5, prevalence: float = 0.3):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    score = rng.standard_normal(n) + d * y
    return y, score


def naive_band_curves(y: np.ndarray, s: np.ndarray, replicates: int, seed: int) -> np.ndarray:
    """One replicate at a time: resample rows per class, sklearn ROC, hull, envelope on GRID."""
    from sklearn.metrics import roc_curve

    rng = np.random.default_rng(seed)
    pos = np.flatnonzero(y)
    neg = np.flatnonzero(~y)
    out = np.empty((replicates, GRID.size))
    for r in range(replicates):
        idx = np.concatenate((rng.choice(pos, pos.size), rng.choice(neg, neg.size)))
        fpr, tpr, _ = roc_curve(y[idx], s[idx])
        h = upper_hull(fpr, tpr)
        f, t = fpr[h], tpr[h]
        out[r] = np.min((1.0 - t)[:, None] * GRID + f[:, None] * (1.0 - GRID), axis=0)
    return out


def best_of(runs: int, fn) -> tuple[float, float, Any]:
    """Best wall and best CPU time of ``runs`` calls, and the last result."""
    wall, cpu, result = [], [], None
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu), result


def memory_child(n: int, replicates: int) -> dict[str, Any]:
    import resource
    import tracemalloc

    y, s = data(n, seed=1)
    rss_inputs = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    band = cost_band((y, s), replicates=replicates, rng=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # Timings without tracemalloc: one replicate (mostly set-up: sort, super-bins, full-data
    # envelope), then B replicates; the difference is the cost of B - 1 replicates.
    w0 = time.perf_counter()
    cost_band((y, s), replicates=1, rng=0)
    setup = time.perf_counter() - w0
    w0, c0 = time.perf_counter(), time.process_time()
    cost_band((y, s), replicates=replicates, rng=0)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"n": n, "replicates": replicates, "peak_traced_mb": peak / 2**20,
            "input_mb": (y.nbytes + s.nbytes) / 2**20,
            "max_rss_mb": max_rss,
            "rss_after_inputs_mb": rss_inputs, "wall": wall, "cpu": cpu, "setup_wall": setup,
            "per_replicate_wall": (wall - setup) / max(1, replicates - 1),
            "width_at_half": float(band.width[100])}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 20,000 and fewer replicates")
    parser.add_argument("--naive-replicates", type=int, default=30,
                        help="replicates of the naive loop actually timed (default 30)")
    parser.add_argument("--skip-memory", action="store_true", help="skip the n = 10M memory check")
    parser.add_argument("--memory-child", nargs=2, type=int, metavar=("N", "B"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        print(json.dumps(memory_child(*args.memory_child)))
        return {}

    n = 20_000 if args.quick else 100_000
    b = 200 if args.quick else 1000
    y, s = data(n)
    report: dict[str, Any] = {"n": n, "replicates": b, "grid": GRID.size}
    print(f"n = {n:,}, B = {b}, grid = {GRID.size}; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.2f}")

    wall, cpu, band = best_of(3, lambda: cost_band((y, s), replicates=b, rng=0))
    report.update(fast_wall=wall, fast_cpu=cpu)
    print(f"cost_band:         {wall:7.3f} s wall (best of 3), {cpu:.3f} s CPU")

    k = args.naive_replicates
    naive_band_curves(y, s, 1, seed=1)  # warm-up: imports scikit-learn outside the timing
    w0, c0 = time.perf_counter(), time.process_time()
    naive = naive_band_curves(y, s, k, seed=0)
    naive_wall = (time.perf_counter() - w0) * b / k
    naive_cpu = (time.process_time() - c0) * b / k
    report.update(naive_wall=naive_wall, naive_cpu=naive_cpu, naive_timed=k)
    print(f"naive loop:        {naive_wall:7.3f} s wall, {naive_cpu:.3f} s CPU "
          f"(timed {k} replicates, extrapolated x{b / k:g})")
    print(f"speed-up:          {naive_wall / wall:7.1f}x wall, {naive_cpu / cpu:.1f}x CPU")
    # Sanity: the two agree in distribution (mean replicate envelope, within Monte Carlo error).
    gap = float(np.max(np.abs(naive.mean(axis=0) - band.curves.mean(axis=0))))
    print(f"max |mean naive replicate - mean fast replicate| = {gap:.4f} "
          f"(band width at PC=0.5: {band.width[100]:.4f})")
    report["mean_gap"] = gap

    wall, cpu, diff = best_of(2, lambda: difference_band(
        (y, s), (y, 0.8 * s + 0.6 * np.random.default_rng(5).standard_normal(n)),
        replicates=b, rng=0))
    report.update(diff_wall=wall, diff_cpu=cpu)
    print(f"difference_band:   {wall:7.3f} s wall (best of 2), {cpu:.3f} s CPU; "
          f"significant: {[(round(i.lo, 3), round(i.hi, 3), i.better) for i in diff.significant]}")

    if not args.skip_memory:
        big_n = 1_000_000 if args.quick else 10_000_000
        big_b = 5 if args.quick else 20
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child",
                              str(big_n), str(big_b)], capture_output=True, text=True, check=True)
        mem = json.loads(out.stdout.strip().splitlines()[-1])
        report["memory"] = mem
        print(f"n = {big_n:,}, B = {big_b}: peak traced {mem['peak_traced_mb']:.0f} MB beyond "
              f"the {mem['input_mb']:.0f} MB of inputs; max RSS {mem['max_rss_mb']:.0f} MB; "
              f"{mem['wall']:.1f} s wall, {mem['cpu']:.1f} s CPU (set-up with 1 replicate "
              f"{mem['setup_wall']:.1f} s, then about {mem['per_replicate_wall']:.2f} s per "
              "replicate)")
    return report


if __name__ == "__main__":
    main()
