# METADATA
# title: CPU limit at risk of CFS over-throttling
# description: >-
#   A CPU limit enforced by CFS quota on nodes with more logical CPUs than the quota has 5 ms slices
#   (limit × period / slice).
# custom:
#   id: PF202
#   severity: warning
#   slug: cpu-limit-throttle-risk
#   source: >-
#     Kubernetes CPU limits vs bare metal study (2021), CFS bandwidth control
#   requires:
#     - node-logical-cpus
#   rationale: >-
#     CFS bandwidth control hands quota to CPUs in 5 ms slices. When a multi-threaded container's
#     threads spread over more CPUs than the quota has slices, the pool drains early and the whole
#     group is throttled for the rest of the period. The study saw about 5 s of throttled time per
#     period on a 256-CPU node for a 1.5-CPU limit, 40 times more than on 4-vCPU nodes. The node is
#     the largest the pod may land on: its nodeSelector, required node affinity and tolerations
#     against the pools' labels and taints.
#   fix: >-
#     Use whole CPUs in a Guaranteed pod with the static CPU Manager, raise the limit, or drop the
#     CPU limit and rely on requests.
#   example: |
#     resources: {requests: {cpu: 1500m}, limits: {cpu: 1500m}}   # on a 256-CPU bare-metal node
package podfit.cpu.cpu_limit_throttle_risk

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

findings contains f if {
	not platform.vsphere_pods
	some pod in k8s.pods
	not _windows_only(pod)
	cpus := platform.node_logical_cpus_of(pod.obj)
	period := platform.cfs_period_us
	slice := platform.cfs_slice_us
	some c in pod.containers
	limit := c.limit.cpu
	limit > 0
	not _exclusive_cores(pod, limit)

	# slices per period = limit × period / slice, compared without division
	limit * period < (cpus * slice) * 1000
	quota := limit * period
	slices := floor(quota / (slice * 1000))
	msg := concat("", [
		k8s.container_word(c), " \"", c.name, "\" has a CPU limit of ", k8s.fmt_cpu(limit), ": ",
		k8s.num(slices), " slices of ", k8s.num(slice), " µs per ", k8s.num(period), " µs period, ",
		"fewer than the node's ", k8s.num(cpus), " logical CPUs, so its threads can be throttled while quota sits unused",
	])
	details := {"cpu_limit": limit, "slices": slices, "node_logical_cpus": cpus, "period_us": period, "slice_us": slice}
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, details)
}

# Windows nodes have no CFS quota: a pod whose nodeSelector, or every term of its required node
# affinity, rules Linux nodes out is not rated (PF203 reads the same from podfit.facts).
_os_keys := {"kubernetes.io/os", "beta.kubernetes.io/os"}

_windows_only(pod) if {
	some key in _os_keys
	v := k8s.pod_spec(pod.obj).nodeSelector[key]
	v != "linux"
}

_windows_only(pod) if {
	terms := k8s.pod_spec(pod.obj).affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
	count(terms) > 0
	every term in terms {
		some e in term.matchExpressions
		_excludes_linux(e)
	}
}

_excludes_linux(e) if {
	e.key in _os_keys
	e.operator == "In"
	not "linux" in e.values
}

_excludes_linux(e) if {
	e.key in _os_keys
	e.operator == "NotIn"
	"linux" in e.values
}

_excludes_linux(e) if {
	e.key in _os_keys
	e.operator == "DoesNotExist"
}

# The static CPU Manager pins whole-CPU containers of Guaranteed pods to exclusive cores.
_exclusive_cores(pod, limit) if {
	platform.cpu_manager_policy == "static"
	pod.qos == "Guaranteed"
	k8s.whole_cpus(limit)
}
