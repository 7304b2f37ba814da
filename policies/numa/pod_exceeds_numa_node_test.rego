package podfit.numa.pod_exceeds_numa_node_test

import data.podfit.numa.pod_exceeds_numa_node

test_deny_cpu_request if {
	results := pod_exceeds_numa_node.findings with input as {
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {"name": "w"},
		"spec": {"template": {
			"metadata": {},
			"spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "24", "memory": "1Gi"}}}]},
		}},
	}
		with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	results == {{
		"container": null,
		"details": {"kind": "request", "numa": 16000, "resource": "cpu", "value": 24000},
		"rule": "PF302",
		"severity": "warning",
		"message": "the pod's cpu request is 24, more than one NUMA node (16): scale out into smaller replicas",
		"object": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "", "name": "w"},
	}}
}

test_deny_memory_limit if {
	results := pod_exceeds_numa_node.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {
			"containers": [{
				"name": "a",
				"image": "img:1",
				"resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "100Gi"}},
			}],
			"overhead": {"cpu": "250m"},
		},
	}
		with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	results == {{
		"container": null,
		"details": {"kind": "limit", "numa": 68719476736, "resource": "memory", "value": 107374182400},
		"rule": "PF302",
		"severity": "warning",
		"message": "the pod's memory limit is 100Gi, more than one NUMA node (64Gi): scale out into smaller replicas",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_deny_init_container if {
	results := pod_exceeds_numa_node.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {
			"containers": [{
				"name": "a",
				"image": "img:1",
				"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "500m", "memory": "1Gi"}},
			}],
			"initContainers": [{
				"name": "i",
				"image": "img:1",
				"resources": {"requests": {"cpu": "20", "memory": "1Gi"}, "limits": {"cpu": "20", "memory": "1Gi"}},
			}],
		},
	}
		with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	results == {{
		"container": null,
		"details": {"kind": "request", "numa": 16000, "resource": "cpu", "value": 20000},
		"rule": "PF302",
		"severity": "warning",
		"message": "the pod's cpu request is 20, more than one NUMA node (16): scale out into smaller replicas",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_deny_sidecars_add_up if {
	results := pod_exceeds_numa_node.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {
			"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "10", "memory": "1Gi"}}}],
			"initContainers": [{
				"name": "s",
				"image": "img:1",
				"resources": {"requests": {"cpu": "8", "memory": "1Gi"}},
				"restartPolicy": "Always",
			}],
		},
	}
		with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	results == {{
		"container": null,
		"details": {"kind": "request", "numa": 16000, "resource": "cpu", "value": 18000},
		"rule": "PF302",
		"severity": "warning",
		"message": "the pod's cpu request is 18, more than one NUMA node (16): scale out into smaller replicas",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_allow_fits if {
	results := pod_exceeds_numa_node.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {
			"containers": [{
				"name": "a",
				"image": "img:1",
				"resources": {"requests": {"cpu": "8", "memory": "42G"}, "limits": {"memory": "42G"}},
			}],
			"initContainers": [
				{
					"name": "s",
					"image": "img:1",
					"resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
					"restartPolicy": "Always",
				},
				{
					"name": "i",
					"image": "img:1",
					"resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}},
				},
			],
		},
	}
		with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	count(results) == 0
}

test_allow_no_numa_facts if {
	results := pod_exceeds_numa_node.findings with input as {
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {"name": "w"},
		"spec": {"template": {
			"metadata": {},
			"spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "24", "memory": "1Gi"}}}]},
		}},
	}
	count(results) == 0
}

# On bare metal a pod's CPUs are hardware threads: a NUMA node of 64 cores × 2 threads holds 128.
_hundred_cpus := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "big"},
	"spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "100", "memory": "1Gi"}}}]},
}

test_numa_node_cpus_count_threads_where_the_facts_say if {
	threads := {"numa_node": {"cores": 64, "cpus": 128, "memory": 549755813888}}
	count(pod_exceeds_numa_node.findings) == 0 with input as _hundred_cpus with data.podfit.platform as threads
	cores := {"numa_node": {"cores": 64, "memory": 549755813888}}
	results := pod_exceeds_numa_node.findings with input as _hundred_cpus with data.podfit.platform as cores
	[f.details | some f in results] == [{"kind": "request", "numa": 64000, "resource": "cpu", "value": 100000}]
}
