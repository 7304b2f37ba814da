# METADATA
# title: Static CPU Manager without reserved CPU
# description: >-
#   A KubeletConfiguration enables the static CPU Manager but reserves no CPU for the system or
#   Kubernetes daemons.
# custom:
#   id: PF205
#   severity: error
#   slug: cpu-manager-no-reserved-cpu
#   source: >-
#     Kubernetes documentation, CPU Management Policies
#   rationale: >-
#     The static policy needs a non-zero CPU reservation (kubeReserved, systemReserved or
#     reservedSystemCPUs); without it the kubelet refuses to start.
#   fix: >-
#     Set reservedSystemCPUs (e.g. "0") or a CPU amount in kubeReserved or systemReserved.
#   example: |
#     kind: KubeletConfiguration
#     cpuManagerPolicy: static
package podfit.cpu.cpu_manager_no_reserved_cpu

import data.podfit.lib.kubelet
import data.podfit.lib.quantity
import data.podfit.lib.result

findings contains f if {
	some obj in kubelet.configurations
	kubelet.static_policy(obj)
	not _reserves_cpu(obj)
	f := result.finding(rego.metadata.chain(), obj, null, _message, {"cpu_manager_policy": "static"})
}

_message := concat(" ", [
	"the static CPU Manager needs CPU reserved by reservedSystemCPUs, kubeReserved or systemReserved;",
	"the kubelet will refuse to start",
])

_reserves_cpu(obj) if {
	is_string(obj.reservedSystemCPUs)
	trim_space(obj.reservedSystemCPUs) != ""
}

_reserves_cpu(obj) if {
	some key in ["kubeReserved", "systemReserved"]
	value := obj[key].cpu
	value != null
	not quantity.cpu_millicores(value) == 0
}
