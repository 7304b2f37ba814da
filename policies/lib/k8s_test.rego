package podfit.lib.k8s_test

import data.podfit.lib.k8s

test_pod_spec_of_every_workload_kind if {
	spec := {"containers": [{"name": "a"}]}
	k8s.pod_spec({"kind": "Pod", "spec": spec}) == spec
	not k8s.pod_spec({"kind": "Service", "spec": spec})
	not k8s.pod_spec({"kind": "Deployment", "spec": {"template": {"spec": "broken"}}})
	tpl := {"template": {"spec": spec}}
	k8s.pod_spec({"kind": "CronJob", "spec": {"jobTemplate": {"spec": tpl}}}) == spec
	every kind in ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"] {
		k8s.pod_spec({"kind": kind, "spec": tpl}) == spec
	}
}

test_qos_classes if {
	qos := {p.obj.metadata.name: p.qos | some p in k8s.pods} with input as {"kind": "List", "items": [
		{
			"kind": "Pod",
			"metadata": {"name": "g"},
			"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
		},
		{
			"kind": "Pod",
			"metadata": {"name": "b"},
			"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]},
		},
		{"kind": "Pod", "metadata": {"name": "e"}, "spec": {"containers": [{"name": "a"}]}},
		{
			"kind": "Pod",
			"metadata": {"name": "x"},
			"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1 core"}}}]},
		},
	]}
	qos == {"g": "Guaranteed", "b": "Burstable", "e": "BestEffort", "x": null}
}

