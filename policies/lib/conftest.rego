# METADATA
# title: podfit findings as conftest messages
# description: |-
#   conftest reads deny (fails the run) and warn rules. The rules return structured findings;
#   this package turns each into one line, "PF101 Deployment shop/web: container \"app\" ...":
#   errors as deny, warnings and advice as warn.
package podfit.lib.conftest

# Every rule's findings: the findings set of each package podfit.<category>.<slug>. The rule is
# a variable inside the reference, so only the findings rules are evaluated: iterating over the
# packages (`some rule, pkg in data.podfit[category]`, as mixed-iteration asks) evaluates every
# rule of every package, the unit tests of the _test packages included.
_findings contains f if {
	some category in ["resources", "cpu", "numa"]
	some rule

	# regal ignore:mixed-iteration
	some f in data.podfit[category][rule].findings
}

# METADATA
# description: the findings of severity error, one line each (conftest fails the run)
# entrypoint: true
deny contains line(f) if {
	some f in _findings
	f.severity == "error"
}

# METADATA
# description: the warnings and advice, one line each
# entrypoint: true
warn contains line(f) if {
	some f in _findings
	f.severity != "error"
}

# line(f) is the conftest message of a finding.
line(f) := sprintf("%s %s: %s", [f.rule, subject(f.object), f.message])

# subject(ref) names an object: "Deployment shop/web", "Pod web".
subject(ref) := sprintf("%s %s/%s", [ref.kind, ref.namespace, ref.name]) if ref.namespace != ""

subject(ref) := sprintf("%s %s", [ref.kind, ref.name]) if ref.namespace == ""
