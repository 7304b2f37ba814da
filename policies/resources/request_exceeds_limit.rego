# METADATA
# title: Request above limit
# description: >-
#   A container's CPU or memory request is larger than its limit.
# custom:
#   id: PF103
#   severity: error
#   slug: request-exceeds-limit
#   source: >-
#     Kubernetes API validation (resource requirements)
package podfit.resources.request_exceeds_limit

import data.podfit.lib.k8s
import data.podfit.lib.result

deny contains r if {
	some pod in k8s.pods
	some c in pod.containers
	some res in ["cpu", "memory"]
	c.has.requests[res]
	request := c.request[res]
	limit := c.limit[res]
	request > limit
	msg := sprintf("%s %s: %s \"%s\" requests %s %s, above its limit %s; the API server rejects the pod", [pod.kind, pod.name, k8s.container_word(c), c.name, k8s.fmt(res, request), res, k8s.fmt(res, limit)])
	r := result.make(pod.obj, "PF103", "error", msg, c.name, {"resource": res, "request": request, "limit": limit})
}
