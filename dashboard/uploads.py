"""Uploads streamed to disk: the request class that spools every uploaded file to a hashing
temp file in the data dir, and the sweep of the temp files a dead process left.

A file is hashed (SHA-256, the data set's identity) while Werkzeug writes it, so the store never
reads it again to know whether it holds it already; every temp file of a request goes when the
request ends, however it ends (:class:`UploadRequest`), and one whose writer died is swept by
the app's housekeeping (:func:`sweep_upload_files`, from :class:`dashboard.factory.Maintenance`).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import IO, Any

from flask import Request, current_app

__all__ = ["UPLOAD_PREFIX", "HashingFile", "UploadRequest", "sweep_upload_files"]

log = logging.getLogger(__name__)

UPLOAD_PREFIX = "upload-"
"""Name prefix of the temp files of uploads (what the sweep looks for)."""


class HashingFile:
    """A temporary file on disk that hashes what is written to it (the upload's SHA-256).

    Its writer holds an exclusive ``flock`` on it while it is open, so the periodic sweep of
    the temp directory (:func:`sweep_upload_files`) can tell a file whose upload is still
    arriving from one left behind by a process that died (the kernel drops a dead process's
    locks).
    """

    def __init__(self, directory: Path):
        directory.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=UPLOAD_PREFIX, dir=directory)
        self.path = Path(name)
        self._file: IO[bytes] = os.fdopen(fd, "w+b")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a file system without locks: the sweep's age rule still applies
            pass
        self._hash = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self._hash.update(data)
        self.size += len(data)
        return self._file.write(data)

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    def discard(self) -> None:
        """Close and remove the file (again: a no-op)."""
        try:
            self._file.close()
        finally:
            self.path.unlink(missing_ok=True)

    def __getattr__(self, name: str) -> Any:  # read, seek, tell, flush, close, ...
        return getattr(self._file, name)



def sweep_upload_files(directory: Path, *, older_than: float) -> int:
    """Remove temp upload files that no process is writing (their writer died: a worker killed
    mid-upload) and that were last written before ``older_than`` (a time stamp); returns how
    many. Files whose writer holds their lock are left alone whatever their age."""
    removed = 0
    if not directory.is_dir():
        return 0
    for path in directory.glob(UPLOAD_PREFIX + "*"):
        try:
            if path.stat().st_mtime >= older_than:
                continue
            with open(path, "rb") as f:
                try:
                    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # an upload still arriving
                path.unlink(missing_ok=True)
                removed += 1
        except OSError:  # gone meanwhile, or not ours to remove
            continue
    return removed


class UploadRequest(Request):
    """Flask request whose uploaded files go straight to a hashing temp file in the data dir.

    Every such file is removed when the request ends (:meth:`close`, which Flask calls when it
    pops the request context), whatever ended it: a reply, an error, a body over the limit
    found while the form was being read, or a client that hung up mid-upload. Werkzeug forgets
    the files of a form it could not finish reading, so they are tracked here as they are made.
    """

    def _get_file_stream(self, total_content_length: int | None, content_type: str | None,
                         filename: str | None = None,
                         content_length: int | None = None) -> IO[bytes]:
        services = current_app.extensions.get("costdash")
        if services is None:
            return super()._get_file_stream(total_content_length, content_type, filename,
                                            content_length)
        stream = HashingFile(services.settings.data_dir / "tmp")
        self.__dict__.setdefault("_costdash_uploads", []).append(stream)
        return stream  # type: ignore[return-value]

    def close(self) -> None:
        try:
            super().close()
        finally:
            for stream in self.__dict__.pop("_costdash_uploads", ()):
                try:
                    stream.discard()
                except OSError:
                    log.exception("could not remove the temp file %s", stream.path)
