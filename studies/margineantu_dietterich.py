"""Validation study: BCOST and BDELTACOST on a simulated Expf5-like domain.

Reproduces Section 4 of Margineantu & Dietterich, "Bootstrap Methods for the Cost-Sensitive
Evaluation of Classifiers" (ICML 2000) with :mod:`costdash.multiclass`:

* Table 5 - BCOST coverage of the true expected cost over 1000 test sets of 1000 examples,
  lambda = 0.1, nine cost models x 10 cost matrices, with the normal interval's coverage beside it;
* Figure 2 - BCOST coverage as a function of lambda (reduced sizes);
* Table 6 - BDELTACOST type I error for two classifiers with the same confusion-matrix
  probabilities but uncorrelated decisions, lambda = 0;
* Figures 3/4 - power of BDELTACOST as classifier 2 is perturbed by relabelling a fraction ``f``
  of its decisions (the paper's q / 1,000,000), as a function of ``f`` and of the cost ratio r_c.

The domain: 1,000,000 points on a 1000 x 1000 grid of the unit square, five classes with exactly
the class frequencies of the paper's Table 3 (0: 21.02 %, 1: 44.73 %, 2: 25.68 %, 3: 0.16 %,
4: 8.41 %): class 3 is a small disc, the others are wavy bands (the paper's Figure 1, with its
real decision boundaries, is lost from the text). For every cost matrix a "C4.5-avg"-like tree
(scikit-learn CART, every training example weighted by the mean of its class's cost-matrix
column) is trained on 1000 examples; its confusion-matrix probabilities P(i, j) over the whole grid
are the known population, its true expected cost is ``sum(P * C)``, and a test set of 1000
examples is a multinomial draw from P.

Run ``python studies/margineantu_dietterich.py [--quick] [--out FILE] [--workers N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

try:
    from costdash.multiclass import bcost, bcost_many, bdeltacost, bdeltacost_many
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from costdash.multiclass import bcost, bcost_many, bdeltacost, bdeltacost_many

K = 5
PRIORS = np.array([0.2102, 0.4473, 0.2568, 0.0016, 0.0841])
"""Class frequencies of the paper's Table 3 (Expf5)."""

MODELS = ("M1", "M2", "M3", "M4", "M5", "M6", "M7", "M8", "M9")

PAPER_TABLE5 = {"M1": 956.1, "M2": 955.5, "M3": 953.1, "M4": 954.9, "M5": 953.9, "M6": 994.1,
                "M7": 971.7, "M8": 952.9, "M9": 995.6}
"""BCOST: test sets (of 1000) whose interval contains the true cost, lambda = 0.1."""

PAPER_TABLE6 = {"M1": 948.83, "M2": 950.50, "M3": 948.26, "M4": 950.46, "M5": 951.16,
                "M6": 934.03, "M7": 943.76, "M8": 949.96, "M9": 932.06}
"""BDELTACOST: test sets (of 1000) for which H0 is not rejected, lambda = 0."""


# ------------------------------------------------------------------------------------------------
# Cost models (paper Table 4)
# ------------------------------------------------------------------------------------------------

def draw_cost_matrix(model: str, rng: np.random.Generator,
                     priors: NDArray[np.float64] = PRIORS) -> NDArray[np.float64]:
    """One cost matrix (rows predicted, columns actual) drawn from cost model ``model``.

    Table 4: off-diagonal ``C(i, j) ~ Unif[0, a]`` with ``a`` = 10 (M1), 100 (M2, M3), 1000 (M4),
    10000 (M5, M8), ``1000 P(i)/P(j)`` (M6), ``1000 P(j)/P(i)`` (M7), ``2000 P(i)/P(j)`` (M9);
    diagonal 0, except ``Unif[0, 10]`` (M3) and ``Unif[0, 1000]`` (M8, M9).
    """
    ratio = priors[:, None] / priors[None, :]            # ratio[i, j] = P(i) / P(j)
    upper: Any = {"M1": 10.0, "M2": 100.0, "M3": 100.0, "M4": 1000.0, "M5": 10000.0,
                  "M6": 1000.0 * ratio, "M7": 1000.0 * ratio.T, "M8": 10000.0,
                  "M9": 2000.0 * ratio}[model]
    k = priors.size
    c = rng.uniform(0.0, 1.0, size=(k, k)) * upper
    diag = {"M3": 10.0, "M8": 1000.0, "M9": 1000.0}.get(model, 0.0)
    np.fill_diagonal(c, rng.uniform(0.0, diag, size=k) if diag else 0.0)
    return c


