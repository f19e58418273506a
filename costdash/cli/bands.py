"""``costdash band`` and ``costdash compare``: bootstrap confidence bands on cost curves.

``band`` is the band of one classifier's cost curve (paper 000 §8), ``compare`` the band of the
difference of two classifiers resampled on the same rows (§9). Both measure test-set sampling
variability of fixed models, not the variability of the learning algorithm.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

import numpy as np

from costdash.bands import MAX_REPLICATES, CostBand, DifferenceBand, cost_band, difference_band
from costdash.cli import print_json
from costdash.cli.common import add_loader_options, load_from_args
from costdash.dataset import CountedClassifier, Dataset, ScoredClassifier
from costdash.errors import ParameterError

BAND_JSON_HELP = """\
JSON fields: model, kind ("curve": lower envelope re-optimised per replicate; "line": one confusion
matrix or a fixed threshold), threshold, level, replicates, seed, n_pos, n_neg, pc [], cost [] (full
data), low [], high [] (pointwise band)."""

COMPARE_JSON_HELP = """\
JSON fields: a, b, level, replicates, seed, pc [], diff [] (= cost(a) - cost(b); negative where a is
cheaper), low [], high [], significant [{lo, hi, better}] (grid PC(+) ranges where the band excludes
0)."""


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="predictions: CSV/TSV (.gz too), Parquet or JSON lines")
    parser.add_argument("--level", type=float, default=0.9,
                        help="pointwise confidence level in (0, 1) (default 0.9)")
    parser.add_argument("--replicates", type=int, default=1000, metavar="B",
                        help=f"bootstrap replicates, 1..{MAX_REPLICATES} (default 1000)")
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed for a reproducible band (default: fresh randomness)")
    parser.add_argument("--grid", type=int, default=201, metavar="G",
                        help="number of PC(+) values from 0 to 1 (default 201)")
    add_loader_options(parser)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def register(subparsers: Any) -> None:
    """Add the ``band`` and ``compare`` sub-commands to the ``costdash`` parser."""
    band = subparsers.add_parser(
        "band", help="bootstrap confidence band on one classifier's cost curve",
        description=textwrap.fill(
            "Bootstrap confidence band on a classifier's cost curve (Drummond & Holte): test "
            "rows resampled with the class totals fixed. It measures test-set sampling "
            "variability of this fixed model, not the variability of the learning algorithm. A "
            "scores file gives the band of the whole curve (or of the classifier at "
            "--threshold); a counts file the band of one confusion matrix (pick it with "
            "--threshold when the model has several).", 100) + "\n\n" + BAND_JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    band.add_argument("--model", metavar="NAME",
                      help="classifier (optional if the file has only one)")
    band.add_argument("--threshold", type=float, metavar="T",
                      help="scores: band of the classifier at this fixed threshold (predict "
                           "positive iff score >= T); counts: the matrix with this threshold")
    _common(band)
    band.set_defaults(func=run_band)

    compare = subparsers.add_parser(
        "compare", help="bootstrap band on the difference of two classifiers' cost curves",
        description=textwrap.fill(
            "Bootstrap confidence band on cost(a) - cost(b), both classifiers resampled on the "
            "same test rows (which keeps their correlation). Where the band excludes 0 the "
            "difference is significant (pointwise). Needs scores of both classifiers on the "
            "same examples.", 100) + "\n\n" + COMPARE_JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    compare.add_argument("--a", required=True, metavar="NAME", help="first classifier (a)")
    compare.add_argument("--b", required=True, metavar="NAME", help="second classifier (b)")
    _common(compare)
    compare.set_defaults(func=run_compare)


def _classifier(dataset: Dataset, name: str) -> ScoredClassifier | CountedClassifier:
    try:
        return dataset.classifier(name)
    except KeyError:
        raise ParameterError(f"{dataset.source}: no classifier named {name!r} (it has: "
                             f"{', '.join(dataset.names)})") from None


def _floats(values: np.ndarray) -> list[float]:
    if not np.all(np.isfinite(values)):  # pragma: no cover - a bug, print_json would raise too
        raise ParameterError("internal error: non-finite value in a band")
    return [float(v) for v in values]


def band_to_dict(band: CostBand, seed: int | None = None) -> dict[str, Any]:
    """The JSON form of a :class:`CostBand` (without the replicate curves)."""
    return {"model": band.name, "kind": band.kind, "threshold": band.threshold,
            "level": band.level, "replicates": band.replicates, "seed": seed,
            "n_pos": band.n_pos, "n_neg": band.n_neg, "pc": _floats(band.pc),
            "cost": _floats(band.cost), "low": _floats(band.low), "high": _floats(band.high)}


def difference_to_dict(band: DifferenceBand, seed: int | None = None) -> dict[str, Any]:
    """The JSON form of a :class:`DifferenceBand` (without the replicate curves)."""
    return {"a": band.a, "b": band.b, "level": band.level, "replicates": band.replicates,
            "seed": seed, "pc": _floats(band.pc), "diff": _floats(band.diff),
            "low": _floats(band.low), "high": _floats(band.high),
            "significant": [{"lo": s.lo, "hi": s.hi, "better": s.better}
                            for s in band.significant]}


def _sample_rows(pc: np.ndarray) -> list[int]:
    """Grid indices nearest to PC(+) = 0.1, 0.2, ..., 0.9 (distinct)."""
    return sorted({int(np.argmin(np.abs(pc - x))) for x in np.linspace(0.1, 0.9, 9)})


def format_band(band: CostBand) -> str:
    kind = ("lower envelope, thresholds re-optimised per replicate" if band.kind == "curve"
            else "one confusion matrix" + (f" at threshold {band.threshold:g}"
                                           if band.threshold is not None else ""))
    lines = [f"{band.name}: {band.n_pos} positive, {band.n_neg} negative; {kind}",
             f"{band.level:.0%} pointwise band from {band.replicates} bootstrap replicates "
             "(test-set sampling variability of this fixed model)", "",
             f"{'PC(+)':>7} {'cost':>9} {'low':>9} {'high':>9}"]
    for i in _sample_rows(band.pc):
        lines.append(f"{band.pc[i]:>7.3f} {band.cost[i]:>9.4f} {band.low[i]:>9.4f} "
                     f"{band.high[i]:>9.4f}")
    widest = int(np.argmax(band.width))
    lines.append(f"\nwidest at PC(+) = {band.pc[widest]:.3f}: {band.width[widest]:.4f}")
    return "\n".join(lines)


def format_difference(band: DifferenceBand) -> str:
    lines = [f"cost({band.a}) - cost({band.b}): {band.level:.0%} pointwise band from "
             f"{band.replicates} bootstrap replicates on the same rows", "",
             f"{'PC(+)':>7} {'diff':>9} {'low':>9} {'high':>9}"]
    for i in _sample_rows(band.pc):
        lines.append(f"{band.pc[i]:>7.3f} {band.diff[i]:>9.4f} {band.low[i]:>9.4f} "
                     f"{band.high[i]:>9.4f}")
    lines.append("")
    if band.significant:
        for s in band.significant:
            lines.append(f"significant for PC(+) in [{s.lo:.3f}, {s.hi:.3f}]: {s.better} is cheaper")
    else:
        lines.append(f"the band contains 0 everywhere: no significant difference at {band.level:.0%}")
    return "\n".join(lines)


def run_band(args: argparse.Namespace) -> int:
    if args.models is None and args.model is not None:
        args.models = [args.model]
    dataset = load_from_args(args)
    if args.model is None:
        if len(dataset.names) != 1:
            raise ParameterError(f"{dataset.source} has {len(dataset.names)} classifiers; choose "
                                 f"one with --model ({', '.join(dataset.names)})")
        name = dataset.names[0]
    else:
        name = args.model
    band = cost_band(_classifier(dataset, name), threshold=args.threshold, level=args.level,
                     replicates=args.replicates, rng=args.seed, grid=args.grid)
    if args.json:
        print_json(band_to_dict(band, args.seed))
    else:
        print(format_band(band))
    return 0


def run_compare(args: argparse.Namespace) -> int:
    if args.a == args.b:
        raise ParameterError(f"--a and --b name the same classifier ({args.a!r})")
    if args.models is None:
        args.models = [args.a, args.b]
    dataset = load_from_args(args)
    band = difference_band(_classifier(dataset, args.a), _classifier(dataset, args.b),
                           level=args.level, replicates=args.replicates, rng=args.seed,
                           grid=args.grid)
    if args.json:
        print_json(difference_to_dict(band, args.seed))
    else:
        print(format_difference(band))
    return 0
