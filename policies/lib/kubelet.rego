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

# static_policy(obj): the configuration enables the static CPU Manager policy. The kubelet compares
# the name exactly (pkg/kubelet/cm/cpumanager: "none" or "static"; "Static" is an unknown policy and
# the kubelet does not start), as podfit.facts reads it.
static_policy(obj) if obj.cpuManagerPolicy == "static"

# option_on(obj, name): the CPU Manager policy option name is set to a string the kubelet reads as
# true (Go's strconv.ParseBool: "1", "t", "T", "TRUE", "true", "True"). A YAML boolean does not
# decode into the kubelet's map of strings (PF902), so it turns nothing on.
option_on(obj, name) if obj.cpuManagerPolicyOptions[name] in {"1", "t", "T", "TRUE", "true", "True"}
