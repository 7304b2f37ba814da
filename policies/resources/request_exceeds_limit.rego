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
	some obj in k8s.workloads
	some c in k8s.containers(obj)
	some res in ["cpu", "memory"]
	k8s.has(c, "requests", res)
	request := k8s.request(c, res)
	limit := k8s.limit(c, res)
	request > limit
	msg := sprintf("%s: %s %q requests %s %s, above its limit %s; the API server rejects the pod", [k8s.describe(obj), k8s.container_word(c), c.name, k8s.fmt(res, request), res, k8s.fmt(res, limit)])
	r := result.make("PF103", "error", msg, c.name, {"resource": res, "request": request, "limit": limit})
}
