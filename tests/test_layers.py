"""The import rules of the code's layers (README, "Layout of the code"), read from the source
with :mod:`ast`, so they hold without importing anything:

* the core (``costdash/``) never imports the web package (``dashboard``); the dashboard's
  ``costdash report`` reaches the command line through the ``costdash.commands`` entry points;
* the modules of ``dashboard/`` import each other without a cycle, counting the imports inside
  functions too (a lazy import only hides a loop until someone calls it); imports under
  ``if TYPE_CHECKING:`` never run and are not counted;
* the modules of ``dashboard/`` import only modules of their own row of the README's table
  ("Layout of the code") or of the rows above it (:data:`DASHBOARD_LAYERS`);
* each subpackage of ``dashboard/`` (:data:`DASHBOARD_PACKAGES`: ``storage/``, ``jobs/``,
  ``report/``, ``api/``) imports, outside itself, only the dashboard modules it names: the store
  none, the report no page, store or API, the API no page;
* no page imports another page;
* the core's modules import each other without a cycle;
* a core subpackage (:data:`CORE_PACKAGES`: ``costdash/bands/``, ``costdash/io/``,
  ``costdash/multiclass/``) is its ``__init__.py``, the face that holds or re-exports its public
  names, over private parts: no part imports its face, and outside the package only the modules
  :data:`CORE_PACKAGES` names reach past the face into a part;
* a dashboard subpackage's ``__init__.py`` is its face too (the module the package replaced, at
  the same import path: ``dashboard.storage``, ``dashboard.jobs``, ``dashboard.report``,
  ``dashboard.api``), and no part imports it (Python runs the face before any part, so a part
  importing it is a cycle the graph does not show). Its parts are the dashboard's own: any module
  the layers allow may import them.
"""

from __future__ import annotations

import ast
from collections.abc import Container
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(package: str) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def imported_names(path: Path, modules: Container[str] = ()) -> set[str]:
    """Every absolute module name an import statement of the file names, at any depth but under
    ``if TYPE_CHECKING:``. ``from a.b import c`` names ``a.b.c`` when that is one of
    ``modules``, else ``a.b``."""
    names: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"), str(path))]
    while todo:
        node = todo.pop()
        if _type_checking(node):
            todo.extend(node.orelse)  # type: ignore[attr-defined]
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                names.add(full if full in modules else node.module)
        todo.extend(ast.iter_child_nodes(node))
    return names


