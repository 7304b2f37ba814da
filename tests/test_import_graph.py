"""Data flows one way (docs/architecture.md): load → model → facts → rules → report → formats,
with the command line on top. No module below the command line imports it: nothing outside
``cli.py``, ``commands/`` and ``__main__.py`` imports ``podfit.cli`` or ``podfit.commands``,
whether at the top of a module or inside a function; no stage imports a later one; and no module
imports itself through others (an import cycle), counting imports inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "analyzer" / "podfit"
COMMAND_LINE = ("podfit.cli", "podfit.commands", "podfit.__main__")


# The stages, first to last: a module may import its own stage's and earlier stages' modules.
STAGES = [
    {
        "__init__",
        "paths",
        "cachedir",
        "children",
        "codecache",
        "quantity",
        "options",
        "yamlio",
        "scheduling",
        "model",
        "findings",
        "words",
    }
    | {"kubeversions", "kubelet_options", "cloud"},
    {
        "reading",
        "selection",
        "schema_errors",
        "loader",
        "templates",
        "kustomize",
        "clusters",
        "platform",
        "schemas_k8s",
        "engines",
    }
    | {"usage", "render"},
    {"workloads", "facts", "platform_import"},
    {"packing", "throttle", "vsphere"},  # the analyzer cores, over facts
    {"registry", "catalogue", "config", "rule_context", "rules"},
    {"check", "pipeline", "baseline"},
    {"docs", "formats", "fix", "visuals", "usage_export", "admission"},
    {"commands", "cli", "__main__"},
]


def stage(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    return next(n for n, names in enumerate(STAGES) if top in names)


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = ["podfit", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, root: Path = PACKAGE, packages: bool = True) -> set[str]:
    """Every podfit module ``path`` imports (``from X import name`` counts X and X.name, since
    the name may be a submodule; without ``packages``, X.name alone, or X for ``import *``)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if packages or any(alias.name == "*" for alias in node.names):
                found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names if alias.name != "*")
    return {m for m in found if m == "podfit" or m.startswith("podfit.")}


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the modules of the package it imports, by any import statement anywhere in it (at
    the top, inside a function, under ``if TYPE_CHECKING``). An imported name resolves to the
    longest module its dotted name starts with (``podfit.engines.base.EngineError`` →
    ``podfit.engines.base``; ``from . import __version__`` → ``podfit``), so ``from . import exact``
    in ``podfit.packing.engine`` imports ``podfit.packing.exact``, not the package that holds it
    (whose ``__init__`` Python runs first for any of its modules, as it does for ``import
    podfit.packing.exact``)."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets = set()
        for m in imported(path, root, packages=False):
            parts = m.split(".")
            target = next((".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in paths), None)
            if target is not None and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, …, a]``) through each group of modules that import one another, directly
    or through others (a strongly connected component of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    found = []
    for group in groups:
        start = min(group)
        paths = {start: [start]}
        queue = [start]
        while queue:  # the shortest way from start back to itself, within the group
            v = queue.pop(0)
            for w in sorted(graph[v] & group):
                if w == start:
                    queue = []
                    found.append(paths[v] + [start])
                    break
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    queue.append(w)
    return sorted(found)


def is_command_line(module: str) -> bool:
    return any(module == c or module.startswith(c + ".") for c in COMMAND_LINE)


def test_the_resolver_sees_relative_and_nested_imports(tmp_path):
    pkg = tmp_path / "podfit"
    (pkg / "packing").mkdir(parents=True)
    source = "from . import model\n\ndef f():\n    from ..commands.pack import command\n    import podfit.cli\n"
    (pkg / "packing" / "rules_support.py").write_text(source)
    found = imported(pkg / "packing" / "rules_support.py", pkg)
    assert {"podfit.packing.model", "podfit.commands.pack", "podfit.cli"} <= found
    assert [m for m in found if is_command_line(m)]


def test_the_cycle_finder_sees_deferred_imports(tmp_path):
    pkg = tmp_path / "podfit"
    (pkg / "engines").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "catalogue.py").write_text("from .rules import declarations\n")
    (pkg / "rules.py").write_text("from .config import Config\n")
    (pkg / "config.py").write_text("def resolve():\n    from .catalogue import get_rule\n")
    (pkg / "engines" / "__init__.py").write_text("def get():\n    from .opa import Engine\n")
    (pkg / "engines" / "opa.py").write_text("from . import EngineError\n")
    (pkg / "engines" / "base.py").write_text("class EngineError(Exception):\n    pass\n")
    graph = import_graph(pkg)
    assert graph["podfit.config"] == {"podfit.catalogue"}
    assert graph["podfit.engines.opa"] == {"podfit.engines"}
    assert cycles(graph) == [
        ["podfit.catalogue", "podfit.rules", "podfit.config", "podfit.catalogue"],
        ["podfit.engines", "podfit.engines.opa", "podfit.engines"],
    ]
    (pkg / "config.py").write_text("def resolve():\n    pass\n")
    (pkg / "engines" / "opa.py").write_text("from .base import EngineError\n")
    assert cycles(import_graph(pkg)) == []


def test_no_import_cycle():
    """No module imports itself through others, at the top of a module or inside a function."""
    graph = import_graph()
    assert len(graph) > 30
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" → ".join(c) for c in found)


def test_no_core_module_imports_the_command_line():
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 30
    wrong = []
    for path in modules:
        if is_command_line(module_name(path)):
            continue
        wrong += [f"{module_name(path)} imports {m}" for m in sorted(imported(path)) if is_command_line(m)]
    assert not wrong, "\n".join(wrong)


def test_no_stage_imports_a_later_one():
    """Each top-level module or package has a stage (STAGES; a new one must be given its place),
    and imports only from its own stage and earlier ones."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        for m in sorted(imported(path)):
            if m.split(".")[1:2] == ["__version__"]:
                continue  # `from . import __version__`: a name of the package, not a module
            if stage(m) > stage(name):
                wrong.append(f"{name} (stage {stage(name)}) imports {m} (stage {stage(m)})")
    assert not wrong, "\n".join(wrong)
