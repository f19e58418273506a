"""A choice per segment against the shared one (issue 28, item 4), checked by brute force over
every threshold of every classifier on each segment's rows."""

from __future__ import annotations

import numpy as np
import pytest

from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset, ScoredClassifier
from costdash.errors import ParameterError
from costdash.segments import segment_policy, segment_policy_to_dict


def _data(seed: int = 0, n: int = 1200):
    rng = np.random.default_rng(seed)
    segment = rng.choice(np.array(["north", "south", "west"]), size=n, p=[0.5, 0.3, 0.2])
    base = np.select([segment == "north", segment == "south"], [0.05, 0.3], 0.6)
    y = rng.random(n) < base
    a = np.round(rng.normal(size=n) + 1.5 * y, 2)
    b = np.round(rng.normal(size=n) + 1.0 * y + 0.8 * (segment == "west") * y, 2)
    data = Dataset(source="seg.csv", layout="wide", positive_label="1",
                   scored=(ScoredClassifier("a", y, a), ScoredClassifier("b", y, b)))
    return data, segment


def _cost(y, flagged, cond):
    n_pos, n_neg = y.sum(), (~y).sum()
    tp, fp = np.sum(flagged & y), np.sum(flagged & ~y)
    return (cond.p_pos * ((n_pos - tp) / n_pos * cond.cost_fn + tp / n_pos * cond.cost_tp)
            + (1 - cond.p_pos) * (fp / n_neg * cond.cost_fp + (n_neg - fp) / n_neg
                                  * cond.cost_tn))


def _brute_best(data, mask, cond):
    best = np.inf
    for c in data.scored:
        y, s = c.y_true[mask], c.score[mask]
        for t in [np.inf, *np.unique(s)]:
            best = min(best, _cost(y, s >= t, cond))
    return best


@pytest.mark.parametrize("seed", [0, 1])
def test_each_segment_is_optimal_on_its_rows_and_the_shared_choice_is_priced_there(seed):
    data, segment = _data(seed)
    cond = OperatingCondition(p_pos=data.prevalence, cost_fn=10.0, cost_fp=1.0, cost_tn=0.2)
    policy = segment_policy(data, segment, cond)
    assert [s.segment for s in policy.segments] == list(dict.fromkeys(segment.tolist()))
    shared = data.classifier(policy.shared_classifier)
    for s in policy.segments:
        mask = segment == s.segment
        y = data.scored[0].y_true[mask]
        here = OperatingCondition(p_pos=y.mean(), cost_fn=10.0, cost_fp=1.0, cost_tn=0.2)
        assert (s.n, s.n_pos, s.p_pos) == (mask.sum(), y.sum(), pytest.approx(y.mean()))
        assert s.expected_cost == pytest.approx(_brute_best(data, mask, here), rel=1e-12)
        shared_flags = shared.score[mask] >= policy.shared_threshold
        assert s.shared_expected_cost == pytest.approx(_cost(y, shared_flags, here), rel=1e-12)
        assert s.shared_expected_cost >= s.expected_cost - 1e-12
        assert s.regret_vs_shared == pytest.approx(s.shared_expected_cost - s.expected_cost,
                                                   abs=1e-12)
    total = sum(s.n * s.regret_vs_shared for s in policy.segments) / data.n
    assert policy.saving_per_case == pytest.approx(total)
    assert policy.saving_per_case > 0     # the segments differ enough for it to matter here


def test_a_given_segment_prior_is_used_and_the_json_is_the_contract():
    data, segment = _data(2)
    cond = OperatingCondition(p_pos=0.2, cost_fn=5.0, cost_fp=1.0)
    policy = segment_policy(data, segment, cond, segment_p_pos={"south": 0.01})
    south = next(s for s in policy.segments if s.segment == "south")
    assert south.p_pos == 0.01
    mask = segment == "south"
    here = OperatingCondition(p_pos=0.01, cost_fn=5.0, cost_fp=1.0)
    assert south.expected_cost == pytest.approx(_brute_best(data, mask, here), rel=1e-12)
    rows = segment_policy_to_dict(policy)
    assert {"segment", "n", "p_pos", "classifier", "threshold", "expected_cost",
            "regret_vs_shared"} <= set(rows[0])


def test_bad_segments_are_named():
    data, segment = _data(3)
    cond = OperatingCondition(p_pos=0.2, cost_fn=5.0, cost_fp=1.0)
    with pytest.raises(ParameterError, match="no segment named east"):
        segment_policy(data, segment, cond, segment_p_pos={"east": 0.1})
    with pytest.raises(ParameterError, match="values for 1200 rows"):
        segment_policy(data, segment[:10], cond)
    only_neg = segment.copy()
    y = data.scored[0].y_true
    only_neg[np.flatnonzero(~y)[:3]] = "tiny"
    with pytest.raises(ParameterError, match="segment 'tiny' has no positive rows"):
        segment_policy(data, only_neg, cond)
