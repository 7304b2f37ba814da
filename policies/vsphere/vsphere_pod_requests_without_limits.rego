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
#     - runtime vsphere-pods
package podfit.vsphere.vsphere_pod_requests_without_limits

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

deny contains r if {
	platform.vsphere_pods
	some obj in k8s.workloads
	not k8s.any_invalid(obj)
	cs := k8s.containers(obj)
	some c in cs
	_requests(c)
	every x in cs {
		not k8s.has(x, "limits", "cpu")
		not k8s.has(x, "limits", "memory")
	}
	cpu := sum([k8s.request(x, "cpu") | some x in k8s.running(obj); k8s.has(x, "requests", "cpu")])
	memory := sum([k8s.request(x, "memory") | some x in k8s.running(obj); k8s.has(x, "requests", "memory")])
	msg := sprintf("%s: the vSphere Pod sets requests but no limits, so its CRX is capped at its requests (%s CPU, %s memory) and cannot burst", [k8s.describe(obj), k8s.fmt_cpu(cpu), k8s.fmt_memory(memory)])
	r := result.make("PF402", "warning", msg, null, {"cpu_requests": cpu, "memory_requests": memory})
}

_requests(c) if k8s.has(c, "requests", "cpu")

_requests(c) if k8s.has(c, "requests", "memory")
