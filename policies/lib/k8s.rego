# METADATA
# title: podfit Kubernetes helpers
# description: |-
#   The objects of one input document (a `kind: List` or typed list is opened), the pod template of every workload
#   kind, its containers (init containers included) with their effective requests and limits, the
#   pod's QoS class and its effective requests and limits, all as exact integers.
package podfit.lib.k8s

import data.podfit.lib.quantity

# objects[i] is the i-th object of the input: an item of a List or of a typed list (PodList,
# DeploymentList, any <Kind>List with items, whose items may leave out apiVersion and kind: they are
# the list's apiVersion and <Kind>), or the input itself (0). Keyed by position rather than a set: a
# set hashes each whole object to store it, which doubled the compiled policies' time
# (docs/architecture.md); nothing relies on the order.
objects[i] := item if {
	input.kind == "List"
	is_array(input.items)
	some i, item in input.items
	is_object(item)
}

objects[i] := _typed_item(input, item) if {
	_is_typed_list(input)
	some i, item in input.items
	is_object(item)
}

objects[0] := input if not _is_list(input)

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

workload_kinds := {
	"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job",
	"CronJob",
}

# template(obj) is the object holding the pod's metadata and spec.
template(obj) := obj if obj.kind == "Pod"

template(obj) := obj.spec.template if {
	obj.kind in workload_kinds
	not obj.kind in {"Pod", "CronJob"}
}

template(obj) := obj.spec.jobTemplate.spec.template if obj.kind == "CronJob"

# (a workload CRD's: see custom_workload_kinds)
template(obj) := t if {
	not obj.kind in workload_kinds
	path := _kind_paths[concat("/", [api_group(obj), obj.kind])]
	t := object.get(obj, path, null)
}

# custom_workload_kinds["GROUP/KIND"] is the path from an object of a workload CRD to its pod
# template (podfit.model.CUSTOM_WORKLOAD_KINDS, held equal by tests/test_facts_agree.py).
custom_workload_kinds := {
	"argoproj.io/Rollout": ["spec", "template"],
	"serving.knative.dev/Service": ["spec", "template"],
	"serving.knative.dev/Configuration": ["spec", "template"],
	"apps.kruise.io/CloneSet": ["spec", "template"],
	"keda.sh/ScaledJob": ["spec", "jobTargetRef", "template"],
	"apps.openshift.io/DeploymentConfig": ["spec", "template"],
}

# the workload CRDs of the config (`workload-kinds:`, handed over as data.podfit.workload_kinds)
# first, then podfit's own
_kind_paths := object.union(custom_workload_kinds, _configured_kinds)

default _configured_kinds := {}

_configured_kinds := k if {
	k := data.podfit.workload_kinds
	is_object(k)
}

# api_group(obj): the API group of the object's apiVersion ("" for the core group's "v1").
api_group(obj) := g if {
	is_string(obj.apiVersion)
	contains(obj.apiVersion, "/")
	parts := split(obj.apiVersion, "/")
	g := concat("/", array.slice(parts, 0, count(parts) - 1))
} else := ""

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

# pods[i] is the record of the workload objects[i] (keyed by position, as objects):
# {"obj", "kind", "name", "containers", "invalid", "qos", "overhead", "pod_level"}. containers
# lists the init containers first, then the app containers, each as a record (see _container);
# invalid counts the quantities that do not parse; pod_level is the pod's own spec.resources (see
# _pod_level); qos is "Guaranteed", "Burstable", "BestEffort", or null when some quantity is invalid.
pods[i] := pod if {
	some i, obj in objects
	spec := pod_spec(obj)
	defaults := container_defaults(obj)
	cs := array.concat(
		[_container(c, true, j, defaults) | some j, c in _list(spec, "initContainers")],
		[_container(c, false, j, defaults) | some j, c in _list(spec, "containers")],
	)
	level := _pod_level(spec)
	invalid := sum([c.invalid | some c in cs]) + level.invalid
	injected := [_injected_container(proxy, j) | some j, proxy in data.podfit.lib.platform.injected(obj)]
	pod := {
		"obj": obj,
		"kind": obj.kind,
		"name": name(obj),
		"containers": cs,
		"injected": injected,
		"invalid": invalid,
		"qos": _pod_qos(invalid, level, array.concat(cs, injected)),
		"overhead": _overhead(spec),
		"pod_level": level,
	}
}

