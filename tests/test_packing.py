"""Packing engine: the studies' cases, bounds, proofs, monotonicity and exactness against brute force."""

from __future__ import annotations

import dataclasses
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podfit.packing import (
    GI,
    MI,
    NodeType,
    Overhead,
    PodType,
    Problem,
    VMClass,
    analyze,
    exact,
    headroom,
    l2_bound,
    lower_bound,
    min_nodes,
    node_type,
    pack,
    stranded,
)
from podfit.packing.adapter import vm_classes
from podfit.platform import DEFAULT_PLATFORM


def nodes(count: int, cpu: int, memory: int = 64 * GI, pods: int = 110, name: str = "pool") -> NodeType:
    return NodeType(name, "test", count, cpu, memory, pods)


def check_placement(problem: Problem, result) -> None:
    """A reported placement really places every pod within every node's allocatable."""
    by_name = {p.name: p for p in problem.pods}
    placed: dict[str, int] = {}
    assert len(result.nodes) == problem.node_count
    for n in result.nodes:
        used = [0, 0, 0, 0]
        groups = set()
        for name, k in n.pods:
            p = by_name[name]
            placed[name] = placed.get(name, 0) + k
            for d, v in enumerate(p.demand):
                used[d] += v * k
            if p.exclusive_group:
                assert k == 1 and p.exclusive_group not in groups
                groups.add(p.exclusive_group)
            if p.max_per_node:
                assert k <= p.max_per_node
        assert tuple(used) == n.used
        assert all(u <= a for u, a in zip(n.used, n.allocatable, strict=True)), n
    assert placed == {p.name: p.count for p in problem.pods if p.count}


# ------------------------------------------------------------------------------- studies' cases --


def test_850m_400m_do_not_fit_two_2000m_nodes_though_the_total_does():
    pods = (PodType("a", 850, 0, count=3), PodType("b", 400, 0, count=3))
    problem = Problem(pods, (nodes(2, 2000),))
    assert sum(p.cpu * p.count for p in pods) == 3750 <= 2 * 2000
    r = pack(problem, time_budget=10)
    assert r.feasible is False
    assert r.proof in ("lower-bound", "solver")
    assert r.unplaced  # the best attempt leaves a pod out, as in the study's assignment
    ok = pack(Problem(pods, (nodes(3, 2000),)), time_budget=10)
    assert ok.feasible is True and ok.proof == "placement"
    check_placement(Problem(pods, (nodes(3, 2000),)), ok)


