"""Adds up the JUnit XML reports of the test script's runs into one closing line.

``python scripts/junit_total.py A.xml B.xml`` prints ``total: N passed, N failed, N skipped``
(errors count as failed); a report that does not exist counts as no tests.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def totals(paths: list[str]) -> tuple[int, int, int]:
    passed = failed = skipped = 0
    for path in map(Path, paths):
        if not path.is_file():
            continue
        for suite in ET.parse(path).getroot().iter("testsuite"):
            tests, skips = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
            bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            passed += tests - skips - bad
            failed += bad
            skipped += skips
    return passed, failed, skipped


if __name__ == "__main__":
    passed, failed, skipped = totals(sys.argv[1:])
    print(f"total: {passed} passed, {failed} failed, {skipped} skipped")
