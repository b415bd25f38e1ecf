"""The package's folders point one way: no module imports a folder above its own.

Every `import rbdspy...` and `from rbdspy... import ...` in rbdspy/ (a function-local or a
TYPE_CHECKING one included) is read from the source, and each is checked against the layers
below: a module may import its own folder and the folders of lower layers, never one of its own
layer or above (docs/concepts/architecture.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rbdspy"

# Lowest first. A folder (or a module at the package root) may import only those of lower layers.
LAYERS: list[set[str]] = [
    {"core"},  # plans, the LM error policy, step roles, clipping: imports nothing of rbdspy
    {"types"},  # the data model
    {"render", "memory", "signatures", "envs", "options", "ray_support"},
    {"maps", "datasets", "lm", "tracking"},
    {"judge"},
    {"lessons"},
    {"loop", "agent"},
    {"scaling"},
    {"optimizers", "bench"},
    {"cli", "__init__"},  # the rbdspy command and the public names (rbdspy/__init__.py)
]
LAYER = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _unit(module: str) -> str:
    """The folder (or root module) a module of rbdspy belongs to: "rbdspy.loop.presets" -> "loop"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The rbdspy modules `path` imports (a name imported from a package counts as the package,
    unless it is a submodule)."""
    name = _module_name(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            submodules = {f"{source}.{alias.name}" for alias in node.names} & modules
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(source)
    return {m for m in found if m == "rbdspy" or m.startswith("rbdspy.")}


def folder_edges() -> dict[tuple[str, str], list[str]]:
    """(importer's unit, imported unit) -> the module imports that make the edge."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    edges: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        importer = _module_name(path)
        for imported in _imports(path, modules):
            pair = (_unit(importer), _unit(imported))
            if pair[0] != pair[1]:
                edges.setdefault(pair, []).append(f"{importer} -> {imported}")
    return edges


def test_every_folder_has_a_layer():
    units = {_unit(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert units <= set(LAYER), f"give these a layer in LAYERS: {sorted(units - set(LAYER))}"


def test_no_folder_imports_its_own_layer_or_above():
    upward = [
        f"{a} (layer {LAYER[a]}) imports {b} (layer {LAYER[b]}): {', '.join(sorted(why))}"
        for (a, b), why in sorted(folder_edges().items())
        if a in LAYER and b in LAYER and LAYER[b] >= LAYER[a]
    ]
    assert not upward, "\n".join(upward)


def test_the_adapters_know_neither_the_agent_nor_the_datasets():
    edges = folder_edges()
    for low, high in [("envs", "agent"), ("envs", "datasets"), ("envs", "bench"), ("maps", "agent")]:
        assert (low, high) not in edges, edges.get((low, high))


def module_edges() -> dict[str, set[str]]:
    """Each module of rbdspy -> the modules of rbdspy it imports (any import, anywhere in it)."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) - {_module_name(p)} for p in paths}


def import_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of imports (its modules in order, the first repeated at the end), or None."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return path[path.index(module) :] + [module]
        if module in done:
            return None
        for imported in sorted(edges.get(module, ())):
            if (cycle := visit(imported, [*path, module])) is not None:
                return cycle
        done.add(module)
        return None

    return next((c for m in sorted(edges) if (c := visit(m, [])) is not None), None)


def test_no_module_imports_itself_through_others():
    # A package's __init__ importing its modules, and a module importing the package for a name
    # it re-exports, would make a cycle too: every edge counts, a TYPE_CHECKING import included.
    assert import_cycle(module_edges()) is None, " -> ".join(import_cycle(module_edges()) or [])


def test_the_cycle_finder_finds_one():
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert import_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
