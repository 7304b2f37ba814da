package podfit.resources.limit_above_peak_test

import data.podfit.resources.limit_above_peak

test_deny_cpu_single_container if {
	results := limit_above_peak.findings with input as {
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {"name": "w"},
		"spec": {"template": {
			"metadata": {"annotations": {"podfit.io/peak-cpu": "1"}},
			"spec": {"containers": [{
				"name": "a",
				"image": "img:1",
				"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "4"}},
			}]},
		}},
	}
	results == {{
		"container": "a",
		"details": {"limit": 4000, "peak": 1000, "resource": "cpu", "tolerance_percent": 10},
		"rule": "PF104",
		"severity": "warning",
		"message": "container \"a\" has a cpu limit of 4, more than 10% above its declared peak 1",
		"object": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "", "name": "w"},
	}}
}

test_deny_named_memory if {
	results := limit_above_peak.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p", "annotations": {"podfit.io/peak-memory": "a=1Gi, b=200Mi, bogus"}},
		"spec": {"containers": [
			{
				"name": "a",
				"image": "img:1",
				"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
			},
			{
				"name": "b",
				"image": "img:1",
				"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
			},
		]},
	}
	results == {{
		"container": "b",
		"details": {"limit": 1073741824, "peak": 209715200, "resource": "memory", "tolerance_percent": 10},
		"rule": "PF104",
		"severity": "warning",
		"message": "container \"b\" has a memory limit of 1Gi, more than 10% above its declared peak 200Mi",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_deny_custom_tolerance if {
	results := limit_above_peak.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p", "annotations": {"podfit.io/peak-cpu": "1"}},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1050m"}},
		}]},
	}
		with data.podfit.options as {"PF104": {"tolerance-percent": 0}}
	results == {{
		"container": "a",
		"details": {"limit": 1050, "peak": 1000, "resource": "cpu", "tolerance_percent": 0},
		"rule": "PF104",
		"severity": "warning",
		"message": "container \"a\" has a cpu limit of 1050m, more than 0% above its declared peak 1",
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}}
}

test_allow_within_tolerance if {
	results := limit_above_peak.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p", "annotations": {"podfit.io/peak-cpu": "1"}},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1100m"}},
		}]},
	}
	count(results) == 0
}

test_allow_single_quantity_two_containers if {
	results := limit_above_peak.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p", "annotations": {"podfit.io/peak-cpu": "1"}},
		"spec": {"containers": [
			{
				"name": "a",
				"image": "img:1",
				"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "4"}},
			},
			{
				"name": "b",
				"image": "img:1",
				"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "4"}},
			},
		]},
	}
	count(results) == 0
}

test_allow_invalid_peak if {
	results := limit_above_peak.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p", "annotations": {"podfit.io/peak-cpu": "one"}},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "4"}},
		}]},
	}
	count(results) == 0
}

test_allow_no_limit if {
	results := limit_above_peak.findings with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p", "annotations": {"podfit.io/peak-cpu": "1"}},
		"spec": {"containers": [{
			"name": "a",
			"image": "img:1",
			"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
		}]},
	}
	count(results) == 0
}
