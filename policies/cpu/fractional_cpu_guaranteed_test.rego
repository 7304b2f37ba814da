package podfit.cpu.fractional_cpu_guaranteed_test

import data.podfit.cpu.fractional_cpu_guaranteed

test_deny_app_server_1500m if {
	results := fractional_cpu_guaranteed.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [
			{
				"name": "tomcat",
				"image": "img:1",
				"resources": {"requests": {"cpu": "1500m", "memory": "5Gi"}, "limits": {"cpu": "1.5", "memory": "5Gi"}},
			},
			{
				"name": "sidecar",
				"image": "img:1",
				"resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}},
			},
		]},
	}
	results == {{
		"container": "tomcat",
		"details": {"cpu": 1500, "suggested_cpu": 2000},
		"rule": "PF201",
		"severity": "warning",
		"message": concat(" ", [
			"container \"tomcat\" of a Guaranteed pod asks for 1500m CPU, not a whole number: the static CPU Manager",
			"cannot give it exclusive cores (round to 2) if the nodes run cpuManagerPolicy: static (the platform does not",
			"say)",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_deny_limit_only_guaranteed if {
	results := fractional_cpu_guaranteed.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"limits": {"cpu": "2500m", "memory": "1Gi"}}}]},
	}
	results == {{
		"container": "a",
		"details": {"cpu": 2500, "suggested_cpu": 3000},
		"rule": "PF201",
		"severity": "warning",
		"message": concat(" ", [
			"container \"a\" of a Guaranteed pod asks for 2500m CPU, not a whole number: the static CPU Manager cannot",
			"give it exclusive cores (round to 3) if the nodes run cpuManagerPolicy: static (the platform does not say)",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_allow_whole_cpus if {
	results := fractional_cpu_guaranteed.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [
			{
				"name": "tomcat",
				"image": "img:1",
				"resources": {"requests": {"cpu": "2", "memory": "5Gi"}, "limits": {"cpu": "2000m", "memory": "5Gi"}},
			},
			{
				"name": "big",
				"image": "img:1",
				"resources": {"requests": {"cpu": "10", "memory": "5Gi"}, "limits": {"cpu": "10", "memory": "5Gi"}},
			},
		]},
	}
	count(results) == 0
}

test_allow_burstable if {
	results := fractional_cpu_guaranteed.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}},
		}]},
	}
	count(results) == 0
}

test_allow_sub_core if {
	results := fractional_cpu_guaranteed.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "500m", "memory": "1Gi"}},
		}]},
	}
	count(results) == 0
}

test_deny_static_policy_known if {
	results := fractional_cpu_guaranteed.findings with input as _limit_only_pod
		with data.podfit.platform as {"kubelet": {"cpu_manager_policy": "static", "cpu_manager_policy_known": true}}
	results == {{
		"container": "a",
		"details": {"cpu": 2500, "suggested_cpu": 3000},
		"rule": "PF201",
		"severity": "warning",
		"message": concat(" ", [
			"container \"a\" of a Guaranteed pod asks for 2500m CPU, not a whole number: the static CPU Manager cannot",
			"give it exclusive cores (round to 3)",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_allow_none_policy_known if {
	results := fractional_cpu_guaranteed.findings with input as _limit_only_pod
		with data.podfit.platform as {"kubelet": {"cpu_manager_policy": "none", "cpu_manager_policy_known": true}}
	count(results) == 0
}

_limit_only_pod := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "p"},
	"spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"limits": {"cpu": "2500m", "memory": "1Gi"}}}]},
}
