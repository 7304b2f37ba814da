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
memory (``evictionHard["memory.available"]``); the total is compared when all three are
quantities. The kubelet's defaults apply to ``evictionHard`` only when it is absent (100Mi for
memory.available): a configuration that sets other signals and not memory.available has none
(0), unless ``mergeDefaultEvictionSettings: true`` fills the signals left out with the defaults
(``pkg/kubelet/apis/config/v1beta1/defaults.go``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..facts import is_kubelet_configuration
from ..findings import Finding
from ..options import Option
from ..quantity import format_memory, parse_memory
from ..rule_context import RuleContext

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
        ev = _eviction_memory(raw)
        parts = (_memory(raw.get("kubeReserved"), "memory"), _memory(raw.get("systemReserved"), "memory"), ev)
        total = _reserved_total(reserved)
        if total is None or any(p is None for p in parts):
            continue
        expected = sum(p for p in parts if p is not None)
        if total != expected:
            yield Finding(
                ID,
                f"reservedMemory totals {format_memory(total)} but kubeReserved {format_memory(parts[0] or 0)} + "
                f"systemReserved {format_memory(parts[1] or 0)} + hard eviction memory.available "
                f"{format_memory(parts[2] or 0)} ({_eviction_source(raw)}) is {format_memory(expected)}: "
                "the kubelet refuses to start with the Static policy",
                o.location_at(("reservedMemory",)),
                o.ref,
                details={"reserved_memory": total, "expected": expected},
            )


def _eviction_memory(raw: Mapping[str, object]) -> int | None:
    """The hard eviction threshold for memory.available the kubelet runs with (None when it is not
    a quantity): the default when ``evictionHard`` is absent or null; else the one it sets; else
    the default when ``mergeDefaultEvictionSettings`` is true, and none (0) when it is not."""
    eviction = raw.get("evictionHard")
    if eviction is None:
        return DEFAULT_EVICTION_MEMORY
    if not isinstance(eviction, Mapping):
        return None  # not a map: the file does not load (PF902)
    if "memory.available" in eviction:
        return _memory(eviction, "memory.available")
    return DEFAULT_EVICTION_MEMORY if raw.get("mergeDefaultEvictionSettings") is True else 0


def _eviction_source(raw: Mapping[str, object]) -> str:
    """Where the memory.available threshold comes from, as :func:`_eviction_memory` decided."""
    eviction = raw.get("evictionHard")
    if eviction is None:
        return "the default: evictionHard is not set"
    if isinstance(eviction, Mapping) and "memory.available" in eviction:
        return "evictionHard"
    if raw.get("mergeDefaultEvictionSettings") is True:
        return "the default, merged by mergeDefaultEvictionSettings"
    return "none: evictionHard is set without it, so no default applies"
