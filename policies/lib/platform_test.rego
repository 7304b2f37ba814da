package podfit.lib.platform_test

import data.podfit.lib.platform

test_defaults_without_facts if {
	platform.runtime == "tkg" with data.podfit.platform as {}
	platform.cfs_period_us == 100000 with data.podfit.platform as {}
	platform.cfs_slice_us == 5000 with data.podfit.platform as {}
	platform.peak_tolerance_percent == 10 with data.podfit.platform as {}
	platform.smt with data.podfit.platform as {}
	platform.cpu_manager_policy == "none" with data.podfit.platform as {}
	not platform.numa_cores with data.podfit.platform as {}
	not platform.node_logical_cpus with data.podfit.platform as {}
	platform.vm_classes["best-effort-8xlarge"] == {"cpus": 32, "memory": 137438953472, "reserved": false} with data.podfit.platform as {}
	platform.vm_classes["guaranteed-xsmall"] == {"cpus": 2, "memory": 2147483648, "reserved": true} with data.podfit.platform as {}
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
		"thresholds": {"peak_tolerance_percent": 25},
		"vm_classes": {"tiny": {"cpus": 1, "memory": 1, "reserved": true}},
	}
	platform.runtime == "bare-metal" with data.podfit.platform as facts
	not platform.smt with data.podfit.platform as facts
	platform.numa_cores == 16 with data.podfit.platform as facts
	platform.numa_memory == 1024 with data.podfit.platform as facts
	platform.node_logical_cpus == 256 with data.podfit.platform as facts
	platform.cpu_manager_policy == "static" with data.podfit.platform as facts
	platform.cfs_period_us == 50000 with data.podfit.platform as facts
	platform.cfs_slice_us == 1000 with data.podfit.platform as facts
	platform.peak_tolerance_percent == 25 with data.podfit.platform as facts
	platform.vm_classes.tiny.cpus == 1 with data.podfit.platform as facts
}

test_bad_facts_fall_back if {
	facts := {"numa_node": {"cores": 0.5, "memory": -1}, "cfs": {"period_us": "x"}, "thresholds": {"peak_tolerance_percent": -3}, "node_logical_cpus": 2.5}
	not platform.numa_cores with data.podfit.platform as facts
	not platform.numa_memory with data.podfit.platform as facts
	platform.cfs_period_us == 100000 with data.podfit.platform as facts
	platform.peak_tolerance_percent == 10 with data.podfit.platform as facts
	not platform.node_logical_cpus with data.podfit.platform as facts
}

test_node_size_from_node_pools if {
	facts := {"node_pools": [{"vm_class": "best-effort-large"}, {"vm_class": "best-effort-2xlarge"}, {"vm_class": "nope"}]}
	platform.node_logical_cpus == 8 with data.podfit.platform as facts
}
