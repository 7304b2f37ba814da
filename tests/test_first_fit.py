"""First fit computes each pod type's placement over all nodes at once (numpy); it must give
exactly what visiting the nodes one by one gives. The node-by-node loop is kept here as the
reference (over a state that keeps every node, as first fit once did) and both run on random
instances with every constraint first fit honours (extended resources and pool caps among them). First fit itself keeps a pool's unopened
nodes as a count: its placement is compared expanded to every node."""

from __future__ import annotations

import random

from podfit.packing.heuristics import ORDERINGS, conflict_indices, first_fit
from podfit.packing.model import NodeType, PodType

GI = 2**30


class EveryNode:
    """A placement state with an entry for every node of the fixed pools (opened or not)."""

    def __init__(self, pods, pools, template, max_open):
        self.pods = pods
        self.pools = [template] if template is not None else list(pools)
        self.template = template
        self.max_open = max_open
        self.pool, self.fc, self.fm, self.fp, self.fs, self.fx, self.content = [], [], [], [], [], [], []
        self.groups = {}
        if template is None:
            for i, n in enumerate(pools):
                self._add(i, n.count)
        self.elig = [[p.allowed_on(n) for n in self.pools] for p in pods]
        self.conf = conflict_indices(pods)

    def _add(self, pool, count=1):
        n = self.pools[pool]
        self.pool += [pool] * count
        self.fc += [n.cpu] * count
        self.fm += [n.memory] * count
        self.fp += [n.pods] * count
        self.fs += [n.storage] * count
        self.fx += [None if n.extended is None else dict(n.extended) for _ in range(count)]
        self.content += [{} for _ in range(count)]

    def can_open(self):
        return self.template is not None and len(self.pool) < self.max_open

    def room(self, t, j):
        p = self.pods[t]
        if not self.elig[t][self.pool[j]]:
            return 0
        if p.exclusive_group is not None and p.exclusive_group in self.groups.get(j, ()):
            return 0
        if any(self.content[j].get(u) for u in self.conf[t]):
            return 0
        k = self.fp[j]
        for dem, free in ((p.cpu, self.fc[j]), (p.memory, self.fm[j]), (p.storage, self.fs[j])):
            if dem:
                k = min(k, free // dem)
        if p.extended and self.fx[j] is not None:
            k = min(k, *(self.fx[j].get(r, 0) // v for r, v in p.extended))
        if p.per_node_cap is not None:
            k = min(k, p.per_node_cap - self.content[j].get(t, 0))
        return max(k, 0)

    def place(self, t, j, k):
        p = self.pods[t]
        self.fc[j] -= p.cpu * k
        self.fm[j] -= p.memory * k
        self.fp[j] -= k
        self.fs[j] -= p.storage * k
        for r, v in p.extended if self.fx[j] is not None else ():
            self.fx[j][r] = self.fx[j].get(r, 0) - v * k
        if p.exclusive_group is not None:
            self.groups.setdefault(j, set()).add(p.exclusive_group)
        self.content[j][t] = self.content[j].get(t, 0) + k


def reference(pods, pools, order, template=None, max_open=0):
    """The node-by-node first fit (the loop first_fit ran before it was computed per type)."""
    st = EveryNode(pods, pools, template, max_open)
    unplaced = [0] * len(pods)
    for t in order:
        rem = pods[t].count
        # what each of the type's pool caps has left (template nodes lie in no zone: none apply)
        left = [cap for _, cap in pods[t].pool_caps] if template is None else []
        j = 0
        while rem > 0:
            if j == len(st.pool):
                if not st.can_open():
                    break
                st._add(0)
            k = st.room(t, j)
            capped = [
                c
                for c, (names, _) in enumerate(pods[t].pool_caps)
                if c < len(left) and st.pools[st.pool[j]].name in names
            ]
            k = min([k, *(left[c] for c in capped)])
            for c in capped:
                left[c] -= k
            if k:
                k = min(k, rem)
                st.place(t, j, k)
                rem -= k
            elif j == len(st.pool) - 1 and template is not None and not st.content[j]:
                break
            j += 1
        unplaced[t] = rem
    return st.pool, st.content, unplaced


def random_pods(rng: random.Random, pools: list[str]) -> tuple[PodType, ...]:
    n = rng.randint(1, 9)
    pods = []
    for i in range(n):
        pods.append(
            PodType(
                f"t{i}",
                rng.choice([0, 100, 250, 500, 1000, 1500]),
                rng.choice([0, 1, 2, 3, 5]) * GI,
                count=rng.randint(0, 30),
                storage=rng.choice([0, 0, GI]),
                exclusive_group=rng.choice([None, None, None, "a", "b"]),
                max_per_node=rng.choice([None, None, 1, 3]),
                pools=rng.choice([None, None, tuple(rng.sample(pools, rng.randint(1, len(pools))))]),
                conflicts=tuple(f"t{u}" for u in range(n) if u != i and rng.random() < 0.15),
                extended=rng.choice([(), (), (("gpu", rng.randint(1, 3)),), (("fpga", 1), ("gpu", 1))]),
                pool_caps=rng.choice(
                    [
                        (),
                        (),
                        tuple((tuple(rng.sample(pools, rng.randint(1, len(pools)))), rng.randint(0, 12)) for _ in "z"),
                    ]
                ),
            )
        )
    return tuple(pods)


def test_first_fit_per_type_equals_node_by_node_on_fixed_pools():
    rng = random.Random(15)
    for _ in range(300):
        pools = [
            NodeType(
                f"p{i}",
                "c",
                rng.randint(0, 6),
                rng.randint(1, 8) * 500,
                rng.randint(1, 16) * GI,
                rng.randint(2, 30),
                extended=rng.choice([None, (), (("gpu", rng.randint(1, 8)),), (("fpga", 2), ("gpu", 4))]),
            )
            for i in range(rng.randint(1, 3))
        ]
        pods = random_pods(rng, [p.name for p in pools])
        for key in ORDERINGS:
            for constrained in (True, False):
                got = first_fit(pods, pools, key, constrained_first=constrained)
                order = _order(pods, pools, key, constrained)
                pool, content, unplaced = reference(pods, pools, order)
                assert (*got.expanded(), got.unplaced) == (pool, content, unplaced), (pods, pools, key)


def test_first_fit_per_type_equals_node_by_node_when_opening_nodes():
    rng = random.Random(16)
    for _ in range(300):
        tmpl = NodeType(
            "tmpl",
            "c",
            1,
            rng.randint(1, 8) * 500,
            rng.randint(1, 16) * GI,
            rng.randint(1, 30),
            extended=rng.choice([None, (("gpu", rng.randint(1, 8)),)]),
        )
        pods = random_pods(rng, ["tmpl"])
        max_open = rng.choice([sum(p.count for p in pods), rng.randint(0, 5)])
        for key in ORDERINGS:
            got = first_fit(pods, [], key, template=tmpl, max_open=max_open)
            order = _order(pods, [tmpl], key, True, template=tmpl)
            pool, content, unplaced = reference(pods, [], order, tmpl, max_open)
            assert (*got.expanded(), got.unplaced) == (pool, content, unplaced), (pods, tmpl, key, max_open)


def _order(pods, pools, key, constrained, template=None):
    """The order first_fit takes the types in (the same key)."""
    from podfit.packing.heuristics import _reference

    ref = _reference(pods, [template] if template else pools)
    size = ORDERINGS[key]
    elig = [[p.allowed_on(n) for n in pools] for p in pods]

    def order_key(t):
        p = pods[t]
        if constrained:
            eligible = sum(n.count for n, ok in zip(pools, elig[t], strict=True) if ok) if template is None else 0
            c = 0 if (p.exclusive_group or p.max_per_node or p.conflicts or p.host_ports or p.pool_caps) else 1
            return (eligible, c, -size(p, ref), p.name)
        return (-size(p, ref), p.name)

    return sorted(range(len(pods)), key=order_key)
