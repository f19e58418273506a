"""The structure check of JSON predictions files (costdash.io.json_shape), issue 22 finding 4: hostile
structure is refused before a native reader sees it, and the scan reads valid files exactly as
a JSON parser does (checked against Python's json module, chunk boundaries anywhere)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from costdash.io import json_shape as _io_json
from costdash.io.json_shape import MAX_DEPTH, MAX_FIELDS, check_json_table
from costdash.errors import InputFileError
from costdash.io import load_predictions

NESTED = ('{"a":' * 20_000 + "1" + "}" * 20_000 + "\n").encode()
"""The probe's file: 120 kB, one record of 20,000 nested objects."""

VALID = "".join(f'{{"y_true": {i % 2}, "a": {i / 50}}}\n' for i in range(50)).encode()


def _load_in_child(data: bytes, name: str) -> subprocess.CompletedProcess:
    """load_predictions of ``data`` in a child process (a crash there must not end pytest)."""
    code = ("import sys; from costdash.io import load_predictions\n"
            "from costdash.errors import InputFileError\n"
            "data = sys.stdin.buffer.read()\n"
            "import io\n"
            "try:\n"
            f"    load_predictions(io.BytesIO(data), name={name!r})\n"
            "    print('read')\n"
            "except InputFileError as exc:\n"
            "    print('refused:', exc)\n")
    return subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                          timeout=120)


def test_pyarrows_reader_dies_of_the_nested_file():
    """What the check prevents: pyarrow's JSON reader, which load_predictions tried first,
    takes the whole process down (SIGSEGV) on the probe's 120 kB file."""
    code = ("import io, sys, pandas as pd\n"
            "pd.read_json(io.BytesIO(sys.stdin.buffer.read()), lines=True, engine='pyarrow')\n")
    done = subprocess.run([sys.executable, "-c", code], input=NESTED, capture_output=True,
                          timeout=120)
    assert done.returncode < 0, done  # killed by a signal


@pytest.mark.slow
def test_the_nested_file_is_refused_and_the_process_lives():
    done = _load_in_child(NESTED, "nested.jsonl")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    out = done.stdout.decode().strip()
    assert out.startswith("refused: nested.jsonl: line 1 nests objects or arrays more than 8 "
                          "deep"), out
    with pytest.raises(InputFileError, match=r"^nested\.jsonl: line 1 nests .* more than 8 deep"):
        load_predictions(__import__("io").BytesIO(NESTED), name="nested.jsonl")


@pytest.mark.parametrize("content, lines, message", [
    # the row (line, or record of an array) is named
    (VALID + b'{"y_true": 0, "a": [[[[[[[[[1]]]]]]]]]}\n', True, r"line 51 nests"),
    (b"[" + b'{"y_true": 1, "a": 0.1},' * 3 + b'{"a":' * 9 + b"1" + b"}" * 9 + b"]", False,
     r"record 4 \(line 1\) nests"),
    # a line that leaves a string or an object open
    (b'{"y_true": 1, "a": "x\n", "b": 1}\n', True,
     r"is not valid JSON lines: line 1 ends inside a string"),
    (VALID + b'{"y_true": 1, "a": 0.5\n{"y_true": 0, "a": 0.1}\n', True,
     r"is not valid JSON lines: line 51 ends"),
    (VALID + b'{"y_true": 1, "a": 0.5', True, r"is not valid JSON lines: line 51 ends"),
])
def test_hostile_or_broken_structure_is_refused_naming_the_row(content, lines, message):
    with pytest.raises(InputFileError, match=r"^p\.json: " + message):
        check_json_table(content, "p.json", lines=lines)


def test_a_field_name_per_record_is_refused():
    """20,000 records that each name a field of their own (400 kB) would be a table of
    20,000 x 20,001 cells; pyarrow's reader needed more than 4 GB for it."""
    content = "".join(f'{{"y": {i % 2}, "k{i}": 0.5}}\n' for i in range(MAX_FIELDS)).encode()
    with pytest.raises(InputFileError, match=r"more than 20,000 different fields \(line 20,000 "
                                             r"brings 'k19999'\)"):
        check_json_table(content, "p.jsonl", lines=True)
    sparse = "".join(f'{{"y": {i % 2}, "k{i}": 0.5}}\n' for i in range(2_000)).encode()
    with pytest.raises(InputFileError, match=r"2,000 records name 2,001 different fields but "
                                             r"hold only 4,000 values"):
        check_json_table(sparse, "p.jsonl", lines=True)


