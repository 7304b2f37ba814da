# METADATA
# title: podfit init container helpers
# description: |-
#   When a one-shot init container's missing request matters to its pod (PF101, PF102, PF113).
package podfit.lib.init

import data.podfit.lib.k8s

# request_matters(pod, c, res): a missing res request of container c changes what the pod
# requests or its QoS class: c runs beside the others (an app container or a sidecar), or the pod
# requests no res at all without it (or its quantities are invalid), or every container that runs
# beside the others is Guaranteed (the one-shot init container alone keeps the pod Burstable).
# Otherwise a one-shot init container runs alone, before the app containers, inside the pod's
# reservation, which its missing request does not change (PF113 notes it).
request_matters(_, c, _) if _runs(c)

request_matters(pod, _, res) if not _requests(pod, res)

request_matters(pod, _, _) if {
	every c in k8s.counted(pod) {
		_guaranteed_or_one_shot(c)
	}
}

_guaranteed_or_one_shot(c) if c.guaranteed

_guaranteed_or_one_shot(c) if not _runs(c)

# _runs(c): the container runs beside the others: an app container or a sidecar.
_runs(c) if not c.init

_runs(c) if k8s.sidecar(c)

# _requests(pod, res): the pod's effective request of res is known and above zero.
_requests(pod, res) if k8s.pod_request(pod, res) > 0
