"""Exact coverage of the closed-form bands of fixed thresholds: sums of binomial and multinomial
probabilities, no simulation.

**Cost line of one fixed threshold.** ``FN ~ Bin(P, FNR)`` and ``FP ~ Bin(N, FPR)`` independently
(class totals fixed); the band at PC(+) ``x`` is ``[L(FN, FP), U(FN, FP)]``, computed by the
package's own functions (:func:`costdash._intervals.cp_mover_line`, the default, and
:func:`~costdash._intervals.wilson_mover_line`, the old one), and its coverage of the true
``NE(x) = FNR x + FPR (1 - x)`` is

    sum over k1, k2 of b(k1; P, FNR) b(k2; N, FPR) 1[L(k1, k2) <= NE(x) <= U(k1, k2)].

Both limits rise with FP for most counts, so for each FN the covered FPs form a run found by a
binary search and summed from the binomial CDF; the (few) counts where a limit steps back are
added one by one, so the sum is exact either way. Counts whose probability is below 1e-14 are
left out (the coverage is exact to about 1e-10). The scan: P in {10, 20, 50, 100, 250, 1000}
positives, N = 1,000 negatives, PC(+) in {0.05, 0.10, ..., 0.95}, FNR and FPR each on
``rate_grid()``: 0 to 0.5 in steps of 0.01 (the *mean* is over these, i.e. over the square
[0, 0.5]^2) plus 48 rates from 2e-5 to 0.05 spaced geometrically, where a class expects between
0.02 and 50 errors (the *minimum* is over all of them; this is where the Wilson limits fail).

**Paired difference of two fixed thresholds.** On the rows of one class the two classifiers'
errors fall in four cells (both err, only a, only b, neither) with probabilities
``(pi11, pi10, pi01, pi00)``; the counts are ``Multinomial(n; pi)``. The per-class interval of
``p_a - p_b = pi10 - pi01`` (``discordant-mover``, the default, or Newcombe's) is scanned exactly
over the multinomial for n in {10, 20, 50, 100, 250, 1000}, for every pair of error rates
``p_a >= p_b`` from ``paired_rates(n)`` (0; 0.2, 0.5, 1, 2, 3 and 5 expected errors; 0.05, 0.1,
0.2, 0.5) and three dependence structures: *nested* (b errs only where a errs: the same score at
two thresholds, ``pi11 = p_b``), *independent* (``pi11 = p_a p_b``) and *disjoint*
(``pi11 = 0``). The band of the difference of cost lines combines the positives' and the
negatives' intervals by MOVER; its exact coverage sums over the product of the two classes'
multinomials, for P in {10, ..., 1000} positives, N = 1,000 negatives, every PC(+) above, and
each class's pair of classifiers expecting 0, 0.5, 1 or 3 errors each (nested or independent;
on the negatives either classifier may err more): the sparse counts where combining two
intervals is hardest.

Run ``python studies/fixed_threshold_coverage.py [--out table.md] [--json results.json]
[--quick]``; ``docs/bands.md`` has the command and the tables of the published run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats
from scipy.special import gammaln

try:
    from costdash.bands.edges import PAIRED_INTERVALS
    from costdash._intervals import cp_mover_line, mover_line, wilson_mover_line
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from costdash.bands.edges import PAIRED_INTERVALS
    from costdash._intervals import cp_mover_line, mover_line, wilson_mover_line

POSITIVES = (10, 20, 50, 100, 250, 1000)
NEGATIVES = 1000
PC_VALUES = tuple(round(0.05 * i, 2) for i in range(1, 20))
LEVELS = (0.9, 0.95)
LINE_METHODS: dict[str, Callable[..., tuple[NDArray[np.float64], NDArray[np.float64]]]] = {
    "wilson-mover": wilson_mover_line, "clopper-pearson-mover": cp_mover_line}
"""The old and the new default band of a cost line, by their method names."""
PAIRED_METHODS = ("newcombe-mover", "discordant-mover")
TARGET = {0.9: 0.87, 0.95: 0.93}
"""Issue 24: the smallest acceptable exact coverage at each nominal level."""
TINY = 1e-14
"""Counts less likely than this (for every rate of the grid) are left out of the sums."""


def rate_grid() -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """The error rates scanned and which of them form the even grid the means are taken over."""
    even = np.round(np.linspace(0.0, 0.5, 51), 12)
    rates = np.unique(np.concatenate([even, np.geomspace(2e-5, 0.05, 48)]))
    return rates, np.isin(rates, even)


def _support_max(n: int, rates: NDArray[np.float64]) -> int:
    """Largest count with probability above TINY for some rate of the grid (at most 0.5)."""
    return int(min(n, stats.binom.isf(TINY, n, float(rates.max())) + 2))


# --------------------------------------------------------------------------------------------
# The cost line of one fixed threshold
# --------------------------------------------------------------------------------------------

class LineScan:
    """Exact pointwise coverage of a cost-line band on the rate grid, for one (P, N)."""

    def __init__(self, n_pos: int, n_neg: int, rates: NDArray[np.float64]) -> None:
        self.n_pos, self.n_neg, self.rates = n_pos, n_neg, rates
        self.k1 = np.arange(_support_max(n_pos, rates) + 1)
        self.k2 = np.arange(_support_max(n_neg, rates) + 1)
        self.w1 = stats.binom.pmf(self.k1[None, :], n_pos, rates[:, None])      # (R, K1)
        self.w2 = stats.binom.pmf(self.k2[None, :], n_neg, rates[:, None])      # (R, K2)
        cdf = np.zeros((rates.size, self.k2.size + 1))
        cdf[:, 1:] = np.cumsum(self.w2, axis=1)
        self.cdf2 = cdf                                   # cdf2[j, m] = P(FP < m)
        self.rows = [np.nonzero(self.w1[:, r] > TINY)[0] for r in self.k1]

    def coverage(self, low: NDArray[np.float64], high: NDArray[np.float64], x: float
                 ) -> NDArray[np.float64]:
        """Coverage at every (FNR, FPR) of the grid of the band ``low[k1, k2]``, ``high``."""
        r = self.rates
        theta = x * r[:, None] + (1.0 - x) * r[None, :]
        cov = np.zeros(theta.shape)
        cols = np.arange(r.size)
        for k1, which in zip(self.k1, self.rows):
            if which.size == 0:
                continue
            lo, hi = low[k1], high[k1]
            # Monotone envelopes: {lo_env <= t <= hi_env} is a run of FPs, a subset of the band's
            # own covered set; where a limit steps back the difference is added below.
            lo_env = np.maximum.accumulate(lo)
            hi_env = np.minimum.accumulate(hi[::-1])[::-1]
            t = theta[which]
            first = np.searchsorted(hi_env, t, side="left")
            stop = np.searchsorted(lo_env, t, side="right")
            part = np.maximum(self.cdf2[cols, stop] - self.cdf2[cols, first], 0.0)
            for k2 in np.nonzero((lo < lo_env) | (hi > hi_env))[0]:
                own = (lo[k2] <= t) & (t <= hi[k2])
                env = (lo_env[k2] <= t) & (t <= hi_env[k2])
                part += self.w2[cols, k2] * (own.astype(np.float64) - env)
            cov[which] += self.w1[which, k1][:, None] * part
        return cov

    def band(self, method: str, x: float, level: float
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The method's limits for every (FN, FP) count pair, by the package's own function."""
        return LINE_METHODS[method](x, self.k1[:, None], self.n_pos, self.k2[None, :],
                                    self.n_neg, level)