def import_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports. ``from pkg import mod`` counts as
    an import of ``pkg.mod`` only, and a module's own parent packages are left out: Python runs
    them before the module whatever it imports."""
    modules = _modules(package)
    return {name: {m for m in imported_names(path, modules)
                   if m in modules and m != name and not name.startswith(m + ".")}
            for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


DASHBOARD_LAYERS = (
    ("dashboard.figures",),
    ("dashboard.config", "dashboard.storage", "dashboard.jobs", "dashboard.viewmodel",
     "dashboard.results"),
    ("dashboard.sharing", "dashboard.services"),
    ("dashboard.pages", "dashboard.explore_layout", "dashboard.shell", "dashboard.page_kit",
     "dashboard.band_kit", "dashboard.viewstate", "dashboard.ids", "dashboard.api",
     "dashboard.uploads", "dashboard.limits",
     # the compute gate sits with the jobs it shares slots with, but reads the Services
     "dashboard.jobs.gate",
     "dashboard.responses", "dashboard.report", "dashboard.commands", "dashboard.link_preview",
     "dashboard.accounts", "dashboard.my_analyses"),
    # dashboard.notebook (costdash.show) builds an app with create_app, as the worker does.
    ("dashboard.factory", "dashboard.worker", "dashboard.notebook"),
    ("dashboard",),
)
"""The rows of the README's table, top (imported by all below) to bottom; a module belongs to
the row naming it or the package holding it (the longest name that holds it)."""


def layer_of(module: str) -> int | None:
    best = None
    for rank, row in enumerate(DASHBOARD_LAYERS):
        for name in row:
            if module == name or module.startswith(name + "."):
                if best is None or len(name) > best[1]:
                    best = (rank, len(name))
    return None if best is None else best[0]


CORE_PACKAGES = {
    "costdash.bands": (),
    # the other readers of tables share the predictions file's reading, layouts and messages
    "costdash.io": ("costdash.aggregation", "costdash.one_vs_rest", "costdash.production_io",
                    "costdash.multiclass.readers", "dashboard.storage.production"),
    "costdash.multiclass": (),
}
"""Each core subpackage of the README's ``costdash/`` row -> the modules outside it that may
import its parts (everything else imports the package itself: ``costdash.bands.cost_band``)."""


DASHBOARD_PACKAGES = {
    "dashboard.storage": (),
    "dashboard.jobs": ("dashboard.config", "dashboard.storage", "dashboard.services"),
    "dashboard.report": ("dashboard.figures", "dashboard.viewmodel"),
    # every row above but no page-side module (pages, their kits, ids, the view's web side);
    # manage.py reads shell.SHARED_PAGES: the pages a read-only link opens
    "dashboard.api": ("dashboard.config", "dashboard.storage", "dashboard.jobs",
                      "dashboard.viewmodel", "dashboard.results", "dashboard.services",
                      "dashboard.sharing", "dashboard.report", "dashboard.responses",
                      "dashboard.uploads", "dashboard.limits", "dashboard.shell"),
}
"""Each subpackage of ``dashboard/`` (its layer's row of the README's table) -> the dashboard
modules and packages outside it that it may import."""


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_core_has_no_import_cycle():
    assert cycles(import_graph("costdash")) == []


def test_core_subpackages_are_the_ones_listed():
    packages = sorted(_module_name(p.parent) for p in (ROOT / "costdash").glob("*/__init__.py"))
    assert [p for p in packages if p != "costdash.cli"] == sorted(CORE_PACKAGES)


def test_dashboard_subpackages_are_the_ones_listed():
    packages = sorted(_module_name(p.parent) for p in (ROOT / "dashboard").glob("*/__init__.py"))
    assert [p for p in packages if p not in ("dashboard.figures", "dashboard.pages")] == \
        sorted(DASHBOARD_PACKAGES)


def test_no_part_of_a_package_imports_its_face():
    offenders = sorted(f"{name} -> {package}"
                       for package in (*CORE_PACKAGES, *DASHBOARD_PACKAGES)
                       for name, path in _modules(package.replace(".", "/")).items()
                       if name != package and package in imported_names(path))
    assert offenders == []


def test_only_the_listed_modules_import_a_core_packages_parts():
    modules = {**_modules("costdash"), **_modules("dashboard")}
    reach = sorted(f"{name} -> {imported}"
                   for name, path in modules.items()
                   for imported in imported_names(path, modules)
                   for package, allowed in CORE_PACKAGES.items()
                   if imported.startswith(package + ".") and not name.startswith(package + ".")
                   and name != package and name not in allowed)
    assert reach == [], "import the package's face, or name the module in CORE_PACKAGES"


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_core_never_imports_the_dashboard():
    offenders = {name: sorted(m for m in imported_names(path)
                              if m == "dashboard" or m.startswith("dashboard."))
                 for name, path in _modules("costdash").items()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_dashboard_has_no_import_cycle():
    assert cycles(import_graph("dashboard")) == []


def test_dashboard_imports_follow_the_layers():
    graph = import_graph("dashboard")
    unplaced = sorted(m for m in graph if layer_of(m) is None)
    assert unplaced == [], "add these modules to a row of DASHBOARD_LAYERS and of the README"
    upward = sorted(f"{m} -> {n}" for m, deps in graph.items() for n in deps
                    if layer_of(n) > layer_of(m))
    assert upward == []


def test_no_page_imports_another_page():
    graph = import_graph("dashboard")
    pages = {m for m in graph if m.startswith("dashboard.pages.")}
    assert {m: sorted(graph[m] & pages) for m in pages if graph[m] & pages} == {}


def package_reach(graph: dict[str, set[str]]) -> list[str]:
    """``module -> import`` for every import of a :data:`DASHBOARD_PACKAGES` module that leaves
    its package for a dashboard module the package does not name."""
    return sorted(f"{name} -> {imported}"
                  for package, allowed in DASHBOARD_PACKAGES.items()
                  for name, deps in graph.items() if _inside(name, package)
                  for imported in deps
                  if not _inside(imported, package)
                  and not any(_inside(imported, a) for a in allowed))


def test_dashboard_packages_import_only_what_they_may():
    assert package_reach(import_graph("dashboard")) == [], \
        "name the import in DASHBOARD_PACKAGES (and the README), or move the module"


def test_the_package_rules_see_a_forbidden_import():
    """On a made-up graph the rule objects: the store reaching a page, the report the API."""
    graph = {"dashboard.storage.sql": {"dashboard.pages.explore", "dashboard.storage.records"},
             "dashboard.report.format": {"dashboard.api", "dashboard.figures.roc"},
             "dashboard.shell": {"dashboard.pages"}}
    assert package_reach(graph) == ["dashboard.report.format -> dashboard.api",
                                     "dashboard.storage.sql -> dashboard.pages.explore"]
