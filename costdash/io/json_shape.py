"""The shape of a JSON predictions file, checked on its bytes before any parser sees it
(private; :func:`costdash.io.reading._read_table` calls :func:`check_json_table`).

A predictions file in JSON is a table: flat records, one per line (JSON lines) or in one array.
The parsers behind ``pandas.read_json`` are native code and trust their input's shape: pyarrow's
reader recurses once per level of nesting, so 120 kB of 20,000 nested objects overflow its stack
and the process dies of SIGSEGV (a web worker and every request it was serving with it); and
both readers make a column of every field name any record uses, so 20,000 records that each
name a field of their own (400 kB) become a table of 20,000 x 20,000 empty cells (GBs). A
parser's own limits cannot help against either: the first kills the process before any Python
code runs again, the second is valid JSON.

The scan reads the bytes vectorised, in bounded chunks, keeping track of strings (and their
escapes) and of the nesting depth, and refuses, in one line that names the file and the line
or record:

* nesting deeper than :data:`MAX_DEPTH` (a record of scalars is 1 deep, 2 inside an array);
* in JSON lines, a line that ends inside a string or with an object or array still open: the
  pyarrow reader splits the file at line breaks, while the fallback reader joins the lines
  into one document, so only complete lines read the same to both (and to this scan);
* more records than ``max_rows``;
* more than :data:`MAX_FIELDS` distinct field names, or fields so sparse that the table would
  hold more than twice as many cells as the file has values (plus :data:`SPARSE_SLACK`).
"""

from __future__ import annotations

import numpy as np

from costdash.io.messages import _q, _too_many_rows
from costdash.errors import InputFileError

MAX_DEPTH = 8
"""Deepest nesting of objects and arrays a file may have: far above a table's (1 for a line's
record, 2 for a record inside an array) and far below any parser's stack (pyarrow's reader dies
at a few thousand levels, fewer in a thread)."""

MAX_FIELDS = 20_000
"""Most distinct field names across all records (100 times the default classifier limit; a
file may hold more classifiers than it keeps with the ``models`` option)."""

SPARSE_SLACK = 1_000_000
"""Cells of padding allowed beyond twice the values a file has (records that leave some fields
out read as missing values, which cost a cell each)."""

_CHUNK = 1 << 22
_QUOTE, _BACKSLASH, _NEWLINE, _COLON = ord('"'), ord("\\"), ord("\n"), ord(":")
_OPENS, _CLOSES = (ord("{"), ord("[")), (ord("}"), ord("]"))
_STRUCTURAL = np.zeros(256, dtype=bool)
_STRUCTURAL[[_QUOTE, _NEWLINE, _COLON, *_OPENS, *_CLOSES]] = True
_DELTA = np.zeros(256, dtype=np.int8)
_DELTA[list(_OPENS)] = 1
_DELTA[list(_CLOSES)] = -1


def check_json_table(data: bytes, source: str, *, lines: bool,
                     max_rows: int | None = None) -> None:
    """Refuse JSON (UTF-8 bytes) whose structure is not a table's (see the module's text).

    Parameters
    ----------
    data : bytes
        The file's text, UTF-8.
    source : str
        The file's name, for the message.
    lines : bool
        JSON lines (one record per line) rather than one array of records.
    max_rows : int, optional
        Most records allowed.

    Raises
    ------
    InputFileError
        Naming the file and the line (JSON lines) or record (an array).
    """
    _Scan(data, source, lines, max_rows).run()


