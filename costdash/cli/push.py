"""``costdash push FILE --server URL``: save an analysis on a costdash server, print its links.

The file goes to the server's ``POST /api/v1/analyses`` with the loader options and the view (the
operating condition, volume, unit, and with ``--view`` any other field) as form fields. The view
is checked here first, with the server's own parser (:class:`costdash.view.View`), so a bad value
is refused before the upload, in the words the server would use. The ``multipart/form-data`` body is written here and streamed from disk
with the standard library's :mod:`urllib`, so the ``costdash`` package needs neither an HTTP
library nor the dashboard.

With ``COSTDASH_TOKEN`` set, it is sent as ``Authorization: Bearer <token>``: a personal API
token of an instance with accounts, or an upload key.

Exit status: 0 saved; 2 the input was refused (here, or by the server with a 4xx reply); 1 the
server failed or could not be reached. Every failure is one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urljoin, urlsplit

import costdash
from costdash.cli import number_type, print_json
from costdash.cli.common import (
    add_condition_options,
    add_loader_options,
    add_view_options,
    view_from_args,
)
from costdash.errors import InputFileError, ParameterError

if TYPE_CHECKING:
    import urllib.error

EXIT_REFUSED = 2
"""The input was refused: a bad file, option or address (the same status as every input error)."""
EXIT_FAILED = 1
"""The server failed (5xx) or could not be reached."""

ENDPOINT = "/api/v1/analyses"
CHUNK_BYTES = 1 << 16
MB = 1024 * 1024
LOADER_TEXT_OPTIONS = ("label_column", "model_column", "score_column", "fold_column", "positive",
                       "target_class", "segment_column")


_positive_float = number_type(float, "a number", "a positive number",
                              lambda value: value > 0 and value != float("inf"))


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "push", help="save an analysis on a costdash server and print its read-only link",
        description="Upload a predictions file to a costdash server, saved with an operating "
                    "condition, and print the analysis's read-only link (anyone with it can "
                    "view) and its manage link (keep it private: it renames, sets the expiry "
                    "or deletes).")
    parser.add_argument("file", help="predictions: CSV/TSV (.gz too), Parquet or JSON lines")
    parser.add_argument("--server", required=True, metavar="URL",
                        help="the costdash server, e.g. http://127.0.0.1:8050")
    add_condition_options(parser)
    add_view_options(parser)
    add_loader_options(parser)
    parser.add_argument("--segment-column", metavar="COL",
                        help="column of each row's segment (region, product, site; wide "
                             "layout): kept with the data for the Segments page and "
                             "decision.json's segments")
    group = parser.add_argument_group("the saved analysis")
    group.add_argument("--name", help="its name (default: the file's name)")
    group.add_argument("--expires-in-days", type=_positive_float, metavar="DAYS",
                       help="delete it and its links after this many days (default: never)")
    parser.add_argument("--timeout", type=_positive_float, default=300.0, metavar="SECONDS",
                        help="give up when the server is silent this long (default 300)")
    parser.add_argument("--json", action="store_true",
                        help="print the server's JSON reply (id, url, manage_url, manage_token, "
                             "name, dataset_id, expires_at)")
    parser.set_defaults(func=run)


def form_fields(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The text fields of the upload: the options given (the server's defaults are the CLI's).

    Raises
    ------
    ParameterError
        A view value out of its bounds (checked before anything is sent).
    """
    view = view_from_args(args)
    fields: list[tuple[str, str]] = []
    if args.layout != "auto":
        fields.append(("layout", args.layout))
    fields += [(name, getattr(args, name)) for name in LOADER_TEXT_OPTIONS
               if getattr(args, name) is not None]
    fields += [("models", model) for model in args.models or ()]
    if args.drop_missing:
        fields.append(("drop_missing", "true"))
    # The view as its query text (the one writer). An unset p(+) stays absent, for the server's
    # default rule (the prevalence), as analyze's; the data set is the file, not a view's id;
    # --models went with the loader options (the server ticks what the loader keeps).
    skip = {"data", "models"} if args.models else {"data"}
    fields += [(key, text) for key, text in view.to_query().items() if key not in skip]
    if args.name is not None:
        fields.append(("name", args.name))
    if args.expires_in_days is not None:
        fields.append(("expires_in_days", repr(args.expires_in_days)))
    return fields


class MultipartBody:
    """A ``multipart/form-data`` body of text fields and one file, read from disk as it is sent.

    Its length is known beforehand (``Content-Length``), so the file is never held in memory and
    the server can refuse an oversized upload before reading it.

    Parameters
    ----------
    fields : sequence of (str, str)
        Text fields, in order; a name may repeat.
    file_field : str
        The file's field name.
    path : Path
        The file; its name is sent as the part's file name.
    """

    def __init__(self, fields: Sequence[tuple[str, str]], file_field: str, path: Path):
        # 128 random bits: a file that happens to contain the boundary is not a real risk.
        self.boundary = f"costdash-{secrets.token_hex(16)}"
        self.path = path
        self.file_size = path.stat().st_size
        self._head = b"".join(self._part_header(name) + value.encode() + b"\r\n"
                              for name, value in fields)
        self._head += self._part_header(file_field, path.name)
        self._tail = f"\r\n--{self.boundary}--\r\n".encode()
        self.length = len(self._head) + self.file_size + len(self._tail)

    @property
    def content_type(self) -> str:
        return f"multipart/form-data; boundary={self.boundary}"

    def _part_header(self, name: str, filename: str | None = None) -> bytes:
        disposition = f'form-data; name="{name}"'
        if filename is not None:
            # Quotes and line breaks would end the header; non-ASCII names also go as RFC 5987
            # ``filename*``, which servers prefer to the plain one.
            plain = filename.encode("ascii", "replace").decode().translate(
                {ord('"'): "_", ord("\\"): "_", ord("\r"): "_", ord("\n"): "_"})
            disposition += f'; filename="{plain}"'
            if plain != filename:
                disposition += f"; filename*=UTF-8''{quote(filename, safe='')}"
            return (f"--{self.boundary}\r\nContent-Disposition: {disposition}\r\n"
                    f"Content-Type: application/octet-stream\r\n\r\n").encode()
        return f"--{self.boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()

    def __iter__(self) -> Iterator[bytes]:
        yield self._head
        remaining = self.file_size
        with self.path.open("rb") as f:
            while remaining > 0:
                chunk = f.read(min(CHUNK_BYTES, remaining))
                if not chunk:
                    raise InputFileError(f"{self.path.name}: the file shrank while it was being "
                                         "sent", source=self.path.name)
                remaining -= len(chunk)
                yield chunk
        yield self._tail


