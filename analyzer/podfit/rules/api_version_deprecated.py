"""## What it does
An object uses an apiVersion or kind that the target Kubernetes release still serves but has
deprecated (one a later release removes, or v1 Endpoints, deprecated since 1.33).

## Why it matters
The API server accepts the object and it behaves exactly as with the replacement, so nothing is lost
today: under the severity principle this is advice (info), not a warning. It becomes a rejection on
the release that stops serving the apiVersion, and the message names that release and the
replacement, so the move can be made before the upgrade. Once the target release no longer serves
it, PF906 reports it as an error instead.

## Example
```yaml
# thresholds: {PF906: {kubernetes-version: "1.24"}}
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
```

## How to fix
Move to the replacement the message names (kubectl convert can rewrite the file), or set thresholds
PF906 kubernetes-version to the release the manifests target.

## Source
Kubernetes Deprecated API Migration Guide; the API server's deprecation warnings (v1 Endpoints,
KEP-4974)

## Implementation
Two cases, from :func:`podfit.schemas_k8s.deprecated_api`:
- with a target release (``kubernetes-version``, PF906's option), an apiVersion that a later
  release removes (policy/v1beta1 PodDisruptionBudget targeting 1.24): the message names the
  release that removes it and the replacement;
- a kind deprecated without a removal date (v1 Endpoints since 1.33, in favour of EndpointSlice).

Info under the severity principle (docs/rules.md): the API server accepts the object and it works
exactly as its replacement would, so nothing is lost today; the finding is advice for the next
upgrade. Once the target release no longer serves it, PF906 reports it as an error.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding
from ..options import Option
from ..rule_context import RuleContext
from ..schemas_k8s import deprecated_api
from . import api_version_removed

ID = "PF911"
SLUG = "api-version-deprecated"
TITLE = "apiVersion deprecated"
SEVERITY = "info"
CATEGORY = "input"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = (
    api_version_removed.kubernetes_version_option("PF906's, then PF902's kubernetes-version, else the newest"),
)


def _target(ctx: RuleContext) -> RuleContext:
    """The context whose kubernetes-version counts: this rule's when set, else PF906's (which falls
    back to PF902's)."""
    return ctx if ctx.option("kubernetes-version") is not None else ctx.for_rule("PF906")


def skip_reason(ctx: RuleContext) -> str | None:
    return api_version_removed.skip_reason(_target(ctx))


def check(ctx: RuleContext) -> Iterator[Finding]:
    version = api_version_removed.target_version(_target(ctx))
    for obj in ctx.objects:
        d = deprecated_api(obj.ref.api_version, obj.kind, version)
        if d is None:
            continue
        if d.removed_in is not None:
            msg = (
                f"apiVersion {d.api_version} of {d.kind} is deprecated: Kubernetes {d.removed_in} removes it "
                f"(the target, {version}, still serves it)"
            )
        else:
            msg = (
                f"{d.kind} ({d.api_version}) is deprecated since Kubernetes {d.deprecated_in}: still served, "
                f"no removal scheduled"
            )
        if d.replacement:
            msg += f". Use {d.replacement}"
        if d.note:
            msg += f"; {d.note}"
        yield Finding(
            ID,
            msg,
            obj.location_at(("apiVersion",)),
            obj.ref,
            details={
                "apiVersion": d.api_version,
                "kind": d.kind,
                "deprecatedIn": d.deprecated_in,
                "removedIn": d.removed_in,
                "replacement": d.replacement,
                "kubernetesVersion": version,
            },
        )
