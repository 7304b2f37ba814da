package podfit.resources.best_effort_pod_test

import data.podfit.resources.best_effort_pod

test_deny_best_effort if {
	results := best_effort_pod.findings with input as {
		"apiVersion": "apps/v1",
		"kind": "ReplicationController",
		"metadata": {"name": "w"},
		"spec": {"template": {
			"metadata": {},
			"spec": {"containers": [{"name": "a", "image": "img:1"}, {"name": "b", "image": "img:1"}]},
		}},
	}
	results == {{
		"container": null,
		"details": {"containers": 2},
		"rule": "PF105",
		"severity": "error",
		"message": concat(" ", [
			"no container sets a CPU or memory request or limit, so the pod is BestEffort: evicted first and given the",
			"least CPU under contention",
		]),
		"object": {"apiVersion": "apps/v1", "kind": "ReplicationController", "namespace": "", "name": "w"},
	}}
}

test_deny_zero_requests if {
	results := best_effort_pod.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "0", "memory": "0"}}}]},
	}
	results == {{
		"container": null,
		"details": {"containers": 1},
		"rule": "PF105",
		"severity": "error",
		"message": concat(" ", [
			"no container sets a CPU or memory request or limit, so the pod is BestEffort: evicted first and given the",
			"least CPU under contention",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_allow_burstable if {
	results := best_effort_pod.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "100m"}}}]},
	}
	count(results) == 0
}

test_allow_on_vsphere_pods if {
	results := best_effort_pod.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "a", "image": "img:1"}]},
	}
		with data.podfit.platform as {"runtime": "vsphere-pods"}
	count(results) == 0
}

test_allow_invalid if {
	results := best_effort_pod.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "x"}}}]},
	}
	count(results) == 0
}

_meshed_pod := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "p", "namespace": "shop"},
	"spec": {"containers": [{"name": "a", "image": "img:1"}]},
}

test_allow_with_injected_istio_proxy if {
	proxy := {
		"name": "istio-proxy",
		"request": {"cpu": 100, "memory": 134217728},
		"limit": {"cpu": 2000, "memory": 1073741824},
	}
	results := best_effort_pod.findings with input as _meshed_pod
		with data.podfit.platform as {"workloads": {"Pod/shop/p": {"injected": [proxy]}}}
	count(results) == 0
}

test_deny_with_injected_proxy_without_resources if {
	proxy := {"name": "linkerd-proxy", "request": {}, "limit": {}}
	results := best_effort_pod.findings with input as _meshed_pod
		with data.podfit.platform as {"workloads": {"Pod/shop/p": {"injected": [proxy]}}}
	results == {{
		"container": null,
		"details": {"containers": 1},
		"rule": "PF105",
		"severity": "error",
		"message": concat(" ", [
			"no container sets a CPU or memory request or limit, so the pod is BestEffort: evicted first and given the",
			"least CPU under contention (counting the linkerd-proxy container its service mesh injects)",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "shop", "name": "p"},
	}}
}
