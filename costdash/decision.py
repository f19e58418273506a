"""A decision to deploy: the chosen classifier and threshold, how far it holds, and a policy.

A production system rarely keeps the conditions it was tuned for: prevalence drifts, costs are
renegotiated. So a decision carries, besides the choice at the given conditions,

* the PC(+) interval over which that choice stays optimal (its piece of the lower envelope), and
  the same interval in p(+) at the given costs;
* a **policy table**: the lower envelope's pieces over the whole PC(+) axis, each with the
  classifier and threshold that is optimal there (paper 000 §3: the envelope is made of the hull
  vertices' cost lines), so a system that monitors prevalence can switch without coming back.

Everything is read off the exact hull and envelope of :func:`costdash.analyze`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from costdash.analysis import Analysis
from costdash.conditions import OperatingCondition
from costdash.costspace import LowerEnvelope

__all__ = ["Decision", "PolicyPiece", "decide", "decision_to_dict", "policy_table",
           "sklearn_snippet"]


@dataclass(frozen=True)
class PolicyPiece:
    """Over ``pc_lo <= PC(+) <= pc_hi``, use ``classifier`` at ``threshold`` (score >=
    threshold is flagged positive; None for the trivial ``all-negative`` / ``all-positive``)."""

    pc_lo: float
    pc_hi: float
    classifier: str
    threshold: float | None
    fpr: float
    tpr: float


@dataclass(frozen=True)
class Decision:
    """The choice under one set of conditions, where it holds, and the policy around it.

    Attributes
    ----------
    condition : OperatingCondition
    classifier : str
    threshold : float or None
        Flag a case positive when its score >= threshold; None for a trivial choice.
    pc, normalized_cost, expected_cost : float
        PC(+) of the conditions, the choice's normalized expected cost and its expected cost per
        case (the constant part of correct decisions included).
    valid_pc : tuple of float
        The PC(+) interval over which this choice stays optimal.
    valid_p_pos : tuple of float
        The same interval as p(+), at the given costs.
    policy : tuple of PolicyPiece
        The envelope's pieces, in order, covering [0, 1].
    """

    condition: OperatingCondition
    classifier: str
    threshold: float | None
    pc: float
    normalized_cost: float
    expected_cost: float
    valid_pc: tuple[float, float]
    valid_p_pos: tuple[float, float]
    policy: tuple[PolicyPiece, ...]


def _threshold(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def policy_table(envelope: LowerEnvelope) -> tuple[PolicyPiece, ...]:
    """The lower envelope's pieces as (PC(+) interval, classifier, threshold), covering [0, 1]."""
    hull = envelope.hull
    return tuple(
        PolicyPiece(pc_lo=float(envelope.pc[k]), pc_hi=float(envelope.pc[k + 1]),
                    classifier=hull.classifier[v], threshold=_threshold(hull.threshold[v]),
                    fpr=float(hull.fpr[v]), tpr=float(hull.tpr[v]))
        for k, v in enumerate(envelope.vertex.tolist()))


def p_pos_at(pc: float, condition: OperatingCondition) -> float:
    """The p(+) that gives PC(+) = ``pc`` at the condition's costs (PC is increasing in p)."""
    a, b = condition.fn_difference, condition.fp_difference
    if pc <= 0.0 or pc >= 1.0:
        return float(min(max(pc, 0.0), 1.0))
    return pc * b / (pc * b + (1.0 - pc) * a)


def decide(analysis: Analysis) -> Decision:
    """The decision an analysis makes at its conditions, with where it holds and the policy.

    Parameters
    ----------
    analysis : Analysis
        From :func:`costdash.analyze` (its hull, envelope and operating point).
    """
    op = analysis.operating_point
    cond = op.condition
    pieces = policy_table(analysis.envelope)
    vertex = op.vertex.index
    own = [k for k, v in enumerate(analysis.envelope.vertex.tolist()) if v == vertex]
    if own:
        lo, hi = pieces[own[0]].pc_lo, pieces[own[-1]].pc_hi
    else:  # not reached for a vertex the slope picks; kept total for safety
        lo = hi = cond.pc
    return Decision(condition=cond, classifier=op.vertex.classifier,
                    threshold=_threshold(op.vertex.threshold), pc=cond.pc,
                    normalized_cost=op.normalized_cost, expected_cost=op.expected_cost,
                    valid_pc=(lo, hi), valid_p_pos=(p_pos_at(lo, cond), p_pos_at(hi, cond)),
                    policy=pieces)


def decision_to_dict(decision: Decision) -> dict:
    """The JSON of ``costdash decide --json`` (and of the API): ``{"decision": {...},
    "policy": [...]}``; no NaN or infinity (a trivial choice's threshold is null)."""
    c = decision.condition
    return {
        "decision": {
            "classifier": decision.classifier, "threshold": decision.threshold,
            "p_pos": c.p_pos, "cost_fn": c.cost_fn, "cost_fp": c.cost_fp,
            "cost_tp": c.cost_tp, "cost_tn": c.cost_tn, "pc": decision.pc,
            "normalized_cost": decision.normalized_cost,
            "expected_cost": decision.expected_cost,
            "valid_pc": list(decision.valid_pc), "valid_p_pos": list(decision.valid_p_pos),
        },
        "policy": [{"pc_lo": p.pc_lo, "pc_hi": p.pc_hi, "classifier": p.classifier,
                    "threshold": p.threshold} for p in decision.policy],
    }


def sklearn_snippet(decision: Decision) -> str:
    """Python that deploys the decision with scikit-learn's ``FixedThresholdClassifier``.

    scikit-learn (1.5 and later, checked against 1.9) flags ``score >= threshold`` there, the
    same rule as costdash's thresholds, so the threshold is used as it is; it must be applied to
    the same score the predictions file holds (``response_method``).
    """
    if decision.threshold is None:
        everything = decision.classifier == "all-positive"
        return ("# No classifier beats the trivial choice here: flag "
                + ("every case." if everything else "no case."))
    return (
        "from sklearn.model_selection import FixedThresholdClassifier\n\n"
        f"# {decision.classifier}: flag a case when its score >= {decision.threshold!r}\n"
        "# (scikit-learn flags score >= threshold too). Use the response_method that produced\n"
        "# the scores in the predictions file (predict_proba, decision_function, ...).\n"
        f"deployed = FixedThresholdClassifier(fitted_{_identifier(decision.classifier)}, "
        f"threshold={decision.threshold!r},\n"
        "                                    response_method=\"predict_proba\")\n"
        f"# Optimal while PC(+) stays in [{decision.valid_pc[0]:.6g}, {decision.valid_pc[1]:.6g}]"
        f", i.e. p(+) in [{decision.valid_p_pos[0]:.6g}, {decision.valid_p_pos[1]:.6g}] at "
        "these costs.")


def _identifier(name: str) -> str:
    text = "".join(ch if ch.isalnum() else "_" for ch in name).strip("_") or "model"
    return text if not text[0].isdigit() else "m_" + text
