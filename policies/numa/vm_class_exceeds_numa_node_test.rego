package podfit.numa.vm_class_exceeds_numa_node_test

import data.podfit.numa.vm_class_exceeds_numa_node

test_deny_8xlarge_v1alpha1 if {
	results := vm_class_exceeds_numa_node.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha1", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c"}, "spec": {"topology": {"controlPlane": {"class": "guaranteed-small", "count": 1}, "workers": {"class": "best-effort-8xlarge", "count": 3}}}} with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	results == {{"container": null, "details": {"numa_node": 16, "pool": "c-workers", "resource": "cpu", "vm": 32, "vm_class": "best-effort-8xlarge"}, "msg": "PF301: TanzuKubernetesCluster c: node pool \"c-workers\" uses VM class best-effort-8xlarge with 32 CPUs, more than one NUMA node's 16 CPUs: the VM is split into NUMA clients", "rule": "PF301", "severity": "error"}, {"container": null, "details": {"numa_node": 68719476736, "pool": "c-workers", "resource": "memory", "vm": 137438953472, "vm_class": "best-effort-8xlarge"}, "msg": "PF301: TanzuKubernetesCluster c: node pool \"c-workers\" uses VM class best-effort-8xlarge with 128Gi memory, more than one NUMA node's 64Gi memory: the VM is split into NUMA clients", "rule": "PF301", "severity": "error"}}
}

test_deny_memory_v1alpha3 if {
	results := vm_class_exceeds_numa_node.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha3", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c"}, "spec": {"topology": {"controlPlane": {"vmClass": "guaranteed-small", "replicas": 1}, "nodePools": [{"vmClass": "guaranteed-8xlarge", "replicas": 3}]}}} with data.podfit.platform as {"numa_node": {"cores": 32, "memory": 68719476736}}
	results == {{"container": null, "details": {"numa_node": 68719476736, "pool": "pool-0", "resource": "memory", "vm": 137438953472, "vm_class": "guaranteed-8xlarge"}, "msg": "PF301: TanzuKubernetesCluster c: node pool \"pool-0\" uses VM class guaranteed-8xlarge with 128Gi memory, more than one NUMA node's 64Gi memory: the VM is split into NUMA clients", "rule": "PF301", "severity": "error"}}
}

test_deny_capi_variable if {
	results := vm_class_exceeds_numa_node.deny with input as {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "k"}, "spec": {"topology": {"controlPlane": {"replicas": 1}, "workers": {"machineDeployments": [{"class": "node-pool", "replicas": 2}]}, "variables": [{"name": "vmClass", "value": "best-effort-8xlarge"}]}}} with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	results == {{"container": null, "details": {"numa_node": 16, "pool": "k-control-plane", "resource": "cpu", "vm": 32, "vm_class": "best-effort-8xlarge"}, "msg": "PF301: Cluster k: node pool \"k-control-plane\" uses VM class best-effort-8xlarge with 32 CPUs, more than one NUMA node's 16 CPUs: the VM is split into NUMA clients", "rule": "PF301", "severity": "error"}, {"container": null, "details": {"numa_node": 16, "pool": "md-0", "resource": "cpu", "vm": 32, "vm_class": "best-effort-8xlarge"}, "msg": "PF301: Cluster k: node pool \"md-0\" uses VM class best-effort-8xlarge with 32 CPUs, more than one NUMA node's 16 CPUs: the VM is split into NUMA clients", "rule": "PF301", "severity": "error"}, {"container": null, "details": {"numa_node": 68719476736, "pool": "k-control-plane", "resource": "memory", "vm": 137438953472, "vm_class": "best-effort-8xlarge"}, "msg": "PF301: Cluster k: node pool \"k-control-plane\" uses VM class best-effort-8xlarge with 128Gi memory, more than one NUMA node's 64Gi memory: the VM is split into NUMA clients", "rule": "PF301", "severity": "error"}, {"container": null, "details": {"numa_node": 68719476736, "pool": "md-0", "resource": "memory", "vm": 137438953472, "vm_class": "best-effort-8xlarge"}, "msg": "PF301: Cluster k: node pool \"md-0\" uses VM class best-effort-8xlarge with 128Gi memory, more than one NUMA node's 64Gi memory: the VM is split into NUMA clients", "rule": "PF301", "severity": "error"}}
}

test_deny_profile_class if {
	results := vm_class_exceeds_numa_node.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha3", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c"}, "spec": {"topology": {"controlPlane": {"vmClass": "guaranteed-small", "replicas": 1}, "nodePools": [{"vmClass": "custom-wide", "replicas": 3, "name": "np"}]}}} with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}, "vm_classes": {"custom-wide": {"cpus": 20, "memory": 1073741824, "reserved": false}}}
	results == {{"container": null, "details": {"numa_node": 16, "pool": "np", "resource": "cpu", "vm": 20, "vm_class": "custom-wide"}, "msg": "PF301: TanzuKubernetesCluster c: node pool \"np\" uses VM class custom-wide with 20 CPUs, more than one NUMA node's 16 CPUs: the VM is split into NUMA clients", "rule": "PF301", "severity": "error"}}
}

test_allow_xlarge if {
	results := vm_class_exceeds_numa_node.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha1", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c"}, "spec": {"topology": {"controlPlane": {"class": "guaranteed-small", "count": 1}, "workers": {"class": "best-effort-xlarge", "count": 3}}}} with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	count(results) == 0
}

test_allow_capi_override if {
	results := vm_class_exceeds_numa_node.deny with input as {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "k"}, "spec": {"topology": {"controlPlane": {"replicas": 1}, "workers": {"machineDeployments": [{"class": "node-pool", "replicas": 2, "variables": {"overrides": [{"name": "vmClass", "value": "best-effort-medium"}]}}]}, "variables": [{"name": "vmClass", "value": "best-effort-large"}]}}} with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	count(results) == 0
}

test_allow_no_numa_facts if {
	results := vm_class_exceeds_numa_node.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha1", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c"}, "spec": {"topology": {"controlPlane": {"class": "guaranteed-small", "count": 1}, "workers": {"class": "best-effort-8xlarge", "count": 3}}}}
	count(results) == 0
}

test_allow_unknown_class if {
	results := vm_class_exceeds_numa_node.deny with input as {"apiVersion": "run.tanzu.vmware.com/v1alpha1", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c"}, "spec": {"topology": {"controlPlane": {"class": "guaranteed-small", "count": 1}, "workers": {"class": "mystery", "count": 3}}}} with data.podfit.platform as {"numa_node": {"cores": 16, "memory": 68719476736}}
	count(results) == 0
}
