"""Packing: the Fekete–Schepers bound (hand-worked values, never above a brute-force optimum) and the
large-neighbourhood search (complete placements only, misfit proofs only when brute force agrees)."""

from __future__ import annotations

import random
import time

from podfit.packing import GI, MI, NodeType, PodType, dff_bound, l2_bound, lns, lower_bound, min_nodes
from podfit.packing.bounds import DFF_KS, dff_value
from test_packing import brute_force_fits, random_instance

# The searches below settle their instances in well under a second; the deadline is only a guard
# against a hang, generous so that a loaded machine cannot cut a search short and fail the test.
HANG_GUARD_S = 300


def opt_bins(sizes: list[int], capacity: int) -> int:
    """Least bins for 1-D items, by exhaustive search (items in decreasing order, symmetric bins skipped)."""
    sizes = sorted(sizes, reverse=True)
    best = [len(sizes)]

    def go(i: int, loads: list[int]) -> None:
        if len(loads) >= best[0]:
            return
        if i == len(sizes):
            best[0] = len(loads)
            return
        tried = set()
        for j, load in enumerate(loads):
            if load + sizes[i] <= capacity and load not in tried:
                tried.add(load)
                loads[j] += sizes[i]
                go(i + 1, loads)
                loads[j] -= sizes[i]
        loads.append(sizes[i])
        go(i + 1, loads)
        loads.pop()

    go(0, [])
    return best[0] if sizes else 0


# ----------------------------------------------------------------------------- hand-worked values --


def test_dff_value_by_hand():
    # k = 2, C = 100: (k+1)x = 3x; 34 → ⌊1.02⌋/2 = 1/2 → scaled by k·C = 200: 100
    assert dff_value(34, 100, 2) == 100
    # sizes below a third vanish, sizes above two thirds count as a whole node
    assert dff_value(33, 100, 2) == 0
    assert dff_value(67, 100, 2) == 200
    # x = 1/3: 3x = 1 is whole, so u = x itself = 1/3, scaled by k·C = 300 → 100
    assert dff_value(50, 150, 2) == 100
    # k = 1 (scaled by 1·10): items above half count 1 (10), exactly half 1/2 (5), smaller ones 0
    assert [dff_value(w, 10, 1) for w in (4, 5, 6)] == [0, 5, 10]


