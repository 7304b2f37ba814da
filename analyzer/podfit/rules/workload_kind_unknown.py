"""## What it does
An object of a kind podfit does not know as a workload holds a list of containers under its
`spec` (a workload CRD: an operator's own Deployment-like kind, a job framework's, a serverless
platform's).

## Why it matters
podfit checks the pods of the built-in workload kinds and of the workload CRDs it knows (Argo
Rollout, Knative Service and Configuration, OpenKruise CloneSet, Advanced StatefulSet and
Advanced DaemonSet, KEDA ScaledJob, OpenShift DeploymentConfig). The containers of any other kind
are not checked at all: no request, QoS or packing rule sees them, so "no findings" would mean
"not looked at". This note says so, once per object, naming where the containers stand.

## Example
```yaml
apiVersion: example.com/v1
kind: WebApp
spec:
  template:
    spec:
      containers:
        - {name: app, image: app:1}
```

## How to fix
Nothing to fix in the manifest. Where the kind holds a pod template, tell podfit where it stands
in `.podfit.yaml` (`workload-kinds: {"example.com/WebApp": {template: spec.template, replicas:
spec.replicas}}`): its pods are then checked like a Deployment's. Otherwise render the pods its
controller creates and check those.

## Source
Kubernetes CustomResourceDefinitions: a custom resource's schema is its own, so where (and whether)
it holds a pod template is known only per kind.

## Implementation
Looks for the first `containers` list holding a mapping under `spec` (breadth first, at most 8
levels deep) of every object whose kind is neither a built-in workload kind, nor in
:data:`podfit.model.CUSTOM_WORKLOAD_KINDS`, nor in the config's `workload-kinds:`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..findings import Finding
from ..model import template_path
from ..options import Option
from ..rule_context import RuleContext

ID = "PF912"
SLUG = "workload-kind-unknown"
TITLE = "Containers in an object of an unknown kind"
SEVERITY = "info"
CATEGORY = "input"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()

_MAX_DEPTH = 8


def containers_path(spec: Any) -> tuple[str | int, ...] | None:
    """Path (from ``spec``) to the first ``containers`` list holding a mapping, breadth first,
    at most ``_MAX_DEPTH`` levels down; None when there is none."""
    level: list[tuple[tuple[str | int, ...], Any]] = [((), spec)]
    for _ in range(_MAX_DEPTH):
        deeper: list[tuple[tuple[str | int, ...], Any]] = []
        for path, node in level:
            if isinstance(node, dict):
                found = node.get("containers")
                if isinstance(found, list) and any(isinstance(c, dict) for c in found):
                    return path + ("containers",)
                deeper.extend((path + (k,), v) for k, v in node.items() if isinstance(v, (dict, list)))
            elif isinstance(node, list):
                deeper.extend((path + (i,), v) for i, v in enumerate(node) if isinstance(v, (dict, list)))
        level = deeper
    return None


def check(ctx: RuleContext) -> Iterator[Finding]:
    for obj in ctx.facts.unique_objects:
        if template_path(obj.ref.api_version, obj.kind, ctx.facts.workload_kinds) is not None:
            continue
        found = containers_path(obj.raw.get("spec"))
        if found is None:
            continue
        path = ("spec",) + found
        where = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in path).replace(".[", "[")
        yield Finding(
            ID,
            f"containers at {where} of a kind podfit does not know as a workload ({obj.ref.api_version} "
            f"{obj.kind}): their requests, QoS class and placement are not checked (declare it under "
            f"workload-kinds in .podfit.yaml)",
            obj.location_at(path),
            obj.ref,
            details={"apiVersion": obj.ref.api_version, "kind": obj.kind, "path": where},
        )
