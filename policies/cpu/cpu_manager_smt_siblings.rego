# METADATA
# title: Static CPU Manager may split cores across containers
# description: >-
#   A KubeletConfiguration enables the static CPU Manager on SMT hosts without the full-pcpus-only
#   policy option.
# custom:
#   id: PF204
#   severity: warning
#   slug: cpu-manager-smt-siblings
#   source: >-
#     Kubernetes CPU limits vs bare metal study (2021), SMT sibling placement
#   rationale: >-
#     Without full-pcpus-only the static policy may hand a 2-CPU container the two hyper-threads of
#     one physical core, so it gets one core's throughput, and may share cores with its neighbours.
#   fix: >-
#     Set cpuManagerPolicyOptions: {full-pcpus-only: "true"} in the KubeletConfiguration.
#   example: |
#     kind: KubeletConfiguration
#     cpuManagerPolicy: static
package podfit.cpu.cpu_manager_smt_siblings

import data.podfit.lib.kubelet
import data.podfit.lib.platform
import data.podfit.lib.result

findings contains f if {
	platform.smt
	some obj in kubelet.configurations
	kubelet.static_policy(obj)
	not kubelet.option_on(obj, "full-pcpus-only")
	f := result.finding(rego.metadata.chain(), obj, null, _message, {"cpu_manager_policy": "static"})
}

_message := concat(" ", [
	"the static CPU Manager runs on SMT hosts without the full-pcpus-only option,",
	"so a container can get two hyper-threads of one core",
])
