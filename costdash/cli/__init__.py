"""The ``costdash`` command line: one sub-command per module, each with a ``register`` function.

The core's commands are the modules of :data:`_COMMAND_MODULES`; packages above the core add
theirs through the entry-point group :data:`COMMAND_GROUP` (each entry a ``register`` function;
the dashboard's ``costdash report`` is one), so the core never names them.

Errors about the user's input (:class:`costdash.errors.CostdashError`) are printed as one line on
stderr with exit status 2, never as a traceback.

Start-up stays light (``costdash --help`` in well under 0.3 s, issue 23): the command modules
import only argparse-level names at the top and their computation (scipy, pandas, the
aggregation engines) inside the function that runs the command; ``tests/test_cli_startup.py``
checks it. A command added through the entry-point group is imported only when it runs: for the
list of commands, :func:`main` reads each entry's ``subparsers.add_parser("name", help="...")``
calls from its module's source (:func:`_declared_commands`), and imports the module when a name
cannot be read that way.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

from costdash.errors import CostdashError

# Modules under costdash.cli that define ``register(subparsers)``; each sets ``func`` on its parser.
_COMMAND_MODULES = ("analyze", "decide", "multiclass", "bands", "push", "aggregate", "dca",
                    "watch")

COMMAND_GROUP = "costdash.commands"
"""Entry-point group of the commands other packages add: each names a ``register(subparsers)``."""


def _plugin_entries() -> list:
    """The entry points of :data:`COMMAND_GROUP`, by name."""
    # importlib.metadata scans every installed distribution (tens of ms): only when needed.
    from importlib.metadata import entry_points

    return sorted(entry_points(group=COMMAND_GROUP), key=lambda e: e.name)


def _load_register(entry: Any) -> Callable | None:
    """An entry's ``register`` function; None when its package is not installed here (left
    out, as a missing core module is)."""
    try:
        return entry.load()
    except ModuleNotFoundError as exc:
        if not entry.module.startswith(exc.name or "\0"):  # its own package, not a bug
            raise
        return None


def _plugin_registers() -> list:
    """The ``register`` functions of :data:`COMMAND_GROUP`, by entry name; one whose package
    is not installed here is left out, as a missing core module is."""
    return [r for r in map(_load_register, _plugin_entries()) if r is not None]


def _declared_commands(module: str) -> list[tuple[str, str | None]] | None:
    """The ``(name, help)`` of each ``subparsers.add_parser("name", help="...")`` call in the
    source of ``module``, read without importing it; None when the source cannot be found or
    read, or when a call's name is not a literal (then the module has to be imported)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        with open(spec.origin, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), spec.origin)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_parser"):
            continue
        if not (node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            return None
        helps = [k.value for k in node.keywords if k.arg == "help"]
        text = helps[0].value if helps and isinstance(helps[0], ast.Constant) else None
        found.append((node.args[0].value, text if isinstance(text, str) else None))
    return found or None


def _command_word(argv: Sequence[str]) -> str | None:
    """The command named on the command line: the first word not an option (the top-level
    parser has no option taking a value), or None (``costdash``, ``costdash --help``)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``costdash`` parser.

    Parameters
    ----------
    argv : sequence of str, optional
        The command line about to be parsed. Given, the commands added through
        :data:`COMMAND_GROUP` are imported only when it names one of them (or when one's
        names cannot be read from its source); the others appear in the list of commands
        with the help their source declares, as placeholders. None imports them all.
    """
    parser = argparse.ArgumentParser(
        prog="costdash",
        description="Choose and defend a classifier when costs and class priors are uncertain.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(f"costdash.cli.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"costdash.cli.{module_name}":
                raise
            continue
        module.register(subparsers)
    if argv is None:
        for register in _plugin_registers():
            register(subparsers)
        return parser
    word = _command_word(argv)
    if word in subparsers.choices:  # a core command: no other package is read at all
        return parser
    for entry in _plugin_entries():
        declared = _declared_commands(entry.module)
        if declared is None or word in {name for name, _ in declared}:
            register = _load_register(entry)
            if register is not None:
                register(subparsers)
            continue
        for name, text in declared:
            if name not in subparsers.choices:
                kwargs = {} if text is None else {"help": text}
                subparsers.add_parser(name, add_help=False, **kwargs)
    return parser


def print_json(payload: Any) -> None:
    """Print ``payload`` as strict JSON: NaN or infinity anywhere is a bug, so it raises."""
    print(json.dumps(payload, allow_nan=False))


def finite_or_none(value: float | None) -> float | None:
    """A float for JSON: None for missing, NaN or infinite values."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def number_type(parse: Callable[[str], float], noun: str, rule: str,
                accept: Callable[[float], bool]) -> Callable[[str], Any]:
    """An argparse ``type=`` for a number: ``parse`` it (else "not {noun}") and ``accept`` it
    (else "must be {rule}"), one rule per option, said in the option's error line."""
    def convert(text: str) -> Any:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {noun}: {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"must be {rule}, not {text!r}")
        return value
    return convert


def main(argv: Sequence[str] | None = None) -> int:
    as_program = argv is None  # `costdash ...` or `python -m costdash ...`, not a call from code
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.as_program = as_program
    try:
        return int(args.func(args) or 0)
    except CostdashError as exc:
        print(f"costdash: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error of ours.
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
