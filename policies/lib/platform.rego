# METADATA
# title: podfit platform facts
# description: |-
#   The platform facts the rules need, read from data.podfit.platform (podfit passes its Platform
#   profile there; plain conftest users pass a file with --data). Facts that have a sensible default
#   get it here; facts without one (host NUMA size, node size) are undefined when absent, and the
#   rules that need them stay silent. The shape is documented in docs/rego.md.
package podfit.lib.platform

_facts := f if {
	f := data.podfit.platform
	is_object(f)
} else := {}

# runtime is "tkg", "vsphere-pods" or "bare-metal" (default "tkg").
runtime := object.get(_facts, "runtime", "tkg")

vsphere_pods if runtime == "vsphere-pods"

# The default VM classes of vSphere with Tanzu: vCPUs and memory (bytes) of each size, offered as
# best-effort-<size> (nothing reserved) and guaranteed-<size> (all reserved).
_gi := 1073741824

_sizes := {
	"xsmall": [2, 2],
	"small": [2, 4],
	"medium": [2, 8],
	"large": [4, 16],
	"xlarge": [4, 32],
	"2xlarge": [8, 64],
	"4xlarge": [16, 128],
	"8xlarge": [32, 128],
}

default_vm_classes := object.union(
	{sprintf("best-effort-%s", [size]): {"cpus": s[0], "memory": s[1] * _gi, "reserved": false} | s := _sizes[size]},
	{sprintf("guaranteed-%s", [size]): {"cpus": s[0], "memory": s[1] * _gi, "reserved": true} | s := _sizes[size]},
)

# vm_classes maps a class name to {"cpus", "memory", "reserved"}; profile classes extend the defaults.
vm_classes := object.union(default_vm_classes, _object(_facts, "vm_classes"))

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

# numa_cores / numa_memory: physical cores and memory (bytes) of one host NUMA node (no default).
numa_cores := _positive_int(_object(_facts, "numa_node"), "cores")

numa_memory := _positive_int(_object(_facts, "numa_node"), "memory")

# smt: the hosts run two or more hardware threads per core (default true: the study's hosts do).
smt := v if {
	v := _facts.smt
	is_boolean(v)
} else := true

# node_logical_cpus: logical CPUs of the largest node pods run on (no default). Taken from the
# profile, else from the VM classes of the profile's node pools (the largest, found by comparison:
# rego-cpp's max compares some numbers as text).
node_logical_cpus := _positive_int(_facts, "node_logical_cpus")

node_logical_cpus := [n | some n in _pool_cpus; count([x | some x in _pool_cpus; x > n]) == 0][0] if {
	not _positive_int(_facts, "node_logical_cpus")
	count(_pool_cpus) > 0
}

_pool_cpus := {vm_classes[p.vm_class].cpus |
	some p in _array(_facts, "node_pools")
	is_number(vm_classes[p.vm_class].cpus)
}

_array(o, key) := v if {
	v := o[key]
	is_array(v)
} else := []

# cpu_manager_policy of the kubelet on the nodes ("none" unless the profile says otherwise).
cpu_manager_policy := object.get(_object(_facts, "kubelet"), "cpu_manager_policy", "none")

# CFS bandwidth control period and slice (µs); kernel defaults 100 ms and 5 ms.
cfs_period_us := v if {
	v := _positive_int(_object(_facts, "cfs"), "period_us")
} else := 100000

cfs_slice_us := v if {
	v := _positive_int(_object(_facts, "cfs"), "slice_us")
} else := 5000

# peak_tolerance_percent: PF104's tolerance above the declared peak (default 10).
peak_tolerance_percent := v if {
	v := _object(_facts, "thresholds").peak_tolerance_percent
	is_number(v)
	v >= 0
	v == floor(v)
} else := 10
