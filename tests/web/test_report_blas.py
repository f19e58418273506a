"""The report's calibrations run on one OpenBLAS thread and give the thread count back after
(``dashboard.report.blas``): numpy's wheels bundle OpenBLAS, whose spinning threads tripled the
CPU time of a Platt fit (issue 23)."""

from __future__ import annotations

import threading

import numpy as np

from dashboard.report.blas import _libraries, one_blas_thread


def _threads() -> list[int]:
    return [int(get()) for _set, get in _libraries()]


def test_one_thread_inside_and_the_count_given_back_after():
    np.dot(np.ones(10), np.ones(10))   # numpy's OpenBLAS loaded
    before = _threads()
    assert before, "no OpenBLAS found in this process (numpy's wheels bundle it)"
    with one_blas_thread():
        assert _threads() == [1] * len(before)
        with one_blas_thread():            # nested: still one, and not given back yet
            assert _threads() == [1] * len(before)
        assert _threads() == [1] * len(before)
    assert _threads() == before


def test_concurrent_uses_share_one_limit_lifted_by_the_last():
    np.dot(np.ones(10), np.ones(10))
    before = _threads()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with one_blas_thread():
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=other)
    worker.start()
    assert inside.wait(10)
    with one_blas_thread():
        pass
    assert _threads() == [1] * len(before)   # the other use still holds it
    release.set()
    worker.join(10)
    assert _threads() == before
