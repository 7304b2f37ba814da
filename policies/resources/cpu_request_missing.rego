# METADATA
# title: CPU request missing
# description: >-
#   A container sets no CPU request: an app container, a sidecar, or a one-shot init container
#   where that changes the pod's effective request or its QoS class (otherwise PF113, info).
# custom:
#   id: PF101
#   severity: error
#   slug: cpu-request-missing
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Select a virtual machine
#     size for worker nodes"
#   rationale: >-
#     The scheduler places pods by their requests, the kubelet turns the CPU request into CFS
#     shares, and a vSphere Pod's CRX is sized from it. Without a request the pod is placed as if it
#     needed no CPU, lands on busy nodes and gets the smallest share under contention.
#   fix: >-
#     Set resources.requests.cpu to the CPU the container needs at its usual load (e.g. "500m").
#   example: |
#     containers:
#       - name: app
#         image: app:1
#         resources: {requests: {memory: 256Mi}}
package podfit.resources.cpu_request_missing

import data.podfit.lib.dra
import data.podfit.lib.init
import data.podfit.lib.k8s
import data.podfit.lib.result

findings contains f if {
	some pod in k8s.pods
	some c in pod.containers
	not c.has.requests.cpu
	not c.has.limits.cpu
	not k8s.pod_level_sets(pod, "cpu")
	not dra.from_claim(pod, c)
	not k8s.missing_reported_elsewhere(pod, c)
	init.request_matters(pod, c, "cpu")
	msg := concat("", [k8s.container_word(c), " \"", c.name, "\" sets no CPU request", k8s.injection_note(pod)])
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, {"init_container": c.init})
}
