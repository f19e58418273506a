"""Where the error of ``em`` at 10,000 production rows and p(+) 0.5 comes from (issue 25).

The design of ``studies/prevalence_shift.py`` (reference 5,000 rows at prevalence 0.3, binormal
scores N(0, 1) / N(1.5, 1), production 10,000 rows at p(+) 0.5, labels drawn Bernoulli), point
estimates only (no interval), each estimator on the same sets:

* ``true posteriors, pi 0.3``: EM on the true p(+ | s) at the true prior 0.3: the error the
  production sample alone leaves (an oracle);
* the same with the production's labels fixed at exactly 5,000 / 5,000 (``fixed``);
* ``Platt``: what costdash's ``em`` does on the raw scores (Platt fitted on the reference, pi the
  mean cross-fitted posterior; bcts is Platt on these scores);
* ``joint MLE``: the semiparametric maximum likelihood that also lets the production sample
  inform the calibration (the log-odds a + b s of the reference's classes, the negatives'
  distribution left free: the profile empirical likelihood of the three samples, maximised by
  Nelder-Mead; slow, so fewer sets): is ``em`` on a reference-fitted map wasting information?
* the well-calibrated classifier (scores = true posteriors at 0.3, ``calibration="none"``) with
  pi taken as the reference prevalence, as the mean reference posterior (what costdash does), or
  known (0.3).

Run ``nice -n 15 python studies/prevalence_error_sources.py [--sets 400] [--joint-sets 100]``.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from scipy.optimize import brentq, minimize
from scipy.special import expit, logit

try:
    from costdash.prevalence import em_prevalence, reference_model
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from costdash.prevalence import em_prevalence, reference_model
from costdash.dataset import ScoredClassifier

N_REF, PI, N_PROD, P = 5_000, 0.3, 10_000, 0.5


def posterior(s: np.ndarray) -> np.ndarray:
    return expit(1.5 * s - 1.125 + logit(PI))


def joint_mle(neg: np.ndarray, pos: np.ndarray, prod: np.ndarray, start: np.ndarray) -> float:
    """q maximising the profile empirical likelihood of f- (free), f+ = f- exp(a + b s) and the
    production mixture q f+ + (1 - q) f- (Qin 1999's construction for three samples)."""
    x = np.r_[neg, pos, prod]
    n = x.size

    def loss(theta: np.ndarray) -> float:
        a, b, lq = theta
        q = expit(lq)
        u = np.exp(np.clip(a + b * x, -50, 50)) - 1.0
        lam = brentq(lambda v: np.sum(u / (n + v * u)), -n / u.max() * (1 - 1e-12),
                     n / -u.min() * (1 - 1e-12), xtol=1e-12)
        return float(np.sum(np.log(n + lam * u)) - np.sum(a + b * pos)
                     - np.sum(np.log(1 - q + q * np.exp(a + b * prod))))

    res = minimize(loss, start, method="Nelder-Mead",
                   options=dict(xatol=1e-7, fatol=1e-9, maxiter=4000))
    return float(expit(res.x[2]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=400)
    parser.add_argument("--joint-sets", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    err: dict[str, list[float]] = {}
    for k in range(args.sets):
        y = rng.random(N_REF) < PI
        s = rng.normal(1.5 * y, 1.0)
        yp = rng.random(N_PROD) < P
        sp = rng.normal(1.5 * yp, 1.0)
        sf = rng.normal(1.5 * (np.arange(N_PROD) < N_PROD * P), 1.0)
        model = reference_model(ScoredClassifier("m", y, s), resamples=1)
        a, b = model.fit.platt[0]
        pi = float(model.fit.prior[0])
        got = {
            "true posteriors, pi 0.3": em_prevalence(posterior(sp), PI),
            "true posteriors, pi 0.3, fixed": em_prevalence(posterior(sf), PI),
            "Platt (costdash em)": em_prevalence(expit(a * sp + b), pi),
            "Platt (costdash em), fixed": em_prevalence(expit(a * sf + b), pi),
            "calibrated scores, pi = reference prevalence": em_prevalence(posterior(sp),
                                                                           y.mean()),
            "calibrated scores, pi = mean reference posterior (costdash none)":
                em_prevalence(posterior(sp), float(posterior(s).mean())),
        }
        if k < args.joint_sets:
            got["Platt, same sets as joint MLE"] = got["Platt (costdash em)"]
            e = got["Platt (costdash em)"]
            start = np.array([b - logit(y.mean()), a, logit(min(max(e, 1e-3), 1 - 1e-3))])
            got["joint MLE"] = joint_mle(s[~y], s[y], sp, start)
        for name, v in got.items():
            err.setdefault(name, []).append(v - P)
    print("| estimator | sets | MAE | bias | SD |\n|---|---:|---:|---:|---:|")
    for name, v in err.items():
        e = np.array(v)
        print(f"| {name} | {e.size} | {np.mean(np.abs(e)):.4f} | {e.mean():+.4f} | "
              f"{e.std():.4f} |")


if __name__ == "__main__":
    main()
