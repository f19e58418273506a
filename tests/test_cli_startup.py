"""``costdash --help`` stays light (issue 23: <= 0.3 s): no command's computation is imported
before the command runs. Checked by the modules a fresh interpreter has loaded, not by a timing
(which a loaded machine would make flaky)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from costdash.cli import _command_word, _declared_commands

HEAVY = ("scipy", "pandas", "pyarrow", "sklearn", "duckdb", "numba", "plotly", "dash",
         "costdash.aggregation", "costdash.bands", "costdash.band_choice", "costdash.choice_curves",
         "costdash.choice_summary", "costdash.dca", "costdash.hmeasure", "costdash.multiclass",
         "costdash.io", "costdash.io.reading", "costdash.robust", "costdash.decision",
         "costdash.criteria", "dashboard.commands")
"""Modules (and packages) no command list or core command's help may import."""


def _loaded_after(argv: list[str]) -> tuple[int, list[str], str]:
    """Run ``costdash.cli.main(argv)`` in a fresh interpreter; its exit status, the heavy
    modules then loaded, and what it printed."""
    code = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from costdash.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                status = main({argv!r})
            except SystemExit as exc:
                status = exc.code
        heavy = sorted(m for m in sys.modules
                       if any(m == h or m.startswith(h + ".") for h in {HEAVY!r}))
        print(json.dumps({{"status": status, "heavy": heavy, "out": out.getvalue()}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result["status"], result["heavy"], result["out"]


def test_help_imports_no_command_computation():
    status, heavy, out = _loaded_after(["--help"])
    assert status == 0
    assert heavy == []
    # Every command is still listed, the one added through the entry-point group included,
    # with the help its source declares.
    for name in ("analyze", "decide", "bcost", "band", "compare", "push", "aggregate", "dca",
                 "report"):
        assert f"    {name}" in out
    assert "self-contained HTML report" in out


@pytest.mark.parametrize("command", ["analyze", "decide", "band", "compare", "bcost", "dca",
                                     "aggregate", "push", "watch"])
def test_a_core_commands_help_imports_no_computation(command):
    status, heavy, out = _loaded_after([command, "--help"])
    assert status == 0 and f"costdash {command}" in out
    assert heavy == []


def test_python_dash_m_costdash_help():
    """The module entry point (``python -m costdash``) as the user runs it."""
    code = ("import runpy, sys; sys.argv = ['costdash', '--help']\n"
            "try:\n    runpy.run_module('costdash', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            f"heavy = [m for m in sys.modules if any(m == h or m.startswith(h + '.') "
            f"for h in {HEAVY!r})]\n"
            "print('HEAVY', sorted(heavy))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "usage: costdash" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "HEAVY []"


def test_the_plugin_command_is_imported_when_it_runs():
    status, heavy, out = _loaded_after(["report", "--help"])
    assert status == 0 and "usage: costdash report" in out
    assert "dashboard.commands" in heavy


def test_declared_commands_are_read_from_the_source(tmp_path, monkeypatch):
    pkg = tmp_path / "costdash_plugin_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "literal.py").write_text(textwrap.dedent('''
        import no_such_module_anywhere  # never imported by the reading
        def register(subparsers):
            a = subparsers.add_parser("alpha", help="the first " "command")
            subparsers.add_parser("beta")
    '''))
    (pkg / "computed.py").write_text(textwrap.dedent('''
        NAME = "gamma"
        def register(subparsers):
            subparsers.add_parser(NAME, help="a name the reading cannot know")
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _declared_commands("costdash_plugin_probe.literal") == [
        ("alpha", "the first command"), ("beta", None)]
    assert "no_such_module_anywhere" not in sys.modules
    assert _declared_commands("costdash_plugin_probe.computed") is None  # then it is imported
    assert _declared_commands("costdash_plugin_probe.missing") is None


@pytest.mark.parametrize(("argv", "word"), [
    ([], None), (["--help"], None), (["-h", "analyze"], "analyze"), (["report", "x.csv"], "report"),
    (["--", "analyze"], None)])
def test_command_word(argv, word):
    assert _command_word(argv) == word
