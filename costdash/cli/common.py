"""Options shared by the sub-commands that read a predictions file.

The operating conditions and the other view options are read into one
:class:`costdash.view.View`, with the bounds and messages of the dashboard and the HTTP API
(``p(+) must be a number strictly between 0 and 1; got '1.5'.``), and mean what they mean there:
:meth:`~costdash.view.View.condition` is the one default rule (p(+) absent: the data's
prevalence; costs absent: 1).
"""

from __future__ import annotations

import argparse
import sys

from costdash.conditions import DEFAULT_COST, OperatingCondition
from costdash.dataset import Dataset
from costdash.view import CONDITION_FIELDS, DEFAULT_UNIT, DEFAULT_VOLUME, View

MONEY_FIELDS = ("volume", "unit")
"""View fields set by :func:`add_view_options` besides the conditions."""


def add_loader_options(parser: argparse.ArgumentParser) -> None:
    """The loader's options, named like :func:`costdash.load_predictions`'s keywords."""
    group = parser.add_argument_group("reading the predictions file")
    group.add_argument("--layout", choices=("auto", "wide", "long", "counts", "score_counts"),
                       default="auto",
                       help="file layout (default: detected)")
    group.add_argument("--label-column", help="column of true labels (default: detected)")
    group.add_argument("--model-column", help="long layout: column naming the classifier")
    group.add_argument("--score-column", help="long layout: column of scores")
    group.add_argument("--fold-column", help="column of fold / run ids (default: detected)")
    group.add_argument("--positive", metavar="LABEL", help="the positive class label, when not obvious")
    group.add_argument("--target-class", metavar="CLASS",
                       help="one-vs-rest on a multiclass file (a score column per class named "
                            "<classifier>:<class>, as predict_proba gives): CLASS against the "
                            "rest")
    group.add_argument("--models", nargs="+", metavar="NAME", help="analyse only these classifiers")
    group.add_argument("--drop-missing", action="store_true",
                       help="drop rows with a missing label or score instead of failing")
    group.add_argument("--max-mb", type=float, default=200.0,
                       help="refuse files larger than this many MB (default 200)")


_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3  # glibc's mallopt parameters


def keep_freed_memory(args: argparse.Namespace) -> None:
    """In a ``costdash`` process (not a call of :func:`costdash.cli.main` from code), let glibc
    keep the memory numpy frees for the next arrays instead of handing it back to the system.

    By default glibc maps each array over 128 kB (up to a threshold it raises as they are
    freed) afresh and returns the top of the heap when more than twice that is free, so the
    next array of the same size faults its pages in again: ``analyze --json`` of 20 x 200,000
    scores took 240,000 page faults and 0.8 s of system time, against 110,000 and 0.35 s with
    arrays up to 32 MB on the heap and the heap kept (issue 23). A process that exits soon loses
    nothing by it; elsewhere than glibc (musl, macOS) nothing is done.
    """
    if not getattr(args, "as_program", False) or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, ImportError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 * 1024 * 1024)  # glibc's largest
    mallopt(_M_TRIM_THRESHOLD, 1024 * 1024 * 1024)
    mallopt(_M_TOP_PAD, 64 * 1024 * 1024)


def load_from_args(args: argparse.Namespace) -> Dataset:
    from costdash.io import load_predictions

    return load_predictions(
        args.file, layout=args.layout, label_column=args.label_column,
        model_column=args.model_column, score_column=args.score_column,
        fold_column=args.fold_column, positive=args.positive, models=args.models,
        drop_missing=args.drop_missing, max_bytes=int(args.max_mb * 1024 * 1024),
        target_class=args.target_class,
        # Only the commands that add --segment-column (decide) read one.
        segment_column=getattr(args, "segment_column", None))


def add_condition_options(parser: argparse.ArgumentParser) -> None:
    """``--p-pos``, ``--cost-fn``, ``--cost-fp``, ``--cost-tp`` and ``--cost-tn``: the operating
    conditions.

    Left at None when not given, so that "not given" reaches the one default rule (and a
    ``--view`` query, where there is one, is not overridden by a default).
    """
    group = parser.add_argument_group("operating conditions")
    group.add_argument("--p-pos", type=float, metavar="P",
                       help="probability of the positive class (default: the data's prevalence)")
    group.add_argument("--cost-fn", type=float, metavar="C",
                       help=f"C(-|+): cost of a false negative (default {DEFAULT_COST:g})")
    group.add_argument("--cost-fp", type=float, metavar="C",
                       help=f"C(+|-): cost of a false positive (default {DEFAULT_COST:g})")
    group.add_argument("--cost-tp", type=float, metavar="C",
                       help="C(+|+): cost of a true positive (default 0; a benefit is a "
                            "negative cost, e.g. --cost-tp=-40); must be below C(-|+)")
    group.add_argument("--cost-tn", type=float, metavar="C",
                       help="C(-|-): cost of a true negative (default 0; a benefit is a "
                            "negative cost); must be below C(+|-)")


def add_view_options(parser: argparse.ArgumentParser) -> None:
    """``--volume``, ``--unit`` and ``--view``: the money figures and the rest of a view."""
    group = parser.add_argument_group("the view (as on the dashboard)")
    group.add_argument("--volume", type=float, metavar="N",
                       help=f"cases per period, for the money figures (default "
                            f"{DEFAULT_VOLUME:g})")
    group.add_argument("--unit", metavar="TEXT",
                       help=f"currency or unit of the costs (default {DEFAULT_UNIT})")
    group.add_argument("--view", metavar="QUERY", default="",
                       help="a dashboard view as its query string, e.g. copied from the address "
                            "bar: 'p_pos=0.01&cost_fn=50&models=gbm,logreg&max_fpr=0.1'; the "
                            "options above override it")


def view_from_args(args: argparse.Namespace) -> View:
    """The view the options describe: ``--view`` (if the command has it), then each condition
    and view option given on top of it, all checked with the view's bounds.

    Raises
    ------
    ParameterError
        A value out of its bounds, in the dashboard's words.
    """
    view = View.parse(getattr(args, "view", "") or "")
    given = {name: getattr(args, name) for name in (*CONDITION_FIELDS, *MONEY_FIELDS)
             if getattr(args, name, None) is not None}
    return view.with_values(**given) if given else view


def condition_from_args(args: argparse.Namespace, dataset: Dataset) -> OperatingCondition:
    """The operating conditions of the options for this data set (see :func:`view_from_args`)."""
    return view_from_args(args).condition(dataset.prevalence)
