# METADATA
# title: podfit cluster helpers
# description: |-
#   The node pools of a TanzuKubernetesCluster (run.tanzu.vmware.com v1alpha1, v1alpha2, v1alpha3)
#   or of a Cluster API Cluster with a managed topology (vmClass variables), as
#   {"name", "vm_class"} objects, the control plane included.
package podfit.lib.cluster

tkc(obj) if {
	obj.kind == "TanzuKubernetesCluster"
	startswith(object.get(obj, "apiVersion", ""), "run.tanzu.vmware.com/")
}

capi(obj) if {
	obj.kind == "Cluster"
	startswith(object.get(obj, "apiVersion", ""), "cluster.x-k8s.io/")
	is_object(obj.spec.topology)
}

# clusters contains every cluster object of the input.
clusters contains obj if {
	some obj in data.podfit.lib.k8s.objects
	_cluster(obj)
}

_cluster(obj) if tkc(obj)

_cluster(obj) if capi(obj)

# node_pools(obj) contains {"name", "vm_class"} for every pool with a VM class.
node_pools(obj) := {p | some p in _pools(obj); is_string(p.vm_class)}

# v1alpha1: spec.topology.controlPlane.class and spec.topology.workers.class.
_pools(obj) := pools if {
	tkc(obj)
	t := obj.spec.topology
	pools := array.concat(
		[{"name": sprintf("%s-control-plane", [_name(obj)]), "vm_class": _first(t.controlPlane, ["vmClass", "class"])} | is_object(t.controlPlane)],
		array.concat(
			[{"name": sprintf("%s-workers", [_name(obj)]), "vm_class": t.workers.class} | is_object(t.workers)],
			[_tkc_pool(p, i) | p := _array(t, "nodePools")[i]],
		),
	)
}

# Cluster API: the vmClass variable of the topology, overridden per control plane or machine deployment.
_pools(obj) := pools if {
	capi(obj)
	t := obj.spec.topology
	default_class := _variable(_array(t, "variables"), "vmClass")
	pools := array.concat(
		[{"name": sprintf("%s-control-plane", [_name(obj)]), "vm_class": _override(t.controlPlane, default_class)} | is_object(t.controlPlane)],
		[_capi_pool(md, i, default_class) | md := _array(object.get(t, "workers", {}), "machineDeployments")[i]],
	)
}

_tkc_pool(p, i) := {"name": _pool_name(p, "pool", i), "vm_class": _first(p, ["vmClass", "class"])}

_capi_pool(md, i, default_class) := {"name": _pool_name(md, "md", i), "vm_class": _override(md, default_class)}

_first(o, keys) := v if {
	v := [o[k] | some k in keys; is_string(o[k]); o[k] != ""][0]
} else := null

_pool_name(p, _, _) := p.name if _named(p)

_pool_name(p, prefix, i) := sprintf("%s-%v", [prefix, i]) if not _named(p)

_named(x) if is_string(x.name)

_name(obj) := data.podfit.lib.k8s.name(obj)

# critical(obj): the cluster carries the annotation podfit.io/critical: "true" (or yes, 1).
critical(obj) if lower(sprintf("%v", [obj.metadata.annotations["podfit.io/critical"]])) in {"true", "yes", "1"}

_array(o, key) := v if {
	v := o[key]
	is_array(v)
} else := []

_variable(vars, name) := v if {
	v := [x.value | some x in vars; x.name == name][0]
} else := null

_override(part, default_class) := v if {
	v := _variable(_array(object.get(part, "variables", {}), "overrides"), "vmClass")
	v != null
} else := default_class
