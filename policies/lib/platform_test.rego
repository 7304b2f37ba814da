package podfit.lib.platform_test

import data.podfit.lib.platform

test_defaults_without_facts if {
	platform.runtime == "tkg" with data.podfit.platform as {}
	not platform.cfs_period_us with data.podfit.platform as {}
	not platform.cfs_slice_us with data.podfit.platform as {}
	not platform.cfs_screen_limit with data.podfit.platform as {}
	platform.smt with data.podfit.platform as {}
	platform.cpu_manager_policy == "none" with data.podfit.platform as {}
	not platform.numa_cores with data.podfit.platform as {}
	not platform.node_logical_cpus with data.podfit.platform as {}
}

test_facts_not_an_object if {
	platform.runtime == "tkg" with data.podfit.platform as "bare-metal"
}

test_facts_given if {
	facts := {
		"runtime": "bare-metal",
		"smt": false,
		"numa_node": {"cores": 16, "memory": 1024},
		"node_logical_cpus": 256,
		"cfs_screen_limit": 256000,
		"kubelet": {"cpu_manager_policy": "static"},
		"cfs": {"period_us": 50000, "slice_us": 1000},
	}
	platform.runtime == "bare-metal" with data.podfit.platform as facts
	not platform.smt with data.podfit.platform as facts
	platform.numa_cores == 16 with data.podfit.platform as facts
	platform.numa_memory == 1024 with data.podfit.platform as facts
	platform.node_logical_cpus == 256 with data.podfit.platform as facts
	platform.cfs_screen_limit == 256000 with data.podfit.platform as facts
	platform.cpu_manager_policy == "static" with data.podfit.platform as facts
	platform.cfs_period_us == 50000 with data.podfit.platform as facts
	platform.cfs_slice_us == 1000 with data.podfit.platform as facts
}

test_invalid_numbers_are_absent if {
	facts := {"node_logical_cpus": 1.5, "numa_node": {"cores": -2, "memory": "1Gi"}}
	not platform.node_logical_cpus with data.podfit.platform as facts
	not platform.numa_cores with data.podfit.platform as facts
	not platform.numa_memory with data.podfit.platform as facts
}

test_node_logical_cpus_of_a_workload if {
	facts := {"node_logical_cpus": 8, "workloads": {
		"Deployment/web/a": {"node_logical_cpus": 4},
		"Pod//b": {"node_logical_cpus": 2},
	}}
	a := {"kind": "Deployment", "metadata": {"name": "a", "namespace": "web"}}
	b := {"kind": "Pod", "metadata": {"name": "b"}}
	c := {"kind": "Pod", "metadata": {"name": "c", "namespace": "web"}}
	[platform.node_logical_cpus_of(x) | some x in [a, b, c]] == [4, 2, 8] with data.podfit.platform as facts
	zero := {"workloads": {"Deployment/web/a": {"node_logical_cpus": 0}}}
	not platform.node_logical_cpus_of(a) with data.podfit.platform as zero
}

test_per_workload_facts if {
	facts := {"cfs_screen_limit": 400, "workloads": {
		"Deployment/web/a": {"cfs_screen_limit": 200, "linux_excluded": true, "exclusive_cpus": ["x", "y"]},
		"Pod//b": {"linux_excluded": false, "exclusive_cpus": "x"},
	}}
	a := {"kind": "Deployment", "metadata": {"name": "a", "namespace": "web"}}
	b := {"kind": "Pod", "metadata": {"name": "b"}}
	[platform.cfs_screen_limit_of(x) | some x in [a, b]] == [200, 400] with data.podfit.platform as facts
	platform.linux_excluded(a) with data.podfit.platform as facts
	not platform.linux_excluded(b) with data.podfit.platform as facts
	[n | some n in ["x", "y", "z"]; platform.exclusive_cpus(a, n)] == ["x", "y"] with data.podfit.platform as facts
	not platform.exclusive_cpus(b, "x") with data.podfit.platform as facts
}