# _injected_container(proxy, j): the record (as _container's) of a container a service mesh's
# webhook adds at admission, from the facts (data.podfit.lib.platform.injected), marked injected.
_injected_container(proxy, j) := {
	"name": proxy.name,
	"init": false,
	"restart_policy": "",
	"index": j,
	"injected": true,
	"has": {"requests": object.keys(request), "limits": object.keys(limit)},
	"request": request,
	"limit": limit,
	"invalid": 0,
	"written": count(request) + count(limit),
	"nonzero": _nonzero(request, limit),
	"guaranteed": _guaranteed(request, limit),
} if {
	request := _object(proxy, "request")
	limit := _object(proxy, "limit")
}

# counted(pod): the containers the pod runs once admitted: its own and those injected into it.
counted(pod) := array.concat(pod.containers, object.get(pod, "injected", []))

# injection_note(pod): what a finding adds when it counts containers a service mesh injects.
injection_note(pod) := "" if {
	count(object.get(pod, "injected", [])) == 0
} else := concat("", [
	" (counting the ", concat(", ", [c.name | some c in pod.injected]),
	" container its service mesh injects)",
])

# _pod_level(spec): the pod-level resources (spec.resources, PodLevelResources, Kubernetes 1.32+):
# {"request": {"cpu": m, "memory": b}, "limit": {...}, "invalid": n}, a resource missing when unset.
_pod_level(spec) := {"request": {}, "limit": {}, "invalid": 0} if {
	not spec.resources
} else := level if {
	requests := _object(_object(spec, "resources"), "requests")
	limits := _object(_object(spec, "resources"), "limits")
	written := count(_set_resources(requests)) + count(_set_resources(limits))
	request := {r: v | some r in _set_resources(requests); v := parse(r, requests[r])}
	limit := {r: v | some r in _set_resources(limits); v := parse(r, limits[r])}
	level := {"request": request, "limit": limit, "invalid": written - (count(request) + count(limit))}
}

_set_resources(values) := {r | some r in ["cpu", "memory"]; object.get(values, r, null) != null}

# pod_level_sets(pod, res): the pod sets a request or limit of res at pod level, which then
# stands for its containers' (the scheduler and the kubelet use it).
pod_level_sets(pod, res) if pod.pod_level.request[res]

pod_level_sets(pod, res) if pod.pod_level.limit[res]

# QoS class: from the pod-level resources alone when the pod sets any (ComputePodQOS), else from
# the containers (_qos).
_pod_qos(invalid, _, _) := null if invalid > 0

_pod_qos(0, level, cs) := _qos(0, cs) if {
	count(level.request) + count(level.limit) == 0
}

