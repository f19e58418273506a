"""``costdash decide FILE``: the decision to deploy, where it holds, and the policy table."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from costdash._wording import counted
from costdash.analysis import analyze, threshold_text
from costdash.cli import print_json
from costdash.cli.common import (
    add_condition_options,
    add_loader_options,
    load_from_args,
    view_from_args,
)

if TYPE_CHECKING:
    from costdash.decision import Decision
    from costdash.segments import SegmentPolicy

JSON_HELP = """\
JSON: {"decision": {classifier, threshold, p_pos, cost_fn, cost_fp, cost_tp, cost_tn, pc,
normalized_cost, expected_cost, valid_pc [lo, hi], valid_p_pos [lo, hi]}, "policy": [{pc_lo, pc_hi,
classifier, threshold}, ...]}: the policy's pieces cover PC(+) from 0 to 1 in order; trivial
choices are all-negative / all-positive with a null threshold; score >= threshold is positive.
With --p-pos-range / --cost-fn-range / --cost-fp-range (the box; a range not given is the
condition's value) also "robust": {"minimax_regret": {classifier, threshold, max_regret, fpr, tpr,
worst_condition}, "bayes": {classifier, threshold, expected_cost, fpr, tpr, max_regret}, "box",
"volume", "switching": {worth_it, tolerance, expected_saving, optimal_choices}}; money per period
of --volume cases (docs/threshold-choice.md).
With --segment-column COL also "decision": {..., "segments": [{segment, n, p_pos, classifier,
threshold, expected_cost, regret_vs_shared, shared_expected_cost}, ...], "segment_column",
"segment_saving_per_case"}: per segment (in order of first appearance) the optimal classifier and
threshold on its rows at its p(+) (its prevalence unless --segment-p-pos SEG=P) and the shared
costs, and what keeping the shared decision costs more there per case."""


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
    group = parser.add_argument_group(
        "uncertain conditions (a box of ranges; docs/threshold-choice.md)")
    group.add_argument("--p-pos-range", type=float, nargs=2, metavar=("LO", "HI"),
                       help="range of p(+)")
    group.add_argument("--cost-fn-range", type=float, nargs=2, metavar=("LO", "HI"),
                       help="range of C(-|+), the cost of a false negative")
    group.add_argument("--cost-fp-range", type=float, nargs=2, metavar=("LO", "HI"),
                       help="range of C(+|-), the cost of a false positive")
    group.add_argument("--volume", type=float, metavar="N",
                       help="cases per period for the robust choices' money figures "
                            "(default 1000, as the dashboard)")
    group.add_argument("--regret-tolerance", type=float, default=0.0, metavar="MONEY",
                       help="worst-case regret per period a fixed choice may have before "
                            "switching by condition is called worth it (default 0)")
    group = parser.add_argument_group(
        "segments (a threshold per region, product, site ...; wide layout)")
    group.add_argument("--segment-column", metavar="COL",
                       help="column of each row's segment: also choose per segment and price "
                            "the shared decision on each")
    group.add_argument("--segment-p-pos", nargs="+", action="extend", type=_segment_p_pos,
                       metavar="SEG=P",
                       help="p(+) of a segment (default: its prevalence in the file), e.g. "
                            "--segment-p-pos north=0.02 south=0.1")
    group = parser.add_argument_group(
        "MLflow (pip install mlflow-skinny; MLFLOW_TRACKING_URI says where)")
    group.add_argument("--mlflow", action="store_true",
                       help="log the decision: conditions as params, costs as metrics, the "
                            "decision JSON and policy table as artifacts")
    group.add_argument("--run-id", metavar="ID", help="log into this run (default: a new one)")
    group.add_argument("--experiment", metavar="NAME", help="the new run's experiment")
    group.add_argument("--model-uri", metavar="URI",
                       help="also log a model that flags score >= threshold on this logged "
                            "scikit-learn model's predict_proba (e.g. runs:/<run>/model)")
    group.add_argument("--register", metavar="NAME",
                       help="register that model under NAME (needs --model-uri)")
    add_loader_options(parser)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run)


def _mlflow_options_check(args: argparse.Namespace) -> None:
    from costdash.errors import ParameterError

    used = [f"--{name.replace('_', '-')}" for name in ("run_id", "experiment", "model_uri",
                                                       "register")
            if getattr(args, name, None)]
    if used and not args.mlflow:
        raise ParameterError(f"{', '.join(used)} only apply with --mlflow")


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: `costdash --help` must not pay for scipy (issue 23).
    from costdash.decision import decide, decision_to_dict
    from costdash.robust import ConditionBox, robust_choice, robust_to_dict

    view = view_from_args(args)  # a bad condition is refused before the file is read
    segment_p_pos = _segment_priors(args)  # and so are bad segment options
    _mlflow_options_check(args)
    dataset = load_from_args(args)
    analysis = analyze(dataset, view.condition(dataset.prevalence))
    decision = decide(analysis)
    policy = None
    if dataset.segments is not None:
        from costdash.segments import segment_policy

        policy = segment_policy(dataset, dataset.segments.values, decision.condition,
                                segment_p_pos=segment_p_pos)
    robust = None
    ranges = (args.p_pos_range, args.cost_fn_range, args.cost_fp_range)
    if any(r is not None for r in ranges):
        box = ConditionBox.around(decision.condition, *(None if r is None else tuple(r)
                                                        for r in ranges))
        robust = robust_to_dict(robust_choice(analysis, box, volume=view.volume,
                                              tolerance=args.regret_tolerance))
    logged = None
    if args.mlflow:
        from costdash.mlflow_decision import log_decision

        logged = log_decision(decision, run_id=args.run_id, experiment=args.experiment,
                              model_uri=args.model_uri, registered_model_name=args.register)
    if args.json:
        payload = decision_to_dict(decision)
        if policy is not None:
            from costdash.segments import segment_policy_to_dict

            assert dataset.segments is not None
            payload["decision"].update(segments=segment_policy_to_dict(policy),
                                       segment_column=dataset.segments.column,
                                       segment_saving_per_case=policy.saving_per_case)
        if robust is not None:
            payload["robust"] = robust
        if logged is not None:
            payload["mlflow"] = {"run_id": logged.run_id,
                                 "experiment_id": logged.experiment_id,
                                 "model_uri": logged.model_uri,
                                 "registered_version": logged.registered_version}
        print_json(payload)
    else:
        print(format_decision(decision))
        if policy is not None:
            assert dataset.segments is not None
            print()
            print(format_segments(policy, dataset.segments.column))
        if robust is not None:
            print()
            print(format_robust(robust))
        if logged is not None:
            print(f"\nlogged to MLflow run {logged.run_id}"
                  + (f"; model {logged.model_uri}" if logged.model_uri else ""))
    return 0


def _segment_p_pos(text: str) -> tuple[str, float]:
    """One ``--segment-p-pos`` value, ``SEG=P``: the segment (text, may hold "=") and its p(+)."""
    segment, sep, number = text.rpartition("=")
    segment = segment.strip()
    if not sep or not segment:
        raise argparse.ArgumentTypeError(f"expected SEG=P (a segment, '=', its p(+)), e.g. "
                                         f"north=0.02; got {text!r}")
    try:
        p = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"p(+) of segment {segment!r} is not a number: "
                                         f"{number.strip()!r}") from None
    if not 0.0 < p < 1.0:  # also refuses NaN
        raise argparse.ArgumentTypeError(f"p(+) of segment {segment!r} must be a number "
                                         f"strictly between 0 and 1; got {number.strip()!r}")
    return segment, p


def _segment_priors(args: argparse.Namespace) -> dict[str, float]:
    """The ``--segment-p-pos`` values by segment; a segment given twice is a mistake."""
    from costdash.errors import ParameterError

    given: dict[str, float] = {}
    for segment, p in args.segment_p_pos or ():
        if segment in given and given[segment] != p:
            raise ParameterError(f"--segment-p-pos gives segment {segment!r} two values, "
                                 f"{given[segment]:g} and {p:g}")
        given[segment] = p
    if given and args.segment_column is None:
        raise ParameterError("--segment-p-pos needs --segment-column (the column of segments)")
    return given


def format_segments(policy: SegmentPolicy, column: str) -> str:
    """The choice per segment as a table, then the saving of choosing per segment."""
    shared = policy.shared_classifier + ("" if policy.shared_threshold is None else
                                         f" >= {_thr(policy.shared_threshold)}")
    width = max(10, *(len(s.segment) for s in policy.segments))
    name_width = max(10, *(len(s.classifier) for s in policy.segments))
    lines = [f"Per segment (column {column!r}), at the costs above and each segment's p(+); "
             f"shared decision: {shared}",
             f"  {'segment':<{width}} {'n':>8} {'p(+)':>9}  {'classifier':<{name_width}} "
             f"{'threshold':>10} {'cost/case':>10} {'shared':>10} {'regret':>10}"]
    for s in policy.segments:
        lines.append(f"  {s.segment:<{width}} {s.n:>8} {s.p_pos:>9.4g}  "
                     f"{s.classifier:<{name_width}} {_thr(s.threshold):>10} "
                     f"{s.expected_cost:>10.4g} {s.shared_expected_cost:>10.4g} "
                     f"{s.regret_vs_shared:>10.4g}")
    lines.append(f"A decision per segment saves {policy.saving_per_case:.4g} per case on "
                 "average against the shared one (regret: shared minus own cost per case).")
    return "\n".join(lines)


def format_robust(robust: dict) -> str:
    """The robust choices as text, then the ``robust: {...}`` line the JSON holds."""
    mm, by, sw = robust["minimax_regret"], robust["bayes"], robust["switching"]
    box, vol = robust["box"], robust["volume"]
    lines = [
        f"Over the box p(+) in [{box['p_pos'][0]:g}, {box['p_pos'][1]:g}], C(-|+) in "
        f"[{box['cost_fn'][0]:g}, {box['cost_fn'][1]:g}], C(+|-) in [{box['cost_fp'][0]:g}, "
        f"{box['cost_fp'][1]:g}], per {counted(vol, 'case', spec='g')}:",
        f"  Minimax regret: {mm['classifier']}" + ("" if mm["threshold"] is None else
                                                   f", flag score >= {_thr(mm['threshold'])}")
        + f"; worst-case regret {mm['max_regret']:.6g}",
        f"  Bayes (uniform over the box): {by['classifier']}" + (
            "" if by["threshold"] is None else f", flag score >= {_thr(by['threshold'])}")
        + f"; expected cost {by['expected_cost']:.6g}, worst-case regret {by['max_regret']:.6g}",
        f"  Switching by condition (policy table, {counted(len(sw['optimal_choices']), 'choice')} in the "
        f"box) saves {sw['expected_saving']:.4g} on average over the Bayes choice; "
        + ("worth it: no fixed choice keeps the worst-case regret within "
           f"{sw['tolerance']:g}" if sw["worth_it"] else "not needed: one fixed choice is "
           f"within {sw['tolerance']:g} everywhere"),
        "robust: " + json.dumps({"minimax_regret": {k: mm[k] for k in ("classifier", "threshold",
                                                                         "max_regret")},
                                 "bayes": {k: by[k] for k in ("classifier", "threshold",
                                                              "expected_cost")}}),
    ]
    return "\n".join(lines)


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
    from costdash.decision import sklearn_snippet

    lines += ["", "scikit-learn:", sklearn_snippet(d)]
    return "\n".join(lines)
