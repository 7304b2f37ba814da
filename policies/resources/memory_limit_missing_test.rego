package podfit.resources.memory_limit_missing_test

import data.podfit.resources.memory_limit_missing

_deployment(spec) := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "api", "namespace": "shop"},
	"spec": {"template": {"metadata": {}, "spec": spec}},
}

_api := {"name": "api", "image": "img:1", "resources": {
	"requests": {"cpu": "250m", "memory": "512Mi"},
	"limits": {"cpu": "1"},
}}

_bounded := {"name": "envoy", "image": "img:1", "resources": {
	"requests": {"memory": "64Mi"},
	"limits": {"memory": "128Mi"},
}}

_message := concat("", [
	"container \"api\" requests 512Mi of memory and sets no memory limit: it can take node memory until the ",
	"node runs short and the kubelet evicts, or the OOM killer kills, a pod of its choosing",
])

_object := {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "api"}

test_warn_request_without_limit if {
	results := memory_limit_missing.findings with input as _deployment({"containers": [_api, _bounded]})
	results == {{
		"container": "api",
		"details": {"memory_request": 536870912, "init_container": false, "sidecar": false},
		"rule": "PF111",
		"severity": "warning",
		"message": _message,
		"object": _object,
	}}
}

test_warn_limited_swap_unless_critical if {
	swap := {"kubelet": {"limited_swap": true}}
	results := memory_limit_missing.findings with input as _deployment({"containers": [_api]})
		with data.podfit.platform as swap
	results == {{
		"container": "api",
		"details": {"memory_request": 536870912, "init_container": false, "sidecar": false, "limited_swap": true},
		"rule": "PF111",
		"severity": "warning",
		"message": concat("", [
			_message, " (memorySwap LimitedSwap: on nodes with swap it first pages out up to its request's share ",
			"of the swap, which slows it and its neighbours without bounding it)",
		]),
		"object": _object,
	}}
	critical := memory_limit_missing.findings with input as _deployment({
		"priorityClassName": "system-node-critical",
		"containers": [_api],
	})
		with data.podfit.platform as swap
	[f.message | some f in critical] == [_message]
}

test_warn_limitrange_default_request_only if {
	worker := {"name": "w", "image": "img:1", "resources": {"limits": {"cpu": "500m"}}}
	results := memory_limit_missing.findings with input as _deployment({"containers": [worker]})
		with data.podfit.namespaces as {"shop": {"container_defaults": {"request": {"memory": 134217728}, "limit": {}}}}
	[[f.container, f.details.memory_request] | some f in results] == [["w", 134217728]]
}

test_allow_limitrange_default_limit if {
	results := memory_limit_missing.findings with input as _deployment({"containers": [_api]})
		with data.podfit.namespaces as {"shop": {"container_defaults": {"request": {}, "limit": {"memory": 268435456}}}}
	results == set()
}

test_sidecar_always_one_shot_init_with_option if {
	init := {"name": "init", "image": "img:1", "resources": {"requests": {"memory": "16Mi"}}}
	sidecar := {
		"name": "proxy", "image": "img:1", "restartPolicy": "Always",
		"resources": {"requests": {"memory": "32Mi"}},
	}
	pod := _deployment({"initContainers": [init, sidecar], "containers": [_bounded]})
	default_results := memory_limit_missing.findings with input as pod
	{[f.container, f.details.sidecar, f.details.init_container, startswith(f.message, "sidecar ")] |
		some f in default_results
	} == {["proxy", true, false, true]}
	with_init := memory_limit_missing.findings with input as pod
		with data.podfit.options as {"PF111": {"init-containers": true}}
	{[f.container, f.details.init_container, startswith(f.message, "init container ")] |
		some f in with_init
		not f.details.sidecar
	} == {["init", true, true]}
}

test_allow_best_effort_pod_level_limit_no_request_vsphere_pods if {
	bare := {"name": "api", "image": "img:1"}
	memory_limit_missing.findings == set() with input as _deployment({"containers": [bare]})
	memory_limit_missing.findings == set() with input as _deployment({
		"resources": {"limits": {"memory": "1Gi"}},
		"containers": [_api],
	})
	cpu_only := {"name": "api", "image": "img:1", "resources": {"requests": {"cpu": "1"}}}
	memory_limit_missing.findings == set() with input as _deployment({"containers": [cpu_only]})
	memory_limit_missing.findings == set() with input as _deployment({"containers": [_api]})
		with data.podfit.platform as {"runtime": "vsphere-pods"}
}
