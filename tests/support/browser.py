"""The Chromium the browser tests drive, and the flags it needs here.

Debian's ``chromium-headless-shell`` comes first when it is installed (``scripts/test.sh``
installs it): it is the same Chromium release, Blink and V8 as Debian's ``chromium``, built
for headless use only, without the desktop browser's layers. A browser module took about a third
less CPU with it (``tests/web/test_e2e_view.py`` alone: 25.3 against 16.8 CPU seconds), and the
whole suite is bound by the two cores' CPU (docs/development.md). ``CHROMIUM_PATH`` picks
another binary, e.g. ``/usr/bin/chromium`` to run the tests in the full browser.
"""

from __future__ import annotations

import os
from pathlib import Path

HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
FULL_BROWSER = Path("/usr/bin/chromium")

LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
"""``--no-sandbox``: the tests run as root here; the others spare work nobody looks at."""


def chromium_path() -> str:
    """The Chromium binary the tests launch: ``CHROMIUM_PATH``, else the headless shell when it
    is installed, else Debian's full browser."""
    chosen = os.environ.get("CHROMIUM_PATH")
    if chosen:
        return chosen
    return str(HEADLESS_SHELL if HEADLESS_SHELL.exists() else FULL_BROWSER)


def launch_args(pytest_playwright_args: dict) -> dict:
    """pytest-playwright's ``browser_type_launch_args`` with this binary and these flags."""
    return {**pytest_playwright_args, "executable_path": chromium_path(), "args": LAUNCH_ARGS}
