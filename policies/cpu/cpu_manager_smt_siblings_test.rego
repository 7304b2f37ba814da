package podfit.cpu.cpu_manager_smt_siblings_test

import data.podfit.cpu.cpu_manager_smt_siblings

test_deny_static_on_smt if {
	results := cpu_manager_smt_siblings.findings with input as {
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind": "KubeletConfiguration",
		"cpuManagerPolicy": "static",
		"reservedSystemCPUs": "0",
	}
	results == {{
		"container": null,
		"details": {"cpu_manager_policy": "static"},
		"rule": "PF204",
		"severity": "warning",
		"message": concat(" ", [
			"the static CPU Manager runs on SMT hosts without the full-pcpus-only option, so a container can get two",
			"hyper-threads of one core",
		]),
		"object": {
			"apiVersion": "kubelet.config.k8s.io/v1beta1",
			"kind": "KubeletConfiguration",
			"namespace": "",
			"name": "",
		},
	}}
}

test_allow_full_pcpus_only if {
	results := cpu_manager_smt_siblings.findings with input as {
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind": "KubeletConfiguration",
		"cpuManagerPolicy": "static",
		"reservedSystemCPUs": "0",
		"cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
	}
	count(results) == 0
}

test_allow_full_pcpus_only_as_parse_bool_reads_it if {
	every value in ["1", "t", "T", "TRUE", "True"] {
		count(cpu_manager_smt_siblings.findings) == 0 with input as {
			"apiVersion": "kubelet.config.k8s.io/v1beta1",
			"kind": "KubeletConfiguration",
			"cpuManagerPolicy": "static",
			"reservedSystemCPUs": "0",
			"cpuManagerPolicyOptions": {"full-pcpus-only": value},
		}
	}
}

test_deny_full_pcpus_only_false_or_not_a_parse_bool_string if {
	every value in ["false", "0", "yes", "tRuE", true] {
		count(cpu_manager_smt_siblings.findings) == 1 with input as {
			"apiVersion": "kubelet.config.k8s.io/v1beta1",
			"kind": "KubeletConfiguration",
			"cpuManagerPolicy": "static",
			"reservedSystemCPUs": "0",
			"cpuManagerPolicyOptions": {"full-pcpus-only": value},
		}
	}
}

test_allow_no_smt if {
	results := cpu_manager_smt_siblings.findings with input as {
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind": "KubeletConfiguration",
		"cpuManagerPolicy": "static",
		"reservedSystemCPUs": "0",
	}
		with data.podfit.platform as {"smt": false}
	count(results) == 0
}

test_allow_none_policy if {
	results := cpu_manager_smt_siblings.findings with input as {
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind": "KubeletConfiguration",
		"cpuManagerPolicy": "none",
	}
	count(results) == 0
}

test_policy_name_is_exact if {
	count(cpu_manager_smt_siblings.findings) == 0 with input as {
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind": "KubeletConfiguration",
		"cpuManagerPolicy": "Static",
		"reservedSystemCPUs": "0",
	}
}
