"""The per-condition part of a threshold choice by bisection (issue 23: a new condition on the
Threshold choice page reads a few points of each curve, not all of them): the same ROC point
and the same net benefit, bit for bit, as the full scans it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from costdash import OperatingCondition
from costdash.analysis import summarize_classifier
from costdash.choice_summary import _best_point, _net_benefit_at
from costdash.dca import net_benefit_of_roc
from costdash.errors import ParameterError
from costdash.hull import optimal_vertex
from costdash.roc import roc_curve, roc_from_counts


def _roc(seed: int, n: int = 3000, grid: float | None = None):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.2
    s = 1 / (1 + np.exp(-(rng.normal(size=n) + 1.2 * y)))
    if grid is not None:  # ties: many rows on one score
        s = np.round(s / grid) * grid
    return roc_curve(y, s, name=f"m{seed}")


def _brute_best_point(c, condition) -> int:
    """The first ROC point at the condition's best hull vertex, by a scan of every point."""
    v = optimal_vertex(c.hull, condition)
    return int(np.flatnonzero((c.roc.fpr == v.fpr) & (c.roc.tpr == v.tpr))[0])


@pytest.mark.parametrize("grid", [None, 0.05, 0.001])
@pytest.mark.parametrize("seed", range(4))
def test_best_point_is_the_full_scans(seed, grid):
    c = summarize_classifier(_roc(seed, grid=grid))
    rng = np.random.default_rng(100 + seed)
    conditions = [OperatingCondition(float(p), float(fn), 1.0)
                  for p, fn in zip(rng.uniform(0.001, 0.999, 60),
                                   np.exp(rng.uniform(-6, 6, 60)))]
    # Extreme slopes reach the trivial corners (0, 0) and (1, 1).
    conditions += [OperatingCondition(1e-9, 1.0, 1e6), OperatingCondition(1 - 1e-9, 1e6, 1.0)]
    seen = set()
    for cond in conditions:
        got = _best_point(c, cond)
        assert got == _brute_best_point(c, cond)
        seen.add(got)
    assert len(seen) > 5  # the conditions reached many vertices, not one


def test_best_point_of_counted_points_with_repeats():
    """Counted classifiers may repeat a point: the first of them, as the scan gives."""
    roc = roc_from_counts([10, 10, 30, 30, 45], [5, 5, 20, 20, 60], [40, 40, 20, 20, 5],
                          [95, 95, 80, 80, 40], name="counted")
    c = summarize_classifier(roc)
    for p in np.linspace(0.01, 0.99, 50):
        cond = OperatingCondition(float(p), 1.0, 1.0)
        assert _best_point(c, cond) == _brute_best_point(c, cond)


@pytest.mark.parametrize("grid", [None, 0.05])
@pytest.mark.parametrize("seed", range(3))
def test_net_benefit_at_is_net_benefit_of_roc(seed, grid):
    roc = _roc(seed, grid=grid)
    rng = np.random.default_rng(seed)
    # Random pₜ, every threshold of the curve itself (ties at the boundary) and their
    # neighbours one ulp either side, and the ends.
    thr = roc.threshold[1:]
    pts = np.concatenate([rng.uniform(0, 1, 300), thr, np.nextafter(thr, 0),
                          np.nextafter(thr, 1), [0.0, np.nextafter(1.0, 0)]])
    pts = pts[(pts >= 0) & (pts < 1)]
    expected = net_benefit_of_roc(roc, pts)
    got = np.array([_net_benefit_at(roc, float(p)) for p in pts])
    assert np.array_equal(got, expected)  # bit for bit


def test_net_benefit_at_refuses_what_net_benefit_of_roc_refuses():
    roc = _roc(1)
    with pytest.raises(ParameterError, match=r"\[0, 1\)"):
        _net_benefit_at(roc, 1.0)
