"""Where the Multiclass page keeps uploaded label files: each upload under a handle of its own
(256 random bits), ``COSTDASH_DATA_DIR/multiclass/<handle>.csv``, so every worker process (and
host sharing the data dir) finds a file the browser refers to by ``{"sha", "name"}`` (``sha``
holds the handle). A handle, not the content's hash: knowing a file's hash must not tell
whether someone uploaded it (issue 11, finding 3). Files are written atomically (a temp file
renamed into place), so a reader never sees half of one, and swept after the upload retention.

Label files are small (the page takes at most 20 MB) and are read again by
:func:`costdash.multiclass.load_label_predictions` on every run; the data sets of the other
pages live in :mod:`dashboard.storage`.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path

from costdash.errors import InputFileError

__all__ = ["LabelFiles"]

_SHA = re.compile(r"^[0-9a-f]{64}$")


class LabelFiles:
    """Label files in ``directory``, each named by its upload's handle."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    @classmethod
    def of_data_dir(cls, data_dir: Path) -> LabelFiles:
        """The label files of an app whose ``COSTDASH_DATA_DIR`` is ``data_dir``."""
        return cls(Path(data_dir) / "multiclass")

    def path(self, sha: object) -> Path:
        """Where the file ``sha`` is kept; InputFileError when ``sha`` is not a reference."""
        if not isinstance(sha, str) or not _SHA.match(sha):
            raise InputFileError("the label file reference is invalid; upload the file again")
        return self.directory / f"{sha}.csv"

    def put(self, raw: bytes) -> str:
        """Keep ``raw``; returns its new handle."""
        handle = secrets.token_hex(32)
        path = self.path(handle)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_bytes(raw)
        os.replace(tmp, path)
        return handle

    def sweep(self, retention_days: float, now: float | None = None) -> int:
        """Delete label files uploaded more than ``retention_days`` ago (0: keep them); how
        many went."""
        if not retention_days or retention_days <= 0 or not self.directory.is_dir():
            return 0
        cutoff = (time.time() if now is None else now) - retention_days * 86400
        gone = 0
        for path in self.directory.iterdir():
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    gone += 1
            except FileNotFoundError:  # another worker swept it first
                pass
        return gone

    def exists(self, sha: object) -> bool:
        return self.path(sha).is_file()
