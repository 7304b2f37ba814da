# METADATA
# title: podfit DRA helpers
# description: >-
#   Containers whose CPU and memory may come from a Dynamic Resource Allocation claim (KEP-5517).
package podfit.lib.dra

import data.podfit.lib.k8s
import data.podfit.lib.platform

# claims(pod, c): the names of the ResourceClaims that container c (a record of k8s.pods) uses,
# from its resources.claims.
claims(pod, c) := {claim.name | some claim in _raw(pod, c).resources.claims}

_raw(pod, c) := k8s.pod_spec(pod.obj)[_key(c)][c.index]

_key(c) := "initContainers" if c.init

_key(c) := "containers" if not c.init

# from_claim(pod, c): the nodes can give CPU and memory through DRA claims (the
# DRANodeAllocatableResources gate, from podfit's version table) and container c uses one, so a CPU
# or memory request may be the claim's.
from_claim(pod, c) if {
	platform.dra_node_allocatable
	count(claims(pod, c)) > 0
}
