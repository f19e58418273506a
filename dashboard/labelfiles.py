"""Where the Multiclass page keeps uploaded label files: once per content, by SHA-256, under
``COSTDASH_DATA_DIR/multiclass/<sha256>.csv``, so every worker process (and host sharing the data
dir) finds a file the browser refers to by ``{"sha", "name"}``. Files are written atomically
(a temp file renamed into place), so a reader never sees half of one.

Label files are small (the page takes at most 20 MB) and are read again by
:func:`costdash.multiclass.load_label_predictions` on every run; the data sets of the other
pages live in :mod:`dashboard.storage`.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from costdash.errors import InputFileError

__all__ = ["LabelFiles"]

_SHA = re.compile(r"^[0-9a-f]{64}$")


class LabelFiles:
    """Label files in ``directory``, named by the SHA-256 of their bytes."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def path(self, sha: object) -> Path:
        """Where the file ``sha`` is kept; InputFileError when ``sha`` is not a reference."""
        if not isinstance(sha, str) or not _SHA.match(sha):
            raise InputFileError("the label file reference is invalid; upload the file again")
        return self.directory / f"{sha}.csv"

    def put(self, raw: bytes) -> str:
        """Keep ``raw`` (once per content); returns its reference, the SHA-256."""
        sha = hashlib.sha256(raw).hexdigest()
        path = self.path(sha)
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            tmp.write_bytes(raw)
            os.replace(tmp, path)
        return sha

    def exists(self, sha: object) -> bool:
        return self.path(sha).is_file()
