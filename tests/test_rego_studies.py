"""The studies' cases, run through the rules: the Rego rules on the embedded engine (the conformance
test holds the opa engine and conftest to the same results) with data.podfit built by the facts
stage, and PF301, a Python rule over the facts' node pools since the facts stage."""

from __future__ import annotations

import pytest

from podfit.engines import get_engine
from podfit.facts import build_facts, facts_data
from podfit.loader import make_object
from podfit.platform import DEFAULT_PLATFORM, HostGroup, NodePool, Platform
from podfit.rule_context import RuleContext
from podfit.rules import vm_class_exceeds_numa_node

GiB = 2**30


@pytest.fixture(scope="module")
def engine():
    return get_engine("embedded")


def app_server(cpu: str) -> dict:
    """The study's application server pod (Guaranteed) with a 100m logging sidecar."""
    res = lambda c, m: {"requests": {"cpu": c, "memory": m}, "limits": {"cpu": c, "memory": m}}  # noqa: E731
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "appserver"},
        "spec": {
            "containers": [
                {"name": "tomcat", "image": "tomcat:9", "resources": res(cpu, "5Gi")},
                {"name": "sidecar", "image": "log:1", "resources": res("100m", "64Mi")},
            ]
        },
    }


def rules(results, rule):
    return [(r.rule, r.container) for r in results if r.rule == rule]


def platform_data(platform: Platform, docs: list[dict] = ()) -> dict:
    """data.podfit for the documents on the platform, as `podfit check` gives it to the engine."""
    return facts_data(build_facts([make_object(d, "study.yaml") for d in docs], platform))


def test_fractional_guaranteed_app_server(engine):
    data = platform_data(DEFAULT_PLATFORM)
    results = engine.evaluate([app_server("1500m")], data)
    assert rules(results, "PF201") == [("PF201", "tomcat")]  # the 100m sidecar is not flagged
    assert results[0].details == {"cpu": 1500, "suggested_cpu": 2000}
    assert rules(engine.evaluate([app_server("2000m")], data), "PF201") == []
    assert rules(engine.evaluate([app_server("2")], data), "PF201") == []


BARE_METAL = Platform(runtime="bare-metal", hosts=(HostGroup("metal", 1, 2, 64, 2, 2250, 1024 * GiB),))


def limited(cpu: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "tomcat"},
        "spec": {
            "containers": [
                {
                    "name": "tomcat",
                    "image": "tomcat:9",
                    "resources": {"requests": {"cpu": cpu, "memory": "5Gi"}, "limits": {"cpu": cpu, "memory": "6Gi"}},
                }
            ]
        },
    }


def test_cfs_slices_on_256_cpus(engine):
    results = engine.evaluate([limited("1.5")], platform_data(BARE_METAL))
    assert [(r.rule, r.container) for r in results] == [("PF202", "tomcat")]
    assert results[0].details == {
        "cpu_limit": 1500,
        "slices": 30,
        "node_logical_cpus": 256,
        "period_us": 100000,
        "slice_us": 5000,
    }


def test_cfs_slices_on_4_vcpu_tkg_nodes(engine):
    tkg = Platform(node_pools=(NodePool("best-effort-xlarge", 4, "workers"),))  # 4 vCPUs per node
    assert platform_data(tkg)["platform"]["node_logical_cpus"] == 4
    assert engine.evaluate([limited("1.5")], platform_data(tkg)) == []


def test_static_cpu_manager_exempts_whole_cpus(engine):
    from dataclasses import replace

    from podfit.platform import KubeletSettings

    static = replace(BARE_METAL, kubelet=KubeletSettings(cpu_manager_policy="static"))
    pod = limited("2")
    pod["spec"]["containers"][0]["resources"]["limits"]["memory"] = "5Gi"  # Guaranteed
    assert rules(engine.evaluate([pod], platform_data(BARE_METAL, [pod])), "PF202") == [("PF202", "tomcat")]
    # the facts of the pod name its pinned container; PF202 reads them
    data = platform_data(static, [pod])
    assert data["platform"]["workloads"] == {"Pod//tomcat": {"exclusive_cpus": ["tomcat"]}}
    assert rules(engine.evaluate([pod], data), "PF202") == []


