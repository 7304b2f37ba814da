# METADATA
# title: podfit result objects
# description: |-
#   Builds the result every rule returns: conftest reads msg; podfit reads rule, severity,
#   container and details.
package podfit.lib.result

# make(obj, rule, severity, msg, container, details) is one result about the object obj;
# container is a name or null.
make(obj, rule, severity, msg, container, details) := r if {
	doc := object.get(obj, document_key, null)
	doc != null
	r := {
		"msg": concat(": ", [rule, msg]),
		"rule": rule,
		"severity": severity,
		"container": container,
		"details": details,
		"document": doc,
	}
} else := _result(rule, severity, msg, container, details)

_result(rule, severity, msg, container, details) := {
	"msg": concat(": ", [rule, msg]),
	"rule": rule,
	"severity": severity,
	"container": container,
	"details": details,
}

# podfit's engines evaluate many documents in one query: each object of the batch carries the
# index of the document it came from under this key, and every result about it repeats it as
# "document". Objects without it (conftest, or one document at a time) give results without it.
document_key := "podfit.io/document"
