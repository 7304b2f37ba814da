# METADATA
# title: Node VM class wider than a NUMA node
# description: >-
#   A node pool's VM class has more vCPUs than there are physical cores in a NUMA node, or more
#   memory than a NUMA node holds.
# custom:
#   id: PF301
#   severity: error
#   slug: vm-class-exceeds-numa-node
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), VM size; The CPU Scheduler
#     in VMware vSphere 5.1, wide VMs
#   requires:
#     - host cores per NUMA node (platform hosts)
package podfit.numa.vm_class_exceeds_numa_node

import data.podfit.lib.cluster
import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

deny contains r if {
	some obj in cluster.clusters
	some pool in cluster.node_pools(obj)
	vm := platform.vm_classes[pool.vm_class]
	some check in _checks(vm)
	check.vm > check.numa
	msg := concat("", [
		obj.kind, " ", k8s.name(obj), ": node pool \"", pool.name, "\" uses VM class ", pool.vm_class, " with ",
		_describe(check.resource, check.vm), ", more than one NUMA node's ", _describe(check.resource, check.numa),
		": the VM is split into NUMA clients",
	])
	r := result.make(obj, "PF301", "error", msg, null, {"pool": pool.name, "vm_class": pool.vm_class, "resource": check.resource, "vm": check.vm, "numa_node": check.numa})
}

# Each dimension is checked when the profile gives the NUMA node's size in it.
_checks(vm) := {c |
	some c in [
		{"resource": "cpu", "vm": vm.cpus, "numa": platform.numa_cores},
		{"resource": "memory", "vm": vm.memory, "numa": platform.numa_memory},
	]
}

_describe("cpu", n) := concat("", [k8s.num(n), " CPUs"])

_describe("memory", n) := concat("", [k8s.fmt_memory(n), " memory"])
