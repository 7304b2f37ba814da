# METADATA
# title: podfit result objects
# description: |-
#   Builds the result every rule returns: conftest reads msg; podfit reads rule, severity,
#   container and details.
package podfit.lib.result

# make(rule, severity, msg, container, details) is one result; container is a name or null.
make(rule, severity, msg, container, details) := {
	"msg": concat(": ", [rule, msg]),
	"rule": rule,
	"severity": severity,
	"container": container,
	"details": details,
}
