"""Docstring text that several public functions share, written once and filled in per function
(the pattern of pandas' ``doc`` decorator and scipy's ``doccer``).

A placeholder is ``%(name)s``; a value of several lines is indented to the placeholder's column,
so a shared numpydoc block reads the same in every docstring it stands in. Any other ``%`` is
left alone (no escaping needed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

_F = TypeVar("_F", bound=Callable[..., object])

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def fill(text: str, values: dict[str, str]) -> str:
    r"""``text`` with every ``%(name)s`` replaced by ``values[name]`` (a missing name raises
    KeyError, so a misspelt placeholder never reaches a user).

    Examples
    --------
    >>> print(fill("Parameters\n    %(x)s\n", {"x": "x : int\n    Any x."}))
    Parameters
        x : int
            Any x.
    <BLANKLINE>
    """
    def one(match: re.Match[str]) -> str:
        line = text[text.rfind("\n", 0, match.start()) + 1:match.start()]
        indent = line[:len(line) - len(line.lstrip())]
        return ("\n" + indent).join(values[match.group(1)].split("\n"))
    return _PLACEHOLDER.sub(one, text)


def fill_doc(template: str | None = None, /, **values: str) -> Callable[[_F], _F]:
    """Decorator: the docstring becomes ``template`` (default: the function's own docstring)
    with its placeholders filled from ``values``.

    Parameters
    ----------
    template : str, optional
        A whole docstring shared by several functions; absent, the function's own.
    **values : str
        The text of each placeholder.

    Returns
    -------
    callable
        The decorator; it returns the function itself, with ``__doc__`` set.
    """
    def decorate(func: _F) -> _F:
        func.__doc__ = fill(func.__doc__ if template is None else template, values)
        return func
    return decorate
