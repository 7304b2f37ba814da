# METADATA
# title: podfit kubelet helpers
# description: KubeletConfiguration objects of the input and their CPU Manager policy.
package podfit.lib.kubelet

# configurations contains every KubeletConfiguration of the input.
configurations contains obj if {
	some obj in data.podfit.lib.k8s.objects
	obj.kind == "KubeletConfiguration"
	startswith(object.get(obj, "apiVersion", ""), "kubelet.config.k8s.io/")
}

# static_policy(obj): the configuration enables the static CPU Manager policy.
static_policy(obj) if lower(sprintf("%v", [obj.cpuManagerPolicy])) == "static"
