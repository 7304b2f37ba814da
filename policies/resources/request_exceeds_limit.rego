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
#   rationale: >-
#     The API server rejects such a pod ("must be less than or equal to limit"); it never runs.
#   fix: >-
#     Lower the request to at most the limit, or raise the limit.
#   example: |
#     resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}
package podfit.resources.request_exceeds_limit

import data.podfit.lib.k8s
import data.podfit.lib.result

findings contains f if {
	some pod in k8s.pods
	some c in pod.containers
	some res in ["cpu", "memory"]
	c.has.requests[res]
	request := c.request[res]
	limit := c.limit[res]
	request > limit
	msg := concat("", [
		k8s.container_word(c), " \"", c.name, "\" requests ", k8s.fmt(res, request), " ", res,
		", above its limit ", k8s.fmt(res, limit), "; the API server rejects the pod",
	])
	details := {"resource": res, "request": request, "limit": limit}
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, details)
}
