"""What each Kubernetes release does: the one versioned table every rule reads.

Feature gates, CPU Manager static policy options and Topology Manager policy options, each as the
steps of its stage by release ((major, minor) from which a stage and its default hold) and the
source the steps come from (a KEP, or a kubernetes/kubernetes file). Releases podfit knows:
:data:`RELEASES` (1.29 to 1.37). A rule never writes a version of its own: it asks
:func:`feature_default`, :func:`stage_at` or the derived tables below, and a test checks that no
other module of podfit holds a version tuple.

Stages as the kubelet and the API server apply them: an alpha gate is off unless set, a beta gate
is on by default from the release the table gives (some beta gates stayed off, the ``default`` of
the step says which), a GA gate is on (and locked on from the release its step says). Before its
first step a gate or option does not exist: the kubelet refuses an unknown feature gate name and an
unknown policy option.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "RELEASES",
    "LATEST",
    "Step",
    "Entry",
    "FEATURE_GATES",
    "CPU_MANAGER_OPTIONS",
    "TOPOLOGY_MANAGER_OPTIONS",
    "BEHAVIOURS",
    "behaviour",
    "stage_at",
    "feature_default",
    "release_text",
]

Version = tuple[int, int]

RELEASES: tuple[Version, ...] = tuple((1, minor) for minor in range(29, 38))
LATEST: Version = RELEASES[-1]

_KF = "kubernetes/kubernetes pkg/features/kube_features.go"
_CPU_OPTS = "kubernetes/kubernetes pkg/kubelet/cm/cpumanager/policy_options.go"
_TM_OPTS = "kubernetes/kubernetes pkg/kubelet/cm/topologymanager/policy_options.go"


@dataclass(frozen=True)
class Step:
    """From release ``since`` on: ``stage`` ("alpha", "beta", "GA", "deprecated"), whether the
    gate or option is on when nothing sets it (``default``), and whether it is locked there."""

    since: Version
    stage: str
    default: bool
    locked: bool = False  # the gate can no longer be set against its default (the kubelet refuses)


@dataclass(frozen=True)
class Entry:
    """A feature gate or policy option: its steps, oldest first, and where they come from."""

    name: str
    steps: tuple[Step, ...]
    source: str
    what: str = ""

    @property
    def first(self) -> Version:
        return self.steps[0].since


def _alpha(v: Version) -> Step:
    return Step(v, "alpha", False)


def _beta(v: Version, default: bool = True) -> Step:
    return Step(v, "beta", default)


def _ga(v: Version, locked: bool = False) -> Step:
    return Step(v, "GA", True, locked)


def _table(*entries: Entry) -> Mapping[str, Entry]:
    return {e.name: e for e in entries}


# Feature gates podfit reads. Source per row: the KEP (its kep.yaml milestones) and the gate's
# versioned spec in pkg/features/kube_features.go.
FEATURE_GATES: Mapping[str, Entry] = _table(
    Entry(
        "CPUManagerPolicyOptions",
        (_alpha((1, 22)), _beta((1, 23)), _ga((1, 33), locked=True)),
        f"KEP-2625; {_KF}; kubernetes/website feature-gates/CPUManagerPolicyOptions.md",
        "cpuManagerPolicyOptions are read at all",
    ),
    Entry(
        "CPUManagerPolicyAlphaOptions",
        (_alpha((1, 23)),),
        f"KEP-2625; {_KF}",
        "alpha CPU Manager policy options are accepted",
    ),
    Entry(
        "CPUManagerPolicyBetaOptions",
        (_beta((1, 23)),),
        f"KEP-2625; {_KF}",
        "beta CPU Manager policy options are accepted",
    ),
    Entry(
        "TopologyManagerPolicyOptions",
        (_alpha((1, 26)), _beta((1, 28)), _ga((1, 32))),
        f"KEP-3545; {_KF}; kubernetes/website feature-gates/TopologyManagerPolicyOptions.md",
        "topologyManagerPolicyOptions are read at all",
    ),
    Entry(
        "TopologyManagerPolicyAlphaOptions",
        (_alpha((1, 26)),),
        f"KEP-3545; {_KF}",
        "alpha Topology Manager policy options are accepted",
    ),
    Entry(
        "TopologyManagerPolicyBetaOptions",
        (_beta((1, 26), default=False), _beta((1, 28))),
        f"KEP-3545; {_KF}; kubernetes/website feature-gates/TopologyManagerPolicyBetaOptions.md",
        "beta Topology Manager policy options are accepted",
    ),
    Entry(
        "DisableCPUQuotaWithExclusiveCPUs",
        (_beta((1, 33)), Step((1, 36), "deprecated", True), Step((1, 37), "deprecated", True, locked=True)),
        f"{_KF} (kubernetes/kubernetes#127525); kubernetes/website feature-gates/DisableCPUQuotaWithExclusiveCPUs.md",
        "a container given exclusive CPUs by the static CPU Manager gets no CFS quota",
    ),
    Entry(
        "CustomCPUCFSQuotaPeriod",
        (_alpha((1, 12)),),
        f"{_KF} (CPUCFSQuotaPeriod); kubernetes/kubernetes pkg/kubelet/apis/config/validation/validation.go "
        "ValidateKubeletConfiguration",
        "a cpuCFSQuotaPeriod other than 100ms (without it the kubelet refuses to start)",
    ),
    Entry(
        "SidecarContainers",
        (_alpha((1, 28)), _beta((1, 29)), _ga((1, 33), locked=True)),
        f"KEP-753; {_KF}; kubernetes/website feature-gates/SidecarContainers.md",
        "init containers with restartPolicy Always run beside the app containers",
    ),
    Entry(
        "InPlacePodVerticalScaling",
        (_alpha((1, 27)), _beta((1, 33)), _ga((1, 35), locked=True)),
        f"KEP-1287; {_KF}; kubernetes/website feature-gates/InPlacePodVerticalScaling.md; "
        "resizePolicy as the API server checks it: kubernetes/kubernetes pkg/apis/core/validation/validation.go "
        "validateResizePolicy (cpu and memory once each, NotRequired or RestartContainer, NotRequired in a pod "
        "whose restartPolicy is Never), and pkg/api/pod/util.go dropDisabledPodFields (gate off: dropped)",
        "container resources can be resized in place (resize subresource, resizePolicy)",
    ),
    Entry(
        "InPlacePodVerticalScalingExclusiveCPUs",
        (_alpha((1, 32)),),
        f"KEP-1287, KEP-5554 (alpha; beta planned, not released); {_KF}; pkg/kubelet/allocation/allocation_manager.go",
        "CPU resizes of Guaranteed pods under the static CPU Manager (otherwise Infeasible)",
    ),
    Entry(
        "InPlacePodVerticalScalingExclusiveMemory",
        (_alpha((1, 34)),),
        f"{_KF}; pkg/kubelet/allocation/allocation_manager.go",
        "memory resizes of Guaranteed pods under the Static Memory Manager (otherwise Infeasible)",
    ),
    Entry(
        "InPlacePodLevelResourcesVerticalScaling",
        (_alpha((1, 35)), _beta((1, 36))),
        f"KEP-5419; {_KF}; kubernetes/website feature-gates/InPlacePodLevelResourcesVerticalScaling.md",
        "pod-level resources (spec.resources) can be resized in place",
    ),
    Entry(
        "PodLevelResources",
        (_alpha((1, 32)), _beta((1, 34))),
        f"KEP-2837; {_KF}; kubernetes/website feature-gates/PodLevelResources.md",
        "spec.resources: CPU and memory requests and limits for the pod as a whole",
    ),
    Entry(
        "DynamicResourceAllocation",
        (_alpha((1, 26)), _beta((1, 32), default=False), _ga((1, 34)), _ga((1, 35), locked=True)),
        f"KEP-3063, KEP-4381; {_KF}; kubernetes/website feature-gates/DynamicResourceAllocation.md",
        "resources.claims and ResourceClaims (structured parameters)",
    ),
    Entry(
        "DRANodeAllocatableResources",
        (_alpha((1, 36)),),
        "KEP-5517 (DRA: Node Allocatable Resources); kubernetes/website feature-gates/DRANodeAllocatableResources.md",
        "CPU, memory and hugepages of a container can come from a ResourceClaim",
    ),
    Entry(
        "PodLevelResourceManagers",
        (_alpha((1, 36)),),
        "KEP-5526",
        "CPU, Memory and Topology Managers align pod-level resources",
    ),
    Entry(
        "NodeSwap",
        (_alpha((1, 22)), _beta((1, 28), default=False), _beta((1, 30)), _ga((1, 34), locked=True)),
        f"KEP-2400; {_KF}; kubernetes/website feature-gates/NodeSwap.md",
        "swap on nodes (LimitedSwap for Burstable pods)",
    ),
    Entry(
        "MemoryQoS",
        (_alpha((1, 22)),),
        f"KEP-2570; {_KF}",
        "memory.high from memory requests and limits (cgroup v2)",
    ),
)

# CPU Manager static policy options. The kubelet refuses to start on an unknown option, an alpha
# one unless CPUManagerPolicyAlphaOptions is on, a beta one when CPUManagerPolicyBetaOptions is off.
CPU_MANAGER_OPTIONS: Mapping[str, Entry] = _table(
    Entry("full-pcpus-only", (_alpha((1, 22)), _beta((1, 23)), _ga((1, 33))), f"KEP-2625; {_CPU_OPTS}"),
    Entry("distribute-cpus-across-numa", (_alpha((1, 23)), _beta((1, 33))), f"KEP-2902; {_CPU_OPTS}"),
    Entry("align-by-socket", (_alpha((1, 25)),), f"KEP-3327; {_CPU_OPTS}"),
    Entry("distribute-cpus-across-cores", (_alpha((1, 31)),), f"KEP-4176; {_CPU_OPTS}"),
    Entry("strict-cpu-reservation", (_alpha((1, 32)), _beta((1, 33)), _ga((1, 35))), f"KEP-4540; {_CPU_OPTS}"),
    Entry(
        "prefer-align-cpus-by-uncorecache", (_alpha((1, 32)), _beta((1, 34)), _ga((1, 36))), f"KEP-4800; {_CPU_OPTS}"
    ),
)

# Topology Manager policy options (topologyManagerPolicyOptions), gated the same way by
# TopologyManagerPolicyAlphaOptions / TopologyManagerPolicyBetaOptions.
TOPOLOGY_MANAGER_OPTIONS: Mapping[str, Entry] = _table(
    Entry("prefer-closest-numa-nodes", (_alpha((1, 26)), _beta((1, 28)), _ga((1, 32))), f"KEP-3545; {_TM_OPTS}"),
    Entry("max-allowable-numa-nodes", (_beta((1, 31)), _ga((1, 35))), f"KEP-4622; {_TM_OPTS}"),
)


# Behaviours of a release that are no feature gate of their own, as steps of the same shape.
BEHAVIOURS: Mapping[str, Entry] = _table(
    Entry(
        "memory-limit-decrease-in-place",
        (_beta((1, 34)),),
        "KEP-1287 (v1.34); kubernetes/kubernetes pkg/apis/core/validation/validation.go",
        "an in-place resize may lower a memory limit with resizePolicy NotRequired (the kubelet checks "
        "usage first); before, the API server refuses it unless the policy is RestartContainer",
    ),
    Entry(
        "resize-policy-on-init-containers",
        (_beta((1, 33)),),
        "KEP-1287 (v1.33: sidecar resize); kubernetes/kubernetes pkg/apis/core/validation/validation.go "
        "validateInitContainers (opts.AllowSidecarResizePolicy), pkg/api/pod/util.go "
        "GetValidationOptionsFromPodSpecAndMeta (AllowSidecarResizePolicy = InPlacePodVerticalScaling on)",
        "with InPlacePodVerticalScaling on, the API server accepts resizePolicy on any init container (the "
        "option is named for sidecars, the check does not tell them from one-shot ones); before, it refuses "
        "resizePolicy on every init container, sidecars included",
    ),
    Entry(
        "swap-behaviour-no-swap",
        (_beta((1, 30)),),
        "KEP-2400 (beta2, v1.30: kubernetes/kubernetes#122745); kubernetes/kubernetes "
        "pkg/kubelet/apis/config/validation/validation.go ValidateKubeletConfiguration",
        "memorySwap.swapBehavior is NoSwap when unset and accepts NoSwap or LimitedSwap (UnlimitedSwap is "
        "refused); before, unset means LimitedSwap (NodeSwap on) and the values are LimitedSwap and UnlimitedSwap",
    ),
)


def behaviour(name: str, version: Version | None) -> bool:
    """Whether release ``version`` behaves as :data:`BEHAVIOURS` ``name`` says (the latest release
    when the version is unknown)."""
    return stage_at(BEHAVIOURS[name], version) is not None


def stage_at(entry: Entry, version: Version | None) -> Step | None:
    """The step of ``entry`` in force at ``version`` (the latest step when the version is unknown);
    None before the entry existed."""
    if version is None:
        return entry.steps[-1]
    found = None
    for step in entry.steps:
        if version >= step.since:
            found = step
    return found


def feature_default(name: str, version: Version | None) -> bool | None:
    """Whether feature gate ``name`` is on by default at ``version``; None for a gate the table does
    not hold or an unknown version."""
    entry = FEATURE_GATES.get(name)
    if entry is None or version is None:
        return None
    step = stage_at(entry, version)
    return step is not None and step.default


def release_text(version: Version) -> str:
    return f"{version[0]}.{version[1]}"
