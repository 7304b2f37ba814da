"""Zone topology spread (``topologyKey: topology.kubernetes.io/zone``, ``DoNotSchedule``) in packing:
the least and most each zone holds, over several pools per zone, maxSkew above 1, node selection
that narrows the zones and ``minDomains``; honoured by the heuristics, the bounds and CP-SAT."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podfit.cli import main
from podfit.facts import build_facts
from podfit.loader import make_object
from podfit.packing import exact
from podfit.packing.adapter import inputs_from
from podfit.packing.bounds import certificates
from podfit.packing.engine import pack
from podfit.packing.heuristics import dot_product, first_fit
from podfit.packing.model import MI, NodeType, PodType, Problem
from podfit.platform import parse_platform
from samples import ZONE_SPREAD

HANG_GUARD_S = 30.0  # a time limit only so that a bug cannot hang the run; the models here solve at once


def pool(name: str, zone: str, count: int, slots: int) -> dict:
    return {
        "name": name,
        "vmClass": "m",
        "count": count,
        "allocatable": {"cpu": "4", "memory": "8Gi", "pods": slots},
        "labels": {"topology.kubernetes.io/zone": zone},
    }


def profile(*pools: dict) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "podfit.io/v1alpha1",
            "kind": "Platform",
            "metadata": {"name": "zones"},
            "spec": {
                "runtime": "kubernetes",
                "vmClasses": [{"name": "m", "cpus": 4, "memory": "8Gi", "reserved": False}],
                "nodePools": list(pools),
            },
        }
    )


# zone a has two pools (one node each), zones b and c one pool each; 10 pod slots per node
THREE_ZONES = profile(pool("a1", "a", 1, 10), pool("a2", "a", 1, 10), pool("b", "b", 1, 10), pool("c", "c", 1, 10))


def deployment(replicas: int, spread: dict | None = None, placement: dict | None = None) -> str:
    spec: dict = {
        "containers": [{"name": "app", "image": "r/app:1", "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]
    }
    if spread is not None:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
                **spread,
            }
        ]
    spec.update(placement or {})
    return yaml.safe_dump(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec},
            },
        }
    )


def packed(manifest: str, platform_text: str = THREE_ZONES) -> dict[str, tuple]:
    platform = parse_platform(platform_text, "zones.yaml")
    objects = [make_object(d, "app.yaml") for d in yaml.safe_load_all(manifest)]
    inputs = inputs_from(build_facts(objects, platform).workloads, platform)
    return {p.name.removeprefix("Deployment/shop/"): (p.count, p.pools, p.pool_caps) for p in inputs.pods}


A = ("a1", "a2")


def test_several_pools_per_zone_and_maxskew_above_one():
    """10 pods over 3 zones at maxSkew 2: each zone holds 2 to 4 (⌈(10 − 4) / 3⌉, ⌊(10 + 4) / 3⌋):
    2 in each zone, the other 4 at most 2 more per zone; zone a is both its pools."""
    got = packed(deployment(10, {"maxSkew": 2}))
    assert got == {
        "web@a": (2, A, ()),
        "web@b": (2, ("b",), ()),
        "web@c": (2, ("c",), ()),
        "web": (4, ("a1", "a2", "b", "c"), ((A, 2), (("b",), 2), (("c",), 2))),
    }
    # maxSkew 1: 4, 3, 3 in some order: 3 each and one more anywhere (a cap of 1 binds nothing)
    got = packed(deployment(10, {}))
    assert {k: v[0] for k, v in got.items()} == {"web@a": 3, "web@b": 3, "web@c": 3, "web": 1}
    assert got["web"][2] == ()


def test_node_selection_narrows_the_zones():
    """Node affinity to zones a and b (nodeAffinityPolicy Honor, the default): the domains are a
    and b, 3 + 3. Under nodeAffinityPolicy Ignore, zone c is a domain the pods cannot use: it stays
    at 0, so no zone holds more than maxSkew (1)."""
    affinity = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}
                            ]
                        }
                    ]
                }
            }
        }
    }
    got = packed(deployment(6, {}, affinity))
    assert got == {"web@a": (3, A, ()), "web@b": (3, ("b",), ())}
    got = packed(deployment(6, {"nodeAffinityPolicy": "Ignore"}, affinity))
    assert got == {"web": (6, ("a1", "a2", "b"), ((A, 1), (("b",), 1)))}


def test_min_domains_above_the_zones_caps_each_zone_at_maxskew():
    got = packed(deployment(9, {"minDomains": 4, "maxSkew": 2}))
    assert got == {"web": (9, ("a1", "a2", "b", "c"), ((A, 2), (("b",), 2), (("c",), 2)))}
    # minDomains met: the usual 3 + 3 + 3
    got = packed(deployment(9, {"minDomains": 3}))
    assert {k: v[0] for k, v in got.items()} == {"web@a": 3, "web@b": 3, "web@c": 3}


def test_schedule_anyway_and_other_workloads_are_not_modelled():
    assert packed(deployment(9, {"whenUnsatisfiable": "ScheduleAnyway"})) == {"web": (9, ("a1", "a2", "b", "c"), ())}


def pf601(tmp_path, manifest: str, platform_text: str) -> list[str]:
    (tmp_path / "app.yaml").write_text(manifest)
    (tmp_path / "platform.yaml").write_text(platform_text)
    res = CliRunner().invoke(
        main,
        [
            "check",
            str(tmp_path / "app.yaml"),
            "--platform",
            str(tmp_path / "platform.yaml"),
            "--format",
            "json",
            "--rule",
            "PF601",
        ],
    )
    assert res.exit_code in (0, 1), res.output
    return [f["message"] for f in json.loads(res.stdout)["findings"]]


def test_pf601_proves_the_zone_cap(tmp_path):
    """Zones a (2 pools), b and c with 10, 10, 2 free slots: 18 pods at maxSkew 1 need 6 in c, so
    no fit; at maxSkew 6, c needs 2 (⌈(18 − 12) / 3⌉) and the others at most 10: 8 + 8 + 2 fits.
    Under minDomains 4 each zone holds at most maxSkew: 9 pods over 3 zones at maxSkew 3 fit,
    10 do not, proven by the zone-spread bound."""
    small_c = profile(pool("a1", "a", 1, 5), pool("a2", "a", 1, 5), pool("b", "b", 1, 10), pool("c", "c", 1, 2))
    assert pf601(tmp_path, deployment(18, {}), small_c) != []
    assert pf601(tmp_path, deployment(18, {"maxSkew": 6}), small_c) == []
    assert pf601(tmp_path, deployment(18), small_c) == []  # no spread: 22 slots hold 18
    assert pf601(tmp_path, deployment(9, {"maxSkew": 3, "minDomains": 4}), THREE_ZONES) == []
    (message,) = pf601(tmp_path, deployment(10, {"maxSkew": 3, "minDomains": 4}), THREE_ZONES)
    assert "zone topology spread" in message and "9 in all" in message, message


def nodes(*spec: tuple[str, int, int]) -> tuple[NodeType, ...]:
    return tuple(NodeType(name, "m", count, 4000, 8 * 1024 * MI, slots) for name, count, slots in spec)


def per_pool(pool_names: list[str], content) -> dict[str, int]:
    out: dict[str, int] = {}
    for pi, c in zip(pool_names, content, strict=True):
        out[pi] = out.get(pi, 0) + sum(c.values())
    return out


def test_heuristics_bounds_and_cp_sat_honour_pool_caps():
    """6 pods, at most 2 on pool x and 4 on y (two nodes each): every method keeps to the caps
    though x comes first and could take all 6; with caps 2 + 3 the bound proves the misfit and
    CP-SAT agrees."""
    pools = nodes(("x", 2, 10), ("y", 2, 10))
    pod = PodType("web", 10, MI, count=6, pool_caps=((("x",), 2), (("y",), 4)))
    other = PodType("filler", 10, MI, count=3)
    for run in (lambda p: first_fit(p, pools, "sum"), lambda p: dot_product(p, pools)):
        got = run([pod, other])
        assert got.complete
        counts = per_pool(
            [pools[i].name for i in got.pool], [{t: k for t, k in c.items() if t == 0} for c in got.content]
        )
        assert counts.get("x", 0) <= 2 and counts.get("y", 0) <= 4 and sum(counts.values()) == 6
    res = exact.solve_fixed([pod, other], pools, HANG_GUARD_S, workers=1)
    assert res.status == "feasible"
    x_pods = sum(k for j, c in enumerate(res.content) for t, k in c if t == 0 and pools[res.pool[j]].name == "x")
    assert x_pods <= 2
    tight = PodType("web", 10, MI, count=6, pool_caps=((("x",), 2), (("y",), 3)))
    (bound,) = [b for b in certificates([tight], pools) if b.kind == "zone-spread"]
    assert (bound.needed, bound.available, bound.violated) == (6, 5, True)
    assert pack(Problem((tight,), pools), HANG_GUARD_S, workers=1).feasible is False
    assert exact.solve_fixed([tight], pools, HANG_GUARD_S, workers=1).status == "infeasible"
    # a pool outside every cap: no bound, and the pods fit through it
    loose = nodes(("x", 2, 10), ("y", 2, 10), ("z", 1, 10))
    assert not [b for b in certificates([tight], loose) if b.kind == "zone-spread"]
    assert pack(Problem((tight,), loose), HANG_GUARD_S, workers=1).feasible is True


DATA = Path(__file__).resolve().parent.parent / "testdata" / "platform-import"


def imported_profile(tmp_path: Path, source: str) -> Path:
    """The profile ``podfit platform import`` writes for a dump directory (or, for OpenShift, its
    nodes.json with its pods.json)."""
    out = tmp_path / f"{source}.yaml"
    args = [str(DATA / source)]
    if source == "openshift":
        args = [str(DATA / source / "nodes.json"), "--pods", str(DATA / source / "pods.json")]
    res = CliRunner().invoke(main, ["platform", "import", *args, "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_least_nodes_per_zone_keep_the_pinned_and_spread_pods_in_their_zone(tmp_path):
    """The EKS dump's t3.small nodes have 9 free slots (11 less 2 DaemonSet pods). 6 pods pinned to
    eu-west-1a, 10 spread 5 + 5 and one coredns per zone: eu-west-1a needs 12 slots (2 nodes),
    eu-west-1b 6 (1 node): 3 nodes, proven (the per-zone bound is 2 + 1), where without zones 18
    pods need only 2. PF604 advises 3, per zone."""
    profile_path = imported_profile(tmp_path, "eks-dump")
    app = tmp_path / "app.yaml"
    app.write_text(ZONE_SPREAD)
    res = CliRunner().invoke(main, ["pack", str(app), "--platform", str(profile_path), "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    doc = json.loads(res.stdout)
    assert doc["min_nodes_detail"]["t3.small"]["nodes"] == 2
    parts = {p["name"]: (p["count"], p["pools"], p["pool_caps"]) for p in doc["pods"] if "spread" in p["name"]}
    assert parts == {
        "Deployment/shop/spread@eu-west-1a": (5, ["small-eu-west-1a"], []),
        "Deployment/shop/spread@eu-west-1b": (5, ["small-eu-west-1b"], []),
    }
    assert doc["min_nodes_per_zone"] == {
        "t3.small": {"zones": {"eu-west-1a": 2, "eu-west-1b": 1}, "nodes": 3, "lower_bound": 3, "exact": True}
    }
    assert doc["recommendation"]["nodes"] == 3
    assert doc["recommendation"]["candidates"][0]["zones"] == {"eu-west-1a": 2, "eu-west-1b": 1}
    res = CliRunner().invoke(
        main, ["check", str(app), "--platform", str(profile_path), "--format", "json", "--rule", "PF604"]
    )
    (finding,) = json.loads(res.stdout)["findings"]
    assert finding["message"].startswith("right-size: 3 × t3.small (eu-west-1a 2, eu-west-1b 1) fit")
    assert "the pools use 2 × t3.small (eu-west-1a 1, eu-west-1b 1)" in finding["message"]
    assert finding["details"]["recommended"]["zones"] == {"eu-west-1a": 2, "eu-west-1b": 1}
    # without the pinned pods and the spread, 16 pods and the 2 coredns pods: 1 node per zone
    app.write_text(ZONE_SPREAD.replace("replicas: 6", "replicas: 0").replace("maxSkew: 1", "maxSkew: 10"))
    res = CliRunner().invoke(main, ["pack", str(app), "--platform", str(profile_path), "--format", "json"])
    assert json.loads(res.stdout)["min_nodes_per_zone"]["t3.small"]["zones"] == {"eu-west-1a": 1, "eu-west-1b": 1}


@pytest.mark.parametrize("source", ["eks-dump", "gke", "kubeadm-dump", "openshift"])
def test_least_nodes_per_zone_never_below_the_proven_bound(tmp_path, source):
    """Over the imported profiles and the workloads checked against them: every per-zone count is
    a placement at or above its lower bound, which is at or above the class's own; the
    recommendation's count is at least the per-zone least, and its zones add up to it."""
    from podfit.packing.engine import analyze_inputs

    profile_path = imported_profile(tmp_path, source)
    platform = parse_platform(profile_path.read_text(), str(profile_path))
    zoned = 0
    for manifest in (ZONE_SPREAD, (DATA / "app.yaml").read_text()):
        objects = [make_object(d, "app.yaml") for d in yaml.safe_load_all(manifest) if d]
        inputs = inputs_from(build_facts(objects, platform).workloads, platform)
        a = analyze_inputs(inputs, 100, HANG_GUARD_S)
        zoned += len(a.zonal)
        for name, z in a.zonal.items():
            least = a.min_nodes[name]
            assert z.nodes == sum(n for _, n in z.zones)
            assert z.nodes >= z.lower_bound >= least.lower_bound
            assert least.nodes <= z.nodes
        for c in a.recommendation.candidates:
            if c.vm_class in a.zonal:
                assert c.nodes >= c.min_nodes == a.zonal[c.vm_class].nodes
                assert sum(n for _, n in c.zones) == c.nodes
    assert bool(zoned) == (source != "kubeadm-dump")  # kubeadm's nodes carry no zone label


