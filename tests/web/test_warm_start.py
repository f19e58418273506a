"""A worker finishes its one-time setup before it serves (dashboard.factory.finish_setup)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.processes import REPO


@pytest.mark.slow
def test_pandas_is_fully_imported_before_the_first_request(tmp_path):
    # A fresh interpreter, as a gunicorn worker is: plotly's validators read sys.modules
    # directly, so a pandas that some later request imports can be seen half-initialized.
    probe = ("import sys, app\n"
             "from dashboard.factory import finish_setup\n"
             "finish_setup(app.server)\n"
             "pandas = sys.modules.get('pandas')\n"
             "print(pandas is not None and hasattr(pandas, 'Series'))\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                         text=True, timeout=120, env={"COSTDASH_DATA_DIR": str(tmp_path),
                                                      "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip().splitlines()[-1:] == ["True"], out.stderr[-2000:]