def line_study(positives: tuple[int, ...] = POSITIVES, pcs: tuple[float, ...] = PC_VALUES,
               levels: tuple[float, ...] = LEVELS) -> dict[str, Any]:
    """Min and mean exact coverage by (method, level, positives, PC(+)), with the worst rates."""
    rates, even = rate_grid()
    out: dict[str, Any] = {}
    for n_pos in positives:
        scan = LineScan(n_pos, NEGATIVES, rates)
        for method in LINE_METHODS:
            for level in levels:
                for x in pcs:
                    low, high = scan.band(method, x, level)
                    cov = scan.coverage(low, high, x)
                    i, j = np.unravel_index(int(np.argmin(cov)), cov.shape)
                    out[f"{method}|{level}|{n_pos}|{x}"] = {
                        "min": float(cov.min()), "mean": float(cov[np.ix_(even, even)].mean()),
                        "worst_fnr": float(rates[i]), "worst_fpr": float(rates[j])}
    return out


# --------------------------------------------------------------------------------------------
# Paired differences
# --------------------------------------------------------------------------------------------

def paired_rates(n: int) -> list[float]:
    """Error rates of the per-class paired scan: sparse (expected counts) and moderate."""
    counts = [lam / n for lam in (0.2, 0.5, 1.0, 2.0, 3.0, 5.0)]
    return sorted({0.0, *(min(v, 0.5) for v in counts), 0.05, 0.1, 0.2, 0.5})