# ------------------------------------------------------------------------------------------------
# Domain and classifier
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Domain:
    """The simulated population: grid points ``x`` (N, 2) and their classes ``y`` (N,)."""

    x: NDArray[np.float64]
    y: NDArray[np.int64]


def expf5_domain(grid: int = 1000) -> Domain:
    """A five-class domain on a ``grid x grid`` lattice with the class frequencies of Table 3.

    Class 3 (0.16 %) is the disc of the points nearest (0.55, 0.62); the remaining points are
    ordered by the wavy score ``x1 + 0.6 x2 + 0.08 sin(9 x2) + 0.06 sin(11 x1 + 1)`` and cut into
    the bands 0, 1, 2, 4 with exactly the Table 3 counts.
    """
    u = (np.arange(grid) + 0.5) / grid
    x1, x2 = (a.ravel() for a in np.meshgrid(u, u, indexing="ij"))
    n = x1.size
    counts = np.round(PRIORS * n).astype(np.int64)
    counts[1] += n - counts.sum()
    y = np.empty(n, dtype=np.int64)
    dist = (x1 - 0.55) ** 2 + (x2 - 0.62) ** 2
    disc = np.argpartition(dist, counts[3])[: counts[3]]
    in_disc = np.zeros(n, dtype=bool)
    in_disc[disc] = True
    y[disc] = 3
    rest = np.flatnonzero(~in_disc)
    score = x1 + 0.6 * x2 + 0.08 * np.sin(9 * x2) + 0.06 * np.sin(11 * x1 + 1)
    order = rest[np.argsort(score[rest], kind="stable")]
    bounds = np.cumsum([0, counts[0], counts[1], counts[2], counts[4]])
    for cls, a, b in zip((0, 1, 2, 4), bounds[:-1], bounds[1:], strict=True):
        y[order[a:b]] = cls
    return Domain(x=np.column_stack([x1, x2]), y=y)


def train_confusion(domain: Domain, train_idx: NDArray[np.intp], costs: NDArray[np.float64],
                    seed: int) -> NDArray[np.float64]:
    """Confusion probabilities (rows predicted, columns actual) of a cost-weighted tree.

    "C4.5-avg": each training example is weighted by the mean of the cost-matrix column of its
    class; the tree is scikit-learn's CART with ``min_samples_leaf=2`` standing in for C4.5.
    """
    from sklearn.tree import DecisionTreeClassifier

    y_tr = domain.y[train_idx]
    weights = costs.mean(axis=0)[y_tr]
    tree = DecisionTreeClassifier(min_samples_leaf=2, random_state=seed)
    tree.fit(domain.x[train_idx], y_tr, sample_weight=weights)
    pred = tree.predict(domain.x).astype(np.int64)
    counts = np.bincount(pred * K + domain.y, minlength=K * K).reshape(K, K)
    return counts / domain.y.size


