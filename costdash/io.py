"""Load a predictions file (CSV/TSV, gzip, Parquet, JSON lines) into a :class:`Dataset`.

Three layouts are understood, detected from the column names unless the caller says which:

* **wide** -- one label column and one numeric score column per classifier;
* **long** -- ``model``, label and ``score`` columns, one row per (classifier, example);
* **counts** -- ``model, tp, fp, fn, tn`` (optional ``threshold``), one confusion matrix per row;
* **score_counts** -- ``model, score, n_pos, n_neg`` (optional ``fold``): how many positive and
  negative examples each classifier gave each distinct score (in each fold), which is all that
  ROC curves, hulls, envelopes, folds and bootstrap bands depend on. ``costdash aggregate`` writes
  it from row-level files of any size; loading it gives the same results as loading those rows,
  in memory that grows with the distinct scores. Counts are whole numbers, 0 or more, not both 0
  in one row; rows repeating a (model, score, fold) add up.

Everything a user can get wrong in the file raises :class:`InputFileError` with a message meant
to be shown as it is: it names the file, the column and the first offending data rows (1-based,
header not counted). Bad options raise :class:`ParameterError`.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import os
import re
import zlib
from collections.abc import Sequence
from typing import IO, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from costdash.dataset import CountedClassifier, Dataset, ScoredClassifier
from costdash.errors import InputFileError, ParameterError

__all__ = ["load_predictions", "LABEL_COLUMNS", "MODEL_COLUMNS", "SCORE_COLUMNS", "FOLD_COLUMNS",
           "THRESHOLD_COLUMNS", "COUNT_COLUMNS", "SCORE_COUNT_COLUMNS"]

# Column names tried, in order of preference, when the caller does not name the column.
LABEL_COLUMNS = ("y_true", "label", "target", "y", "class", "actual", "truth")
MODEL_COLUMNS = ("model", "classifier", "name")
SCORE_COLUMNS = ("score", "prediction", "pred", "prob", "probability", "y_score")
FOLD_COLUMNS = ("fold", "run", "cv_fold", "split")
# Row identifiers are numeric too, but never classifiers: the wide layout skips them unless
# ``models`` names them.
ID_COLUMNS = ("id", "row_id", "example_id", "index", "row", "sample_id", "instance")
THRESHOLD_COLUMNS = ("threshold", "thresh", "cutoff")
COUNT_COLUMNS = ("tp", "fp", "fn", "tn")
SCORE_COUNT_COLUMNS = ("n_pos", "n_neg")

_LAYOUTS = ("auto", "wide", "long", "counts", "score_counts")
# Label pairs whose positive class goes without saying (compared case-insensitively).
_KNOWN_PAIRS = {frozenset(pair): pair[1] for pair in [
    ("0", "1"), ("false", "true"), ("-1", "1"), ("neg", "pos"), ("negative", "positive"),
    ("no", "yes"), ("n", "y")]}
_SNIFF_BYTES = 16 * 1024
# A header line longer than this is not a header (a binary file, or text that is not a table):
# refusing it keeps a multi-megabyte "first line" out of the csv module and the Sniffer, whose
# time grows faster than the line.
_MAX_HEADER_BYTES = 1024 * 1024
_SHOW_ROWS = 5
_SHOW_LABELS = 10
_SHOW_CHARS = 60  # of one value quoted in a message
_SHOW_LIST_CHARS = 250  # of a list of quoted values in a message
# Counts are used as float64 later (rates, sums): beyond 2**53 not every whole number has a
# float64, so a bigger count could not be what the file says; it also keeps tp+fp+fn+tn far
# from int64 overflow.
_MAX_COUNT = 2**53
NEWLINE = b"\n"
_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(32), 127]}
_NON_SPACE = re.compile(rb"\S")
_DECIMAL_COMMA = re.compile(r"(?:^|[;\t| ])-?\d+,\d+(?=[;\t| ]|\r?$)", re.MULTILINE)
_BINARY_MAGIC = ((b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
                 (b"GIF8", "a GIF image"), (b"%PDF", "a PDF document"),
                 (b"PK\x03\x04", "a zip archive or Excel workbook (export the sheet as CSV)"),
                 (b"\xd0\xcf\x11\xe0", "an old Excel/Office file (export the sheet as CSV)"))


def load_predictions(path: str | os.PathLike[str] | IO[bytes], *, name: str | None = None,
                     layout: Literal["auto", "wide", "long", "counts", "score_counts"] = "auto",
                     label_column: str | None = None, model_column: str | None = None,
                     score_column: str | None = None, fold_column: str | None = None,
                     positive: str | None = None, models: Sequence[str] | None = None,
                     drop_missing: bool = False, max_bytes: int = 200 * 1024**2,
                     max_rows: int | None = None,
                     max_classifiers: int | None = None) -> Dataset:
    """Read a predictions file and check it thoroughly.

    Parameters
    ----------
    path : str, os.PathLike or binary file-like
        The file, or its bytes already opened (an upload); the format is detected from the
        content (gzip, Parquet and JSON magic) and the extension of ``name``.
    name : str, optional
        File name used in messages and for format detection; defaults to the path's basename.
    layout : {"auto", "wide", "long", "counts", "score_counts"}
        "auto" picks counts when there are ``tp, fp, fn, tn`` columns, score_counts when there
        are ``n_pos, n_neg`` columns, long when there are model and score columns (or
        ``model_column``/``score_column`` is given), else wide.
    label_column, model_column, score_column, fold_column : str, optional
        Column names, matched case-insensitively, overriding the default names tried.
    positive : str, optional
        The positive label, compared with the labels as text (so "1" matches an integer 1).
        Needed unless the labels are an obvious pair such as 0/1, true/false, no/yes.
    models : sequence of str, optional
        Keep only these classifiers (score columns in the wide layout, model names otherwise),
        in this order; None or empty keeps them all, in file order.
    drop_missing : bool
        Drop rows with a missing or infinite value in any column used instead of failing.
    max_bytes : int
        Largest file (and largest decompressed content) accepted.
    max_rows, max_classifiers : int, optional
        Largest number of data rows, and of classifiers, accepted (None: no limit). A server
        sets them so that one upload cannot take all of its memory or time.

    Returns
    -------
    Dataset
        Counts files give ``counted`` classifiers (``positive_label`` is ``positive`` or "1");
        the others give ``scored`` ones, all sharing one ``y_true`` array in the wide layout.
        Score-count files give ``scored`` classifiers whose entries are the (score, label,
        fold) cells with their ``count`` (``positive_label`` is ``positive`` or "1").

    Raises
    ------
    InputFileError
        The file is missing, too big, unreadable or its content cannot be used.
    ParameterError
        An option is invalid or names a column, label or model the file does not have.
    """
    if layout not in _LAYOUTS:
        raise ParameterError(f"unknown layout {_q(layout)}; choose one of {', '.join(_LAYOUTS)}")
    if isinstance(models, str):
        models = [models]
    models = models or None  # asking for no classifiers at all can only mean "no filter"
    source, data = _read_source(path, name, max_bytes)
    df = _read_table(data, source, _sniff_format(data, source), max_rows)
    if positive is not None and "\x00" in str(positive):
        # A counts file's positive label is this option as given, and no stored text may hold NUL.
        raise ParameterError(f"{source}: --positive {_q(positive)} has a NUL character, which a "
                             "label cannot contain")
    names = list(df.columns)
    if len(df) == 0:
        raise InputFileError(f"{source}: has a header ({_quoted(names)}) but no data rows",
                             source=source)
    if layout == "auto":
        layout = _detect_layout(names, model_column, score_column)
    given = {"model_column": model_column, "score_column": score_column,
             "label_column": label_column, "fold_column": fold_column}
    for option in {"wide": given.keys() - {"label_column", "fold_column"}, "long": (),
                   "counts": given.keys() - {"model_column"},
                   "score_counts": {"label_column"}}[layout]:
        if given[option] is not None:  # silently ignoring it would hide a mistake
            raise ParameterError(f"{source}: {option} does not apply to the {layout} layout")
    if max_rows is not None and len(df) > max_rows:
        raise _too_many_rows(source, f"{len(df):,}", max_rows)
    rows = np.arange(1, len(df) + 1)  # original data row numbers, kept through row filtering
    if layout == "counts":
        dataset = _load_counts(df, rows, source, model_column, positive, models, drop_missing)
    elif layout == "score_counts":
        dataset = _load_score_counts(df, rows, source, model_column, score_column, fold_column,
                                     positive, models, drop_missing)
    else:
        dataset = _load_scored(df, rows, source, layout, label_column, model_column,
                               score_column, fold_column, positive, models, drop_missing)
    if max_classifiers is not None and len(dataset.names) > max_classifiers:
        raise InputFileError(f"{source}: has {len(dataset.names):,} classifiers, more than the "
                             f"limit of {max_classifiers:,}; choose some with the models "
                             "option", source=source)
    return dataset


# --- reading bytes and tables -------------------------------------------------------------------

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


def _size(n: int) -> str:
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


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
            if max_rows is not None and fmt in ("text", "jsonl"):
                _check_line_count(data, source, fmt, max_rows)
            if fmt == "text":
                df, header = _read_csv(data, source)
            else:
                _refuse_nul(data, source)
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


def _read_csv(data: bytes, source: str) -> tuple[pd.DataFrame, list[str]]:
    """Delimited UTF-8 text with a sniffed separator; also returns the header exactly as written.

    Any line ending is understood: LF, CRLF and the old Mac CR.
    """
    nl = _line_break(data)
    first_end = data.find(nl)
    first_end = len(data) if first_end < 0 else first_end
    if first_end > _MAX_HEADER_BYTES:
        raise InputFileError(f"{source}: the first line (the header) is over "
                             f"{_size(_MAX_HEADER_BYTES)} long; a table of predictions starts "
                             "with a line of column names", source=source)
    head = data[:_SNIFF_BYTES]
    if len(data) > _SNIFF_BYTES:  # whole lines (at least the header), or the Sniffer miscounts
        head = data[:head.rfind(nl) + 1 or first_end + 1]
    # The Sniffer and the regular expressions below expect "\n"; the Sniffer's time grows
    # faster than its input, hence at most _SNIFF_BYTES even of a long header line.
    sample = re.sub(r"\r\n?", "\n", head.decode("utf-8", errors="replace"))
    try:
        sep = csv.Sniffer().sniff(sample[:_SNIFF_BYTES], delimiters=",\t;| ").delimiter
    except csv.Error:  # a single column, or too irregular to tell
        sep = ","
    first_line = sample.split("\n", 1)[0]
    if sep not in first_line:
        sep = ","
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


# --- layouts ------------------------------------------------------------------------------------

def _detect_layout(names: Sequence[str], model_column: str | None,
                   score_column: str | None
                   ) -> Literal["wide", "long", "counts", "score_counts"]:
    """Guess the layout from the column names, counts first since it is the most specific."""
    lower = {n.casefold() for n in names}
    if lower >= set(COUNT_COLUMNS):
        return "counts"
    if lower >= set(SCORE_COUNT_COLUMNS):
        return "score_counts"
    named = model_column is not None or score_column is not None
    return "long" if named or (lower & set(MODEL_COLUMNS) and lower & set(SCORE_COLUMNS)) \
        else "wide"


def _load_scored(df: pd.DataFrame, rows: np.ndarray, source: str, layout: str,
                 label_column: str | None, model_column: str | None, score_column: str | None,
                 fold_column: str | None, positive: str | None, models: Sequence[str] | None,
                 drop_missing: bool) -> Dataset:
    """The wide and long layouts: scores per example, one label column, optional folds."""
    label = _find_column(df, label_column, LABEL_COLUMNS, "label", source)
    fold = _find_column(df, fold_column, FOLD_COLUMNS, "fold", source, required=False)
    model = wanted = None
    if layout == "long":
        model = _find_column(df, model_column, MODEL_COLUMNS, "model", source)
        score_cols = [_find_column(df, score_column, SCORE_COLUMNS, "score", source)]
        df, rows, wanted = _keep_models(df, rows, model, models, source)
    else:
        candidates = [c for c in df.columns if c not in (label, fold)]
        scoreish = [c for c in candidates
                    if str(c).lower() not in ID_COLUMNS and _looks_numeric(df[c])]
        score_cols = scoreish if models is None else _select(models, scoreish, source, candidates)
        if not score_cols:
            raise InputFileError(
                f"{source}: no score columns besides the label {_q(label)}; the wide layout needs "
                f"one numeric column per classifier (columns found: {_quoted(df.columns)})",
                source=source)
    scores = {c: _numeric(df[c], c, rows, source) for c in score_cols}
    used = {c: df[c].isna().to_numpy() for c in (label, fold, model) if c is not None}
    keep = _rows_to_keep(rows, scores, used, source, drop_missing, "scores")
    if keep is not None:
        if model is not None:
            _check_none_lost(df[model], keep, source)
        df, rows, scores = df[keep], rows[keep], {c: v[keep] for c, v in scores.items()}

    codes, labels = _factorize(df[label], sort=True)
    _check_no_nul(labels, codes, rows, label, source)
    pos = _positive_index(labels, positive, label, source)
    y_true = codes == pos
    folds, fold_labels = (None, []) if fold is None else _factorize(df[fold], sort=True)
    if fold is not None:
        _check_no_nul(fold_labels, folds, rows, fold, source)
    if model is None:
        _check_both_classes(y_true, rows, None, [], folds, fold_labels, labels, pos, source,
                            label)
        scored = [ScoredClassifier(c, y_true, scores[c], folds) for c in score_cols]
    else:
        model_codes, names = _factorize(df[model])
        _check_no_nul(names, model_codes, rows, model, source)
        _check_both_classes(y_true, rows, model_codes, names, folds, fold_labels, labels, pos,
                            source, label)
        score = scores[score_cols[0]]
        scored = [ScoredClassifier(n, y_true[g], score[g], None if folds is None else folds[g])
                  for n, g in _groups(model_codes, names, wanted)]
    return Dataset(source=source, layout=layout, positive_label=labels[pos], scored=tuple(scored),
                   fold_labels=tuple(fold_labels))


def _load_counts(df: pd.DataFrame, rows: np.ndarray, source: str, model_column: str | None,
                 positive: str | None, models: Sequence[str] | None,
                 drop_missing: bool) -> Dataset:
    """The counts layout: one confusion matrix per row, several rows per model allowed."""
    model = _find_column(df, model_column, MODEL_COLUMNS, "model", source)
    count_cols = [_find_column(df, None, (c,), c, source) for c in COUNT_COLUMNS]
    threshold = _find_column(df, None, THRESHOLD_COLUMNS, "threshold", source, required=False)
    df, rows, wanted = _keep_models(df, rows, model, models, source)
    counts = {c: _numeric(df[c], c, rows, source, what="counts") for c in count_cols}
    # A threshold may be missing (NaN), unlike the model and the counts.
    thresholds = None if threshold is None else _numeric(df[threshold], threshold, rows, source,
                                                        what="thresholds")
    keep = _rows_to_keep(rows, counts, {model: df[model].isna().to_numpy()}, source,
                         drop_missing, "counts")
    if keep is not None:
        _check_none_lost(df[model], keep, source)
        df, rows, counts = df[keep], rows[keep], {c: v[keep] for c, v in counts.items()}
        thresholds = None if thresholds is None else thresholds[keep]
    _check_counts(counts, rows, source)
    tp, fp, fn, tn = (counts[c].astype(np.int64) for c in count_cols)
    codes, names = _factorize(df[model])
    _check_no_nul(names, codes, rows, model, source)
    _, first = np.unique(codes, return_index=True)  # each model's first row sets its totals
    n_pos, n_neg = tp + fn, fp + tn
    differ = (n_pos != n_pos[first][codes]) | (n_neg != n_neg[first][codes])
    if differ.any():
        m = codes[np.flatnonzero(differ)[0]]
        f, bad = first[m], differ & (codes == m)
        raise _fail(source, f"model {_q(names[m])}: {_rows_text(rows[[f]])} has tp+fn = "
                    f"{n_pos[f]} and fp+tn = {n_neg[f]}, but {_rows_text(rows[bad])} "
                    f"{'has' if bad.sum() == 1 else 'have'} other totals; every row of a model "
                    f"must count the same test set", model, rows[bad])
    for totals, cls in ((n_pos, "positive (tp+fn)"), (n_neg, "negative (fp+tn)")):
        for m in np.flatnonzero(totals[first] == 0)[:1]:
            raise _fail(source, f"model {_q(names[m])} has no {cls} examples "
                        f"({_rows_text(rows[codes == m])}); both classes are needed", model,
                        rows[codes == m])
    counted = [CountedClassifier(n, tp[g], fp[g], fn[g], tn[g],
                                 None if thresholds is None else thresholds[g])
               for n, g in _groups(codes, names, wanted)]
    return Dataset(source=source, layout="counts",
                   positive_label="1" if positive is None else str(positive),
                   counted=tuple(counted))


def _check_counts(counts: dict[str, np.ndarray], rows: np.ndarray, source: str) -> None:
    """Counts must be whole numbers, 0 or more, small enough to be exact in float64."""
    for c, v in counts.items():
        # Checked before the cast to int64, which would wrap 1e20 round to a negative number.
        for bad, problem in ((v != np.floor(v), "non-integer counts"),
                             (v < 0, "negative counts"), (v >= _MAX_COUNT, "counts too large")):
            if bad.any():
                shown = ", ".join(_number(x) for x in v[bad][:3])
                raise _fail(source, f"column {_q(c)} has {problem} ({shown}) in "
                            f"{_rows_text(rows[bad])}; counts must be whole numbers, 0 or more "
                            f"and below {_MAX_COUNT:,} (2**53)", c, rows[bad])


def _load_score_counts(df: pd.DataFrame, rows: np.ndarray, source: str,
                       model_column: str | None, score_column: str | None,
                       fold_column: str | None, positive: str | None,
                       models: Sequence[str] | None, drop_missing: bool) -> Dataset:
    """The score-count layout: examples of each class per (model, score[, fold]) row."""
    model = _find_column(df, model_column, MODEL_COLUMNS, "model", source)
    score = _find_column(df, score_column, SCORE_COLUMNS, "score", source)
    pos_col, neg_col = (_find_column(df, None, (c,), c, source) for c in SCORE_COUNT_COLUMNS)
    fold = _find_column(df, fold_column, FOLD_COLUMNS, "fold", source, required=False)
    df, rows, wanted = _keep_models(df, rows, model, models, source)
    numbers = {score: _numeric(df[score], score, rows, source),
               pos_col: _numeric(df[pos_col], pos_col, rows, source, what="counts"),
               neg_col: _numeric(df[neg_col], neg_col, rows, source, what="counts")}
    used = {c: df[c].isna().to_numpy() for c in (model, fold) if c is not None}
    keep = _rows_to_keep(rows, numbers, used, source, drop_missing, "scores and counts")
    if keep is not None:
        _check_none_lost(df[model], keep, source)
        df, rows, numbers = df[keep], rows[keep], {c: v[keep] for c, v in numbers.items()}
    _check_counts({c: numbers[c] for c in (pos_col, neg_col)}, rows, source)
    n_pos, n_neg = numbers[pos_col].astype(np.int64), numbers[neg_col].astype(np.int64)
    empty = (n_pos == 0) & (n_neg == 0)
    if empty.any():
        raise _fail(source, f"columns {_q(pos_col)} and {_q(neg_col)} are both 0 in "
                    f"{_rows_text(rows[empty])}; a row counts at least one example (leave out "
                    "scores nobody got)", pos_col, rows[empty])
    codes, names = _factorize(df[model])
    _check_no_nul(names, codes, rows, model, source)
    folds, fold_labels = (None, []) if fold is None else _factorize(df[fold], sort=True)
    if folds is not None:
        _check_no_nul(fold_labels, folds, rows, fold, source)
    n_folds = max(len(fold_labels), 1)
    group = codes * n_folds + (0 if folds is None else folds)
    for totals, column, cls in ((n_pos, pos_col, "positive"), (n_neg, neg_col, "negative")):
        per_model = np.bincount(codes, weights=totals, minlength=len(names))
        per_group = np.bincount(group, weights=totals, minlength=len(names) * n_folds)
        present = np.bincount(group, minlength=len(names) * n_folds) > 0
        for m in np.flatnonzero(per_model == 0)[:1]:
            raise _fail(source, f"model {_q(names[m])} has no {cls} examples ({_q(column)} "
                        f"is 0 in {_rows_text(rows[codes == m])}); both classes are needed",
                        column, rows[codes == m])
        for g in np.flatnonzero(present & (per_group == 0))[:1]:
            where = rows[group == g]
            raise _fail(source, f"model {_q(names[g // n_folds])} in fold "
                        f"{_q(fold_labels[g % n_folds])} has no {cls} examples "
                        f"({_rows_text(where)}); each fold needs both classes", column, where)
    # One entry per (score, label, fold) cell: a row becomes a positive and a negative entry.
    # Interleaved (row 0 positives, row 0 negatives, row 1 ...), so entries keep the file's order.
    entry_count = np.stack((n_pos, n_neg), axis=1).ravel()
    has = entry_count > 0
    entry_count = entry_count[has]
    entry_row = (np.arange(2 * len(rows)) // 2)[has]
    entry_pos = np.tile([True, False], len(rows))[has]
    entry_codes = codes[entry_row]
    score_values = numbers[score]
    scored = [ScoredClassifier(n, np.ascontiguousarray(entry_pos[g]),
                               np.ascontiguousarray(score_values[entry_row[g]]),
                               None if folds is None else folds[entry_row[g]],
                               np.ascontiguousarray(entry_count[g]))
              for n, g in _groups(entry_codes, names, wanted)]
    return Dataset(source=source, layout="score_counts",
                   positive_label="1" if positive is None else str(positive),
                   scored=tuple(scored), fold_labels=tuple(fold_labels))


def _keep_models(df: pd.DataFrame, rows: np.ndarray, model: str, models: Sequence[str] | None,
                 source: str) -> tuple[pd.DataFrame, np.ndarray, list[str] | None]:
    """The rows of the models asked for, and their names in the order asked for."""
    if models is None:
        return df, rows, None
    codes, names = _factorize(df[model])
    wanted = _select(models, names, source)
    keep = np.isin(codes, [names.index(m) for m in wanted])
    return df[keep], rows[keep], wanted


def _check_none_lost(col: pd.Series, keep: np.ndarray, source: str) -> None:
    """Dropping rows must not make a model vanish without a word."""
    codes, names = _factorize(col)
    for m in np.setdiff1d(np.arange(len(names)), codes[keep])[:1]:
        raise InputFileError(f"{source}: model {_q(names[m])} has no rows left after dropping "
                             f"those with missing or infinite values", source=source,
                             column=col.name)


def _groups(codes: np.ndarray, names: list[str],
            wanted: list[str] | None) -> list[tuple[str, np.ndarray]]:
    """Each model's row indices, in file order; models in file order unless ``wanted``."""
    order = np.argsort(codes, kind="stable")
    groups = dict(zip(names, np.split(order, np.cumsum(np.bincount(codes))[:-1])))
    return [(n, groups[n]) for n in (names if wanted is None else wanted) if n in groups]


