# METADATA
# title: podfit Kubernetes helpers
# description: |-
#   The objects of one input document (a `kind: List` is opened), the pod template of every workload
#   kind, its containers (init containers included) with their effective requests and limits, the
#   pod's QoS class and its effective requests and limits, all as exact integers.
package podfit.lib.k8s

import data.podfit.lib.quantity

# objects contains every object of the input: the input itself, or the items of a List.
objects contains input if not _is_list(input)

objects contains item if {
	_is_list(input)
	some item in input.items
	is_object(item)
}

_is_list(doc) if {
	doc.kind == "List"
	is_array(doc.items)
}

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

# workloads contains every workload object of the input that has a pod spec.
workloads contains obj if {
	some obj in objects
	pod_spec(obj)
}

name(obj) := n if {
	n := obj.metadata.name
	is_string(n)
} else := "<unnamed>"

# describe(obj) is how messages name an object: "Deployment web".
describe(obj) := sprintf("%v %v", [obj.kind, name(obj)])

# annotations(obj) merges the object's annotations with its pod template's (the template wins).
annotations(obj) := object.union(_annotations(obj), _annotations(template(obj)))

_annotations(x) := a if {
	a := x.metadata.annotations
	is_object(a)
} else := {}

# containers(obj) is every container of the pod, init containers first, each as
# {"name", "init", "sidecar", "index", "resources"} where resources is the raw resources object.
containers(obj) := array.concat(
	[_container(c, true, i) | some i, c in _list(pod_spec(obj), "initContainers")],
	[_container(c, false, i) | some i, c in _list(pod_spec(obj), "containers")],
)

# app_containers(obj) leaves out init containers (sidecars included: they are init containers).
app_containers(obj) := [c | some c in containers(obj); not c.init]

_list(spec, key) := l if {
	l := spec[key]
	is_array(l)
} else := []

_container(c, init, i) := {
	"name": _cname(c, init, i),
	"init": init,
	"sidecar": _sidecar(c, init),
	"index": i,
	"resources": _resources(c),
}

_sidecar(c, true) if c.restartPolicy == "Always"

default _sidecar(_, _) := false

_cname(c, _, _) := c.name if is_string(c.name)

_cname(c, init, i) := sprintf("%v[%d]", [_kind_word(init), i]) if not is_string(c.name)

_kind_word(true) := "initContainers"

_kind_word(false) := "containers"

_resources(c) := r if {
	r := c.resources
	is_object(r)
} else := {}

_section(c, part) := s if {
	s := c.resources[part]
	is_object(s)
} else := {}

# has(c, part, res): the container writes resources.<part>.<res> (whatever its value).
has(c, part, res) if {
	v := _section(c, part)[res]
	v != null
}

_value(c, part, res, parse) := quantity.cpu_millicores(_section(c, part)[res]) if parse == "cpu"

_value(c, part, res, parse) := quantity.memory_bytes(_section(c, part)[res]) if parse == "memory"

_parser(res) := "cpu" if res == "cpu"

_parser(res) := "memory" if res != "cpu"

# limit(c, res): the container's limit for res (integer millicores / bytes); undefined if unset or invalid.
limit(c, res) := _value(c, "limits", res, _parser(res))

# request(c, res): the effective request; an unset request defaults to the limit (Kubernetes).
request(c, res) := _value(c, "requests", res, _parser(res)) if has(c, "requests", res)

request(c, res) := limit(c, res) if not has(c, "requests", res)

# invalid(c): some CPU or memory value of the container is not a quantity (the rules stay silent).
invalid(c) if {
	some part in ["requests", "limits"]
	some res in ["cpu", "memory"]
	has(c, part, res)
	not quantity.valid(_section(c, part)[res])
}

# empty(c): the container sets no CPU or memory request or limit at all.
empty(c) if {
	not has(c, "requests", "cpu")
	not has(c, "requests", "memory")
	not has(c, "limits", "cpu")
	not has(c, "limits", "memory")
}

# any_invalid(obj): some container of the pod has an invalid quantity.
any_invalid(obj) if {
	some c in containers(obj)
	invalid(c)
}

# qos(obj) is the pod's QoS class (undefined when a quantity is invalid).
qos(obj) := "BestEffort" if {
	not any_invalid(obj)
	_best_effort(obj)
}

qos(obj) := "Guaranteed" if {
	not any_invalid(obj)
	not _best_effort(obj)
	every c in containers(obj) {
		_guaranteed(c)
	}
}

qos(obj) := "Burstable" if {
	not any_invalid(obj)
	not _best_effort(obj)
	some c in containers(obj)
	not _guaranteed(c)
}

