package podfit.lib.conftest_test

import data.podfit.lib.conftest

_deployment := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "web", "namespace": "shop"},
	"spec": {"template": {"spec": {"containers": [{"name": "app", "resources": {"requests": {"memory": "1Gi"}}}]}}},
}

test_errors_are_deny_lines_naming_the_object if {
	conftest.deny == {"PF101 Deployment shop/web: container \"app\" sets no CPU request"} with input as _deployment
	conftest.warn == {concat("", [
		"PF111 Deployment shop/web: container \"app\" requests 1Gi of memory and sets no memory limit: it can take ",
		"node memory until the node runs short and the kubelet evicts, or the OOM killer kills, a pod of its choosing",
	])} with input as _deployment
}

test_warnings_are_warn_lines if {
	pod := {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "a", "resources": {
			"requests": {"cpu": "1500m", "memory": "1Gi"},
			"limits": {"cpu": "1500m", "memory": "1Gi"},
		}}]},
	}
	conftest.warn == {concat(" ", [
		"PF201 Pod p: container \"a\" of a Guaranteed pod asks for 1500m CPU, not a whole number:",
		"the static CPU Manager cannot give it exclusive cores (round to 2) if the nodes run cpuManagerPolicy: static",
		"(the platform does not say)",
	])} with input as pod
	count(conftest.deny) == 0 with input as pod
}
