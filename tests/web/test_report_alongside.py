"""The first report of a data set whose threshold choice is not computed yet (issue 23, session
13): the web process computes the choice while the report's child builds every other section
(:func:`dashboard.results.run_alongside`), from one analysis made for both; the report is the
one the serial path (choice first, then the report) makes."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest

from dashboard.jobs.gate import run_bounded
from dashboard.results import run_alongside

from .test_report_content import VIEWS, _stored, stored  # noqa: F401 - the fixture
from .helpers import make_predictions


def _bounded(fn):
    return run_bounded(fn, timeout=60, what="test")


def test_the_child_gets_the_text_computed_here_meanwhile():
    big = "x" * 1_000_003  # more than a pipe holds: written while the child reads
    assert run_alongside(_bounded, lambda later: [len(later()), "done"], lambda: big) == [
        len(big), "done"]


def test_descriptors_past_1024_in_use_are_no_matter():
    """A web process serving many clients holds descriptors past select()'s limit; a CI run
    found the report's 500 ("filedescriptor out of range in select()") that way."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200 <= hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1200, hard))
    held = []
    try:
        while len(held) < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        assert max(held) > 1024
        assert run_alongside(_bounded, lambda later: later() + "!", lambda: "text") == "text!"
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_failure_here_is_raised_and_the_child_is_told():
    def here():
        raise ValueError("the choice failed")

    with pytest.raises(ValueError, match="the choice failed"):
        run_alongside(_bounded, lambda later: later(), here)


def test_a_failure_in_the_child_is_raised_after_here_ran(tmp_path):
    ran = tmp_path / "ran"

    def child(_later):
        raise KeyError("no")

    def here():
        ran.write_text("1")
        return "text"

    with pytest.raises(RuntimeError):
        run_alongside(_bounded, child, here)
    assert ran.read_text() == "1"


def _normalized(html: bytes, data_id: str) -> str:
    text = html.decode().replace(data_id, "DATA")
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "WHEN", text)


@pytest.mark.slow
@pytest.mark.parametrize("which", sorted(VIEWS))
def test_the_first_report_alongside_is_the_serial_report(stored, which):  # noqa: F811
    app, data_id, _dataset = stored
    client = app.server.test_client()
    query = urlencode(VIEWS[which])
    text = make_predictions(n=3000, seed=11).to_csv(index=False)
    other = _stored(app, text)  # the same file, a new handle: nothing of data_id's kept
    results = app.server.extensions["costdash"].results
    for handle in (data_id, other):
        assert results.kept_choice_base(handle, "full", None, None) is None
    # Serial: the report's own view's choice asked first (its base kept), then the report.
    assert client.get(f"/api/v1/datasets/{other}/choice.json?{query}").status_code == 200
    serial = client.get(f"/api/v1/datasets/{other}/report.html?{query}")
    # Alongside: no choice before it.
    first = client.get(f"/api/v1/datasets/{data_id}/report.html?{query}")
    assert serial.status_code == first.status_code == 200
    assert b'id="choice' in first.data
    assert _normalized(first.data, data_id) == _normalized(serial.data, other)


@pytest.mark.slow
def test_the_first_report_analyses_once_and_computes_the_curves_once(stored, monkeypatch,  # noqa: F811
                                                                    tmp_path):
    """Counted in this process and the forked ones (a line per call in a file)."""
    import costdash.analysis
    import costdash.choice_summary
    import dashboard.report

    calls: Path = tmp_path / "calls"
    calls.write_text("")

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            with open(calls, "a") as f:
                f.write(name + "\n")
            return fn(*args, **kwargs)
        return wrapper

    dashboard.report.warm_figures()  # finish_setup's, before serving (its own small reports)
    monkeypatch.setattr(costdash.analysis, "analyze",
                        counted("analyze", costdash.analysis.analyze))
    monkeypatch.setattr(dashboard.report, "analyze", counted("analyze", dashboard.report.analyze))
    monkeypatch.setattr(costdash.choice_summary, "choice_curves",
                        counted("curves", costdash.choice_summary.choice_curves))
    import dashboard.results

    monkeypatch.setattr(dashboard.results, "run_alongside",
                        counted("alongside", dashboard.results.run_alongside))
    app, data_id, _dataset = stored
    reply = app.server.test_client().get(f"/api/v1/datasets/{data_id}/report.html?p_pos=0.07")
    assert reply.status_code == 200 and b'id="choice' in reply.data
    assert sorted(calls.read_text().split()) == ["alongside", "analyze", "curves"]
    # The choice's base is kept in this process: the next view's report takes the serial path.
    assert app.server.extensions["costdash"].results.kept_choice_base(
        data_id, "full", None, None) is not None
