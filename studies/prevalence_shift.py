"""How well ``costdash.estimate_prevalence`` and ``costdash.watch`` read p(+) in production.

Design (issue 25): a labelled reference of 5,000 rows at prevalence 0.3; production samples of
1,000 / 10,000 / 100,000 rows at prevalence 0.01, 0.05, 0.2 and 0.5 (labels drawn Bernoulli, the
target is the population prior); two score families:

* ``binormal``: negatives N(0, 1), positives N(1.5, 1): the log-odds are linear in the score, so
  Platt scaling on it is the true calibration;
* ``beta``: negatives Beta(2, 5), positives Beta(5, 2): probabilities whose log-odds are
  3·logit(s) + logit(0.3), linear in the score's log-odds (bcts's shape) but not in the score
  (Platt on the raw score, the default before bcts, was biased at p(+) 0.01).

For every reference set three readings are fitted once (:data:`READINGS`): ``em`` at its default
calibration (bcts); ``acc`` at the threshold the policy deploys at p(+) 0.3 with unit costs; and
the well-calibrated classifier (the same scores mapped to their true posterior at p(+) 0.3, the
same ROC curve) read by ``em`` with ``calibration="none"``; each reads every production sample
at the package's defaults (200 bootstrap replicates, level 0.9). Per design: mean absolute error,
bias, coverage of the nominal 90 % interval and its mean width.

Alerts (at 10,000 rows, unit costs so PC(+) = p(+)): for each set and production prevalence two
deployed choices are watched, the one the policy picks at p(+) 0.3 and the one it picks at the
true prevalence; a watched period counts as *inside* when the true PC(+) lies in the deployed
choice's ``valid_pc`` and *far* when it lies 0.05 or more outside it. The issue asks for alerts
in at most 5 % of inside periods and at least 90 % of far ones.

Run ``nice -n 15 python studies/prevalence_shift.py [--sets 300] [--seed 0] [--workers 6]
[--cache DIR] [--csv FILE]``; the tables go to the CSV file and beside it as markdown (``.md``),
rewritten every 20 sets; the published run and its table are in docs/production.md. Each task of
10 sets has its own random streams for the data and for the bootstrap (seed, task), so the
results do not depend on the number of workers.
"""

from __future__ import annotations

import argparse
import csv
import os
import pickle
import sys
import time
from collections import defaultdict

import numpy as np

try:
    from costdash.analysis import analyze
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from costdash.analysis import analyze
from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset, ScoredClassifier
from costdash.prevalence import reference_model
from costdash.monitor import deployed_choice

FAMILIES = ("binormal", "beta")
SIZES = (1_000, 10_000, 100_000)
PREVALENCES = (0.01, 0.05, 0.2, 0.5)
REFERENCE_N, REFERENCE_PREVALENCE = 5_000, 0.3
LEVEL = 0.9


