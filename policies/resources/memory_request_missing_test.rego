package podfit.resources.memory_request_missing_test

import data.podfit.resources.memory_request_missing

test_deny_statefulset if {
	results := memory_request_missing.findings with input as {
		"apiVersion": "apps/v1",
		"kind": "StatefulSet",
		"metadata": {"name": "w"},
		"spec": {"template": {
			"metadata": {},
			"spec": {"containers": [{"name": "db", "image": "img:1", "resources": {"requests": {"cpu": "1"}}}]},
		}},
	}
	results == {{
		"container": "db",
		"details": {"init_container": false},
		"rule": "PF102",
		"severity": "error",
		"message": "container \"db\" sets no memory request",
		"object": {"apiVersion": "apps/v1", "kind": "StatefulSet", "namespace": "", "name": "w"},
	}}
}

test_deny_replicaset_init if {
	results := memory_request_missing.findings with input as {
		"apiVersion": "apps/v1",
		"kind": "ReplicaSet",
		"metadata": {"name": "w"},
		"spec": {"template": {
			"metadata": {},
			"spec": {
				# Guaranteed but for the init container, which keeps the pod Burstable
				"containers": [{"name": "a", "image": "img:1", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}}],
				"initContainers": [{"name": "i", "image": "img:1", "resources": {"requests": {"cpu": "1"}}}],
			},
		}},
	}
	results == {{
		"container": "i",
		"details": {"init_container": true},
		"rule": "PF102",
		"severity": "error",
		"message": "init container \"i\" sets no memory request",
		"object": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "namespace": "", "name": "w"},
	}}
}

test_allow_request if {
	results := memory_request_missing.findings with input as {
		"apiVersion": "apps/v1",
		"kind": "DaemonSet",
		"metadata": {"name": "w"},
		"spec": {"template": {
			"metadata": {},
			"spec": {"containers": [{
				"name": "a",
				"image": "img:1",
				"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
			}]},
		}},
	}
	count(results) == 0
}

test_allow_invalid_elsewhere if {
	results := memory_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "lots", "memory": "1Gi"}},
		}]},
	}
	count(results) == 0
}

test_allow_memory_set_at_pod_level if {
	pod := {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {
			"resources": {"requests": {"memory": "1Gi"}},
			"containers": [{"name": "app", "image": "img:1", "resources": {"requests": {"cpu": "1"}}}],
		},
	}
	results := memory_request_missing.findings with input as pod
	results == set()
}

test_deny_app_container_beside_injected_proxy if {
	proxy := {"name": "linkerd-proxy", "request": {"cpu": 50}, "limit": {}}
	results := memory_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "app", "image": "img:1"}]},
	}
		with data.podfit.platform as {"workloads": {"Pod//p": {"injected": [proxy]}}}
	results == {{
		"container": "app",
		"details": {"init_container": false},
		"rule": "PF102",
		"severity": "error",
		"message": "container \"app\" sets no memory request (counting the linkerd-proxy container its service mesh injects)",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}
