"""``costdash aggregate INPUT... -o OUTPUT``: row-level predictions to the score-count layout.

Reads CSV/TSV or Parquet files (or globs) in the wide or long layout, out of core with DuckDB
(the default) or as a Spark job (``--engine spark``, ``--master URL``), and writes one row per
classifier, distinct score and fold: ``model, score, n_pos, n_neg[, fold]``, as CSV or Parquet by
the output's extension. ``costdash analyze`` and ``costdash push`` read that file like the rows it
summarises, with the same results. A summary line goes to stderr (``--json``: to stdout as JSON).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from costdash._wording import counted
from costdash.cli import number_type, print_json


_digits = number_type(int, "a whole number", "from 0 to 15", lambda value: 0 <= value <= 15)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "aggregate", help="count positives and negatives per classifier and score (any size)",
        description="Summarise row-level predictions, exactly, as counts of positives and "
                    "negatives per classifier, distinct score and fold: the score-count layout, "
                    "which analyze, push and the dashboard read with the same results as the "
                    "rows. Out of core with DuckDB, or on a cluster with Spark.")
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="CSV/TSV (.gz too) or Parquet files or globs (quote globs), wide or "
                             "long layout")
    parser.add_argument("-o", "--output", required=True, metavar="OUTPUT",
                        help="the score-count file: .parquet/.pq for Parquet, else CSV")
    parser.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                        help="duckdb (embedded, default) or spark (needs pyspark)")
    parser.add_argument("--master", metavar="URL",
                        help="Spark master, e.g. local[4] or spark://host:7077 (default: "
                             "local[*])")
    parser.add_argument("--round", type=_digits, metavar="DIGITS", dest="round_digits",
                        help="round scores half up to DIGITS decimals first, to bound the "
                             "output; the largest ROC distance this introduced is reported")
    parser.add_argument("--memory-limit", default="1GB", metavar="SIZE",
                        help="DuckDB's memory limit; it spills to disk past it (default 1GB)")
    parser.add_argument("--threads", type=int, metavar="N",
                        help="threads for DuckDB and for the compiled counting loop "
                             "(default: all cores)")
    group = parser.add_argument_group("reading the rows")
    group.add_argument("--label-column", help="column of true labels (default: detected)")
    group.add_argument("--model-column", help="long layout: column naming the classifier")
    group.add_argument("--score-column", help="long layout: column of scores")
    group.add_argument("--fold-column", help="column of fold / run ids (default: detected)")
    group.add_argument("--positive", metavar="LABEL",
                       help="the positive class label, when not obvious")
    group.add_argument("--models", nargs="+", metavar="NAME", help="only these classifiers")
    group = parser.add_argument_group("unlabelled production scores (costdash watch)")
    group.add_argument("--no-label", action="store_true",
                       help="count unlabelled rows per period and distinct score instead: "
                            "[period,] score, n (the --score-column, default 'score')")
    group.add_argument("--period-column", metavar="COL",
                       help="with --no-label: the column holding each row's period")
    parser.add_argument("--json", action="store_true",
                        help="print the statistics as JSON on stdout")
    parser.set_defaults(func=run)


def run_production(args: argparse.Namespace) -> int:
    """``--no-label``: production score counts for ``costdash watch``."""
    from costdash.production_aggregation import aggregate_production

    result = aggregate_production(args.inputs, score_column=args.score_column or "score",
                                  period_column=args.period_column,
                                  memory_limit=args.memory_limit)
    result.write(args.output)
    if args.json:
        print_json({"rows": result.rows, "entries": len(result.table), "output": args.output})
    else:
        print(f"{result.rows:,} production rows -> {len(result.table):,} score counts in "
              f"{args.output}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.no_label:
        return run_production(args)
    from costdash.aggregation import aggregate

    result = aggregate(
        args.inputs, engine=args.engine, master=args.master, round_digits=args.round_digits,
        label_column=args.label_column, model_column=args.model_column,
        score_column=args.score_column, fold_column=args.fold_column, positive=args.positive,
        models=args.models, memory_limit=args.memory_limit, threads=args.threads)
    result.write(args.output)
    stats = result.stats
    if args.json:
        print_json({**dataclasses.asdict(stats), "classifiers": list(stats.classifiers),
                    "output": args.output})
        return 0
    rounding = ""
    if stats.round_digits is not None:
        rounding = (f"; rounding to {counted(stats.round_digits, 'decimal')} merged "
                    f"{counted(stats.merged_bins, 'bin')}, moving the ROC curves (and hulls) by "
                    f"at most "
                    f"{stats.max_roc_distance:.3g}")
    print(f"{args.output}: {counted(stats.output_rows, 'row')} from "
          f"{counted(stats.input_rows, 'prediction')} of "
          f"{counted(len(stats.classifiers), 'classifier')} ({stats.layout} layout, positive label "
          f"'{stats.positive_label}') in {stats.seconds:.1f} s with {stats.engine}{rounding}",
          file=sys.stderr)
    return 0
