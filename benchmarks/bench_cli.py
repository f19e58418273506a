"""Benchmark of the command line (issue 23): ``costdash analyze FILE --json`` against pandas +
scikit-learn, and ``costdash --help``.

The workload is a wide CSV of ``--classifiers`` x ``--rows`` (default 20 x 200,000) with 5%
positives and probability scores written with 6 decimals (about 150,000 distinct scores per
classifier, so about as many ROC points). Every contender runs as a fresh process, as a user
runs it, imports included:

* **baseline**: ``pandas.read_csv(FILE)`` and ``sklearn.metrics.roc_curve(y, score)`` for each
  classifier (the ROC points alone: no hull, no envelope, no choice, no output);
* **analyze**: ``python -m costdash analyze FILE --json`` with its defaults, stdout to
  /dev/null (target: at most 0.8x the baseline);
* **analyze, no threshold choice**: the same with ``--no-threshold-choice`` (for reference);
* **analyze, all points**: ``--all-points`` (for reference; ``--no-all-points-run`` skips it);
* **analyze @ TREE** (``--against TREE``): the same command run in another checkout, e.g. a
  ``git worktree`` of the commit before the changes.

The last two write hundreds of MB and disturb the runs after them: they are timed after the
main loop, each in ``--reference-repeats`` pairs with a baseline run beside it.
* **--help**: ``python -m costdash --help`` (target: at most 0.3 s), and the interpreter
  with numpy alone (``python -c "import numpy"``), the floor any command pays.

Bytecode caches may be written (PYTHONDONTWRITEBYTECODE is dropped for the contenders) and one
warm-up run of each comes first. In each repeat baseline and analyze run back to back (which
goes first alternates), so that each pair sees the same machine load, then the others in a
rotating order; the ratio reported is the median of the per-repeat ratios (and the ratio of the
medians). The load average is printed before and after.

Usage::

    .venv/bin/python benchmarks/bench_cli.py [--repeats 7] [--markdown]
    .venv/bin/python benchmarks/bench_cli.py --rows 20000 --repeats 2   # a quick check
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BASELINE = """\
import sys
import pandas as pd
from sklearn.metrics import roc_curve
df = pd.read_csv(sys.argv[1])
y = df["y_true"].to_numpy()
for column in df.columns[1:]:
    roc_curve(y, df[column].to_numpy())
"""


def write_workload(path: Path, n_classifiers: int, n_rows: int, seed: int = 0) -> None:
    """Labels with 5% positives; scores sigmoid(normal + shift), 6 decimals."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    y = rng.random(n_rows) < 0.05
    cols: dict[str, np.ndarray] = {"y_true": y.astype(np.int8)}
    for k in range(n_classifiers):
        z = rng.normal(size=n_rows) + y * (0.4 + 1.6 * k / max(n_classifiers - 1, 1)) - 2.0
        cols[f"model_{k:02d}"] = np.round(1.0 / (1.0 + np.exp(-z)), 6)
    pd.DataFrame(cols).to_csv(path, index=False)


# The contenders may write bytecode caches (a shell or CI may set PYTHONDONTWRITEBYTECODE):
# an installed package has them, and without them every run compiles the modules it imports.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], stdout: object = subprocess.DEVNULL, cwd: str | None = None) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, env=ENV, cwd=cwd)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr.decode(errors='replace')}")
    return elapsed


def load() -> str:
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "n/a"


