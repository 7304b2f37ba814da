"""CLI subcommands beyond check/rules/explain/docs: every module here defining ``command`` is added
to the ``podfit`` group (see ``podfit.cli``)."""

from __future__ import annotations

import importlib
import pkgutil

import click


def discover() -> list[click.Command]:
    commands = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        cmd = getattr(module, "command", None)
        if isinstance(cmd, click.Command):
            commands.append(cmd)
    return commands
