"""A real notebook for the tests of ``costdash.show``: nbclient driving an ipykernel, one cell at
a time, so that the app ``show`` serves from the kernel stays alive between cells (the tests ask
it over HTTP, or open it in Chromium, and then ask the kernel again)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]

IFRAME = re.compile(r'<iframe[^>]*\bsrc="(http://127\.0\.0\.1:(\d+)/[^"]*)"')
"""The inline frame Dash's ``jupyter_mode="inline"`` writes into the output cell."""


class Kernel:
    """Cells run one by one in one kernel; :meth:`run` returns the cell with its outputs."""

    def __init__(self, client: NotebookClient):
        self.client = client

    def run(self, source: str) -> Any:
        cell = nbformat.v4.new_code_cell(source)
        self.client.nb.cells.append(cell)
        self.client.execute_cell(cell, len(self.client.nb.cells) - 1)
        return cell

    def json(self, expression: str) -> Any:
        """The value of ``expression`` (JSON-able) in the kernel."""
        cell = self.run(f"import json as _json\nprint(_json.dumps({expression}))")
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream"
                       and o.get("name") == "stdout")
        return json.loads(text.strip().splitlines()[-1])


def html_outputs(cell: Any) -> str:
    """Every ``text/html`` the cell displayed, joined."""
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs
                   if o.output_type in ("display_data", "execute_result"))


@contextmanager
def notebook_kernel(timeout: int = 180) -> Iterator[Kernel]:
    """An ipykernel (the ``python3`` kernel of this interpreter) running in the repository, shut
    down at the end of the block."""
    client = NotebookClient(nbformat.v4.new_notebook(), timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(REPO)}})
    with client.setup_kernel():
        yield Kernel(client)
