package podfit.resources.request_exceeds_limit_test

import data.podfit.resources.request_exceeds_limit

test_deny_cpu if {
	results := request_exceeds_limit.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "1"}},
		}]},
	}
	results == {{
		"container": "a",
		"details": {"limit": 1000, "request": 2000, "resource": "cpu"},
		"rule": "PF103",
		"severity": "error",
		"message": "container \"a\" requests 2 cpu, above its limit 1; the API server rejects the pod",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_deny_memory_exact if {
	results := request_exceeds_limit.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "1", "memory": "600Mi"}, "limits": {"memory": "0.5Gi"}},
		}]},
	}
	results == {{
		"container": "a",
		"details": {"limit": 536870912, "request": 629145600, "resource": "memory"},
		"rule": "PF103",
		"severity": "error",
		"message": "container \"a\" requests 600Mi memory, above its limit 512Mi; the API server rejects the pod",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_deny_init_container if {
	results := request_exceeds_limit.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {
			"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
			"initContainers": [{
				"name": "i",
				"image": "img:1",
				"resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}, "limits": {"cpu": "1.4"}},
			}],
		},
	}
	results == {{
		"container": "i",
		"details": {"limit": 1400, "request": 1500, "resource": "cpu"},
		"rule": "PF103",
		"severity": "error",
		"message": "init container \"i\" requests 1500m cpu, above its limit 1400m; the API server rejects the pod",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_allow_equal_other_units if {
	results := request_exceeds_limit.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "0.5", "memory": 1073741824}, "limits": {"cpu": "500m", "memory": "1Gi"}},
		}]},
	}
	count(results) == 0
}

test_allow_invalid_limit if {
	results := request_exceeds_limit.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "1 CPU"}},
		}]},
	}
	count(results) == 0
}
