"""PF910: the same object (API group, kind, namespace, name) twice in one cluster.

Applied together, the second object silently replaces the first. Most often the files are
alternative manifests of one application (one per cloud provider, one per environment) that never
deploy to the same cluster; sometimes it is a real clash. Either way the rules over several objects
(packing, PF303, PF5xx, PF701) count the object once: the first in input order, from
``Facts.clusters`` (see :mod:`podfit.facts`). The finding points at the second object and names
the first's file and line.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from . import RuleContext

ID = "PF910"
SLUG = "duplicate-object"
TITLE = "Same object twice in one cluster"
SEVERITY = "info"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()


_FROM = {
    "option": "--cluster",
    "config": "the config's clusters: mapping",
    "platform": "the platform",
    "manifest": "its cluster manifest",
    "input": "nothing names a cluster",
}


def check(ctx: RuleContext) -> Iterator[Finding]:
    """One finding per pair of files: alternative manifests repeat many objects (a controller's
    manifests per cloud provider), and one line that says so is worth more than one per object.
    A single repeated object keeps its own line; more point at the first repeated object."""
    for scope in ctx.facts.clusters:
        if scope.source == "input" and scope.duplicates:
            yield _unnamed_cluster(scope)
            continue
        where = (
            scope.label.removesuffix(")") + f": {_FROM[scope.source]})"
            if not scope.name
            else (f"{scope.label} (from {_FROM[scope.source]})")
        )
        pairs: dict[tuple[str, str], list] = {}
        for first, second in scope.duplicates:
            pairs.setdefault((second.location.file, first.location.file), []).append((first, second))
        for (_, first_file), dups in pairs.items():
            first, second = min(dups, key=lambda d: d[1].location)
            if len(dups) == 1:
                what = f"already declared at {first.location.file}:{first.location.line} (same API group, kind, namespace and name)"
            else:
                names = ", ".join(f"{s.ref.kind} {s.ref.name}" for _, s in dups[:3]) + (", …" if len(dups) > 3 else "")
                what = f"{len(dups)} objects of this file are already declared in {first_file} ({names})"
            yield Finding(
                ID,
                f"{what}, in {where}: applied together, these replace them. Alternative manifests or a real "
                "clash: counted once. If they deploy to different clusters, map their paths to clusters in the "
                "config (clusters: {glob: name})",
                second.location,
                second.ref,
                details={
                    "cluster": scope.name,
                    "cluster_source": scope.source,
                    "count": len(dups),
                    "objects": [str(s.ref) for _, s in dups],
                    "first": {
                        "file": first.location.file,
                        "line": first.location.line,
                        "api_version": first.ref.api_version,
                    },
                },
            )


def _unnamed_cluster(scope) -> Finding:
    """One finding for a run in which nothing names a cluster: repositories hold alternative
    manifests (providers, install flavours, generated bundles beside their sources) far more often
    than clashes, and one line per file would bury the run's other findings."""
    first, second = min(scope.duplicates, key=lambda d: d[1].location)
    files = sorted({s.location.file for _, s in scope.duplicates} | {f.location.file for f, _ in scope.duplicates})
    example = f"{second.ref.kind} {second.ref.name} in {first.location.file} and {second.location.file}"
    return Finding(
        ID,
        f"{len(scope.duplicates)} objects are declared more than once across {len(files)} files (e.g. {example}); "
        "nothing names a cluster, so each counts once. If the files are alternatives for different clusters, "
        "map their paths to clusters in the config (clusters: {glob: name})",
        second.location,
        second.ref,
        details={
            "cluster": scope.name,
            "cluster_source": scope.source,
            "count": len(scope.duplicates),
            "files": files,
            "first": {"file": first.location.file, "line": first.location.line, "api_version": first.ref.api_version},
        },
    )
