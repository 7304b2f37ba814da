"""Policy options of the kubelet's resource managers, as the kubelet checks them when it starts.

The CPU Manager (``cpuManagerPolicyOptions``) and the Topology Manager
(``topologyManagerPolicyOptions``) check their options the same way
(``CheckPolicyOptionAvailable`` in pkg/kubelet/cm/cpumanager/policy_options.go and
pkg/kubelet/cm/topologymanager/policy_options.go): an option the kubelet's release does not know,
an alpha option without the manager's ``…PolicyAlphaOptions`` gate (off by default), a beta option
with its ``…PolicyBetaOptions`` gate off, or a value its parser refuses, and the kubelet exits.
Before any of that, cmd/kubelet/app/server.go refuses options at all when the manager's
``…PolicyOptions`` gate is off. The stages come from podfit.kubeversions; PF207 and PF213 report
what :func:`refusals` finds, PF206 reads :func:`accepted_value` for ``max-allowable-numa-nodes``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from . import kubeversions

__all__ = [
    "OptionFamily",
    "Refusal",
    "CPU_MANAGER",
    "TOPOLOGY_MANAGER",
    "BOOLEANS",
    "gate_on",
    "option_stage",
    "refusals",
    "accepted_value",
]

Version = tuple[int, int]

# strconv.ParseBool: what the kubelet reads as a boolean option value
BOOLEANS = frozenset({"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"})
TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_ATOI = re.compile(r"[+-]?[0-9]+")  # strconv.Atoi: an optional sign, decimal digits, nothing else


def _boolean(value: str) -> str | None:
    return None if value in BOOLEANS else f"{value!r} is not a boolean"


# topologymanager policy_options.go defaultMaxAllowableNUMANodes: the least max-allowable-numa-nodes
# the kubelet accepts, and the limit when the option is not set
DEFAULT_MAX_NUMA_NODES = 8


def _numa_nodes(value: str) -> str | None:
    if not _ATOI.fullmatch(value):
        return f"{value!r} is not a whole number"
    if not -(2**63) <= int(value) < 2**63:  # Atoi: a Go int (64 bits)
        return f"{value} is out of the range of an integer"
    if int(value) < DEFAULT_MAX_NUMA_NODES:
        return f"{int(value)} is less than {DEFAULT_MAX_NUMA_NODES}, the least the kubelet accepts"
    return None


@dataclass(frozen=True)
class OptionFamily:
    """The policy options of one resource manager: the KubeletConfiguration field, the stages by
    release (a podfit.kubeversions table), the gate without which the field is refused, the gate
    each stage needs, and how the kubelet parses each option's value (a problem, or None)."""

    field: str
    manager: str
    table: Mapping[str, kubeversions.Entry]
    gate: str
    stage_gates: Mapping[str, str]
    values: Mapping[str, Callable[[str], str | None]]


CPU_MANAGER = OptionFamily(
    "cpuManagerPolicyOptions",
    "CPU Manager",
    kubeversions.CPU_MANAGER_OPTIONS,
    "CPUManagerPolicyOptions",
    {"alpha": "CPUManagerPolicyAlphaOptions", "beta": "CPUManagerPolicyBetaOptions"},
    {name: _boolean for name in kubeversions.CPU_MANAGER_OPTIONS},
)
TOPOLOGY_MANAGER = OptionFamily(
    "topologyManagerPolicyOptions",
    "Topology Manager",
    kubeversions.TOPOLOGY_MANAGER_OPTIONS,
    "TopologyManagerPolicyOptions",
    {"alpha": "TopologyManagerPolicyAlphaOptions", "beta": "TopologyManagerPolicyBetaOptions"},
    {"prefer-closest-numa-nodes": _boolean, "max-allowable-numa-nodes": _numa_nodes},
)


@dataclass(frozen=True)
class Refusal:
    """Why the kubelet refuses to start: ``option`` is the option at fault, None for the field."""

    option: str | None
    problem: str
    stage: str | None = None


def gate_on(gates: Mapping[str, object], name: str, version: Version | None) -> bool:
    """Whether feature gate ``name`` is on: as ``gates`` (a featureGates mapping) sets it, else its
    default at ``version`` (the latest release's when the version is unknown). A value that is not
    a boolean ("true" quoted, a list) does not decode into the kubelet's map of booleans, so the
    file does not load (PF902 reports it): it sets nothing here."""
    value = gates.get(name)
    if isinstance(value, bool):
        return value
    return bool(kubeversions.feature_default(name, version or kubeversions.LATEST))