def test_records_of_an_array_are_counted_against_the_row_limit():
    content = b"[" + b",".join(b'{"y_true": 1, "a": 0.5}' for _ in range(101)) + b"]"
    with pytest.raises(InputFileError, match=r"^p\.json: has 101 data rows, more than the "
                                             r"limit of 100"):
        check_json_table(content, "p.json", lines=False, max_rows=100)
    check_json_table(content, "p.json", lines=False, max_rows=101)


def test_strings_hide_structure_and_escapes_are_followed():
    """Brackets, colons and line-break-free escapes inside strings are text: a name of
    twenty braces, escaped quotes and backslash runs of both parities."""
    names = ["{" * 20, 'say \\"hi\\"', "back\\\\", "\\\\\\\"x", "[[[[[[[[[[", "a:b"]
    rows = "".join(f'{{"y_true": 1, "{n}": 0.5, "m": "{n}"}}\n' for n in names).encode()
    check_json_table(rows, "p.jsonl", lines=True)
    scan = _io_json._Scan(rows, "p.jsonl", True, None)
    scan.run()
    assert scan.records == len(names) and scan.values == 3 * len(names)
    assert scan.fields == {b"y_true", b"m", *(n.encode() for n in names)}


def _value(rng: np.random.Generator, depth: int):
    kind = rng.integers(0, 6 if depth < MAX_DEPTH - 1 else 4)
    if kind == 0:
        return float(rng.normal())
    if kind == 1:
        return int(rng.integers(-5, 5))
    if kind == 2:
        return _text(rng)
    if kind == 3:
        return None
    if kind == 4:
        return [_value(rng, depth + 1) for _ in range(rng.integers(0, 3))]
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.integers(0, 3))}


ALPHABET = list('ab{}[]:,"\\ é\t') + ["\u2028", "\u00e9\u00e9", "z" * 20]


def _text(rng: np.random.Generator) -> str:
    return "".join(rng.choice(ALPHABET, size=rng.integers(0, 6)))


def _oracle_depth(value, depth: int) -> int:
    if isinstance(value, dict):
        return max([depth + 1, *(_oracle_depth(v, depth + 1) for v in value.values())])
    if isinstance(value, list):
        return max([depth + 1, *(_oracle_depth(v, depth + 1) for v in value)])
    return depth


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 22])
@pytest.mark.parametrize("seed", range(4))
def test_the_scan_agrees_with_a_json_parser(monkeypatch, chunk, seed):
    """Random records (names and strings full of brackets, quotes, backslashes and non-ASCII;
    nested values up to the limit), written by json.dumps as lines and as an array and scanned
    in chunks of 1 byte to 4 MB: records, values and distinct names are what Python's json
    module reads, and the depth limit falls where the parsed depth passes it."""
    monkeypatch.setattr(_io_json, "_CHUNK", chunk)
    rng = np.random.default_rng(seed)
    records = [{_text(rng) + str(rng.integers(0, 4)): _value(rng, 1)
                for _ in range(rng.integers(0, 5))} for _ in range(60)]
    ascii_only = bool(seed % 2)
    as_lines = "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in records).encode()
    as_array = json.dumps(records, ensure_ascii=ascii_only).encode()
    names = {json.dumps(k, ensure_ascii=ascii_only)[1:-1].encode() for r in records for k in r}
    values = sum(len(r) for r in records)
    for data, lines in ((as_lines, True), (as_array, False)):
        scan = _io_json._Scan(data, "p.json", lines, None)
        scan.run()
        assert (scan.records, scan.values, scan.fields) == (len(records), values, names)
    deep = {"a": records[0], "b": [[[[[[[[1]]]]]]]]}  # 9 deep from the line's record
    assert _oracle_depth(deep, 0) == MAX_DEPTH + 1
    with pytest.raises(InputFileError, match="line 61 nests"):
        check_json_table(as_lines + json.dumps(deep).encode() + b"\n", "p.json", lines=True)
    fine = {"a": 1, "b": [[[[[[[1]]]]]]]}
    assert _oracle_depth(fine, 0) == MAX_DEPTH
    check_json_table(as_lines + json.dumps(fine).encode() + b"\n", "p.json", lines=True)


def test_valid_files_are_read_as_before(tmp_path):
    """Lines and arrays of flat records, a record leaving a field out, CRLF line ends."""
    ds = load_predictions(__import__("io").BytesIO(VALID), name="p.jsonl")
    assert ds.n == 50 and ds.names == ("a",)
    array = json.dumps([json.loads(line) for line in VALID.splitlines()]).encode()
    assert load_predictions(__import__("io").BytesIO(array), name="p.json").n == 50
    crlf = VALID.replace(b"\n", b"\r\n")
    assert load_predictions(__import__("io").BytesIO(crlf), name="p.jsonl").n == 50
