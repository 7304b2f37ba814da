# A policy with a syntax error: the engines must fail loudly (exit 2), never pass.
package podfit.cpu.broken

deny contains result if {
	input.kind == "Pod"
	result := {"msg": "never"
}
