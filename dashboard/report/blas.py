"""OpenBLAS's threads, limited while the report fits its calibrations.

numpy's ``dot`` of two long vectors goes to OpenBLAS, which splits it over every core and spins
its threads between calls. Platt scaling (:func:`costdash.calibration.fit_platt`) calls it a few
times per Newton step: on 2 cores a cold report's calibration took 1.7 CPU s with OpenBLAS's 2
threads and 0.6 s with one (20 classifiers x 200,000 scores, the same curves and report), and
the report builds its other sections meanwhile on the other core (:mod:`dashboard.report.curves`).

The limit is OpenBLAS's own (``openblas_set_num_threads``: process-wide, as
``OPENBLAS_NUM_THREADS``), set for the duration and set back; found in the OpenBLAS libraries
this process has loaded (numpy's and scipy's own copies), as ``threadpoolctl`` finds them. Where
none is found (another BLAS), nothing is changed.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_PREFIXES = ("scipy_openblas", "openblas")
_SUFFIXES = ("64_", "")
_lock = threading.Lock()
_depth = 0
_saved: list[tuple[object, int]] = []


def _libraries() -> list[tuple[object, object]]:
    """(set, get) of each OpenBLAS library mapped into this process (Linux: /proc/self/maps)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = sorted({fields[-1] for fields in (line.split() for line in maps)
                            if len(fields) >= 6 and "openblas" in fields[-1].lower()
                            and ".so" in fields[-1]})
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                if setter is not None and getter is not None:
                    getter.restype = ctypes.c_int
                    found.append((setter, getter))
                    break
            else:
                continue
            break
    return found


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """OpenBLAS on one thread while the body runs (nested and concurrent uses share one limit,
    lifted when the last ends)."""
    global _depth
    with _lock:
        if _depth == 0:
            _saved.clear()
            for setter, getter in _libraries():
                _saved.append((setter, int(getter())))
                setter(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for setter, threads in _saved:
                    setter(threads)
                _saved.clear()