# --- columns, values, labels --------------------------------------------------------------------

def _find_column(df: pd.DataFrame, given: str | None, defaults: Sequence[str], role: str,
                 source: str, required: bool = True) -> str | None:
    """The column named ``given`` (else the first of ``defaults``), case-insensitively."""
    columns = list(df.columns)
    by_lower: dict[str, str] = {}
    for c in columns:
        by_lower.setdefault(c.casefold(), c)
    if given is not None:
        if given in columns:
            return given
        if given.strip().casefold() in by_lower:
            return by_lower[given.strip().casefold()]
        raise ParameterError(f"{source}: there is no {role} column {_q(given)}; columns found: "
                             f"{_quoted(columns)}")
    for d in defaults:
        if d in by_lower:
            return by_lower[d]
    if not required:
        return None
    hint = f" (or name it with --{role}-column)" if role in ("label", "model", "score") else ""
    raise InputFileError(f"{source}: no {role} column: expected one named "
                         f"{' or '.join(defaults) if len(defaults) < 3 else ', '.join(defaults)}"
                         f"{hint}; columns found: {_quoted(columns)}", source=source)


def _select(models: Sequence[str], available: Sequence[str], source: str,
            allowed: Sequence[str] | None = None) -> list[str]:
    """Resolve the ``models`` option against ``available`` names (exact, else ignoring case)."""
    allowed = list(available) if allowed is None else list(allowed)
    chosen: list[str] = []
    for m in models:
        m = str(m).strip()
        hits = ([a for a in allowed if a == m]
                or [a for a in allowed if a.casefold() == m.casefold()])
        if len(hits) != 1:
            raise ParameterError(f"{source}: no classifier named {_q(m)}; available: "
                                 f"{_quoted(available)}")
        if hits[0] not in chosen:
            chosen.append(hits[0])
    return chosen


