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


def scoped_quota(name: str, scope: str, hard: str = '{requests.cpu: "1", pods: "2"}') -> str:
    return (
        f"---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: {name}, namespace: team}}\n"
        f"spec:\n  hard: {hard}\n  {scope}\n"
    )


def test_a_scoped_quota_counts_only_the_pods_in_its_scope():
    """NotBestEffort counts the 3 pods with requests, not the BestEffort ones; BestEffort only the
    2 BestEffort pods and only `pods`; Terminating the pods with activeDeadlineSeconds; several
    quotas each apply."""
    best_effort = deployment("be", 2, "100m", "  strategy: {type: Recreate}\n").replace(
        "resources: {requests: {cpu: 100m}}", "resources: {}"
    )
    burstable = deployment("web", 3, "500m", "  strategy: {type: Recreate}\n")
    text = best_effort + burstable
    got = findings(text + scoped_quota("nbe", "scopes: [NotBestEffort]"))
    assert [m for _, m in got] == [
        "the namespace's workloads in the quota's scope (NotBestEffort) need requests.cpu 1500m, of hard 1: "
        "the API server refuses the pods beyond it",
        "the namespace's workloads in the quota's scope (NotBestEffort) need pods 3, of hard 2: "
        "the API server refuses the pods beyond it",
    ]
    # BestEffort: the 2 BestEffort pods fit pods: 2; requests.cpu is not a BestEffort quota's
    assert findings(text + scoped_quota("be", "scopes: [BestEffort]")) == []
    assert [m.split(":")[0] for _, m in findings(text + scoped_quota("be", "scopes: [BestEffort]", "{pods: 1}"))] == [
        "the namespace's workloads in the quota's scope (BestEffort) need pods 2, of hard 1"
    ]
    # Terminating: no pod sets activeDeadlineSeconds; NotTerminating is every pod
    assert findings(text + scoped_quota("t", "scopes: [Terminating]", "{pods: 0}")) == []
    both = findings(
        text + scoped_quota("nt", "scopes: [NotTerminating]", "{pods: 4}") + scoped_quota("all", "", "{pods: 4}")
    )
    assert [m.split(":")[0] for _, m in both] == [
        "the namespace's workloads in the quota's scope (NotTerminating) need pods 5, of hard 4",
        "the namespace's workloads need pods 5, of hard 4",
    ]
    deadline = burstable.replace("spec: {containers:", "spec: {activeDeadlineSeconds: 600, containers:")
    assert [m.split(":")[0] for _, m in findings(deadline + scoped_quota("t", "scopes: [Terminating]"))] == [
        "the namespace's workloads in the quota's scope (Terminating) need requests.cpu 1500m, of hard 1",
        "the namespace's workloads in the quota's scope (Terminating) need pods 3, of hard 2",
    ]


def test_a_priority_class_quota_counts_the_pods_of_that_class():
    """The Kubernetes docs' quota per priority class: pods of class "high" under the "pods-high"
    quota; a pod without a class takes the run's globalDefault PriorityClass."""
    high = deployment("high", 3, "500m", "  strategy: {type: Recreate}\n").replace(
        "spec: {containers:", "spec: {priorityClassName: high, containers:"
    )
    low = deployment("low", 3, "500m", "  strategy: {type: Recreate}\n")
    selector = "scopeSelector: {matchExpressions: [{operator: In, scopeName: PriorityClass, values: [high]}]}"
    got = findings(high + low + scoped_quota("pods-high", selector, '{cpu: "1"}'))
    assert [m.split(":")[0] for _, m in got] == [
        "the namespace's workloads in the quota's scope (PriorityClass In high) need cpu 1500m, of hard 1"
    ]
    assert findings(low + scoped_quota("pods-high", selector, '{cpu: "1"}')) == []
    default = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\nglobalDefault: true\n"
    assert len(findings(default + low + scoped_quota("pods-high", selector, '{cpu: "1"}'))) == 1
    # scopes: [PriorityClass] is Exists: the pods naming a class; NotIn counts the others
    assert len(findings(high + low + scoped_quota("any", "scopes: [PriorityClass]", '{pods: "3"}'))) == 0
    not_in = selector.replace("operator: In", "operator: NotIn")
    assert [m.split(":")[0] for _, m in findings(high + low + scoped_quota("rest", not_in, '{cpu: "1"}'))] == [
        "the namespace's workloads in the quota's scope (PriorityClass NotIn high) need cpu 1500m, of hard 1"
    ]
    # a scope the API server rejects (In on a scope without values) is not checked
    bad = "scopeSelector: {matchExpressions: [{operator: In, scopeName: BestEffort, values: [x]}]}"
    assert findings(high + low + scoped_quota("bad", bad, '{pods: "0"}')) == []