def cells(p_a: float, p_b: float, dependence: str) -> tuple[float, float, float, float]:
    """(pi11, pi10, pi01, pi00) of two classifiers erring with rates p_a, p_b."""
    both = {"nested": min(p_a, p_b), "independent": p_a * p_b,
            "disjoint": max(0.0, p_a + p_b - 1.0)}[dependence]
    p10, p01 = p_a - both, p_b - both
    return both, p10, p01, 1.0 - both - p10 - p01


def _cell_range(n: int, p: float) -> NDArray[np.int64]:
    if p <= 0.0:
        return np.zeros(1, dtype=np.int64)
    lo = int(stats.binom.ppf(TINY, n, p))
    hi = int(stats.binom.isf(TINY, n, p))
    return np.arange(max(lo - 1, 0), min(hi + 1, n) + 1)


def table_slices(n: int, pi: tuple[float, float, float, float]
                 ) -> Iterator[tuple[NDArray[np.int64], NDArray[np.float64]]]:
    """Every table (n11, n10, n01, n00) of Multinomial(n; pi) more likely than TINY, with its
    probability, one n11 at a time (the rest has total mass below 1e-7)."""
    logp = np.log(np.maximum(np.asarray(pi), 1e-300))
    r11, r10, r01 = (_cell_range(n, p) for p in pi[:3])
    b0, c0 = np.meshgrid(r10, r01, indexing="ij")
    for a in r11:
        d0 = n - a - b0 - c0
        ok = (d0 >= 0) if pi[3] > 0.0 else (d0 == 0)
        b, c, d = b0[ok], c0[ok], d0[ok]
        lw = (gammaln(n + 1.0) - gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(c + 1.0)
              - gammaln(d + 1.0) + a * logp[0] + b * logp[1] + c * logp[2] + d * logp[3])
        # A cell of probability 0 only allows a count of 0 (and 0 log 0 = 0).
        for count, p in ((b, pi[1]), (c, pi[2]), (d, pi[3])):
            if p <= 0.0:
                lw = np.where(count > 0, -np.inf, lw)
        keep = lw > np.log(TINY)
        if keep.any():
            yield (np.stack([np.full(int(keep.sum()), a), b[keep], c[keep], d[keep]]),
                   np.exp(lw[keep]))


