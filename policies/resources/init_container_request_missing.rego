# METADATA
# title: Init container request missing
# description: >-
#   A one-shot init container sets no CPU or memory request where that changes neither the pod's
#   effective request nor its QoS class (otherwise it is PF101/PF102).
# custom:
#   id: PF113
#   severity: info
#   slug: init-container-request-missing
#   source: >-
#     Kubernetes, "Init Containers" (resource sharing within containers: the effective init
#     request is the highest of any init container, the pod's the higher of that and the app
#     containers' sum)
#   rationale: >-
#     A one-shot init container runs alone, before the app containers start, inside the pod's
#     reservation: the pod requests the larger of its app containers' sum and its largest init
#     container. Where the app containers already request the resource, and the pod is Burstable
#     anyway, the missing request leaves the pod's request and QoS class as they are; only an init
#     container that needs more than the app containers is under-reserved. Advice, not an error.
#   fix: >-
#     Set the init container's requests to what it needs when that exceeds the app containers'
#     (a migration or a cache warm-up), or leave them out.
#   example: |
#     initContainers:
#       - {name: migrate, image: app:1}
#     containers:
#       - name: app
#         image: app:1
#         resources: {requests: {cpu: 500m, memory: 512Mi}}
package podfit.resources.init_container_request_missing

import data.podfit.lib.init
import data.podfit.lib.k8s
import data.podfit.lib.result

findings contains f if {
	some pod in k8s.pods
	some c in pod.containers
	c.init
	not k8s.sidecar(c)
	not k8s.missing_reported_elsewhere(pod, c)
	missing := [res | some res in ["cpu", "memory"]; _unset(pod, c, res)]
	count(missing) > 0
	msg := concat("", [
		"init container \"", c.name, "\" sets no ", _words(missing), " request; it runs alone, before the app ",
		"containers, inside the pod's reservation (", _reservation(pod, missing),
		"), so the pod's request and QoS class are the same with or without it",
	])
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, {"resources": missing})
}

_unset(pod, c, res) if {
	not c.has.requests[res]
	not c.has.limits[res]
	not k8s.pod_level_sets(pod, res)
	not init.request_matters(pod, c, res)
}

_words(["cpu"]) := "CPU"

_words(["memory"]) := "memory"

_words(["cpu", "memory"]) := "CPU or memory"

_reservation(pod, missing) := concat(" and ", [concat(" ", [k8s.fmt(res, k8s.pod_request(pod, res)), _name(res)]) |
	some res in missing
])

_name("cpu") := "CPU"

_name("memory") := "of memory"
