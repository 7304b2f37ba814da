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