test_pod_request_and_limit if {
	pod := {
		"kind": "Pod", "metadata": {"name": "p"},
		"spec": {
			"overhead": {"cpu": "250m", "memory": "bogus"},
			"initContainers": [
				{"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}},
				{"name": "init", "resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "3"}}},
			],
			"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}],
		},
	}
	some p in k8s.pods with input as pod

	# max(1 + 0.5, 3 + 0.5) + 0.25
	k8s.pod_request(p, "cpu") == 3750
	k8s.pod_limit(p, "cpu") == 4250
	k8s.pod_request(p, "memory") == 0
	not k8s.pod_limit(p, "memory")
}

test_annotations_template_wins if {
	obj := {
		"kind": "Deployment",
		"metadata": {"annotations": {"a": "1", "b": "1"}},
		"spec": {"template": {"metadata": {"annotations": {"b": "2"}}, "spec": {}}},
	}
	k8s.annotations(obj) == {"a": "1", "b": "2"}
	k8s.annotations({"kind": "Pod", "spec": {}}) == {}
}

test_formats if {
	k8s.fmt_cpu(0) == "0"
	k8s.fmt_cpu(2000) == "2"
	k8s.fmt_cpu(1500) == "1500m"
	k8s.fmt_memory(536870912) == "512Mi"
	k8s.fmt_memory(1000) == "1000"
	k8s.fmt_memory(0) == "0"
	k8s.fmt_memory(9223372036854775807) == "9223372036854775807"
	k8s.fmt_memory(5368709120) == "5Gi"
	k8s.fmt_memory(4503599627370496) == "4Pi"
	k8s.fmt_cpu(4294967296000) == "4294967296"
}

test_num_on_both_sides_of_32_bits if {
	k8s.num(0) == "0"
	k8s.num(-7) == "-7"
	k8s.num(2147483647) == "2147483647"
	k8s.num(2147483648) == "2147483648"
	k8s.num(-2147483649) == "-2147483649"
	k8s.num(12.5) == "12.5"
}

test_qos_zero_request_with_limit_is_burstable if {
	pod := {
		"kind": "Pod",
		"metadata": {"name": "z"},
		"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "0"}, "limits": {"cpu": "1"}}}]},
	}
	[p.qos | some p in k8s.pods] == ["Burstable"] with input as pod
}

test_whole_cpus_at_every_size if {
	k8s.whole_cpus(0)
	k8s.whole_cpus(1000)
	k8s.whole_cpus(100000)
	k8s.whole_cpus(-2000)
	k8s.whole_cpus(2147483648000)
	k8s.whole_cpus(9223372036854775807000)
	not k8s.whole_cpus(1500)
	not k8s.whole_cpus(2147483648500)
	not k8s.whole_cpus(9223372036854775807500)
	k8s.fmt_cpu(100000) == "100"
	k8s.fmt_cpu(1500) == "1500m"
	k8s.fmt_cpu(9223372036854775807500) == "9223372036854775807500m"
}

test_limit_range_defaults_fill_what_is_unset if {
	pod := {"kind": "Pod", "metadata": {"name": "d", "namespace": "shop"}, "spec": {"containers": [
		{"name": "none"},
		{"name": "own-limit", "resources": {"limits": {"cpu": "2"}}},
		{"name": "request", "resources": {"requests": {"memory": "64Mi"}}},
	]}}
	defaults := {"shop": {"container_defaults": {"request": {"cpu": 100, "memory": 134217728}, "limit": {"cpu": 500}}}}
	[[c.name, c.request, c.limit] | some p in k8s.pods; some c in p.containers] == [
		["none", {"cpu": 100, "memory": 134217728}, {"cpu": 500}],
		["own-limit", {"cpu": 2000, "memory": 134217728}, {"cpu": 2000}],
		["request", {"cpu": 100, "memory": 67108864}, {"cpu": 500}],
	] with input as pod with data.podfit.namespaces as defaults
	{p.qos | some p in k8s.pods} == {"Burstable"} with input as pod with data.podfit.namespaces as defaults
}

test_limit_range_of_another_namespace_does_not_apply if {
	pod := {"kind": "Pod", "metadata": {"name": "d"}, "spec": {"containers": [{"name": "none"}]}}
	defaults := {"shop": {"container_defaults": {"request": {"cpu": 100}, "limit": {}}}}
	{p.qos | some p in k8s.pods} == {"BestEffort"} with input as pod with data.podfit.namespaces as defaults
	shop_as_default := {"default": defaults.shop}
	{p.qos | some p in k8s.pods} == {"Burstable"} with input as pod with data.podfit.namespaces as shop_as_default
}

test_pod_level_resources if {
	guaranteed := {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}
	limited := {"limits": {"cpu": "1", "memory": "1Gi"}}
	items := [
		_level_pod("g", {"resources": guaranteed}, [{"name": "a"}, {"name": "b"}]),
		_level_pod("lim", {"resources": limited}, [{"name": "a"}]),
		_level_pod("mixed", {"resources": limited}, [{"name": "a", "resources": {"requests": {"cpu": "250m"}}}]),
		_level_pod("req", {"overhead": {"cpu": "100m"}, "resources": {"requests": {"cpu": "500m"}}}, [{"name": "a"}]),
		_level_pod("bad", {"resources": {"requests": {"cpu": "lots"}}}, [{"name": "a"}]),
	]
	pods := {p.obj.metadata.name: p | some p in k8s.pods} with input as {"kind": "List", "items": items}
	qos := {n: p.qos | some n, p in pods}
	qos == {"g": "Guaranteed", "lim": "Guaranteed", "mixed": "Burstable", "req": "Burstable", "bad": null}

	# the pod-level request, else (next to a pod-level limit) the containers' request, else the limit
	k8s.pod_request(pods.g, "memory") == 2147483648
	k8s.pod_request(pods.lim, "cpu") == 1000
	k8s.pod_request(pods.mixed, "cpu") == 250
	k8s.pod_limit(pods.mixed, "cpu") == 1000
	k8s.pod_request(pods.req, "cpu") == 600
	not k8s.pod_limit(pods.req, "cpu")
	k8s.pod_level_sets(pods.req, "cpu")
	not k8s.pod_level_sets(pods.req, "memory")
}

test_typed_lists_are_opened if {
	objs := k8s.objects with input as {"apiVersion": "v1", "kind": "PodList", "items": [
		{"metadata": {"name": "a"}, "spec": {"containers": []}},
		{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}},
	]}
	[[o.apiVersion, o.kind, o.metadata.name] | some o in objs] == [["v1", "Pod", "a"], ["v1", "Pod", "b"]]
	plain := k8s.objects with input as {"apiVersion": "example.com/v1", "kind": "AllowList", "spec": {}}
	[o.kind | some o in plain] == ["AllowList"]
}

_level_pod(name, spec, containers) := {
	"kind": "Pod",
	"metadata": {"name": name},
	"spec": object.union(spec, {"containers": containers}),
}

test_injected_proxy_counts_in_request_limit_and_qos if {
	proxy := {
		"name": "istio-proxy",
		"request": {"cpu": 100, "memory": 134217728},
		"limit": {"cpu": 2000, "memory": 1073741824},
	}
	pod := k8s.pods[0] with input as {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "p"},
		"spec": {"containers": [{"name": "a", "image": "x", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
	}
		with data.podfit.platform as {"workloads": {"Pod//p": {"injected": [proxy]}}}
	pod.qos == "Burstable"
	[c.name | some c in k8s.counted(pod)] == ["a", "istio-proxy"]
	k8s.pod_request(pod, "cpu") == 1100
	k8s.pod_limit(pod, "memory") == 2147483648
	k8s.injection_note(pod) == " (counting the istio-proxy container its service mesh injects)"
}

test_pod_spec_of_custom_workload_kinds if {
	spec := {"containers": [{"name": "a", "image": "x"}]}
	k8s.pod_spec({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "spec": {"template": {"spec": spec}}}) == spec
	k8s.pod_spec({
		"apiVersion": "keda.sh/v1alpha1",
		"kind": "ScaledJob",
		"spec": {"jobTargetRef": {"template": {"spec": spec}}},
	}) == spec
	not k8s.pod_spec({"apiVersion": "v1", "kind": "Service", "spec": {"template": {"spec": spec}}})
	not k8s.pod_spec({"apiVersion": 1, "kind": "Rollout", "spec": {"template": {"spec": spec}}})
	k8s.api_group({"apiVersion": "a/b/v1"}) == "a/b"
}

test_pod_spec_of_configured_workload_kinds if {
	spec := {"containers": [{"name": "a", "image": "x"}]}
	obj := {"apiVersion": "example.com/v1", "kind": "WebApp", "spec": {"pod": {"spec": spec}}}
	not k8s.pod_spec(obj)
	k8s.pod_spec(obj) == spec with data.podfit.workload_kinds as {"example.com/WebApp": ["spec", "pod"]}
}
