"""The ``costdash`` command line: one sub-command per module, each with a ``register`` function.

The core's commands are the modules of :data:`_COMMAND_MODULES`; packages above the core add
theirs through the entry-point group :data:`COMMAND_GROUP` (each entry a ``register`` function;
the dashboard's ``costdash report`` is one), so the core never names them.

Errors about the user's input (:class:`costdash.errors.CostdashError`) are printed as one line on
stderr with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Any

from costdash.errors import CostdashError

# Modules under costdash.cli that define ``register(subparsers)``; each sets ``func`` on its parser.
_COMMAND_MODULES = ("analyze", "decide", "multiclass", "bands", "push", "aggregate", "dca")

COMMAND_GROUP = "costdash.commands"
"""Entry-point group of the commands other packages add: each names a ``register(subparsers)``."""


def _plugin_registers() -> list:
    """The ``register`` functions of :data:`COMMAND_GROUP`, by entry name; one whose package
    is not installed here is left out, as a missing core module is."""
    found = []
    for entry in sorted(entry_points(group=COMMAND_GROUP), key=lambda e: e.name):
        try:
            found.append(entry.load())
        except ModuleNotFoundError as exc:
            if not entry.module.startswith(exc.name or "\0"):  # its own package, not a bug
                raise
            continue
    return found


def build_parser() -> argparse.ArgumentParser:
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
    for register in _plugin_registers():
        register(subparsers)
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
    parser = build_parser()
    args = parser.parse_args(argv)
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
