"""Coverage study of the double-bootstrap band of the whole envelope, by the smaller class's
count and PC(+).

Does ``cost_band(..., method="double-bootstrap")`` (200 outer x 100 inner replicates) cover the
true optimal cost ``min_t NE_t(x)`` at its nominal level? What drives its coverage is the number
of examples of the smaller class and how far PC(+) is from 0.5 (towards the side where that
class's errors dominate the cost), not the total n. So the designs are:

* the smaller class (the positives) has m = 10, 25, 50, 100, 250 or 1,000 examples;
* the larger class (the negatives) has m (balanced) or 19 m (prevalence 0.05) examples;
* binormal scores, negatives N(0, 1), positives N(d, 1), d = 1.5 (as ``band_coverage.py``, whose
  closed-form truth is reused); the true optimal cost at each PC(+) is exact;
* coverage at PC(+) = 0.05, 0.10, ..., 0.95 (the band's grid is 0, 0.05, ..., 1) and at levels
  0.8, 0.9 and 0.95: the double bootstrap stores its calibration positions, so ``at_level``
  gives the other levels from the same replicates at no cost.

With the negatives as the smaller class the model is the same with PC(+) mirrored (swap the
labels, negate and shift the scores: N(0, 1) and N(d, 1) again, FNR and FPR swap, x -> 1 - x),
so PC(+) here is "PC of the smaller class": ``costdash.bands.regime`` reads the table at
``1 - PC(+)`` when the negatives are fewer.

The earned regime (``costdash.bands.regime``) takes, for each count and PC(+), the worse of the
two majority sizes and shows the level only where that is within 0.04 of nominal.
``tests/test_band_regime.py`` checks the code's table against the CSV this study writes.

Random streams: one :class:`numpy.random.SeedSequence` per design, keyed by (m, majority), split
into a data stream and a bootstrap stream; a design's test sets never depend on which other
designs ran, or on B.

Run ``python studies/double_bootstrap_coverage.py [--sets N] [--sets-250 N] [--sets-1000 N]
[--csv FILE] [--out FILE] [--table] [--quick]``; ``docs/bands.md`` (section "Where the double
bootstrap earns its level") gives the command and the tables of the published run.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    from costdash.bands.regime import TOLERANCE
    from costdash.bands import cost_band
except ModuleNotFoundError:  # run from a checkout without installing the package
    sys.path.insert(0, os.path.join(HERE, ".."))
    from costdash.bands.regime import TOLERANCE
    from costdash.bands import cost_band


def _band_coverage_module() -> Any:
    """``studies/band_coverage.py`` (its binormal truth), loaded by path."""
    name = "band_coverage_truth"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "band_coverage.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_TRUTH = _band_coverage_module()
SEPARATION: float = _TRUTH.SEPARATION
true_optimal_cost = _TRUTH.true_optimal_cost

MINORITY = (10, 25, 50, 100, 250, 1000)
"""Examples of the smaller class (the positives)."""
RATIOS = (1, 19)
"""Larger class = ratio x smaller: balanced, and prevalence 0.05."""
LEVELS = (0.8, 0.9, 0.95)
GRID = np.linspace(0.0, 1.0, 21)
PC_VALUES = np.round(GRID[1:-1], 2)
"""PC(+) = 0.05, ..., 0.95: where coverage is tallied (0 and 1 have cost 0 exactly)."""
_AT = np.arange(1, GRID.size - 1)
REPLICATES, INNER = 200, 100
SEED = 20241124

FIELDS = ("minority", "majority", "level", "pc", "sets", "covered", "truth_above",
          "truth_below", "coverage", "mc_se", "mean_width", "replicates", "inner_replicates",
          "separation", "seed")


def simulate(minority: int, majority: int, rng: np.random.Generator, d: float = SEPARATION
             ) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """One test set: ``minority`` positives scoring N(d, 1), ``majority`` negatives N(0, 1)."""
    y = np.zeros(minority + majority, dtype=bool)
    y[:minority] = True
    score = rng.standard_normal(y.size)
    score[:minority] += d
    return y, score


def run_design(minority: int, ratio: int, sets: int, *, seed: int = SEED,
               replicates: int = REPLICATES, inner: int = INNER) -> list[dict[str, Any]]:
    """``sets`` test sets of one design; one row per (level, PC(+)) with its tallies."""
    majority = ratio * minority
    data_seq, boot_seq = np.random.SeedSequence(seed, spawn_key=(minority, majority)).spawn(2)
    data, boot = np.random.default_rng(data_seq), np.random.default_rng(boot_seq)
    truth = true_optimal_cost(GRID)[_AT]
    shape = (len(LEVELS), _AT.size)
    covered, above, below, width = (np.zeros(shape) for _ in range(4))
    for _ in range(sets):
        y, s = simulate(minority, majority, data)
        band = cost_band((y, s), grid=GRID, method="double-bootstrap", replicates=replicates,
                         inner_replicates=inner, rng=boot)
        for j, level in enumerate(LEVELS):
            at = band.at_level(level)
            low, high = at.low[_AT], at.high[_AT]
            covered[j] += (low <= truth) & (truth <= high)
            above[j] += truth > high
            below[j] += truth < low
            width[j] += high - low
    rows = []
    for j, level in enumerate(LEVELS):
        for i, pc in enumerate(PC_VALUES):
            p = covered[j, i] / sets
            rows.append({"minority": minority, "majority": majority, "level": level,
                         "pc": float(pc), "sets": sets, "covered": int(covered[j, i]),
                         "truth_above": int(above[j, i]), "truth_below": int(below[j, i]),
                         "coverage": round(p, 4),
                         "mc_se": round(float(np.sqrt(p * (1.0 - p) / sets)), 4),
                         "mean_width": round(width[j, i] / sets, 5), "replicates": replicates,
                         "inner_replicates": inner, "separation": SEPARATION, "seed": seed})
    return rows


# --------------------------------------------------------------------------------------------
# Reading the results back: the CSV, the earned table, the markdown tables
# --------------------------------------------------------------------------------------------

def read_csv(path: str) -> list[dict[str, Any]]:
    """The rows :func:`write_csv` wrote, with numbers as numbers."""
    ints = {"minority", "majority", "sets", "covered", "truth_above", "truth_below",
            "replicates", "inner_replicates", "seed"}
    with open(path, newline="", encoding="utf-8") as fh:
        return [{k: (int(v) if k in ints else float(v)) for k, v in row.items()}
                for row in csv.DictReader(fh)]


def write_csv(path: str, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def earned_table(rows: list[dict[str, Any]]) -> dict[float, dict[int, tuple[float, ...]]]:
    """``{level: {minority: coverage at PC(+) 0.05 ... 0.95}}``, each the worse of the majority
    sizes (the one farther from nominal): the table ``costdash.bands.regime`` keeps."""
    out: dict[float, dict[int, tuple[float, ...]]] = {}
    for level in sorted({r["level"] for r in rows}):
        out[level] = {}
        for m in sorted({r["minority"] for r in rows}):
            values = []
            for pc in PC_VALUES:
                cells = [r["coverage"] for r in rows if r["level"] == level
                         and r["minority"] == m and abs(r["pc"] - pc) < 1e-9]
                values.append(round(max(cells, key=lambda c: abs(c - level)), 3))
            out[level][m] = tuple(values)
    return out


def python_table(rows: list[dict[str, Any]]) -> str:
    """The earned table as the Python literal of ``costdash.bands.regime``."""
    lines = ["DOUBLE_BOOTSTRAP_COVERAGE: dict[float, dict[int, tuple[float, ...]]] = {"]
    for level, by_count in earned_table(rows).items():
        lines.append(f"    {level}: {{")
        for m, values in by_count.items():
            text = ", ".join(f"{v:.3f}" for v in values)
            lines.append(f"        {m}: ({text}),")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines)


def _earned_ranges(values: Sequence[float], level: float) -> str:
    """The runs of PC(+) where the cell is within the tolerance; the longest (the first of
    equally long ones), where a band claims its level, in bold."""
    ok = [abs(v - level) <= TOLERANCE + 1e-12 for v in values]
    runs: list[tuple[int, int]] = []
    start = None
    for i, flag in enumerate([*ok, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            runs.append((start, i - 1))
            start = None
    if not runs:
        return "none"
    longest = max(runs, key=lambda r: r[1] - r[0])
    texts = []
    for a, b in runs:
        text = f"{PC_VALUES[a]:.2f}" + ("" if a == b else f"–{PC_VALUES[b]:.2f}")
        texts.append(f"**{text}**" if (a, b) == longest else text)
    return ", ".join(texts)


def format_tables(rows: list[dict[str, Any]]) -> str:
    """Coverage at 0.9 by design and PC(+); misses; the earned PC(+) ranges at each level."""
    head = "| positives (smaller class) | negatives | sets | " + " | ".join(
        f"{pc:.2f}" for pc in PC_VALUES) + " |"
    sep = "|---|---|---|" + "---|" * PC_VALUES.size
    out = ["Coverage of the true optimal cost at nominal 0.9, by PC(+) (the smaller class is "
           "the positives; with the negatives smaller read 1 − PC(+)):", "", head, sep]
    designs = sorted({(r["minority"], r["majority"]) for r in rows})
    for m, n in designs:
        cells = [r for r in rows if (r["minority"], r["majority"]) == (m, n)
                 and r["level"] == 0.9]
        cells.sort(key=lambda r: r["pc"])
        out.append(f"| {m:,} | {n:,} | {cells[0]['sets']} | "
                   + " | ".join(f"{r['coverage']:.2f}" for r in cells) + " |")
    out += ["", "Misses at nominal 0.9: share of test sets with the truth above / below the band "
            "at PC(+) 0.1, 0.5, 0.9.", "",
            "| positives | negatives | 0.10 | 0.50 | 0.90 |", "|---|---|---|---|---|"]
    for m, n in designs:
        cells = {round(r["pc"], 2): r for r in rows
                 if (r["minority"], r["majority"]) == (m, n) and r["level"] == 0.9}
        out.append(f"| {m:,} | {n:,} | " + " | ".join(
            f"{cells[pc]['truth_above'] / cells[pc]['sets']:.2f} / "
            f"{cells[pc]['truth_below'] / cells[pc]['sets']:.2f}" for pc in (0.1, 0.5, 0.9))
            + " |")
    table = earned_table(rows)
    out += ["", f"Earned regime: PC(+) of the smaller class where the worse of the two "
            f"majority sizes is within {TOLERANCE} of nominal; a band claims its level on the "
            "longest run (bold).", "",
            "| smaller class | " + " | ".join(f"level {lv:g}" for lv in table) + " |",
            "|---|" + "---|" * len(table)]
    for m in MINORITY:
        if all(m in by for by in table.values()):
            out.append(f"| {m:,} | " + " | ".join(_earned_ranges(table[lv][m], lv)
                                                   for lv in table) + " |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=int, default=150,
                        help="test sets per design with 10 to 100 positives (default 150)")
    parser.add_argument("--sets-250", type=int, default=150,
                        help="test sets per design with 250 positives (default 150)")
    parser.add_argument("--sets-1000", type=int, default=100,
                        help="test sets per design with 1,000 positives (default 100)")
    parser.add_argument("--minority", type=int, nargs="+", default=list(MINORITY),
                        help="counts of the smaller class to run (default all)")
    parser.add_argument("--inner", type=int, default=INNER)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 10 and 25 positives, 4 test sets, 10 inner replicates")
    parser.add_argument("--csv", help="write the raw tallies here "
                        "(the published run: studies/double_bootstrap_coverage.csv)")
    parser.add_argument("--out", help="also write the markdown tables to this file")
    parser.add_argument("--table", action="store_true",
                        help="print the earned table as costdash.bands.regime's literal")
    parser.add_argument("--from-csv", nargs="+", metavar="FILE",
                        help="run nothing: read these raw results (e.g. of runs of different "
                             "--minority counts, whose streams do not depend on each other) and "
                             "print their tables")
    args = parser.parse_args(argv)
    if args.quick:
        args.minority, args.sets, args.inner = [10, 25], 4, 10
    start, cpu = time.perf_counter(), time.process_time()
    rows: list[dict[str, Any]] = []
    if args.from_csv:
        args.minority = []
        rows = [r for path in args.from_csv for r in read_csv(path)]
        args.seed = rows[0]["seed"] if rows else args.seed
    for m in args.minority:
        sets = args.sets_1000 if m >= 1000 else args.sets_250 if m >= 250 else args.sets
        for ratio in RATIOS:
            t = time.perf_counter()
            rows += run_design(m, ratio, sets, seed=args.seed, inner=args.inner)
            if args.csv:     # after every design: a long run stopped early keeps what it did
                write_csv(args.csv, rows)
            print(f"[{m} positives, {ratio * m} negatives: {sets} test sets, "
                  f"{time.perf_counter() - t:.0f} s]", file=sys.stderr, flush=True)
    runtime, cpu_time = time.perf_counter() - start, time.process_time() - cpu
    text = format_tables(rows)
    command = "python studies/double_bootstrap_coverage.py " + " ".join(
        argv if argv is not None else sys.argv[1:])
    text += (f"\n\n(command: `{command.strip()}`; seed {args.seed}; B = {REPLICATES} x "
             f"{args.inner}; wall {runtime:.0f} s, CPU {cpu_time:.0f} s)")
    print(text)
    if args.table:
        print("\n" + python_table(rows))
    if args.csv and args.from_csv:
        write_csv(args.csv, rows)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return {"rows": rows, "text": text, "runtime": runtime, "cpu": cpu_time}


if __name__ == "__main__":
    main()
