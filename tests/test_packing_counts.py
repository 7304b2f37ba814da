"""Packing keeps identical empty nodes as a count: a pool of thousands of nodes holding a few pods
opens only the nodes that take pods, its placement keeps the rest as one run, and every answer is
the one a pool given node by node (N pools of one node each) gets."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from podfit.packing import (
    GI,
    MI,
    EmptyNodes,
    NodeList,
    NodeNames,
    NodeResult,
    NodeType,
    PodType,
    Problem,
    VMClass,
    analyze,
    exact,
    pack,
)
from podfit.packing.heuristics import dot_product, first_fit
from podfit.packing.report import to_json, to_text
from test_packing import brute_force_fits, check_placement, random_instance

BIG = 5000
HANG_GUARD_S = 30.0  # a time limit only so that a bug cannot hang the run; the models here solve at once


def pool(name: str, count: int, *, labels=()) -> NodeType:
    return NodeType(name, "c", count, 4000, 16 * GI, 110, labels=tuple(labels))


THREE = (PodType("web", 500, 512 * MI, count=2), PodType("db", 1000, 2 * GI, count=1, exclusive_group="db"))


@pytest.mark.parametrize("heuristic", ["first-fit", "dot-product"])
def test_a_pool_of_5000_nodes_holding_3_pods_opens_only_the_nodes_they_use(heuristic):
    pools = [pool("w", BIG)]
    got = first_fit(THREE, pools, "sum") if heuristic == "first-fit" else dot_product(THREE, pools)
    assert got.complete
    assert len(got.pool) == len(got.content) == 1  # the three pods share one node: one node opened
    assert got.spare == [BIG - 1]


def test_one_pod_per_node_opens_one_node_per_pod_and_no_more():
    pods = (PodType("a", 100, MI, count=3, exclusive_group="a"),)
    for got in (first_fit(pods, [pool("w", BIG)], "sum"), dot_product(pods, [pool("w", BIG)])):
        assert len(got.pool) == 3 and all(got.content) and got.spare == [BIG - 3]


def test_a_pool_no_pod_fits_is_never_opened():
    pods = (PodType("a", 100, MI, count=3, pools=("small",)),)
    pools = [pool("big", BIG), NodeType("small", "c", 2, 1000, GI, 110)]
    for got in (first_fit(pods, pools, "sum"), dot_product(pods, pools)):
        assert got.pool == [1] and got.spare == [BIG, 1]


def test_analysis_of_5000_node_pools_makes_no_object_per_empty_node(monkeypatch):
    """The fit, stranded capacity, headroom, least nodes and the text report never visit the empty
    nodes one by one: no empty node is made, and the placement holds a few parts."""
    made = []
    real = EmptyNodes.node
    monkeypatch.setattr(EmptyNodes, "node", lambda self, i: made.append(i) or real(self, i))
    pools = (pool("a", BIG), pool("gpu", BIG, labels=[("gpu", "true")]))
    pods = tuple(replace(p, pools=("a",)) for p in THREE)
    a = analyze(pods, pools, [VMClass("c", 4000, 16 * GI)], time_budget=0)
    text = to_text(a)
    assert made == []
    assert a.fit.feasible is True and len(a.fit.nodes) == 2 * BIG
    assert isinstance(a.fit.nodes, NodeList) and len(a.fit.nodes.parts) <= 4
    # the gpu pool takes none of the pods: its empty nodes are stranded, kept as one run
    assert len(a.stranded.nodes) == BIG and isinstance(a.stranded.nodes, NodeNames)
    assert len(a.stranded.nodes.parts) == 1
    assert "gpu-0" in a.stranded.nodes and f"gpu-{BIG - 1}" in a.stranded.nodes
    assert f"gpu-{BIG}" not in a.stranded.nodes and "a-1" not in a.stranded.nodes
    assert a.stranded.cpu == BIG * 4000 and a.stranded.free_cpu == 2 * BIG * 4000 - 2 * 500 - 1000
    assert a.headroom.free_cpu == a.stranded.free_cpu
    assert f"a: 1 of {BIG:,} nodes used" in text and f"on {BIG:,} nodes" in text
    # the JSON report still lists every node, in order
    nodes = to_json(a)["nodes"]
    assert len(nodes) == 2 * BIG and nodes[1]["name"] == "a-1" and nodes[BIG]["name"] == "gpu-0"


def test_node_list_reads_like_the_tuple_of_its_nodes():
    alloc = (4000, 16 * GI, 110, 2**62)
    full = NodeResult("a", 0, "c", (("web", 2),), (1000, GI, 2, 0), alloc)
    nodes = NodeList([full, EmptyNodes("a", "c", 1, 3, alloc), EmptyNodes("b", "c", 0, 0, alloc)])
    expanded = (full,) + tuple(NodeResult("a", i, "c", (), (0, 0, 0, 0), alloc) for i in (1, 2, 3))
    assert len(nodes) == 4 and tuple(nodes) == expanded and nodes == expanded
    one_by_one_empty = NodeList(expanded)  # the same nodes, the empty ones kept one by one
    assert nodes == one_by_one_empty and hash(nodes) == hash(one_by_one_empty)
    assert nodes[-1] == expanded[-1] and nodes[1:3] == expanded[1:3]
    assert [n.name for n in nodes] == ["a-0", "a-1", "a-2", "a-3"]
    with pytest.raises(IndexError):
        nodes[4]
    names = NodeNames(["a-0", EmptyNodes("a", "c", 1, 3, alloc)])
    assert tuple(names) == ("a-0", "a-1", "a-2", "a-3") and names[:2] == ("a-0", "a-1") and "a-3" in names
    listed = NodeNames(["a-0", "a-1", "a-2", "a-3"])
    assert names == listed and hash(names) == hash(listed) and "a-4" not in names


def one_by_one(pools: tuple[NodeType, ...]) -> tuple[NodeType, ...]:
    """Each pool as that many pools of one node (named ``pool~i``, the same labels and offer of
    extended resources)."""
    return tuple(
        NodeType(f"{n.name}~{i}", n.vm_class, 1, n.cpu, n.memory, n.pods, n.storage, n.labels, extended=n.extended)
        for n in pools
        for i in range(n.count)
    )


def pods_one_by_one(pods: tuple[PodType, ...], pools: tuple[NodeType, ...]) -> tuple[PodType, ...]:
    """The pods with the pools they name (``pools``, pool caps) as the pools of :func:`one_by_one`."""
    split = {n.name: tuple(f"{n.name}~{i}" for i in range(n.count)) for n in pools}

    def names(named: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(m for n in named for m in split.get(n, (n,)))

    return tuple(
        replace(
            p,
            pools=None if p.pools is None else names(p.pools),
            pool_caps=tuple((names(zone), cap) for zone, cap in p.pool_caps),
        )
        for p in pods
    )


def random_pools_and_pods(rng: random.Random) -> tuple[tuple[NodeType, ...], tuple[PodType, ...]]:
    pools = tuple(
        NodeType(
            f"p{i}",
            "c",
            rng.randint(0, 5),
            rng.randint(2, 8) * 500,
            rng.randint(2, 16) * GI,
            rng.randint(2, 12),
            labels=(("kind", rng.choice(["x", "y"])),),
            extended=rng.choice([None, (), (("gpu", rng.randint(1, 4)),)]),
        )
        for i in range(rng.randint(1, 3))
    )
    pods = tuple(
        PodType(
            f"t{i}",
            rng.choice([100, 250, 500, 1000, 2000]),
            rng.randint(1, 8) * GI // 2,
            count=rng.randint(0, 8),
            exclusive_group=rng.choice([None, None, None, "g"]),
            max_per_node=rng.choice([None, None, 1, 2]),
            node_selector=rng.choice([(), (), (("kind", "x"),)]),
            host_ports=rng.choice([(), (), (("", 80, "TCP"),)]),
            extended=rng.choice([(), (), (("gpu", 1),), (("gpu", 2),)]),
            pool_caps=rng.choice([(), (), ((("p0",), rng.randint(0, 6)),), ((("p0",), 3), (("p1", "p2"), 4))]),
        )
        for i in range(rng.randint(1, 5))
    )
    # types binding the same host port may not share a node (the adapter sets both sides)
    binders = [p.name for p in pods if p.host_ports]
    pods = tuple(replace(p, conflicts=tuple(b for b in binders if b != p.name)) if p.host_ports else p for p in pods)
    return pools, pods


def placement(nodes) -> list[tuple[tuple[tuple[str, int], ...], tuple[int, int, int, int]]]:
    return [(n.pods, n.used) for n in nodes]


@pytest.mark.parametrize("seed", range(6))
def test_a_pool_of_n_nodes_answers_as_n_pools_of_one(seed):
    """Fixed seeds: the heuristics place the same pods on the same nodes in the same order, and the
    verdict, its proof, stranded capacity and headroom are the same, whether a pool is a count or
    its nodes are given one by one (with extended resources per node and pool caps)."""
    rng = random.Random(9000 + seed)
    for _ in range(25):
        pools, pods = random_pools_and_pods(rng)
        pools = tuple(n for n in pools if n.count)  # (pack leaves empty pools out before the heuristics)
        single, split = one_by_one(pools), pods_one_by_one(pods, pools)
        for key in ("sum", "dominant"):
            a, b = first_fit(pods, pools, key), first_fit(split, single, key)
            assert a.expanded()[1] == b.expanded()[1] and a.unplaced == b.unplaced, (pods, pools)
        a, b = dot_product(pods, pools), dot_product(split, single)
        assert a.expanded()[1] == b.expanded()[1] and a.unplaced == b.unplaced, (pods, pools)
        ra = analyze(pods, pools, (), time_budget=HANG_GUARD_S, workers=1)
        rb = analyze(split, single, (), time_budget=HANG_GUARD_S, workers=1)
        assert (ra.fit.feasible, ra.fit.proof) == (rb.fit.feasible, rb.fit.proof), (pods, pools)
        assert len(ra.fit.nodes) == len(rb.fit.nodes) == sum(n.count for n in pools)
        if ra.fit.method != "cp-sat":
            assert placement(ra.fit.nodes) == placement(rb.fit.nodes)
            assert (ra.stranded.cpu, ra.stranded.memory, len(ra.stranded.nodes)) == (
                rb.stranded.cpu,
                rb.stranded.memory,
                len(rb.stranded.nodes),
            )
        assert ra.headroom == rb.headroom


def test_exact_answers_with_a_large_idle_pool_beside_agree_with_brute_force():
    """A pool of 5,000 nodes no pod may use beside a random small one: CP-SAT models none of its
    nodes, the verdict is brute force's, and the placement lists every node, the idle ones as a run."""
    rng = random.Random(20240601)
    seen = {True: 0, False: 0}
    for _ in range(60):
        pods, small = random_instance(rng)
        pods = tuple(replace(p, pools=(small.name,)) for p in pods)
        idle = NodeType("idle", "c", BIG, small.cpu, small.memory, small.pods)
        truth = brute_force_fits(pods, small)
        seen[truth] += 1
        res = exact.solve_fixed(pods, [small, idle], HANG_GUARD_S, workers=1)
        assert res.status == ("feasible" if truth else "infeasible")
        assert len(res.pool) <= small.count  # the idle pool is not in the model
        r = pack(Problem(pods, (small, idle)), time_budget=HANG_GUARD_S, workers=1)
        assert r.feasible is truth
        assert len(r.nodes) == small.count + BIG and len(r.nodes.parts) <= small.count + 2
        if truth:
            check_placement(Problem(pods, (small, idle)), r)
    assert seen[True] > 10 and seen[False] > 10


