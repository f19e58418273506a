"""Benchmark of the computation core: ROC points + convex hull + lower envelope.

Two workloads, each measured in the same run against two references on the same scores:

* ``1 x 10,000,000`` -- one classifier, ten million scores;
* ``20 x 1,000,000`` -- twenty classifiers sharing one label column of a million examples.

"ours" is :func:`costdash.analyze` on an in-memory data set (what ``costdash analyze`` does after
loading: each classifier's ROC curve, hull, envelope and operating range, then the hull and
envelope of all of them together and the choice under default conditions). It is compared with

(a) ``numpy.argsort`` of the same scores (the sort every ROC computation needs; target <= 1.5x),
(b) ``sklearn.metrics.roc_curve(..., drop_intermediate=False)`` alone, the same ROC points without
    hull or envelope (target: faster),
(c) peak memory traced by ``tracemalloc`` while analysing, over the bytes of the input arrays
    (scores and labels; target <= 3x).

Timings are interleaved (ours, argsort, sklearn in rotating order) and each is the median of
``--repeats`` runs; memory is measured in separate runs, because tracing slows allocation.

Usage::

    .venv/bin/python benchmarks/bench_core.py [--repeats 5] [--scale 1.0] [--markdown]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import sklearn
from sklearn.metrics import roc_curve as sk_roc_curve

import costdash
from costdash.analysis import analyze
from costdash.costspace import lower_envelope
from costdash.dataset import Dataset, ScoredClassifier
from costdash.hull import add_to_hull, classifier_hull
from costdash.roc import roc_curve


def make_workload(n_classifiers: int, n: int, seed: int = 0) -> tuple[np.ndarray, list[np.ndarray]]:
    """Labels with 10% positives and continuous scores (all distinct: an ROC point per example)."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.1
    scores = [rng.normal(size=n) + (0.5 + 0.1 * k) * y for k in range(n_classifiers)]
    return y, scores


def dataset_of(y: np.ndarray, scores: list[np.ndarray]) -> Dataset:
    return Dataset(source="bench", layout="wide", positive_label="1",
                   scored=tuple(ScoredClassifier(f"m{k}", y, s) for k, s in enumerate(scores)))


def run_ours(y, scores):
    return analyze(dataset_of(y, scores))


def run_streaming(y, scores):
    """One classifier at a time, keeping only hulls and envelopes (no ROC curves retained)."""
    hull = None
    envelopes = []
    for k, s in enumerate(scores):
        roc = roc_curve(y, s, name=f"m{k}")
        own = classifier_hull(roc)
        envelopes.append(lower_envelope(own))
        hull = own if hull is None else add_to_hull(hull, roc)
        del roc
    return hull, lower_envelope(hull), envelopes


def run_argsort(y, scores):
    for s in scores:
        np.argsort(s)


def run_sklearn(y, scores):
    for s in scores:
        sk_roc_curve(y, s, drop_intermediate=False)


def timed(fn: Callable, *args) -> float:
    gc.collect()
    t0 = time.perf_counter()
    result = fn(*args)
    elapsed = time.perf_counter() - t0
    del result
    return elapsed


def peak_bytes(fn: Callable, *args) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        result = fn(*args)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def bench(label: str, n_classifiers: int, n: int, repeats: int) -> dict:
    y, scores = make_workload(n_classifiers, n)
    input_bytes = y.nbytes + sum(s.nbytes for s in scores)
    contenders = {"ours": run_ours, "argsort": run_argsort, "sklearn": run_sklearn}
    times: dict[str, list[float]] = {k: [] for k in contenders}
    names = list(contenders)
    timed(run_ours, y, scores)  # warm-up: imports, page faults
    for r in range(repeats):
        for name in names[r % 3:] + names[:r % 3]:
            times[name].append(timed(contenders[name], y, scores))
        print(f"  {label} repeat {r + 1}/{repeats}: "
              + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items()), file=sys.stderr)
    med = {k: statistics.median(v) for k, v in times.items()}
    result = analyze(dataset_of(y, scores))
    roc_points = sum(c.roc.size for c in result.classifiers)
    hull_size = result.hull.size
    del result
    peaks = {name: peak_bytes(fn, y, scores) for name, fn in
             (("ours", run_ours), ("streaming", run_streaming), ("argsort", run_argsort),
              ("sklearn", run_sklearn))}
    return {"label": label, "n": n, "k": n_classifiers, "input_bytes": input_bytes,
            "times": times, "median": med, "peaks": peaks, "roc_points": roc_points,
            "hull_size": hull_size}


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def table(results: list[dict], markdown: bool) -> str:
    rows = [("workload", "ours (s)", "argsort (s)", "sklearn roc_curve (s)",
             "(a) ours/argsort", "(b) ours/sklearn", "(c) peak/input",
             "peak/input, streaming", "ROC points", "hull vertices")]
    for r in results:
        m, p, ib = r["median"], r["peaks"], r["input_bytes"]
        a, b, c = m["ours"] / m["argsort"], m["ours"] / m["sklearn"], p["ours"] / ib
        rows.append((r["label"], f"{m['ours']:.2f}", f"{m['argsort']:.2f}", f"{m['sklearn']:.2f}",
                     f"{a:.2f}x ({verdict(a <= 1.5)})", f"{b:.2f}x ({verdict(b < 1.0)})",
                     f"{c:.2f}x ({verdict(c <= 3.0)})", f"{p['streaming'] / ib:.2f}x",
                     f"{r['roc_points']:,}", f"{r['hull_size']}"))
    if markdown:
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in rows)


def reference_memory(results: list[dict], markdown: bool) -> str:
    rows = [("workload", "input (MB)", "ours peak (MB)", "streaming peak (MB)",
             "argsort peak (MB)", "sklearn peak (MB)")]
    for r in results:
        p = r["peaks"]
        rows.append((r["label"], f"{r['input_bytes'] / 1e6:.0f}", f"{p['ours'] / 1e6:.0f}",
                     f"{p['streaming'] / 1e6:.0f}", f"{p['argsort'] / 1e6:.0f}",
                     f"{p['sklearn'] / 1e6:.0f}"))
    if markdown:
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in rows)


def environment() -> str:
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "n/a"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"Python {platform.python_version()}, numpy {np.__version__}, scikit-learn "
            f"{sklearn.__version__}, costdash {costdash.__version__}; {cpu}, "
            f"{os.cpu_count()} CPUs; load average {load}; "
            f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per contender (median)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply the workload sizes (e.g. 0.1 for a quick check)")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args(argv)
    n1, n2 = int(10_000_000 * args.scale), int(1_000_000 * args.scale)
    env_before = environment()
    results = [bench(f"1 x {n1:,}", 1, n1, args.repeats),
               bench(f"20 x {n2:,}", 20, n2, args.repeats)]
    print(f"before: {env_before}")
    print(f"after:  {environment()}")
    print(f"median of {args.repeats} interleaved runs each\n")
    print(table(results, args.markdown))
    print()
    print(reference_memory(results, args.markdown))
    print("\nall timings (s):")
    for r in results:
        for name, values in r["times"].items():
            print(f"  {r['label']:<14} {name:<8} " + " ".join(f"{v:.2f}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
