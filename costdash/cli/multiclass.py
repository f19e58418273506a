"""``costdash bcost`` / ``costdash bdeltacost``: k-class cost intervals (Margineantu & Dietterich).

Both read a labelled cost-matrix CSV whose **rows are the PREDICTED class and columns the ACTUAL
class** unless ``--actual-rows`` is given.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

import numpy as np

from costdash.cli import finite_or_none, print_json
from costdash.errors import InputFileError, ParameterError
# The bound the options state, from costdash._resampling, light; costdash.multiclass (its
# readers bring pandas and pyarrow) is imported when a command runs, so `costdash --help` stays
# light (issue 23).
from costdash._resampling import MULTICLASS_MAX_REPLICATES as MAX_REPLICATES

_ORIENTATION = ("ORIENTATION: by default every matrix CSV (--costs, --confusion) has ROWS = "
                "PREDICTED class and COLUMNS = ACTUAL (true) class, as in Margineantu & "
                "Dietterich: "
                "the cell in row i, column j is the cost of predicting i when the truth is j. "
                "Pass --actual-rows if your files have ROWS = ACTUAL and COLUMNS = PREDICTED "
                "(scikit-learn's confusion_matrix layout).")

_MATRIX_FORMAT = ("A matrix CSV has a header row (a corner cell, then the class labels) and one "
                  "row per class (its label, then the values), e.g.\n"
                  "  pred\\actual,cat,dog\n  cat,0,5\n  dog,1,0")

_PREDICTIONS_FORMAT = ("PREDICTIONS is a CSV of class labels, wide (y_true,clf_a,clf_b: one "
                       "predicted-label column per classifier) or long (model,y_true,y_pred).")


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=88)


def _common(parser: argparse.ArgumentParser, laplace: float) -> None:
    parser.add_argument("--costs", required=True, metavar="COSTS.csv",
                        help="labelled k x k cost matrix CSV; ROWS = PREDICTED, COLUMNS = ACTUAL "
                             "(unless --actual-rows)")
    parser.add_argument("--level", type=float, default=0.95,
                        help="confidence level in (0, 1) (default 0.95)")
    parser.add_argument("--replicates", type=int, default=1000, metavar="B",
                        help=f"bootstrap replicates, 1..{MAX_REPLICATES} (default 1000)")
    parser.add_argument("--laplace", type=float, default=laplace, metavar="LAMBDA",
                        help=f"Laplace correction added to every cell (default {laplace:g})")
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed for reproducible intervals (default: fresh randomness)")
    parser.add_argument("--actual-rows", action="store_true",
                        help="matrix CSVs have ROWS = ACTUAL class and COLUMNS = PREDICTED class "
                             "(the default is rows = PREDICTED, columns = ACTUAL)")
    parser.add_argument("--allow-negative", action="store_true",
                        help="accept negative costs (benefits)")
    parser.add_argument("--true-column", default="y_true", metavar="NAME",
                        help="name of the true-label column in PREDICTIONS (default y_true)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def _subcommand(subparsers: Any, name: str, help: str, description: str
                ) -> argparse.ArgumentParser:
    """A sub-command whose help ends with the matrix orientation and both input formats."""
    return subparsers.add_parser(
        name, help=help, description=_wrap(description + _ORIENTATION),
        epilog=_MATRIX_FORMAT + "\n" + _PREDICTIONS_FORMAT,
        formatter_class=argparse.RawDescriptionHelpFormatter)


def register(subparsers: Any) -> None:
    """Add the ``bcost`` and ``bdeltacost`` sub-commands to the ``costdash`` parser."""
    p = _subcommand(
        subparsers, "bcost",
        "bootstrap confidence interval for a k-class classifier's average cost (BCOST)",
        "BCOST (Margineantu & Dietterich 2000): a bootstrap confidence interval for the expected "
        "cost per example of one k-class classifier, with the normal (z) interval beside it. ")
    p.add_argument("predictions", nargs="?", metavar="PREDICTIONS",
                   help="predictions CSV (omit when --confusion is given)")
    p.add_argument("--model", metavar="NAME",
                   help="classifier to evaluate (optional if the file has only one)")
    p.add_argument("--confusion", metavar="MATRIX.csv",
                   help="labelled k x k count matrix instead of PREDICTIONS; ROWS = PREDICTED, "
                        "COLUMNS = ACTUAL (unless --actual-rows)")
    _common(p, laplace=0.1)
    p.set_defaults(func=run_bcost)

    d = _subcommand(
        subparsers, "bdeltacost",
        "bootstrap test of whether two k-class classifiers differ in average cost (BDELTACOST)",
        "BDELTACOST (Margineantu & Dietterich 2000): a bootstrap confidence interval for "
        "cost(A) - cost(B) per example on the same test examples, and the test of equal expected "
        "cost (rejected when the interval excludes 0). ")
    d.add_argument("predictions", metavar="PREDICTIONS", help="predictions CSV")
    d.add_argument("--a", required=True, metavar="NAME", help="first classifier (A)")
    d.add_argument("--b", required=True, metavar="NAME", help="second classifier (B)")
    _common(d, laplace=0.0)
    d.set_defaults(func=run_bdeltacost)


def _orientation(actual_rows: bool) -> str:
    return ("rows=actual, columns=predicted (transposed on reading)" if actual_rows
            else "rows=predicted, columns=actual")


def _reorder(labels_from: list[str], counts: np.ndarray, labels_to: list[str]) -> np.ndarray:
    pos = [labels_from.index(lab) for lab in labels_to]
    return counts[np.ix_(pos, pos)]


def run_bcost(args: argparse.Namespace) -> int:
    from costdash.multiclass import (
        bcost,
        confusion_from_labels,
        load_confusion_matrix,
        load_cost_matrix,
        load_label_predictions,
        match_labels,
    )

    labels, costs = load_cost_matrix(args.costs, transpose=args.actual_rows,
                                     allow_negative=args.allow_negative)
    model: str | None
    unseen: list[str] = []
    if args.confusion is not None:
        if args.predictions is not None:
            raise ParameterError("give either a PREDICTIONS file or --confusion, not both")
        if args.model is not None:
            raise ParameterError("--model applies to a PREDICTIONS file, not to --confusion")
        clabels, counts = load_confusion_matrix(args.confusion, transpose=args.actual_rows)
        if set(clabels) != set(labels):
            only_c = [x for x in clabels if x not in labels]
            only_k = [x for x in labels if x not in clabels]
            raise InputFileError(
                f"the labels of {args.confusion} and {args.costs} differ: only in the confusion "
                f"matrix: {only_c or 'none'}; only in the cost matrix: {only_k or 'none'}",
                source=args.confusion)
        confusion = _reorder(clabels, counts, labels)
        model = None
    else:
        if args.predictions is None:
            raise ParameterError("give a PREDICTIONS file (with --model) or --confusion MATRIX.csv")
        data = load_label_predictions(args.predictions, true_column=args.true_column,
                                      models=None if args.model is None else [args.model])
        if args.model is None and len(data.names) != 1:
            raise ParameterError(f"{args.predictions} has {len(data.names)} classifiers; choose "
                                 f"one with --model ({', '.join(data.names)})")
        clf = data.classifiers[0]
        model = clf.name
        unseen = match_labels(labels, clf.labels, matrix_source=args.costs,
                              data_source=f"{args.predictions} ({model})")
        confusion = confusion_from_labels(clf.y_pred, clf.y_true, labels)

    res = bcost(confusion, costs, level=args.level, replicates=args.replicates,
                laplace=args.laplace, rng=args.seed, allow_negative=args.allow_negative)
    if args.json:
        print_json({
            "cost": finite_or_none(res.cost), "low": finite_or_none(res.low),
            "high": finite_or_none(res.high), "normal_low": finite_or_none(res.normal_low),
            "normal_high": finite_or_none(res.normal_high), "n": res.n, "k": res.k,
            "level": res.level, "replicates": int(res.replicates.size), "laplace": res.laplace,
            "seed": args.seed, "model": model, "labels": labels, "unseen_labels": unseen,
            "orientation": _orientation(args.actual_rows),
        })
        return 0
    title = f"BCOST  model={model}" if model else f"BCOST  confusion={args.confusion}"
    print(f"{title}  n={res.n}  k={res.k}  level={res.level:g}  B={res.replicates.size}  "
          f"laplace={res.laplace:g}")
    print(f"{'':<24}{'estimate':>12}{'low':>12}{'high':>12}")
    print(f"{'average cost (BCOST)':<24}{res.cost:>12.6g}{res.low:>12.6g}{res.high:>12.6g}")
    print(f"{'normal interval':<24}{'':>12}{res.normal_low:>12.6g}{res.normal_high:>12.6g}")
    print(f"costs: {_orientation(args.actual_rows)}; labels: {', '.join(labels)}")
    if unseen:
        print(f"note: labels never seen in the data: {', '.join(unseen)}")
    return 0


def run_bdeltacost(args: argparse.Namespace) -> int:
    from costdash.multiclass import (
        bdeltacost,
        confusion3d_from_labels,
        load_cost_matrix,
        load_label_predictions,
        match_labels,
    )

    labels, costs = load_cost_matrix(args.costs, transpose=args.actual_rows,
                                     allow_negative=args.allow_negative)
    if args.a == args.b:
        raise ParameterError(f"--a and --b name the same classifier ({args.a!r})")
    data = load_label_predictions(args.predictions, true_column=args.true_column,
                                  models=[args.a, args.b])
    y_a, y_b, y_true = data.pair(args.a, args.b)
    seen = set(y_true.tolist()) | set(y_a.tolist()) | set(y_b.tolist())
    unseen = match_labels(labels, seen, matrix_source=args.costs,
                          data_source=f"{args.predictions} ({args.a}, {args.b})")
    m3 = confusion3d_from_labels(y_a, y_b, y_true, labels)
    res = bdeltacost(m3, costs, level=args.level, replicates=args.replicates,
                     laplace=args.laplace, rng=args.seed, allow_negative=args.allow_negative)
    n = res.n
    cost_a = float(np.sum(m3.sum(axis=1) * costs) / n)
    cost_b = float(np.sum(m3.sum(axis=0) * costs) / n)
    if args.json:
        print_json({
            "delta": finite_or_none(res.delta), "low": finite_or_none(res.low),
            "high": finite_or_none(res.high), "reject": res.reject,
            "normal_low": finite_or_none(res.normal_low),
            "normal_high": finite_or_none(res.normal_high), "normal_reject": res.normal_reject,
            "n": n, "k": res.k, "cost_a": finite_or_none(cost_a),
            "cost_b": finite_or_none(cost_b), "a": args.a, "b": args.b, "level": res.level,
            "replicates": int(res.replicates.size), "laplace": res.laplace, "seed": args.seed,
            "labels": labels, "unseen_labels": unseen,
            "orientation": _orientation(args.actual_rows),
        })
        return 0
    print(f"BDELTACOST  a={args.a}  b={args.b}  n={n}  k={res.k}  level={res.level:g}  "
          f"B={res.replicates.size}  laplace={res.laplace:g}")
    print(f"average cost: a={cost_a:.6g}  b={cost_b:.6g}")
    print(f"{'':<26}{'estimate':>12}{'low':>12}{'high':>12}  reject H0")
    print(f"{'delta = a - b (BDELTACOST)':<26}{res.delta:>12.6g}{res.low:>12.6g}{res.high:>12.6g}"
          f"  {'yes' if res.reject else 'no'}")
    print(f"{'paired z interval':<26}{'':>12}{res.normal_low:>12.6g}{res.normal_high:>12.6g}"
          f"  {'yes' if res.normal_reject else 'no'}")
    verdict = ("the expected costs differ" if res.reject
               else "no significant difference in expected cost")
    print(f"at level {res.level:g}: {verdict}")
    print(f"costs: {_orientation(args.actual_rows)}; labels: {', '.join(labels)}")
    if unseen:
        print(f"note: labels never seen in the data: {', '.join(unseen)}")
    return 0
