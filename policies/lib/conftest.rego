# METADATA
# title: podfit findings as conftest messages
# description: |-
#   conftest reads deny (fails the run) and warn rules. The rules return structured findings;
#   this package turns each into one line, "PF101 Deployment shop/web: container \"app\" ...":
#   errors as deny, warnings and advice as warn.
package podfit.lib.conftest

_findings contains f if some f in data.podfit.resources[_].findings

_findings contains f if some f in data.podfit.cpu[_].findings

_findings contains f if some f in data.podfit.numa[_].findings

deny contains line(f) if {
	some f in _findings
	f.severity == "error"
}

warn contains line(f) if {
	some f in _findings
	f.severity != "error"
}

# line(f) is the conftest message of a finding.
line(f) := sprintf("%s %s: %s", [f.rule, subject(f.object), f.message])

# subject(ref) names an object: "Deployment shop/web", "Pod web".
subject(ref) := sprintf("%s %s/%s", [ref.kind, ref.namespace, ref.name]) if ref.namespace != ""

subject(ref) := sprintf("%s %s", [ref.kind, ref.name]) if ref.namespace == ""
