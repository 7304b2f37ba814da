# METADATA
# title: Memory request missing
# description: >-
#   A container sets no memory request: an app container, a sidecar, or a one-shot init container
#   where that changes the pod's effective request or its QoS class (otherwise PF113, info).
# custom:
#   id: PF102
#   severity: error
#   slug: memory-request-missing
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Select a virtual machine
#     size for worker nodes"
#   rationale: >-
#     Memory requests drive placement and the memory of a vSphere Pod's CRX. A pod without one may
#     be placed on a node that cannot hold its working set and is among the first evicted under
#     memory pressure.
#   fix: >-
#     Set resources.requests.memory to the container's working set (e.g. "512Mi").
#   example: |
#     containers:
#       - name: app
#         image: app:1
#         resources: {requests: {cpu: 500m}}
package podfit.resources.memory_request_missing

import data.podfit.lib.dra
import data.podfit.lib.init
import data.podfit.lib.k8s
import data.podfit.lib.result

findings contains f if {
	some pod in k8s.pods
	some c in pod.containers
	not c.has.requests.memory
	not c.has.limits.memory
	not k8s.pod_level_sets(pod, "memory")
	not dra.from_claim(pod, c)
	not k8s.missing_reported_elsewhere(pod, c)
	init.request_matters(pod, c, "memory")
	msg := concat("", [k8s.container_word(c), " \"", c.name, "\" sets no memory request", k8s.injection_note(pod)])
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, {"init_container": c.init})
}
