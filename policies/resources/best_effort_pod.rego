# METADATA
# title: BestEffort pod
# description: >-
#   No container of the pod sets any request or limit, so the pod has the BestEffort QoS class. A
#   container a service mesh injects counts (Istio's proxy requests 100m CPU and 128Mi: such a pod
#   is Burstable, and PF101/PF102 name its containers without requests).
# custom:
#   id: PF105
#   severity: error
#   slug: best-effort-pod
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), QoS classes; Kubernetes
#     QoS
#   rationale: >-
#     BestEffort pods are evicted first under node pressure and get the lowest CPU weight, so their
#     latency collapses as soon as the node is busy. A workload at `replicas: 0` is checked too: its
#     template is exactly what runs once it is scaled up (kubectl scale, KEDA from zero), while
#     packing counts no pod for it (an HPA does not scale a target whose replicas is 0).
#   fix: >-
#     Give every container CPU and memory requests (and limits where the peak is known).
#   example: |
#     containers:
#       - {name: app, image: app:1}
package podfit.resources.best_effort_pod

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

findings contains f if {
	not platform.vsphere_pods
	some pod in k8s.pods
	pod.qos == "BestEffort"
	msg := concat("", [_message, k8s.injection_note(pod)])
	f := result.finding(rego.metadata.chain(), pod.obj, null, msg, {"containers": count(pod.containers)})
}

_message := concat(" ", [
	"no container sets a CPU or memory request or limit, so the pod is BestEffort:",
	"evicted first and given the least CPU under contention",
])
