"""The layers as a checked contract: every import of ``kubectl_dra/`` and ``webhook/`` (those
inside functions too, read from the source with :mod:`ast`) goes from a higher layer to a lower
one or stays in its layer, packages form no cycle, and click, flask and the kubernetes client
stay where they belong.

Layers, lowest first (docs/architecture.md describes them):

0. base: errors, types, limits, quantity, semver, gates, schema, convert, nameformats, lru, and the
   metadata file protocol (layout and decoding of the files, no cluster logic);
1. sources: ``state`` (files, dumps, a live cluster) gives plain API dicts;
2. model: ``model`` (typed views over those dicts);
3. core: cel, validation, allocation, explain, preview, fit, usage, metadata, and the new
   feature packages (scheduling, fleet, ...) unless listed otherwise;
4. presenters: ``cli`` and the ``webhook`` package (and the entry points).
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kubectl_dra", "webhook")

BASE, SOURCES, MODEL, CORE, PRESENTERS = range(5)
#: unit (see :func:`unit_of`) -> layer; a unit not named here is core
LAYERS: dict[str, int] = {
    "kubectl_dra": BASE,  # the package itself: its docstring and __version__
    "kubectl_dra.errors": BASE, "kubectl_dra.types": BASE, "kubectl_dra.limits": BASE,
    "kubectl_dra.quantity": BASE, "kubectl_dra.semver": BASE, "kubectl_dra.gates": BASE,
    "kubectl_dra.schema": BASE, "kubectl_dra.convert": BASE, "kubectl_dra.nameformats": BASE,
    "kubectl_dra.lru": BASE,
    "kubectl_dra.metadata.protocol": BASE,
    "kubectl_dra.state": SOURCES,
    "kubectl_dra.model": MODEL,
    "kubectl_dra.cli": PRESENTERS, "kubectl_dra.__main__": PRESENTERS, "kubectl_dra.demo": PRESENTERS,
    "webhook": PRESENTERS,
}
#: modules that are units of their own (the rest of their package is another unit)
OWN_UNITS = ("kubectl_dra.metadata.protocol",)

#: temporary allowances, each an import edge between units that is known to be wrong, with who
#: removes it (none today: explain -> preview was the last, gone with explain/plan.py's preview
#: import). An allowance that no longer matches an import fails, so that it is removed then.
ALLOWED: dict[tuple[str, str], str] = {}

#: third-party packages only some units may import (top-level module -> units allowed)
RESTRICTED = {
    "click": ("kubectl_dra.cli", "webhook"),
    "flask": ("webhook",),
    "granian": ("webhook",),
    "prometheus_client": ("webhook",),
    # the kubernetes client: the live source and the webhook (certificates, namespaces)
    "kubernetes": ("kubectl_dra.state.live", "webhook"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    """The unit a module belongs to: its own for :data:`OWN_UNITS`, else its top-level module or
    subpackage of kubectl_dra (``kubectl_dra.allocation.search`` -> ``kubectl_dra.allocation``)."""
    for own in OWN_UNITS:
        if module == own or module.startswith(own + "."):
            return own
    parts = module.split(".")
    if parts[0] == "webhook":
        return "webhook"
    return ".".join(parts[:2])


@functools.cache
def _resolve(target: str) -> str | None:
    """The project module an import names (``pkg.mod.name`` -> ``pkg.mod``), or None."""
    parts = target.split(".")
    if parts[0] not in PACKAGES:
        return None
    while parts:
        path = ROOT.joinpath(*parts)
        if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
            return ".".join(parts)
        parts.pop()
    return None


@functools.cache
def imports() -> tuple[tuple[str, str, str, int], ...]:
    """(module, imported top-level or project module, file, line) for every import statement."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = module_name(path)
            is_package = path.name == "__init__.py"
            where = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=where)):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = module.split(".") if is_package else module.split(".")[:-1]
                        base = base[:len(base) - (node.level - 1)]
                        stem = ".".join(base + ([node.module] if node.module else []))
                    else:
                        stem = node.module or ""
                    names = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
                else:
                    continue
                for name in names:
                    project = _resolve(name)
                    found.append((module, project or name.split(".")[0], where, node.lineno))
    return tuple(found)


@functools.cache
def unit_edges() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> where, for imports between two project units."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, target, where, line in imports():
        if target.split(".")[0] not in PACKAGES:
            continue
        a, b = unit_of(module), unit_of(target)
        if a != b:
            edges[(a, b)].append(f"{where}:{line}")
    return edges


def test_imports_go_down_the_layers() -> None:
    wrong = [f"{a} (layer {LAYERS.get(a, CORE)}) imports {b} (layer {LAYERS.get(b, CORE)}) at {', '.join(w)}"
             for (a, b), w in sorted(unit_edges().items())
             if LAYERS.get(a, CORE) < LAYERS.get(b, CORE) and (a, b) not in ALLOWED]
    assert not wrong, "\n".join(wrong)


def test_no_cycles_between_packages() -> None:
    edges = [edge for edge in unit_edges() if edge not in ALLOWED]
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    cycles = []
    for a, b in edges:  # a cycle through a -> b is a path back from b to a
        seen, stack = {b}, [[b]]
        while stack:
            path = stack.pop()
            if path[-1] == a:
                cycles.append(" -> ".join([a, *path]))
                break
            for nxt in sorted(graph[path[-1]] - seen):
                seen.add(nxt)
                stack.append([*path, nxt])
    assert not cycles, "\n".join(sorted(set(cycles)))


def test_allowances_still_match_an_import() -> None:
    stale = [f"{a} -> {b}" for a, b in ALLOWED if (a, b) not in unit_edges()]
    assert not stale, f"remove these allowances, the import is gone: {stale}"


def test_click_flask_and_the_kubernetes_client_stay_where_they_belong() -> None:
    wrong = []
    for module, target, where, line in imports():
        allowed = RESTRICTED.get(target)
        if allowed is not None and not any(module == u or module.startswith(u + ".") for u in allowed):
            wrong.append(f"{where}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_reader_sees_imports_inside_functions() -> None:
    """The check reads every import, not only the module's top: cel/formats.py imported
    validation inside functions, which a top-level scan would have missed."""
    found = {(module, target) for module, target, _, _ in imports()}
    assert ("kubectl_dra.cli.main", "click") in found
    assert any(module == "kubectl_dra.usage" and target.startswith("kubectl_dra.cel") for module, target in found)
