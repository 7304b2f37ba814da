package podfit.cpu.cpu_limit_throttle_risk_test

import data.podfit.cpu.cpu_limit_throttle_risk

# The facts as podfit.facts.facts_data writes them for nodes of 256 logical CPUs: PF202's screen
# (cfs_screen_limit) and the kernel's CFS period and slice come from there.
_cfs := {"period_us": 100000, "slice_us": 5000}

_bare_metal := {
	"runtime": "bare-metal", "node_logical_cpus": 256, "cfs_screen_limit": 12800, "cfs": _cfs,
	"workloads": {},
}

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
		with data.podfit.platform as _bare_metal
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

# Facts computed without the workloads (podfit platform-data given no manifests) know nothing of
# this one's node selection or pinned CPUs: the finding says what it takes.
test_deny_naming_what_facts_without_workloads_leave_open if {
	results := cpu_limit_throttle_risk.findings with input as _limited_pod({})
		with data.podfit.platform as object.remove(_bare_metal, ["workloads"])
	[f.message | some f in results] == [concat(" ", [
		"container \"a\" has a CPU limit of 1500m: 30 slices of 5000 µs per 100000 µs period, fewer than the",
		"node's 256 logical CPUs, so its threads can be throttled while quota sits unused (if its pods run on",
		"Linux nodes of that size and it has no exclusive CPUs: the facts were computed without the workloads;",
		"give podfit platform-data the manifests)",
	])]
}

test_allow_without_node_size if {
	results := cpu_limit_throttle_risk.findings with input as _limited_pod({})
		with data.podfit.platform as {"node_pools": [{"name": "w", "vm_class": "best-effort-xlarge", "count": 3}]}
	count(results) == 0
}

# Nothing assumed: facts without the screen or the CFS period and slice rate nothing.
test_allow_without_the_screen_or_cfs if {
	no_screen := object.remove(_bare_metal, ["cfs_screen_limit"])
	count(cpu_limit_throttle_risk.findings) == 0 with input as _limited_pod({}) with data.podfit.platform as no_screen
	no_cfs := object.remove(_bare_metal, ["cfs"])
	count(cpu_limit_throttle_risk.findings) == 0 with input as _limited_pod({}) with data.podfit.platform as no_cfs
}

test_deny_guaranteed_whole_without_exclusive_cpus if {
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
		with data.podfit.platform as object.union(_bare_metal, {"kubelet": {"cpu_manager_policy": "static"}})
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
		with data.podfit.platform as {
			"node_logical_cpus": 16,
			"cfs_screen_limit": 8000,
			"cfs": {"period_us": 10000, "slice_us": 5000},
			"workloads": {},
		}
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
	results := cpu_limit_throttle_risk.findings with input as _limited_pod({})
		with data.podfit.platform as {"node_logical_cpus": 4, "cfs_screen_limit": 200, "cfs": _cfs}
	count(results) == 0
}

# The facts name the containers the static CPU Manager pins; the others of the pod are rated.
test_allow_exclusive_cpus if {
	pod := {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [
			{"name": "a", "image": "i", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}},
			{"name": "b", "image": "i", "resources": {"limits": {"cpu": "1500m", "memory": "1Gi"}}},
		]},
	}
	facts := object.union(_bare_metal, {"workloads": {"Pod//p": {"exclusive_cpus": ["a"]}}})
	results := cpu_limit_throttle_risk.findings with input as pod with data.podfit.platform as facts
	[f.container | some f in results] == ["b"]
}

test_allow_no_node_size if {
	results := cpu_limit_throttle_risk.findings with input as _limited_pod({})
	count(results) == 0
}

test_allow_vsphere_pods if {
	results := cpu_limit_throttle_risk.findings with input as _limited_pod({})
		with data.podfit.platform as object.union(_bare_metal, {"runtime": "vsphere-pods"})
	count(results) == 0
}

# Whether the pods run on Linux is the facts' answer (every operator of the node affinity), not
# read off the object: a workload the facts list as linux_excluded is not rated, any other is.
test_allow_linux_excluded if {
	pod := _limited_pod({"affinity": _os_affinity("Gt", ["1"])})
	facts := object.union(_bare_metal, {"workloads": {"Pod//p": {"linux_excluded": true}}})
	count(cpu_limit_throttle_risk.findings) == 0 with input as pod with data.podfit.platform as facts
	count(cpu_limit_throttle_risk.findings) == 1 with input as pod with data.podfit.platform as _bare_metal
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

_os_affinity(operator, values) := affinity if {
	expression := {"key": "kubernetes.io/os", "operator": operator, "values": values}
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
	facts := {
		"node_logical_cpus": 8, "cfs_screen_limit": 400, "cfs": _cfs,
		"workloads": {"Pod/web/p": {"node_logical_cpus": 4, "cfs_screen_limit": 200}},
	}
	count(cpu_limit_throttle_risk.findings) == 0 with input as _pinned_pod with data.podfit.platform as facts
	wider := {
		"node_logical_cpus": 16, "cfs_screen_limit": 800, "cfs": _cfs,
		"workloads": {"Pod/web/p": {"node_logical_cpus": 8, "cfs_screen_limit": 400}},
	}
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
	facts := {
		"node_logical_cpus": 8, "cfs_screen_limit": 400, "cfs": _cfs,
		"workloads": {"Pod/web/other": {"node_logical_cpus": 4, "cfs_screen_limit": 200}},
	}
	results := cpu_limit_throttle_risk.findings with input as _pinned_pod with data.podfit.platform as facts
	[f.details.node_logical_cpus | some f in results] == [8]
}