def check_file(path: Path, max_mb: float) -> None:
    """Refuse a missing file, or one over ``--max-mb``, before connecting rather than after."""
    name = path.name
    if not path.exists():
        raise InputFileError(f"{name}: no such file ({path})", source=name)
    if not path.is_file():
        raise InputFileError(f"{name}: is not a regular file", source=name)
    size = path.stat().st_size
    if size > max_mb * MB:
        raise InputFileError(f"{name}: is {size / MB:.3g} MB, over the {max_mb:g} MB limit "
                             "(--max-mb)", source=name)


def endpoint_of(server: str) -> str:
    parts = urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ParameterError(f"--server must be an http:// or https:// address such as "
                             f"http://127.0.0.1:8050, not '{server}'")
    return server.rstrip("/") + ENDPOINT


class PushFailed(Exception):
    """The server refused the upload, failed, or could not be reached; ``status`` to exit with."""

    def __init__(self, message: str, status: int):
        super().__init__(" ".join(message.split()))  # one line, whatever the server sent
        self.status = status


def refusal(reply: urllib.error.HTTPError, server: str) -> PushFailed:
    """The failure an error reply means: its ``{"error"}`` message, 2 for 4xx, 1 otherwise."""
    from http.client import HTTPException

    status = reply.code
    try:
        message = json.loads(reply.read())["error"]
        if not isinstance(message, str):
            raise TypeError(message)
    except (ValueError, KeyError, TypeError, OSError, HTTPException):
        # Not costdash's JSON error: a proxy's page, or --server names another kind of server.
        message = (f"the server at {server} answered {status} {reply.reason} without a costdash "
                   "error message; is --server the address of a costdash server?")
    finally:
        reply.close()
    return PushFailed(message, EXIT_REFUSED if 400 <= status < 500 else EXIT_FAILED)


def upload(args: argparse.Namespace) -> dict[str, Any]:
    # Imported here, not at the top: urllib.request and http.client (with email and ssl) are a
    # tenth of a second that `costdash --help` need not pay (issue 23).
    import urllib.error
    import urllib.request
    from http.client import HTTPException

    """Save the analysis; the server's reply.

    Raises
    ------
    CostdashError
        A missing or too large file, or a malformed ``--server`` (checked before connecting).
    PushFailed
        The server refused the upload, failed, or could not be reached.
    """
    url = endpoint_of(args.server)
    path = Path(args.file)
    check_file(path, args.max_mb)
    body = MultipartBody(form_fields(args), "file", path)
    headers = {"Content-Type": body.content_type, "Content-Length": str(body.length),
               "Accept": "application/json", "User-Agent": f"costdash/{costdash.__version__}"}
    # COSTDASH_TOKEN: a personal API token (an instance with accounts) or an upload key.
    if os.environ.get("COSTDASH_TOKEN", "").strip():
        headers["Authorization"] = "Bearer " + os.environ["COSTDASH_TOKEN"].strip()
    request = urllib.request.Request(url, data=iter(body), method="POST", headers=headers)
    server = args.server
    try:
        with urllib.request.urlopen(request, timeout=args.timeout) as response:
            text = response.read()
    except urllib.error.HTTPError as reply:
        raise refusal(reply, server) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, OSError) and reason.strerror:
            reason = reason.strerror
        raise PushFailed(f"cannot reach the costdash server at {server}: {reason}",
                         EXIT_FAILED) from None
    except TimeoutError:
        raise PushFailed(f"the costdash server at {server} did not answer within "
                         f"{args.timeout:g} s", EXIT_FAILED) from None
    except (OSError, HTTPException) as exc:
        raise PushFailed(f"the connection to {server} failed during the upload "
                         f"({type(exc).__name__}: {exc})", EXIT_FAILED) from None
    try:
        reply = json.loads(text)
    except ValueError:
        reply = None
    if not (isinstance(reply, dict)
            and all(isinstance(reply.get(k), str) for k in ("url", "manage_url"))):
        raise PushFailed(f"the server at {server} did not answer like a costdash server (no "
                         "links in its reply); is --server the right address?", EXIT_FAILED)
    # A server without COSTDASH_PUBLIC_URL answers relative links (it does not trust the Host
    # header to build them): they are relative to the address this upload went to.
    for key in ("url", "manage_url"):
        reply[key] = urljoin(url, reply[key])
    return reply


def run(args: argparse.Namespace) -> int:
    try:
        reply = upload(args)
    except PushFailed as exc:
        print(f"costdash: error: {exc}", file=sys.stderr)
        return exc.status
    if args.json:
        print_json(reply)
    else:
        print(reply["url"])
        # Only the uploader sees this terminal; the manage link must not be passed on.
        print(f"manage link, keep it private (rename, expiry, delete): {reply['manage_url']}")
    return 0
