# METADATA
# title: podfit quantity helpers
# description: |-
#   Exact parsing of Kubernetes resource quantities into integer millicores and bytes.
#   Arithmetic stays in integers (no floating point); a value that is not a quantity is undefined,
#   so the rules that need it stay silent (podfit's Python side reports PF903 for it).
package podfit.lib.quantity

# The grammar of k8s.io/apimachinery resource.Quantity, as in analyzer/podfit/quantity.py.
_pattern := `^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?))$`

# Decimal exponent of each decimal SI suffix.
_decimal := {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

_binary := {
	"Ki": 1024,
	"Mi": 1048576,
	"Gi": 1073741824,
	"Ti": 1099511627776,
	"Pi": 1125899906842624,
	"Ei": 1152921504606846976,
}

# _pow10(n) is 10^n for n >= 0.
_pow10(0) := 1

_pow10(n) := product([10 | some _ in numbers.range(1, n)]) if n > 0

# data.podfit.quantities, when given, is a memo of parsed strings: {"cpu": {text: millicores},
# "memory": {text: bytes}}. The embedded engine fills it by running this parser once over the
# distinct quantity strings of a run (the compiled policies do not cache function results); a
# string it does not hold is parsed as usual. Only strings are looked up: object.get reads an
# array key as a path.

_zeros := "000000000000000000000000000000000000"

# Kubernetes keeps a quantity in an int64 of the base unit; anything larger is invalid.
_max_base := 9223372036854775807

# Significant digits beyond this are not supported (undefined; real quantities have far fewer).
_max_digits := 30

# cpu_millicores(v) is the CPU quantity v in integer millicores, rounded up like Quantity.MilliValue.
cpu_millicores(v) := n if {
	is_string(v)
	n := object.get(object.get(data.podfit.quantities, "cpu", {}), v, null)
	n != null
} else := n if {
	is_number(v)
	v >= 0
	v < 1000000000000000
	v == floor(v)
	n := v * 1000
} else := n if {
	n := _fast(v, 3)
} else := _parse(v, 3)

# memory_bytes(v) is the memory quantity v in integer bytes, rounded up like Quantity.Value.
memory_bytes(v) := n if {
	is_string(v)
	n := object.get(object.get(data.podfit.quantities, "memory", {}), v, null)
	n != null
} else := n if {
	is_number(v)
	v >= 0
	v < 1000000000000000
	v == floor(v)
	n := v
} else := n if {
	n := _fast(v, 0)
} else := _parse(v, 0)

# valid(v) holds when v is a quantity podfit can parse.
valid(v) if memory_bytes(v)

# Fast path for the common string forms: digits, an optional fraction and an optional suffix
# ("500m", "1.5", "2Gi", "0.004k", "250000u"), recognised with string builtins only (cheaper than
# the general path's regular expression, which plain conftest evaluates for every value). The
# scaled value is the digits with the decimal point moved by pad places (suffix exponent + scale
# - fraction digits): zeros appended when pad >= 0, digits cut off and rounded up when pad < 0
# (decimal suffixes only), then times the binary multiplier. At most 15 significant digits (exact
# in OPA and in the compiled module); anything else, and every other form (signs, exponents,
# spaces, ".5"), takes the general path.
_fast(v, scale) := n if {
	is_string(v)
	body := trim_right(v, "KMGTikmun")
	s := _suffix[substring(v, count(body), -1)]
	parts := split(body, ".")
	count(parts) <= 2
	parts[0] != ""
	joined := concat("", parts)
	trim_left(joined, "0123456789") == ""
	pad := ((s[0] + scale) + count(parts[0])) - count(joined)
	digits := trim_left(joined, "0")
	(count(digits) + pad) + s[2] <= 18
	n := _shift(digits, pad, s[1])
}

# [decimal exponent, binary multiplier, digits of the multiplier] of the suffixes the fast path
# takes; the digit counts keep the fast path's results below 10^18 (the int64 bound is 9.2 × 10^18).
_suffix := {
	"": [0, 1, 1], "n": [-9, 1, 1], "u": [-6, 1, 1], "m": [-3, 1, 1],
	"k": [3, 1, 1], "M": [6, 1, 1], "G": [9, 1, 1], "T": [12, 1, 1],
	"Ki": [0, 1024, 4], "Mi": [0, 1048576, 7], "Gi": [0, 1073741824, 10], "Ti": [0, 1099511627776, 13],
}

_shift("", _, _) := 0

_shift(digits, pad, mult) := to_number(concat("", [digits, substring(_zeros, 0, pad)])) * mult if {
	digits != ""
	pad >= 0
	count(digits) + pad <= 15
}

_shift(digits, pad, 1) := n if {
	digits != ""
	pad < 0
	count(digits) <= 15
	n := _truncate_up(digits, count(digits) + pad)
}

_text(v) := trim_space(v) if is_string(v)

_text(v) := sprintf("%v", [v]) if is_number(v)

# An unsigned decimal string of at most 36 digits as an exact integer (to_number is exact up to
# 15 digits in OPA and in the compiled module; longer strings go in chunks of 9 digits).
_int(s) := _chunk(s) if count(s) <= 15

_int(s) := n if {
	count(s) > 15
	count(s) <= 36
	p := _pad36(s)
	high := (_chunk(substring(p, 0, 9)) * _pow10(9)) + _chunk(substring(p, 9, 9))
	low := (_chunk(substring(p, 18, 9)) * _pow10(9)) + _chunk(substring(p, 27, 9))
	n := (high * _pow10(18)) + low
}

_chunk(c) := 0 if trim_left(c, "0") == ""

_chunk(c) := to_number(trim_left(c, "0")) if trim_left(c, "0") != ""

# a <= b for non-negative integers given as decimal strings of at most 36 digits.
_le(a, b) if {
	count(a) <= 36
	count(b) <= 36
	_pad36(a) <= _pad36(b)
}

_pad36(s) := concat("", [substring(_zeros, 0, 36 - count(s)), s])

_exponent("") := 0

_exponent(e) := n if {
	e != ""
	body := substring(e, 1, -1)
	digits := trim_left(body, "+-")
	count(digits) <= 3
	n := _signed(substring(body, 0, 1), _chunk(digits))
	n <= 40
	n >= -40
}

_signed("-", n) := 0 - n

_signed(sign, n) := n if sign != "-"

# [binary multiplier, decimal exponent] of a suffix.
_multiplier(suffix) := [_binary[suffix], 0]

_multiplier(suffix) := [1, _decimal[suffix]]

_parse(v, scale) := n if {
	t := _text(v)
	count(t) <= 64
	m := regex.find_all_string_submatch_n(_pattern, t, 1)[0]
	parts := split(m[2], ".")
	fraction := concat("", array.slice(parts, 1, 2))
	digits := trim_left(concat("", [parts[0], fraction]), "0")
	count(digits) <= _max_digits
	mult := _multiplier(m[4])
	exp := ((_exponent(m[3]) + mult[1]) + scale) - count(fraction)
	significand := _int(digits) * mult[0]
	_sign_ok(m[1], significand)
	n := _scaled(significand, exp)
	_in_range(n, scale)
}

# Kubernetes keeps a quantity in an int64 of the base unit: n (in units of 10^-scale) fits.
_in_range(n, scale) if _le(sprintf("%v", [n]), sprintf("%v", [_max_base * _pow10(scale)]))

_sign_ok("", _)

_sign_ok("+", _)

_sign_ok("-", 0)

# significand * 10^exp, rounded up, without division.
_scaled(s, exp) := s * _pow10(exp) if exp >= 0

_scaled(0, exp) := 0 if exp < 0

_scaled(s, exp) := n if {
	exp < 0
	s > 0
	text := sprintf("%v", [s])
	keep := count(text) + exp
	n := _truncate_up(text, keep)
}

_truncate_up(_, keep) := 1 if keep <= 0

_truncate_up(text, keep) := n if {
	keep > 0
	keep <= 24
	head := _int(substring(text, 0, keep))
	tail := substring(text, keep, -1)
	n := head + _round(tail)
}

_round(tail) := 0 if trim_left(tail, "0") == ""

_round(tail) := 1 if trim_left(tail, "0") != ""