def joint_uncorrelated(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(i1, i2, j) of two classifiers with confusion P whose decisions are independent given j.

    This is the limit of the paper's construction of classifier 2 (classifier 1's labels permuted
    at random within each true class): same confusion matrix, uncorrelated mistakes.
    """
    col = p.sum(axis=0)
    cond = np.divide(p, col, out=np.zeros_like(p), where=col > 0)     # P(i | j)
    return cond[:, None, :] * cond[None, :, :] * col[None, None, :]


def perturb_second(p3: NDArray[np.float64], fraction: float) -> NDArray[np.float64]:
    """Classifier 2 with a fraction of its labels changed to a uniformly random *other* class."""
    k = p3.shape[1]
    marginal = p3.sum(axis=1, keepdims=True)                           # P(i1, j)
    moved = (marginal - p3) / (k - 1)
    return (1.0 - fraction) * p3 + fraction * moved


# ------------------------------------------------------------------------------------------------
# One cost matrix's experiments (runs in a worker process)
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    test_sets: int
    test_size: int
    replicates: int
    matrices: int
    power_matrices: int
    power_test_sets: int
    power_fractions: tuple[float, ...]
    sweep_matrices: int
    sweep_test_sets: int
    sweep_lambdas: tuple[float, ...]
    laplace_bcost: float = 0.1
    level: float = 0.95


FULL = Config(test_sets=1000, test_size=1000, replicates=1000, matrices=10, power_matrices=3,
              power_test_sets=200,
              power_fractions=(0.0, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5, 1.0),
              sweep_matrices=3, sweep_test_sets=300,
              sweep_lambdas=(0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 3.0))

QUICK = Config(test_sets=50, test_size=1000, replicates=200, matrices=2, power_matrices=1,
               power_test_sets=30, power_fractions=(0.0, 0.02, 0.1, 0.5, 1.0),
               sweep_matrices=1, sweep_test_sets=30, sweep_lambdas=(0.0, 0.1, 0.5))


def run_matrix(task: tuple[str, int, NDArray[np.float64], NDArray[np.float64], Config,
                           np.random.SeedSequence]) -> dict[str, Any]:
    """All experiments for one (cost model, cost matrix): coverage, type I, power, lambda."""
    model, index, costs, p, cfg, seed = task
    rng = np.random.default_rng(seed)
    n = cfg.test_size
    true_cost = float(np.sum(p * costs))
    out: dict[str, Any] = {"model": model, "index": index, "true_cost": true_cost,
                           "error_rate": float(1.0 - np.trace(p))}

    # BCOST coverage (Table 5) and the normal interval.
    tests = rng.multinomial(n, p.ravel(), size=cfg.test_sets).reshape(-1, K, K)
    res = bcost_many(tests, costs, level=cfg.level, replicates=cfg.replicates,
                     laplace=cfg.laplace_bcost, rng=rng)
    out["bcost_cover"] = float(res.covers(true_cost).mean())
    out["normal_cover"] = float(res.normal_covers(true_cost).mean())
    # Diagnostic: the normal interval with the per-example *variance* put where its standard
    # deviation belongs (one literal reading of the paper's Section 2, "a variance of
    # sigma/sqrt(n), where sigma is the variance of the c values").
    z = float(NormalDist().inv_cdf(0.5 + cfg.level / 2))
    se = (res.normal_high - res.normal_low) / (2 * z)
    half_var = z * (se * se * n) / np.sqrt(n)
    out["normal_var_cover"] = float(np.mean(np.abs(res.cost - true_cost) <= half_var))
    out["bcost_width"] = float(np.median(res.high - res.low))
    out["normal_width"] = float(np.median(res.normal_high - res.normal_low))
    out["miss_low"] = float(np.mean(res.high < true_cost))      # interval entirely below truth

    # BCOST coverage against lambda (Figure 2).
    if index < cfg.sweep_matrices:
        sweep = {}
        sub = tests[: cfg.sweep_test_sets]
        for lam in cfg.sweep_lambdas:
            r = bcost_many(sub, costs, level=cfg.level, replicates=cfg.replicates, laplace=lam,
                           rng=rng)
            sweep[lam] = float(r.covers(true_cost).mean())
        out["sweep"] = sweep

    # BDELTACOST type I error (Table 6): same confusion probabilities, uncorrelated decisions.
    p3 = joint_uncorrelated(p)
    tests3 = rng.multinomial(n, p3.ravel(), size=cfg.test_sets).reshape(-1, K, K, K)
    d = bdeltacost_many(tests3, costs, level=cfg.level, replicates=cfg.replicates, laplace=0.0,
                        rng=rng)
    out["type1_accept"] = float(1.0 - d.reject.mean())
    out["normal_type1_accept"] = float(1.0 - d.normal_reject.mean())

    # Power (Figures 3/4): classifier 2 with a fraction f of its labels changed.
    if index < cfg.power_matrices:
        power = []
        for f in cfg.power_fractions:
            p3f = perturb_second(p3, f)
            cost2 = float(np.einsum("abj,bj->", p3f, costs))
            tf = rng.multinomial(n, p3f.ravel(), size=cfg.power_test_sets).reshape(-1, K, K, K)
            df = bdeltacost_many(tf, costs, level=cfg.level, replicates=cfg.replicates,
                                 laplace=0.0, rng=rng)
            power.append({"f": f, "r_c": abs(cost2 - true_cost) / true_cost,
                          "reject": float(df.reject.mean()),
                          "normal_reject": float(df.normal_reject.mean())})
        out["power"] = power
    return out


# ------------------------------------------------------------------------------------------------
# Benchmark
# ------------------------------------------------------------------------------------------------

def benchmark(repeats: int = 30, seed: int = 0) -> dict[str, float]:
    """Median wall time (ms) of one bcost (k=5, n=1000, B=1000) and one bdeltacost call."""
    rng = np.random.default_rng(seed)
    c = draw_cost_matrix("M5", rng)
    p = rng.dirichlet(np.ones(K * K))
    m = rng.multinomial(1000, p).reshape(K, K)
    m3 = rng.multinomial(1000, joint_uncorrelated(p.reshape(K, K)).ravel()).reshape(K, K, K)
    times_b, times_d = [], []
    for r in range(repeats):
        t0 = time.perf_counter()
        bcost(m, c, replicates=1000, rng=r)
        t1 = time.perf_counter()
        bdeltacost(m3, c, replicates=1000, rng=r)
        t2 = time.perf_counter()
        times_b.append(t1 - t0)
        times_d.append(t2 - t1)
    return {"bcost_ms": 1e3 * float(np.median(times_b)),
            "bdeltacost_ms": 1e3 * float(np.median(times_d))}


# ------------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------------

def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _interp_f50(points: list[dict[str, float]]) -> float | None:
    """Smallest f where the mean rejection rate reaches 0.5 (linear interpolation)."""
    for a, b in zip(points[:-1], points[1:], strict=True):
        if a["reject"] < 0.5 <= b["reject"]:
            return a["f"] + (0.5 - a["reject"]) * (b["f"] - a["f"]) / (b["reject"] - a["reject"])
    return 0.0 if points and points[0]["reject"] >= 0.5 else None


def summarise(results: list[dict[str, Any]], cfg: Config) -> dict[str, Any]:
    """Per-model averages over cost matrices."""
    summary: dict[str, Any] = {}
    for model in MODELS:
        rs = [r for r in results if r["model"] == model]
        if not rs:
            continue
        s: dict[str, Any] = {}
        for key in ("bcost_cover", "normal_cover", "normal_var_cover", "type1_accept",
                    "normal_type1_accept", "true_cost", "error_rate", "bcost_width",
                    "normal_width", "miss_low"):
            vals = np.array([r[key] for r in rs])
            s[key] = float(vals.mean())
            s[key + "_min"] = float(vals.min())
            s[key + "_max"] = float(vals.max())
        sweeps = [r["sweep"] for r in rs if "sweep" in r]
        if sweeps:
            s["sweep"] = {lam: float(np.mean([sw[lam] for sw in sweeps]))
                          for lam in cfg.sweep_lambdas}
        powers = [r["power"] for r in rs if "power" in r]
        if powers:
            pts = []
            for i, f in enumerate(cfg.power_fractions):
                rej = [pw[i]["reject"] for pw in powers]
                pts.append({"f": f, "reject": float(np.mean(rej)),
                            "reject_min": float(np.min(rej)), "reject_max": float(np.max(rej)),
                            "normal_reject": float(np.mean([pw[i]["normal_reject"]
                                                            for pw in powers])),
                            "r_c": float(np.mean([pw[i]["r_c"] for pw in powers]))})
            s["power"] = pts
            s["f50"] = _interp_f50(pts)
        summary[model] = s
    return summary


def report(summary: dict[str, Any], cfg: Config, runtime: float, bench: dict[str, float],
           workers: int, quick: bool, seed: int) -> str:
    t = cfg.test_sets
    out = [f"## BCOST / BDELTACOST validation ({'quick' if quick else 'full'} run)", "",
           f"Test sets per cost matrix: {t} of {cfg.test_size} examples; bootstrap replicates "
           f"B = {cfg.replicates}; cost matrices per model: {cfg.matrices}; level "
           f"{cfg.level}; seed {seed}; workers {workers}.", ""]

    out += ["### Classifiers (C4.5-avg stand-in) and their true expected cost", ""]
    rows = [[m, f"{s['error_rate']:.3f}", f"{s['true_cost_min']:.4g} - {s['true_cost_max']:.4g}"]
            for m, s in summary.items()]
    out += [_table(["model", "mean error rate", "true cost per example (min - max)"], rows), ""]

    out += [f"### BCOST coverage (Table 5), lambda = {cfg.laplace_bcost}",
            "", "Intervals containing the true cost, per 1000 test sets (mean over matrices; "
            "min - max in brackets). Ideal: 950.", ""]
    rows = []
    for m, s in summary.items():
        rows.append([m, f"{1000 * s['bcost_cover']:.1f} [{1000 * s['bcost_cover_min']:.0f} - "
                        f"{1000 * s['bcost_cover_max']:.0f}]", f"{PAPER_TABLE5[m]:.1f}",
                     f"{1000 * s['normal_cover']:.1f} [{1000 * s['normal_cover_min']:.0f} - "
                     f"{1000 * s['normal_cover_max']:.0f}]", "1000",
                     f"{1000 * s['normal_var_cover']:.1f}",
                     f"{1000 * s['miss_low']:.1f}",
                     f"{s['bcost_width'] / s['normal_width']:.3f}"])
    out += [_table(["model", "BCOST (ours)", "BCOST (paper)", "normal (ours)", "normal (paper)",
                    "normal, variance as s.d. (ours)", "BCOST misses, interval below truth",
                    "median width BCOST / normal"], rows), ""]

    first = next(iter(summary.values()))
    if "sweep" in first:
        lams = list(first["sweep"])
        out += ["### BCOST coverage against lambda (Figure 2)", "",
                f"Per 1000 test sets; {cfg.sweep_matrices} matrices per model, "
                f"{cfg.sweep_test_sets} test sets each.", ""]
        rows = [[m] + [f"{1000 * s['sweep'][lam]:.0f}" for lam in lams]
                for m, s in summary.items()]
        out += [_table(["model"] + [f"lambda={lam:g}" for lam in lams], rows), ""]

    out += ["### BDELTACOST type I error (Table 6), lambda = 0", "",
            "Test sets (per 1000) on which H0 'equal expected cost' is NOT rejected, for two "
            "classifiers with the same confusion probabilities and decisions independent given "
            "the class. Ideal: 950.", ""]
    rows = [[m, f"{1000 * s['type1_accept']:.1f} [{1000 * s['type1_accept_min']:.0f} - "
                f"{1000 * s['type1_accept_max']:.0f}]", f"{PAPER_TABLE6[m]:.2f}",
             f"{1000 * s['normal_type1_accept']:.1f}"] for m, s in summary.items()]
    out += [_table(["model", "BDELTACOST (ours)", "BDELTACOST (paper)", "paired z (ours)"],
                   rows), ""]

    if "power" in first:
        fr = cfg.power_fractions
        out += ["### BDELTACOST power (Figures 3/4), lambda = 0", "",
                "Rate of rejecting H0 when classifier 2 has a fraction f of its labels changed to "
                f"a random other class (paper: q = f x 1,000,000); {cfg.power_matrices} matrices "
                f"per model, {cfg.power_test_sets} test sets each.", ""]
        rows = [[m] + [f"{pt['reject']:.2f}" for pt in s["power"]]
                + [("-" if s["f50"] is None else f"{s['f50']:.3f}")]
                for m, s in summary.items()]
        out += [_table(["model"] + [f"f={f:g}" for f in fr] + ["f at 50% power"], rows), ""]
        out += ["Cost ratio r_c = |cost(2') - cost(1)| / cost(1) at each f (population values; "
                "Figure 3's x axis):", ""]
        rows = [[m] + [f"{pt['r_c']:.3g}" for pt in s["power"]] for m, s in summary.items()]
        out += [_table(["model"] + [f"f={f:g}" for f in fr], rows), ""]
        out += ["Paired-differences z test, same pairs (rejection rate):", ""]
        rows = [[m] + [f"{pt['normal_reject']:.2f}" for pt in s["power"]]
                for m, s in summary.items()]
        out += [_table(["model"] + [f"f={f:g}" for f in fr], rows), ""]
        out += ["Range of BDELTACOST rejection rate across matrices (min - max, Figure 5):", ""]
        rows = [[m] + [f"{pt['reject_min']:.2f}-{pt['reject_max']:.2f}" for pt in s["power"]]
                for m, s in summary.items()]
        out += [_table(["model"] + [f"f={f:g}" for f in fr], rows), ""]

    out += ["### Timing", "",
            f"- one `bcost` call, k=5, n=1000, B=1000: {bench['bcost_ms']:.2f} ms (median); "
            f"one `bdeltacost` call (125 cells): {bench['bdeltacost_ms']:.2f} ms",
            f"- whole study: {runtime:.1f} s wall time with {workers} worker process(es)", ""]
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------
# Main
# ------------------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the study; print the markdown report and return the numbers.

    Returns
    -------
    dict
        ``{"summary": {model: {...}}, "runtime": seconds, "benchmark": {...}, "markdown": str,
        "config": Config}``; coverage and acceptance values are fractions in [0, 1].
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds, for tests)")
    parser.add_argument("--out", metavar="FILE", help="also write the markdown tables to FILE")
    parser.add_argument("--seed", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes (default: 1 with --quick, else all CPUs)")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated cost models to run (default all nine)")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    workers = args.workers or (1 if args.quick else (os.cpu_count() or 1))
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        parser.error(f"unknown cost models: {unknown}")

    t0 = time.perf_counter()
    domain = expf5_domain()
    root = np.random.SeedSequence(args.seed)
    setup_rng = np.random.default_rng(root.spawn(1)[0])
    train_idx = setup_rng.choice(domain.y.size, size=1000, replace=False)
    tasks = []
    seeds = root.spawn(len(MODELS) * cfg.matrices + 1)[1:]
    for mi, model in enumerate(MODELS):
        for r in range(cfg.matrices):
            seq = seeds[mi * cfg.matrices + r]
            if model not in models:
                continue
            c_rng = np.random.default_rng(seq.spawn(1)[0])
            costs = draw_cost_matrix(model, c_rng)
            p = train_confusion(domain, train_idx, costs, seed=r)
            tasks.append((model, r, costs, p, cfg, seq))
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(run_matrix, tasks))
    else:
        results = [run_matrix(t) for t in tasks]
    bench = benchmark(repeats=10 if args.quick else 30)
    runtime = time.perf_counter() - t0

    summary = summarise(results, cfg)
    markdown = report(summary, cfg, runtime, bench, workers, args.quick, args.seed)
    print(markdown)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(markdown + "\n")
    return {"summary": summary, "runtime": runtime, "benchmark": bench, "markdown": markdown,
            "config": cfg, "results": results}


if __name__ == "__main__":
    main()
