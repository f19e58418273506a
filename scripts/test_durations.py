"""Writes tests/durations.json, the seconds each test module took, from the test script's JUnit
XML reports: ``python scripts/test_durations.py test-output/parallel.xml test-output/serial.xml``.

``python scripts/test_durations.py --cpu DIR`` prints instead the CPU seconds each module cost,
its servers, workers and browser included, from a run with ``COSTDASH_TEST_CPU=DIR``
(tests/support/cpu_use.py): what to cut for a shorter CI run.

The suite starts its longest modules first (tests/conftest.py), so that no long module is left
to run alone at the end of the parallel run while the other workers wait. Re-run this after a
module gets much slower or a slow module is added; a module missing from the file is started
before every known one (a new module may be slow).
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "durations.json"


def module_of(classname: str) -> str | None:
    """``tests.web.test_x.TestY`` -> ``tests/web/test_x.py`` (the longest prefix that is a file);
    doctests (``costdash.x``) -> ``costdash/x.py``."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        candidate = Path(*parts[:end]).with_suffix(".py")
        if (REPO / candidate).is_file():
            return candidate.as_posix()
    return None


def module_seconds(paths: list[str]) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    for path in map(Path, paths):
        if not path.is_file():
            continue
        for case in ET.parse(path).getroot().iter("testcase"):
            module = module_of(case.get("classname", ""))
            if module is not None:
                seconds[module] += float(case.get("time", 0.0))
    return {module: round(s, 1) for module, s in sorted(seconds.items())}


def module_cpu(directory: Path) -> tuple[dict[str, float], float]:
    """CPU seconds per module, and of the pytest processes all told, from ``DIR/cpu-*.json``."""
    seconds: dict[str, float] = defaultdict(float)
    whole = 0.0
    for path in sorted(directory.glob("cpu-*.json")):
        data = json.loads(path.read_text())
        if path.name.startswith("cpu-main-"):  # a controller's tree holds its workers
            whole += data["whole_process"]
        for module, s in data["modules"].items():
            seconds[module] += s
    return dict(seconds), whole


def print_cpu(directory: Path) -> None:
    seconds, whole = module_cpu(directory)
    for module, s in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"{s:8.1f}  {module}")
    print(f"{sum(seconds.values()):8.1f}  in tests, of {whole:.1f} CPU s in the pytest "
          "processes and what they started")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--cpu"]:
        print_cpu(Path(sys.argv[2]))
        sys.exit(0)
    OUT.write_text(json.dumps(module_seconds(sys.argv[1:]), indent=0) + "\n")
    print(f"wrote {OUT.relative_to(REPO)}")
