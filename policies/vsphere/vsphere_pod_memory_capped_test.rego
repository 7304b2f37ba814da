package podfit.vsphere.vsphere_pod_memory_capped_test

import data.podfit.vsphere.vsphere_pod_memory_capped

test_deny_above_cap if {
	results := vsphere_pod_memory_capped.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "8Gi"}}}, {"name": "b", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "8Gi"}}}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	results == {{"container": null, "details": {"crx_memory": 8589934592, "memory_limits": 17179869184, "memory_requests": 2147483648}, "rule": "PF403", "severity": "info", "message": "the vSphere Pod's memory limits add up to 16Gi, above the CRX cap max(3 × requests, largest limit) = 8Gi; memory beyond the cap is never given", "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"}}}
}

test_deny_some_containers_without_memory if {
	results := vsphere_pod_memory_capped.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "4Gi"}}}, {"name": "b", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "256Mi"}, "limits": {"memory": "4Gi"}}}, {"name": "c", "image": "img:1", "resources": {"requests": {"cpu": "1"}}}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	results == {{"container": null, "details": {"crx_memory": 4294967296, "memory_limits": 8589934592, "memory_requests": 1342177280}, "rule": "PF403", "severity": "info", "message": "the vSphere Pod's memory limits add up to 8Gi, above the CRX cap max(3 × requests, largest limit) = 4Gi; memory beyond the cap is never given", "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"}}}
}

test_allow_at_cap if {
	results := vsphere_pod_memory_capped.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "3Gi"}}}, {"name": "b", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "3Gi"}}}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	count(results) == 0
}

test_allow_no_limits if {
	results := vsphere_pod_memory_capped.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	count(results) == 0
}

test_allow_tkg if {
	results := vsphere_pod_memory_capped.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "8Gi"}}}, {"name": "b", "image": "img:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "8Gi"}}}]}}
	count(results) == 0
}
