"""Loader and Kubernetes defaulting: documents, lines, kinds, bad input."""

import pytest

from podfit.loader import InputError, InputFile, discover, load, parse_file, read_inputs
from podfit.model import QOS_BEST_EFFORT, QOS_BURSTABLE, QOS_GUARANTEED
from podfit.workloads import build_workloads

GiB = 2**30


def parse(text, name="m.yaml"):
    return parse_file(InputFile(name, text.encode() if isinstance(text, str) else text))


def workloads(text):
    r = parse(text)
    ws, findings = build_workloads(r.objects)
    return ws, findings


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  initContainers:
    - name: init
      resources: {requests: {cpu: "3", memory: 1Gi}}
  containers:
    - name: a
      resources: {requests: {cpu: 500m, memory: 1Gi}}
    - name: b
      resources: {limits: {cpu: "1", memory: 2Gi}}
  overhead: {cpu: 250m, memory: 120Mi}
"""


def test_effective_pod_request_is_max_of_init_and_sum_plus_overhead():
    (w,), findings = workloads(POD)
    assert findings == ()
    # b: request = limit (1 CPU, 2Gi). Σ app = 1500m / 3Gi; largest init = 3000m / 1Gi.
    assert w.pod.cpu_request == 3000 + 250
    assert w.pod.memory_request == 3 * GiB + 120 * 2**20
    b = w.pod.containers[1]
    assert (b.resources.cpu_request, b.resources.memory_request) == (1000, 2 * GiB)
    assert b.declared.cpu_request is None
    assert w.pod.qos_class == QOS_BURSTABLE


def test_container_and_object_lines():
    (w,), _ = workloads(POD)
    assert w.location.line == 1
    assert [c.location.line for c in w.pod.all_containers] == [6, 9, 11]


@pytest.mark.parametrize(
    "kind, body, replicas, per_node",
    [
        ("Deployment", "replicas: 5\n  template: {spec: {containers: [{name: c}]}}", 5, False),
        ("Deployment", "template: {spec: {containers: [{name: c}]}}", 1, False),
        ("StatefulSet", "replicas: 0\n  template: {spec: {containers: [{name: c}]}}", 0, False),
        ("ReplicaSet", "replicas: 2\n  template: {spec: {containers: [{name: c}]}}", 2, False),
        ("ReplicationController", "replicas: 7\n  template: {spec: {containers: [{name: c}]}}", 7, False),
        ("DaemonSet", "template: {spec: {containers: [{name: c}]}}", 0, True),
        ("Job", "parallelism: 4\n  template: {spec: {containers: [{name: c}]}}", 4, False),
        (
            "CronJob",
            "schedule: '* * * * *'\n  jobTemplate: {spec: {parallelism: 3, template: {spec: {containers: [{name: c}]}}}}",
            3,
            False,
        ),
    ],
)
def test_every_workload_kind(kind, body, replicas, per_node):
    (w,), _ = workloads(f"apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: x}}\nspec:\n  {body}\n")
    assert (w.replicas, w.per_node) == (replicas, per_node)
    assert [c.name for c in w.pod.containers] == ["c"]
    assert w.pod.qos_class == QOS_BEST_EFFORT


def test_limitrange_defaults_apply_in_same_namespace_only():
    text = """\
apiVersion: v1
kind: LimitRange
metadata: {name: lr, namespace: team}
spec:
  limits:
    - type: Container
      default: {cpu: "1", memory: 1Gi}
      defaultRequest: {cpu: 200m}
