# METADATA
# title: Fractional CPU in a Guaranteed pod
# description: >-
#   A container of a Guaranteed pod asks for one CPU or more, but not a whole number, so the static
#   CPU Manager cannot give it exclusive cores.
# custom:
#   id: PF201
#   severity: warning
#   slug: fractional-cpu-guaranteed
#   source: >-
#     Kubernetes CPU limits vs bare metal study (2021), CPU Manager static policy (small2 →
#     applimit2)
#   rationale: >-
#     With the static CPU Manager policy only Guaranteed containers with integer CPU requests get
#     exclusive cores; a 1.5-CPU container stays in the shared pool under a CFS quota and is
#     throttled. In the study, moving the app server from 1.5 to 2 whole CPUs removed the
#     throttling.
#   fix: >-
#     Round the CPU request and limit to a whole number of CPUs (e.g. 1500m → 2).
#   example: |
#     resources: {requests: {cpu: 1500m, memory: 1Gi}, limits: {cpu: 1500m, memory: 1Gi}}
package podfit.cpu.fractional_cpu_guaranteed

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

# Exclusive cores come only from the static policy: when the facts say the nodes run another, rounding
# gains nothing and the rule is silent; when they do not say, the finding names the condition.
_policy_known if platform.cpu_manager_policy_known == true

_condition := "" if {
	_policy_known
	platform.cpu_manager_policy == "static"
}

_condition := " if the nodes run cpuManagerPolicy: static (the platform does not say)" if not _policy_known

findings contains f if {
	some pod in k8s.pods
	pod.qos == "Guaranteed"
	some c in pod.containers
	cpu := c.request.cpu
	cpu >= 1000
	not k8s.whole_cpus(cpu)
	whole := (floor(cpu / 1000) + 1) * 1000
	msg := concat("", [
		k8s.container_word(c), " \"", c.name, "\" of a Guaranteed pod asks for ", k8s.fmt_cpu(cpu),
		" CPU, not a whole number: the static CPU Manager cannot give it exclusive cores (round to ",
		k8s.fmt_cpu(whole), ")", _condition,
	])
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, {"cpu": cpu, "suggested_cpu": whole})
}