def _scheduler_fits(n: int, slots: list[int], usable: list[bool], skew: int, min_domains: int | None) -> bool:
    """Whether some final spread of ``n`` pods over the zones (pod slots per zone) is one the
    scheduler's DoNotSchedule filter reaches: every zone within ``skew`` of the least (0 where a
    zone cannot be used or there are fewer zones than minDomains)."""
    import itertools

    floor0 = not all(usable) or (min_domains is not None and len(slots) < min_domains)
    for counts in itertools.product(*(range(s + 1) if u else (0,) for s, u in zip(slots, usable, strict=True))):
        if sum(counts) != n:
            continue
        least = 0 if floor0 else min(counts)
        if max(counts) - least <= skew:
            return True
    return False


def test_zone_spread_never_proves_a_misfit_the_scheduler_would_place():
    """Random small clusters (2 or 3 zones, one node each of 1 to 8 pod slots, some zones the pods
    may not use under nodeAffinityPolicy Ignore), 1 to 14 pods, maxSkew 1 to 3, sometimes
    minDomains: whenever some spread the scheduler accepts fits, packing finds a placement; over 2
    zones the least and most per zone are the whole condition, so packing agrees both ways."""
    import random

    rng = random.Random(35)
    checked = misfits = 0
    for _ in range(60):
        z = rng.choice((2, 3))
        slots = [rng.randint(1, 8) for _ in range(z)]
        usable = [True] * z
        if rng.random() < 0.25:
            usable[rng.randrange(z)] = False
        if not any(usable):
            continue
        n, skew = rng.randint(1, 14), rng.randint(1, 3)
        min_domains = rng.choice((None, None, z, z + 1))
        names = [f"z{i}" for i in range(z)]
        platform_text = profile(*(pool(nm, nm, 1, s) for nm, s in zip(names, slots, strict=True)))
        spread: dict = {"maxSkew": skew}
        if min_domains is not None:
            spread["minDomains"] = min_domains
        placement = {}
        if not all(usable):
            spread["nodeAffinityPolicy"] = "Ignore"
            allowed = [nm for nm, u in zip(names, usable, strict=True) if u]
            placement = {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": allowed}
                                    ]
                                }
                            ]
                        }
                    }
                }
            }
        platform = parse_platform(platform_text, "zones.yaml")
        objects = [make_object(d, "app.yaml") for d in yaml.safe_load_all(deployment(n, spread, placement))]
        inputs = inputs_from(build_facts(objects, platform).workloads, platform)
        got = pack(Problem(inputs.pods, inputs.pools), HANG_GUARD_S, workers=1).feasible
        want = _scheduler_fits(n, slots, usable, skew, min_domains)
        if want:
            assert got is True, (slots, usable, n, skew, min_domains, inputs.pods)
        elif z == 2:
            assert got is False, (slots, usable, n, skew, min_domains, inputs.pods)
        checked += 1
        misfits += not want
    assert checked >= 50 and misfits >= 10  # both outcomes are exercised


def test_a_zone_of_an_empty_label_value_is_named():
    """topology.kubernetes.io/zone: "" is a label value like any other (the nodes are a zone of their
    own); the advice showed it as nothing at all: "( 1, b 1)"."""
    from podfit.packing.report import zones_text

    assert zones_text([("", 1), ("b", 2)]) == '"" 1, b 2'
