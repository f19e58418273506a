"""Rules of the test suite itself (docs/development.md), read from the source with :mod:`ast`.

The fast tier (``scripts/test.sh fast``) does not even collect the end-to-end modules
(``test_e2e_*.py``) and deselects the other browser tests by marker, so every other module must
collect without the browser tools: it imports Playwright or Selenium only inside the tests that
use them, unless all its tests are marked ``browser``.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
BROWSER_TOOLS = ("playwright", "selenium")


def _top_level_imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def _marked_browser_as_a_whole(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return "browser" in ast.unparse(node.value)
    return False


def test_only_whole_browser_modules_import_browser_tools_at_collection():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        tools = {name for name in _top_level_imports(tree)
                 if name.split(".")[0] in BROWSER_TOOLS}
        end_to_end = path.name.startswith("test_e2e_")
        if tools and not end_to_end and not _marked_browser_as_a_whole(tree):
            offenders.append(f"{path.relative_to(TESTS)}: {sorted(tools)}")
    assert offenders == [], offenders


def test_the_rule_sees_a_module_level_import():
    tree = ast.parse("import pytest\nfrom playwright.sync_api import Page\n")
    assert "playwright.sync_api" in _top_level_imports(tree)
    assert not _marked_browser_as_a_whole(tree)
    marked = ast.parse("import pytest\npytestmark = [pytest.mark.browser, pytest.mark.slow]\n")
    assert _marked_browser_as_a_whole(marked)
