"""The studies' cases, run through the Rego rules (embedded engine; the conformance test holds the
opa engine and conftest to the same results)."""

from __future__ import annotations

import pytest

from podfit.engines import get_engine
from podfit.engines.platform_data import platform_data
from podfit.loader import make_object
from podfit.platform import DEFAULT_PLATFORM, HostGroup, NodePool, Platform

GiB = 2**30


@pytest.fixture(scope="module")
def engine():
    return get_engine("embedded")


def app_server(cpu: str) -> dict:
    """The study's application server pod (Guaranteed) with a 100m logging sidecar."""
    res = lambda c, m: {"requests": {"cpu": c, "memory": m}, "limits": {"cpu": c, "memory": m}}  # noqa: E731
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "appserver"},
        "spec": {"containers": [
            {"name": "tomcat", "image": "tomcat:9", "resources": res(cpu, "5Gi")},
            {"name": "sidecar", "image": "log:1", "resources": res("100m", "64Mi")},
        ]},
    }  # fmt: skip


def rules(results, rule):
    return [(r.rule, r.container) for r in results if r.rule == rule]


def test_fractional_guaranteed_app_server(engine):
    data = platform_data(DEFAULT_PLATFORM)
    results = engine.evaluate([app_server("1500m")], data)
    assert rules(results, "PF201") == [("PF201", "tomcat")]  # the 100m sidecar is not flagged
    assert results[0].details == {"cpu": 1500, "suggested_cpu": 2000}
    assert rules(engine.evaluate([app_server("2000m")], data), "PF201") == []
    assert rules(engine.evaluate([app_server("2")], data), "PF201") == []


BARE_METAL = Platform(runtime="bare-metal", hosts=(HostGroup("metal", 1, 2, 64, 2, 2250, 1024 * GiB),))


def limited(cpu: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tomcat"},
            "spec": {"containers": [{"name": "tomcat", "image": "tomcat:9",
                                     "resources": {"requests": {"cpu": cpu, "memory": "5Gi"}, "limits": {"cpu": cpu}}}]}}  # fmt: skip


def test_cfs_slices_on_256_cpus(engine):
    results = engine.evaluate([limited("1.5")], platform_data(BARE_METAL))
    assert [(r.rule, r.container) for r in results] == [("PF202", "tomcat")]
    assert results[0].details == {"cpu_limit": 1500, "slices": 30, "node_logical_cpus": 256,
                                  "period_us": 100000, "slice_us": 5000}  # fmt: skip


def test_cfs_slices_on_4_vcpu_tkg_nodes(engine):
    tkg = Platform(node_pools=(NodePool("best-effort-xlarge", 4, "workers"),))  # 4 vCPUs per node
    assert platform_data(tkg)["node_logical_cpus"] == 4
    assert engine.evaluate([limited("1.5")], platform_data(tkg)) == []


def test_static_cpu_manager_exempts_whole_cpus(engine):
    from dataclasses import replace

    from podfit.platform import KubeletSettings

    static = replace(BARE_METAL, kubelet=KubeletSettings(cpu_manager_policy="static"))
    pod = limited("2")
    pod["spec"]["containers"][0]["resources"]["limits"]["memory"] = "5Gi"  # Guaranteed
    assert rules(engine.evaluate([pod], platform_data(BARE_METAL)), "PF202") == [("PF202", "tomcat")]
    assert rules(engine.evaluate([pod], platform_data(static)), "PF202") == []


TKC_V1ALPHA1 = {
    "apiVersion": "run.tanzu.vmware.com/v1alpha1", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c1"},
    "spec": {"topology": {"controlPlane": {"class": "best-effort-small", "count": 1},
                          "workers": {"class": "CLASS", "count": 4}}},
}  # fmt: skip
TKC_V1ALPHA3 = {
    "apiVersion": "run.tanzu.vmware.com/v1alpha3", "kind": "TanzuKubernetesCluster", "metadata": {"name": "c3"},
    "spec": {"topology": {"controlPlane": {"vmClass": "best-effort-small", "replicas": 1},
                          "nodePools": [{"name": "np", "vmClass": "CLASS", "replicas": 4}]}},
}  # fmt: skip
CAPI = {
    "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": {"name": "capi"},
    "spec": {"topology": {"class": "tanzukubernetescluster", "version": "v1.26.5",
                          "controlPlane": {"replicas": 1,
                                           "variables": {"overrides": [{"name": "vmClass", "value": "best-effort-small"}]}},
                          "workers": {"machineDeployments": [{"class": "node-pool", "name": "md", "replicas": 4}]},
                          "variables": [{"name": "vmClass", "value": "CLASS"}]}},
}  # fmt: skip


def with_class(doc: dict, cls: str) -> dict:
    import json

    return json.loads(json.dumps(doc).replace("CLASS", cls))


@pytest.mark.parametrize("shape", [TKC_V1ALPHA1, TKC_V1ALPHA3, CAPI], ids=["v1alpha1", "v1alpha3", "capi"])
def test_node_class_wider_than_numa_node(engine, shape):
    # the study's hosts: 2 sockets × 16 cores, one NUMA node per socket
    data = platform_data(DEFAULT_PLATFORM)
    wide = engine.evaluate([with_class(shape, "best-effort-8xlarge")], data)
    assert [(r.rule, r.details["resource"], r.details["vm"], r.details["numa_node"]) for r in wide] == [
        ("PF301", "cpu", 32, 16)
    ]
    assert engine.evaluate([with_class(shape, "best-effort-xlarge")], data) == []


def test_tkc_node_pools_set_the_node_size_for_pf202():
    """A TKC in the input tells platform_data the node size (largest pool's vCPUs)."""
    obj = make_object(with_class(TKC_V1ALPHA3, "best-effort-2xlarge"), "tkc.yaml")
    assert platform_data(DEFAULT_PLATFORM, [obj])["node_logical_cpus"] == 8


def test_missing_facts_keep_rules_silent(engine):
    # no hosts: PF301/PF302 cannot know the NUMA size; no node size: PF202 stays silent
    bare = Platform(hosts=())
    docs = [with_class(TKC_V1ALPHA1, "best-effort-8xlarge"), limited("1.5")]
    assert engine.evaluate(docs, platform_data(bare)) == []
    assert engine.evaluate(docs, {}) == []