def _looks_numeric(col: pd.Series) -> bool:
    """Numeric, or text that is mostly numbers (a score column with a few typos in it)."""
    if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return True
    sample = col.dropna().iloc[:1000]
    return len(sample) > 0 and pd.to_numeric(sample, errors="coerce").notna().mean() >= 0.5


def _numeric(col: pd.Series, name: str, rows: np.ndarray, source: str,
             what: str = "scores") -> np.ndarray:
    """The column as a contiguous float64 array, NaN where missing; raise on text in it."""
    if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        try:
            return np.ascontiguousarray(col.to_numpy(dtype=np.float64, na_value=np.nan))
        except (TypeError, ValueError):
            pass  # e.g. an object column of booleans with None; take the general route
    converted = pd.to_numeric(col, errors="coerce")
    bad = (converted.isna() & col.notna()).to_numpy()
    if bad.any():
        example = col[bad].iloc[0]
        raise _fail(source, f"column {_q(name)} has {int(bad.sum())} non-numeric value"
                    f"{'s' if bad.sum() > 1 else ''} (first: {_q(example)}) in "
                    f"{_rows_text(rows[bad])}; {what} must be numbers", name, rows[bad])
    return np.ascontiguousarray(converted.to_numpy(dtype=np.float64, na_value=np.nan))


