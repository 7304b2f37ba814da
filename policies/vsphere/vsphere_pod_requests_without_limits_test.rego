package podfit.vsphere.vsphere_pod_requests_without_limits_test

import data.podfit.vsphere.vsphere_pod_requests_without_limits

test_deny_requests_only if {
	results := vsphere_pod_requests_without_limits.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "redis", "image": "img:1", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}, {"name": "side", "image": "img:1", "resources": {"requests": {"memory": "64Mi"}}}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	results == {{"container": null, "details": {"cpu_requests": 2000, "memory_requests": 4362076160}, "rule": "PF402", "severity": "warning", "message": "the vSphere Pod sets requests but no limits, so its CRX is capped at its requests (2 CPU, 4160Mi memory) and cannot burst", "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"}}}
}

test_allow_limits if {
	results := vsphere_pod_requests_without_limits.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "redis", "image": "img:1", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "8"}}}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	count(results) == 0
}

test_allow_nothing_set if {
	results := vsphere_pod_requests_without_limits.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "redis", "image": "img:1"}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	count(results) == 0
}

test_allow_invalid if {
	results := vsphere_pod_requests_without_limits.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "redis", "image": "img:1", "resources": {"requests": {"cpu": "2x"}}}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	count(results) == 0
}

test_allow_tkg if {
	results := vsphere_pod_requests_without_limits.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "redis", "image": "img:1", "resources": {"requests": {"cpu": "2"}}}]}}
	count(results) == 0
}
