package podfit.lib.quantity_test

import data.podfit.lib.quantity

# Expected values come from analyzer/podfit/quantity.py (exact Fractions), the Python reference.
cpu_cases := [
	["1", 1000],
	["1.5", 1500],
	["1500m", 1500],
	["0.1", 100],
	[".5", 500],
	["1.", 1000],
	["1e3", 1000000],
	["1E-3", 1],
	["2Gi", 2147483648000],
	["0.5Gi", 536870912000],
	["2G", 2000000000000],
	["1n", 1],
	["1u", 1],
	["-0", 0],
	["+1", 1000],
	[" 2 ", 2000],
	["1e18", 1000000000000000000000],
	["9223372036854775807", 9223372036854775807000],
	["7Ei", 8070450532247928832000],
	["0.0000000001", 1],
	["123456789.123456789Mi", 129453826111917826],
	["3Ti", 3298534883328000],
	["00012", 12000],
	["1e-40", 1],
	["1.23456789e+07", 12345678900],
	["5e-7", 1],
	["7.999999999u", 1],
	["0.000000000000000000000000001E", 1],
	[1.5, 1500],
	[2, 2000],
	[250000000, 250000000000],
]

memory_cases := [
	["1", 1],
	["1.5", 2],
	["1500m", 2],
	["0.1", 1],
	[".5", 1],
	["1.", 1],
	["1e3", 1000],
	["1E-3", 1],
	["2Gi", 2147483648],
	["0.5Gi", 536870912],
	["2G", 2000000000],
	["1n", 1],
	["1u", 1],
	["-0", 0],
	["+1", 1],
	[" 2 ", 2],
	["1e18", 1000000000000000000],
	["9223372036854775807", 9223372036854775807],
	["7Ei", 8070450532247928832],
	["0.0000000001", 1],
	["123456789.123456789Mi", 129453826111918],
	["3Ti", 3298534883328],
	["00012", 12],
	["1e-40", 1],
	["1.23456789e+07", 12345679],
	["5e-7", 1],
	["7.999999999u", 1],
	["0.000000000000000000000000001E", 1],
	[1.5, 2],
	[2, 2],
	[250000000, 250000000],
]

invalid := [
	"-1",
	"1.5cores",
	"",
	"1e41",
	"1e40",
	"9223372036854775808",
	"abc",
	"1111111111111111111111111111111",
	true,
	null,
	"1e+100",
	"8Ei",
	"9999999999999999999999999999Ei",
]

test_cpu_millicores if {
	got := [quantity.cpu_millicores(c[0]) | some c in cpu_cases]
	got == [c[1] | some c in cpu_cases]
}

test_memory_bytes if {
	got := [quantity.memory_bytes(c[0]) | some c in memory_cases]
	got == [c[1] | some c in memory_cases]
}

test_invalid_quantities_are_undefined if {
	count([v | some v in invalid; quantity.valid(v)]) == 0
}

test_valid if {
	quantity.valid("0.5Gi")
	quantity.valid(3)
}

test_memo_is_read_first if {
	quantity.cpu_millicores("2") == 7 with data.podfit.quantities as {"cpu": {"2": 7}, "memory": {}}
	quantity.memory_bytes("2") == 9 with data.podfit.quantities as {"cpu": {}, "memory": {"2": 9}}
	quantity.memory_bytes("3") == 3 with data.podfit.quantities as {"cpu": {}, "memory": {"2": 9}}
}

test_memo_is_looked_up_for_strings_only if {
	memo := {"cpu": {"1": 1000}, "memory": {"1Gi": 1073741824}}
	not quantity.memory_bytes([]) with data.podfit.quantities as memo
	not quantity.cpu_millicores([]) with data.podfit.quantities as memo
	quantity.memory_bytes("1Gi") == 1073741824 with data.podfit.quantities as memo
}
