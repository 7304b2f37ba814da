# METADATA
# title: podfit Kubernetes helpers
# description: |-
#   The objects of one input document (a `kind: List` or typed list is opened), the pod template of every workload
#   kind, its containers (init containers included) with their effective requests and limits, the
#   pod's QoS class and its effective requests and limits, all as exact integers.
package podfit.lib.k8s

import data.podfit.lib.quantity

# objects lists every object of the input: the items of a List or of a typed list (PodList,
# DeploymentList, any <Kind>List with items, whose items may leave out apiVersion and kind: they are
# the list's apiVersion and <Kind>), or the input itself. (An array, not a set: a set hashes each
# whole object to store it, and again each time a rule iterates it.)
objects := [item | some item in input.items; is_object(item)] if {
	input.kind == "List"
	is_array(input.items)
}

objects := [_typed_item(input, item) | some item in input.items; is_object(item)] if _is_typed_list(input)

objects := [input] if not _is_list(input)

_is_list(doc) if {
	doc.kind == "List"
	is_array(doc.items)
}

_is_list(doc) if _is_typed_list(doc)

_is_typed_list(doc) if {
	is_string(doc.kind)
	endswith(doc.kind, "List")
	doc.kind != "List"
	is_array(doc.items)
}

_typed_item(list, item) := object.union(
	{"apiVersion": object.get(list, "apiVersion", ""), "kind": trim_suffix(list.kind, "List")},
	item,
)