def test_largest_pod_1500m_9gi_needs_large_or_bigger():
    classes = [c for c in vm_classes(DEFAULT_PLATFORM) if c.name.startswith("best-effort-")]
    pod = PodType("big", 1500, 9 * GI)
    a = analyze([pod], [node_type("w", classes[0], 1)], classes, time_budget=2)
    holds = set(a.min_nodes)
    assert holds == {f"best-effort-{s}" for s in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge")}
    assert all(m.nodes == 1 and m.exact for m in a.min_nodes.values())
    # medium (2 CPU / 8 GiB) falls short on memory only
    medium = next(c for c in classes if c.name == "best-effort-medium")
    t = node_type("m", medium, 1)
    assert t.cpu >= pod.cpu and t.memory < pod.memory


def test_best_effort_medium_node_leaves_1750m_and_8gi_minus_100mi():
    medium = next(c for c in vm_classes(DEFAULT_PLATFORM) if c.name == "best-effort-medium")
    t = node_type("m", medium, 1)
    assert (medium.cpu, medium.memory) == (2000, 8 * GI)
    assert t.cpu == 1750
    assert t.memory == 8 * GI - 100 * MI
    assert t.pods == 110


def _small2_instances(cpu_limit: int | None) -> tuple[PodType, ...]:
    # Two application instances: each 4 pods of 1.2 CPU / 8 GiB = 4.8 CPUs and 32 GiB.
    return tuple(PodType(f"app{i}", 1200, 8 * GI, count=4, cpu_limit=cpu_limit, memory_limit=8 * GI) for i in (1, 2))


def test_right_sizing_two_instances_fit_three_xlarge_nodes():
    xlarge = next(c for c in vm_classes(DEFAULT_PLATFORM) if c.name == "best-effort-xlarge")
    pods = _small2_instances(cpu_limit=1200)
    assert sum(p.cpu * p.count for p in pods) == 9600
    assert sum(p.memory * p.count for p in pods) == 64 * GI
    three = node_type("w", xlarge, 3)
    assert 3 * three.cpu == 11_250  # 11.25 CPUs after overhead
    assert 95 * GI < 3 * three.memory < 96 * GI  # "about 95 GiB"
    assert pack(Problem(pods, (three,))).feasible is True
    assert pack(Problem(pods, (three.with_count(2),))).feasible is False
    r = min_nodes(pods, three)
    assert r is not None and (r.summary.nodes, r.summary.lower_bound) == (3, 3)


def test_right_sizing_burst_headroom_asks_for_a_fourth_xlarge_node():
    classes = [c for c in vm_classes(DEFAULT_PLATFORM) if c.name.startswith("best-effort-")]
    xlarge = next(c for c in classes if c.name == "best-effort-xlarge")
    pods = _small2_instances(cpu_limit=1500)  # 300m of burst per pod: 2.4 CPUs in all
    kw = dict(numa_cores=DEFAULT_PLATFORM.numa_node_cores, numa_memory=DEFAULT_PLATFORM.numa_node_memory, time_budget=5)
    with_burst = analyze(pods, [node_type("w", xlarge, 3)], classes, share_percent=100, **kw)
    no_burst = analyze(pods, [node_type("w", xlarge, 3)], classes, share_percent=0, **kw)
    cand = {c.vm_class: c for c in with_burst.recommendation.candidates}
    assert cand["best-effort-xlarge"].min_nodes == 3
    assert cand["best-effort-xlarge"].nodes == 4
    assert {c.vm_class: c for c in no_burst.recommendation.candidates}["best-effort-xlarge"].nodes == 3
    assert not with_burst.headroom.ok  # 3 nodes: 1,650m free < 2,400m of burst
    assert with_burst.headroom.free_cpu == 11_250 - 9_600
    # 8xlarge (32 vCPUs) does not fit a 16-core NUMA node of the default hosts
    assert "best-effort-8xlarge" in with_burst.recommendation.excluded
    assert with_burst.recommendation.vm_class not in with_burst.recommendation.excluded


# ------------------------------------------------------------------------------------- bounds ---


def test_l2_bound_beats_the_continuous_bound():
    assert l2_bound([(6, 3)], 10) == 3  # no two fit together; continuous says 2
    assert l2_bound([(5, 4)], 10) == 2
    assert l2_bound([(7, 1), (4, 2), (3, 1)], 10) == 2


def test_anti_affinity_bound_proves_misfit():
    pods = (PodType("web", 100, MI, count=3, exclusive_group="web"),)
    r = pack(Problem(pods, (nodes(2, 4000),)))
    assert r.feasible is False and r.proof == "lower-bound"
    assert any(b.kind == "anti-affinity" and b.needed == 3 and b.available == 2 for b in r.violated_bounds)
    assert lower_bound(pods, nodes(1, 4000).allocatable)[0] == 3


def test_pod_slots_limit_packing():
    pods = (PodType("tiny", 10, MI, count=5),)
    assert pack(Problem(pods, (nodes(2, 4000, pods=2),))).feasible is False
    assert pack(Problem(pods, (nodes(3, 4000, pods=2),))).feasible is True


def test_daemonsets_come_off_every_selected_node():
    from podfit.packing import DaemonPod

    cls = VMClass("c", 4000, 16 * GI)
    ds = [DaemonPod("logs", 100, 200 * MI), DaemonPod("gpu", 500, MI, node_selector=(("gpu", "yes"),))]
    plain = node_type("p", cls, 1, daemons=ds, overhead=Overhead(250, 100 * MI))
    gpu = node_type("g", cls, 1, labels=[("gpu", "yes")], daemons=ds)
    assert (plain.cpu, plain.memory, plain.pods) == (3650, 16 * GI - 300 * MI, 109)
    assert (gpu.cpu, gpu.pods) == (3150, 108)


def test_node_selector_limits_pools():
    pools = (
        NodeType("cpu", "c", 2, 4000, 16 * GI, 110),
        NodeType("mem", "m", 1, 4000, 64 * GI, 110, labels=(("tier", "mem"),)),
    )
    pods = (
        PodType("db", 1000, 40 * GI, count=1, node_selector=(("tier", "mem"),)),
        PodType("db2", 1000, 30 * GI, count=1, node_selector=(("tier", "mem"),)),
    )
    r = pack(Problem(pods, pools))
    assert r.feasible is False and r.proof == "lower-bound"
    assert pack(Problem(pods[:1], pools)).feasible is True


def test_stranded_and_headroom():
    pods = (PodType("cache", 500, 7 * GI, count=2, cpu_limit=1000, memory_limit=7 * GI),)
    pools = (NodeType("w", "c", 1, 4000, 15 * GI, 110),)
    r = pack(Problem(pods, pools))
    s = stranded(pods, r.nodes, pools)
    assert (s.cpu, s.memory) == (3000, GI)  # no 7 GiB pod fits the 1 GiB left: the CPU is stranded
    h = headroom(pods, r.nodes, 100)
    assert (h.burst_cpu, h.needed_cpu, h.free_cpu, h.ok) == (1000, 1000, 3000, True)
    assert headroom(pods, r.nodes, 50).needed_cpu == 500


def test_device_pods_burst_only_on_the_nodes_offering_the_device():
    """Pods asking for a GPU run only on GPU nodes: their burst must fit the free capacity there,
    whatever the CPU nodes have free (the cluster-wide sum alone says ok)."""
    gpu = (("nvidia.com/gpu", 1),)
    pods = (PodType("infer", 6000, 8 * GI, count=2, cpu_limit=12000, memory_limit=8 * GI, extended=gpu),)
    pools = (
        NodeType("cpu", "c", 3, 15000, 60 * GI, 110, extended=()),
        NodeType("gpu", "g", 1, 15000, 60 * GI, 110, extended=(("nvidia.com/gpu", 2),)),
    )
    r = pack(Problem(pods, pools))
    assert r.feasible
    h = headroom(pods, r.nodes, 100, pools)
    assert h.cluster_ok and (h.needed_cpu, h.free_cpu) == (12000, 48000)
    (d,) = h.devices
    assert (d.resource, d.pods, d.nodes, d.needed_cpu, d.free_cpu, d.ok) == ("nvidia.com/gpu", 2, 1, 12000, 3000, False)
    assert not h.ok
    # limits of 7.5 CPUs: 3 CPUs of burst, which the GPU node has free
    pods = (dataclasses.replace(pods[0], cpu_limit=7500),)
    h = headroom(pods, pack(Problem(pods, pools)).nodes, 100, pools)
    assert h.devices[0].ok and h.ok
    # without the pools (what each offers unknown) every node may take them: the cluster-wide sum
    assert headroom(pods, r.nodes, 100).devices[0].nodes == 4


def test_budget_exhausted_is_never_reported_as_a_fact():
    # a hard instance with no time for the solver: either a proven answer or None
    rng = random.Random(5)
    pods = tuple(
        PodType(f"t{i}", rng.randint(300, 1900), rng.randint(1, 7) * GI, count=rng.randint(1, 6)) for i in range(12)
    )
    total = sum(p.cpu * p.count for p in pods)
    problem = Problem(pods, (nodes(-(-total // 4000), 4000, 16 * GI),))
    r = pack(problem, time_budget=0)
    if r.feasible is True:
        check_placement(problem, r)
    elif r.feasible is False:
        assert r.proof == "lower-bound" and r.violated_bounds
    else:
        assert r.proof == "budget-exhausted"


# -------------------------------------------------------------------- exactness: brute force ---


def brute_force_fits(pods: tuple[PodType, ...], pool: NodeType) -> bool:
    items = [p for p in pods for _ in range(p.count)]
    n = pool.count
    free = [list(pool.allocatable) for _ in range(n)]
    groups = [set() for _ in range(n)]
    per = [dict() for _ in range(n)]

    def go(i: int) -> bool:
        if i == len(items):
            return True
        p = items[i]
        seen_empty = False
        for j in range(n):
            empty = free[j] == list(pool.allocatable)
            if empty:
                if seen_empty:
                    continue  # identical empty nodes: trying one is enough
                seen_empty = True
            if any(d > f for d, f in zip(p.demand, free[j], strict=True)):
                continue
            if p.exclusive_group and p.exclusive_group in groups[j]:
                continue
            if p.max_per_node and per[j].get(p.name, 0) >= p.max_per_node:
                continue
            for d, v in enumerate(p.demand):
                free[j][d] -= v
            per[j][p.name] = per[j].get(p.name, 0) + 1
            added = p.exclusive_group and p.exclusive_group not in groups[j]
            if added:
                groups[j].add(p.exclusive_group)
            if go(i + 1):
                return True
            for d, v in enumerate(p.demand):
                free[j][d] += v
            per[j][p.name] -= 1
            if added:
                groups[j].discard(p.exclusive_group)
        return False

    return go(0)


def random_instance(rng: random.Random) -> tuple[tuple[PodType, ...], NodeType]:
    n_types = rng.randint(1, 4)
    total = rng.randint(1, 8)
    counts = [1] * n_types
    for _ in range(max(0, total - n_types)):
        counts[rng.randrange(n_types)] += 1
    counts = counts[: min(n_types, total)]
    pods = []
    for i, c in enumerate(counts):
        group = rng.choice([None, None, "g"])
        pods.append(
            PodType(
                f"t{i}",
                rng.randint(1, 10) * 100,
                rng.randint(1, 10) * GI,
                count=c,
                exclusive_group=group,
                max_per_node=rng.choice([None, None, 1, 2]),
            )
        )
    pool = NodeType("w", "c", rng.randint(1, 4), rng.randint(8, 20) * 100, rng.randint(8, 20) * GI, rng.randint(2, 8))
    return tuple(pods), pool


def test_cp_sat_agrees_with_brute_force_on_random_instances():
    rng = random.Random(20240601)
    seen = {True: 0, False: 0}
    for _ in range(150):
        pods, pool = random_instance(rng)
        truth = brute_force_fits(pods, pool)
        seen[truth] += 1
        res = exact.solve_fixed(pods, [pool], 10, workers=1)
        assert res.status == ("feasible" if truth else "infeasible"), (pods, pool)
        r = pack(Problem(pods, (pool,)), time_budget=10, workers=1)
        assert r.feasible is truth, (pods, pool, r.proof)
        if truth:
            check_placement(Problem(pods, (pool,)), r)
        else:
            assert r.proof in ("lower-bound", "solver")
    assert seen[True] > 20 and seen[False] > 20  # both answers are exercised


def test_min_nodes_agrees_with_brute_force():
    rng = random.Random(7)
    for _ in range(40):
        pods, pool = random_instance(rng)
        r = min_nodes(pods, pool, time_budget=10, workers=1)
        if r is None:
            assert not brute_force_fits(pods, pool.with_count(sum(p.count for p in pods)))
            continue
        m = r.summary
        assert m.exact
        assert brute_force_fits(pods, pool.with_count(m.nodes))
        assert m.nodes == 0 or not brute_force_fits(pods, pool.with_count(m.nodes - 1))


# ------------------------------------------------------------------------ monotonicity (hypothesis) ---

pod_types = st.lists(
    st.tuples(st.integers(1, 20), st.integers(1, 16), st.integers(1, 4), st.booleans()),
    min_size=1,
    max_size=4,
).map(
    lambda ts: tuple(
        PodType(f"t{i}", c * 100, m * GI // 2, count=n, exclusive_group="g" if g else None)
        for i, (c, m, n, g) in enumerate(ts)
    )
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pods=pod_types, count=st.integers(1, 4), cpu=st.integers(10, 30))
def test_adding_a_node_never_turns_a_fit_into_a_misfit(pods, count, cpu):
    pool = nodes(count, cpu * 100, 8 * GI, pods=6)
    before = pack(Problem(pods, (pool,)), time_budget=5, workers=1)
    after = pack(Problem(pods, (pool.with_count(count + 1),)), time_budget=5, workers=1)
    if before.feasible is True:
        assert after.feasible is True
    if after.feasible is False:
        assert before.feasible is False
    # a node of another pool helps too
    extra = pack(Problem(pods, (pool, nodes(1, 1000, GI, name="extra"))), time_budget=5, workers=1)
    if before.feasible is True:
        assert extra.feasible is True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pods=pod_types, count=st.integers(1, 4), cpu=st.integers(10, 30), which=st.integers(0, 3))
def test_removing_a_pod_never_turns_a_fit_into_a_misfit(pods, count, cpu, which):
    pool = nodes(count, cpu * 100, 8 * GI, pods=6)
    before = pack(Problem(pods, (pool,)), time_budget=5, workers=1)
    i = which % len(pods)
    fewer = tuple(
        p if j != i else PodType(p.name, p.cpu, p.memory, p.count - 1, exclusive_group=p.exclusive_group)
        for j, p in enumerate(pods)
    )
    after = pack(Problem(fewer, (pool,)), time_budget=5, workers=1)
    if before.feasible is True:
        assert after.feasible is True


def test_burst_counts_up_to_the_node_a_pod_runs_on():
    """A pod bursts on its own node: a 1,000-CPU limit on 3,750m nodes needs at most 2,750m of
    headroom, not 999 CPUs (which once made right-sizing ask for 127 of the largest class)."""
    from podfit.packing.engine import burst
    from podfit.packing.model import PodType

    pod = PodType("api", 1000, 2 * 2**30, 2, cpu_limit=1_000_000, memory_limit=2 * 2**30)
    assert burst([pod]) == (2 * 999_000, 0, 0, 0)
    assert burst([pod], 3750, 8 * 2**30) == (2 * 2750, 0, 0, 0)
    # a node smaller than the request: nothing to burst into
    assert burst([pod], 500, 2**30) == (0, 0, 0, 0)


def test_min_nodes_without_search_is_first_fit_decreasing_only():
    # an instance where another first-fit order needs fewer nodes (10) than the baseline's 12: the
    # bounds-only count is the baseline's, whatever the clock
    from podfit.packing.heuristics import BASELINE, run_all

    sizes = [(250, 9, 6), (2500, 1, 6), (1000, 5, 5), (250, 5, 5), (1000, 5, 6), (1500, 5, 2)]
    pods = tuple(PodType(f"t{i}", cpu, mem * GI, count=n) for i, (cpu, mem, n) in enumerate(sizes))
    tmpl = NodeType("n", "c", 1, 4000, 16 * GI, 110)
    best, baseline = run_all(pods, [], template=tmpl, max_open=100)
    assert (baseline.used_nodes, best.used_nodes) == (12, 10)
    r = min_nodes(pods, tmpl, 0, search=False)
    assert r is not None
    assert (r.summary.nodes, r.summary.method) == (12, BASELINE)
    assert r.summary.lower_bound <= 10
