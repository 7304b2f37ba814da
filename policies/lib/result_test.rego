package podfit.lib.result_test

import data.podfit.lib.result

test_result_without_document if {
	r := result.make({"kind": "Pod"}, "PF105", "warning", "Pod p: m", null, {"containers": 1})
	r == {"msg": "PF105: Pod p: m", "rule": "PF105", "severity": "warning", "container": null, "details": {"containers": 1}}
}

test_result_carries_the_document_of_a_batch if {
	obj := {"kind": "Pod", "podfit.io/document": 0}
	r := result.make(obj, "PF101", "error", "Pod p: m", "app", {})
	r.document == 0
	object.remove(r, ["document"]) == result.make({"kind": "Pod"}, "PF101", "error", "Pod p: m", "app", {})
}
