"""Exception types of costdash.

Every error a user can cause by what they feed in is a :class:`CostdashError`, whose message is
meant to be shown to them as it is (the CLI prints it, the dashboard puts it in its error area).
"""

from __future__ import annotations


class CostdashError(Exception):
    """Base class of every error costdash raises about its input."""


class InputFileError(CostdashError, ValueError):
    """A predictions or cost-matrix file that cannot be used.

    The message names the file, and where it helps the column and the first offending rows
    (1-based data row numbers, the header not counted).
    """

    def __init__(self, message: str, *, source: str | None = None, column: str | None = None,
                 rows: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.source = source
        self.column = column
        self.rows = rows


class ParameterError(CostdashError, ValueError):
    """An option or argument outside its valid range (a prior of 1.5, a negative cost, ...)."""
