# METADATA
# title: Memory limit missing
# description: >-
#   A container sets a memory request but no memory limit, after the namespace's LimitRange
#   defaults.
# custom:
#   id: PF111
#   severity: warning
#   slug: memory-limit-missing
#   masked_by: [PF102, PF105]
#   options:
#     - name: init-containers
#       type: boolean
#       default: false
#       doc: Also report one-shot init containers without a memory limit.
#   source: >-
#     Kubernetes, "Resource Management for Pods and Containers" (memory limits are enforced by the
#     kernel's OOM killer, not throttled) and "Node-pressure Eviction" (Burstable pods using more
#     than they request are evicted first); Performance Best Practices for Kubernetes with VMware
#     Tanzu (2021), "Specifying container resource requests and limits"
#   rationale: >-
#     Memory cannot be throttled. A container without a memory limit takes node memory until the
#     node runs short, and then the kubelet evicts, or the kernel's OOM killer kills, whichever pod
#     it picks: often a neighbour that stayed within its request. The scheduler placed the pod by
#     its request, so every pod on that node is exposed to the gap between the request and whatever
#     the container grows to.
#   fix: >-
#     Set resources.limits.memory at the container's measured peak plus a margin (PF107 and PF108
#     check it against measured usage), or, for a pod that needs memory limits to stay Guaranteed,
#     equal to the request. A pod-level memory limit (spec.resources) bounds its containers
#     together and is enough.
#   example: |
#     resources:
#       requests: {cpu: 250m, memory: 256Mi}
#       limits: {cpu: "1"}
package podfit.resources.memory_limit_missing

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

# A BestEffort pod is PF105's alone and a container with no memory request PF102's (one cause, one
# finding; masked_by tells `podfit fix`). One-shot init containers are left out
# unless the init-containers option is on: they end before the app starts. vSphere Pods are left
# out: their CRX caps memory (PF402, PF403). The request and limit are the effective ones, the
# namespace's LimitRange defaults included (data.podfit.namespaces).
findings contains f if {
	not platform.vsphere_pods
	some pod in k8s.pods
	pod.qos != "BestEffort"
	not pod.pod_level.limit.memory
	some c in pod.containers
	_reported(c, result.option(rego.metadata.chain(), "init-containers"))
	not c.has.limits.memory
	request := c.request.memory
	swaps := _swaps(pod)
	msg := concat("", [
		_word(c), " \"", c.name, "\" requests ", k8s.fmt_memory(request), " of memory and sets no memory limit: ",
		"it can take node memory until the node runs short and the kubelet evicts, or the OOM killer kills, ",
		"a pod of its choosing", _swap_note[swaps],
	])
	details := object.union(
		{"memory_request": request, "init_container": _one_shot(c), "sidecar": _sidecar(c)},
		_swap_details[swaps],
	)
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, details)
}

_reported(c, _) if not _one_shot(c)

_reported(_, true)

_one_shot(c) := c.init if not k8s.sidecar(c)

else := false

_sidecar(c) if k8s.sidecar(c)

else := false

_word(c) := "sidecar" if k8s.sidecar(c)

else := k8s.container_word(c)

# _swaps(pod): with memorySwap LimitedSwap in force on the nodes (data.podfit.platform.kubelet),
# the kubelet gives the containers of a Burstable pod a swap limit (their request's share of the
# node's swap), except in critical pods (GetContainerSwapBehavior, IsCriticalPod).
default _swaps(_) := false

_swaps(pod) if {
	platform.limited_swap
	not _critical(pod)
}

_critical(pod) if k8s.pod_spec(pod.obj).priorityClassName in {"system-node-critical", "system-cluster-critical"}

_swap_note := {
	false: "",
	true: concat("", [
		" (memorySwap LimitedSwap: on nodes with swap it first pages out up to its request's share ",
		"of the swap, which slows it and its neighbours without bounding it)",
	]),
}

_swap_details := {false: {}, true: {"limited_swap": true}}
