# METADATA
# title: Pod larger than a NUMA node
# description: >-
#   A pod's CPU or memory request or limit is larger than one NUMA node.
# custom:
#   id: PF302
#   severity: warning
#   slug: pod-exceeds-numa-node
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021); vSphere native pods NUMA
#     blog (2019)
#   requires:
#     - numa-node
#   rationale: >-
#     A pod that cannot fit one NUMA node pays for remote memory accesses; several smaller replicas
#     run faster. A NUMA node's CPUs are counted as a pod's are: its physical cores under vSphere,
#     whose NUMA scheduler places vCPUs on cores, and its logical CPUs (cores × threads) on bare
#     metal, where a Kubernetes CPU is a hardware thread.
#   fix: >-
#     Scale out into more, smaller replicas that each fit one NUMA node.
#   example: |
#     resources: {requests: {cpu: "24"}}   # on 16-core NUMA nodes
package podfit.numa.pod_exceeds_numa_node

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

findings contains f if {
	some pod in k8s.pods
	some check in _checks(pod)
	msg := concat("", [
		"the pod's ", check.resource, " ", check.kind, " is ", k8s.fmt(check.resource, check.value),
		", more than one NUMA node (", k8s.fmt(check.resource, check.numa), "): scale out into smaller replicas",
	])
	f := result.finding(rego.metadata.chain(), pod.obj, null, msg, check)
}

_numa contains ["cpu", platform.numa_cpus * 1000]

_numa contains ["memory", platform.numa_memory]

# The request when it is too large, else the limit when that is (one result per resource).
_checks(pod) := {c |
	some [res, numa] in _numa
	_may_exceed(pod, res, numa)
	some c in _check(pod, res, numa)
}

# A cheap bound first: the pod's request (limit) is at most the sum of every container's request
# (limit) plus the overhead, so most pods need no exact computation.
_may_exceed(pod, res, numa) if {
	sum([object.get(c.request, res, 0) | some c in pod.containers]) + object.get(pod.overhead, res, 0) > numa
}

_may_exceed(pod, res, numa) if {
	sum([object.get(c.limit, res, 0) | some c in pod.containers]) + object.get(pod.overhead, res, 0) > numa
}

_check(pod, res, numa) := [{"resource": res, "kind": "request", "value": v, "numa": numa}] if {
	v := k8s.pod_request(pod, res)
	v > numa
} else := [{"resource": res, "kind": "limit", "value": v, "numa": numa}] if {
	v := k8s.pod_limit(pod, res)
	v > numa
} else := []