class _Scan:
    """One pass over ``data`` in chunks of about :data:`_CHUNK` bytes, looking only at the
    bytes that make structure (quotes, brackets, colons, line breaks). Carried from one chunk
    to the next: whether a string is open, the depth, the last two quotes (a field name may
    begin in the previous chunk), the lines, records and values seen and the field names.

    JSON lines: the pyarrow reader splits the file at line breaks, the fallback reader joins
    the lines into one document; the scan counts straight through (the joined view) and
    refuses the first line that ends inside a string or with something open, which is where
    the two views would begin to differ. Up to that line both are the scan's."""

    def __init__(self, data: bytes, source: str, lines: bool, max_rows: int | None):
        self.data, self.source, self.lines, self.max_rows = data, source, lines, max_rows
        self.arr = np.frombuffer(data, dtype=np.uint8)
        self.record_depth = 1 if lines else 2
        self.in_string = 0
        self.depth = 0
        self.records = 0
        self.values = 0
        self.quotes = np.empty(0, dtype=np.int64)
        self.fields: set[bytes] = set()

    def run(self) -> None:
        start, n = 0, len(self.arr)
        while start < n:
            end = min(start + _CHUNK, n)
            # A chunk never ends inside a run of backslashes, so no escape crosses a boundary.
            while end < n and self.arr[end - 1] == _BACKSLASH:
                end += 1
            self._chunk(start, end)
            start = end
        if self.lines and (self.in_string or self.depth):
            self._unfinished(n)
        if self.max_rows is not None and self.records > self.max_rows:
            raise _too_many_rows(self.source, f"{self.records:,}", self.max_rows)
        rows = max(self.records, 1)
        if rows * len(self.fields) > 2 * self.values + SPARSE_SLACK:
            self._fail(f"its {self.records:,} records name {len(self.fields):,} different "
                       f"fields but hold only {self.values:,} values: a table of them would "
                       f"have {rows * len(self.fields):,} cells, nearly all empty; every record "
                       "of a predictions file has the same fields")

    def _chunk(self, start: int, end: int) -> None:
        raw = self.arr[start:end]
        pos = np.flatnonzero(_STRUCTURAL[raw])
        if not len(pos):
            return
        ch = raw[pos]
        is_quote = ch == _QUOTE
        if self.data.find(b"\\", start, end) >= 0 and is_quote.any():
            is_quote[is_quote] = ~_escaped(raw, pos[is_quote])
        parity = (np.cumsum(is_quote, dtype=np.int64) + self.in_string) & 1
        # A quote's own parity says whether it opens (1) or closes (0) a string; any other
        # byte is in a string when the parity is odd.
        outside = (parity == 0) & ~is_quote
        delta = _DELTA[ch] * outside
        depth = self.depth + np.cumsum(delta, dtype=np.int64)
        if self.lines:
            breaks = np.flatnonzero(ch == _NEWLINE)
            bad = (parity[breaks] != 0) | (depth[breaks] != 0)
            if bad.any():
                self._unfinished(start + int(pos[breaks[int(np.argmax(bad))]]))
        if depth.max() > MAX_DEPTH:
            first = int(np.argmax(depth > MAX_DEPTH))
            record = self.records + int(np.count_nonzero(
                (delta[:first] > 0) & (depth[:first] == self.record_depth)))
            self._too_deep(start + int(pos[first]), record)
        at_record_depth = depth == self.record_depth
        self.records += int(np.count_nonzero((delta > 0) & at_record_depth))
        quotes = np.concatenate([self.quotes, pos[is_quote] + start])
        names = outside & (ch == _COLON) & at_record_depth
        if names.any():
            self._field_names(pos[names] + start, quotes)
        # Carried to the next chunk.
        self.quotes = quotes[-2:]
        self.in_string = int(parity[-1])
        self.depth = int(depth[-1])

    def _field_names(self, colons: np.ndarray, quotes: np.ndarray) -> None:
        """Count the values (a field name before a colon at the records' depth) and collect
        the distinct names; refuse past :data:`MAX_FIELDS`, naming the line that went over."""
        k = np.searchsorted(quotes, colons)
        k = k[k >= 2]
        self.values += len(k)
        begin, stop = quotes[k - 2] + 1, quotes[k - 1]
        before = set(self.fields)
        self.fields |= _distinct(self.data, begin, stop)
        if len(self.fields) <= MAX_FIELDS:
            return
        for b, s in zip(begin.tolist(), stop.tolist()):
            before.add(self.data[b:s])
            if len(before) > MAX_FIELDS:
                name = self.data[b:s].decode("utf-8", "replace")
                line = self._line(b)
                self._fail(f"its records name more than {MAX_FIELDS:,} different fields (line "
                           f"{line:,} brings {_q(name)}); a predictions file has a column per "
                           "classifier and a few more", rows=(line,))

    # messages ---------------------------------------------------------------------------------

    def _line(self, offset: int) -> int:
        return self.data.count(b"\n", 0, offset) + 1

    def _too_deep(self, offset: int, record: int) -> None:
        line = self._line(offset)
        where = f"line {line:,}" if self.lines else f"record {record:,} (line {line:,})"
        self._fail(f"{where} nests objects or arrays more than {MAX_DEPTH} deep; a predictions "
                   "file holds flat records such as {\"y_true\": 1, \"model_a\": 0.7}",
                   rows=(line if self.lines else record,))

    def _unfinished(self, offset: int) -> None:
        line = self._line(offset)
        self._fail(f"is not valid JSON lines: line {line:,} ends inside a string or with an "
                   "object or array still open (each line holds one whole record)",
                   rows=(line,))

    def _fail(self, message: str, rows: tuple[int, ...] = ()) -> None:
        raise InputFileError(f"{self.source}: {message}", source=self.source, rows=rows)


