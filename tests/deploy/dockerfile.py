"""Just enough of a Dockerfile reader for tests/deploy to check and replay the project's own
Dockerfile (one stage, exec-form CMD and HEALTHCHECK, ``ENV k=v`` lines)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Dockerfile:
    """The instructions of a one-stage Dockerfile, in the order they appear."""

    base: str = ""
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    copies: list[tuple[list[str], str]] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    user: str | None = None
    expose: list[int] = field(default_factory=list)
    healthcheck: list[str] | None = None
    healthcheck_options: dict[str, str] = field(default_factory=dict)
    cmd: list[str] | None = None


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):  # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        word, _, rest = current.partition(" ")
        out.append((word.upper(), rest.strip()))
        current = ""
    return out


def parse(path: Path) -> Dockerfile:
    df = Dockerfile()
    for word, rest in instructions(path.read_text()):
        if word == "FROM":
            df.base = rest
        elif word == "ENV":
            for item in shlex.split(rest):
                key, _, value = item.partition("=")
                df.env[key] = value
        elif word == "WORKDIR":
            df.workdir = rest
        elif word == "COPY":
            *sources, target = shlex.split(rest)
            df.copies.append((sources, target))
        elif word == "RUN":
            df.runs.append(rest)
        elif word == "USER":
            df.user = rest
        elif word == "EXPOSE":
            df.expose += [int(p.split("/")[0]) for p in rest.split()]
        elif word == "HEALTHCHECK":
            options, _, command = rest.partition("CMD ")
            df.healthcheck = json.loads(command)
            df.healthcheck_options = dict(o.lstrip("-").split("=", 1) for o in options.split())
        elif word == "CMD":
            df.cmd = json.loads(rest)
        else:
            raise ValueError(f"tests/deploy/dockerfile.py does not know {word}: extend it, or "
                             "keep the Dockerfile replayable")
    return df
