"""## What it does
An object uses an apiVersion that Kubernetes no longer serves for its kind (extensions/v1beta1
Deployment, policy/v1beta1 PodDisruptionBudget, batch/v1beta1 CronJob, ...).

## Why it matters
The API server rejects an object whose apiVersion it no longer serves, so the workload is never
created and none of its sizing takes effect. The message names the replacement apiVersion, the
release that removed the old one, and the field changes the move needs.

## Example
```yaml
apiVersion: extensions/v1beta1
kind: Deployment
```

## How to fix
Change apiVersion to the replacement the message names (kubectl convert can rewrite the file) and
make the changes it lists, e.g. add spec.selector when moving a Deployment to apps/v1.

## Source
Kubernetes Deprecated API Migration Guide, "Removed APIs by release"

## Implementation
The API server rejects such an object outright (extensions/v1beta1 Deployment, policy/v1beta1
PodDisruptionBudget, batch/v1beta1 CronJob, ...), so the facts' clusters leave it out
(``ClusterScope.rejected``): packing, capacity, load balancer and quota rules do not count it, and
the message says so. The finding names the replacement apiVersion and
the release that removed the old one, from the table of the Kubernetes Deprecated API Migration
Guide in :data:`podfit.schemas_k8s.REMOVED_APIS`.

Thresholds (``.podfit.yaml``)::

    thresholds:
      PF906: {kubernetes-version: "1.25"}

``kubernetes-version``: the release the manifests target (an apiVersion removed after it still
passes); default PF902's ``kubernetes-version``, else every removal so far.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..findings import Finding
from ..options import Option
from ..schemas_k8s import SchemaError, parse_version, removed_api

ID = "PF906"
SLUG = "api-version-removed"
TITLE = "apiVersion removed from Kubernetes"
SEVERITY = "error"
CATEGORY = "input"
REQUIRES: tuple[str, ...] = ()


def kubernetes_version_option(default: str) -> Option:
    """The ``kubernetes-version`` option of the apiVersion rules (PF906, PF911); ``default`` says
    what applies when it is unset."""
    return Option(
        "kubernetes-version",
        "string",
        None,
        f"Kubernetes version the manifests target (default: {default}).",
    )


OPTIONS: tuple[Option, ...] = (kubernetes_version_option("PF902's kubernetes-version, else every removal so far"),)


def target_kubernetes_version(config: Any) -> str | None:
    """The release the manifests target as ``config`` says: PF906's ``kubernetes-version``, else
    PF902's; None when neither is set."""
    version = config.thresholds.get(ID, {}).get("kubernetes-version")
    if version is None:
        version = config.thresholds.get("PF902", {}).get("kubernetes-version")
    return None if version is None else str(version)


def target_version(ctx: Any) -> str | None:
    """The release the manifests target: the context's ``kubernetes-version``, else PF902's."""
    version = ctx.option("kubernetes-version")
    if version is None:
        version = ctx.config.thresholds.get("PF902", {}).get("kubernetes-version")
    return None if version is None else str(version)


def skip_reason(ctx: Any) -> str | None:
    version = target_version(ctx)
    if version in (None, "", "latest"):
        return None
    try:
        parse_version(version)
    except SchemaError as e:
        return str(e)
    return None


def check(ctx: Any) -> Iterator[Finding]:
    version = target_version(ctx)
    for obj in ctx.objects:
        removal = removed_api(obj.ref.api_version, obj.kind, version)
        if removal is None:
            continue
        msg = (
            f"apiVersion {removal.api_version} of {removal.kind} was removed in Kubernetes {removal.removed_in}: "
            f"the API server rejects the object, and the rules over several objects (packing, capacity, quotas) "
            f"leave it out"
        )
        if removal.replacement:
            msg += f". Use apiVersion {removal.replacement} (served since {removal.since})"
            if removal.note:
                msg += f"; {removal.note}"
        else:
            msg += f". {removal.note}"
        yield Finding(
            ID,
            msg,
            obj.location_at(("apiVersion",)),
            obj.ref,
            details={
                "apiVersion": removal.api_version,
                "kind": removal.kind,
                "removedIn": removal.removed_in,
                "replacement": removal.replacement,
                "servedSince": removal.since,
                "kubernetesVersion": version,
            },
        )