def test_cross_namespace_pod_affinity_scope():
    spread = deployment("web", 2, "100m", "  strategy: {type: Recreate}\n").replace(
        "spec: {containers:",
        "spec: {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "[{topologyKey: kubernetes.io/hostname, namespaceSelector: {}, labelSelector: {matchLabels: {app: web}}}]}}, "
        "containers:",
    )
    quota = scoped_quota("x", "scopes: [CrossNamespacePodAffinity]", '{pods: "0"}')
    assert [m.split(":")[0] for _, m in findings(spread + quota)] == [
        "the namespace's workloads in the quota's scope (CrossNamespacePodAffinity) need pods 2, of hard 0"
    ]
    assert findings(deployment("plain", 2, "100m") + quota) == []


def rollout(name: str, replicas: int, strategy: str) -> str:
    return (
        f"---\napiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {{name: {name}, namespace: team}}\n"
        f"spec:\n  replicas: {replicas}\n  strategy: {strategy}\n  selector: {{matchLabels: {{app: {name}}}}}\n"
        f"  template:\n    metadata: {{labels: {{app: {name}}}}}\n"
        f"    spec: {{containers: [{{name: c, image: c:1, resources: {{requests: {{cpu: 100m}}}}}}]}}\n"
    )


def test_argo_rollouts_surge_blue_green_and_canary():
    """Blue-green runs a second ReplicaSet of the replicas during the switch (previewReplicaCount
    only before it); a canary surges by maxSurge, or by the replicas with trafficRouting unless
    dynamicStableScale."""
    workloads, _ = build_workloads(
        load(
            [
                InputFile(
                    "r.yaml",
                    (
                        rollout("bg", 4, "{blueGreen: {activeService: a, previewService: p, previewReplicaCount: 1}}")
                        + rollout("canary", 4, "{canary: {steps: [{setWeight: 20}]}}")
                        + rollout("surge", 10, "{canary: {maxSurge: '50%'}}")
                        + rollout("routed", 4, "{canary: {trafficRouting: {istio: {virtualService: {name: v}}}}}")
                        + rollout("dynamic", 4, "{canary: {dynamicStableScale: true, trafficRouting: {nginx: {}}}}")
                    ).encode(),
                )
            ]
        ).objects
    )
    assert {w.ref.name: surge(w) for w in workloads} == {"bg": 4, "canary": 1, "surge": 5, "routed": 4, "dynamic": 1}
    quota = (
        '---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: team}\nspec:\n  hard: {pods: "6"}\n'
    )
    bg = rollout("bg", 4, "{blueGreen: {activeService: a, previewReplicaCount: 1}}")
    assert [m for _, m in findings(quota + bg)] == [
        "the namespace's workloads need pods 4, 8 during an update, of hard 6: the API server refuses the surge "
        "pods and the rollout stalls (Rollout team/bg: the blue-green switch runs a second ReplicaSet of 4, 1 "
        "before promotion (previewReplicaCount))"
    ]
    assert findings(quota + rollout("canary", 4, "{canary: {maxSurge: 2}}")) == []
