"""What uploads leave behind: the temp files still in a data dir's ``tmp``."""

from __future__ import annotations

import time
from pathlib import Path


def tmp_files(data_dir: Path, wait: float = 5.0) -> list[str]:
    """Files left in ``data_dir/tmp``: after a second for the server to read what it was sent
    (when ``wait`` is not 0), and up to ``wait`` s more for it to finish and clean up."""
    tmp = data_dir / "tmp"
    if wait:
        time.sleep(1.0)
    deadline = time.monotonic() + wait
    while True:
        names = sorted(p.name for p in tmp.iterdir()) if tmp.is_dir() else []
        if not names or time.monotonic() > deadline:
            return names
        time.sleep(0.05)
