# METADATA
# title: Critical cluster on best-effort VM classes
# description: >-
#   A cluster marked critical (annotation podfit.io/critical) uses best-effort VM classes for its
#   nodes.
# custom:
#   id: PF304
#   severity: warning
#   slug: critical-on-best-effort-class
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Choose between guaranteed
#     and best-effort VM classes"
package podfit.vsphere.critical_on_best_effort_class

import data.podfit.lib.cluster
import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

deny contains r if {
	some obj in cluster.clusters
	cluster.critical(obj)
	some pool in cluster.node_pools(obj)
	_best_effort(pool.vm_class)
	msg := sprintf("%s %s is marked critical but node pool \"%s\" uses the best-effort VM class %s, which reserves no CPU or memory", [obj.kind, k8s.name(obj), pool.name, pool.vm_class])
	r := result.make(obj, "PF304", "warning", msg, null, {"pool": pool.name, "vm_class": pool.vm_class})
}

_best_effort(name) if platform.vm_classes[name].reserved == false

_best_effort(name) if {
	not platform.vm_classes[name]
	startswith(name, "best-effort-")
}
