"""The package layers, read from the source with ``ast`` (nothing is imported).

The rule (docs/design.md, "Packages and layers"):

* ``reference`` imports nothing of ours (no ``proofs_checks``, ``empirical_dp``, ``dpref``);
* ``empirical_dp`` imports only ``reference``;
* ``proofs_checks`` imports ``reference``, and ``empirical_dp`` only inside the adapter that treats
  it as a subject (``proofs_checks/adapters/audit_bounds.py``);
* ``dpref`` is the command line only and may import all three;
* no import cycle between modules, counting function-level (lazy) imports as imports.

Every ``import`` / ``from ... import`` statement anywhere in a module counts (module level, inside
functions, under ``if TYPE_CHECKING``); relative imports are resolved against the module's package.
``from pkg import name`` counts as an import of ``pkg.name`` when that is a module, else of ``pkg``.
Importing a submodule also runs its parent packages' ``__init__``; that edge is not counted, since a
package ``__init__`` that re-exports its submodules would otherwise be a cycle by construction.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("reference", "proofs_checks", "empirical_dp", "dpref")

# Which of our top-level packages each package may import (itself always allowed).
ALLOWED = {
    "reference": set(),
    "empirical_dp": {"reference"},
    "proofs_checks": {"reference"},
    "dpref": {"reference", "empirical_dp", "proofs_checks"},
}
# Single modules granted one more package, with the reason.
EXCEPTIONS = {
    # The adapter that treats empirical_dp's bounds as a subject under test.
    "proofs_checks.adapters.audit_bounds": {"empirical_dp"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _discover() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            modules[_module_name(path)] = path
    return modules


MODULES = _discover()


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _resolve(module: str, level: int, target: str | None) -> str:
    """The absolute name of ``from <level dots><target> import ...`` written in ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".")
    if not _is_package(module):
        base = base[:-1]  # a plain module's package is its parent
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _ours(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def _known(name: str) -> str | None:
    """The deepest module of ours that ``name`` names (``a.b.c`` → ``a.b`` if ``c`` is an attribute)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def imports_of(module: str) -> dict[str, list[int]]:
    """Our modules imported anywhere in ``module`` → the line numbers of the imports."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"), filename=str(MODULES[module]))
    found: dict[str, list[int]] = {}

    def add(name: str, line: int) -> None:
        if _ours(name):
            target = _known(name) or name  # an unknown module of ours still breaks the layer rule
            if target != module:
                found.setdefault(target, []).append(line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node.level, node.module)
            for alias in node.names:
                full = f"{base}.{alias.name}" if alias.name != "*" else base
                add(full if full in MODULES else base, node.lineno)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def test_modules_found():
    for package in PACKAGES:
        assert package in MODULES, f"no package {package!r} under {ROOT}"
    assert len(MODULES) > 40


def test_relative_imports_resolve():
    # A relative import that names no module of ours is a typo the layer check would silently skip.
    for module, targets in GRAPH.items():
        for target in targets:
            assert _known(target), f"{module} imports {target}, which is no module of ours"


@pytest.mark.parametrize("package", PACKAGES)
def test_layer_rule(package):
    violations = []
    for module, targets in sorted(GRAPH.items()):
        if module.split(".")[0] != package:
            continue
        allowed = ALLOWED[package] | {package} | EXCEPTIONS.get(module, set())
        for target, lines in sorted(targets.items()):
            if target.split(".")[0] not in allowed:
                violations.append(f"{module} (line {', '.join(map(str, lines))}) imports {target}")
    assert not violations, f"{package} may import only {sorted(ALLOWED[package])}:\n" + "\n".join(violations)


def _is_parent_edge(module: str, target: str) -> bool:
    """``target`` is a package containing ``module``: importing it is implied by being imported."""
    return module.startswith(target + ".")


def import_edges(graph: dict[str, dict[str, list[int]]]) -> dict[str, list[str]]:
    return {m: sorted(t for t in ts if t in graph and not _is_parent_edge(m, t)) for m, ts in graph.items()}


