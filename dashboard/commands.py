"""``costdash report FILE -o report.html [--band MODEL ...]``: a self-contained HTML report
(figures and tables, and confidence bands when asked for).

The dashboard's command of the ``costdash`` command line. The core never imports the dashboard:
this module is registered under the entry-point group ``costdash.commands`` (pyproject.toml),
which :func:`costdash.cli.build_parser` scans, and it imports plotly (through
:mod:`dashboard.report`) only when the command runs; without the dashboard's dependencies the
command says so.

The options build one :class:`costdash.view.View` (``--view`` takes a dashboard view's query
string, the other options override it), so the file is the report the dashboard's download gives
for the same view: the same classifiers, choice, money figures, sensitivity and constraints.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from costdash.band_choice import band_choice
from costdash.bands import cost_band
from costdash.cli.common import (
    add_condition_options,
    add_loader_options,
    add_view_options,
    load_from_args,
    view_from_args,
)
from costdash.errors import CostdashError
from costdash.view import DEFAULT_LEVEL, DEFAULT_REPLICATES, DEFAULT_SEED, View

BAND_FIELDS = ("level", "replicates", "seed")

METHOD_CHOICES = ("split", "clopper-pearson-mover", "wilson-mover", "percentile",
                  "double-bootstrap")
"""``--method``: the band choices of :mod:`costdash.band_choice` for one classifier."""


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
    bands = parser.add_argument_group("confidence bands (optional; docs/bands.md)")
    bands.add_argument("--band", action="append", metavar="MODEL", default=[],
                       help="add a band on this classifier's cost curve (repeatable; default: "
                            "the view's model=, if any); at the view's threshold= if any")
    bands.add_argument("--method", choices=METHOD_CHOICES, default=None,
                       help="which band (default: 'split' without a threshold: thresholds "
                            "picked on a stratified half and their cost banded on the other "
                            "half, calibrated; 'clopper-pearson-mover' with one, or the old "
                            "'wilson-mover'); 'percentile': a "
                            "bootstrap without a level (the resampling spread of the re-tuned "
                            "envelope, or the paper's band of a fixed threshold); "
                            "'double-bootstrap': the envelope's approximate calibrated band")
    bands.add_argument("--simultaneous", action="store_true", default=None,
                       help="bands that hold for the whole curve at once (closed-form bands "
                            "only)")
    bands.add_argument("--level", type=float, metavar="L",
                       help=f"confidence level of the bands (default {DEFAULT_LEVEL}; shown only "
                            "for a calibrated band)")
    bands.add_argument("--replicates", type=int, metavar="B",
                       help=f"bootstrap replicates per band (default {DEFAULT_REPLICATES}; "
                            "unused by the closed-form bands)")
    bands.add_argument("--seed", type=int,
                       help=f"random seed, for a reproducible report (default {DEFAULT_SEED})")
    add_condition_options(parser)
    add_view_options(parser)
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


def report_view_from_args(args: argparse.Namespace) -> View:
    """The view of the options: :func:`~costdash.cli.common.view_from_args` and the band
    settings, checked with the view's bounds."""
    view = view_from_args(args)
    given = {k: getattr(args, k) for k in BAND_FIELDS if getattr(args, k) is not None}
    return view.with_values(**given) if given else view


def run(args: argparse.Namespace) -> int:
    build_report = _build_report()
    view = report_view_from_args(args)  # a bad option is refused before the file is read
    dataset = load_from_args(args)
    if args.models:
        # The loader kept these (matching names as it does); the view ticks what it kept.
        view = view.with_values(models=list(dataset.names))
    ticked = set(view.selected(list(dataset.names)))
    scored = {c.name: c for c in dataset.scored}
    for model in args.band:
        if model not in scored:
            raise CostdashError(f"--band {model}: no scored classifier of that name; the file "
                                f"has {', '.join(scored) or 'none'}")
        if model not in ticked:
            raise CostdashError(f"--band {model}: not among the view's classifiers "
                                f"({', '.join(view.models or ())})")
    # Without --band, the view's own classifier (the Confidence page's), as the download does.
    wanted = args.band or [m for m in (view.model,) if m in ticked and m in scored]
    # The band of the page and of the report download for the same view (band_choice): the
    # options, else the view's method= and simultaneous= (once the view has those fields).
    choice = band_choice(args.method or getattr(view, "method", None),
                         args.simultaneous or getattr(view, "simultaneous", False),
                         fixed=view.threshold is not None)
    if args.method and not choice.asked:
        raise CostdashError(f"--method {args.method} does not fit "
                            + ("a fixed threshold (threshold= in the view): use "
                               "clopper-pearson-mover, wilson-mover or percentile"
                               if view.threshold is not None else
                               "a whole curve (no threshold): use split, percentile or "
                               "double-bootstrap"))
    bands = []
    for model in dict.fromkeys(wanted):  # each once, in the order given
        bands.append(cost_band(scored[model], threshold=view.threshold, level=view.level,
                               replicates=view.replicates, rng=view.seed, name=model,
                               **choice.arguments()))
    html = build_report(dataset, view=view, title=args.title, name=Path(args.file).name,
                        bands=bands or None)
    out = Path(args.output)
    try:
        out.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise CostdashError(f"cannot write the report to {out}: {exc.strerror or exc}") from exc
    print(out)
    return 0
