"""``costdash decide FILE``: the decision to deploy, where it holds, and the policy table."""

from __future__ import annotations

import argparse

from costdash.analysis import analyze, threshold_text
from costdash.cli import print_json
from costdash.cli.common import (
    add_condition_options,
    add_loader_options,
    load_from_args,
    view_from_args,
)
from costdash.decision import Decision, decide, decision_to_dict, sklearn_snippet

JSON_HELP = """\
JSON: {"decision": {classifier, threshold, p_pos, cost_fn, cost_fp, cost_tp, cost_tn, pc,
normalized_cost, expected_cost, valid_pc [lo, hi], valid_p_pos [lo, hi]}, "policy": [{pc_lo, pc_hi,
classifier, threshold}, ...]}: the policy's pieces cover PC(+) from 0 to 1 in order; trivial
choices are all-negative / all-positive with a null threshold; score >= threshold is positive."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "decide", help="the classifier and threshold to deploy, where they hold, and a policy "
                       "over every PC(+)",
        description="The decision to deploy under the given conditions, the PC(+) and p(+) "
                    "intervals over which it stays optimal, and a policy table for the whole "
                    "PC(+) axis. " + JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="predictions: CSV/TSV (.gz too), Parquet or JSON lines")
    add_condition_options(parser)
    add_loader_options(parser)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    view = view_from_args(args)  # a bad condition is refused before the file is read
    dataset = load_from_args(args)
    decision = decide(analyze(dataset, view.condition(dataset.prevalence)))
    if args.json:
        print_json(decision_to_dict(decision))
    else:
        print(format_decision(decision))
    return 0


def _thr(value: float | None) -> str:
    return "-" if value is None else threshold_text(value)


def format_decision(d: Decision) -> str:
    c = d.condition
    lines = [
        f"Conditions: p(+) = {c.p_pos:.6g}, C(-|+) = {c.cost_fn:g}, C(+|-) = {c.cost_fp:g}"
        + (f", C(+|+) = {c.cost_tp:g}, C(-|-) = {c.cost_tn:g}" if c.cost_tp or c.cost_tn
           else "") + f"; PC(+) = {d.pc:.6g}",
        f"Deploy: {d.classifier}" + ("" if d.threshold is None else
                                      f", flag score >= {_thr(d.threshold)}"),
        f"Expected cost per case: {d.expected_cost:.6g} (normalized {d.normalized_cost:.6g})",
        f"Stays optimal for PC(+) in [{d.valid_pc[0]:.6g}, {d.valid_pc[1]:.6g}], i.e. p(+) in "
        f"[{d.valid_p_pos[0]:.6g}, {d.valid_p_pos[1]:.6g}] at these costs",
        "",
        "Policy over PC(+):",
        f"  {'from':>10} {'to':>10}  {'classifier':<20} threshold",
    ]
    for p in d.policy:
        lines.append(f"  {p.pc_lo:>10.6g} {p.pc_hi:>10.6g}  {p.classifier:<20} {_thr(p.threshold)}")
    lines += ["", "scikit-learn:", sklearn_snippet(d)]
    return "\n".join(lines)
