"""Cloud instance types and what each managed Kubernetes service lets pods use on them. Pure.
Node pools of these types are :func:`podfit.platform.instance_pool`'s.

The table (``data/instances.json``, one row per instance type, each naming its source; docs/platform.md
lists the sources and the formulas) gives vCPUs, memory (MiB), GPUs, architecture and, for EC2,
the network interfaces (ENIs) and IPv4 addresses per interface the VPC CNI's pod limit rests on.

Allocatable (millicores, bytes, pods; exact integers, a reservation's fraction rounded up so that
allocatable is never overstated):

* EKS (the EKS-optimized AMI's bootstrap): max pods = ENIs × (IPv4 per ENI − 1) + 2; kube-reserved
  CPU 6% of the first core, 1% of the second, 0.5% of the third and fourth, 0.25% of every core
  above four; kube-reserved memory 11 MiB × max pods + 255 MiB; eviction at 100 MiB.
* GKE (Standard node allocatable): the same CPU tiers; memory 25% of the first 4 GiB, 20% of the
  next 4, 10% of the next 8, 6% of the next 112, 2% above 128 GiB (255 MiB under 1 GiB); eviction
  at 100 MiB; 110 pods.
* AKS 1.29 and later: kube-reserved CPU 60m for one core, 100m for two, 140m for four and 10m per
  core above four (AKS's table of 1 to 64 cores, linear between its points); memory the lesser of
  20 MiB × max pods + 50 MiB and 25% of the memory; eviction at 100 MiB; 250 pods (Azure CNI
  Overlay's default).

Node capacity is the nominal memory of the type: the kernel keeps some of it back before the kubelet
reports capacity, so a real node's allocatable is somewhat lower than these figures.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = [
    "PROVIDERS",
    "InstanceType",
    "CloudError",
    "instance_types",
    "lookup",
    "eks_max_pods",
    "eks_allocatable",
    "gke_allocatable",
    "aks_allocatable",
    "allocatable",
    "kubeadm_allocatable",
    "parse_nodes",
    "split_instance_ref",
]

MiB = 2**20
GiB = 2**30
# the service → the cloud whose instance types it runs on
PROVIDERS = {"eks": "aws", "gke": "gce", "aks": "azure"}
EVICTION = 100 * MiB  # every service's default memory.available hard eviction threshold
GKE_MAX_PODS = 110
AKS_MAX_PODS = 250
KUBELET_MAX_PODS = 110  # the kubelet's own default maxPods
GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class InstanceType:
    provider: str  # aws | gce | azure
    name: str
    vcpus: int
    memory_mib: int
    gpus: int = 0
    arch: str = "amd64"
    enis: int = 0  # EC2 only
    ipv4_per_eni: int = 0  # EC2 only
    source: str = ""

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MiB

    @property
    def family(self) -> str:
        """EC2's family (``m5`` of ``m5.large``); "" elsewhere."""
        return self.name.partition(".")[0] if self.provider == "aws" else ""

    @property
    def size(self) -> str:
        return self.name.partition(".")[2] if self.provider == "aws" else ""

    @property
    def category(self) -> str:
        """EC2's category: the family's leading letters (``m``, ``c``, ``r``, ``g``, ``p``)."""
        fam = self.family
        return fam[: len(fam) - len(fam.lstrip("abcdefghijklmnopqrstuvwxyz"))] if fam else ""


class CloudError(ValueError):
    """An instance type or ``--nodes`` value podfit does not know; the message names the nearest."""


@lru_cache(maxsize=1)
def instance_types() -> dict[str, InstanceType]:
    """Every known instance type by name (names do not collide across providers)."""
    text = resources.files("podfit").joinpath("data/instances.json").read_text(encoding="utf-8")
    out: dict[str, InstanceType] = {}
    for r in json.loads(text)["instanceTypes"]:
        out[r["name"]] = InstanceType(
            provider=r["provider"],
            name=r["name"],
            vcpus=r["vcpus"],
            memory_mib=r["memoryMiB"],
            gpus=r.get("gpus", 0),
            arch=r.get("arch", "amd64"),
            enis=r.get("enis", 0),
            ipv4_per_eni=r.get("ipv4PerEni", 0),
            source=r["source"],
        )
    return out


def lookup(service: str, name: str) -> InstanceType:
    """The instance type ``name`` of ``service`` (eks, gke, aks); CloudError naming the nearest."""
    cloud = PROVIDERS.get(service)
    if cloud is None:
        raise CloudError(f"unknown provider {service[:40]!r}: expected one of {', '.join(PROVIDERS)}")
    t = instance_types().get(name)
    if t is not None and t.provider == cloud:
        return t
    names = [n for n, x in instance_types().items() if x.provider == cloud]
    near = difflib.get_close_matches(name[:80], names, n=3, cutoff=0.5)
    hint = f"; nearest known: {', '.join(near)}" if near else f"; known ones include {', '.join(names[:4])}"
    raise CloudError(f"unknown {service} instance type {name[:80]!r}{hint} (docs/platform.md lists them)")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _tiered_cpu_reserved(cores: int) -> int:
    """Millicores kept back by the CPU tiers EKS and GKE share: 6% of the first core, 1% of the
    second, 0.5% of the third and fourth, 0.25% of each core above four."""
    tenths = 600 * min(cores, 1) + 100 * max(0, min(cores, 2) - 1) + 50 * max(0, min(cores, 4) - 2)
    tenths += 25 * max(0, cores - 4)  # tenths of a millicore
    return _ceil_div(tenths, 10)