def _escaped(raw: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Whether each position ``at`` of ``raw`` follows an odd run of backslashes."""
    backslash = raw == _BACKSLASH
    last_other = np.maximum.accumulate(np.where(backslash, -1, np.arange(len(raw))))
    prev = at - 1
    run = np.where(prev >= 0, prev - last_other[np.maximum(prev, 0)], 0)
    return (run & 1).astype(bool)


_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)


def _words(data: bytes, at: np.ndarray) -> np.ndarray:
    """The 8 bytes at each offset ``at`` (all at least 8 bytes from the end) as little-endian
    integers: a view of ``data`` with an 8-byte item at every byte (no copy of it)."""
    base = np.frombuffer(data, dtype="<u8", count=len(data) // 8)
    every_byte = np.lib.stride_tricks.as_strided(base, shape=(len(data) - 7,), strides=(1,),
                                                 writeable=False)
    return every_byte[at]


def _distinct(data: bytes, begin: np.ndarray, stop: np.ndarray) -> set[bytes]:
    """The distinct byte strings ``data[begin:stop]``.

    A name of at most 16 bytes is its length and two 8-byte words; those triples are grouped
    by a hash (numpy's) and each group checked against its first member, so Python sees one
    name per distinct name (plus any hash collision). Longer names are padded to a width and
    sorted by numpy, a bucket of widths at a time."""
    lengths = np.maximum(stop - begin, 0)
    names: set[bytes] = set()
    short = (lengths <= 16) & (begin + 16 <= len(data))
    if short.any():
        b, n = begin[short], lengths[short]
        first = _words(data, b) & _MASKS[np.minimum(n, 8)]
        second = _words(data, b + 8) & _MASKS[np.clip(n - 8, 0, 8)]
        key = first * _MIX[0] ^ second * _MIX[1] ^ n.astype(np.uint64) * _MIX[2]
        _, rep, inverse = np.unique(key, return_index=True, return_inverse=True)
        same = ((first == first[rep][inverse]) & (second == second[rep][inverse])
                & (n == n[rep][inverse]))
        for i in np.concatenate([rep, np.flatnonzero(~same)]).tolist():
            names.add(data[int(b[i]):int(b[i]) + int(n[i])])
    rest = np.flatnonzero(~short)
    long_b, long_n = begin[rest], lengths[rest]
    width = 32
    while len(long_b):
        chosen = long_n <= width
        b, n = long_b[chosen], long_n[chosen]
        fits = b + width <= len(data)
        if fits.any():
            arr = np.frombuffer(data, dtype=np.uint8)
            windows = np.lib.stride_tricks.sliding_window_view(arr, width)[b[fits]]
            windows = np.where(np.arange(width) < n[fits][:, None], windows, 0)
            names.update(np.unique(np.ascontiguousarray(windows).view(f"S{width}")).tolist())
        for s, k in zip(b[~fits].tolist(), n[~fits].tolist()):
            names.add(data[s:s + k])
        long_b, long_n = long_b[~chosen], long_n[~chosen]
        width *= 2
    return names
