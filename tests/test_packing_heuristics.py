"""Placement heuristics: the dot-product heuristic (which places runs of one type at once and
reuses the fill of identical nodes) against a reference that places one pod at a time."""

from __future__ import annotations

import random

import pytest

from podfit.packing import GI, MI, NodeType, PodType
from podfit.packing.heuristics import _reference, conflict_indices, dot_product


def reference_dot(pods, pools, *, template=None, max_open=0):
    """The dot-product heuristic written plainly: fill one node at a time, each time with the
    eligible, fitting pod of the largest score Σ_d (demand_d / ref_d) · (free_d / ref_d) (summed
    over cpu, memory, pods, storage in that order; ties to the first type)."""
    ref = _reference(pods, [template] if template else pools)
    conf = conflict_indices(pods)
    kinds = [template] if template else list(pools)
    nodes = [] if template else [i for i, n in enumerate(pools) for _ in range(n.count)]
    rem = [p.count for p in pods]
    content: list[dict[int, int]] = [{} for _ in nodes]  # fixed nodes: every node, used or not
    j = 0
    while any(rem):
        if j == len(nodes):
            if template is None or len(nodes) >= max_open:
                break
            nodes.append(0)
            content.append({})
        kind = kinds[nodes[j]]
        free = list(kind.allocatable)
        here: dict[int, int] = {}
        groups: set[str] = set()
        while True:
            best, best_score = None, -1.0
            for t, p in enumerate(pods):
                if not rem[t] or not p.allowed_on(kind):
                    continue
                if any(d > f for d, f in zip(p.demand, free, strict=True)):
                    continue
                if p.per_node_cap is not None and here.get(t, 0) >= p.per_node_cap:
                    continue
                if p.exclusive_group is not None and p.exclusive_group in groups:
                    continue
                if any(here.get(u) for u in conf[t]):
                    continue
                score = 0.0
                for d in range(4):
                    score += (p.demand[d] / ref[d]) * (free[d] / ref[d])
                if score > best_score:
                    best, best_score = t, score
            if best is None:
                break
            p = pods[best]
            free = [f - d for f, d in zip(free, p.demand, strict=True)]
            rem[best] -= 1
            here[best] = here.get(best, 0) + 1
            if p.exclusive_group is not None:
                groups.add(p.exclusive_group)
        content[j] = here
        if template is not None and not here:
            break
        j += 1
    return content, rem


def random_pods(rng: random.Random, n_types: int, pools: list[str]) -> list[PodType]:
    pods = []
    for i in range(n_types):
        cpu = rng.choice([0, 50, 100, 250, 500, 1000, 1500, 3000])
        memory = rng.choice([0, 64 * MI, 256 * MI, 1 * GI, 3 * GI, 6 * GI])
        kind = rng.random()
        pods.append(
            PodType(
                f"t{i}",
                cpu,
                memory,
                rng.randint(1, 60),
                storage=rng.choice([0, 0, 0, 2 * GI]),
                exclusive_group=f"g{rng.randint(0, 2)}" if kind < 0.15 else None,
                max_per_node=rng.randint(1, 4) if 0.15 <= kind < 0.3 else None,
                conflicts=(f"t{rng.randrange(n_types)}",) if 0.3 <= kind < 0.4 else (),
                pools=tuple(rng.sample(pools, rng.randint(1, len(pools)))) if kind > 0.85 else None,
            )
        )
    return pods


@pytest.mark.parametrize("seed", range(40))
def test_dot_product_places_as_one_pod_at_a_time(seed):
    rng = random.Random(seed)
    pools = [
        NodeType("a", "c", rng.randint(1, 12), 4000, 16 * GI, 30),
        NodeType("b", "c", rng.randint(1, 12), 8000, 24 * GI, 110, storage=20 * GI),
    ]
    pods = random_pods(rng, rng.randint(1, 12), ["a", "b"])
    got = dot_product(pods, pools)
    content, rem = reference_dot(pods, pools)
    assert got.expanded()[1] == content
    assert got.unplaced == rem


@pytest.mark.parametrize("seed", range(40))
def test_dot_product_opening_nodes_places_as_one_pod_at_a_time(seed):
    rng = random.Random(1000 + seed)
    template = NodeType("n", "c", 1, 4000, 16 * GI, rng.choice([8, 110]))
    pods = random_pods(rng, rng.randint(1, 12), ["n"])
    max_open = rng.choice([3, 1000])
    got = dot_product(pods, [], template=template, max_open=max_open)
    content, rem = reference_dot(pods, [], template=template, max_open=max_open)
    assert got.content == content
    assert got.unplaced == rem
