"""## What it does
An object fails its Kubernetes or CRD schema, or a KubeletConfiguration the kubelet's own type
(validated offline).

## Why it matters
The API server would reject the object, or silently drop misspelt fields such as "request:" for
"requests:".

## Example
```yaml
resources: {request: {cpu: 1}}
```

## How to fix
Correct the field named in the message. A file that holds a patch rather than an object (a `kubectl
patch` body) is not a manifest; list it under `ignore:` in .podfit.yaml.

## Source
Kubernetes OpenAPI schemas

## Implementation
Schemas: Kubernetes' of the releases podfit targets (schemas/kubernetes/, from kubernetes-validate), podfit's own under ``schemas/crds/`` (the
Tanzu kinds, and the kubelet's KubeletConfiguration from its Go type: ``make kubelet-schema``) and
``schemas/platform.schema.json``, validated by jsonschema-rs; for Kubernetes kinds also the API
server's rules that their schemas do not state (negative replicas, parallelism, completions; a
topology spread's maxSkew or minDomains below 1; a HorizontalPodAutoscaler's maxReplicas below 1
or below its minReplicas; a port number outside 1-65535; a ResourceQuota limit that is not a
quantity or negative; counts beyond int32). See
:mod:`podfit.schemas_k8s`. Kinds without a schema are not validated, nor objects whose apiVersion
Kubernetes no longer serves (PF906 reports those). Required properties missing at one place are one
finding that names them all (a patch body or fragment misses several at once). A field given as null
is unset, as the API server decodes it: an optional one passes, a required one is missing, an unknown
one is still unknown.

Thresholds (``.podfit.yaml``)::

    thresholds:
      PF902: {kubernetes-version: "1.30", strict: true}

``kubernetes-version`` defaults to the newest version shipped, and must be one of the shipped
versions (a patch release such as 1.30.4 is its minor's; any other is exit 2 naming the key and the
versions there are); ``strict`` (default true) rejects
unknown fields, which is how a misspelt ``request:`` for ``requests:`` is caught.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..findings import Finding
from ..options import Option
from ..schemas_k8s import SchemaError, SchemaSet, kubernetes_schema_root, pick_version, removed_api, shipped_versions

ID = "PF902"
SLUG = "schema-invalid"
TITLE = "Object fails its schema"
SEVERITY = "error"
CATEGORY = "input"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = (
    Option(
        "kubernetes-version",
        "string",
        None,
        "Kubernetes version whose schemas apply, one of those bundled (default: the newest bundled; another "
        "is a config error naming them).",
    ),
    Option("strict", "boolean", True, "Report fields the schema does not know."),
)
MAX_PER_OBJECT = 10  # violations reported per object; the rest are counted in the last message


def schema_set(version: str | None, strict: bool) -> SchemaSet:
    """One compiled set per (schema directory, Kubernetes version, strictness), shared by every run
    in the process."""
    return _schema_set(kubernetes_schema_root(), version, strict)


@lru_cache(maxsize=8)
def _schema_set(root: Path | None, version: str | None, strict: bool) -> SchemaSet:
    return SchemaSet(version, strict, root=root)


def _settings(ctx: Any) -> tuple[str | None, bool]:
    version = ctx.option("kubernetes-version")
    strict = ctx.option("strict")
    if isinstance(strict, str):
        strict = strict.strip().lower() not in ("false", "no", "0", "off")
    return (str(version) if version is not None else None), bool(strict)


def skip_reason(ctx: Any) -> str | None:
    if kubernetes_schema_root() is None:
        return "Kubernetes JSON schemas: none under schemas/kubernetes (scripts/vendor-k8s-schemas.py)"
    version, _ = _settings(ctx)
    try:
        pick_version(version, shipped_versions())
    except SchemaError as e:
        return str(e)
    return None


def check(ctx: Any) -> Iterator[Finding]:
    version, strict = _settings(ctx)
    schemas = schema_set(version, strict)
    for obj in ctx.objects:
        if removed_api(obj.ref.api_version, obj.kind, schemas.version) is not None:
            continue
        violations = schemas.validate(obj.raw)
        if not violations:
            continue
        api = obj.ref.api_version
        if len(api) > 60:  # (an apiVersion too long to be served: PF902 says so, the message shows its start)
            api = api[:57] + "..."
        own = schemas.is_podfit_schema(obj.ref.api_version, obj.kind)
        for i, v in enumerate(violations[:MAX_PER_OBJECT]):
            msg = v.message
            if i == MAX_PER_OBJECT - 1 and len(violations) > MAX_PER_OBJECT:
                msg += f" (and {len(violations) - MAX_PER_OBJECT} more)"
            if v.source == "api-server":
                what = f"fails the API server's validation of {api} {obj.kind}"
            else:
                what = f"fails the {api} {obj.kind} schema" + ("" if own else f" (Kubernetes {schemas.version})")
            yield Finding(
                ID,
                f"{what}: {msg}",
                obj.location_at(tuple(v.path)),
                obj.ref,
                details={
                    "path": list(v.path),
                    "check": v.source,
                    "kubernetesVersion": schemas.version,
                    "strict": strict,
                },
            )
