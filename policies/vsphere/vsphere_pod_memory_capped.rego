# METADATA
# title: vSphere Pod memory limit beyond the CRX cap
# description: >-
#   On vSphere Pods, the memory limits add up to more than the CRX cap max(3 × Σ requests, largest
#   limit); memory beyond the cap is never given.
# custom:
#   id: PF403
#   severity: info
#   slug: vsphere-pod-memory-capped
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), vSphere Pods memory sizing
#   requires:
#     - runtime-vsphere-pods
package podfit.vsphere.vsphere_pod_memory_capped

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

findings contains f if {
	platform.vsphere_pods
	some pod in k8s.pods
	pod.invalid == 0
	running := k8s.running(pod)
	limits := [c.limit.memory | some c in running; c.has.limits.memory]
	count(limits) > 0
	requests := sum([c.request.memory | some c in running; c.request.memory])
	cap := k8s.max_of([3 * requests, k8s.max_of(limits)])
	sum(limits) > cap
	msg := concat("", [
		"the vSphere Pod's memory limits add up to ", k8s.fmt_memory(sum(limits)),
		", above the CRX cap max(3 × requests, largest limit) = ", k8s.fmt_memory(cap), "; memory beyond the cap is never given",
	])
	f := result.finding(rego.metadata.chain(), pod.obj, null, msg, {"memory_limits": sum(limits), "memory_requests": requests, "crx_memory": cap})
}
