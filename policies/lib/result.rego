# METADATA
# title: podfit results
# description: |-
#   The finding every rule returns, built from the rule's own METADATA (rego.metadata.chain()):
#   its id and severity are written once, in the rule's package annotation. A finding names the
#   object and container it is about; its message does not repeat them.
package podfit.lib.result

import data.podfit.lib.platform

# rule(chain) is the custom METADATA (id, severity, slug, options, requires) of the rule whose
# annotation chain is given: the innermost entry that has an id.
rule(chain) := [entry.annotations.custom |
	some entry in chain
	is_string(entry.annotations.custom.id)
][0]

# finding(chain, obj, container, message, details) is one finding of the calling rule about the
# object obj; container is a container name or null. Objects of a podfit batch carry the index of
# their document under document_key, and their findings repeat it as "document".
finding(chain, obj, container, message, details) := f if {
	meta := rule(chain)
	base := {
		"rule": meta.id,
		"severity": _severity(meta),
		"object": object_ref(obj),
		"container": container,
		"message": _message(meta, message),
		"details": _details(meta, details),
	}
	f := _with_document(base, object.get(obj, document_key, null))
}

# A rule that requires a fact only the built-in platform profile gave (data.podfit.platform.assumed:
# no platform was described) judges a cluster nobody declared: its verdict is at most info, and
# says what it assumed.
_assumed(meta) if {
	some need in object.get(meta, "requires", [])
	need in platform.assumed_facts
}

_severity(meta) := "info" if _assumed(meta)

_severity(meta) := meta.severity if not _assumed(meta)

_message(meta, message) := concat("", [message, " (", platform.assumed_note, ")"]) if _assumed(meta)

_message(meta, message) := message if not _assumed(meta)

_details(meta, details) := object.union(details, {"assumed": "platform"}) if _assumed(meta)

_details(meta, details) := details if not _assumed(meta)

_with_document(base, null) := base

_with_document(base, doc) := object.union(base, {"document": doc}) if doc != null

# object_ref(obj) is {"apiVersion", "kind", "namespace", "name"} of an object, as podfit's reports
# name it (name: metadata.name, else metadata.generateName, else "").
object_ref(obj) := {
	"apiVersion": _string(obj, ["apiVersion"]),
	"kind": _string(obj, ["kind"]),
	"namespace": _string(obj, ["metadata", "namespace"]),
	"name": _name(obj),
}

_string(obj, path) := s if {
	s := object.get(obj, path, "")
	is_string(s)
} else := ""

_name(obj) := _string(obj, ["metadata", "name"]) if _string(obj, ["metadata", "name"]) != ""

_name(obj) := _string(obj, ["metadata", "generateName"]) if _string(obj, ["metadata", "name"]) == ""

# option(chain, name) is the value of the calling rule's option: data.podfit.options[id][name] when
# configured, else the default its METADATA declares.
option(chain, name) := v if {
	meta := rule(chain)
	v := data.podfit.options[meta.id][name]
} else := v if {
	meta := rule(chain)
	v := [o["default"] | some o in meta.options; o.name == name][0]
}

# podfit's engines evaluate many documents in one query: each object of the batch carries the
# index of the document it came from under this key.
document_key := "podfit.io/document"
