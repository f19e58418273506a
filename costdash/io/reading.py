"""The bytes and the table of a predictions file (private; :func:`costdash.io.load_predictions`
and the multiclass readers use it): reading a path or an upload within a size limit, gzip and
UTF-16, the format told from the content (Parquet, JSON, JSON lines or delimited text), the
encoding, the separator (:func:`sniff_separator`) and the parsers, each failure said in one
line that names the file."""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import os
import re
import zlib
from collections.abc import Sequence
from typing import IO

import numpy as np
import pyarrow as pa

from costdash._lazy import lazy_module
from costdash.io.json_shape import check_json_table
from costdash.io.messages import _q, _reason, _size, _too_many_rows
from costdash.errors import InputFileError, ParameterError

_SNIFF_BYTES = 16 * 1024
# A header line longer than this is not a header (a binary file, or text that is not a table):
# refusing it keeps a multi-megabyte "first line" out of the csv module and the Sniffer, whose
# time grows faster than the line.
_MAX_HEADER_BYTES = 1024 * 1024
NEWLINE = b"\n"
_NON_SPACE = re.compile(rb"\S")
_DECIMAL_COMMA = re.compile(r"(?:^|[;\t| ])-?\d+,\d+(?=[;\t| ]|\r?$)", re.MULTILINE)
# Imported when first used: plain wide CSV files are read without pandas
# (costdash.io.plain_csv), and only Parquet needs pyarrow.parquet (issue 23).
pd = lazy_module("pandas")
pq = lazy_module("pyarrow.parquet")
_BINARY_MAGIC = ((b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
                 (b"GIF8", "a GIF image"), (b"%PDF", "a PDF document"),
                 (b"PK\x03\x04", "a zip archive or Excel workbook (export the sheet as CSV)"),
                 (b"\xd0\xcf\x11\xe0", "an old Excel/Office file (export the sheet as CSV)"))



def _read_source(path: str | os.PathLike[str] | IO[bytes], name: str | None,
                 max_bytes: int) -> tuple[str, bytes]:
    """Return the display name and the (decompressed) bytes, enforcing ``max_bytes``."""
    if max_bytes <= 0:
        raise ParameterError(f"max_bytes must be positive, not {max_bytes}")
    if hasattr(path, "read"):
        source = name or os.path.basename(str(getattr(path, "name", "") or "")) or "upload"
        size = None
        if getattr(path, "seekable", lambda: False)():
            here = path.seek(0, io.SEEK_CUR)
            size = path.seek(0, io.SEEK_END) - here
            path.seek(here)
        if size is not None and size > max_bytes:
            raise _too_big(source, size, max_bytes)
        data = path.read(max_bytes + 1)
    else:
        fspath = os.fsdecode(os.fspath(path))
        source = name or os.path.basename(fspath)
        try:
            if os.path.isdir(fspath):
                raise InputFileError(f"{source}: is a directory, not a file", source=source)
            size = os.stat(fspath).st_size  # before reading, so a huge file costs nothing
            if size > max_bytes:
                raise _too_big(source, size, max_bytes)
            with open(fspath, "rb") as f:
                data = f.read(max_bytes + 1)
        except FileNotFoundError:
            raise InputFileError(f"{source}: no such file ({fspath})", source=source) from None
        except OSError as exc:
            raise InputFileError(f"{source}: cannot read the file ({exc.strerror or exc})",
                                 source=source) from None
    if len(data) > max_bytes:  # an unseekable upload, or a file that grew
        raise InputFileError(f"{source}: is over the {_size(max_bytes)} limit", source=source)
    if data[:2] == b"\x1f\x8b":
        try:
            # Bounded read: the limit protects memory, so it applies to the unpacked content too.
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
                data = gz.read(max_bytes + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputFileError(f"{source}: is not a valid gzip file ({_reason(exc)})",
                                 source=source) from None
        if len(data) > max_bytes:
            raise InputFileError(f"{source}: unpacks to more than the {_size(max_bytes)} limit",
                                 source=source)
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):  # Excel's "Unicode text"
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeError:
            pass  # not UTF-16 after all; the binary check will say so
    return source, data


def _too_big(source: str, size: int, limit: int) -> InputFileError:
    return InputFileError(f"{source}: is {_size(size)}, over the {_size(limit)} limit",
                          source=source)


def _sniff_format(data: bytes, source: str) -> str:
    """Return "parquet", "json", "jsonl" or "text", or raise for empty and binary content."""
    head = data[:_SNIFF_BYTES]
    if not head.strip() and not data.strip():
        what = "is empty (0 bytes)" if not data else "contains only blank space"
        raise InputFileError(f"{source}: {what}", source=source)
    if head.startswith(b"PAR1"):
        return "parquet"
    for magic, what in _BINARY_MAGIC:
        if head.startswith(magic):
            raise InputFileError(f"{source}: looks like {what}, not a table of predictions",
                                 source=source)
    # Text has (almost) no control characters; random or binary bytes have plenty.
    controls = sum(head.count(bytes([c])) for c in range(32) if c not in (9, 10, 13))
    if controls > len(head) // 100:
        raise InputFileError(f"{source}: is a binary file, not CSV, TSV, JSON lines or Parquet",
                             source=source)
    ext = os.path.splitext(source[:-3] if source.lower().endswith(".gz") else source)[1].lower()
    start = head.lstrip(codecs.BOM_UTF8).lstrip()[:1]
    if ext == ".parquet":
        raise InputFileError(f"{source}: is not a valid Parquet file (no PAR1 header)",
                             source=source)
    if ext in (".jsonl", ".ndjson") or start == b"{":
        return "jsonl"
    if ext == ".json" or start == b"[":
        return "json"
    return "text"


def _read_table(data: bytes, source: str, fmt: str, max_rows: int | None) -> pd.DataFrame:
    """Parse ``data`` into a DataFrame whose column names are the file's, stripped.

    With ``max_rows``, a file with more rows is refused before all of it is decoded: a Parquet
    file by the row count in its footer (a few kB of it can decode to millions of rows), a text
    file by parsing only its first ``max_rows + 1`` rows when it has more lines than that.
    """
    header: list[str] | None = None
    kind = {"parquet": "Parquet", "text": "CSV"}.get(fmt, "JSON")
    try:
        if fmt == "parquet":
            parquet = pq.ParquetFile(pa.BufferReader(data))
            if max_rows is not None and parquet.metadata.num_rows > max_rows:
                raise _too_many_rows(source, f"{parquet.metadata.num_rows:,}", max_rows)
            df = parquet.read().to_pandas()
        else:
            data = _as_utf8(data)
            if fmt != "text":
                # Before any native reader sees it, not even the row count's on a prefix:
                # hostile nesting kills pyarrow's process (see costdash.io.json_shape).
                _refuse_nul(data, source)
                # (JSON lines: the row limit is the line count's, below.)
                check_json_table(data, source, lines=fmt == "jsonl",
                                 max_rows=max_rows if fmt == "json" else None)
            if max_rows is not None and fmt in ("text", "jsonl"):
                _check_line_count(data, source, fmt, max_rows)
            if fmt == "text":
                df, header = _read_csv(data, source)
            else:
                df = _read_json(data, source, lines=fmt == "jsonl")
    except InputFileError:
        raise
    except (pa.ArrowException, OSError, ValueError, csv.Error) as exc:
        raise InputFileError(f"{source}: cannot be read as {kind} ({_reason(exc)})",
                             source=source) from None
    if header is None or len(header) != df.shape[1]:
        header = [str(c) for c in df.columns]
    header = [str(c).strip() for c in header]
    _check_header(header, source)
    df.columns = header
    # Blank names come from a pandas index column or trailing delimiters: no classifier there.
    return df.loc[:, [bool(c) for c in header]]


def _as_utf8(data: bytes) -> bytes:
    """Text content as UTF-8 without a BOM, whatever it was written in.

    The encoding is decided once, for the whole file, so that the header and the cells agree:
    UTF-8 when every byte sequence is valid UTF-8, else Windows-1252 (Excel's "CSV" in Western
    locales; a superset of Latin-1's printable characters), else Latin-1, which decodes any byte.
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    if data.isascii() or _is_utf8(data):
        return data
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:  # one of the five bytes cp1252 leaves undefined
        text = data.decode("latin-1")
    return text.encode("utf-8")


def _is_utf8(data: bytes, chunk: int = 1 << 20) -> bool:
    """Whether ``data`` is valid UTF-8, decoded a chunk at a time so as not to hold a copy."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), chunk):
            decoder.decode(view[start:start + chunk], final=start + chunk >= len(data))
    except UnicodeDecodeError:
        return False
    return True


def _line_break(data: bytes) -> bytes:
    """b"\\n" (also ending CRLF lines), or b"\\r" for old Mac files, which have no b"\\n"."""
    return b"\r" if NEWLINE not in data and b"\r" in data else NEWLINE


def _check_line_count(data: bytes, source: str, fmt: str, max_rows: int) -> None:
    """Refuse a text file over the row limit from its first ``max_rows + 1`` rows.

    Counting line breaks is a fast scan; when there are few enough of them there is nothing to
    do. Otherwise only the lines up to the first one over the limit are parsed: blank lines and
    line breaks inside quoted values make lines an upper bound on rows, so if that prefix does
    not hold more than ``max_rows`` rows (or cannot be parsed, having been cut inside a quoted
    value) the whole file is read as usual and checked afterwards.
    """
    if len(data) <= max_rows:  # every row takes at least a byte: no need to count
        return
    nl = _line_break(data)
    wanted = max_rows + 1 + (fmt == "text")  # the header line, then one row over the limit
    end = _nth_line_end(data, nl, wanted)
    if end is None or not _NON_SPACE.search(data, end):
        return
    try:
        if fmt == "text":
            rows = len(_read_csv(data[:end], source)[0])
        else:
            rows = len(_read_json(data[:end], source, lines=True))
    except (InputFileError, pa.ArrowException, ValueError, csv.Error):
        return  # the whole file is parsed next, and says what is wrong with it
    if rows > max_rows:
        lines = data.count(nl) + (not data.endswith(nl)) - (fmt == "text")
        raise _too_many_rows(source, f"about {lines:,}", max_rows)


def _nth_line_end(data: bytes, nl: bytes, n: int, chunk: int = 1 << 22) -> int | None:
    """The offset just past the ``n``-th line break, or None if there are fewer."""
    seen = 0
    for start in range(0, len(data), chunk):
        found = data.count(nl, start, start + chunk)  # no copy; a fast C scan
        if seen + found >= n:
            view = np.frombuffer(data, np.uint8, count=min(chunk, len(data) - start),
                                 offset=start)
            return start + int(np.flatnonzero(view == nl[0])[n - seen - 1]) + 1
        seen += found
    return None


def _refuse_nul(data: bytes, source: str, sep: str | None = None,
                header: Sequence[str] = ()) -> None:
    """Refuse text with a NUL character, naming where the first one is.

    The binary check reads only the head of a file, so a NUL further on reaches the cells, and
    a label or name holding one cannot be stored (PostgreSQL text refuses NUL) nor shown
    sensibly. No text format has a use for it: the file is damaged or not text. ``sep`` and
    ``header`` (delimited text) let the message name the row and column; JSON gets the line.
    """
    at = data.find(b"\x00")  # one fast scan; UTF-16 has been converted to UTF-8 by now
    if at < 0:
        return
    nl = _line_break(data)
    line = data.count(nl, 0, at) + 1
    column, rows = None, ()
    if sep is None:
        where = f"on line {line}"
    elif line == 1:
        where = "in the header"
    else:
        field = data.count(sep.encode(), data.rfind(nl, 0, at) + 1, at)
        column = (header[field].strip() or None) if field < len(header) else None
        where = f"in row {line - 1}" + (f", column {_q(column)}" if column else "") + \
            f" (line {line})"
        rows = (line - 1,)
    raise InputFileError(f"{source}: has a NUL character (byte 0) {where}; text cannot contain "
                         "one: is the file damaged or binary?", source=source, column=column,
                         rows=rows)


def _check_header(header: Sequence[str], source: str) -> None:
    """Reject repeated names, which pandas would silently rename to ``a.1``, and NUL in names."""
    seen: dict[str, int] = {}
    for i, col in enumerate(str(c).strip() for c in header):
        if col and col in seen:
            raise InputFileError(
                f"{source}: column name {_q(col)} appears more than once in the header (columns "
                f"{seen[col] + 1} and {i + 1}); every classifier needs its own name",
                source=source, column=col)
        if "\x00" in col:  # Parquet and JSON ("\u0000") can hold one with no NUL byte to find
            raise InputFileError(f"{source}: column name {_q(col)} (column {i + 1}) has a NUL "
                                 "character, which a name cannot contain", source=source,
                                 column=col)
        seen.setdefault(col, i)


def sniff_separator(data: bytes, delimiters: str = ",\t;| ") -> tuple[str, str]:
    """The separator of delimited UTF-8 text, and the sample it was told from.

    The sample is the text's head in whole lines (at least the first), at most ``_SNIFF_BYTES``,
    with every line ending written "\\n". The csv module's Sniffer picks one of ``delimiters``;
    a comma when it cannot tell (a single column, or rows too irregular) or when its choice is
    not in the first line (the header).
    """
    nl = _line_break(data)
    first_end = data.find(nl)
    first_end = len(data) if first_end < 0 else first_end
    head = data[:_SNIFF_BYTES]
    if len(data) > _SNIFF_BYTES:  # whole lines (at least the header), or the Sniffer miscounts
        head = data[:head.rfind(nl) + 1 or first_end + 1]
    # The Sniffer and the regular expressions of the callers expect "\n"; the Sniffer's time
    # grows faster than its input, hence at most _SNIFF_BYTES even of a long header line.
    sample = re.sub(r"\r\n?", "\n", head.decode("utf-8", errors="replace"))
    try:
        sep = csv.Sniffer().sniff(sample[:_SNIFF_BYTES], delimiters=delimiters).delimiter
    except csv.Error:  # a single column, or too irregular to tell
        sep = ","
    if sep not in sample.split("\n", 1)[0]:
        sep = ","
    return sep, sample


def _read_csv(data: bytes, source: str) -> tuple[pd.DataFrame, list[str]]:
    """Delimited UTF-8 text with a sniffed separator; also returns the header exactly as written.

    Any line ending is understood: LF, CRLF and the old Mac CR.
    """
    sep, decimal, header = _csv_dialect(data, source)
    try:
        return pd.read_csv(io.BytesIO(data), sep=sep, decimal=decimal, engine="pyarrow"), header
    except (pa.ArrowException, ValueError):
        pass  # pyarrow rejects some inputs the C parser reads, and it cannot say which line
    try:
        df = pd.read_csv(io.BytesIO(data), sep=sep, decimal=decimal, engine="c", index_col=False,
                         encoding_errors="replace", low_memory=False)
    except pd.errors.EmptyDataError:
        raise InputFileError(f"{source}: has no header row", source=source) from None
    except (pd.errors.ParserError, ValueError, csv.Error) as exc:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if not m:
            raise InputFileError(f"{source}: cannot be read as CSV ({_reason(exc)})",
                                 source=source) from None
        row = int(m[2]) - 1
        raise InputFileError(f"{source}: row {row} has {m[3]} fields but the header has {m[1]} "
                             f"(separator {sep!r})", source=source, rows=(row,)) from None
    return df, header


def _csv_dialect(data: bytes, source: str) -> tuple[str, str, list[str]]:
    """The separator, the decimal mark and the header (as written) of delimited UTF-8 text;
    a header too long, unreadable or holding NUL, or NUL anywhere in the text, is refused."""
    first_end = data.find(_line_break(data))
    if (len(data) if first_end < 0 else first_end) > _MAX_HEADER_BYTES:
        raise InputFileError(f"{source}: the first line (the header) is over "
                             f"{_size(_MAX_HEADER_BYTES)} long; a table of predictions starts "
                             "with a line of column names", source=source)
    sep, sample = sniff_separator(data)
    try:
        header = next(csv.reader(io.StringIO(sample, newline=""), delimiter=sep), [])
    except csv.Error as exc:
        reason = _reason(exc)
        if "field limit" in reason:  # the csv module's limit, 128 kB
            reason = f"a column name is over {_size(csv.field_size_limit())} long"
        raise InputFileError(f"{source}: the header cannot be read as CSV ({reason})",
                             source=source) from None
    _refuse_nul(data, source, sep, header)
    # Spreadsheets in many locales write 0,5 for 0.5 (and then separate fields with ';').
    decimal = ("," if sep != "," and _DECIMAL_COMMA.search(sample)
               and not re.search(r"\d\.\d", sample) else ".")
    return sep, decimal, header


def _read_json(data: bytes, source: str, lines: bool) -> pd.DataFrame:
    """JSON lines (or a JSON array of records)."""
    if lines:
        try:
            return pd.read_json(io.BytesIO(data), lines=True, engine="pyarrow")
        except (pa.ArrowException, ValueError):
            pass  # pyarrow wants one type per column; ujson takes mixed ones, checked later
    try:
        return pd.read_json(io.BytesIO(data), lines=lines, dtype=False, precise_float=True)
    except ValueError as exc:
        m = re.search(r"position (\d+)", str(exc))
        where = f" near line {data.count(NEWLINE, 0, int(m[1])) + 1}" if m else ""
        raise InputFileError(f"{source}: is not valid JSON{' lines' if lines else ''}{where} "
                             f"({_reason(exc)})", source=source) from None
