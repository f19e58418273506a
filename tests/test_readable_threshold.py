"""Thresholds people can read and paste: :func:`costdash.analysis.readable_threshold`.

The shown threshold must flag exactly the cases the exact one flags (no score lies between the
two), be the shortest such decimal (fewest significant digits), and of those the nearest to the
exact threshold. The oracle below shares no code with costdash: it walks the decimal grids of
each exponent with exact fractions and asks whether any number of at most ``d`` significant
digits lands (as the float a deployment parses) strictly above the next score down and at or
below the threshold.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from costdash.analysis import analyze, readable_threshold
from costdash.errors import ParameterError
from costdash.io import load_predictions
from costdash.demo import DEMOS


def significant_digits(text: str) -> int:
    value = Decimal(text)
    return 0 if value == 0 else len(value.normalize().as_tuple().digits)


def decimal_in(low: float, high: float, digits: int) -> bool:
    """Whether a number of at most ``digits`` significant digits has its float in (low, high]
    (``low`` may be -inf). Brute force over the grids m * 10**k, 10**(d-1) <= |m| < 10**d."""
    if low < 0.0 <= high:
        return True                       # 0, no digits at all
    if digits == 0:
        return False
    if math.isinf(low):                   # (-inf, high] with high < 0: -10**k for a k large enough
        return True
    ends = [abs(x) for x in (low, high) if x != 0.0]
    top = math.floor(math.log10(max(ends))) + 1
    bottom = math.floor(math.log10(min(ends))) - 1
    lo, hi = Fraction(low), Fraction(high)
    for lead in range(bottom, top + 1):                # the exponent of the leading digit
        step = Fraction(10) ** (lead - digits + 1)
        first = math.floor(lo / step) + 1              # the smallest m with m * step > low
        last = math.floor(hi / step)                   # the largest m with m * step <= high
        for m in (first, first + 1, last):
            if not (10 ** (digits - 1) <= abs(m) < 10 ** digits) or not first <= m <= last:
                continue
            if low < float(m * step) <= high:
                return True
    return False


def next_lower(scores: np.ndarray, threshold: float) -> float:
    below = scores[scores < threshold]
    return float(below.max()) if below.size else -math.inf


def check(scores: np.ndarray, threshold: float) -> str:
    ordered = np.sort(scores)
    text = readable_threshold(ordered, threshold)
    shown = float(text)
    # Flags exactly the same cases, and lies at or below the exact threshold.
    assert np.array_equal(scores >= shown, scores >= threshold), (text, threshold)
    assert shown <= threshold
    low = next_lower(scores, threshold)
    d = significant_digits(text)
    # Shortest: no number with fewer significant digits flags the same cases ...
    assert d == 0 or not decimal_in(low, threshold, d - 1), (text, low, threshold)
    # ... and of those with as many, none is nearer the exact threshold.
    assert not decimal_in(shown, threshold, d), (text, threshold)
    return text


# --- hand-worked ---------------------------------------------------------------------------------

@pytest.mark.parametrize("scores, threshold, expected", [
    ([0.1, 0.2, 0.4999996, 0.9], 0.4999996, "0.4"),     # the next score down is 0.2
    ([0.1, 0.2, 0.4999996, 0.9], 0.9, "0.9"),
    ([0.35, 0.3999, 0.9], 0.3999, "0.39"),              # 0.3 and 0.4 do not fit in (0.35, 0.3999]
    ([0.1, 0.3, 0.30000000000000004], 0.30000000000000004, "0.30000000000000004"),
    ([0.2, 0.7], 0.2, "0"),                             # nothing below: 0 flags all of them
    ([-5.0, -3.7], -3.7, "-4"),
    ([5.0, 12.0], 12.0, "10"),                          # 1 significant digit, nearest 12
    ([1234.5, 1299.99], 1299.99, "1290"),
    ([1e-9, 1.5e-9], 1.5e-9, "1.4e-9"),                 # written as the page writes numbers
    ([0.5], 0.5, "0"),
    ([0.8], 0.55, "0"),                                 # a threshold that is not a score
])
def test_by_hand(scores, threshold, expected):
    assert check(np.asarray(scores, dtype=float), threshold) == expected


def test_refuses_a_threshold_that_is_not_a_number():
    with pytest.raises(ParameterError, match="finite"):
        readable_threshold([0.1, 0.2], math.nan)


# --- properties ----------------------------------------------------------------------------------

scores_strategy = st.one_of(
    st.lists(st.floats(0, 1), min_size=1, max_size=40),                   # probabilities
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40),
    st.lists(st.integers(0, 1000).map(lambda k: k / 1000), min_size=1, max_size=40),
    # neighbours one ulp apart: only the exact text fits between them
    st.floats(-10, 10).map(lambda x: [x, math.nextafter(x, math.inf), math.nextafter(x, -1e9)]),
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(scores_strategy, st.data())
def test_flags_the_same_cases_and_is_shortest(scores, data):
    scores = np.asarray(scores, dtype=float)
    threshold = float(data.draw(st.sampled_from(sorted(set(scores.tolist())))))
    check(scores, threshold)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=1, max_size=30), st.floats(-100, 100))
def test_any_threshold_not_only_scores(scores, threshold):
    scores = np.asarray(scores, dtype=float)
    assume(np.any(scores >= threshold))
    check(scores, threshold)


def test_demo_hull_thresholds_are_short_and_flag_the_same_cases():
    analysis = analyze(load_predictions(DEMOS["breast-cancer"].path))
    dataset = analysis.dataset
    lengths = []
    for summary, classifier in zip(analysis.classifiers, dataset.scored):
        for t in summary.hull.threshold:
            if not math.isfinite(t):
                continue
            text = summary.readable_threshold(t)
            assert text == check(np.asarray(classifier.score, dtype=float), float(t))
            lengths.append(len(text))
    # Cross-validated model scores carry 16-17 digits; what is shown carries a few.
    assert lengths and max(lengths) <= 8 and np.median(lengths) <= 5
