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
	not platform.linux_excluded(pod.obj)
	below := platform.cfs_screen_limit_of(pod.obj)
	cpus := platform.node_logical_cpus_of(pod.obj)
	period := platform.cfs_period_us
	slice := platform.cfs_slice_us
	some c in pod.containers
	limit := c.limit.cpu
	limit > 0
	limit < below
	not platform.exclusive_cpus(pod.obj, c.name)
	slices := floor((limit * period) / (slice * 1000))
	msg := concat("", [
		k8s.container_word(c), " \"", c.name, "\" has a CPU limit of ", k8s.fmt_cpu(limit), ": ",
		k8s.num(slices), " slices of ", k8s.num(slice), " µs per ", k8s.num(period), " µs period, ",
		"fewer than the node's ", k8s.num(cpus), " logical CPUs, so its threads can be throttled while quota sits unused",
		_condition,
	])
	details := {"cpu_limit": limit, "slices": slices, "node_logical_cpus": cpus, "period_us": period, "slice_us": slice}
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, details)
}

# Without facts computed over the workloads, the message names what the rule takes of this one.
default _condition := ""

_condition := concat(" ", [
	" (if its pods run on Linux nodes of that size and it has no exclusive CPUs: the facts were computed",
	"without the workloads; give podfit platform-data the manifests)",
]) if {
	not platform.workloads_known
}
