"""``costdash watch REFERENCE PRODUCTION``: p(+) estimated per production period, and whether
the deployed choice is still optimal there (issue 25)."""

from __future__ import annotations

import argparse
import math
import sys

from costdash.cli import print_json
from costdash.cli.common import add_loader_options, load_from_args
from costdash.errors import ParameterError

JSON_HELP = """\
JSON: {"method", "level", "deployed": {classifier, threshold}, "periods": [{period, n, p_pos,
p_pos_low, p_pos_high, pc, pc_low, pc_high, "choice": {classifier, threshold}, deployed_optimal,
regret_per_period, alert}], "notes": [...]}; period as given in the file ("all" without
--period-column); regret in the costs' units over the period's cases; alert when the whole PC(+)
interval has left the deployed choice's range (docs/production.md)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "watch", help="estimate p(+) per production period from unlabelled scores and say when "
                      "the deployed choice stops being optimal",
        description="Estimate the class prior p(+) of each production period from the deployed "
                    "classifier's unlabelled scores, with an interval, and read the policy "
                    "table of the labelled REFERENCE there. " + JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", metavar="REFERENCE",
                        help="labelled predictions (as for costdash decide)")
    parser.add_argument("production", metavar="PRODUCTION",
                        help="unlabelled production scores: a 'score' column (or the "
                             "classifier's), optionally 'n' (score counts, as costdash "
                             "aggregate --no-label writes) and a period column")
    parser.add_argument("--period-column", metavar="COL",
                        help="the production file's column holding each row's period")
    parser.add_argument("--classifier", metavar="NAME",
                        help="the reference classifier the production scores come from "
                             "(default: the deployed one)")
    group = parser.add_argument_group("planning conditions")
    group.add_argument("--p-pos", type=float, metavar="P", required=True,
                       help="the p(+) the deployment was planned at")
    group.add_argument("--cost-fn", type=float, metavar="C", required=True,
                       help="C(-|+): cost of a false negative")
    group.add_argument("--cost-fp", type=float, metavar="C", required=True,
                       help="C(+|-): cost of a false positive")
    group.add_argument("--cost-tp", type=float, metavar="C", default=0.0,
                       help="C(+|+) (default 0; a benefit is negative)")
    group.add_argument("--cost-tn", type=float, metavar="C", default=0.0,
                       help="C(-|-) (default 0; a benefit is negative)")
    parser.add_argument("--deployed", metavar="NAME:THRESHOLD",
                        help="the deployed classifier and threshold (default: the policy's "
                             "choice at --p-pos); THRESHOLD 'none' for a trivial choice")
    parser.add_argument("--method", choices=("em", "acc"), default="em",
                        help="em: EM on calibrated posteriors (default); acc: adjusted "
                             "classify-and-count at the deployed threshold")
    parser.add_argument("--level", type=float, default=0.9, metavar="L",
                        help="interval level (default 0.9)")
    # the names of costdash.prevalence.CALIBRATIONS, written out: importing it would bring scipy
    # into every `costdash --help` (tests/test_watch_cli.py holds the two equal)
    parser.add_argument("--calibration", choices=("bcts", "platt", "isotonic", "none"),
                        default="bcts",
                        help="how em turns scores into posteriors: bcts, Platt on the log-odds of "
                             "probability scores (default); platt, Platt on the score; isotonic; none, the "
                             "scores are taken as calibrated probabilities (a well-calibrated "
                             "classifier: the most accurate estimate when that holds)")
    add_loader_options(parser)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run)


def parse_deployed(text: str) -> tuple[str, float | None]:
    """``NAME:THRESHOLD`` (the last colon splits, so a name may hold one)."""
    name, sep, value = text.rpartition(":")
    if not sep or not name:
        raise ParameterError(f"--deployed {text!r}: expected NAME:THRESHOLD, e.g. gbm:0.42")
    if value.strip().casefold() == "none":
        return name, None
    try:
        threshold = float(value)
    except ValueError:
        raise ParameterError(f"--deployed {text!r}: the threshold {value!r} is not a number "
                             "(or 'none')") from None
    if not math.isfinite(threshold):
        raise ParameterError(f"--deployed {text!r}: the threshold must be finite")
    return name, threshold


def run(args: argparse.Namespace) -> int:
    from costdash.monitor import watch, watch_to_dict
    from costdash.production_io import load_production

    deployed = parse_deployed(args.deployed) if args.deployed else None
    reference = load_from_args(args)
    wanted = args.classifier or (deployed[0] if deployed else None)
    production = load_production(args.production, classifier=wanted,
                                 period_column=args.period_column,
                                 max_bytes=int(args.max_mb * 1024 * 1024))
    result = watch(reference, production.table, period=production.period, p_pos=args.p_pos,
                   cost_fn=args.cost_fn, cost_fp=args.cost_fp, cost_tp=args.cost_tp,
                   cost_tn=args.cost_tn, deployed=deployed, classifier=args.classifier,
                   method=args.method, level=args.level,
                   calibration=args.calibration)
    if args.json:
        print_json({**watch_to_dict(result), "notes": list(production.notes)})
        return 0
    for note in production.notes:
        print(f"note: {note}", file=sys.stderr)
    print(format_watch(result))
    return 0


def format_watch(result) -> str:  # type: ignore[no-untyped-def]
    """The periods as a text table, alerts marked."""
    from costdash.analysis import threshold_text

    dep = result.deployed
    lines = [f"deployed: {dep.classifier} (score >= {threshold_text(dep.threshold)}); "
             f"{result.method}, {result.level:g} intervals",
             f"{'period':>12}  {'n':>10}  {'p(+)':>8}  {'interval':>19}  {'PC(+)':>7}  "
             f"{'policy choice':<28} regret"]
    for p in result.periods:
        choice = f"{p.choice_classifier} >= {threshold_text(p.choice_threshold)}"
        flag = "  ALERT" if p.alert else ("" if p.deployed_optimal else "  (outside its range)")
        lines.append(f"{str(p.period):>12}  {p.n:>10,}  {p.p_pos:>8.4f}  "
                     f"[{p.p_pos_low:.4f}, {p.p_pos_high:.4f}]  {p.pc:>7.4f}  {choice:<28} "
                     f"{p.regret_per_period:.4g}{flag}")
    return "\n".join(lines)