def eks_max_pods(t: InstanceType) -> int:
    """The VPC CNI's pods per node without prefix delegation: ENIs × (IPv4 per ENI − 1) + 2."""
    return t.enis * (t.ipv4_per_eni - 1) + 2


def eks_allocatable(t: InstanceType, max_pods: int | None = None) -> tuple[int, int, int]:
    pods = eks_max_pods(t) if max_pods is None else max_pods
    cpu = t.vcpus * 1000 - _tiered_cpu_reserved(t.vcpus)
    memory = t.memory_bytes - (11 * pods + 255) * MiB - EVICTION
    return max(cpu, 0), max(memory, 0), pods


_GKE_MEMORY_TIERS = ((4 * GiB, 25), (4 * GiB, 20), (8 * GiB, 10), (112 * GiB, 6))


def gke_memory_reserved(memory: int) -> int:
    if memory < GiB:
        return 255 * MiB
    left, reserved_pct = memory, 0  # bytes × percent
    for size, pct in _GKE_MEMORY_TIERS:
        part = min(left, size)
        reserved_pct += part * pct
        left -= part
    reserved_pct += left * 2
    return _ceil_div(reserved_pct, 100)


def gke_allocatable(t: InstanceType, max_pods: int | None = None) -> tuple[int, int, int]:
    cpu = t.vcpus * 1000 - _tiered_cpu_reserved(t.vcpus)
    memory = t.memory_bytes - gke_memory_reserved(t.memory_bytes) - EVICTION
    return max(cpu, 0), max(memory, 0), GKE_MAX_PODS if max_pods is None else max_pods


def aks_cpu_reserved(cores: int) -> int:
    return 60 + 40 * max(0, min(cores, 2) - 1) + 20 * max(0, min(cores, 4) - 2) + 10 * max(0, cores - 4)


def aks_allocatable(t: InstanceType, max_pods: int | None = None) -> tuple[int, int, int]:
    pods = AKS_MAX_PODS if max_pods is None else max_pods
    reserved = min((20 * pods + 50) * MiB, t.memory_bytes // 4)
    cpu = t.vcpus * 1000 - aks_cpu_reserved(t.vcpus)
    return max(cpu, 0), max(t.memory_bytes - reserved - EVICTION, 0), pods


def kubeadm_allocatable(t: InstanceType, max_pods: int | None = None) -> tuple[int, int, int]:
    """A node the kubelet runs with its own defaults (Cluster API's kubeadm bootstrap): nothing
    reserved, the 100 MiB hard eviction threshold, 110 pods."""
    return t.vcpus * 1000, max(t.memory_bytes - EVICTION, 0), KUBELET_MAX_PODS if max_pods is None else max_pods


def allocatable(service: str, t: InstanceType, max_pods: int | None = None) -> tuple[int, int, int]:
    """What the kubelet offers pods on one node of type ``t`` under ``service`` (eks, gke, aks, or
    kubeadm: a self-managed cluster's kubelet defaults)."""
    table = {"eks": eks_allocatable, "gke": gke_allocatable, "aks": aks_allocatable, "kubeadm": kubeadm_allocatable}
    return table[service](t, max_pods)


def service_of(t: InstanceType) -> str:
    return next(s for s, c in PROVIDERS.items() if c == t.provider)


def split_instance_ref(text: str) -> tuple[str, str]:
    """``PROVIDER:TYPE`` → (provider, type); CloudError when it is not that."""
    service, colon, name = text.partition(":")
    if not colon or not name.strip():
        raise CloudError(f"{text[:80]!r}: expected PROVIDER:TYPE with PROVIDER one of {', '.join(PROVIDERS)}")
    return service.strip(), name.strip()


def parse_nodes(text: str, max_nodes: int) -> tuple[str, InstanceType, int]:
    """``PROVIDER:TYPE=COUNT`` → (service, instance type, count)."""
    spec, sep, count = text.partition("=")
    digits = count.strip()
    if not sep or not digits.isdigit() or not digits.isascii():
        raise CloudError(f"{text[:80]!r}: expected PROVIDER:TYPE=COUNT, e.g. gke:e2-standard-4=3")
    service, name = split_instance_ref(spec)
    t = lookup(service, name)
    n = int(digits) if len(digits) <= 9 else max_nodes + 1
    if not 1 <= n <= max_nodes:
        raise CloudError(
            f"{spec[:80]!r}: COUNT: at least 1 and at most {max_nodes:,} nodes, Kubernetes' nodes per cluster"
        )
    return service, t, n
