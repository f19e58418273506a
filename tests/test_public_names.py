"""The package's public names stay what ``__all__`` says they are, whatever has been imported.

Importing a submodule binds it as an attribute of its package, so a submodule named like a
public function would replace that function once anything imported the submodule (issue 24:
``costdash.threshold_choice`` became a module after ``costdash.brier_score`` was looked up).
Each check runs in a fresh interpreter: this process has imported half the package already.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest


def _run(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_threshold_choice_stays_callable_after_a_sibling_name_and_twice():
    out = _run("""
        import json
        import costdash
        costdash.brier_score                     # loads the module holding threshold_choice
        first = costdash.threshold_choice([0, 1, 0, 1], [.1, .6, .4, .9])
        second = costdash.threshold_choice([0, 1, 0, 1], [.1, .6, .4, .9])
        import costdash.choice_summary           # imports that module itself
        third = costdash.threshold_choice([0, 1, 0, 1], [.1, .6, .4, .9])
        print(json.dumps([t.brier_score for t in (first, second, third)]))
        """)
    # ((.1)^2 + (.4)^2 + (.4)^2 + (.1)^2) / 4: the scores against labels 0, 1, 0, 1
    assert out == [pytest.approx(0.085, abs=1e-15)] * 3


@pytest.mark.slow
def test_every_public_name_survives_importing_every_submodule():
    out = _run("""
        import importlib, inspect, json, pkgutil
        import costdash
        # __main__ runs the command line when imported; it defines no names.
        modules = [m.name for m in pkgutil.walk_packages(costdash.__path__, "costdash.")
                   if not m.name.endswith("__main__")]
        for name in modules:
            importlib.import_module(name)
        shadowed = [n for n in costdash.__all__ if inspect.ismodule(getattr(costdash, n))]
        tc = costdash.threshold_choice([0, 1, 0, 1], [.1, .6, .4, .9])
        print(json.dumps({"modules": modules, "shadowed": shadowed,
                          "brier": tc.brier_score}))
        """)
    assert "costdash.choice_curves" in out["modules"] and len(out["modules"]) > 30
    assert out["shadowed"] == []
    assert out["brier"] == pytest.approx(0.085, abs=1e-15)
