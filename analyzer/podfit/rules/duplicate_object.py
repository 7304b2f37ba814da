"""## What it does
The same object (API group, kind, namespace, name) twice in one cluster; the second replaces the
first when applied, so it is counted once.

## Why it matters
kubectl apply of both files leaves one object, the last applied, so capacity sums that count both
are wrong (packing, CRX reservations, load balancer virtual servers), and the cluster runs whichever
copy came last. Repositories often hold alternative manifests of one controller, one per cloud
provider or environment, that never deploy together; podfit cannot tell them from a real clash
unless it is told which files go to which cluster. Until it is (nothing names a cluster, or only the
platform profile does), one finding sums up the cluster's repeated objects; where the files are
mapped to a cluster (--cluster, the config's clusters:, a cluster manifest beside them), each file
that repeats another's objects gets its own.

## Example
```yaml
# provider/aws/deploy.yaml and provider/baremetal/deploy.yaml, one cluster
kind: Deployment
metadata: {name: ingress-nginx-controller, namespace: ingress-nginx}
```

## How to fix
If the files deploy to different clusters, say so in the config (clusters: {"deploy/aws/**": aws,
"deploy/baremetal/**": metal}) or check them in separate runs (--cluster NAME). If they deploy to
the same cluster, rename one or remove the copy.

## Source
Kubernetes object identity (group, kind, namespace, name); kubectl apply

## Implementation
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
from ..rule_context import RuleContext

ID = "PF910"
SLUG = "duplicate-object"
TITLE = "Same object twice in one cluster"
SEVERITY = "info"
CATEGORY = "input"
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
    """Where files were mapped to the cluster, one finding per pair of files: alternative manifests
    repeat many objects (a controller's manifests per cloud provider), and one line that says so is
    worth more than one per object. A single repeated object keeps its own line; more point at the
    first repeated object. Where the cluster was assumed (``_ASSUMED``), one finding for it."""
    for scope in ctx.facts.clusters:
        if scope.source in _ASSUMED and scope.duplicates:
            yield _summary(scope)
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


# Where the run's objects go to one cluster only because nothing says otherwise (no cluster named,
# or the platform profile's own): repositories hold alternative manifests (providers, install
# flavours, generated bundles beside their sources) far more often than clashes, so these get one
# finding for the cluster; one line per file would bury the run's other findings.
_ASSUMED = frozenset({"input", "platform"})


def _summary(scope) -> Finding:
    """One finding for a cluster whose objects were put together by default: the objects declared
    more than once, their declarations and files, and an example."""
    first, second = min(scope.duplicates, key=lambda d: d[1].location)
    files = sorted({s.location.file for _, s in scope.duplicates} | {f.location.file for f, _ in scope.duplicates})
    repeated = len({id(f) for f, _ in scope.duplicates})
    declarations = repeated + len(scope.duplicates)
    example = f"{second.ref.kind} {second.ref.name} in {first.location.file} and {second.location.file}"
    objects = "1 object is" if repeated == 1 else f"{repeated} objects are"
    why = (
        "nothing names a cluster"
        if scope.source == "input"
        else f"the files are taken to deploy to the platform's cluster {scope.name}".rstrip()
    )
    return Finding(
        ID,
        f"{objects} declared more than once ({declarations} declarations across {len(files)} files, e.g. {example}); "
        f"{why}, so each counts once. If the files are alternatives for different clusters, "
        "map their paths to clusters in the config (clusters: {glob: name})",
        second.location,
        second.ref,
        details={
            "cluster": scope.name,
            "cluster_source": scope.source,
            "count": len(scope.duplicates),
            "objects": repeated,
            "files": files,
            "first": {"file": first.location.file, "line": first.location.line, "api_version": first.ref.api_version},
        },
    )
