package podfit.lib.platform_test

import data.podfit.lib.platform

test_defaults_without_facts if {
	platform.runtime == "tkg" with data.podfit.platform as {}
	platform.cfs_period_us == 100000 with data.podfit.platform as {}
	platform.cfs_slice_us == 5000 with data.podfit.platform as {}
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
		"kubelet": {"cpu_manager_policy": "static"},
		"cfs": {"period_us": 50000, "slice_us": 1000},
	}
	platform.runtime == "bare-metal" with data.podfit.platform as facts
	not platform.smt with data.podfit.platform as facts
	platform.numa_cores == 16 with data.podfit.platform as facts
	platform.numa_memory == 1024 with data.podfit.platform as facts
	platform.node_logical_cpus == 256 with data.podfit.platform as facts
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
