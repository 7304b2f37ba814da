package podfit.resources.cpu_request_missing_test

import data.podfit.resources.cpu_request_missing

test_deny_app_container if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "app", "image": "img:1", "resources": {"requests": {"memory": "1Gi"}}}]},
	}
	results == {{
		"container": "app",
		"details": {"init_container": false},
		"rule": "PF101",
		"severity": "error",
		"message": "container \"app\" sets no CPU request",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_deny_init_container_in_cronjob if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "apps/v1",
		"kind": "CronJob",
		"metadata": {"name": "w"},
		"spec": {
			"schedule": "* * * * *",
			"jobTemplate": {"spec": {"template": {
				"metadata": {},
				"spec": {
					# Guaranteed but for the init container, which keeps the pod Burstable
					"containers": [{"name": "app", "image": "img:1", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}}],
					"initContainers": [{"name": "init", "image": "img:1", "resources": {"requests": {"memory": "1Gi"}}}],
				},
			}}},
		},
	}
	results == {{
		"container": "init",
		"details": {"init_container": true},
		"rule": "PF101",
		"severity": "error",
		"message": "init container \"init\" sets no CPU request",
		"object": {"apiVersion": "apps/v1", "kind": "CronJob", "namespace": "", "name": "w"},
	}}
}

test_deny_native_sidecar_named_as_such if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {
			"containers": [{"name": "app", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
			"initContainers": [{
				"name": "proxy", "image": "img:1", "restartPolicy": "Always",
				"resources": {"requests": {"memory": "64Mi"}},
			}],
		},
	}
	results == {{
		"container": "proxy",
		"details": {"init_container": true},
		"rule": "PF101",
		"severity": "error",
		"message": "sidecar \"proxy\" sets no CPU request",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_deny_list_items if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "List",
		"items": [
			{
				"apiVersion": "v1",
				"kind": "Pod",
				"metadata": {"name": "one"},
				"spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"memory": "1Gi"}}}]},
			},
			{
				"apiVersion": "apps/v1",
				"kind": "Deployment",
				"metadata": {"name": "two"},
				"spec": {"template": {
					"metadata": {},
					"spec": {"containers": [{"name": "b", "image": "img:1", "resources": {"requests": {"memory": "1Gi"}}}]},
				}},
			},
			"not-an-object",
		],
	}
	results == {
		{
			"container": "a",
			"details": {"init_container": false},
			"rule": "PF101",
			"severity": "error",
			"message": "container \"a\" sets no CPU request",
			"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "one"},
		},
		{
			"container": "b",
			"details": {"init_container": false},
			"rule": "PF101",
			"severity": "error",
			"message": "container \"b\" sets no CPU request",
			"object": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "", "name": "two"},
		},
	}
}

test_deny_unnamed_container if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {
			"initContainers": [{"image": "x", "resources": {"requests": {"memory": "1Gi"}}}],
			"containers": [{"image": "x", "resources": {"requests": {"memory": "1Gi"}}}],
		},
	}
	results == {
		{
			"container": "initContainers[0]",
			"details": {"init_container": true},
			"rule": "PF101",
			"severity": "error",
			"message": "init container \"initContainers[0]\" sets no CPU request",
			"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
		},
		{
			"container": "containers[0]",
			"details": {"init_container": false},
			"rule": "PF101",
			"severity": "error",
			"message": "container \"containers[0]\" sets no CPU request",
			"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
		},
	}
}

test_allow_request if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "app",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
		}]},
	}
	count(results) == 0
}

test_allow_limit_only if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "app", "image": "img:1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
	}
	count(results) == 0
}

test_allow_best_effort_reported_by_pf105 if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "app", "image": "img:1"}]},
	}
	count(results) == 0
}

test_allow_vsphere_pod_reported_by_pf401 if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [
			{"name": "app", "image": "img:1", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
			{"name": "empty", "image": "img:1"},
		]},
	}
		with data.podfit.platform as {"runtime": "vsphere-pods"}
	count(results) == 0
}

test_allow_not_a_workload if {
	results := cpu_request_missing.findings with input as {
		"apiVersion": "v1",
		"kind": "Service",
		"metadata": {"name": "s"},
		"spec": {},
	}
	count(results) == 0
}

test_allow_cpu_set_at_pod_level if {
	pod := {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {
			"resources": {"limits": {"cpu": "1"}},
			"containers": [{"name": "app", "image": "img:1", "resources": {"requests": {"memory": "1Gi"}}}],
		},
	}
	results := cpu_request_missing.findings with input as pod
	results == set()
}

test_deny_app_container_beside_injected_proxy if {
	proxy := {
		"name": "istio-proxy",
		"request": {"cpu": 100, "memory": 134217728},
		"limit": {"cpu": 2000, "memory": 1073741824},
	}
	results := cpu_request_missing.findings with input as {
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {"name": "web", "namespace": "shop"},
		"spec": {"template": {"metadata": {}, "spec": {"containers": [{"name": "app", "image": "img:1"}]}}},
	}
		with data.podfit.platform as {"workloads": {"Deployment/shop/web": {"injected": [proxy]}}}
	results == {{
		"container": "app",
		"details": {"init_container": false},
		"rule": "PF101",
		"severity": "error",
		"message": "container \"app\" sets no CPU request (counting the istio-proxy container its service mesh injects)",
		"object": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web"},
	}}
}