workload_kinds := {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job", "CronJob"}

# template(obj) is the object holding the pod's metadata and spec.
template(obj) := obj if obj.kind == "Pod"

template(obj) := obj.spec.template if {
	obj.kind in workload_kinds
	not obj.kind in {"Pod", "CronJob"}
}

template(obj) := obj.spec.jobTemplate.spec.template if obj.kind == "CronJob"

# pod_spec(obj) is the pod spec of a workload object.
pod_spec(obj) := spec if {
	spec := template(obj).spec
	is_object(spec)
}

name(obj) := n if {
	n := obj.metadata.name
	is_string(n)
} else := "<unnamed>"

# annotations(obj) merges the object's annotations with its pod template's (the template wins).
annotations(obj) := object.union(_annotations(obj), _annotations(template(obj)))

_annotations(x) := a if {
	a := x.metadata.annotations
	is_object(a)
} else := {}

# pods lists one record per workload object of the input, computed once (an array: see objects):
# {"obj", "kind", "name", "containers", "invalid", "qos", "overhead", "pod_level"}. containers
# lists the init containers first, then the app containers, each as a record (see _container);
# pod_level is the pod's own spec.resources (see _pod_level); qos is "Guaranteed", "Burstable",
# "BestEffort", or null when some quantity is invalid.
pods := [pod |
	some obj in objects
	spec := pod_spec(obj)
	defaults := container_defaults(obj)
	cs := array.concat(
		[_container(c, true, i, defaults) | c := _list(spec, "initContainers")[i]],
		[_container(c, false, i, defaults) | c := _list(spec, "containers")[i]],
	)
	level := _pod_level(spec)
	invalid := sum([c.invalid | some c in cs]) + level.invalid
	pod := {
		"obj": obj,
		"kind": obj.kind,
		"name": name(obj),
		"containers": cs,
		"invalid": invalid,
		"qos": _pod_qos(invalid, level, cs),
		"overhead": _overhead(spec),
		"pod_level": level,
	}
]

# _pod_level(spec): the pod-level resources (spec.resources, PodLevelResources, Kubernetes 1.32+):
# {"request": {"cpu": m, "memory": b}, "limit": {...}, "invalid": n}, a resource missing when unset.
_pod_level(spec) := {"request": {}, "limit": {}, "invalid": 0} if {
	not spec.resources
} else := level if {
	requests := _object(_object(spec, "resources"), "requests")
	limits := _object(_object(spec, "resources"), "limits")
	written := count([r | some r in ["cpu", "memory"]; object.get(requests, r, null) != null]) + count([r | some r in ["cpu", "memory"]; object.get(limits, r, null) != null])
	request := {r: v | some r in ["cpu", "memory"]; object.get(requests, r, null) != null; v := parse(r, requests[r])}
	limit := {r: v | some r in ["cpu", "memory"]; object.get(limits, r, null) != null; v := parse(r, limits[r])}
	level := {"request": request, "limit": limit, "invalid": written - (count(request) + count(limit))}
}

# pod_level_sets(pod, res): the pod sets a request or limit of res at pod level, which then
# stands for its containers' (the scheduler and the kubelet use it).
pod_level_sets(pod, res) if pod.pod_level.request[res]

pod_level_sets(pod, res) if pod.pod_level.limit[res]

# QoS class: from the pod-level resources alone when the pod sets any (ComputePodQOS), else from
# the containers (_qos).
_pod_qos(invalid, _, _) := null if invalid > 0

_pod_qos(0, level, cs) := _qos(0, sum([c.nonzero | some c in cs]), sum([c.guaranteed | some c in cs]), count(cs)) if {
	count(level.request) + count(level.limit) == 0
}

_pod_qos(0, level, cs) := "Guaranteed" if {
	count(level.request) + count(level.limit) > 0
	level.limit.cpu == _level_request(level, cs, "cpu")
	level.limit.memory == _level_request(level, cs, "memory")
}

_pod_qos(0, level, cs) := "Burstable" if {
	count(level.request) + count(level.limit) > 0
	not _level_guaranteed(level, cs)
}

_level_guaranteed(level, cs) if {
	level.limit.cpu == _level_request(level, cs, "cpu")
	level.limit.memory == _level_request(level, cs, "memory")
}

# _level_request(level, cs, res): the pod-level request as the API server defaults it: written,
# else (next to a pod-level limit) the containers' effective request when one sets it, else the limit.
_level_request(level, _, res) := level.request[res]

_level_request(level, cs, res) := _containers_total(cs, res) if {
	not level.request[res]
	_some_request(cs, res)
}

_level_request(level, cs, res) := level.limit[res] if {
	not level.request[res]
	not _some_request(cs, res)
}

_some_request(cs, res) if {
	some c in cs
	object.get(c.request, res, null) != null
}

# app_containers(pod) leaves out init containers (sidecars included: they are init containers).
app_containers(pod) := [c | some c in pod.containers; not c.init]

# running(pod): the containers that run side by side: app containers and sidecars.
running(pod) := [c | some c in pod.containers; _runs(c)]

_runs(c) if not c.init

_runs(c) if sidecar(c)

_list(spec, key) := l if {
	l := object.get(spec, key, null)
	is_array(l)
} else := []

# container_defaults(obj) is what the LimitRanges of the object's namespace give a container that
# sets nothing: {"request": {"cpu": m, "memory": b}, "limit": {...}}, from the facts podfit computes
# (data.podfit.namespaces); none without them.
container_defaults(obj) := d if {
	d := data.podfit.namespaces[_namespace(obj)].container_defaults
	is_object(d)
} else := {"request": {}, "limit": {}}

_namespace(obj) := ns if {
	ns := obj.metadata.namespace
	is_string(ns)
	ns != ""
} else := "default"

# A container record:
#   name, init, index, restart_policy
#   has:     {"requests": {"cpu", "memory"}, "limits": {...}}: the resources whose request or limit
#            is set, written or given by the namespace's LimitRange defaults
#   request: {"cpu": m, "memory": b}: effective requests (an unset request takes the container's own
#            limit, then the LimitRange default request)
#   limit:   {"cpu": m, "memory": b}: limits (written, else the LimitRange default limit)
#   (a resource is missing from request/limit when unset or invalid)
#   invalid: how many written CPU/memory values are not quantities; written: how many are set
#   nonzero: 1 when some request or limit is not zero, else 0
#   guaranteed: 1 when the CPU and memory limits are set and equal the (effective) requests, else 0
# (Booleans are avoided as values: counts and sets evaluate the same in OPA and rego-cpp.)
# A container without resources (common) takes a shortcut; the general case parses each value once.
_container(c, init, i, defaults) := object.union(_resources(_object(_object(c, "resources"), "requests"), _object(_object(c, "resources"), "limits"), defaults), {
	"name": _cname(c, init, i),
	"init": init,
	"restart_policy": object.get(c, "restartPolicy", ""),
	"index": i,
})

_no_resources := {
	"has": {"requests": set(), "limits": set()},
	"request": {}, "limit": {},
	"invalid": 0, "written": 0, "nonzero": 0, "guaranteed": 0,
}

_resources(requests, limits, defaults) := _no_resources if {
	count(requests) == 0
	count(limits) == 0
	count(defaults.request) == 0
	count(defaults.limit) == 0
} else := rec if {
	written_requests := {res | some res in ["cpu", "memory"]; object.get(requests, res, null) != null}
	written_limits := {res | some res in ["cpu", "memory"]; object.get(limits, res, null) != null}
	explicit := {res: v | some res in written_requests; v := parse(res, object.get(requests, res, null))}
	own_limit := {res: v | some res in written_limits; v := parse(res, object.get(limits, res, null))}
	limit := object.union({res: v | some res in ["cpu", "memory"]; not res in written_limits; v := defaults.limit[res]}, own_limit)
	request := object.union(
		{res: v | some res in ["cpu", "memory"]; not res in written_requests; not res in written_limits; v := defaults.request[res]},
		object.union({res: v | some res in written_limits; not res in written_requests; v := own_limit[res]}, explicit),
	)
	has_requests := written_requests | {res | some res, _ in request}
	has_limits := written_limits | {res | some res, _ in limit}
	rec := {
		"has": {"requests": has_requests, "limits": has_limits},
		"request": request,
		"limit": limit,
		"invalid": (count(written_requests) - count(explicit)) + (count(written_limits) - count(own_limit)),
		"written": count(has_requests) + count(has_limits),
		"nonzero": _nonzero(request, limit),
		"guaranteed": _guaranteed(request, limit),
	}
}

_nonzero(request, limit) := 1 if {
	some v in request
	v != 0
} else := 1 if {
	some v in limit
	v != 0
} else := 0

_guaranteed(request, limit) := 1 if {
	limit.cpu == request.cpu
	limit.memory == request.memory
} else := 0

_object(o, key) := v if {
	is_object(o)
	v := object.get(o, key, null)
	is_object(v)
} else := {}

# sidecar(c): an init container that keeps running beside the app containers.
sidecar(c) if {
	c.init
	c.restart_policy == "Always"
}

_cname(c, init, i) := n if {
	n := c.name
	is_string(n)
	n != ""
} else := sprintf("%v[%v]", [_kind_word(init), i])

_kind_word(true) := "initContainers"

_kind_word(false) := "containers"

# QoS class per Kubernetes: BestEffort when no container sets a non-zero CPU or memory request or
# limit; Guaranteed when every container's limits equal its (effective) requests for both.
# Arguments: invalid quantities, containers with a non-zero value, Guaranteed containers, containers.
_qos(invalid, _, _, _) := null if invalid > 0

_qos(0, 0, _, _) := "BestEffort"

_qos(0, nonzero, guaranteed, n) := "Guaranteed" if {
	nonzero > 0
	guaranteed == n
}

_qos(0, nonzero, guaranteed, n) := "Burstable" if {
	nonzero > 0
	guaranteed != n
}

# pod_request(pod, res): the pod-level request when the pod sets one (see _level_request), else
# max(Σ app containers + Σ sidecars, each init container + the sidecars started before it);
# + spec.overhead: Kubernetes' effective pod request. Undefined if invalid.
pod_request(pod, res) := total if {
	pod.invalid == 0
	pod_level_sets(pod, res)
	total := _level_request(pod.pod_level, pod.containers, res) + pod.overhead[res]
} else := total if {
	pod.invalid == 0
	total := _containers_total(pod.containers, res) + pod.overhead[res]
}

_containers_total(cs, res) := max_of(array.concat(
	[sum([object.get(c.request, res, 0) | some c in cs; _runs(c)])],
	[_init_request(cs, c, res) | some c in cs; c.init; not sidecar(c)],
))

_init_request(cs, init, res) := object.get(init.request, res, 0) + sum([object.get(c.request, res, 0) | some c in cs; sidecar(c); c.index < init.index])

# pod_limit(pod, res): the pod-level limit when the pod sets one, else as pod_request for
# limits, undefined when some container has no limit.
pod_limit(pod, res) := total if {
	pod.invalid == 0
	total := pod.pod_level.limit[res] + pod.overhead[res]
} else := total if {
	pod.invalid == 0
	cs := pod.containers
	not _some_unlimited(cs, res)
	app := sum([c.limit[res] | some c in cs; _runs(c)])
	inits := [_init_limit(cs, c, res) | some c in cs; c.init; not sidecar(c)]
	total := max_of(array.concat([app], inits)) + pod.overhead[res]
}

_init_limit(cs, init, res) := init.limit[res] + sum([c.limit[res] | some c in cs; sidecar(c); c.index < init.index])

_some_unlimited(cs, res) if {
	some c in cs
	not c.limit[res]
}

# spec.overhead of the pod: {"cpu": m, "memory": b} (0 when unset or invalid).
_overhead(spec) := {"cpu": 0, "memory": 0} if {
	not spec.overhead
} else := {res: _overhead_value(o, res) | some res in ["cpu", "memory"]} if {
	o := _object(spec, "overhead")
}

_overhead_value(o, res) := v if {
	v := parse(res, o[res])
} else := 0

# missing_reported_elsewhere(obj, c): a container's missing requests are already reported for the
# whole pod by PF105 (BestEffort pod), or on vSphere Pods by PF401 (container without resources,
# LimitRange defaults included: a Python rule of `podfit check`, which plain conftest does not run).
missing_reported_elsewhere(pod, _) if {
	not data.podfit.lib.platform.vsphere_pods
	pod.qos == "BestEffort"
}

missing_reported_elsewhere(_, c) if {
	data.podfit.lib.platform.vsphere_pods
	c.written == 0
}

# max_of(xs) is the largest number of the non-empty array xs. (rego-cpp's max and sort compare
# some numbers as text: max([805306368, 5368709120]) is 805306368 there.)
max_of(xs) := [m | some m in xs; count([x | some x in xs; x > m]) == 0][0]

# modulo(x, y) is x modulo y and floor_div(x, y) is floor(x / y), for non-negative integers below 2^53.
# (rego-cpp's % can return a zero written "000" that does not equal 0; floor division is exact in
# this range in OPA and rego-cpp alike.)
modulo(x, y) := x - (y * floor(x / y))

floor_div(x, y) := floor(x / y)

# whole_cpus(m): m millicores is a whole number of CPUs, by its digits (exact at any size).
# format_int is native in the compiled (wasm) policies, where sprintf calls back into the host,
# but takes only 32-bit values there (rego-cpp's stops at 64 bits, and its % can yield a zero
# unequal to 0): sprintf takes the rest.
whole_cpus(m) if {
	abs(m) < 2147483648
	endswith(format_int(m, 10), "000")
}

whole_cpus(m) if {
	abs(m) >= 2147483648
	endswith(sprintf("%v", [m]), "000")
}

whole_cpus(0)

# num(n): a number as messages write it, an integer in decimal. format_int where it can (native in
# the compiled policies, where each sprintf is a call back into the host; 32-bit there), sprintf
# otherwise. Messages that use it are built with concat (see docs/rego.md: rego-cpp's sprintf quotes
# concat results).
num(n) := format_int(n, 10) if {
	abs(n) < 2147483648
	n == floor(n)
} else := sprintf("%v", [n])

# fmt_cpu(m) / fmt_memory(b): canonical quantity strings for messages ("1500m", "2", "512Mi").
fmt_cpu(m) := num(m / 1000) if whole_cpus(m)

fmt_cpu(m) := concat("", [num(m), "m"]) if not whole_cpus(m)

_units := [[1152921504606846976, "Ei"], [1125899906842624, "Pi"], [1099511627776, "Ti"], [1073741824, "Gi"], [1048576, "Mi"], [1024, "Ki"]]

fmt_memory(b) := s if {
	b < 9007199254740992
	fits := [concat("", [num(b / u[0]), u[1]]) | some u in _units; b > 0; modulo(b, u[0]) == 0]
	s := array.concat(fits, [num(b)])[0]
} else := num(b)

# container_word(c) is "container" or "init container".
container_word(c) := "init container" if c.init

container_word(c) := "container" if not c.init

# fmt(res, v) formats a CPU (millicores) or memory (bytes) amount.
fmt("cpu", v) := fmt_cpu(v)

fmt("memory", v) := fmt_memory(v)

# parse(res, v) parses a CPU or memory quantity.
parse("cpu", v) := quantity.cpu_millicores(v)

parse("memory", v) := quantity.memory_bytes(v)
