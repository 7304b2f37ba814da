# METADATA
# title: Limit above the declared peak
# description: >-
#   A limit is higher than the declared peak (annotation podfit.io/peak-cpu or
#   podfit.io/peak-memory) by more than the tolerance (default 10%).
# custom:
#   id: PF104
#   severity: warning
#   slug: limit-above-peak
#   options:
#     - name: tolerance-percent
#       type: integer
#       minimum: 0
#       default: 10
#       doc: How far above the declared peak a limit may be, in percent of the peak.
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Specifying container
#     resource requests and limits"
#   rationale: >-
#     Limits higher than necessary let one pod take capacity its neighbours were counting on,
#     inflate a vSphere Pod's CRX, and hide the real peak from capacity planning. The study's advice
#     is that limits should not be set higher than necessary.
#   fix: >-
#     Lower the limit to the measured peak plus a small margin, or update the declared peak.
#   example: |
#     metadata: {annotations: {podfit.io/peak-cpu: "1"}}
#     ...
#     resources: {limits: {cpu: "4"}}
package podfit.resources.limit_above_peak

import data.podfit.lib.k8s
import data.podfit.lib.result

findings contains f if {
	some pod in k8s.pods
	annotations := k8s.annotations(pod.obj)
	some res in ["cpu", "memory"]
	peaks := _peaks(pod, res, annotations[_annotation[res]])
	some c in pod.containers
	peak := peaks[c.name]
	limit := c.limit[res]
	tolerance := result.option(rego.metadata.chain(), "tolerance-percent")
	limit * 100 > peak * (100 + tolerance)
	msg := concat("", [
		k8s.container_word(c), " \"", c.name, "\" has a ", res, " limit of ", k8s.fmt(res, limit),
		", more than ", k8s.num(tolerance), "% above its declared peak ", k8s.fmt(res, peak),
	])
	details := {"resource": res, "limit": limit, "peak": peak, "tolerance_percent": tolerance}
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, details)
}

_annotation := {"cpu": "podfit.io/peak-cpu", "memory": "podfit.io/peak-memory"}

# The annotation's value "name=quantity,name=quantity" gives a peak per named container; a single
# quantity is the peak of the only app container.
_peaks(pod, res, value) := peaks if {
	contains(value, "=")
	peaks := {name: peak |
		some entry in split(value, ",")
		kv := split(entry, "=")
		count(kv) == 2
		name := trim_space(kv[0])
		peak := k8s.parse(res, kv[1])
	}
} else := {apps[0].name: peak} if {
	apps := k8s.app_containers(pod)
	count(apps) == 1
	peak := k8s.parse(res, value)
}
