"""## What it does
A KubeletConfiguration lists a CPU Manager static policy option the kubelet refuses for its version
and feature gates, or two options that cannot be combined.

## Why it matters
The kubelet validates cpuManagerPolicyOptions when the static policy starts and exits on an unknown
option (one newer than its version included), an alpha option without CPUManagerPolicyAlphaOptions,
a beta option with CPUManagerPolicyBetaOptions off, a non-boolean value, and the pairs it cannot
combine; and it refuses cpuManagerPolicyOptions at all with the CPUManagerPolicyOptions gate off
(whatever the policy). Status by version: full-pcpus-only GA 1.33, distribute-cpus-across-numa beta 1.33,
align-by-socket and distribute-cpus-across-cores alpha, strict-cpu-reservation GA 1.35,
prefer-align-cpus-by-uncorecache beta 1.34 (not with the distribute-* options). The values are
strings ("true"): an unquoted YAML boolean does not decode into the kubelet's map of strings, and
the configuration file does not load (PF902 reports it).

## Example
```yaml
kind: KubeletConfiguration
cpuManagerPolicy: static
cpuManagerPolicyOptions: {align-by-socket: "true"}   # alpha, gate off
```

## How to fix
Remove the option, enable its feature gate (alpha options need CPUManagerPolicyAlphaOptions), or
upgrade the nodes to a version where it exists.

## Source
kubernetes pkg/kubelet/cm/cpumanager/policy_options.go; Kubernetes docs "Control CPU Management
Policies on the Node"

## Implementation
With the ``CPUManagerPolicyOptions`` gate off, the kubelet refuses any ``cpuManagerPolicyOptions``
(cmd/kubelet/app/server.go; the gate is locked on from 1.33, when turning it off is itself
refused). The kubelet checks every ``cpuManagerPolicyOptions`` entry when the static policy starts
(``CheckPolicyOptionAvailable``, ``NewStaticPolicyOptions``) and exits on: a name it does not know
(including an option newer than its version), an alpha option without the
``CPUManagerPolicyAlphaOptions`` gate (off by default), a beta option with
``CPUManagerPolicyBetaOptions`` turned off, a value that is not a boolean, and the pairs that
cannot be combined (``prefer-align-cpus-by-uncorecache`` with either ``distribute-*`` option,
``distribute-cpus-across-cores`` with ``full-pcpus-only`` or ``distribute-cpus-across-numa``), and
``align-by-socket`` with the Topology Manager's single-numa-node policy. A value that is not a
string (an unquoted YAML boolean, ``full-pcpus-only: true``) does not decode into the kubelet's map
of strings, so the file does not load: PF902 reports that, against the kubelet's own type
(``schemas/crds/kubeletconfiguration-kubelet-v1beta1.json``); this rule still reports the option's
name and stage, but neither judges its value nor counts it as on. The stage of each option by
Kubernetes version is in podfit.kubeversions (``CPU_MANAGER_OPTIONS``); the version comes from the
platform (``spec.kubelet.kubernetesVersion``) or the cluster manifests; without it the latest
stage is assumed and the finding says so. The mechanism is podfit.kubelet_options, which PF213
applies to the Topology Manager's options.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..facts import CPU_MANAGER_OPTION_CONFLICTS
from ..findings import Finding
from ..kubelet_options import CPU_MANAGER
from ..options import Option
from ..rule_context import RuleContext
from ._kubelet_config import configured_options, refusal_finding

ID = "PF207"
SLUG = "cpu-manager-option-unavailable"
TITLE = "CPU Manager policy option the kubelet refuses"
SEVERITY = "error"
CATEGORY = "cpu"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()


def check(ctx: RuleContext) -> Iterator[Finding]:
    # the options' names and values are checked by the static policy only
    for o, raw, found, on in configured_options(ctx, CPU_MANAGER, lambda raw: raw.get("cpuManagerPolicy") == "static"):
        for r in found:
            yield refusal_finding(ID, ctx, o, CPU_MANAGER, r)
        for a, b in CPU_MANAGER_OPTION_CONFLICTS:
            if a in on and b in on:
                yield Finding(
                    ID,
                    f"options {a} and {b} cannot be used together: the kubelet refuses to start",
                    o.location_at(("cpuManagerPolicyOptions", b)),
                    o.ref,
                    details={"options": [a, b]},
                )
        if "align-by-socket" in on and raw.get("topologyManagerPolicy") == "single-numa-node":
            yield Finding(
                ID,
                "option align-by-socket cannot be used with topologyManagerPolicy single-numa-node: "
                "the kubelet refuses to start",
                o.location_at(("cpuManagerPolicyOptions", "align-by-socket")),
                o.ref,
                details={"options": ["align-by-socket"], "topology_manager_policy": "single-numa-node"},
            )