TKC_V1ALPHA1 = {
    "apiVersion": "run.tanzu.vmware.com/v1alpha1",
    "kind": "TanzuKubernetesCluster",
    "metadata": {"name": "c1"},
    "spec": {
        "topology": {
            "controlPlane": {"class": "best-effort-small", "count": 1},
            "workers": {"class": "CLASS", "count": 4},
        }
    },
}
TKC_V1ALPHA3 = {
    "apiVersion": "run.tanzu.vmware.com/v1alpha3",
    "kind": "TanzuKubernetesCluster",
    "metadata": {"name": "c3"},
    "spec": {
        "topology": {
            "controlPlane": {"vmClass": "best-effort-small", "replicas": 1},
            "nodePools": [{"name": "np", "vmClass": "CLASS", "replicas": 4}],
        }
    },
}
CAPI = {
    "apiVersion": "cluster.x-k8s.io/v1beta1",
    "kind": "Cluster",
    "metadata": {"name": "capi"},
    "spec": {
        "topology": {
            "class": "tanzukubernetescluster",
            "version": "v1.26.5",
            "controlPlane": {
                "replicas": 1,
                "variables": {"overrides": [{"name": "vmClass", "value": "best-effort-small"}]},
            },
            "workers": {"machineDeployments": [{"class": "node-pool", "name": "md", "replicas": 4}]},
            "variables": [{"name": "vmClass", "value": "CLASS"}],
        }
    },
}


def with_class(doc: dict, cls: str) -> dict:
    import json

    return json.loads(json.dumps(doc).replace("CLASS", cls))


def pf301(docs: list[dict], platform: Platform = DEFAULT_PLATFORM) -> list:
    facts = build_facts([make_object(d, "cluster.yaml") for d in docs], platform)
    return list(vm_class_exceeds_numa_node.check(RuleContext(facts, rule_id="PF301")))


@pytest.mark.parametrize("shape", [TKC_V1ALPHA1, TKC_V1ALPHA3, CAPI], ids=["v1alpha1", "v1alpha3", "capi"])
def test_node_class_wider_than_numa_node(engine, shape):
    # the study's hosts: 2 sockets × 16 cores, one NUMA node per socket
    doc = with_class(shape, "best-effort-8xlarge")
    wide = pf301([doc])
    assert [(f.rule, f.details["vm_class"], f.details["vcpus"], f.details["numa_node_cores"]) for f in wide] == [
        ("PF301", "best-effort-8xlarge", 32, 16)
    ]
    (f,) = wide
    assert "32 vCPUs > 16 cores" in f.message and "memory" not in f.message  # the memory fits
    assert f.object is not None and (f.object.kind, f.object.name) == (doc["kind"], doc["metadata"]["name"])
    assert pf301([with_class(shape, "best-effort-xlarge")]) == []
    # the Rego rules see no node pool at all: nothing about the cluster object from them
    assert engine.evaluate([doc], platform_data(DEFAULT_PLATFORM, [doc])) == []


def test_tkc_node_pools_set_the_node_size_for_pf202():
    """A TKC in the input tells the facts the node size (largest pool's vCPUs)."""
    doc = with_class(TKC_V1ALPHA3, "best-effort-2xlarge")
    assert platform_data(DEFAULT_PLATFORM, [doc])["platform"]["node_logical_cpus"] == 8
    assert platform_data(DEFAULT_PLATFORM)["platform"].get("node_logical_cpus") is None


def test_missing_facts_keep_rules_silent(engine):
    # no hosts: PF301/PF302 cannot know the NUMA size; no node size: PF202 stays silent
    bare = Platform(hosts=())
    docs = [with_class(TKC_V1ALPHA1, "best-effort-8xlarge"), limited("1.5")]
    assert engine.evaluate(docs, platform_data(bare)) == []
    assert engine.evaluate(docs, {}) == []
    assert pf301(docs, bare) == []
    # the cluster's pools do give the node size: PF202 then runs (32 vCPUs > 30 slices)
    assert rules(engine.evaluate(docs, platform_data(bare, docs)), "PF202") == [("PF202", "tomcat")]
