package podfit.lib.result_test

import data.podfit.lib.result

_chain := [
	{"path": ["data", "podfit", "x", "findings"]},
	{"path": ["data", "podfit", "x"], "annotations": {"scope": "package", "custom": {
		"id": "PF999", "severity": "warning",
		"options": [{"name": "limit", "type": "integer", "default": 7}],
	}}},
]

test_finding_from_the_rule_metadata if {
	obj := {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
	f := result.finding(_chain, obj, "app", "m", {"a": 1})
	f == {
		"rule": "PF999", "severity": "warning", "container": "app", "message": "m", "details": {"a": 1},
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "ns", "name": "p"},
	}
}

test_finding_carries_the_document_of_a_batch if {
	obj := {"kind": "Pod", "metadata": {"generateName": "web-"}, "podfit.io/document": 3}
	f := result.finding(_chain, obj, null, "m", {})
	f.document == 3
	f.object == {"apiVersion": "", "kind": "Pod", "namespace": "", "name": "web-"}
}

test_option_default_and_configured if {
	result.option(_chain, "limit") == 7
	result.option(_chain, "limit") == 9 with data.podfit.options as {"PF999": {"limit": 9}}
	result.option(_chain, "limit") == 7 with data.podfit.options as {"PF998": {"limit": 9}}
}

_numa_chain := [
	{"path": ["data", "podfit", "y", "findings"]},
	{"path": ["data", "podfit", "y"], "annotations": {"scope": "package", "custom": {
		"id": "PF998", "severity": "warning",
		"requires": ["numa-node"],
	}}},
]

test_finding_on_the_built_in_profile_is_info_and_says_so if {
	obj := {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
	assumed := {"facts": ["hosts", "numa-node"], "note": "assumes the built-in profile"}
	f := result.finding(_numa_chain, obj, null, "m", {"a": 1}) with data.podfit.platform as {"assumed": assumed}
	f == {
		"rule": "PF998", "severity": "info", "container": null, "message": "m (assumes the built-in profile)",
		"details": {"a": 1, "assumed": "platform"},
		"object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
	}

	# a described platform: the rule's own severity and words
	described := result.finding(_numa_chain, obj, null, "m", {"a": 1})
	described.severity == "warning"
	described.message == "m"
	described.details == {"a": 1}
}
