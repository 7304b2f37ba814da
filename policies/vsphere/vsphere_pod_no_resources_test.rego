package podfit.vsphere.vsphere_pod_no_resources_test

import data.podfit.vsphere.vsphere_pod_no_resources

test_deny_redis if {
	results := vsphere_pod_no_resources.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "redis", "image": "img:1"}, {"name": "side", "image": "img:1", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}], "initContainers": [{"name": "init", "image": "img:1"}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	results == {{"container": "init", "details": {"init_container": true}, "rule": "PF401", "severity": "error", "message": "init container \"init\" of a vSphere Pod sets no requests or limits; a CRX sized from none gets 1 vCPU and 1 GiB", "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"}}, {"container": "redis", "details": {"init_container": false}, "rule": "PF401", "severity": "error", "message": "container \"redis\" of a vSphere Pod sets no requests or limits; a CRX sized from none gets 1 vCPU and 1 GiB", "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"}}}
}

test_allow_resources if {
	results := vsphere_pod_no_resources.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "redis", "image": "img:1", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "500m", "memory": "1Gi"}}}]}} with data.podfit.platform as {"runtime": "vsphere-pods"}
	count(results) == 0
}

test_allow_tkg if {
	results := vsphere_pod_no_resources.findings with input as {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "redis", "image": "img:1"}]}}
	count(results) == 0
}