_pod_qos(0, level, cs) := "Guaranteed" if {
	count(level.request) + count(level.limit) > 0
	_level_guaranteed(level, cs)
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

# _runs(c): the container runs beside the others: an app container or a sidecar.
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
#   nonzero: some request or limit is not zero
#   guaranteed: the CPU and memory limits are set and equal the (effective) requests
# A container without resources (common) takes a shortcut; the general case parses each value once.
_container(c, init, i, defaults) := object.union(
	_resources(_object(_object(c, "resources"), "requests"), _object(_object(c, "resources"), "limits"), defaults),
	{
		"name": _cname(c, init, i),
		"init": init,
		"restart_policy": object.get(c, "restartPolicy", ""),
		"index": i,
	},
)

_no_resources := {
	"has": {"requests": set(), "limits": set()},
	"request": {}, "limit": {},
	"invalid": 0, "written": 0, "nonzero": false, "guaranteed": false,
}

_resources(requests, limits, defaults) := _no_resources if {
	count(requests) == 0
	count(limits) == 0
	count(defaults.request) == 0
	count(defaults.limit) == 0
} else := rec if {
	written_requests := {res | some res in ["cpu", "memory"]; object.get(requests, res, null) != null}
	written_limits := {res | some res in ["cpu", "memory"]; object.get(limits, res, null) != null}
	explicit := {res: v | some res in written_requests; v := parse(res, requests[res])}
	own_limit := {res: v | some res in written_limits; v := parse(res, limits[res])}
	limit := object.union(_defaults(defaults.limit, written_limits), own_limit)
	request := object.union(
		_defaults(defaults.request, written_requests | written_limits),
		object.union({res: v | some res in (written_limits - written_requests); v := own_limit[res]}, explicit),
	)
	has_requests := written_requests | object.keys(request)
	has_limits := written_limits | object.keys(limit)
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

# The namespace's defaults for the resources not written.
_defaults(given, written) := {res: v | some res in ["cpu", "memory"]; not res in written; v := given[res]}

default _nonzero(_, _) := false

_nonzero(request, _) if {
	some v in request
	v != 0
}

_nonzero(_, limit) if {
	some v in limit
	v != 0
}

default _guaranteed(_, _) := false

_guaranteed(request, limit) if {
	limit.cpu == request.cpu
	limit.memory == request.memory
}

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
} else := sprintf("%s[%d]", [_kind_word(init), i])

_kind_word(true) := "initContainers"

_kind_word(false) := "containers"

# QoS class per Kubernetes: BestEffort when no container sets a non-zero CPU or memory request or
# limit; Guaranteed when every container's limits equal its (effective) requests for both; null
# when some quantity is invalid.
_qos(invalid, _) := null if invalid > 0

_qos(0, cs) := "BestEffort" if {
	every c in cs {
		not c.nonzero
	}
} else := "Guaranteed" if {
	every c in cs {
		c.guaranteed
	}
} else := "Burstable"

# pod_request(pod, res): the pod-level request when the pod sets one (see _level_request), else
# max(Σ app containers + Σ sidecars, each init container + the sidecars started before it);
# + spec.overhead: Kubernetes' effective pod request. Undefined if invalid.
pod_request(pod, res) := total if {
	pod.invalid == 0
	pod_level_sets(pod, res)
	total := _level_request(pod.pod_level, counted(pod), res) + pod.overhead[res]
} else := total if {
	pod.invalid == 0
	total := _containers_total(counted(pod), res) + pod.overhead[res]
}

_containers_total(cs, res) := max({app} | inits) if {
	app := sum([object.get(c.request, res, 0) | some c in cs; _runs(c)])
	inits := {_init_request(cs, c, res) | some c in cs; c.init; not sidecar(c)}
}

_init_request(cs, init, res) := object.get(init.request, res, 0) + sum([object.get(c.request, res, 0) |
	some c in cs
	sidecar(c)
	c.index < init.index
])

# pod_limit(pod, res): the pod-level limit when the pod sets one, else as pod_request for
# limits, undefined when some container has no limit.
pod_limit(pod, res) := total if {
	pod.invalid == 0
	total := pod.pod_level.limit[res] + pod.overhead[res]
} else := total if {
	pod.invalid == 0
	cs := counted(pod)
	not _some_unlimited(cs, res)
	app := sum([c.limit[res] | some c in cs; _runs(c)])
	inits := {_init_limit(cs, c, res) | some c in cs; c.init; not sidecar(c)}
	total := max({app} | inits) + pod.overhead[res]
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

# whole_cpus(m): m millicores is a whole number of CPUs.
whole_cpus(m) if m % 1000 == 0

# num(n): a number as messages write it, an integer in decimal. Messages are built with concat
# and num rather than sprintf: the compiled policies call back into the host for every sprintf,
# which made them four times slower (docs/architecture.md). format_int is native there but takes
# only 32-bit values (larger ones abort the evaluation), so sprintf takes the rest.
num(n) := format_int(n, 10) if {
	abs(n) < 2147483648
	n == floor(n)
} else := sprintf("%v", [n])

# fmt_cpu(m) / fmt_memory(b): canonical quantity strings for messages ("1500m", "2", "512Mi").
fmt_cpu(m) := num(m / 1000) if whole_cpus(m)

fmt_cpu(m) := concat("", [num(m), "m"]) if not whole_cpus(m)

# The binary suffixes, largest first.
_units := [
	["Ei", 1152921504606846976], ["Pi", 1125899906842624], ["Ti", 1099511627776], ["Gi", 1073741824],
	["Mi", 1048576], ["Ki", 1024],
]

# (Below 2^53 only: the compiled policies divide in double precision.)
fmt_memory(b) := concat("", [num(b / unit), suffix]) if {
	b > 0
	b < 9007199254740992
	[suffix, unit] := [u | some u in _units; b % u[1] == 0][0]
} else := num(b)

# container_word(c) is "sidecar" (an init container that keeps running), "init container" or "container".
container_word(c) := "sidecar" if sidecar(c)

else := "init container" if c.init

else := "container"

# fmt(res, v) formats a CPU (millicores) or memory (bytes) amount.
fmt("cpu", v) := fmt_cpu(v)

fmt("memory", v) := fmt_memory(v)

# parse(res, v) parses a CPU or memory quantity.
parse("cpu", v) := quantity.cpu_millicores(v)

parse("memory", v) := quantity.memory_bytes(v)
