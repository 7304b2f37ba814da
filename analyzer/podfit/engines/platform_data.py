"""A podfit Platform as the facts the Rego policies read from ``data.podfit.platform``.

The shape (documented in docs/rego.md) is plain JSON so that conftest users can pass the same
facts with ``--data``::

    {"runtime": "tkg" | "vsphere-pods" | "bare-metal",
     "numa_node": {"cores": int, "memory": int},        # smallest host NUMA node (bytes)
     "smt": bool,                                       # hosts run >1 hardware thread per core
     "node_logical_cpus": int,                          # largest node pods land on
     "vm_classes": {name: {"cpus": int, "memory": int, "reserved": bool}},
     "node_pools": [{"name": str, "vm_class": str, "count": int}],
     "kubelet": {"cpu_manager_policy": str},
     "cfs": {"period_us": int, "slice_us": int},
     "thresholds": {"peak_tolerance_percent": int}}

Facts the profile does not give are left out, and the rules that need them stay silent. Pure.
"""

from __future__ import annotations

from typing import Any, Iterable

__all__ = ["platform_data", "CFS_PERIOD_US", "CFS_SLICE_US", "PEAK_TOLERANCE_PERCENT"]

CFS_PERIOD_US = 100_000  # kernel default cfs_period_us
CFS_SLICE_US = 5_000  # kernel default sched_cfs_bandwidth_slice_us
PEAK_TOLERANCE_PERCENT = 10


def platform_data(
    platform: Any,
    objects: Iterable[Any] = (),
    *,
    peak_tolerance_percent: int | None = None,
    cfs_period_us: int = CFS_PERIOD_US,
    cfs_slice_us: int = CFS_SLICE_US,
) -> dict[str, Any]:
    """The ``data.podfit.platform`` document for ``platform`` (a :class:`podfit.platform.Platform`).

    ``objects`` (K8sObjects of the input) add the node pools of TanzuKubernetesCluster and Cluster
    API manifests, which decide the node size for PF202.
    """
    runtime = getattr(platform, "runtime", "tkg") or "tkg"
    data: dict[str, Any] = {"runtime": runtime}
    hosts = tuple(getattr(platform, "hosts", ()) or ())
    if hosts:
        data["numa_node"] = {
            "cores": min(h.numa_node_cores for h in hosts),
            "memory": min(h.numa_node_memory for h in hosts),
        }
        data["smt"] = any(h.threads_per_core > 1 for h in hosts)
    classes = {
        c.name: {"cpus": c.cpus, "memory": c.memory_bytes, "reserved": bool(c.reserved)}
        for c in getattr(platform, "vm_classes", ()) or ()
    }
    data["vm_classes"] = classes
    from ..clusters import all_node_pools

    pools = list(all_node_pools(platform, objects))
    data["node_pools"] = [
        {"name": p.name or p.vm_class, "vm_class": p.vm_class, "count": p.count} for p in pools
    ]  # fmt: skip
    if runtime in ("bare-metal", "tkg"):  # vSphere Pods: a CRX has ceil(limits) vCPUs, no shared node
        from ..platform import node_logical_cpus

        cpus = node_logical_cpus(platform, pools)
        if cpus is not None:
            data["node_logical_cpus"] = cpus
    # vsphere-pods: each pod is its own CRX with ceil(limits) vCPUs; PF202 does not apply.
    kubelet = getattr(platform, "kubelet", None)
    data["kubelet"] = {"cpu_manager_policy": getattr(kubelet, "cpu_manager_policy", "none") or "none"}
    data["cfs"] = {"period_us": cfs_period_us, "slice_us": cfs_slice_us}
    tolerance = PEAK_TOLERANCE_PERCENT if peak_tolerance_percent is None else int(peak_tolerance_percent)
    data["thresholds"] = {"peak_tolerance_percent": tolerance}
    return data
