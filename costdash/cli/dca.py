"""``costdash dca FILE``: decision curves (net benefit against threshold probability)."""

from __future__ import annotations

import argparse
import sys

from costdash.cli import print_json
from costdash.cli.common import add_loader_options, load_from_args
from costdash.errors import ParameterError

JSON_HELP = """\
JSON: {"thresholds": [...], "net_benefit": {"<model>": [...] | null, "all": [...], "none": [...]}}
(plus "refused": {"<model>": reason} for models whose scores are not in [0, 1], whose curve is
null). Net benefit = TP/n - FP/n * pt/(1 - pt), a case flagged when its score >= pt; the threshold
probability pt is the cost ratio C(+|-)/C(-|+) = pt/(1 - pt) (docs/threshold-choice.md)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dca", help="decision curves: net benefit of each model, treat-all and treat-none",
        description="Decision curve analysis of the classifiers in a predictions file. "
                    + JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="predictions: CSV/TSV (.gz too), Parquet or JSON lines")
    parser.add_argument("--thresholds", metavar="START:STOP:STEP", default=None,
                        help="threshold probabilities, STOP included when on the grid "
                             "(default 0.01:0.99:0.01)")
    parser.add_argument("--calibrate", choices=("platt", "isotonic"),
                        help="decision curves of the scores calibrated on folds (the data's "
                             "folds, else 5 stratified ones), each fold mapped by a fit on the "
                             "others")
    add_loader_options(parser)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: `costdash --help` must not pay for scipy (issue 23).
    from costdash.dca import (
        decision_curves_of_rocs,
        decision_curves_to_dict,
        parse_thresholds,
        threshold_grid,
    )
    from costdash.roc import roc_of

    thresholds = threshold_grid() if args.thresholds is None else parse_thresholds(args.thresholds)
    dataset = load_from_args(args)
    if not dataset.scored:
        raise ParameterError(f"{dataset.source}: decision curves need scores; a counts file "
                             f"has none")
    if args.calibrate is None:
        rocs = [roc_of(c) for c in dataset.scored]
    else:
        from costdash.calibration import calibrate_classifier

        rocs = [calibrate_classifier(c, args.calibrate) for c in dataset.scored]
    curves = decision_curves_of_rocs(rocs, thresholds)
    if args.json:
        print_json(decision_curves_to_dict(curves))
    else:
        print(format_curves(curves))
    for name, reason in curves.refused.items():
        print(f"costdash: note: {name}: {reason}", file=sys.stderr)
    return 0


def format_curves(curves) -> str:
    names = [n for n, v in curves.net_benefit.items() if v is not None]
    # Every column as wide as the longest name: names are shown whole, values stay aligned.
    width = max([12, *(len(n) for n in names)])
    header = f"{'p_t':>6} " + " ".join(f"{n:>{width}}" for n in [*names, "all", "none"])
    lines = [f"Net benefit per case (prevalence {curves.prevalence:.4g}); flag score >= p_t",
             header, "-" * len(header)]
    for i, pt in enumerate(curves.thresholds.tolist()):
        row = [curves.net_benefit[n][i] for n in names] + [curves.treat_all[i],
                                                            curves.treat_none[i]]
        lines.append(f"{pt:>6.3g} " + " ".join(f"{v:>{width}.5f}" for v in row))
    return "\n".join(lines)