---
apiVersion: v1
kind: Pod
metadata: {name: in-team, namespace: team}
spec: {containers: [{name: c}, {name: d, resources: {requests: {cpu: 300m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: elsewhere, namespace: other}
spec: {containers: [{name: c}]}
"""
    ws, _ = workloads(text)
    team, other = ws
    c, d = team.pod.containers
    assert (c.resources.cpu_request, c.resources.cpu_limit) == (200, 1000)
    # memory: no default request, so request = (defaulted) limit
    assert (c.resources.memory_request, c.resources.memory_limit) == (GiB, GiB)
    assert (d.resources.cpu_request, d.resources.cpu_limit) == (300, 1000)
    assert other.pod.containers[0].resources.is_empty


def test_guaranteed_qos():
    (w,), _ = workloads(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: g}\nspec:\n  containers:\n"
        "    - {name: a, resources: {limits: {cpu: '2', memory: 1Gi}}}\n"
    )
    assert w.pod.qos_class == QOS_GUARANTEED


def test_sidecar_init_container_counts_with_app_containers():
    (w,), _ = workloads(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n"
        "  initContainers: [{name: proxy, restartPolicy: Always, resources: {requests: {cpu: 300m}}}]\n"
        "  containers: [{name: a, resources: {requests: {cpu: 500m}}}]\n"
    )
    assert w.pod.cpu_request == 800


def test_invalid_quantity_is_pf903_with_line_and_run_goes_on():
    ws, findings = workloads(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n    - name: a\n"
        "      resources:\n        requests:\n          cpu: 1.5cores\n          memory: 1Gi\n"
    )
    assert [(f.rule, f.location.line, f.container) for f in findings] == [("PF903", 9, "a")]
    assert ws[0].pod.containers[0].resources.memory_request == GiB
    assert ws[0].pod.containers[0].resources.cpu_request is None


def test_yaml_error_reports_line_and_keeps_earlier_documents():
    r = parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\nkind: Pod\nmetadata: {name: [\n")
    assert [o.ref.name for o in r.objects] == ["ok"]
    assert [(f.rule, f.location.line) for f in r.findings] == [("PF901", 6)]
    assert r.record.status == "failed"


def test_list_kind_yields_items_with_their_lines():
    r = parse(
        "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n"
        "  - apiVersion: v1\n    kind: Service\n    metadata: {name: b}\n"
    )
    assert [(o.kind, o.ref.name, o.location.line) for o in r.objects] == [("Pod", "a", 4), ("Service", "b", 7)]


def test_json_input():
    r = parse('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j"}, "spec": {"containers": []}}', "p.json")
    assert [o.ref.name for o in r.objects] == ["j"]


def test_invalid_utf8_is_pf901_with_line():
    r = parse(b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff\xfe}\n")
    assert [(f.rule, f.location.line) for f in r.findings] == [("PF901", 3)]
    assert r.record.status == "failed" and "UTF-8" in r.record.reason


def test_empty_and_binary_files_are_skipped_with_reason():
    assert parse("").record.status == "skipped"
    assert parse("# only a comment\n").record.reason == "empty file"
    binary = parse(b"\x7fELF\x00\x00\x01")
    assert (binary.record.status, binary.record.reason) == ("skipped", "binary file")


def test_non_kubernetes_yaml_is_counted_not_checked():
    r = parse("replicaCount: 3\nimage: {tag: latest}\n")
    assert r.record.status == "parsed" and r.objects == () and r.findings == ()


def test_unsafe_tags_are_refused():
    r = parse("apiVersion: v1\nkind: Pod\nmetadata: !!python/object:os.system {name: x}\n")
    assert [f.rule for f in r.findings] == ["PF901"]
    assert r.objects == ()


def test_duplicate_keys_are_reported():
    r = parse("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {}\nspec: {containers: []}\n")
    assert [(f.rule, f.location.line) for f in r.findings] == [("PF905", 5)]


def test_merge_keys_are_not_duplicates():
    r = parse("base: &b {cpu: 1}\nx:\n  <<: *b\n  cpu: 2\n")
    assert r.findings == ()


def test_alias_bomb_is_refused_quickly():
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    # 9**9 (about 387 million) leaves once expanded: the loader counts expanded nodes and stops at
    # its bound (YamlLimits.max_nodes), which is what keeps the work small; the message names that bound
    r = parse("\n".join(lines) + "\n")
    assert [f.rule for f in r.findings] == ["PF901"]
    assert "expands to more than 1,000,000 nodes (alias bomb?)" in r.findings[0].message


def test_deep_nesting_is_refused():
    r = parse("a: " + "[" * 500 + "]" * 500 + "\n")
    assert [f.rule for f in r.findings] == ["PF901"]


def test_discover_missing_path_raises(tmp_path):
    with pytest.raises(InputError):
        discover([str(tmp_path / "nope.yaml")])


def test_discover_recurses_sorted_yaml_only(tmp_path):
    (tmp_path / "b").mkdir()
    for name in ("b/z.yaml", "a.yml", "c.json", "notes.txt", "b/a.yaml"):
        (tmp_path / name).write_text("{}\n")
    got = [p[len(str(tmp_path)) + 1 :] for p in discover([str(tmp_path)])]
    assert got == ["a.yml", "b/a.yaml", "b/z.yaml", "c.json"]


def test_discover_finds_uppercase_suffixes(tmp_path):
    for name in ("A.YAML", "b.Yml", "c.JSON", "d.yaml", "e.TXT"):
        (tmp_path / name).write_text("{}\n")
    got = [p[len(str(tmp_path)) + 1 :] for p in discover([str(tmp_path)])]
    assert got == ["A.YAML", "b.Yml", "c.JSON", "d.yaml"]


def test_summary_accounts_for_every_file(tmp_path):
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n")
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "bad.yaml").write_text("a: [\n")
    (tmp_path / "bin.yaml").write_bytes(b"\x00\x01\x02")
    unreadable = tmp_path / "loop.yaml"
    unreadable.symlink_to(unreadable)
    res = load(read_inputs([str(tmp_path)]))
    status = {f.path.rsplit("/", 1)[1]: (f.status, f.reason) for f in res.files}
    assert status["ok.yaml"] == ("parsed", "")
    assert status["empty.yaml"] == ("skipped", "empty file")
    assert status["bad.yaml"][0] == "failed"
    assert status["bin.yaml"] == ("skipped", "binary file")
    assert status["loop.yaml"][0] in ("skipped", "failed")
    assert len(res.files) == 5


def test_errors_in_later_documents_report_lines_from_file_start():
    r = parse(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: !!python/name:os.system {}\n"
    )
    assert [(f.rule, f.location.line) for f in r.findings] == [("PF901", 7)]
    assert [o.ref.name for o in r.objects] == ["a"]


@pytest.mark.parametrize("depth", [300, 100_000])
def test_pathological_nesting_is_a_finding_not_a_crash(depth):
    # LibYAML's composer recurses in C: 100,000 levels would overflow its stack (a segfault),
    # so such documents go through the pure-Python composer, whose recursion is bounded.
    r = parse("a: " + "[" * depth + "]" * depth + "\n")
    assert [f.rule for f in r.findings] == ["PF901"]
    assert "deep" in r.findings[0].message


def test_timestamps_and_binary_stay_strings():
    r = parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t, annotations: {at: 2024-01-02T03:04:05Z}}\n")
    assert r.objects[0].annotation("at") == "2024-01-02T03:04:05Z"


def test_helm_templates_are_skipped_with_advice():
    text = (ROOT_DIR / "tests/data/helm-chart/templates/deployment.yaml").read_text()
    r = parse(text, "deployment.yaml")
    assert r.record.status == "skipped" and "helm template" in r.record.reason
    assert [(f.rule, f.location.line) for f in r.findings] == [("PF908", 5)] and r.objects == ()
    # a plain syntax error with braces in a string is still PF901
    r = parse('apiVersion: v1\nkind: ConfigMap\ndata: {a: "{{ x }}", b: [\n')
    assert [f.rule for f in r.findings] == ["PF901"]


ROOT_DIR = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_container_line_is_the_workload_containers_line():
    """workloads.container_line (what the engine's workers use) gives each container's own line, as
    build_workloads records it, and the object's line for names no container has."""
    import sys as _sys

    _sys.path.insert(0, str(ROOT_DIR / "bench"))
    import yaml as _yaml

    from gen import generate
    from podfit.config import Config
    from podfit.loader import InputFile, load
    from podfit.workloads import build_workloads, container_line

    text = _yaml.safe_dump_all(generate(300, 11), sort_keys=False)
    text += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: twins}\nspec:\n  initContainers:\n  - name: a\n  containers:\n  - name: a\n  - {}\n"
    res = load([InputFile("g.yaml", text.encode())], Config().limits)
    workloads, _ = build_workloads(res.objects)
    checked = 0
    for w in workloads:
        seen = set()
        for c in w.pod.all_containers:
            if c.name and c.name not in seen:  # the first of a name, as both look it up
                assert container_line(w.obj, c.name) == c.location.line
                seen.add(c.name)
                checked += 1
        assert container_line(w.obj, "no-such-container") == w.obj.location.line
        assert container_line(w.obj, None) == w.obj.location.line
    assert checked > 300


def test_typed_lists_expand_to_their_items_with_kind_and_lines():
    """A PodList (as the API server lists pods) leaves out the items' apiVersion and kind: they are
    the list's apiVersion and the kind without List; an apps/v1 DeploymentList's items keep theirs."""
    r = parse(
        "apiVersion: v1\nkind: PodList\nitems:\n  - metadata: {name: a, namespace: ns}\n"
        "    spec: {containers: [{name: c, image: x}]}\n"
        "  - apiVersion: v1\n    kind: Pod\n    metadata: {name: b}\n"
        "---\napiVersion: apps/v1\nkind: DeploymentList\nmetadata: {}\nitems:\n"
        "  - metadata: {name: d}\n    spec:\n      template:\n        spec:\n          containers:\n"
        "            - name: app\n              image: x\n"
    )
    assert [(o.ref.api_version, o.kind, o.ref.name, o.location.line) for o in r.objects] == [
        ("v1", "Pod", "a", 4),
        ("v1", "Pod", "b", 6),
        ("apps/v1", "Deployment", "d", 14),
    ]
    ws, _ = build_workloads(r.objects)
    assert [(w.ref.name, [c.location.line for c in w.pod.containers]) for w in ws] == [
        ("a", [5]),
        ("d", [19]),
    ]  # b has no spec: not a workload


def test_a_kind_ending_in_list_without_items_is_one_object():
    r = parse("apiVersion: example.com/v1\nkind: AllowList\nmetadata: {name: a}\nspec: {entries: [x]}\n")
    assert [(o.kind, o.ref.name) for o in r.objects] == [("AllowList", "a")]


@pytest.mark.parametrize(
    "name, text",
    [
        ("package.json", '{"name": "web", "version": "1.0.0", "scripts": {"start": "node index.js"}}'),
        ("dashboard.json", '{"title": "CPU", "panels": [{"expr": "rate(x[5m])", "url": "http:\\/\\/grafana"}]}'),
        ("seed.json", '{"id": 1, "kind": "review"}\n{"id": 2, "kind": "review"}\n'),
        ("products.json", '[{"id": "OLJCESPC7Z", "name": "Sunglasses"}]'),
        ("ratings.json", "{user: 1, rating: 5}\n{user: 2, rating: 4, tags: [fast, kind]}\n"),
    ],
)
def test_json_that_is_not_a_kubernetes_object_is_counted_not_checked(name, text):
    """Like a YAML file without a kind: parsed, no object, no finding (JSON lines and escapes YAML
    refuses included)."""
    r = parse(text, name)
    assert (r.record.status, r.record.objects, r.objects, r.findings) == ("parsed", 0, (), ())


def test_json_manifests_and_broken_json_are_still_read_as_manifests():
    r = parse(
        '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod",\n'
        ' "metadata": {"name": "p"}}]}',
        "list.json",
    )
    assert [(o.kind, o.ref.name, o.location.line) for o in r.objects] == [("Pod", "p", 1)]
    broken = parse('{"apiVersion": "v1", "kind": "Pod",\n "metadata": {"name": "p"}\n', "pod.json")
    assert [(f.rule, f.location.line) for f in broken.findings] == [("PF901", 2)]
    # a relaxed line that is an object is still read as a manifest, where YAML breaks on the next one
    relaxed = parse("{apiVersion: v1, kind: Pod, metadata: {name: p}}\n{apiVersion: v1, kind: Pod}\n", "pods.json")
    assert [f.rule for f in relaxed.findings] == ["PF901"]


SCALED_TO_ZERO = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch-ui, namespace: tools}
spec:
  replicas: 0
  selector: {matchLabels: {app: batch-ui}}
  template:
    metadata: {labels: {app: batch-ui}}
    spec:
      containers: [{name: ui, image: registry.example.com/batch-ui:1.0}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: batch-ui, namespace: tools}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: batch-ui}
  minReplicas: 1
  maxReplicas: 4
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}}]
"""


def test_replicas_zero_checks_the_template_but_runs_no_pod(tmp_path):
    """replicas: 0 (a stub scaled to zero, even with an HPA: the HPA controller does not scale a
    target whose replicas is 0) runs no pod, so packing counts none; the per-pod rules still check
    its template, which is exactly what runs once it is scaled up."""
    import json as _json

    from click.testing import CliRunner

    from podfit.cli import main
    from podfit.packing.adapter import pods_from_workloads

    ws, _ = workloads(SCALED_TO_ZERO)
    assert [(w.ref.name, w.replicas) for w in ws] == [("batch-ui", 0)]
    assert pods_from_workloads(ws)[:2] == ((), ())  # no pod type, no DaemonSet pod
    (tmp_path / "ui.yaml").write_text(SCALED_TO_ZERO)
    r = CliRunner().invoke(main, ["check", str(tmp_path / "ui.yaml"), "--format", "json", "--engine", "embedded"])
    assert [(f["rule"], f["line"]) for f in _json.loads(r.output)["findings"]] == [("PF105", 1)]
