package podfit.resources.init_container_request_missing_test

import data.podfit.resources.cpu_request_missing
import data.podfit.resources.init_container_request_missing
import data.podfit.resources.memory_request_missing

_pod(init, app) := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "p"},
	"spec": {"initContainers": [init], "containers": [app]},
}

_app := {"name": "app", "image": "a:1", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}

test_info_where_the_app_containers_reserve_the_pod if {
	pod := _pod({"name": "migrate", "image": "a:1"}, _app)
	results := init_container_request_missing.findings with input as pod
	results == {{
		"container": "migrate",
		"details": {"resources": ["cpu", "memory"]},
		"rule": "PF113",
		"severity": "info",
		"message": concat("", [
			"init container \"migrate\" sets no CPU or memory request; it runs alone, before the app containers, ",
			"inside the pod's reservation (500m CPU and 512Mi of memory), so the pod's request and QoS class are ",
			"the same with or without it",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
	count(cpu_request_missing.findings) == 0 with input as pod
	count(memory_request_missing.findings) == 0 with input as pod
}

test_one_resource_only if {
	pod := _pod({"name": "migrate", "image": "a:1", "resources": {"requests": {"cpu": "1"}}}, _app)
	[r.message | some r in init_container_request_missing.findings] == [concat("", [
		"init container \"migrate\" sets no memory request; it runs alone, before the app containers, ",
		"inside the pod's reservation (512Mi of memory), so the pod's request and QoS class are the same with ",
		"or without it",
	])] with input as pod
}

test_error_where_the_pod_requests_none_of_it if {
	app := {"name": "app", "image": "a:1", "resources": {"requests": {"memory": "512Mi"}}}
	pod := _pod({"name": "migrate", "image": "a:1", "resources": {"requests": {"memory": "64Mi"}}}, app)
	{r.container | some r in cpu_request_missing.findings} == {"app", "migrate"} with input as pod
	count(init_container_request_missing.findings) == 0 with input as pod
}

test_error_where_it_keeps_the_pod_from_guaranteed if {
	app := {"name": "app", "image": "a:1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
	pod := _pod({"name": "migrate", "image": "a:1"}, app)
	{r.container | some r in cpu_request_missing.findings} == {"migrate"} with input as pod
	{r.container | some r in memory_request_missing.findings} == {"migrate"} with input as pod
	count(init_container_request_missing.findings) == 0 with input as pod
}

test_a_sidecar_is_an_error if {
	sidecar := {"name": "proxy", "image": "p:1", "restartPolicy": "Always"}
	pod := _pod(sidecar, _app)
	{r.container | some r in cpu_request_missing.findings} == {"proxy"} with input as pod
	count(init_container_request_missing.findings) == 0 with input as pod
}

test_best_effort_pod_is_pf105s if {
	pod := _pod({"name": "migrate", "image": "a:1"}, {"name": "app", "image": "a:1"})
	count(init_container_request_missing.findings) == 0 with input as pod
}

test_error_where_the_pods_request_is_unknown if {
	app := {"name": "app", "image": "a:1", "resources": {"requests": {"cpu": "2cores", "memory": "512Mi"}}}
	pod := _pod({"name": "wait", "image": "a:1"}, app)
	{r.container | some r in cpu_request_missing.findings} == {"wait"} with input as pod
	count(init_container_request_missing.findings) == 0 with input as pod
}