def test_a_placement_only_cp_sat_finds_keeps_the_idle_pool_a_run():
    """4 + 3 + 3 twice on two nodes of 10: first fit puts 4 + 4 together and needs a third node,
    and no bound proves a misfit, so CP-SAT places them; the 5,000 idle nodes stay one run."""
    a = PodType("a", 400, MI, count=2, pools=("w",))
    b = PodType("b", 300, MI, count=4, pools=("w",))
    w = NodeType("w", "c", 2, 1000, GI, 110)
    idle = NodeType("idle", "c", BIG, 1000, GI, 110)
    r = pack(Problem((a, b), (w, idle)), time_budget=HANG_GUARD_S, workers=1)
    assert (r.feasible, r.proof, r.method) == (True, "placement", "cp-sat")
    check_placement(Problem((a, b), (w, idle)), r)
    assert [n.pods for n in r.nodes[:2]] == [(("a", 1), ("b", 2))] * 2
    assert r.nodes.parts[2:] == (EmptyNodes("idle", "c", 0, BIG, idle.allocatable),)


GPU = "nvidia.com/gpu"


def test_a_5000_node_gpu_pool_with_a_zone_spread_answers_as_5000_pools_of_one():
    """A pool of 5,000 nodes of 4 GPUs each in zone a, 3 such nodes in zone b and a pool without
    GPUs; pods asking for 3 GPUs and for 1 and a workload spread over the two zones (a pool cap per
    zone), their counts drawn with a fixed seed. The verdict, the placement, stranded capacity and
    headroom are the same whether the big pool is a count or 5,000 pools of one node; no node holds
    more GPUs than it offers, no zone more of the spread pods than its cap, and the pool without
    GPUs, whose CPU the GPU pods could use, is stranded whole, kept as one run."""
    rng = random.Random(3537)
    four = ((GPU, 4),)
    pools = (
        NodeType("gpu-a", "c", BIG, 16000, 64 * GI, 110, labels=(("zone", "a"),), extended=four),
        NodeType("gpu-b", "c", 3, 16000, 64 * GI, 110, labels=(("zone", "b"),), extended=four),
        NodeType("cpu", "c", 40, 16000, 64 * GI, 110, labels=(("zone", "a"),), extended=()),
    )
    for _ in range(2):
        spread = rng.randint(8, 14)
        caps = {"gpu-a": -(-spread // 2), "gpu-b": spread // 2}  # maxSkew 1 over two zones
        pods = (
            PodType("train", 4000, 16 * GI, count=rng.randint(20, 60), extended=((GPU, 3),)),
            PodType("infer", 1000, 4 * GI, count=rng.randint(20, 60), extended=((GPU, 1),)),
            PodType(
                "web",
                500,
                GI,
                count=spread,
                pools=("gpu-a", "gpu-b"),
                pool_caps=tuple(((name,), cap) for name, cap in caps.items()),
            ),
        )
        single, split = one_by_one(pools), pods_one_by_one(pods, pools)
        ra = analyze(pods, pools, (), time_budget=HANG_GUARD_S, workers=1)
        rb = analyze(split, single, (), time_budget=HANG_GUARD_S, workers=1)
        assert (ra.fit.feasible, ra.fit.proof, ra.fit.method) == (rb.fit.feasible, rb.fit.proof, rb.fit.method)
        assert ra.fit.feasible is True
        assert isinstance(ra.fit.nodes, NodeList) and len(ra.fit.nodes) == len(rb.fit.nodes) == BIG + 43
        assert placement(ra.fit.nodes) == placement(rb.fit.nodes)
        # the opened nodes one by one, then a run per pool
        assert len(ra.fit.nodes.parts) == len(ra.fit.nodes.placed) + 3
        asks = {p.name: dict(p.extended).get(GPU, 0) for p in pods}
        web = {"gpu-a": 0, "gpu-b": 0}
        for n in ra.fit.nodes.placed:
            assert sum(asks[name] * k for name, k in n.pods) <= 4, n
            web[n.pool] += dict(n.pods).get("web", 0)
        assert web == caps  # the caps sum to the count: each zone holds just its cap
        assert (ra.stranded.cpu, ra.stranded.memory, len(ra.stranded.nodes)) == (
            rb.stranded.cpu,
            rb.stranded.memory,
            len(rb.stranded.nodes),
        )
        assert EmptyNodes("cpu", "c", 0, 40, pools[2].allocatable) in ra.stranded.nodes.parts
        assert "cpu-39" in ra.stranded.nodes and "gpu-a-0" not in ra.stranded.nodes
        assert ra.stranded.cpu >= 40 * 16000
        assert ra.headroom == rb.headroom


def test_room_beside_a_placement_counts_the_gpus_each_node_has_left():
    """PF606 counts the replicas that fit beside the placement as one empty node's room times a
    run's count: that room, like a busy node's, holds no more GPUs than the node has left."""
    from podfit.rules.autoscaler_ceiling_does_not_fit import room

    pool = NodeType("gpu", "c", BIG, 16000, 64 * GI, 110, extended=((GPU, 4),))
    infer = PodType("infer", 100, MI, count=3, extended=((GPU, 1),))
    train = PodType("train", 1000, GI, count=1, extended=((GPU, 3),))
    others = {q.name: q for q in (infer, train)}
    run = EmptyNodes("gpu", "c", 1, BIG - 1, pool.allocatable)
    assert room(infer, run.node(0), pool, others) == 4  # 160 by CPU, 110 by slots, 4 by GPUs
    busy = NodeResult("gpu", 0, "c", (("infer", 1), ("train", 1)), (1100, GI + MI, 2, 0), pool.allocatable)
    assert room(infer, busy, pool, others) == 0
    half = NodeResult("gpu", 0, "c", (("infer", 2),), (200, 2 * MI, 2, 0), pool.allocatable)
    assert room(infer, half, pool, others) == 2
