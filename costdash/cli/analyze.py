"""``costdash analyze FILE``: ROC hull, lower envelope, operating ranges and the best choice."""

from __future__ import annotations

import argparse
import math

from costdash._wording import counted
from costdash.analysis import Analysis, analysis_to_dict, analyze, threshold_text
from costdash.cli import print_json
from costdash.cli.common import (
    add_condition_options,
    add_loader_options,
    load_from_args,
    view_from_args,
)

JSON_HELP = """\
JSON fields: dataset {n, n_pos, n_neg, positive_label, n_folds, source, layout}; classifiers
[{name, auc, roc {fpr, tpr, threshold}, operating_range [lo, hi] | null, cost_area, on_hull,
h_measure, h_measure_beta, brier_score (null when the scores are not in [0, 1]),
threshold_choice {score_driven | rate_driven | fixed | optimal: {pc, cost, expected_loss,
cost_proportion_loss} | null}, threshold_choice_gaps {calibration_loss, rate_loss, fixed_loss,
score_driven_refused, beta, calibration, calibrated_brier_score}}]; hull [{fpr, tpr,
classifier, threshold}] from (0,0) to (1,1); envelope {pc, cost}; operating_point {p_pos,
cost_fn, cost_fp, pc, slope, classifier, threshold, fpr, tpr, normalized_cost, expected_cost}.
--no-threshold-choice leaves out the classifiers' h_measure ... threshold_choice_gaps (faster on
millions of scores; docs/threshold-choice.md)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyze", help="ROC convex hull, cost curves and the best classifier for given conditions",
        description="Analyse the classifiers in a predictions file. " + JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="predictions: CSV/TSV (.gz too), Parquet or JSON lines")
    add_condition_options(parser)
    add_loader_options(parser)
    parser.add_argument("--max-points", type=int, metavar="N",
                        help="thin each ROC curve to at most N points in the output (hull and "
                             "envelope stay exact)")
    group = parser.add_argument_group(
        "beyond the envelope (docs/threshold-choice.md)")
    group.add_argument("--threshold-choice", action="store_true",
                       help="print the H-measure, Brier score and threshold-choice table in the "
                            "readable output too (the JSON always has them)")
    group.add_argument("--no-threshold-choice", action="store_true",
                       help="leave out each classifier's H-measure, Brier score and "
                            "threshold-choice curves (faster on millions of scores)")
    group.add_argument("--h-severity", type=float, metavar="R",
                       help="H-measure severity ratio C(+|-)/C(-|+) at the Beta's mode "
                            "(default n+/n-, as the hmeasure package)")
    group.add_argument("--h-beta", type=float, nargs=2, metavar=("A", "B"),
                       help="H-measure: a Beta(A, B) over the cost proportion instead")
    group.add_argument("--loss-beta", type=float, nargs=2, metavar=("A", "B"),
                       help="expected losses with PC(+) ~ Beta(A, B) (default uniform)")
    group.add_argument("--calibrate", choices=("platt", "isotonic"),
                       help="score-driven curve of the scores calibrated on folds (the data's "
                            "folds, else 5 stratified ones): each example's score mapped by a "
                            "fit on the other folds")
    group.add_argument("--fixed-threshold", type=float, metavar="T",
                       help="the fixed curve's threshold (default: each classifier's own best "
                            "threshold at the given conditions)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run)


def _wants_extras(args: argparse.Namespace) -> bool:
    """The H-measure, Brier score and threshold-choice curves are part of the default JSON
    output (the issue's interface); ``--no-threshold-choice`` leaves them out. The readable
    output adds their table when asked (``--threshold-choice`` or one of its options)."""
    if getattr(args, "no_threshold_choice", False):
        return False
    if getattr(args, "json", False):
        return True
    return bool(getattr(args, "threshold_choice", False) or any(
        getattr(args, name, None) is not None
        for name in ("h_severity", "h_beta", "loss_beta", "fixed_threshold", "calibrate")))


def classifier_extras(result: Analysis, *, h_severity: float | None = None,
                      h_beta: tuple[float, float] | None = None,
                      loss_beta: tuple[float, float] | None = None,
                      fixed_threshold: float | None = None,
                      fixed_thresholds: dict[str, float] | None = None,
                      calibrate: str | None = None,
                      max_points: int | None = None) -> list[dict]:
    """Per classifier (in ``result``'s order): h_measure, brier_score, threshold_choice and
    threshold_choice_gaps, as added to ``analyze --json`` (the dashboard's Threshold choice
    page and its API state the same, :mod:`costdash.choice_summary`)."""
    from costdash.choice_summary import classifier_choice_to_dict, classifier_choices

    items = classifier_choices(result, h_severity=h_severity, h_beta=h_beta, beta=loss_beta,
                               fixed_threshold=fixed_threshold,
                               fixed_thresholds=fixed_thresholds, calibrate=calibrate)
    return [classifier_choice_to_dict(item, max_points=max_points) for item in items]


def run(args: argparse.Namespace) -> int:
    view = view_from_args(args)  # a bad condition is refused before the file is read
    dataset = load_from_args(args)
    result = analyze(dataset, view.condition(dataset.prevalence))
    extras = None
    if _wants_extras(args):
        extras = classifier_extras(result, h_severity=args.h_severity, h_beta=args.h_beta,
                                   loss_beta=args.loss_beta,
                                   fixed_threshold=args.fixed_threshold,
                                   calibrate=args.calibrate, max_points=args.max_points)
    if args.json:
        payload = analysis_to_dict(result, max_points=args.max_points)
        for entry, extra in zip(payload["classifiers"], extras or ()):
            entry.update(extra)
        print_json(payload)
    else:
        print(format_summary(result))
        if extras is not None:
            print()
            print(format_extras(result, extras))
    return 0


def format_extras(result: Analysis, extras: list[dict]) -> str:
    """The readable table of H-measure, Brier score and threshold-choice expected losses."""
    header = (f"{'classifier':<24} {'H':>7} {'Brier':>7} {'optimal':>8} {'score-dr.':>9} "
              f"{'rate-dr.':>8} {'fixed':>7} {'calib. loss':>11}")
    lines = ["Threshold choice: expected normalized cost, PC(+) "
             + ("uniform" if extras and extras[0]["threshold_choice_gaps"]["beta"] == [1.0, 1.0]
                else "~ Beta{}".format(tuple(extras[0]["threshold_choice_gaps"]["beta"])
                                       if extras else "")),
             header, "-" * len(header)]
    if extras and extras[0]["threshold_choice_gaps"]["calibration"]:
        lines.insert(1, "(score-driven: scores calibrated by "
                     f"{extras[0]['threshold_choice_gaps']['calibration']} on folds, each "
                     "fold mapped by a fit on the others)")
    notes = []
    for c, e in zip(result.classifiers, extras):
        tc = e["threshold_choice"]

        def loss(m: str) -> str:
            return "-" if tc[m] is None else f"{tc[m]['expected_loss']:.4f}"

        lines.append(f"{c.name:<24} {e['h_measure']:>7.4f} {_fmt(e['brier_score']):>7} "
                     f"{loss('optimal'):>8} {loss('score_driven'):>9} {loss('rate_driven'):>8} "
                     f"{loss('fixed'):>7} {_fmt(e['threshold_choice_gaps']['calibration_loss']):>11}")
        if e["threshold_choice_gaps"]["score_driven_refused"]:
            notes.append(f"{c.name}: {e['threshold_choice_gaps']['score_driven_refused']}")
    return "\n".join(lines + notes)


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:.{digits}g}"


def _threshold(value: float | None) -> str:
    # The trivial classifiers' thresholds are NaN in the hull: "-" as in the other columns.
    return "-" if value is None or math.isnan(value) else threshold_text(value)


def format_summary(result: Analysis) -> str:
    ds = result.dataset
    op = result.operating_point
    cond = op.condition
    lines = [f"{ds.source}: {counted(ds.n, 'example', spec='')}, {ds.n_pos} positive "
             f"({ds.positive_label!r}), {ds.n_neg} negative"
             + (f", {counted(ds.n_folds, 'fold', spec='')}" if ds.n_folds else ""), ""]
    header = f"{'classifier':<24} {'AUC':>7} {'cost area':>10} {'operating range (PC(+))':>26}  on hull"
    lines += [header, "-" * len(header)]
    for c in result.classifiers:
        rng = ("none" if c.operating_range is None
               else f"[{c.operating_range[0]:.4f}, {c.operating_range[1]:.4f}]")
        lines.append(f"{c.name:<24} {c.roc.auc:>7.4f} {c.cost_area:>10.4f} {rng:>26}  "
                     f"{'yes' if c.name in result.hull.classifier else 'no'}")
    lines += ["", "ROC convex hull (all classifiers):",
              f"{'FPR':>8} {'TPR':>8}  {'classifier':<24} threshold"]
    for f, t, name, thr in zip(result.hull.fpr, result.hull.tpr, result.hull.classifier,
                               result.hull.threshold):
        lines.append(f"{f:>8.4f} {t:>8.4f}  {name:<24} {_threshold(thr)}")
    lines += ["", f"Operating conditions: p(+) = {_fmt(cond.p_pos)}, C(-|+) = {_fmt(cond.cost_fn)}, "
              f"C(+|-) = {_fmt(cond.cost_fp)}  ->  PC(+) = {_fmt(cond.pc)}, slope = {_fmt(cond.slope)}",
              f"Best: {op.vertex.classifier} at threshold {_threshold(op.vertex.threshold)} "
              f"(FPR {op.vertex.fpr:.4f}, TPR {op.vertex.tpr:.4f}); normalized expected cost "
              f"{op.normalized_cost:.4g}, expected cost per example {op.expected_cost:.4g}"]
    return "\n".join(lines)