def scores(family: str, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if family == "binormal":
        return rng.normal(1.5 * y, 1.0)
    return np.where(y, rng.beta(5, 2, y.size), rng.beta(2, 5, y.size))


def posteriors(family: str, s: np.ndarray) -> np.ndarray:
    """The true p(+ | s) at the reference prior: the scores of a well-calibrated classifier with
    the same ROC curve (an increasing map of ``s``)."""
    prior_log_odds = np.log(REFERENCE_PREVALENCE / (1.0 - REFERENCE_PREVALENCE))
    if family == "binormal":
        log_ratio = 1.5 * s - 1.125                       # log N(s; 1.5, 1)/N(s; 0, 1)
    else:
        log_ratio = 3.0 * (np.log(s) - np.log1p(-s))      # log Beta(5, 2)/Beta(2, 5)
    return 1.0 / (1.0 + np.exp(-(log_ratio + prior_log_odds)))


# (scores read, method, calibration): ``em`` at its default (bcts: Platt on the log-odds of
# probability scores, on the score itself otherwise), ``acc``, and ``em`` reading the posteriors
# of the well-calibrated classifier directly. (``em`` with Platt on the raw beta scores, the
# previous default, is in the run published before bcts: docs/production.md.)
READINGS = (("scores", "em", "bcts"), ("scores", "acc", None), ("posteriors", "em", "none"))


CHUNK = 10
"""Sets per task: task ``i`` draws its data and bootstraps from its own streams (seed, i), so the
results do not depend on how many worker processes run the tasks."""


def run(sets: int, seed: int, report=None, workers: int = 1,
        cache: str | None = None) -> tuple[list[dict], list[dict]]:
    """Simulate ``sets`` reference sets per family in tasks of :data:`CHUNK` sets, merged in task
    order; ``report(rows, alert_rows, done)`` is called after every other task. With ``cache``
    (a directory) each task's raw results are kept there and a rerun reads them instead of
    recomputing them (delete the directory after changing the code)."""
    acc: dict = defaultdict(list)
    alerts: dict = defaultdict(list)
    tasks = [(seed, i, min(CHUNK, sets - i * CHUNK), cache)
             for i in range(-(-sets // CHUNK))]
    if workers > 1:
        import multiprocessing
        pool = multiprocessing.get_context("fork").Pool(workers)
        results = pool.imap(_task, tasks)
    else:
        pool, results = None, map(_task, tasks)
    done = 0
    for (_, _, size, _), (acc_i, alerts_i) in zip(tasks, results):
        for key, v in acc_i.items():
            acc[key].extend(v)
        for key, v in alerts_i.items():
            alerts[key].extend(v)
        done += size
        if report is not None and (done % (2 * CHUNK) == 0 or done == sets):
            report(*_tables(acc, alerts), done)
    if pool is not None:
        pool.close()
        pool.join()
    return _tables(acc, alerts)


def _task(task: tuple[int, int, int, str | None]) -> tuple[dict, dict]:
    seed, index, sets, cache = task
    path = None if cache is None else os.path.join(cache, f"seed{seed}-task{index}-{sets}.pkl")
    if path is not None and os.path.exists(path):
        with open(path, "rb") as fh:
            return pickle.load(fh)
    out = _simulate(seed, index, sets)
    if path is not None:
        os.makedirs(cache, exist_ok=True)
        with open(path + ".tmp", "wb") as fh:
            pickle.dump(out, fh)
        os.replace(path + ".tmp", path)
    return out


def _simulate(seed: int, index: int, sets: int) -> tuple[dict, dict]:
    data_rng = np.random.default_rng([seed, index])
    boot_seeds = np.random.SeedSequence([seed, index, 1])
    acc = defaultdict(list)  # (family, scores, n, p, method, calibration) -> [(est, low, high)]
    alerts = defaultdict(list)       # (family, p, deployed, where) -> [alert]
    for _ in range(sets):
        for family in FAMILIES:
            y = data_rng.random(REFERENCE_N) < REFERENCE_PREVALENCE
            ref = ScoredClassifier("m", y, scores(family, y, data_rng))
            data = Dataset("reference", "wide", "1", scored=(ref,))
            analysis = analyze(data, OperatingCondition(REFERENCE_PREVALENCE))
            planned = analysis.operating_point.vertex
            calibrated = ScoredClassifier("m", y, posteriors(family, ref.score))
            models = {}
            for kind, method, calibration in READINGS:
                rng = np.random.default_rng(boot_seeds.spawn(1)[0])
                if method == "acc":
                    models[kind, method, calibration] = reference_model(
                        ref, method="acc", threshold=float(planned.threshold), rng=rng)
                else:
                    models[kind, method, calibration] = reference_model(
                        calibrated if kind == "posteriors" else ref, method="em",
                        calibration=calibration, rng=rng)
            for n in SIZES:
                for p in PREVALENCES:
                    yp = data_rng.random(n) < p
                    prod = scores(family, yp, data_rng)
                    for (kind, name, calibration), model in models.items():
                        est = model.estimate(posteriors(family, prod) if kind == "posteriors"
                                             else prod, level=LEVEL)
                        acc[(family, kind, n, p, name, calibration)].append(
                            (est.p_pos, est.low, est.high))
                        if (kind, name, calibration) != ("scores", "em", "bcts") or n != 10_000:
                            continue
                        # Unit costs: PC(+) = p(+), so the estimate's interval is the PC one.
                        at_truth = analysis.envelope.vertex_at(p)
                        hull = analysis.hull
                        for label, (clf, thr) in (
                                ("planned at p(+) 0.3", (planned.classifier,
                                                         float(planned.threshold))),
                                ("chosen at the true p(+)", (hull.classifier[int(at_truth)],
                                                             float(hull.threshold[int(at_truth)])))):
                            dep = deployed_choice(analysis, clf, thr)
                            lo_v, hi_v = dep.valid_pc if dep.valid_pc else (np.nan, np.nan)
                            if lo_v <= p <= hi_v:
                                where = "inside"
                            elif p <= lo_v - 0.05 or p >= hi_v + 0.05:
                                where = "far"
                            else:
                                continue
                            alert = dep.valid_pc is None or est.high < lo_v or est.low > hi_v
                            alerts[(family, p, label, where)].append(alert)
    return dict(acc), dict(alerts)


def _tables(acc: dict, alerts: dict) -> tuple[list[dict], list[dict]]:
    rows = []
    for (family, kind, n, p, method, calibration), v in acc.items():
        a = np.array(v)
        rows.append({"family": family, "scores": kind, "n_production": n, "prevalence": p,
                     "method": method, "calibration": calibration or "",
                     "sets": len(v), "mae": float(np.mean(np.abs(a[:, 0] - p))),
                     "bias": float(np.mean(a[:, 0] - p)),
                     "coverage": float(np.mean((a[:, 1] <= p) & (p <= a[:, 2]))),
                     "mean_width": float(np.mean(a[:, 2] - a[:, 1]))})
    alert_rows = [{"family": f, "prevalence": p, "deployed": d, "truth": w, "periods": len(v),
                   "alert_rate": float(np.mean(v))} for (f, p, d, w), v in alerts.items()]
    return rows, alert_rows


def markdown(rows: list[dict], alert_rows: list[dict]) -> str:
    out = ["| family | read | production rows | p(+) | method | sets | MAE | bias "
           "| coverage (90 %) | mean width |", "|---|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["family"], r["scores"], r["method"],
                                         r["calibration"], r["n_production"], r["prevalence"])):
        name = r["method"] + (f" ({r['calibration']})" if r["calibration"] else "")
        out.append(f"| {r['family']} | {r['scores']} | {r['n_production']:,} | "
                   f"{r['prevalence']} | {name} | {r['sets']} | {r['mae']:.4f} | {r['bias']:+.4f} | "
                   f"{r['coverage']:.3f} | {r['mean_width']:.4f} |")
    out += ["", "| scores | p(+) | deployed | true PC(+) | periods | alert rate |",
            "|---|---:|---|---|---:|---:|"]
    for r in sorted(alert_rows, key=lambda r: (r["family"], r["truth"], r["prevalence"],
                                               r["deployed"])):
        out.append(f"| {r['family']} | {r['prevalence']} | {r['deployed']} | {r['truth']} | "
                   f"{r['periods']} | {r['alert_rate']:.3f} |")
    for where in ("inside", "far"):
        for fam in FAMILIES:
            v = [r for r in alert_rows if r["truth"] == where and r["family"] == fam]
            n = sum(r["periods"] for r in v)
            if n:
                rate = sum(r["alert_rate"] * r["periods"] for r in v) / n
                out.append(f"\n{fam}, true PC(+) {where}: alert in {rate:.3f} of {n} periods")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=300, help="reference sets per family")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1,
                        help="processes (the results do not depend on it)")
    parser.add_argument("--cache", default=None,
                        help="directory keeping each task's raw results, so that an interrupted "
                             "run resumes")
    parser.add_argument("--csv", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "prevalence_shift.csv"))
    args = parser.parse_args(argv)
    start, wall = time.process_time(), time.perf_counter()

    def cpu() -> str:
        # Worker processes' CPU counts once they have ended (os.times of reaped children).
        times = os.times()
        return (f"{time.process_time() - start + times.children_user + times.children_system:.0f}"
                f" s of CPU (with ended workers), {time.perf_counter() - wall:.0f} s elapsed")

    def write(rows: list[dict], alert_rows: list[dict], done: int) -> None:
        # Written after every 20 sets, so that an interrupted run leaves its partial tables.
        with open(args.csv, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=[
                "table", "family", "scores", "n_production", "prevalence", "method",
                "calibration", "deployed", "truth",
                "sets", "mae", "bias", "coverage", "mean_width", "periods", "alert_rate"])
            writer.writeheader()
            for r in rows:
                writer.writerow({"table": "estimate", **r})
            for r in alert_rows:
                writer.writerow({"table": "alert", **r})
        with open(os.path.splitext(args.csv)[0] + ".md", "w", encoding="utf-8") as fh:
            fh.write(markdown(rows, alert_rows)
                     + f"\n\n{done} of {args.sets} sets per family done, seed {args.seed}, "
                     f"{cpu()}\n")

    rows, alert_rows = run(args.sets, args.seed, write, args.workers, args.cache)
    print(markdown(rows, alert_rows))
    print(f"\n{args.sets} sets per family, seed {args.seed}, "
          f"{cpu()}")


if __name__ == "__main__":
    main()
