"""## What it does
A KubeletConfiguration's memoryManagerPolicy is not spelled None or Static, or Static comes without
matching reservedMemory.

## Why it matters
The kubelet compares memoryManagerPolicy case-sensitively (static is not Static) and exits on an
unknown value. The Static policy needs reservedMemory per NUMA node totalling kubeReserved +
systemReserved + the hard eviction threshold for memory; without it the kubelet exits.

## Example
```yaml
kind: KubeletConfiguration
memoryManagerPolicy: static
```

## How to fix
Write memoryManagerPolicy: Static and declare reservedMemory, e.g. [{numaNode: 0, limits: {memory:
1100Mi}}] for 1Gi reserved + 100Mi eviction.

## Source
kubernetes pkg/kubelet/cm/memorymanager (policy names, validateReservedMemory); Kubernetes docs
"Utilizing the NUMA-aware Memory Manager"

## Implementation
``memoryManagerPolicy`` is ``None`` (the default) or ``Static``, spelled exactly so: the kubelet
compares it case-sensitively and exits on anything else (``static`` included). ``Static`` also
needs ``reservedMemory`` (memory reserved per NUMA node): the kubelet exits when it is missing or
when its total differs from kubeReserved + systemReserved + the hard eviction threshold for
memory (``evictionHard["memory.available"]``, 100Mi by default); the total is compared when all
three are quantities.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..facts import is_kubelet_configuration
from ..findings import Finding
from ..options import Option
from ..quantity import format_memory, parse_memory
from . import RuleContext

ID = "PF208"
SLUG = "memory-manager-policy-invalid"
TITLE = "Memory Manager policy the kubelet refuses"
SEVERITY = "error"
CATEGORY = "cpu"
REQUIRES: tuple[str, ...] = ()
OPTIONS: tuple[Option, ...] = ()

POLICIES = ("None", "Static")
DEFAULT_EVICTION_MEMORY = 100 * 1024 * 1024


def _memory(m: object, key: str) -> int | None:
    if not isinstance(m, Mapping) or m.get(key) is None:
        return 0
    try:
        return parse_memory(m[key])
    except ValueError:
        return None


def _reserved_total(items: list) -> int | None:
    total = 0
    for item in items:
        limits = item.get("limits") if isinstance(item, Mapping) else None
        v = _memory(limits, "memory")
        if v is None:
            return None
        total += v
    return total


def check(ctx: RuleContext) -> Iterator[Finding]:
    for o in ctx.objects:
        if not is_kubelet_configuration(o):
            continue
        raw = o.raw
        policy = raw.get("memoryManagerPolicy")
        if policy is None:
            continue
        where = o.location_at(("memoryManagerPolicy",))
        if policy not in POLICIES:
            hint = next((p for p in POLICIES if str(policy).lower() == p.lower()), None)
            yield Finding(
                ID,
                f"memoryManagerPolicy {policy!r} is not a policy: the kubelet accepts exactly None or Static "
                + (f"(case-sensitive: write {hint})" if hint else "")
                + " and refuses to start",
                where,
                o.ref,
                details={"policy": policy, "expected": hint},
            )
            continue
        if policy != "Static":
            continue
        reserved = raw.get("reservedMemory")
        if not isinstance(reserved, list) or not reserved:
            yield Finding(
                ID,
                "memoryManagerPolicy Static without reservedMemory: the kubelet needs the memory reserved per NUMA "
                "node (summing to kubeReserved + systemReserved + evictionHard memory.available) and refuses to start",
                where,
                o.ref,
                details={"policy": policy},
            )
            continue
        eviction = raw.get("evictionHard")
        ev = (
            _memory(eviction, "memory.available")
            if isinstance(eviction, Mapping) and "memory.available" in eviction
            else DEFAULT_EVICTION_MEMORY
        )
        parts = (_memory(raw.get("kubeReserved"), "memory"), _memory(raw.get("systemReserved"), "memory"), ev)
        total = _reserved_total(reserved)
        if total is None or any(p is None for p in parts):
            continue
        expected = sum(p for p in parts if p is not None)
        if total != expected:
            yield Finding(
                ID,
                f"reservedMemory totals {format_memory(total)} but kubeReserved + systemReserved + evictionHard "
                f"memory.available is {format_memory(expected)}: the kubelet refuses to start with the Static policy",
                o.location_at(("reservedMemory",)),
                o.ref,
                details={"reserved_memory": total, "expected": expected},
            )
