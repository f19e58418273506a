"""``costdash report FILE -o report.html [--band MODEL ...]``: a self-contained HTML report
(figures and tables, and bootstrap bands when asked for).

The report is built by :mod:`dashboard.report` (plotly), imported only when the command runs, so
the core never imports plotly; without the dashboard's dependencies the command says so.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from costdash.bands import cost_band
from costdash.cli.common import (
    add_condition_options,
    add_loader_options,
    condition_from_args,
    load_from_args,
)
from costdash.errors import CostdashError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report", help="write a self-contained HTML report (ROC hull, cost space, tables)",
        description="Analyse the classifiers in a predictions file and write one HTML file with "
                    "the ROC convex hull, the cost-space figure, the chosen operating point and "
                    "tables of every classifier and hull vertex. The file embeds plotly.js and "
                    "opens offline.")
    parser.add_argument("file", help="predictions: CSV/TSV (.gz too), Parquet or JSON lines")
    parser.add_argument("-o", "--output", metavar="PATH", default="report.html",
                        help="where to write the report (default report.html)")
    parser.add_argument("--title", help="the report's title (default: from the file name)")
    bands = parser.add_argument_group("bootstrap confidence bands (optional)")
    bands.add_argument("--band", action="append", metavar="MODEL", default=[],
                       help="add a bootstrap band on this classifier's cost curve (repeatable)")
    bands.add_argument("--level", type=float, default=0.9, metavar="L",
                       help="pointwise confidence level of the bands (default 0.9)")
    bands.add_argument("--replicates", type=int, default=1000, metavar="B",
                       help="bootstrap replicates per band (default 1000)")
    bands.add_argument("--seed", type=int, default=0,
                       help="random seed, for a reproducible report (default 0)")
    add_condition_options(parser)
    add_loader_options(parser)
    parser.set_defaults(func=run)


def _build_report():
    try:
        from dashboard.report import build_report
    except ModuleNotFoundError as exc:  # plotly, dash or the dashboard package itself
        missing = exc.name or str(exc)
        raise CostdashError(
            f"'costdash report' needs the dashboard's dependencies (plotly), which are not "
            f"available here ({missing} could not be imported); install them with "
            f"'pip install -r requirements.txt'") from exc
    return build_report


def run(args: argparse.Namespace) -> int:
    build_report = _build_report()
    dataset = load_from_args(args)
    condition = condition_from_args(args, dataset)
    scored = {c.name: c for c in dataset.scored}
    bands = []
    for model in dict.fromkeys(args.band):  # each once, in the order given
        if model not in scored:
            raise CostdashError(f"--band {model}: no scored classifier of that name; the file "
                                f"has {', '.join(scored) or 'none'}")
        bands.append(cost_band(scored[model], level=args.level, replicates=args.replicates,
                               rng=args.seed, name=model))
    html = build_report(dataset, condition, title=args.title, name=Path(args.file).name,
                        bands=bands or None)
    out = Path(args.output)
    try:
        out.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise CostdashError(f"cannot write the report to {out}: {exc.strerror or exc}") from exc
    print(out)
    return 0