def _rows_to_keep(rows: np.ndarray, numbers: dict[str, np.ndarray],
                  missing: dict[str, np.ndarray], source: str, drop: bool,
                  what: str) -> np.ndarray | None:
    """Fail on missing or infinite values; with ``drop``, the mask of rows without any."""
    problems = [(c, "missing", m) for c, m in missing.items()]
    for c, v in numbers.items():
        problems += [(c, "missing", np.isnan(v)), (c, "infinite", np.isinf(v))]
    any_bad = np.zeros(len(rows), bool)
    for column, kind, mask in problems:
        if not drop and mask.any():
            n = int(mask.sum())
            must = f"; {what} must be finite" if kind == "infinite" else ""
            raise _fail(source, f"column {_q(column)} has {n} {kind} value{'s' if n > 1 else ''} "
                        f"in {_rows_text(rows[mask])}{must}; fix {'them' if n > 1 else 'it'} or "
                        f"use --drop-missing to skip those rows", column, rows[mask])
        any_bad |= mask
    if not any_bad.any():
        return None
    if any_bad.all():
        raise InputFileError(f"{source}: no rows left after dropping all {len(rows)} rows with "
                             f"missing or infinite values", source=source)
    return ~any_bad


def _key(value: object) -> str:
    """A label, fold or model name as text: 1.0 reads as "1", True as "True"."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, bytes):  # pyarrow leaves text that is not UTF-8 as bytes
        return value.decode("cp1252", errors="replace").strip()
    return str(value).strip()


def _factorize(col: pd.Series, sort: bool = False) -> tuple[np.ndarray, list[str]]:
    """Integer codes (-1 for missing) into distinct names, merging values that read the same."""
    try:
        codes, uniques = pd.factorize(col, sort=sort)
    except TypeError:  # mixed types cannot be sorted; first-appearance order will do
        codes, uniques = pd.factorize(col)
    index: dict[str, int] = {}
    remap = np.array([index.setdefault(_key(u), len(index)) for u in uniques] + [-1], np.int64)
    return remap[codes], list(index)  # codes of -1 pick the trailing -1


def _check_no_nul(names: Sequence[str], codes: np.ndarray, rows: np.ndarray, column: str,
                  source: str) -> None:
    """Refuse a label, fold or model name holding NUL, which no stored text may contain.

    Text files with a NUL byte are refused as they are read; this catches the values of JSON
    ("\\u0000") and Parquet, which can hold one without a NUL byte in the file. Only the
    distinct values are looked at, so it costs next to nothing.
    """
    for i in [i for i, n in enumerate(names) if "\x00" in n][:1]:
        bad = rows[codes == i]
        raise _fail(source, f"column {_q(column)} has a value with a NUL character "
                    f"({_q(names[i])}) in {_rows_text(bad)}; labels and names cannot contain "
                    "one", column, bad)


def _positive_index(labels: list[str], positive: str | None, column: str, source: str) -> int:
    """Which of the two labels is the positive class."""
    found = _quoted(labels, _SHOW_LABELS)
    if len(labels) == 1:
        raise InputFileError(f"{source}: column {_q(column)} has only one label, {_q(labels[0])}; "
                             f"both classes are needed", source=source, column=column)
    if len(labels) > 2:
        raise InputFileError(f"{source}: column {_q(column)} has {len(labels)} labels ({found}); "
                             f"expected two classes (is {_q(column)} the label column? say which "
                             f"with --label-column)", source=source, column=column)
    if positive is not None:
        p = str(positive).strip()
        for same in (str.__eq__, lambda a, b: a.casefold() == b.casefold()):
            hits = [i for i, k in enumerate(labels) if same(k, p)]
            if len(hits) == 1:
                return hits[0]
        raise ParameterError(f"{source}: --positive {_q(p)} is not a label in column "
                             f"{_q(column)}; labels found: {found}")
    known = _KNOWN_PAIRS.get(frozenset(k.casefold() for k in labels))
    if known is None:
        raise InputFileError(f"{source}: column {_q(column)} has labels {found}; say which is "
                             f"positive with --positive LABEL", source=source, column=column)
    return [k.casefold() for k in labels].index(known)


def _check_both_classes(y_true: np.ndarray, rows: np.ndarray, models: np.ndarray | None,
                        model_names: Sequence[str], folds: np.ndarray | None,
                        fold_labels: Sequence[str], labels: Sequence[str], pos: int, source: str,
                        label: str) -> None:
    """Each model, and each fold of it, needs both classes or its ROC curve is undefined."""
    n_models, n_folds = max(len(model_names), 1), len(fold_labels)
    model = np.zeros(len(y_true), np.int64) if models is None else models
    splits = [(model, n_models, False)]
    if folds is not None:
        splits.append((model * n_folds + folds, n_models * n_folds, True))
    for group, n_groups, by_fold in splits:
        total = np.bincount(group, minlength=n_groups)
        n_pos = np.bincount(group, weights=y_true, minlength=n_groups)
        for g in np.flatnonzero((total > 0) & ((n_pos == 0) | (n_pos == total)))[:1]:
            where = [f"fold {_q(fold_labels[g % n_folds])}"] if by_fold else []
            if models is not None:
                where.insert(0, f"model {_q(model_names[g // n_folds if by_fold else g])}")
            only = labels[pos] if n_pos[g] else labels[1 - pos]
            raise _fail(source, f"{' in '.join(where)} has only {_q(only)} labels in column "
                        f"{_q(label)} ({_rows_text(rows[group == g])}); each "
                        f"{'fold' if by_fold else 'classifier'} needs both classes", label,
                        rows[group == g])


# --- messages -----------------------------------------------------------------------------------

def _fail(source: str, message: str, column: str | None, rows: np.ndarray) -> InputFileError:
    return InputFileError(f"{source}: {message}", source=source, column=column,
                          rows=tuple(int(r) for r in rows[:_SHOW_ROWS]))


def _rows_text(rows: np.ndarray) -> str:
    """ "row 3", "rows 3, 9" or "rows 1, 2, 3, 4, 5 and 12 more"."""
    shown = ", ".join(str(int(r)) for r in rows[:_SHOW_ROWS])
    more = f" and {len(rows) - _SHOW_ROWS} more" if len(rows) > _SHOW_ROWS else ""
    return f"{'row' if len(rows) == 1 else 'rows'} {shown}{more}"


def _quoted(names: Sequence[object], limit: int = _SHOW_LABELS) -> str:
    """ "'a', 'b' and 3 more": at most ``limit`` names, and about _SHOW_LIST_CHARS in all."""
    names = list(names)
    shown: list[str] = []
    for n in names[:limit]:
        if shown and sum(len(t) + 2 for t in shown) > _SHOW_LIST_CHARS:
            break
        shown.append(_q(n))
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more:,} more" if more else "")


def _q(value: object) -> str:
    """A value from the file or the options, quoted for a message and cut to _SHOW_CHARS.

    Values are the user's, so they can be megabytes long or hold control characters; those are
    shown escaped (a NUL as \\x00) so that the message stays readable on one line.
    """
    text = str(value)
    cut = len(text) > _SHOW_CHARS
    text = text[:_SHOW_CHARS].translate(_CONTROLS)
    if len(text) > _SHOW_CHARS:  # escapes lengthen it
        text, cut = text[:_SHOW_CHARS], True
    return f"'{text}...' ({len(str(value)):,} characters)" if cut else f"'{text}'"


def _reason(exc: BaseException) -> str:
    """A library's explanation, shortened: it may quote a whole line of the file."""
    text = " ".join(str(exc)[:1000].split()) or type(exc).__name__
    text = text.translate(_CONTROLS)
    return text if len(text) <= 160 else text[:160] + "..."


def _number(x: float) -> str:
    """A number read from the file: whole ones in full (2**53 as "9.0072e+15" would hide what
    was read), others as %g."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e17 else f"{x:g}"


def _too_many_rows(source: str, count: str, limit: int) -> InputFileError:
    return InputFileError(f"{source}: has {count} data rows, more than the limit of {limit:,}",
                          source=source)