def test_dff_bound_beats_continuous_and_l2_where_three_items_do_not_share_a_node():
    # five items of 34 on nodes of 100: no three share a node, so 3 nodes; continuous and L2 say 2
    assert -(-5 * 34 // 100) == 2
    assert l2_bound([(34, 5)], 100) == 2
    assert dff_bound([(34, 5)], 100) == 3
    assert opt_bins([34] * 5, 100) == 3


def test_dff_bound_is_at_least_the_continuous_bound():
    # u^(k) tends to the identity as k grows: the best k is never below ⌈Σ size / C⌉ by more than
    # the rounding of the largest k tried (here sizes that make (k+1)·x whole for k = 19)
    assert dff_bound([(5, 7)], 100) == 1
    assert dff_bound([(25, 8)], 100) == 2  # x = 1/4 is whole for k = 3: Σ = 2


def test_node_bounds_report_the_dff_certificate():
    pods = (PodType("a", 3400, 0, count=5),)
    lb, cert = lower_bound(pods, (10_000, 64 * GI, 110, 2**62))
    assert lb == 3
    assert cert is not None and cert.kind == "dff-cpu"


# --------------------------------------------------------------------------------- properties ---


def test_dff_bound_never_exceeds_the_optimum_on_random_instances():
    rng = random.Random(11)
    for _ in range(300):
        cap = rng.randint(5, 60)
        sizes = [rng.randint(1, cap) for _ in range(rng.randint(1, 9))]
        items: dict[int, int] = {}
        for w in sizes:
            items[w] = items.get(w, 0) + 1
        opt = opt_bins(sizes, cap)
        assert dff_bound(items.items(), cap) <= opt, (sizes, cap)
        assert l2_bound(items.items(), cap) <= opt, (sizes, cap)


def l2_by_definition(items: list[tuple[int, int]], capacity: int) -> int:
    """Martello–Toth L2 as defined: for each k in {0} ∪ {sizes ≤ C/2}, every item sorted into J1, J2, J3."""
    items = [(w, n) for w, n in items if n > 0 and w > 0]
    best = 0
    for k in {0} | {w for w, _ in items if 2 * w <= capacity}:
        j1 = sum(n for w, n in items if w > capacity - k)
        j2 = [(w, n) for w, n in items if capacity - k >= w and 2 * w > capacity]
        s3 = sum(w * n for w, n in items if 2 * w <= capacity and w >= k)
        rest = s3 - sum(n * (capacity - w) for w, n in j2)
        best = max(best, j1 + sum(n for _, n in j2) + max(0, -(-rest // capacity)))
    return best


def test_l2_and_dff_bounds_agree_with_their_definitions():
    rng = random.Random(17)
    for _ in range(2000):
        cap = rng.choice([10, 16, 100, 15_750, rng.randint(1, 10**6)])
        items = [(rng.randint(0, cap), rng.randint(0, 50)) for _ in range(rng.randint(0, 25))]
        if rng.random() < 0.3:  # sizes at the edges: half, just above half, the whole node
            items += [(cap // 2, 3), (cap - cap // 2, 2), (cap, 1), (cap // 2 + 1, 4)]
        assert l2_bound(items, cap) == l2_by_definition(items, cap), (items, cap)
        by_def = max(
            [-(-sum(n * dff_value(w, cap, k) for w, n in items if n > 0 and w > 0) // (k * cap)) for k in DFF_KS]
        )
        assert dff_bound(items, cap) == by_def, (items, cap)


def test_node_lower_bound_never_exceeds_the_multi_dimensional_optimum():
    rng = random.Random(3)
    checked = 0
    for _ in range(60):
        pods, pool = random_instance(rng)
        total = sum(p.count for p in pods)
        lb, _ = lower_bound(pods, pool.allocatable)
        if lb >= 2**62 or total == 0:
            continue
        # the least count that brute force can fill is never below the bound
        n = 1
        while n <= total and not brute_force_fits(pods, pool.with_count(n)):
            n += 1
        if n <= total:
            checked += 1
            assert lb <= n, (pods, pool, lb, n)
    assert checked > 20


# ------------------------------------------------------------------------ large-neighbourhood ---


def check_content(pods, pool: NodeType, content) -> None:
    placed = [0] * len(pods)
    for c in content:
        used = [0, 0, 0, 0]
        groups = set()
        for t, k in c.items():
            placed[t] += k
            for d, v in enumerate(pods[t].demand):
                used[d] += v * k
            g = pods[t].exclusive_group
            if g:
                assert k == 1 and g not in groups
                groups.add(g)
            if pods[t].max_per_node:
                assert k <= pods[t].max_per_node
        assert all(u <= a for u, a in zip(used, pool.allocatable, strict=True))
    assert placed == [p.count for p in pods]


def test_lns_proves_misfit_only_when_brute_force_agrees():
    rng = random.Random(17)
    seen = {True: 0, False: 0}
    for _ in range(60):
        pods, pool = random_instance(rng)
        n = pool.count
        truth = brute_force_fits(pods, pool)
        res = lns.fill(
            pods,
            [pool],
            lns.Search([{} for _ in range(n)], [p.count for p in pods], [0] * n),
            time.monotonic() + HANG_GUARD_S,
            k=4,
        )
        if res.complete:
            assert truth
            check_content(pods, pool, res.content)
            seen[True] += 1
        else:
            # n ≤ 4 nodes: one neighbourhood is the whole problem, so the search settles it
            assert res.proven_infeasible and not truth
            seen[False] += 1
    assert seen[True] > 10 and seen[False] > 10


def test_descend_empties_nodes_and_keeps_every_pod():
    # one pod per node to start with: the search must merge them down to the bound
    pods = (
        PodType("a", 3000, 2 * GI, count=6),
        PodType("b", 1000, 6 * GI, count=6),
        PodType("c", 500, 512 * MI, count=8),
    )
    pool = NodeType("w", "c", 1, 8000, 16 * GI, 110)
    start = []
    for t, p in enumerate(pods):
        start += [{t: 1} for _ in range(p.count)]
    lb, _ = lower_bound(pods, pool.allocatable)
    found, _ = lns.descend(pods, pool, start, lb, time.monotonic() + HANG_GUARD_S)
    check_content(pods, pool, found)
    assert lb <= len(found) < len(start)
    assert len(found) == lb  # 6·3000 + 6·1000 + 8·500 = 28,000m over 8,000m nodes: 4 nodes suffice


def test_min_nodes_reaches_the_bound_on_a_mixed_instance():
    # memory-heavy and CPU-heavy pods that first fit stacks apart; the search mixes them
    rng = random.Random(2)
    pods = tuple(
        PodType(f"t{i}", rng.choice([200, 500, 1500]), rng.choice([1, 3, 6]) * GI, count=rng.randint(5, 30))
        for i in range(12)
    )
    pool = NodeType("w", "c", 1, 15_750, 64 * GI - 100 * MI, 110)
    r = min_nodes(pods, pool, time_budget=HANG_GUARD_S)  # it stops on reaching the bound
    assert r is not None
    m = r.summary
    lb, _ = lower_bound(pods, pool.allocatable)
    assert m.nodes == m.lower_bound == lb == 12 and m.exact
    total = {p.name: 0 for p in pods}
    for n in r.nodes:
        assert all(u <= a for u, a in zip(n.used, n.allocatable, strict=True))
        for name, k in n.pods:
            total[name] += k
    assert total == {p.name: p.count for p in pods}
