# METADATA
# title: podfit platform facts
# description: |-
#   The platform facts the rules need, read from data.podfit.platform. podfit computes them once
#   (the facts stage) and passes them in; plain conftest users pass the same document, written by
#   `podfit platform-data`, with --data. Nothing here is derived: a fact that is absent is
#   undefined, and the rules that need it stay silent. The shape is documented in docs/rego.md.
package podfit.lib.platform

default _facts := {}

_facts := f if {
	f := data.podfit.platform
	is_object(f)
}

# assumed_facts: the facts the built-in profile supplied because no platform was described (none
# otherwise); assumed_note: what a finding resting on them says of it.
assumed_facts := {name | some name in object.get(_object(_facts, "assumed"), "facts", [])}

assumed_note := object.get(_object(_facts, "assumed"), "note", "")

# runtime is "tkg", "vsphere-pods" or "bare-metal" (default "tkg").
runtime := object.get(_facts, "runtime", "tkg")

vsphere_pods if runtime == "vsphere-pods"

_object(o, key) := v if {
	v := o[key]
	is_object(v)
} else := {}

_positive_int(o, key) := v if {
	v := o[key]
	is_number(v)
	v > 0
	v == floor(v)
}

# numa_cores / numa_memory: physical cores and memory (bytes) of one host NUMA node.
numa_cores := _positive_int(_object(_facts, "numa_node"), "cores")

numa_memory := _positive_int(_object(_facts, "numa_node"), "memory")

# numa_cpus: CPUs of one host NUMA node as a pod's CPUs count them (logical CPUs on bare metal,
# physical cores under vSphere); the cores when the facts do not say.
numa_cpus := n if {
	n := _positive_int(_object(_facts, "numa_node"), "cpus")
} else := numa_cores

# smt: the hosts run two or more hardware threads per core (true when unknown: the study's hosts do).
default smt := true

smt := v if {
	v := _facts.smt
	is_boolean(v)
}

# node_logical_cpus: logical CPUs of the largest node a pod without node selection or tolerations
# lands on.
node_logical_cpus := _positive_int(_facts, "node_logical_cpus")

# node_logical_cpus_of(obj): logical CPUs of the largest node the workload obj's pods may land on.
# The facts list, under workloads, those whose facts differ from what any other workload gets
# (keyed kind/namespace/name, the namespace as written): here, whose node selection and
# tolerations give them nodes of another size; any other gets node_logical_cpus.
node_logical_cpus_of(obj) := n if {
	n := _positive_int(_workload(obj), "node_logical_cpus")
} else := node_logical_cpus

# cfs_screen_limit / cfs_screen_limit_of(obj): PF202's screen, computed by podfit's facts stage
# (podfit.facts.cfs_screen_limit) for the largest node (of obj's pods): a CPU limit below this many
# millicores has fewer CFS slices per period than the node has logical CPUs.
cfs_screen_limit := _positive_int(_facts, "cfs_screen_limit")

cfs_screen_limit_of(obj) := n if {
	n := _positive_int(_workload(obj), "cfs_screen_limit")
} else := cfs_screen_limit

# linux_excluded(obj): the workload obj's nodeSelector, or every term of its required node affinity,
# rules Linux nodes out (whatever the operator); such nodes have no CFS quota.
linux_excluded(obj) if _workload(obj).linux_excluded == true

# exclusive_cpus(obj, name): the static CPU Manager on the nodes gives container name of the
# workload obj exclusive CPUs (a Guaranteed pod, whole CPUs), which CFS quota does not over-throttle.
exclusive_cpus(obj, name) if name in _workload(obj).exclusive_cpus

# injected(obj): the containers a service mesh's webhook adds to the pods of the workload obj
# (Istio's istio-proxy, Linkerd's linkerd-proxy), each {"name", "request": {"cpu": m, "memory": b},
# "limit": {...}} with effective values; [] when none (or without the facts).
injected(obj) := l if {
	l := _workload(obj).injected
	is_array(l)
} else := []

_workload(obj) := _object(_object(_facts, "workloads"), _workload_key(obj))

# workloads_known: the facts were computed over the workloads (podfit check; podfit platform-data
# given the manifests), so a workload they do not list has the run-wide facts. Without it, nothing
# is known of any workload's own placement or pinned CPUs.
workloads_known if is_object(_facts.workloads)

# dra_node_allocatable: the nodes give CPU and memory through DRA claims (DRANodeAllocatableResources,
# KEP-5517); off when the facts do not say.
dra_node_allocatable if _facts.kubelet.dra_node_allocatable == true

# limited_swap: the kubelet on the nodes lets Burstable pods swap (memorySwap LimitedSwap in force,
# podfit.facts.KubeletFacts.limited_swap); off when the facts do not say.
limited_swap if _facts.kubelet.limited_swap == true

# kind/namespace/name as podfit.facts.workload_key builds it: "" for a namespace that is not a
# string, the generateName where the name is not a string.
_workload_key(obj) := concat("/", [_text(obj.kind), _text(object.get(obj, ["metadata", "namespace"], "")), _name(obj)])

_text(x) := x if is_string(x)

else := ""

_name(obj) := n if {
	n := object.get(obj, ["metadata", "name"], null)
	is_string(n)
} else := _text(object.get(obj, ["metadata", "generateName"], ""))

# cpu_manager_policy of the kubelet on the nodes ("none" unless the facts say otherwise).
cpu_manager_policy := object.get(_object(_facts, "kubelet"), "cpu_manager_policy", "none")

# cpu_manager_policy_known: whether the facts know the nodes' policy (a KubeletConfiguration or the platform).
cpu_manager_policy_known := object.get(_object(_facts, "kubelet"), "cpu_manager_policy_known", false)

# CFS bandwidth control period and slice (µs) of the nodes' kernels (podfit.facts.CFS_PERIOD_US,
# CFS_SLICE_US); undefined without the facts.
cfs_period_us := _positive_int(_object(_facts, "cfs"), "period_us")

cfs_slice_us := _positive_int(_object(_facts, "cfs"), "slice_us")
