# METADATA
# title: BestEffort pod
# description: >-
#   No container of the pod sets any request or limit, so the pod has the BestEffort QoS class.
# custom:
#   id: PF105
#   severity: error
#   slug: best-effort-pod
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), QoS classes; Kubernetes
#     QoS
package podfit.resources.best_effort_pod

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

findings contains f if {
	not platform.vsphere_pods
	some pod in k8s.pods
	pod.qos == "BestEffort"
	f := result.finding(rego.metadata.chain(), pod.obj, null, _message, {"containers": count(pod.containers)})
}

_message := concat(" ", [
	"no container sets a CPU or memory request or limit, so the pod is BestEffort:",
	"evicted first and given the least CPU under contention",
])
