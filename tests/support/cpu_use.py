"""CPU seconds per test module, with every process the tests start (servers, workers, the
browser): ``COSTDASH_TEST_CPU=DIR scripts/test.sh`` writes one JSON file per pytest process
there; ``python scripts/test_durations.py --cpu DIR`` adds them up.

Wall seconds (the JUnit files) say how long a module holds a worker; on two cores shared by
three or four workers they mostly say how loaded the machine was. CPU seconds say what a module
costs everyone else, which is what a shorter CI run has to cut: in a whole-suite run the two
cores are busy 99-100 % of the time (``/proc/stat``, 2026-11-27), three workers or four.

What it cannot see: a process that ends without being waited for by one it can see. Chromium's
renderers end with their page and take their CPU with them; in that run the sum here was about
half of what ``/proc/stat`` showed the cores did, so a browser test costs more than it says.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import psutil
import pytest


def _tree_cpu() -> float:
    """This process's CPU, its reaped children's, and every live descendant's with theirs."""
    me = psutil.Process()
    total = 0.0
    for process in [me, *me.children(recursive=True)]:
        try:
            t = process.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


class CpuUse:
    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.seconds: dict[str, float] = defaultdict(float)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        before = _tree_cpu()
        yield
        self.seconds[item.location[0]] += _tree_cpu() - before

    def pytest_sessionfinish(self, session):
        self.out_dir.mkdir(parents=True, exist_ok=True)
        name = f"cpu-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{os.getpid()}.json"
        (self.out_dir / name).write_text(json.dumps(
            {"modules": dict(self.seconds), "whole_process": _tree_cpu()}, indent=0))


def register(config: pytest.Config) -> None:
    out = os.environ.get("COSTDASH_TEST_CPU")
    if out:
        config.pluginmanager.register(CpuUse(Path(out)), "costdash-cpu-use")
