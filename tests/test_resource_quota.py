"""PF112 resource-quota-exceeded: what a namespace's workloads need against its quotas, rolling
update surge included, objects the API server rejects left out (and named)."""

from __future__ import annotations

from podfit.config import Config
from podfit.facts import build_facts
from podfit.loader import InputFile, load
from podfit.platform import DEFAULT_PLATFORM
from podfit.rule_context import RuleContext
from podfit.rules.api_version_removed import target_kubernetes_version
from podfit.rules.resource_quota_exceeded import check, plural, surge
from podfit.workloads import build_workloads

QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: team}
spec:
  hard: {requests.cpu: "1", pods: "5", count/deployments.apps: "1", services: "0"}
"""


def deployment(name: str, replicas: int, cpu: str, strategy: str = "", api: str = "apps/v1") -> str:
    return (
        f"---\napiVersion: {api}\nkind: Deployment\nmetadata: {{name: {name}, namespace: team}}\n"
        f"spec:\n  replicas: {replicas}\n{strategy}  selector: {{matchLabels: {{app: {name}}}}}\n"
        f"  template:\n    metadata: {{labels: {{app: {name}}}}}\n"
        f"    spec: {{containers: [{{name: c, image: c:1, resources: {{requests: {{cpu: {cpu}}}}}}}]}}\n"
    )


def findings(text: str, config: Config | None = None) -> list[tuple[int, str]]:
    objects = load([InputFile("q.yaml", text.encode())]).objects
    config = config or Config()
    facts = build_facts(objects, DEFAULT_PLATFORM, kubernetes_version=target_kubernetes_version(config))
    ctx = RuleContext(facts, config, "PF112")
    return [(f.location.line, f.message) for f in check(ctx)]


def test_surge_follows_the_deployment_strategy():
    text = (
        deployment("d", 3, "100m")
        + deployment("i", 3, "100m", "  strategy: {rollingUpdate: {maxSurge: 2}}\n")
        + deployment("p", 10, "100m", "  strategy: {rollingUpdate: {maxSurge: '10%'}}\n")
        + deployment("r", 3, "100m", "  strategy: {type: Recreate}\n")
        + deployment("z", 0, "100m")
    )
    workloads, _ = build_workloads(load([InputFile("d.yaml", text.encode())]).objects)
    assert {w.ref.name: surge(w) for w in workloads} == {"d": 1, "i": 2, "p": 1, "r": 0, "z": 0}


def test_plural_of_kinds():
    assert [plural(k) for k in ("Deployment", "Ingress", "NetworkPolicy", "Gateway")] == [
        "deployments",
        "ingresses",
        "networkpolicies",
        "gateways",
    ]


def test_steady_state_surge_and_object_counts():
    # 2 × 400m = 800m fits 1 CPU, the surge pod (1 of 25% × 2, rounded up) does not
    got = findings(QUOTA + deployment("web", 2, "400m"))
    assert got == [
        (
            5,
            "the namespace's workloads need requests.cpu 800m, 1200m during a rolling update, of hard 1: "
            "the API server refuses the surge pods and the rollout stalls",
        )
    ]
    # a second Deployment: past the count and the CPU, steady; 5 + 2 surge pods of hard 5
    got = findings(QUOTA + deployment("web", 2, "400m") + deployment("api", 3, "100m"))
    assert got == [
        (
            5,
            "the namespace's workloads need requests.cpu 1100m (1600m during a rolling update), of hard 1: "
            "the API server refuses the pods beyond it",
        ),
        (
            5,
            "the namespace's workloads need pods 5, 7 during a rolling update, of hard 5: "
            "the API server refuses the surge pods and the rollout stalls",
        ),
        (
            5,
            "the namespace holds 2 objects counted by count/deployments.apps, of hard 1: the API server refuses those beyond it",
        ),
    ]


def test_objects_the_api_server_rejects_are_left_out_and_named():
    text = QUOTA + deployment("web", 2, "600m", "  strategy: {type: Recreate}\n")
    text += deployment("old", 2, "600m", api="extensions/v1beta1")
    got = findings(text)
    assert [m for _, m in got] == [
        "the namespace's workloads need requests.cpu 1200m, of hard 1: the API server refuses the pods beyond it"
        " (leaving out 1 object the API server rejects for a removed apiVersion, PF906: Deployment team/old)"
    ]
    # the Kubernetes version the manifests target still serves it: it counts
    older = Config(thresholds={"PF906": {"kubernetes-version": "1.15"}})
    got = findings(text, older)
    assert [m.split(":")[0] for _, m in got] == [
        "the namespace's workloads need requests.cpu 2400m (3 during a rolling update), of hard 1"
    ]


def test_injected_proxy_counts_and_a_missing_request_is_refused():
    ns = "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team, labels: {istio-injection: enabled}}\n"
    recreate = "  strategy: {type: Recreate}\n"
    assert findings(QUOTA + ns + deployment("web", 2, "400m", recreate)) == []  # 2 × (400m + 100m): fits
    got = findings(QUOTA + ns + deployment("web", 2, "450m", recreate))
    assert [m for _, m in got] == [
        "the namespace's workloads need requests.cpu 1100m, of hard 1: the API server refuses the pods beyond it"
    ]
    text = QUOTA + deployment("web", 1, "100m").replace("resources: {requests: {cpu: 100m}}", "resources: {}")
    assert [m for _, m in findings(text)] == [
        "the quota tracks requests.cpu, and the pods of Deployment team/web (container c) set no cpu request: "
        "the API server refuses them (must specify requests.cpu)"
    ]


def test_the_facts_clusters_leave_out_what_the_api_server_rejects():
    """An object of a removed apiVersion is never created: every cluster's objects and workloads
    (packing, capacity, quotas) leave it out, unless the Kubernetes version the manifests target
    still serves it."""
    text = deployment("web", 2, "100m") + deployment("old", 2, "100m", api="extensions/v1beta1")
    objects = load([InputFile("d.yaml", text.encode())]).objects
    facts = build_facts(objects, DEFAULT_PLATFORM)
    assert [str(o.ref) for o in facts.rejected] == ["Deployment team/old"]
    assert [w.ref.name for w in facts.clusters[0].workloads] == ["web"]
    assert [o.ref.name for o in facts.unique_objects] == ["web"]
    kept = build_facts(objects, DEFAULT_PLATFORM, kubernetes_version="1.15")
    assert kept.rejected == () and [w.ref.name for w in kept.unique_workloads] == ["web", "old"]
    # a version that does not parse (PF906 says so) rejects by every removal so far
    assert [o.ref.name for o in build_facts(objects, DEFAULT_PLATFORM, kubernetes_version="soon").rejected] == ["old"]
