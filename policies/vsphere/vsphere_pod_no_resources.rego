# METADATA
# title: vSphere Pod container without resources
# description: >-
#   On vSphere Pods, a container sets neither requests nor limits, so the CRX gets the default 1
#   vCPU and 1 GiB.
# custom:
#   id: PF401
#   severity: error
#   slug: vsphere-pod-no-resources
#   source: >-
#     Performance Best Practices for Kubernetes with VMware Tanzu (2021), "Specifying container
#     resource requests and limits" (vSphere Pods)
#   requires:
#     - runtime-vsphere-pods
package podfit.vsphere.vsphere_pod_no_resources

import data.podfit.lib.k8s
import data.podfit.lib.platform
import data.podfit.lib.result

findings contains f if {
	platform.vsphere_pods
	some pod in k8s.pods
	some c in pod.containers
	c.written == 0
	msg := concat("", [
		k8s.container_word(c), " \"", c.name,
		"\" of a vSphere Pod sets no requests or limits; a CRX sized from none gets 1 vCPU and 1 GiB",
	])
	f := result.finding(rego.metadata.chain(), pod.obj, c.name, msg, {"init_container": c.init})
}
