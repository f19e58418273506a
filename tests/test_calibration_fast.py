"""The whole-array isotonic fit (issue 23) against the one it replaced.

:func:`costdash.calibration.fit_isotonic` pooled adjacent violators one tie-pooled point at a
time in a Python loop (~0.4 CPU s of a 200,000-score cross-fit); it now pools whole runs at
once and sorts once per cross-fit. ``_reference_fit_isotonic`` below is the former code,
verbatim: the fitted maps, the cross-fitted scores and the calibrated ROC curves must agree
with it to 1e-12 (they differ only in rounding: a block's value is now its sums' quotient, not
a running average).
"""

from __future__ import annotations

import numpy as np
import pytest

from costdash import calibration
from costdash.calibration import (Calibrator, calibrate_classifier, cross_fit, default_folds,
                                  fit_isotonic)
from costdash.dataset import ScoredClassifier


def _reference_fit_isotonic(score, y_true, weight=None) -> Calibrator:
    """costdash.calibration.fit_isotonic before issue 23's session 13 (verbatim but names)."""
    s = np.asarray(score, dtype=np.float64)
    y = np.asarray(y_true, dtype=bool)
    w = np.ones(y.size) if weight is None else np.asarray(weight, dtype=np.float64)
    keep = w > 0
    s, y, w = s[keep], y[keep], w[keep]
    xs, inverse = np.unique(s, return_inverse=True)
    wsum = np.bincount(inverse, weights=w)
    ysum = np.bincount(inverse, weights=w * y)
    means: list[float] = []
    weights: list[float] = []
    sizes: list[int] = []
    for m, v in zip((ysum / wsum).tolist(), wsum.tolist()):
        means.append(m)
        weights.append(v)
        sizes.append(1)
        while len(means) > 1 and means[-2] >= means[-1]:
            v2, v1 = weights.pop(), weights.pop()
            m2, m1 = means.pop(), means.pop()
            k2, k1 = sizes.pop(), sizes.pop()
            means.append((m1 * v1 + m2 * v2) / (v1 + v2))
            weights.append(v1 + v2)
            sizes.append(k1 + k2)
    fitted = np.repeat(np.array(means), np.array(sizes))
    return Calibrator("isotonic", x=xs, y=fitted)


def _reference_cross_fit(score, y_true, fold, weight=None) -> np.ndarray:
    s, y, f = np.asarray(score, float), np.asarray(y_true, bool), np.asarray(fold)
    w = np.ones(y.size) if weight is None else np.asarray(weight, float)
    out = np.empty(s.size)
    for label in np.unique(f):
        held = f == label
        out[held] = _reference_fit_isotonic(s[~held], y[~held], w[~held])(s[held])
    return out


def _data(kind: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < (0.05 if kind != "balanced" else 0.5)
    raw = rng.normal(size=n) + 1.2 * y
    if kind == "ties":
        s = np.round(raw, 1)                          # a few dozen distinct scores, many ties
    elif kind == "ranks":
        s = rng.permutation(n).astype(float)          # scores that say nothing: long pools
    else:
        s = np.round(1 / (1 + np.exp(-(raw - 2))), 6)
    w = None
    if kind == "weights":
        w = rng.gamma(0.7, size=n) * (rng.random(n) < 0.9)   # non-integer, some zero
    return s, y, w


KINDS = ("probabilities", "balanced", "ties", "ranks", "weights")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 2, 7, 300, 20_000])
def test_fit_isotonic_is_the_former_fit(kind, n):
    s, y, w = _data(kind, n, seed=n)
    if w is not None and not np.any(w > 0):
        w[0] = 1.0
    new, old = fit_isotonic(s, y, w), _reference_fit_isotonic(s, y, w)
    assert np.array_equal(new.x, old.x)
    assert np.all(np.diff(new.y) >= 0)
    np.testing.assert_allclose(new.y, old.y, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_cross_fit_isotonic_is_the_former_cross_fit(kind):
    s, y, w = _data(kind, 30_000, seed=3)
    fold = default_folds(y)
    new, old = cross_fit(s, y, fold, "isotonic", w), _reference_cross_fit(s, y, fold, w)
    np.testing.assert_allclose(new, old, rtol=0, atol=1e-12)


@pytest.mark.parametrize("passes", [0, 1, 8, 10_000])
def test_passes_then_stack_give_the_one_fit(monkeypatch, passes):
    """A cascade that whole-array passes pool one step a pass (a heavy high point before a long
    slow rise): the stack alone (0 passes), passes then the stack, and passes alone (10,000)
    give the former fit."""
    n = 2_000
    rise = np.linspace(0.0, 0.9, n - 1)
    # Score 0: one positive of weight n; score i >= 1: mean rise[i - 1], as a negative and a
    # positive of fractional weights.
    s = np.r_[0.0, np.arange(1.0, n), np.arange(1.0, n)]
    y = np.r_[True, np.zeros(n - 1, bool), np.ones(n - 1, bool)]
    w = np.r_[float(n), 1.0 - rise, rise]
    monkeypatch.setattr(calibration, "_PAV_PASSES", passes)
    new, old = fit_isotonic(s, y, w), _reference_fit_isotonic(s, y, w)
    assert np.array_equal(new.x, old.x)
    np.testing.assert_allclose(new.y, old.y, rtol=0, atol=1e-12)
    assert old.y[0] == old.y[500] > old.y[-1] - 1  # the high point pooled far into the rise


def test_calibrated_roc_is_the_former_one():
    """The curve the report and the Curves page show: same points, rates within 1e-12."""
    s, y, _ = _data("probabilities", 50_000, seed=11)
    c = ScoredClassifier("m", y, s)
    new = calibrate_classifier(c, "isotonic")
    fold = default_folds(y)
    old_scores = _reference_cross_fit(s, y, fold)
    from costdash.roc import roc_curve

    old = roc_curve(y, old_scores, name="m")
    assert new.fpr.size == old.fpr.size
    np.testing.assert_allclose(new.fpr, old.fpr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(new.tpr, old.tpr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(new.threshold[1:], old.threshold[1:], rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["platt", "isotonic"])
@pytest.mark.parametrize("kind", ["probabilities", "ties", "ranks"])
def test_kept_maps_give_the_same_curve_to_the_bit(method, kind):
    """A cross-fit's maps, through JSON, calibrate every score to the same bits: the report
    keeps them (a few hundred numbers) instead of the calibrated curve (issue 23)."""
    import json

    s, y, _ = _data(kind, 20_000, seed=5)
    c = ScoredClassifier("m", y, s)
    maps: list = []
    fitted = calibrate_classifier(c, method, maps_out=maps)
    assert [label for label, _ in maps] == [0, 1, 2, 3, 4]
    text = json.dumps(maps)
    assert len(text) < 60_000
    again = calibrate_classifier(c, method, maps=json.loads(text))
    for field in ("tp", "fp", "threshold"):
        assert np.array_equal(getattr(again, field), getattr(fitted, field), equal_nan=True)
    # And not merely the curve of any maps: other maps give another curve.
    other = json.loads(text)
    if method == "platt":
        other[0][1][1] *= 1.5
    else:
        other[0][1][2] = [0.5] * len(other[0][1][2])
    moved = calibrate_classifier(c, method, maps=other)
    assert not np.array_equal(moved.threshold, fitted.threshold)
