package podfit.vsphere.critical_on_best_effort_class_test

import data.podfit.vsphere.critical_on_best_effort_class

test_deny_best_effort_workers if {
	results := critical_on_best_effort_class.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha3", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c", "annotations": {"podfit.io/critical": "true"}}, "spec": {"topology": {"controlPlane": {"vmClass": "guaranteed-small", "replicas": 1}, "nodePools": [{"vmClass": "best-effort-xlarge", "replicas": 3, "name": "np"}]}}}
	results == {{"container": null, "details": {"pool": "np", "vm_class": "best-effort-xlarge"}, "msg": "PF304: TanzuKubernetesCluster c is marked critical but node pool \"np\" uses the best-effort VM class best-effort-xlarge, which reserves no CPU or memory", "rule": "PF304", "severity": "warning"}}
}

test_deny_capi if {
	results := critical_on_best_effort_class.deny with input as {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "k", "annotations": {"podfit.io/critical": "true"}}, "spec": {"topology": {"controlPlane": {"replicas": 1}, "workers": {"machineDeployments": [{"class": "node-pool", "replicas": 2}]}, "variables": [{"name": "vmClass", "value": "best-effort-large"}]}}}
	results == {{"container": null, "details": {"pool": "k-control-plane", "vm_class": "best-effort-large"}, "msg": "PF304: Cluster k is marked critical but node pool \"k-control-plane\" uses the best-effort VM class best-effort-large, which reserves no CPU or memory", "rule": "PF304", "severity": "warning"}, {"container": null, "details": {"pool": "md-0", "vm_class": "best-effort-large"}, "msg": "PF304: Cluster k is marked critical but node pool \"md-0\" uses the best-effort VM class best-effort-large, which reserves no CPU or memory", "rule": "PF304", "severity": "warning"}}
}

test_deny_profile_class if {
	results := critical_on_best_effort_class.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha1", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c", "annotations": {"podfit.io/critical": "yes"}}, "spec": {"topology": {"controlPlane": {"class": "guaranteed-small", "count": 1}, "workers": {"class": "shared", "count": 3}}}} with data.podfit.platform as {"vm_classes": {"shared": {"cpus": 4, "memory": 1, "reserved": false}}}
	results == {{"container": null, "details": {"pool": "c-workers", "vm_class": "shared"}, "msg": "PF304: TanzuKubernetesCluster c is marked critical but node pool \"c-workers\" uses the best-effort VM class shared, which reserves no CPU or memory", "rule": "PF304", "severity": "warning"}}
}

test_deny_unknown_best_effort_name if {
	results := critical_on_best_effort_class.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha1", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c", "annotations": {"podfit.io/critical": "1"}}, "spec": {"topology": {"controlPlane": {"class": "guaranteed-small", "count": 1}, "workers": {"class": "best-effort-huge", "count": 3}}}}
	results == {{"container": null, "details": {"pool": "c-workers", "vm_class": "best-effort-huge"}, "msg": "PF304: TanzuKubernetesCluster c is marked critical but node pool \"c-workers\" uses the best-effort VM class best-effort-huge, which reserves no CPU or memory", "rule": "PF304", "severity": "warning"}}
}

test_allow_guaranteed if {
	results := critical_on_best_effort_class.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha3", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c", "annotations": {"podfit.io/critical": "true"}}, "spec": {"topology": {"controlPlane": {"vmClass": "guaranteed-small", "replicas": 1}, "nodePools": [{"vmClass": "guaranteed-xlarge", "replicas": 3, "name": "np"}]}}}
	count(results) == 0
}

test_allow_not_critical if {
	results := critical_on_best_effort_class.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha3", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c"}, "spec": {"topology": {"controlPlane": {"vmClass": "guaranteed-small", "replicas": 1}, "nodePools": [{"vmClass": "best-effort-xlarge", "replicas": 3, "name": "np"}]}}}
	count(results) == 0
}