def environment() -> str:
    import pandas
    import sklearn

    cpu = platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"Python {platform.python_version()}, numpy {np.__version__}, pandas "
            f"{pandas.__version__}, scikit-learn {sklearn.__version__}; {cpu}, "
            f"{os.cpu_count()} CPUs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="interleaved runs of each")
    parser.add_argument("--classifiers", type=int, default=20)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--reference-repeats", type=int, default=2,
                        help="pairs of (baseline, reference) for --all-points and --against")
    parser.add_argument("--no-all-points-run", action="store_true",
                        help="skip the --all-points reference run (hundreds of MB of JSON)")
    parser.add_argument("--against", metavar="TREE",
                        help="also time `analyze --json` of another checkout (e.g. a `git "
                             "worktree` of an older commit), imported from TREE by PYTHONPATH")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)

    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "predictions.csv"
        write_workload(csv, args.classifiers, args.rows)
        script = Path(tmp) / "baseline.py"
        script.write_text(BASELINE)
        contenders = {
            "baseline": [py, str(script), str(csv)],
            "analyze": [py, "-m", "costdash", "analyze", str(csv), "--json"],
            "analyze --no-threshold-choice": [py, "-m", "costdash", "analyze", str(csv),
                                              "--json", "--no-threshold-choice"],
            "--help": [py, "-m", "costdash", "--help"],
            "python + numpy": [py, "-c", "import numpy"],
        }
        # The references write hundreds of MB of JSON: timed apart, after the main loop, each
        # against a baseline run just before or after it (they would disturb the runs that
        # follow them in the loop).
        references: dict[str, tuple[list[str], str | None]] = {}
        if not args.no_all_points_run:
            references["analyze --all-points"] = (
                [py, "-m", "costdash", "analyze", str(csv), "--json", "--all-points"], None)
        if args.against:
            # `python -m` imports from the working directory first: run it in TREE.
            references["analyze @ " + os.path.basename(args.against.rstrip("/"))] = (
                [py, "-m", "costdash", "analyze", str(csv), "--json"],
                os.path.abspath(args.against))
        sizes = {}
        warm = {**{k: (v, None) for k, v in contenders.items()}, **references}
        for name, (argv_, cwd) in warm.items():  # warm-up: file caches, bytecode caches
            out = Path(tmp) / "out.json"
            with open(out, "wb") as fh:
                timed(argv_, stdout=fh, cwd=cwd)
            if name.startswith("analyze"):
                sizes[name] = out.stat().st_size
            out.unlink()
        names = list(contenders)
        times: dict[str, list[float]] = {k: [] for k in names}
        before = load()
        for r in range(args.repeats):
            # baseline and analyze back to back (which goes first alternates), so that each
            # pair sees the same load; the others after them, in a rotating order.
            pair = ["baseline", "analyze"] if r % 2 == 0 else ["analyze", "baseline"]
            others = [n for n in names if n not in pair]
            k = r % len(others)
            for name in pair + others[k:] + others[:k]:
                times[name].append(timed(contenders[name]))
            print(f"  repeat {r + 1}/{args.repeats}: " + ", ".join(
                f"{k} {v[-1]:.2f}s" for k, v in times.items()) + f"; load {load()}",
                file=sys.stderr)
        reference_pairs: dict[str, list[tuple[float, float]]] = {}
        for name, (argv_, cwd) in references.items():
            reference_pairs[name] = []
            for r in range(args.reference_repeats):
                if r % 2 == 0:
                    base = timed(contenders["baseline"])
                    ref = timed(argv_, cwd=cwd)
                else:
                    ref = timed(argv_, cwd=cwd)
                    base = timed(contenders["baseline"])
                reference_pairs[name].append((base, ref))
                print(f"  {name}: {ref:.2f}s, baseline {base:.2f}s; load {load()}",
                      file=sys.stderr)
        after = load()
        csv_mb = csv.stat().st_size / 1e6

    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = {k: [a / b for a, b in zip(times[k], times["baseline"])]
              for k in names if k.startswith("analyze")}
    rows = [("contender", "median (s)", "ratio to baseline (median of pairs)",
             "ratio of medians", "output")]
    for k in names:
        if k.startswith("analyze"):
            target = " (target 0.8x: " + (
                "met)" if statistics.median(ratios[k]) <= 0.8 else "MISSED)") \
                if k == "analyze" else ""
            rows.append((k, f"{med[k]:.2f}", f"{statistics.median(ratios[k]):.2f}x{target}",
                         f"{med[k] / med['baseline']:.2f}x",
                         f"{sizes[k] / 1e6:.1f} MB JSON" if k in sizes else ""))
        elif k == "--help":
            rows.append((k, f"{med[k]:.3f}", "", "",
                         "target 0.3 s: " + ("met" if med[k] <= 0.3 else "MISSED")))
        else:
            rows.append((k, f"{med[k]:.3f}" if k != "baseline" else f"{med[k]:.2f}", "", "",
                         ""))
    print(f"{args.classifiers} classifiers x {args.rows:,} rows, {csv_mb:.0f} MB CSV; "
          f"{environment()}")
    print(f"load average before: {before}; after: {after}; median of {args.repeats} "
          "interleaved runs")
    if args.markdown:
        print("| " + " | ".join(rows[0]) + " |")
        print("|" + "---|" * len(rows[0]))
        for row in rows[1:]:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
    for name, pairs in reference_pairs.items():
        ratio = statistics.median(ref / base for base, ref in pairs)
        print(f"{name}: median {statistics.median(ref for _, ref in pairs):.2f} s, "
              f"{ratio:.2f}x its baseline run beside it (median of {len(pairs)} pairs), "
              f"{sizes[name] / 1e6:.1f} MB JSON")
    print("\nall timings (s):")
    for k, v in times.items():
        print(f"  {k:<30} " + " ".join(f"{x:.2f}" for x in v))
    for name, pairs in reference_pairs.items():
        print(f"  {name:<30} " + " ".join(f"{ref:.2f} (baseline {base:.2f})"
                                          for base, ref in pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
