# METADATA
# title: vSphere Pod with requests but no limits
# description: >-
#   On vSphere Pods, a pod sets requests but no limits, so its requests become a hard ceiling.
# custom:
#   id: PF402
#   severity: warning
#   slug: vsphere-pod-requests-without-limits
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), vSphere Pods (2 CPUs →
#     175k TPS; limit 8 → 252k)
#   requires:
#     - runtime-vsphere-pods
package podfit.vsphere.vsphere_pod_requests_without_limits

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

findings contains f if {
	platform.vsphere_pods
	some pod in k8s.pods
	pod.invalid == 0
	cs := pod.containers
	some c in cs
	_requests(c)
	not _some_limit(cs)
	cpu := sum([x.request.cpu | some x in k8s.running(pod); x.has.requests.cpu])
	memory := sum([x.request.memory | some x in k8s.running(pod); x.has.requests.memory])
	msg := concat("", [
		"the vSphere Pod sets requests but no limits, so its CRX is capped at its requests (",
		k8s.fmt_cpu(cpu), " CPU, ", k8s.fmt_memory(memory), " memory) and cannot burst",
	])
	f := result.finding(rego.metadata.chain(), pod.obj, null, msg, {"cpu_requests": cpu, "memory_requests": memory})
}

_some_limit(cs) if {
	some c in cs
	some res in ["cpu", "memory"]
	c.has.limits[res]
}

_requests(c) if c.has.requests.cpu

_requests(c) if c.has.requests.memory
