package podfit.lib.dra_test

import data.podfit.lib.dra
import data.podfit.lib.k8s
import data.podfit.resources.cpu_request_missing
import data.podfit.resources.memory_request_missing

_pod := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "p"},
	"spec": {
		"resourceClaims": [{"name": "cpus", "resourceClaimTemplateName": "exclusive-cpus"}],
		"initContainers": [{
			"name": "init", "image": "img:1",
			"resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
		}],
		"containers": [
			{"name": "app", "image": "img:1", "resources": {"claims": [{"name": "cpus"}]}},
			{"name": "side", "image": "img:1"},
		],
	},
}

_gate_on := {"kubelet": {"dra_node_allocatable": true}}

_gate_off := {"kubelet": {"dra_node_allocatable": false}}

test_claims_of_a_container if {
	pods := k8s.pods with input as _pod
	pod := pods[0]
	dra.claims(pod, pod.containers[1]) == {"cpus"}
	dra.claims(pod, pod.containers[2]) == set()
	dra.claims(pod, pod.containers[0]) == set()
}

test_claim_container_not_missing_with_the_gate if {
	pf101 := cpu_request_missing.findings with input as _pod with data.podfit.platform as _gate_on
	{f.container | some f in pf101} == {"side"}
	pf102 := memory_request_missing.findings with input as _pod with data.podfit.platform as _gate_on
	{f.container | some f in pf102} == {"side"}
}

test_claim_container_missing_without_the_gate if {
	pf101 := cpu_request_missing.findings with input as _pod with data.podfit.platform as _gate_off
	{f.container | some f in pf101} == {"app", "side"}
	pf102 := memory_request_missing.findings with input as _pod
	{f.container | some f in pf102} == {"app", "side"}
}
