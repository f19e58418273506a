"""How :func:`costdash.io.load_predictions` names what is wrong in a file: quoted values and
lists, row numbers, sizes and the reasons of the parsers' exceptions, kept short and printable.
Private: a part of :mod:`costdash.io`, whose ``__init__`` holds the public names.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from costdash._wording import counted
from costdash.errors import InputFileError

_SHOW_ROWS = 5
_SHOW_LABELS = 10
_SHOW_CHARS = 60  # of one value quoted in a message
_SHOW_LIST_CHARS = 250  # of a list of quoted values in a message
_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(32), 127]}


def _size(n: int) -> str:
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return counted(n, "byte", spec="")



def _fail(source: str, message: str, column: str | None, rows: np.ndarray) -> InputFileError:
    return InputFileError(f"{source}: {message}", source=source, column=column,
                          rows=tuple(int(r) for r in rows[:_SHOW_ROWS]))


def _rows_text(rows: np.ndarray, count: int | None = None) -> str:
    """ "row 3", "rows 3, 9" or "rows 1, 2, 3, 4, 5 and 12 more": the first rows of ``count``
    (default: all of ``rows``; a reader that stops collecting after the first few says how many
    there were)."""
    count = len(rows) if count is None else count
    shown = ", ".join(str(int(r)) for r in rows[:_SHOW_ROWS])
    more = f" and {count - _SHOW_ROWS} more" if count > _SHOW_ROWS else ""
    return f"{'row' if count == 1 else 'rows'} {shown}{more}"


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
