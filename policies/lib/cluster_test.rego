package podfit.lib.cluster_test

import data.podfit.lib.cluster

test_tkc_v1alpha1_pools if {
	obj := {"apiVersion": "run.tanzu.vmware.com/v1alpha1", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c"}, "spec": {"topology": {"controlPlane": {"class": "best-effort-small"}, "workers": {"class": "best-effort-large"}}}}
	cluster.node_pools(obj) == {{"name": "c-control-plane", "vm_class": "best-effort-small"}, {"name": "c-workers", "vm_class": "best-effort-large"}}
}

test_tkc_v1alpha2_pools if {
	obj := {"apiVersion": "run.tanzu.vmware.com/v1alpha2", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c"}, "spec": {"topology": {"controlPlane": {"vmClass": "guaranteed-small"}, "nodePools": [{"name": "a", "vmClass": "x"}, {"class": "y"}, {"name": "nc"}]}}}
	cluster.node_pools(obj) == {{"name": "c-control-plane", "vm_class": "guaranteed-small"}, {"name": "a", "vm_class": "x"}, {"name": "pool-1", "vm_class": "y"}}
}

test_capi_pools if {
	obj := {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "k"}, "spec": {"topology": {
		"controlPlane": {"variables": {"overrides": [{"name": "vmClass", "value": "cp"}]}},
		"workers": {"machineDeployments": [{"name": "m"}, {"variables": {"overrides": [{"name": "vmClass", "value": "big"}]}}]},
		"variables": [{"name": "other", "value": 1}, {"name": "vmClass", "value": "std"}],
	}}}
	cluster.node_pools(obj) == {{"name": "k-control-plane", "vm_class": "cp"}, {"name": "m", "vm_class": "std"}, {"name": "md-1", "vm_class": "big"}}
}

test_capi_without_class if {
	obj := {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "k"}, "spec": {"topology": {"controlPlane": {}}}}
	cluster.node_pools(obj) == set()
}

test_clusters_and_critical if {
	tkc := {"apiVersion": "run.tanzu.vmware.com/v1alpha3", "kind": "TanzuKubernetesCluster", "metadata": {"annotations": {"podfit.io/critical": "True"}}}
	count(cluster.clusters) == 1 with input as tkc
	count(cluster.clusters) == 0 with input as {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "spec": {}}
	count(cluster.clusters) == 0 with input as {"apiVersion": "example.com/v1", "kind": "TanzuKubernetesCluster"}
	cluster.critical(tkc)
	not cluster.critical({"metadata": {}})
}
