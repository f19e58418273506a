"""A module imported when first used (private).

``pd = lazy_module("pandas")`` at the top of a module keeps pandas (a quarter of a second) out
of its import: ``pd.read_csv`` imports it on first use. :mod:`costdash.io` reads plain wide CSV
files without pandas (:mod:`costdash.io.plain_csv`), so ``costdash analyze`` of such a file
never pays for it (issue 23).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule:
    """Stands for a module; the first attribute read imports it (once: importlib caches it)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported when first used>"


def lazy_module(name: str) -> Any:
    """``name``, imported on first attribute access (``import`` statements stay as they are
    for type checkers: annotations are strings under ``from __future__ import annotations``)."""
    return _LazyModule(name)