def tables(n: int, pi: tuple[float, float, float, float]
           ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """All of :func:`table_slices` at once (for the sparse designs, which have few tables)."""
    parts = list(table_slices(n, pi))
    return (np.concatenate([t for t, _ in parts], axis=1),
            np.concatenate([w for _, w in parts]))


def class_interval(method: str, table: NDArray[np.int64], level: float
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The package's interval of ``p_a - p_b`` (errors) from tables of the errors' cells."""
    return PAIRED_INTERVALS[method](*table, level)


def _class_coverage(n: int, pi: tuple[float, float, float, float], truth: float,
                    levels: tuple[float, ...]) -> dict[tuple[str, float], float]:
    """Exact coverage of each paired method's interval for one multinomial."""
    out = dict.fromkeys(((m, lv) for m in PAIRED_METHODS for lv in levels), 0.0)
    # discordant-mover depends on the table through (n10, n01) only: sum the rest out first.
    r10, r01 = _cell_range(n, pi[1]), _cell_range(n, pi[2])
    margin = np.zeros((r10.size, r01.size))
    for table, w in table_slices(n, pi):
        np.add.at(margin, (table[1] - r10[0], table[2] - r01[0]), w)
        for level in levels:
            _, lo, hi = class_interval("newcombe-mover", table, level)
            out[("newcombe-mover", level)] += float(w[(lo <= truth) & (truth <= hi)].sum())
    n10, n01 = np.meshgrid(r10, r01, indexing="ij")
    seen = margin > 0
    pairs = np.stack([np.zeros(int(seen.sum()), np.int64), n10[seen], n01[seen],
                      n - n10[seen] - n01[seen]])
    for level in levels:
        _, lo, hi = class_interval("discordant-mover", pairs, level)
        out[("discordant-mover", level)] = float(margin[seen][(lo <= truth) & (truth <= hi)].sum())
    return out


def paired_class_study(sizes: tuple[int, ...] = POSITIVES, levels: tuple[float, ...] = LEVELS
                       ) -> dict[str, Any]:
    """Exact coverage of each paired method's per-class interval, by class size."""
    out: dict[str, Any] = {}
    for n in sizes:
        rates = paired_rates(n)
        cov: dict[tuple[str, float], list[tuple[float, float, float, str]]] = {}
        for i, p_a in enumerate(rates):
            for p_b in rates[: i + 1]:
                for dep in ("nested", "independent", "disjoint"):
                    got = _class_coverage(n, cells(p_a, p_b, dep), p_a - p_b, levels)
                    for key, value in got.items():
                        cov.setdefault(key, []).append((value, p_a * n, p_b * n, dep))
        for (method, level), values in cov.items():
            worst = min(values)
            out[f"{method}|{level}|{n}"] = {
                "min": worst[0], "mean": float(np.mean([v[0] for v in values])),
                "worst": f"{worst[1]:g} and {worst[2]:g} expected errors, {worst[3]}"}
    return out


def _sparse_configs(n: int, *, both_ways: bool) -> list[tuple[str, tuple[float, ...]]]:
    lams = (0.0, 0.5, 1.0, 3.0)
    out = []
    for la in lams:
        for lb in lams:
            if lb > la and not both_ways:
                continue
            for dep in ("nested", "independent"):
                if dep == "independent" and min(la, lb) == 0.0:
                    continue          # the same table as nested
                out.append((f"{la:g}/{lb:g} {dep}", cells(la / n, lb / n, dep)))
    return out


class _Side:
    """One class's tables (of its errors) and what the MOVER combination needs of them."""

    def __init__(self, n: int, pi: tuple[float, float, float, float]) -> None:
        self.table, self.w = tables(n, pi)
        self.n = n
        self.truth = pi[1] - pi[2]

    def limits(self, method: str, level: float
               ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Estimate, lower and upper distance (both >= 0) of each table."""
        d, lo, hi = class_interval(method, self.table, level)
        return d, d - lo, hi - d


def _combined_coverage(pos: _Side, neg: _Side, method: str, level: float,
                       pcs: NDArray[np.float64]) -> NDArray[np.float64]:
    """Exact coverage at each PC(+) of the MOVER band of ``x d_pos + (1 - x) d_neg``.

    With ``s = x (d1_hat - d1) + (1 - x)(d2_hat - d2)`` the band ``D_hat - hypot(A, B)``,
    ``D_hat + hypot(E, F)`` covers iff ``s <= hypot(A, B)`` and ``-s <= hypot(E, F)``: only one
    side can fail, and for a fixed positive table and a fixed negative estimate (one group of
    negative tables) it fails exactly when the negative table's own distance ``B`` (or ``F``) is
    below a threshold. Grouping the negative tables by their estimate and sorting each group's
    distances turns the double sum into one binary search per (positive table, group, PC(+)).
    """
    d1, a1, e1 = pos.limits(method, level)
    _, b2, f2 = neg.limits(method, level)
    groups, g_of = np.unique(neg.table[1] - neg.table[2], return_inverse=True)
    g_est = groups / neg.n
    # Sorted keys per group: group index + distance / (1 + max distance), so one searchsorted
    # serves every group at once.
    scale = 1.0 + float(max(b2.max(), f2.max()))
    out = np.empty(pcs.size)
    keys_b = g_of + b2 / scale
    keys_f = g_of + f2 / scale
    ob, of = np.argsort(keys_b, kind="stable"), np.argsort(keys_f, kind="stable")
    sb, sf = keys_b[ob], keys_f[of]
    cb = np.concatenate([[0.0], np.cumsum(neg.w[ob])])
    cf = np.concatenate([[0.0], np.cumsum(neg.w[of])])
    g_end_b = np.searchsorted(sb, np.arange(groups.size) + 1.0, side="left")
    g_end_f = np.searchsorted(sf, np.arange(groups.size) + 1.0, side="left")
    g_weight = np.bincount(g_of, weights=neg.w, minlength=groups.size)
    gi = np.arange(groups.size)
    for k, x in enumerate(pcs):
        w = 1.0 - x
        s = x * (d1 - pos.truth)[:, None] + w * (g_est - neg.truth)[None, :]     # (T1, G)
        need_b = np.sqrt(np.maximum(s * s - (x * a1[:, None]) ** 2, 0.0)) / w
        need_f = np.sqrt(np.maximum(s * s - (x * e1[:, None]) ** 2, 0.0)) / w
        # Weight of the group's tables with distance >= need (covered), by side.
        at_b = np.searchsorted(sb, (gi[None, :] + need_b / scale).ravel(), side="left")
        at_f = np.searchsorted(sf, (gi[None, :] + need_f / scale).ravel(), side="left")
        ok_b = np.maximum(cb[np.broadcast_to(g_end_b, s.shape).ravel()] - cb[at_b], 0.0)
        ok_f = np.maximum(cf[np.broadcast_to(g_end_f, s.shape).ravel()] - cf[at_f], 0.0)
        ok_b, ok_f = ok_b.reshape(s.shape), ok_f.reshape(s.shape)
        covered = np.where(s > 0, ok_b, np.where(s < 0, ok_f, g_weight[None, :]))
        out[k] = float(pos.w @ covered.sum(axis=1))
    return out


def paired_combined_study(positives: tuple[int, ...] = POSITIVES,
                          pcs: tuple[float, ...] = PC_VALUES,
                          levels: tuple[float, ...] = LEVELS) -> dict[str, Any]:
    """Exact coverage of the difference band (both classes, MOVER) on the sparse designs."""
    x = np.asarray(pcs, dtype=np.float64)
    negs = [_Side(NEGATIVES, pi) for _, pi in _sparse_configs(NEGATIVES, both_ways=True)]
    out: dict[str, Any] = {}
    for n_pos in positives:
        # The positives' tables are of errors (FN): the band's d1 is FNR_a - FNR_b directly.
        poss = [_Side(n_pos, pi) for _, pi in _sparse_configs(n_pos, both_ways=False)]
        for method in PAIRED_METHODS:
            for level in levels:
                cov = np.array([_combined_coverage(p, q, method, level, x)
                                for p in poss for q in negs])          # (configs, PC)
                for k, pc in enumerate(pcs):
                    out[f"{method}|{level}|{n_pos}|{pc}"] = {
                        "min": float(cov[:, k].min()), "mean": float(cov[:, k].mean())}
    return out


def check_combination(rng: np.random.Generator, n_pos: int = 20, n_neg: int = 50,
                      level: float = 0.9) -> float:
    """Largest gap between the study's coverage and a brute-force double sum (tests use it)."""
    pos = _Side(n_pos, cells(1.5 / n_pos, 0.5 / n_pos, "independent"))
    neg = _Side(n_neg, cells(0.5 / n_neg, 1.0 / n_neg, "nested"))
    pcs = np.sort(rng.uniform(0.05, 0.95, 4))
    gap = 0.0
    for method in PAIRED_METHODS:
        fast = _combined_coverage(pos, neg, method, level, pcs)
        d1, l1, u1 = class_interval(method, pos.table, level)
        d2, l2, u2 = class_interval(method, neg.table, level)
        for k, x in enumerate(pcs):
            low, high = mover_line(x, d1[:, None], l1[:, None], u1[:, None], d2[None, :],
                                   l2[None, :], u2[None, :])
            truth = x * pos.truth + (1 - x) * neg.truth
            inside = (low <= truth) & (truth <= high)
            brute = float(pos.w @ inside @ neg.w)
            gap = max(gap, abs(brute - fast[k]))
    return gap


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

def _cells(results: dict[str, Any], prefix: str, rows: tuple[int, ...],
           pcs: tuple[float, ...]) -> Iterator[str]:
    for n in rows:
        vals = [results[f"{prefix}|{n}|{pc}"] for pc in pcs]
        yield (f"| {n:,} | " + " | ".join(f"{v['min']:.3f} / {v['mean']:.3f}" for v in vals)
               + " |")


def format_tables(line: dict[str, Any], per_class: dict[str, Any], combined: dict[str, Any],
                  positives: tuple[int, ...] = POSITIVES, pcs: tuple[float, ...] = PC_VALUES,
                  levels: tuple[float, ...] = LEVELS) -> str:
    head = "| positives | " + " | ".join(f"{pc:g}" for pc in pcs) + " |"
    rule = "|---|" + "---|" * len(pcs)
    names = {"wilson-mover": "Wilson–MOVER (old default)",
             "clopper-pearson-mover": "Clopper–Pearson–MOVER (default)",
             "newcombe-mover": "Newcombe–MOVER (old default)",
             "discordant-mover": "discordant-pair Clopper–Pearson–MOVER (default)"}
    out = ["### Cost line of a fixed threshold: min / mean exact coverage by positives (N = 1,000 "
           "negatives) and PC(+)", ""]
    summary = ["| method | level | min | worst cell (positives, PC(+), FNR, FPR) | "
               "largest cell mean | mean of all |", "|---|---|---|---|---|---|"]
    for method in LINE_METHODS:
        for level in levels:
            out += [f"**{names[method]}, nominal {level:g}**", "", head, rule]
            out += list(_cells(line, f"{method}|{level}", positives, pcs))
            out.append("")
            cells_ = {k: v for k, v in line.items() if k.startswith(f"{method}|{level}|")}
            worst_key = min(cells_, key=lambda k: cells_[k]["min"])
            w = cells_[worst_key]
            _, _, n, pc = worst_key.split("|")
            summary.append(
                f"| {names[method]} | {level:g} | {w['min']:.3f} | {int(n):,}, {float(pc):g}, "
                f"{w['worst_fnr']:.3g}, {w['worst_fpr']:.3g} | "
                f"{max(v['mean'] for v in cells_.values()):.3f} | "
                f"{np.mean([v['mean'] for v in cells_.values()]):.3f} |")
    out = ["### Summary (cost line)", "", *summary, "", *out]
    out += ["### Paired difference, one class: exact coverage over the multinomial", "",
            "| class size | " + " | ".join(f"{names[m]} {lv:g}: min / mean (worst)"
                                          for m in PAIRED_METHODS for lv in levels) + " |",
            "|---|" + "---|" * (len(PAIRED_METHODS) * len(levels))]
    for n in positives:
        row = [per_class[f"{m}|{lv}|{n}"] for m in PAIRED_METHODS for lv in levels]
        out.append(f"| {n:,} | " + " | ".join(f"{r['min']:.3f} / {r['mean']:.3f} ({r['worst']})"
                                             for r in row) + " |")
    out += ["", "### Difference of two cost lines (both classes, sparse designs): min / mean "
            "exact coverage by positives and PC(+)", ""]
    for method in PAIRED_METHODS:
        for level in levels:
            out += [f"**{names[method]}, nominal {level:g}**", "", head, rule]
            out += list(_cells(combined, f"{method}|{level}", positives, pcs))
            out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the markdown tables here")
    parser.add_argument("--json", help="write the numbers here")
    parser.add_argument("--quick", action="store_true",
                        help="10 and 100 positives, PC(+) 0.1 / 0.5 / 0.9 only (a smoke run)")
    args = parser.parse_args(argv)
    positives, pcs = ((10, 100), (0.1, 0.5, 0.9)) if args.quick else (POSITIVES, PC_VALUES)
    started = time.process_time()
    line = line_study(positives, pcs)
    per_class = paired_class_study(positives)
    combined = paired_combined_study(positives, pcs)
    text = format_tables(line, per_class, combined, positives, pcs)
    text += f"\n\nCPU time: {time.process_time() - started:.0f} s\n"
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"line": line, "paired_class": per_class, "paired_combined": combined},
                      fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