_best_effort(obj) if {
	every c in containers(obj) {
		_zero_or_unset(c)
	}
}

_zero_or_unset(c) if {
	every part in ["requests", "limits"] {
		every res in ["cpu", "memory"] {
			object.get(_value_or_zero(c, part, res), "v", 0) == 0
		}
	}
}

_value_or_zero(c, part, res) := {"v": _value(c, part, res, _parser(res))} if has(c, part, res)

_value_or_zero(c, part, res) := {} if not has(c, part, res)

_guaranteed(c) if {
	every res in ["cpu", "memory"] {
		limit(c, res) == request(c, res)
	}
}

# pod_request(obj, res): max(Σ app containers + Σ sidecars, each init container + the sidecars
# started before it) + spec.overhead (Kubernetes' effective pod request).
pod_request(obj, res) := total if {
	not any_invalid(obj)
	cs := containers(obj)
	app := sum([_req0(c, res) | some c in cs; not c.init])
	sidecars := sum([_req0(c, res) | some c in cs; c.sidecar])
	inits := [(_req0(c, res) + _sidecars_before(cs, c.index, res)) | some c in cs; c.init; not c.sidecar]
	total := max(array.concat([app + sidecars], inits)) + overhead(obj, res)
}

_sidecars_before(cs, index, res) := sum([_req0(c, res) | some c in cs; c.sidecar; c.index < index])

_req0(c, res) := request(c, res)

_req0(c, res) := 0 if {
	not has(c, "requests", res)
	not has(c, "limits", res)
}

# pod_limit(obj, res): as pod_request for limits; undefined when an app container is unbounded.
pod_limit(obj, res) := total if {
	not any_invalid(obj)
	cs := containers(obj)
	every c in cs {
		has(c, "limits", res)
	}
	app := sum([limit(c, res) | some c in cs; not c.init])
	sidecars := sum([limit(c, res) | some c in cs; c.sidecar])
	inits := [(limit(c, res) + _limit_sidecars_before(cs, c.index, res)) | some c in cs; c.init; not c.sidecar]
	total := max(array.concat([app + sidecars], inits)) + overhead(obj, res)
}

_limit_sidecars_before(cs, index, res) := sum([limit(c, res) | some c in cs; c.sidecar; c.index < index])

# overhead(obj, res): spec.overhead of the pod (0 when unset).
overhead(obj, res) := _value({"resources": {"overhead": pod_spec(obj).overhead}}, "overhead", res, _parser(res)) if {
	has({"resources": {"overhead": pod_spec(obj).overhead}}, "overhead", res)
} else := 0

# missing_reported_elsewhere(obj, c): a container's missing requests are already reported for the
# whole pod by PF105 (BestEffort pod), or on vSphere Pods by PF401 (container without resources).
missing_reported_elsewhere(obj, _) if {
	not data.podfit.lib.platform.vsphere_pods
	qos(obj) == "BestEffort"
}

missing_reported_elsewhere(_, c) if {
	data.podfit.lib.platform.vsphere_pods
	empty(c)
}

# running(obj): the containers that run side by side: app containers and sidecars.
running(obj) := [c | some c in containers(obj); _runs(c)]

_runs(c) if not c.init

_runs(c) if c.sidecar

# fmt_cpu(m) / fmt_memory(b): canonical quantity strings for messages ("1500m", "2", "512Mi").
fmt_cpu(m) := sprintf("%d", [m / 1000]) if m % 1000 == 0

fmt_cpu(m) := sprintf("%dm", [m]) if m % 1000 != 0

fmt_memory(b) := s if {
	units := [[1152921504606846976, "Ei"], [1125899906842624, "Pi"], [1099511627776, "Ti"], [1073741824, "Gi"], [1048576, "Mi"], [1024, "Ki"]]
	fits := [sprintf("%v%s", [(b - (b % u[0])) / u[0], u[1]]) | some u in units; b > 0; b % u[0] == 0]
	s := array.concat(fits, [sprintf("%v", [b])])[0]
}

# container_word(c) is "container" or "init container".
container_word(c) := "init container" if c.init

container_word(c) := "container" if not c.init

# fmt(res, v) formats a CPU (millicores) or memory (bytes) amount.
fmt("cpu", v) := fmt_cpu(v)

fmt("memory", v) := fmt_memory(v)

# parse(res, v) parses a CPU or memory quantity.
parse("cpu", v) := quantity.cpu_millicores(v)

parse("memory", v) := quantity.memory_bytes(v)
