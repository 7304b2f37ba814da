"""## What it does
A KubeletConfiguration lists a CPU Manager static policy option the kubelet refuses for its version
and feature gates, or two options that cannot be combined.

## Why it matters
The kubelet validates cpuManagerPolicyOptions when the static policy starts and exits on an unknown
option (one newer than its version included), an alpha option without CPUManagerPolicyAlphaOptions,
a beta option with CPUManagerPolicyBetaOptions off, a non-boolean value, and the pairs it cannot
combine. Status by version: full-pcpus-only GA 1.33, distribute-cpus-across-numa beta 1.33,
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
The kubelet checks every ``cpuManagerPolicyOptions`` entry when the static policy starts
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
stage is assumed and the finding says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..facts import (
    CPU_MANAGER_OPTION_CONFLICTS,
    CPU_MANAGER_OPTIONS,
    OPTION_GATES,
    cpu_manager_option_stage,
    is_kubelet_configuration,
)
from ..findings import Finding
from ..options import Option
from ..rule_context import RuleContext

ID = "PF207"
SLUG = "cpu-manager-option-unavailable"
TITLE = "CPU Manager policy option the kubelet refuses"
SEVERITY = "error"
CATEGORY = "cpu"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()

_BOOLS = {"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"}  # strconv.ParseBool


def _gate(gates: Mapping[str, object], name: str, default: bool) -> bool:
    v = gates.get(name)
    if v is None:
        return default
    return v is True or str(v).lower() == "true"


def check(ctx: RuleContext) -> Iterator[Finding]:
    kub = ctx.facts.kubelet
    version = kub.version
    vtext = f"Kubernetes {kub.version_text}" if version else "the latest Kubernetes (the version is not given)"
    for o in ctx.objects:
        if not is_kubelet_configuration(o):
            continue
        raw = o.raw
        opts = raw.get("cpuManagerPolicyOptions")
        if raw.get("cpuManagerPolicy") != "static" or not isinstance(opts, Mapping) or not opts:
            continue
        gates = raw.get("featureGates")
        if not isinstance(gates, Mapping):
            gates = {}
        on: set[str] = set()
        for name, value in opts.items():
            name = str(name)
            where = o.location_at(("cpuManagerPolicyOptions", name))
            stage = cpu_manager_option_stage(name, version)
            problem = None
            if stage is None:
                known = ", ".join(sorted(CPU_MANAGER_OPTIONS))
                problem = f"unknown CPU Manager policy option {name!r} (known: {known})"
            elif stage == "absent":
                first = CPU_MANAGER_OPTIONS[name][0][0]
                problem = f"option {name} does not exist in {vtext} (alpha from {first[0]}.{first[1]})"
            elif stage in OPTION_GATES:
                gate, default = OPTION_GATES[stage]
                if not _gate(gates, gate, default):
                    problem = f"option {name} is {stage} in {vtext} and the feature gate {gate} is off" + (
                        " (off by default)" if not default else ""
                    )
            if problem is None and not isinstance(value, str):
                continue  # a YAML boolean or number does not decode at all: PF902 says so
            if problem is None and value not in _BOOLS:
                problem = f"option {name}: {value!r} is not a boolean"
            if problem:
                yield Finding(
                    ID,
                    f"{problem}: the kubelet refuses to start",
                    where,
                    o.ref,
                    details={"option": name, "stage": stage, "kubernetes_version": kub.version_text},
                )
            elif value.lower() in ("1", "t", "true"):
                on.add(name)
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