def option_stage(family: OptionFamily, name: str, version: Version | None) -> str | None:
    """ "alpha", "beta", "GA" at ``version`` (the latest stage when the version is unknown),
    "absent" before the option existed, None for a name the kubelet does not know."""
    entry = family.table.get(name)
    if entry is None:
        return None
    step = kubeversions.stage_at(entry, version)
    return step.stage if step is not None else "absent"


def _unavailable(
    family: OptionFamily, name: str, gates: Mapping[str, object], version: Version | None, vtext: str
) -> tuple[str | None, str | None]:
    """(the option's stage, why the kubelet refuses its name at this version and these gates)."""
    stage = option_stage(family, name, version)
    if stage is None:
        known = ", ".join(sorted(family.table))
        return stage, f"unknown {family.manager} policy option {name!r} (known: {known})"
    if stage == "absent":
        first = family.table[name].steps[0]
        return stage, (
            f"option {name} does not exist in {vtext} ({first.stage} from {kubeversions.release_text(first.since)})"
        )
    gate = family.stage_gates.get(stage)
    if gate is not None and not gate_on(gates, gate, version):
        default = kubeversions.feature_default(gate, version or kubeversions.LATEST)
        return stage, f"option {name} is {stage} in {vtext} and the feature gate {gate} is off" + (
            " (off by default)" if not default else ""
        )
    return stage, None


def _gate_off(family: OptionFamily, version: Version | None, vtext: str) -> str:
    step = kubeversions.stage_at(kubeversions.FEATURE_GATES[family.gate], version)
    if step is not None and step.locked:
        return f"the feature gate {family.gate} is set off, but it is locked on in {vtext}"
    return f"{family.field} is set with the feature gate {family.gate} off"


def refusals(
    family: OptionFamily,
    options: Mapping[object, object],
    gates: Mapping[str, object],
    version: Version | None,
    *,
    names: bool = True,
) -> tuple[list[Refusal], set[str]]:
    """What the kubelet refuses in ``options`` (a KubeletConfiguration's option mapping) with
    ``gates`` (its featureGates) at ``version``, and the options it reads as on (boolean values
    that are true). ``names``: whether the manager checks the options' names and values at all
    (the Topology Manager does not with its policy none). A value that is not a string (an unquoted
    YAML boolean or number) does not decode into the kubelet's map of strings: the file does not
    load (PF902 reports that), so its value is neither judged nor counted as on."""
    vtext = (
        f"Kubernetes {kubeversions.release_text(version)}"
        if version
        else "the latest Kubernetes (the version is not given)"
    )
    if not options:
        return [], set()
    if not gate_on(gates, family.gate, version):
        return [Refusal(None, _gate_off(family, version, vtext))], set()
    found: list[Refusal] = []
    on: set[str] = set()
    if not names:
        return found, on
    for key, value in options.items():
        name = str(key)
        stage, problem = _unavailable(family, name, gates, version, vtext)
        if problem is None and not isinstance(value, str):
            continue
        if problem is None and isinstance(value, str):
            parse = family.values.get(name, _boolean)
            why = parse(value)
            problem = f"option {name}: {why}" if why else None
        if problem is not None:
            found.append(Refusal(name, problem, stage))
        elif isinstance(value, str) and value in TRUE:
            on.add(name)
    return found, on


def accepted_value(
    family: OptionFamily,
    name: str,
    value: str,
    gates: Mapping[str, object],
    version: Version | None,
) -> str | None:
    """Why the kubelet refuses option ``name`` set to ``value`` (its name at this version and these
    gates, or its value); None when it accepts it."""
    vtext = f"Kubernetes {kubeversions.release_text(version)}" if version else "the latest Kubernetes"
    if not gate_on(gates, family.gate, version):
        return _gate_off(family, version, vtext)
    _, problem = _unavailable(family, name, gates, version, vtext)
    if problem is None:
        why = family.values.get(name, _boolean)(value)
        problem = f"option {name}: {why}" if why else None
    return problem