def cycle_components(graph: dict[str, dict[str, list[int]]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    edges = import_edges(graph)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def strongconnect(root: str) -> None:
        # Iterative Tarjan (the graph is small, but recursion depth should not depend on it).
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            strongconnect(module)
    return sorted(components)


def find_cycles(graph: dict[str, dict[str, list[int]]]) -> list[list[str]]:
    """One concrete cycle (a path back to its start) through each strongly connected component."""
    edges = import_edges(graph)
    return [_cycle_path(component, edges) for component in cycle_components(graph)]


def _cycle_path(component: list[str], edges: dict[str, list[str]]) -> list[str]:
    """One concrete cycle through the component's first module (breadth-first, shortest)."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in edges[node]:
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start] + path[::-1][1:] + [start] if len(path) > 1 else [start, node, start]
                if child not in previous:
                    previous[child] = node
                    nxt.append(child)
        frontier = nxt
    return component


def test_cycle_finder_reports_cycles():
    graph = {"a": {"b": [1]}, "b": {"c": [1]}, "c": {"a": [1]}, "d": {"a": [1]}, "e": {}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert cycle_components(graph) == [["a", "b", "c"]]
    assert find_cycles({"p": {"p.q": [1]}, "p.q": {"p": [1]}}) == []  # a submodule importing its package
    assert find_cycles({"x": {"y": [1]}, "y": {}}) == []


def test_no_import_cycles():
    edges = import_edges(GRAPH)

    def describe(component: list[str]) -> str:
        members = set(component)
        lines = [f"cycle among {len(component)} modules: {', '.join(component)}", "  for instance:"]
        cycle = _cycle_path(component, edges)
        for here, there in zip(cycle, cycle[1:]):
            lines.append(f"    {here} (line {', '.join(map(str, sorted(set(GRAPH[here][there]))))}) -> {there}")
        lines.append("  all imports inside it:")
        for here in component:
            for there in edges[here]:
                if there in members:
                    lines.append(f"    {here} (line {', '.join(map(str, sorted(set(GRAPH[here][there]))))}) -> {there}")
        return "\n".join(lines)

    components = cycle_components(GRAPH)
    assert not components, "import cycles (function-level imports count):\n" + "\n\n".join(map(describe, components))


# --- claim modules -------------------------------------------------------------------------------------------
# A claim module (proofs_checks/claims/<folder>/<module>.py) uses the public claim-writing API only: from our
# packages it imports ``reference`` (test problems, ground truth), ``proofs_checks.authoring``, private helper
# modules of its own folder, and public names of ``proofs_checks.claims.foundations`` modules.

CLAIMS = "proofs_checks.claims"


def claim_module_violations(module: str, targets) -> list[str]:
    folder = module.split(".")[2] if module.count(".") >= 3 else None
    bad = []
    for target in targets:
        if target.split(".")[0] == "reference" or target == "proofs_checks.authoring":
            continue
        if target.startswith(f"{CLAIMS}.{folder}._") or target.startswith(f"{CLAIMS}.foundations.") and \
                not target.split(".")[-1].startswith("_"):
            continue
        if target.startswith(CLAIMS + ".") and target.count(".") == 2:  # a folder package itself
            continue
        bad.append(target)
    return bad


def test_claim_module_rule_detects_violations():
    assert claim_module_violations("proofs_checks.claims.dpzero.lemmas", ["proofs_checks.stats"]) == ["proofs_checks.stats"]
    assert claim_module_violations("proofs_checks.claims.dpzero.lemmas", ["proofs_checks.claims.zo_o2nc.smoothing"])
    assert claim_module_violations("proofs_checks.claims.dpzero.lemmas", ["proofs_checks.claims.zo_o2nc._helpers"])
    assert claim_module_violations("proofs_checks.claims.dpzero.lemmas", ["proofs_checks.claims.foundations._x"])
    assert not claim_module_violations("proofs_checks.claims.dpzero.lemmas", [
        "reference.objectives", "proofs_checks.authoring", "proofs_checks.claims.dpzero._c_stats",
        "proofs_checks.claims.foundations.accounting"])


def test_claim_modules_use_the_public_api_only():
    violations = []
    for module, targets in sorted(GRAPH.items()):
        if module.startswith(CLAIMS + ".") and module.count(".") >= 3:
            for target in claim_module_violations(module, targets):
                violations.append(f"{module} (line {', '.join(map(str, targets[target]))}) imports {target}")
    assert not violations, "claim modules may import only reference, proofs_checks.authoring, their folder's " \
                           "_helpers and public foundations modules:\n" + "\n".join(violations)
