package podfit.cpu.cpu_limit_throttle_risk_test

import data.podfit.cpu.cpu_limit_throttle_risk

test_deny_1500m_on_256_cpus if {
	results := cpu_limit_throttle_risk.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "tomcat",
			"image": "img:1",
			"resources": {"requests": {"cpu": "1500m", "memory": "5Gi"}, "limits": {"cpu": "1.5"}},
		}]},
	}
		with data.podfit.platform as {"runtime": "bare-metal", "node_logical_cpus": 256}
	results == {{
		"container": "tomcat",
		"details": {"cpu_limit": 1500, "node_logical_cpus": 256, "period_us": 100000, "slice_us": 5000, "slices": 30},
		"rule": "PF202",
		"severity": "warning",
		"message": concat(" ", [
			"container \"tomcat\" has a CPU limit of 1500m: 30 slices of 5000 µs per 100000 µs period, fewer than the",
			"node's 256 logical CPUs, so its threads can be throttled while quota sits unused",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_allow_without_node_size if {
	results := cpu_limit_throttle_risk.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "100m"}},
		}]},
	}
		with data.podfit.platform as {"node_pools": [{"name": "w", "vm_class": "best-effort-xlarge", "count": 3}]}
	count(results) == 0
}

test_deny_guaranteed_whole_without_static if {
	results := cpu_limit_throttle_risk.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}},
		}]},
	}
		with data.podfit.platform as {"runtime": "bare-metal", "node_logical_cpus": 256}
	results == {{
		"container": "a",
		"details": {"cpu_limit": 2000, "node_logical_cpus": 256, "period_us": 100000, "slice_us": 5000, "slices": 40},
		"rule": "PF202",
		"severity": "warning",
		"message": concat(" ", [
			"container \"a\" has a CPU limit of 2: 40 slices of 5000 µs per 100000 µs period, fewer than the node's 256",
			"logical CPUs, so its threads can be throttled while quota sits unused",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_deny_custom_cfs if {
	results := cpu_limit_throttle_risk.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1"}},
		}]},
	}
		with data.podfit.platform as {"node_logical_cpus": 16, "cfs": {"period_us": 10000, "slice_us": 5000}}
	results == {{
		"container": "a",
		"details": {"cpu_limit": 1000, "node_logical_cpus": 16, "period_us": 10000, "slice_us": 5000, "slices": 2},
		"rule": "PF202",
		"severity": "warning",
		"message": concat(" ", [
			"container \"a\" has a CPU limit of 1: 2 slices of 5000 µs per 10000 µs period, fewer than the node's 16",
			"logical CPUs, so its threads can be throttled while quota sits unused",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_allow_4_vcpus if {
	results := cpu_limit_throttle_risk.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1500m"}},
		}]},
	}
		with data.podfit.platform as {"node_logical_cpus": 4}
	count(results) == 0
}

test_allow_static_whole_cpus if {
	results := cpu_limit_throttle_risk.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}},
		}]},
	}
		with data.podfit.platform as {
			"runtime": "bare-metal",
			"node_logical_cpus": 256,
			"kubelet": {"cpu_manager_policy": "static"},
		}
	count(results) == 0
}

test_allow_no_node_size if {
	results := cpu_limit_throttle_risk.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1500m"}},
		}]},
	}
	count(results) == 0
}

test_allow_vsphere_pods if {
	results := cpu_limit_throttle_risk.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1500m"}},
		}]},
	}
		with data.podfit.platform as {"runtime": "vsphere-pods", "node_logical_cpus": 256}
	count(results) == 0
}

test_allow_windows_node_selector if {
	pod := _limited_pod({"nodeSelector": {"kubernetes.io/os": "windows"}})
	results := cpu_limit_throttle_risk.findings with input as pod with data.podfit.platform as {"node_logical_cpus": 256}
	count(results) == 0
}

test_allow_windows_affinity if {
	pod := _limited_pod({"affinity": _os_affinity(["windows"])})
	results := cpu_limit_throttle_risk.findings with input as pod with data.podfit.platform as {"node_logical_cpus": 256}
	count(results) == 0
}

test_deny_linux_or_windows_affinity if {
	pod := _limited_pod({"nodeSelector": {"kubernetes.io/os": "linux"}, "affinity": _os_affinity(["windows", "linux"])})
	results := cpu_limit_throttle_risk.findings with input as pod with data.podfit.platform as {"node_logical_cpus": 256}
	count(results) == 1
}

_limited_pod(spec) := pod if {
	container := {
		"name": "a",
		"image": "img:1",
		"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1500m"}},
	}
	pod := {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": object.union(spec, {"containers": [container]}),
	}
}

_os_affinity(values) := affinity if {
	expression := {"key": "kubernetes.io/os", "operator": "In", "values": values}
	terms := [{"matchExpressions": [expression]}]
	affinity := {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
}

# The facts name a workload whose node selection leaves it only smaller nodes: its size is theirs.
_pinned_pod := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "p", "namespace": "web"},
	"spec": {
		"nodeSelector": {"pool": "small"},
		"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "300m", "memory": "1Gi"}, "limits": {"cpu": "300m"}},
		}],
	},
}

test_node_size_per_workload_from_the_facts if {
	facts := {"node_logical_cpus": 8, "workloads": {"Pod/web/p": {"node_logical_cpus": 4}}}
	count(cpu_limit_throttle_risk.findings) == 0 with input as _pinned_pod with data.podfit.platform as facts
	wider := {"node_logical_cpus": 16, "workloads": {"Pod/web/p": {"node_logical_cpus": 8}}}
	results := cpu_limit_throttle_risk.findings with input as _pinned_pod with data.podfit.platform as wider
	results == {{
		"container": "a",
		"details": {"cpu_limit": 300, "node_logical_cpus": 8, "period_us": 100000, "slice_us": 5000, "slices": 6},
		"rule": "PF202",
		"severity": "warning",
		"message": concat(" ", [
			"container \"a\" has a CPU limit of 300m: 6 slices of 5000 µs per 100000 µs period, fewer than the",
			"node's 8 logical CPUs, so its threads can be throttled while quota sits unused",
		]),
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "web", "name": "p"},
	}}
}

test_node_size_of_other_workloads_is_the_run_wide_one if {
	facts := {"node_logical_cpus": 8, "workloads": {"Pod/web/other": {"node_logical_cpus": 4}}}
	results := cpu_limit_throttle_risk.findings with input as _pinned_pod with data.podfit.platform as facts
	[f.details.node_logical_cpus | some f in results] == [8]
}
