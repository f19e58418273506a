"""The server's share of issue 10's first plot, timed stage by stage in-process (a script, not
a test).

    .venv/bin/python benchmarks/bench_first_plot_server.py                      # 50 x 200,000
    .venv/bin/python benchmarks/bench_first_plot_server.py --against /tmp/base  # and another tree
    .venv/bin/python benchmarks/bench_first_plot_server.py --profile prof.txt   # and a cProfile
    .venv/bin/python benchmarks/bench_first_plot_server.py --what-if-parquet    # see below

The CSV is the one ``benchmarks/bench_dashboard.py`` uploads (its ``scores_table``: ``y_true``
and ``--classifiers`` score columns of ``--rows`` rows, 6 decimals; 94 MB at 50 x 200,000), and
the baseline measured in the same run is the same pipeline on ``--baseline-classifiers`` columns.

Each measurement is one fresh process on one source tree (``PYTHONPATH`` first on the tree, so
``--against`` compares two checkouts, e.g. a ``git worktree`` of the commit before a change)
that builds the app (:func:`dashboard.factory.create_app`, embedded default: SQLite and the
file cache in a temp dir), uploads a small file to warm up, then sends the CSV through the real
route, ``POST /api/v1/datasets`` (Flask's test client: no socket, everything else as served),
and reads the view model back as the Explore page's callbacks do (``ViewModels.full``, a cache
hit). The stages are timed inside that one request by wrapping the functions it calls:

* receive: parsing the multipart body, spooling and hashing the file (the POST minus the rest);
* read bytes, parse CSV, check columns: :func:`costdash.load_predictions`'s three steps, and
  load (rest): what else it does (option and limit checks);
* to Parquet: the data set as Arrow tables and their Parquet bytes (storage);
* SQL insert: the rest of ``store.put``;
* analyze: :func:`costdash.analyze` of every classifier, as the view model calls it;
* pack view model: the rest of :func:`dashboard.viewmodel.build_view_model`;
* JSON + cache: the rest of ``ViewModels.prime`` (its JSON text into the result cache);
* view model read: ``ViewModels.full`` after the POST (what the page's callbacks start from).

``--what-if-parquet`` adds a column: this tree with storage's Parquet written without
dictionary encoding (``use_dictionary=False``, still zstd), patched in for the measurement only:
what that change of ``dashboard/storage/sql.py`` would give (dictionary pages of float columns
with as many distinct values as rows are built, then dropped, and make the file larger).

Trees (and sizes) run alternately, ``--reps`` times each, so they see the same machine load
(the first place in each round rotates). Each stage's median wall time and CPU time (every
thread of the process: less sensitive to other processes' load) is printed, with the ratio of
this tree to ``--against`` at ``--classifiers`` and of the two sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STAGES = ("receive", "read bytes", "parse CSV", "check columns", "load (rest)", "to Parquet",
          "SQL insert", "analyze", "pack view model", "JSON + cache", "POST total",
          "view model read")


def write_csv(path: Path, n_rows: int, n_classifiers: int, seed: int) -> None:
    """The upload of ``bench_dashboard.bench_upload`` (its generator, imported from the file)."""
    import importlib.util

    import pandas as pd

    spec = importlib.util.spec_from_file_location("bench_dashboard",
                                                  REPO / "benchmarks" / "bench_dashboard.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pd.DataFrame(module.scores_table(n_rows, n_classifiers, seed=seed, decimals=6)).to_csv(
        path, index=False)


# --- one measurement, in a process of its own ------------------------------------------------------

def _multipart(path: Path) -> tuple[bytes, str]:
    boundary = "costdashbenchboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{path.name}\"\r\nContent-Type: text/csv\r\n\r\n").encode() \
        + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


class _Timer:
    """Wall and CPU time (this process's, all threads) spent in wrapped functions, by stage
    (outermost call only per stage)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._depth: dict[str, int] = {}

    def wrap(self, owner: object, attr: str, stage: str) -> None:
        inner = getattr(owner, attr, None)
        if inner is None:
            return  # this tree has no such function: the stage shows up inside another

        def timed(*args, **kwargs):
            self._depth[stage] = self._depth.get(stage, 0) + 1
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self._depth[stage] -= 1
                if not self._depth[stage]:
                    self.spent[stage] = self.spent.get(stage, 0.0) + time.perf_counter() - t0
                    self.cpu[stage] = self.cpu.get(stage, 0.0) + time.process_time() - c0

        setattr(owner, attr, timed)


def _stages(s: dict[str, float], post: float, read: float) -> dict[str, float]:
    return {"receive": post - s["store.put"] - s["prime"],
            "read bytes": s["read bytes"], "parse CSV": s["parse CSV"],
            "check columns": s["check columns"],
            "load (rest)": s["load"] - s["read bytes"] - s["parse CSV"] - s["check columns"],
            "to Parquet": s["to Parquet"],
            "SQL insert": s["store.put"] - s["load"] - s["to Parquet"],
            "analyze": s["analyze"], "pack view model": s["build_view_model"] - s["analyze"],
            "JSON + cache": s["prime"] - s["build_view_model"],
            "POST total": post, "view model read": read}


def _parquet_without_dictionary(table) -> bytes:
    import io

    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", use_dictionary=False)
    return sink.getvalue()


def measure(tree: Path, csv: Path, profile: Path | None,
            what_if: bool = False) -> dict[str, dict[str, float]]:
    """One upload of ``csv`` to an app of ``tree``; wall and CPU seconds per stage."""
    import dashboard.api
    import dashboard.services
    import dashboard.storage.sql
    import dashboard.viewmodel
    from costdash import io as cio
    from dashboard.config import Settings
    from dashboard.factory import create_app

    assert Path(dashboard.api.__file__).resolve().is_relative_to(tree.resolve()), tree
    with tempfile.TemporaryDirectory(prefix="costdash-fps-") as tmp:
        app = create_app(Settings.from_mapping({"data_dir": Path(tmp) / "data",
                                                "max_upload_bytes": 1024 * 1024**2}))
        client = app.server.test_client()
        services = app.server.extensions["costdash"]
        warm = Path(tmp) / "warm.csv"
        warm.write_text("y_true,a,b\n" + "".join(f"{i % 3 == 0:d},{(i * 7919) % 1000 / 999},"
                                                 f"{(i * 104729) % 997 / 996}\n"
                                                 for i in range(2000)))
        body, ctype = _multipart(warm)
        assert client.post("/api/v1/datasets", data=body, content_type=ctype).status_code == 200

        if what_if:
            dashboard.storage.sql._parquet_bytes = _parquet_without_dictionary
        timer = _Timer()
        timer.wrap(cio, "load_predictions", "load")
        timer.wrap(cio, "_read_source", "read bytes")
        timer.wrap(cio, "_read_table", "parse CSV")
        timer.wrap(cio, "_load_scored", "check columns")
        timer.wrap(dashboard.storage.sql, "dataset_to_tables", "to Parquet")
        timer.wrap(dashboard.storage.sql, "_parquet_bytes", "to Parquet")
        timer.wrap(dashboard.storage.sql.SqlStore, "put", "store.put")
        timer.wrap(dashboard.viewmodel, "analyze", "analyze")
        timer.wrap(dashboard.services, "build_view_model", "build_view_model")
        timer.wrap(dashboard.services.ViewModels, "prime", "prime")
        body, ctype = _multipart(csv)
        profiler = None
        if profile is not None:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        t0, c0 = time.perf_counter(), time.process_time()
        reply = client.post("/api/v1/datasets", data=body, content_type=ctype)
        post, post_cpu = time.perf_counter() - t0, time.process_time() - c0
        if profiler is not None:
            profiler.disable()
        assert reply.status_code == 200, reply.get_data(as_text=True)
        data_id = reply.get_json()["id"]
        t0, c0 = time.perf_counter(), time.process_time()
        model = services.views.full(data_id)
        read, read_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert len(model["classifiers"]) == int(csv.stem.split("x")[0])
        out = {"wall": _stages(timer.spent, post, read),
               "cpu": _stages(timer.cpu, post_cpu, read_cpu)}
        if profiler is not None:
            import io
            import pstats

            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(45)
            profile.write_text(text.getvalue())
        return out


def _worker(argv: list[str]) -> int:
    tree, csv = Path(argv[0]), Path(argv[1])
    profile = Path(argv[2]) if len(argv) > 2 and argv[2] else None
    sys.path.insert(0, str(tree))
    print(json.dumps(measure(tree, csv, profile, what_if=argv[3:4] == ["what-if"])))
    return 0


# --- the runs --------------------------------------------------------------------------------------

def run_one(tree: Path, csv: Path, profile: Path | None = None,
            what_if: bool = False) -> dict[str, dict[str, float]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(tree),
                           str(csv), str(profile or ""), "what-if" if what_if else ""],
                          env=env, cwd=tree,
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        raise RuntimeError(f"measurement on {tree} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _table(kind: str, medians: dict, trees: dict, sizes: list[int]) -> None:
    columns = [(label, k) for label in trees for k in sizes]
    head = f"{kind} s".ljust(18) + "".join(f"{label}, {k}".rjust(18) for label, k in columns)
    print(head + ("ratio".rjust(8) if "against" in trees else ""))
    for s in STAGES:
        line = s.ljust(18) + "".join(f"{medians[label][k][kind][s]:18.3f}"
                                     for label, k in columns)
        if "against" in trees:
            here, base = (medians[label][sizes[0]][kind][s] for label in ("this tree", "against"))
            line += f"{here / base:8.2f}" if base > 0.0005 else ""
        print(line)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        return _worker(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--classifiers", type=int, default=50)
    parser.add_argument("--baseline-classifiers", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--against", type=Path,
                        help="another checkout measured alternately in the same run")
    parser.add_argument("--profile", type=Path,
                        help="write a cProfile (cumulative) of this tree's first big POST here")
    parser.add_argument("--what-if-parquet", action="store_true",
                        help="also this tree with storage's Parquet written without dictionary "
                             "encoding (patched in for the measurement)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    trees = {"this tree": REPO}
    if args.against:
        trees["against"] = args.against.resolve()
    if args.what_if_parquet:
        trees["what-if"] = REPO
    sizes = [args.classifiers] + ([args.baseline_classifiers] if args.baseline_classifiers
                                  else [])
    results: dict[str, dict[int, list[dict]]] = {label: {k: [] for k in sizes} for label in trees}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="costdash-fps-") as tmpdir:
        csvs = {}
        for k in sizes:
            csvs[k] = Path(tmpdir) / f"{k}x{args.rows}.csv"
            t = time.perf_counter()
            write_csv(csvs[k], args.rows, k, seed=100)
            print(f"[setup] {csvs[k].name}: {csvs[k].stat().st_size / 1e6:.0f} MB in "
                  f"{time.perf_counter() - t:.1f} s", flush=True)
        for rep in range(args.reps):
            # The first process after a pause or a small run parses slower (memory the kernel
            # has to hand out again): each tree takes the first place in turn.
            order = list(trees.items())
            order = order[rep % len(order):] + order[:rep % len(order)]
            for k in sizes:
                for label, tree in order:
                    profile = args.profile if (rep == 0 and k == sizes[0]
                                               and label == "this tree") else None
                    r = run_one(tree, csvs[k], profile, what_if=label == "what-if")
                    results[label][k].append(r)
                    w, c = r["wall"], r["cpu"]
                    print(f"[rep {rep + 1}] {label}, {k} classifiers: POST "
                          f"{w['POST total']:.2f} s, CPU {c['POST total']:.2f} s (parse "
                          f"{w['parse CSV']:.2f}, analyze {w['analyze']:.2f}, Parquet "
                          f"{w['to Parquet']:.2f})", flush=True)
            loads.append(os.getloadavg()[0])

    medians = {label: {k: {kind: {s: statistics.median(r[kind][s] for r in runs)
                                  for s in STAGES} for kind in ("wall", "cpu")}
                       for k, runs in by_size.items()} for label, by_size in results.items()}
    print(f"\nmedians of {args.reps} reps, {args.rows:,} rows; load average (1 min) "
          f"{min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} CPUs. CPU time counts "
          "every thread of the process (pyarrow parses on several), so it can exceed wall time.")
    for kind in ("wall", "cpu"):
        print()
        _table(kind, medians, trees, sizes)
    for label in trees:
        if len(sizes) > 1:
            by = medians[label]
            print(f"{label}: POST of {sizes[0]} classifiers takes "
                  f"{by[sizes[0]]['wall']['POST total'] / by[sizes[1]]['wall']['POST total']:.2f}"
                  f"x the wall time of {sizes[1]} (the baseline)")
    if args.profile:
        print(f"cProfile of this tree's first {sizes[0]}-classifier POST: {args.profile}")
    if args.json:
        args.json.write_text(json.dumps({"rows": args.rows, "loads": loads,
                                         "trees": {k: str(v) for k, v in trees.items()},
                                         "runs": results, "medians": medians}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
