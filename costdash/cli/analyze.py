"""``costdash analyze FILE``: ROC hull, lower envelope, operating ranges and the best choice."""

from __future__ import annotations

import argparse
import math

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
[{name, auc, roc {fpr, tpr, threshold}, operating_range [lo, hi] | null, cost_area, on_hull}]; hull [{fpr, tpr,
classifier, threshold}] from (0,0) to (1,1); envelope {pc, cost}; operating_point {p_pos,
cost_fn, cost_fp, pc, slope, classifier, threshold, fpr, tpr, normalized_cost, expected_cost}."""


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
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    view = view_from_args(args)  # a bad condition is refused before the file is read
    dataset = load_from_args(args)
    result = analyze(dataset, view.condition(dataset.prevalence))
    if args.json:
        print_json(analysis_to_dict(result, max_points=args.max_points))
    else:
        print(format_summary(result))
    return 0


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
    lines = [f"{ds.source}: {ds.n} examples, {ds.n_pos} positive ({ds.positive_label!r}), "
             f"{ds.n_neg} negative" + (f", {ds.n_folds} folds" if ds.n_folds else ""), ""]
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
