"""Issue 23's server-side rows for the results service, in-process (a script, not a test).

    .venv/bin/python benchmarks/bench_results.py                          # this tree
    .venv/bin/python benchmarks/bench_results.py --against /tmp/before    # and another tree

One fresh process per tree (``PYTHONPATH`` first on the tree, so ``--against`` compares this
checkout with e.g. ``git archive <commit> | tar -x -C /tmp/before``) builds the app (SQLite and
the file cache in a temp dir), uploads the CSV through ``POST /api/v1/datasets`` (Flask's test
client: no socket) and times, through the real routes:

* the upload itself: the server's share of Explore's first plot of the same data, measured in
  the same process (reading, storing and analysing the data set and priming the view model the
  plot is drawn from): the baseline of the cold rows' ratios (issue 23: cold ≤ 1.5× it);
* ``choice.json`` cold (the first request of the data set), then ``--conditions`` new
  conditions (p(+), C(−|+) and the sensitivity box all new each time: nothing of a previous
  request's conditions is reusable but the condition-free part), p50 and p95, and the same
  condition again;
* ``report.html`` cold (``--report-repeats`` new views: the first, and their median) and a
  second request of the same view, and its size. The first is the first report after the
  upload (and after the ``choice.json`` rows above: the report's threshold-choice curves are
  kept with theirs); it fits the shown classifier's calibrations, which the later ones make
  from the kept maps. Before the upload the process does what a web process does before it
  serves (:func:`dashboard.factory.finish_setup`: Dash's setup and plotly's warm-up), not
  timed. Last, the same file uploaded again (a new handle) and its first report, with no
  ``choice.json`` before it: that report computes its threshold choice too (from issue 23's
  session 13 on in the web process while the report's child builds the other sections,
  :func:`dashboard.results.run_alongside`; its CPU counts both). The
  standalone
  form (``?standalone=1``, plotly.js embedded) cold and its size. The default report loads
  plotly.js from the server (``--against`` an older tree: whatever that tree serves).

The load average (``os.getloadavg``) before and after each tree is printed: the machine is
shared, and a loaded run's wall times say more as ratios than as absolutes. CPU seconds (the
upload's, each request's) count this process's threads and the compute gate's child processes
it waited for (where a cold report is built): ``report cold CPU / upload CPU`` is the cold
report's ratio in work done, which the neighbours' load changes less.

The CSV: ``y_true`` (5 % positives) and ``--classifiers`` probability scores (a logistic of a
shifted normal, 6 decimals) of ``--rows`` rows.
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


def write_csv(path: Path, rows: int, classifiers: int, seed: int = 1) -> None:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    y = rng.random(rows) < 0.05
    cols = {"y_true": y.astype(np.int8)}
    for k in range(classifiers):
        s = rng.normal(size=rows) + y * (0.4 + 1.6 * k / max(classifiers - 1, 1))
        cols[f"model_{k:02d}"] = np.round(1 / (1 + np.exp(-(s - 2))), 6)
    pd.DataFrame(cols).to_csv(path, index=False)


REPORT_P_POS = ("0.05", "0.06", "0.07", "0.08", "0.09")
"""The views of the cold reports (each a new report; their choice curves shared)."""


def measure(csv: Path, conditions: int, report_repeats: int = 3) -> dict:
    """The measurements of one tree (run in its own process)."""
    import io

    from dashboard.factory import create_app, finish_setup

    app = create_app({"data_dir": Path(tempfile.mkdtemp())})
    # What a web process does before it serves (gunicorn's post_worker_init, app.py): Dash's
    # one-time setup and, from issue 23's session 13 on, plotly's warm-up. Not timed.
    finish_setup(app.server)
    client = app.server.test_client()
    out: dict = {"load before": os.getloadavg()[0]}
    body = csv.read_bytes()

    def cpu_now() -> float:
        # This process's threads and its waited-for children (the compute gate's forked
        # processes, where a cold report is built): on a loaded machine CPU seconds say what
        # the work costs, wall seconds also what the neighbours take.
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    t, c = time.perf_counter(), cpu_now()
    reply = client.post("/api/v1/datasets", data={"file": (io.BytesIO(body), csv.name)},
                        content_type="multipart/form-data")
    out["upload (first plot, server)"] = time.perf_counter() - t
    out["upload CPU"] = cpu_now() - c
    assert reply.status_code == 200, reply.get_data(as_text=True)[:300]
    data_id = reply.get_json()["id"]
    base = f"/api/v1/datasets/{data_id}"

    cpu: list[float] = []

    def timed(path: str) -> tuple[float, int]:
        t, c = time.perf_counter(), cpu_now()
        r = client.get(path)
        assert r.status_code == 200, (path, r.get_data(as_text=True)[:300])
        cpu.append(cpu_now() - c)
        return time.perf_counter() - t, len(r.data)

    out["choice cold"], _ = timed(f"{base}/choice.json?p_pos=0.05&sens_p=0.02,0.1")
    out["choice cold / upload"] = out["choice cold"] / out["upload (first plot, server)"]
    out["choice cold CPU"] = cpu[-1]
    new = []
    cpu.clear()
    for k in range(conditions):
        p, fn = 0.02 + 0.003 * k, 2.0 + 0.5 * k
        q = f"p_pos={p:g}&cost_fn={fn:g}&sens_p={p / 2:g},{p * 2:g}&sens_fn=1,{fn * 2:g}"
        new.append(timed(f"{base}/choice.json?{q}")[0])

    def p95(values: list[float]) -> float:
        return sorted(values)[max(0, round(0.95 * len(values)) - 1)]

    out["choice new condition p50"] = statistics.median(new)
    out["choice new condition p95"] = p95(new)
    out["choice new condition max"] = max(new)
    out["choice new condition CPU p95"] = p95(cpu)
    out["choice same condition"], _ = timed(f"{base}/choice.json?{q}")
    cpu.clear()
    colds = [timed(f"{base}/report.html?p_pos={p}") for p in REPORT_P_POS[:report_repeats]]
    out["report first cold"] = colds[0][0]
    out["report first / upload"] = colds[0][0] / out["upload (first plot, server)"]
    out["report first CPU"] = cpu[0]
    out["report first CPU / upload CPU"] = cpu[0] / out["upload CPU"]
    out["report cold (median)"] = statistics.median(t for t, _ in colds)
    size = colds[-1][1]
    out["report cold / upload"] = out["report cold (median)"] / out["upload (first plot, server)"]
    out["report cold CPU (median)"] = statistics.median(cpu)
    out["report cold CPU / upload CPU"] = out["report cold CPU (median)"] / out["upload CPU"]
    out["report second"], _ = timed(f"{base}/report.html?p_pos={REPORT_P_POS[0]}")
    out["report MB"] = size / 1e6
    out["report standalone cold"], size = timed(
        f"{base}/report.html?p_pos={REPORT_P_POS[0]}&standalone=1")
    out["report standalone MB"] = size / 1e6
    # The first report after an upload with no threshold choice asked before (the report
    # computes its choice curves itself): the same file again, a new handle, nothing of the
    # first one's results reused.
    t = time.perf_counter()
    again = client.post("/api/v1/datasets", data={"file": (io.BytesIO(body), csv.name)},
                        content_type="multipart/form-data")
    out["upload again"] = time.perf_counter() - t
    assert again.status_code == 200 and again.get_json()["id"] != data_id
    cpu.clear()
    out["report first, no choice before"], _ = timed(
        f"/api/v1/datasets/{again.get_json()['id']}/report.html?p_pos={REPORT_P_POS[0]}")
    out["... / upload"] = (out["report first, no choice before"]
                           / out["upload (first plot, server)"])
    out["... CPU"] = cpu[0]
    out["... CPU / upload CPU"] = cpu[0] / out["upload CPU"]
    out["load after"] = os.getloadavg()[0]
    return out


def run_tree(tree: Path, csv: Path, conditions: int, report_repeats: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = (f"import sys, json; sys.path.insert(0, {str(tree)!r}); "
            f"sys.path.insert(0, {str(REPO / 'benchmarks')!r}); import bench_results as b; "
            f"print(json.dumps(b.measure(__import__('pathlib').Path({str(csv)!r}), "
            f"{conditions}, {report_repeats})))")
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, text=True,
                          capture_output=True)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--classifiers", type=int, default=50)
    parser.add_argument("--conditions", type=int, default=40)
    parser.add_argument("--report-repeats", type=int, default=3,
                        help="cold reports (new views), their median reported")
    parser.add_argument("--against", type=Path, help="another source tree, measured first")
    parser.add_argument("--csv-dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    csv = args.csv_dir / f"bench-results-{args.classifiers}x{args.rows}.csv"
    if not csv.exists():
        write_csv(csv, args.rows, args.classifiers)
    trees = ([("other", args.against)] if args.against else []) + [("this", REPO)]
    results = {name: run_tree(tree, csv, args.conditions, args.report_repeats)
               for name, tree in trees}
    print(f"{args.classifiers} x {args.rows:,} scores, {args.conditions} new conditions")
    names = list(results)
    print(f"{'':30s}" + "".join(f"{n:>12s}" for n in names))
    for key in results[names[-1]]:
        unit = "" if " / " in key or key.endswith("MB") or key.startswith("load") else " s"
        print(f"{key:30s}" + "".join(f"{results[n].get(key, float('nan')):>10.3f}{unit}"
                                     for n in names))


if __name__ == "__main__":
    main()
