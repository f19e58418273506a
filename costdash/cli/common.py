"""Options shared by the sub-commands that read a predictions file."""

from __future__ import annotations

import argparse

from costdash.conditions import OperatingCondition, default_condition
from costdash.dataset import Dataset


def add_loader_options(parser: argparse.ArgumentParser) -> None:
    """The loader's options, named like :func:`costdash.load_predictions`'s keywords."""
    group = parser.add_argument_group("reading the predictions file")
    group.add_argument("--layout", choices=("auto", "wide", "long", "counts"), default="auto",
                       help="file layout (default: detected)")
    group.add_argument("--label-column", help="column of true labels (default: detected)")
    group.add_argument("--model-column", help="long layout: column naming the classifier")
    group.add_argument("--score-column", help="long layout: column of scores")
    group.add_argument("--fold-column", help="column of fold / run ids (default: detected)")
    group.add_argument("--positive", metavar="LABEL", help="the positive class label, when not obvious")
    group.add_argument("--models", nargs="+", metavar="NAME", help="analyse only these classifiers")
    group.add_argument("--drop-missing", action="store_true",
                       help="drop rows with a missing label or score instead of failing")
    group.add_argument("--max-mb", type=float, default=200.0,
                       help="refuse files larger than this many MB (default 200)")


def load_from_args(args: argparse.Namespace) -> Dataset:
    from costdash.io import load_predictions

    return load_predictions(
        args.file, layout=args.layout, label_column=args.label_column,
        model_column=args.model_column, score_column=args.score_column,
        fold_column=args.fold_column, positive=args.positive, models=args.models,
        drop_missing=args.drop_missing, max_bytes=int(args.max_mb * 1024 * 1024))


def add_condition_options(parser: argparse.ArgumentParser) -> None:
    """``--p-pos``, ``--cost-fn`` and ``--cost-fp``: the operating conditions."""
    group = parser.add_argument_group("operating conditions")
    group.add_argument("--p-pos", type=float, metavar="P",
                       help="probability of the positive class (default: the data's prevalence)")
    group.add_argument("--cost-fn", type=float, metavar="C",
                       help="C(-|+): cost of a false negative (default 1)")
    group.add_argument("--cost-fp", type=float, metavar="C",
                       help="C(+|-): cost of a false positive (default 1)")


def condition_from_args(args: argparse.Namespace, dataset: Dataset) -> OperatingCondition:
    return default_condition(dataset.prevalence, args.p_pos, args.cost_fn, args.cost_fp)
