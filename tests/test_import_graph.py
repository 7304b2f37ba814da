"""Data flows one way (docs/architecture.md): load → model → facts → rules → report → formats,
with the command line on top. No module below the command line imports it: nothing outside
``cli.py``, ``commands/``, ``__main__.py`` and the launcher and server imports ``podfit.cli`` or ``podfit.commands``,
whether at the top of a module or inside a function; and no stage imports a later one."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "analyzer" / "podfit"
COMMAND_LINE = ("podfit.cli", "podfit.commands", "podfit.__main__", "podfit.launcher", "podfit.server")


# The stages, first to last: a module may import its own stage's and earlier stages' modules.
STAGES = [
    {"__init__", "paths", "quantity", "options", "yamlio", "scheduling", "model", "findings"},
    {"reading", "schema_errors", "loader", "kustomize", "clusters", "platform", "schemas_k8s", "engines", "usage"}
    | {"platform_import"},
    {"facts"},
    {"packing", "throttle", "vsphere"},  # the analyzer cores, over facts
    {"catalogue", "rules", "config"},
    {"check", "pipeline"},
    {"docs", "formats", "fix", "visuals", "usage_export"},
    {"commands", "cli", "__main__", "launcher", "server"},
]


def stage(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    return next(n for n, names in enumerate(STAGES) if top in names)


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = ["podfit", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, root: Path = PACKAGE) -> set[str]:
    """Every podfit module ``path`` imports (``from X import name`` counts X and X.name, since
    the name may be a submodule)."""
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
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {m for m in found if m == "podfit" or m.startswith("podfit.")}


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
