"""Counts in messages and tables: "1 fold", "3 folds", "1,204 rows"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: float, noun: str, plural: str | None = None, spec: str = ",") -> str:
    """``n`` formatted with ``spec`` and the noun in the number it takes.

    Parameters
    ----------
    n : int or float
        The count (a float such as a volume of 1.0 cases is singular too).
    noun : str
        The singular.
    plural : str, optional
        Default: the singular with an "s".
    spec : str, optional
        Format specification of the number (default ``","``: thousands separated).

    Examples
    --------
    >>> counted(1, "fold"), counted(3, "fold"), counted(1204, "row")
    ('1 fold', '3 folds', '1,204 rows')
    >>> counted(1.0, "case", spec="g"), counted(0, "choice"), counted(2, "match", "matches")
    ('1 case', '0 choices', '2 matches')
    """
    word = noun if n == 1 else (plural if plural is not None else noun + "s")
    return f"{format(n, spec)} {word}"
