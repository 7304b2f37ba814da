package podfit.cpu.cpu_manager_no_reserved_cpu_test

import data.podfit.cpu.cpu_manager_no_reserved_cpu

test_deny_no_reservation if {
	results := cpu_manager_no_reserved_cpu.findings with input as {
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind": "KubeletConfiguration",
		"cpuManagerPolicy": "static",
		"cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
		"kubeReserved": {"memory": "1Gi"},
		"reservedSystemCPUs": " ",
	}
	results == {{
		"container": null,
		"details": {"cpu_manager_policy": "static"},
		"rule": "PF205",
		"severity": "error",
		"message": concat(" ", [
			"the static CPU Manager needs CPU reserved by reservedSystemCPUs, kubeReserved or systemReserved; the",
			"kubelet will refuse to start",
		]),
		"object": {
			"apiVersion": "kubelet.config.k8s.io/v1beta1",
			"kind": "KubeletConfiguration",
			"namespace": "",
			"name": "",
		},
	}}
}

test_deny_zero_cpu if {
	results := cpu_manager_no_reserved_cpu.findings with input as {
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind": "KubeletConfiguration",
		"cpuManagerPolicy": "static",
		"cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
		"systemReserved": {"cpu": "0"},
	}
	results == {{
		"container": null,
		"details": {"cpu_manager_policy": "static"},
		"rule": "PF205",
		"severity": "error",
		"message": concat(" ", [
			"the static CPU Manager needs CPU reserved by reservedSystemCPUs, kubeReserved or systemReserved; the",
			"kubelet will refuse to start",
		]),
		"object": {
			"apiVersion": "kubelet.config.k8s.io/v1beta1",
			"kind": "KubeletConfiguration",
			"namespace": "",
			"name": "",
		},
	}}
}

test_allow_kube_reserved if {
	results := cpu_manager_no_reserved_cpu.findings with input as {
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind": "KubeletConfiguration",
		"cpuManagerPolicy": "static",
		"cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
		"kubeReserved": {"cpu": "500m"},
	}
	count(results) == 0
}

test_allow_reserved_cpus if {
	results := cpu_manager_no_reserved_cpu.findings with input as {
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind": "KubeletConfiguration",
		"cpuManagerPolicy": "static",
		"cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
		"reservedSystemCPUs": "0-1",
	}
	count(results) == 0
}

test_allow_other_kind if {
	results := cpu_manager_no_reserved_cpu.findings with input as {
		"apiVersion": "v1",
		"kind": "ConfigMap",
		"cpuManagerPolicy": "static",
	}
	count(results) == 0
}
