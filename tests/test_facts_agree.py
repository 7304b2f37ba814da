"""One computation of Kubernetes semantics: the Rego library's pod records (what per-object conftest
use computes from the object itself, plus the LimitRange defaults the facts give it) equal the
facts stage's workloads, container by container, on every fixture and on a generated corpus; and
what the Rego rules read of the facts per workload (node size, Linux exclusion, exclusive CPUs,
PF202's screen) gives the facts stage's answer for every workload of every fixture."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EKS_PLATFORM, tool
from podfit.facts import build_facts, facts_data
from podfit.loader import InputFile, load
from podfit.model import Resources
from podfit.platform import DEFAULT_PLATFORM
from podfit.quantity import QuantityError, parse_cpu

ROOT = Path(__file__).resolve().parents[1]
OPA = tool("opa")
pytestmark = pytest.mark.skipif(OPA is None, reason="needs opa (make tools)")

# the Rego side: every container's effective request/limit, and each pod's QoS class
QUERY = """[[obj_index, p.qos, cs] |
  some p in data.podfit.lib.k8s.pods
  obj_index := p.obj["podfit.io/document"]
  cs := [[c.name, c.init, object.get(c.request, "cpu", null), object.get(c.request, "memory", null),
          object.get(c.limit, "cpu", null), object.get(c.limit, "memory", null)] | some c in data.podfit.lib.k8s.counted(p)]
]"""


def _rego(documents: list, data: dict, tmp: Path, query: str = QUERY):
    """``query``'s value over the policies, with ``documents`` as the input and ``data`` as the facts."""
    from podfit.engines.base import batch_input, normalise

    (tmp / "input.json").write_text(json.dumps(batch_input(documents)), encoding="utf-8")
    (tmp / "data.json").write_text(json.dumps({"podfit": normalise(data)}), encoding="utf-8")
    return _eval(tmp, query)


def _eval(tmp: Path, query: str):
    """``query``'s value over the policies, with the input and facts _rego wrote to ``tmp``."""
    out = subprocess.run(
        [
            OPA,
            "eval",
            "--format",
            "json",
            "--ignore",
            "*_test.rego",
            "--data",
            str(ROOT / "policies"),
            "--data",
            str(tmp / "data.json"),
            "--input",
            str(tmp / "input.json"),
            query,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)["result"][0]["expressions"][0]["value"]


def _python(facts) -> list:
    index = {id(o): i for i, o in enumerate(facts.objects)}
    rows = []
    for w in facts.workloads:
        r = [
            [
                c.name,
                c.init,
                c.resources.cpu_request,
                c.resources.memory_request,
                c.resources.cpu_limit,
                c.resources.memory_limit,
            ]
            for c in w.pod.counted
        ]
        rows.append([index[id(w.obj)], w.pod.qos_class, r])
    return sorted(rows, key=lambda x: x[0])


def _valid(doc: object) -> bool:
    """Documents whose quantities all parse (an invalid one is PF903, and Rego leaves it out)."""
    text = json.dumps(doc)
    return "resources" not in text or all(_parses(v) for v in _quantities(doc))


def _quantities(node: object):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("requests", "limits") and isinstance(v, dict):
                yield from v.values()
            else:
                yield from _quantities(v)
    elif isinstance(node, list):
        for v in node:
            yield from _quantities(v)


def _parses(v: object) -> bool:
    try:
        parse_cpu(v)  # a CPU quantity's grammar is the memory one's too
        return True
    except QuantityError:
        return False


def _compare(paths: list[Path], tmp: Path) -> int:
    files = [InputFile(str(p), p.read_bytes()) for p in paths]
    loaded = load(files)
    objects = tuple(o for o in loaded.objects if _valid(o.raw))
    facts = build_facts(objects, DEFAULT_PLATFORM)
    rego = _rego([o.raw for o in objects], facts_data(facts), tmp)
    python = _python(facts)
    assert sorted(rego, key=lambda x: x[0]) == python
    return len(python)


def test_every_fixture(tmp_path):
    paths = sorted(p for p in (ROOT / "testdata").rglob("*.yaml") if "broken" not in str(p) and "hostile" not in str(p))
    assert _compare(paths, tmp_path) > 50


def test_limit_range_defaults_reach_both_sides(tmp_path):
    manifest = tmp_path / "ns.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: d, namespace: shop}\n"
        "spec: {limits: [{type: Container, defaultRequest: {cpu: 100m}, default: {cpu: 500m, memory: 256Mi}}]}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\n"
        "spec: {containers: [{name: a, image: x}, {name: b, image: x, resources: {limits: {cpu: '2'}}}]}\n"
    )
    assert _compare([manifest], tmp_path) == 1
    facts = build_facts(load([InputFile(str(manifest), manifest.read_bytes())]).objects, DEFAULT_PLATFORM)
    (pod,) = facts.workloads
    assert [(c.resources.cpu_request, c.resources.memory_request) for c in pod.pod.containers] == [
        (100, 256 * 2**20),
        (2000, 256 * 2**20),
    ]
    assert pod.pod.qos_class == "Burstable"


def test_generated_corpus(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import yaml

    from gen import generate

    corpus = tmp_path / "corpus.yaml"
    corpus.write_text(yaml.safe_dump_all(generate(400, seed=7)), encoding="utf-8")
    assert _compare([corpus], tmp_path) > 300


UNNAMED = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
    - image: x
      resources: {requests: {memory: 64Mi}}
  containers:
    - name: app
      image: x
      resources: {requests: {cpu: 100m, memory: 64Mi}}
    - image: y
      resources: {requests: {memory: 64Mi}}
"""


def test_unnamed_containers_are_named_by_their_place_on_both_sides(tmp_path):
    manifest = tmp_path / "unnamed.yaml"
    manifest.write_text(UNNAMED)
    assert _compare([manifest], tmp_path) == 1
    facts = build_facts(load([InputFile(str(manifest), manifest.read_bytes())]).objects, DEFAULT_PLATFORM)
    assert [c.name for c in facts.workloads[0].pod.all_containers] == ["initContainers[0]", "app", "containers[1]"]


POD_LEVEL = """\
apiVersion: v1
kind: Pod
metadata: {name: guaranteed}
spec:
  resources: {requests: {cpu: "2", memory: 2Gi}, limits: {cpu: "2", memory: 2Gi}}
  containers: [{name: a, image: x}, {name: b, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: limits-only}
spec:
  resources: {limits: {cpu: "1", memory: 1Gi}}
  containers: [{name: a, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: limits-and-container-request}
spec:
  resources: {limits: {cpu: "1", memory: 1Gi}}
  containers: [{name: a, image: x, resources: {requests: {cpu: 250m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: cpu-request-only}
spec:
  resources: {requests: {cpu: 500m}}
  overhead: {cpu: 100m}
  containers: [{name: a, image: x}]
"""


def test_pod_level_resources_on_both_sides(tmp_path):
    """Pod-level spec.resources decide the pod's request, limit and QoS (an unset pod-level request
    next to a limit takes the containers' request when one is set, else the limit), in the facts
    and in the Rego library alike."""
    manifest = tmp_path / "pod-level.yaml"
    manifest.write_text(POD_LEVEL)
    assert _compare([manifest], tmp_path) == 4
    facts = build_facts(load([InputFile(str(manifest), manifest.read_bytes())]).objects, DEFAULT_PLATFORM)
    got = [
        (w.ref.name, w.pod.qos_class, w.pod.cpu_request, w.pod.cpu_limit, w.pod.memory_request, w.pod.memory_limit)
        for w in facts.workloads
    ]
    assert got == [
        ("guaranteed", "Guaranteed", 2000, 2000, 2**31, 2**31),
        ("limits-only", "Guaranteed", 1000, 1000, 2**30, 2**30),
        ("limits-and-container-request", "Burstable", 250, 1000, 2**30, 2**30),
        ("cpu-request-only", "Burstable", 600, None, 0, None),
    ]
    value = _eval(
        tmp_path,
        '[[p.name, k8s.pod_request(p, "cpu"), [l | l := k8s.pod_limit(p, "cpu")]] | some p in k8s.pods]'.replace(
            "k8s.", "data.podfit.lib.k8s."
        ),
    )
    assert value == [[n, cpu, [] if lim is None else [lim]] for n, _, cpu, lim, _, _ in got]


MESHED = """\
apiVersion: v1
kind: Namespace
metadata: {name: mesh-istio, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Namespace
metadata: {name: mesh-linkerd, annotations: {linkerd.io/inject: enabled, config.linkerd.io/proxy-memory-request: 64Mi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: mesh-istio}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:1}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: opted-out, namespace: mesh-istio}
spec:
  selector: {matchLabels: {app: o}}
  template:
    metadata: {labels: {app: o, sidecar.istio.io/inject: "false"}}
    spec: {containers: [{name: o, image: o:1}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: sized
  labels: {sidecar.istio.io/inject: "true"}
  annotations: {sidecar.istio.io/proxyCPU: 250m, sidecar.istio.io/proxyMemoryLimit: 512Mi}
spec: {containers: [{name: a, image: a:1, resources: {limits: {cpu: "1", memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: mesh-linkerd}
spec: {containers: [{name: api, image: api:1}]}
---
apiVersion: v1
kind: Pod
metadata: {name: ambient, labels: {sidecar.istio.io/inject: "true", istio.io/dataplane-mode: ambient}}
spec: {containers: [{name: a, image: a:1}]}
"""


def test_injected_proxies_on_both_sides(tmp_path):
    """A service mesh's proxy counts in the pod's requests, limits and QoS class: Istio's defaults
    in an injection-enabled namespace, its proxy annotations on a labelled pod, Linkerd's configured
    request from the namespace; none for a pod that opts out or runs in ambient mode."""
    manifest = tmp_path / "meshed.yaml"
    manifest.write_text(MESHED)
    assert _compare([manifest], tmp_path) == 5
    facts = build_facts(load([InputFile(str(manifest), manifest.read_bytes())]).objects, DEFAULT_PLATFORM)
    got = {
        w.ref.name: (w.pod.qos_class, [(c.name, c.resources) for c in w.pod.injected], w.pod.cpu_request)
        for w in facts.workloads
    }
    istio = Resources(cpu_request=100, cpu_limit=2000, memory_request=128 * 2**20, memory_limit=2**30)
    assert got == {
        "web": ("Burstable", [("istio-proxy", istio)], 100),
        "opted-out": ("BestEffort", [], 0),
        "sized": (
            "Burstable",
            [("istio-proxy", Resources(cpu_request=250, memory_request=2**29, memory_limit=2**29))],
            1250,
        ),
        "api": ("Burstable", [("linkerd-proxy", Resources(memory_request=64 * 2**20))], 0),
        "ambient": ("BestEffort", [], 0),
    }


def test_custom_workload_kinds_are_one_table(tmp_path):
    """The workload CRDs the Rego library reads pod templates of are the facts stage's."""
    from podfit.model import CUSTOM_WORKLOAD_KINDS

    (tmp_path / "input.json").write_text("{}", encoding="utf-8")
    (tmp_path / "data.json").write_text("{}", encoding="utf-8")
    rego = _eval(tmp_path, "data.podfit.lib.k8s.custom_workload_kinds")
    assert rego == {f"{group}/{kind}": list(k.template) for (group, kind), k in CUSTOM_WORKLOAD_KINDS.items()}


CUSTOM = """\
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: hello}
spec:
  template:
    metadata: {annotations: {autoscaling.knative.dev/min-scale: "3"}}
    spec: {containers: [{image: hello:1, resources: {requests: {cpu: 250m}}}]}
---
apiVersion: serving.knative.dev/v1
kind: Configuration
metadata: {name: idle}
spec:
  template:
    spec: {containers: [{image: idle:1}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {template: {spec: {containers: [{name: not-a-pod, image: x}]}}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: demo}
spec:
  replicas: 4
  template: {spec: {containers: [{name: demo, image: demo:1, resources: {limits: {cpu: "1", memory: 1Gi}}}]}}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledJob
metadata: {name: consumer}
spec:
  jobTargetRef:
    parallelism: 2
    template: {spec: {containers: [{name: c, image: c:1, resources: {requests: {memory: 64Mi}}}]}}
---
apiVersion: apps.kruise.io/v1beta1
kind: DaemonSet
metadata: {name: agent}
spec:
  template: {spec: {containers: [{name: a, image: a:1}]}}
"""


def test_custom_workload_kinds_on_both_sides(tmp_path):
    """Workload CRDs (Knative, Argo Rollouts, KEDA ScaledJob, OpenKruise) have their pod template
    read on both sides, with their replica counts; a core Service is no workload."""
    manifest = tmp_path / "custom.yaml"
    manifest.write_text(CUSTOM)
    assert _compare([manifest], tmp_path) == 5
    facts = build_facts(load([InputFile(str(manifest), manifest.read_bytes())]).objects, DEFAULT_PLATFORM)
    got = [(w.ref.kind, w.ref.name, w.replicas, w.per_node, w.pod.cpu_request) for w in facts.workloads]
    assert got == [
        ("Service", "hello", 3, False, 250),
        ("Configuration", "idle", 1, False, 0),
        ("Rollout", "demo", 4, False, 1000),
        ("ScaledJob", "consumer", 2, False, 0),
        ("DaemonSet", "agent", 0, True, 0),
    ]


FLINK = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: basic, namespace: jobs}
spec:
  image: flink:1.17
  podTemplate:
    spec:
      containers:
        - name: flink-main-container
          image: flink:1.17
          resources: {requests: {memory: 2Gi}}
"""


def test_configured_workload_kinds_on_both_sides(tmp_path):
    """A kind the config's workload-kinds: declares has its pod template read on both sides (the
    Rego library from data.podfit.workload_kinds), its replicas from the path given; PF912 is then
    silent, and PF101 reports its container at the container's line."""
    from podfit.config import parse_config_text

    config = parse_config_text(
        "workload-kinds:\n  flink.apache.org/v1beta1/FlinkDeployment: {template: spec.podTemplate, replicas: spec.n}\n",
        "podfit.yaml",
    )
    assert list(config.workload_kinds) == [("flink.apache.org", "FlinkDeployment")]
    manifest = tmp_path / "flink.yaml"
    manifest.write_text(FLINK.replace("  image: flink:1.17\n  podTemplate", "  n: 3\n  podTemplate", 1))
    objects = load([InputFile(str(manifest), manifest.read_bytes())]).objects
    facts = build_facts(objects, DEFAULT_PLATFORM, workload_kinds=config.workload_kinds)
    data = facts_data(facts)
    assert data["workload_kinds"] == {"flink.apache.org/FlinkDeployment": ["spec", "podTemplate"]}
    assert _rego([o.raw for o in objects], data, tmp_path) == _python(facts)
    assert [(w.ref.name, w.replicas, w.pod.memory_request) for w in facts.workloads] == [("basic", 3, 2**31)]
    assert build_facts(objects, DEFAULT_PLATFORM).workloads == ()

    from click.testing import CliRunner

    from podfit.cli import main

    (tmp_path / ".podfit.yaml").write_text(
        "workload-kinds:\n  flink.apache.org/FlinkDeployment: {template: spec.podTemplate}\n"
    )
    args = ["check", str(manifest), "--format", "json", "--engine", "embedded"]
    plain = json.loads(CliRunner().invoke(main, [*args, "--config", str(ROOT / "tests/data/empty-config.yaml")]).output)
    assert [(f["rule"], f["line"]) for f in plain["findings"]] == [("PF912", 8)]
    configured = json.loads(CliRunner().invoke(main, [*args, "--config", str(tmp_path / ".podfit.yaml")]).output)
    assert [(f["rule"], f["line"], f["container"]) for f in configured["findings"]] == [
        ("PF101", 9, "flink-main-container"),
        ("PF111", 9, "flink-main-container"),
    ]


# ------------------------------------------------- the node a workload's pods may land on ---

EKS = EKS_PLATFORM

PLACED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: anywhere, namespace: web}
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec:
      containers: [{name: a, image: a:1, resources: {limits: {cpu: 300m}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cache, namespace: web}
spec:
  selector: {matchLabels: {app: c}}
  template:
    metadata: {labels: {app: c}}
    spec:
      nodeSelector: {workload: cache}
      tolerations: [{key: dedicated, operator: Equal, value: cache, effect: NoSchedule}]
      containers: [{name: c, image: c:1, resources: {limits: {cpu: 300m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: tolerant}
spec:
  tolerations: [{operator: Exists}]
  containers: [{name: t, image: t:1, resources: {limits: {cpu: 300m}}}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: g}}
  template:
    metadata: {labels: {app: g}}
    spec:
      nodeSelector: {eks.amazonaws.com/nodegroup: general}
      containers: [{name: g, image: g:1, resources: {limits: {cpu: 300m}}}]
---
apiVersion: v1
kind: Pod
metadata: {generateName: batch-, namespace: null}
spec:
  tolerations: [{operator: Exists}]
  containers: [{name: b, image: b:1, resources: {limits: {cpu: 300m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: numbered, namespace: 5}
spec:
  tolerations: [{operator: Exists}]
  containers: [{name: n, image: n:1, resources: {limits: {cpu: 300m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: nowhere, namespace: web}
spec:
  nodeSelector: {eks.amazonaws.com/nodegroup: gpu}
  containers: [{name: n, image: n:1, resources: {limits: {cpu: 300m}}}]
"""


def test_node_size_per_workload_is_one_fact(tmp_path):
    """The largest node a workload's pods may land on: the facts stage decides it from the pools'
    labels and taints (untolerated taints and selectors rule pools out; a pod that fits nowhere
    is sized against every pool), and the Rego library reads the same number from the facts."""
    from podfit.platform import parse_platform

    manifest = tmp_path / "placed.yaml"
    manifest.write_text(PLACED)
    objects = load([InputFile(str(manifest), manifest.read_bytes())]).objects
    facts = build_facts(objects, parse_platform(EKS.read_text(), str(EKS)))
    python = {w.ref.name: facts.workload_node_logical_cpus(w) for w in facts.workloads}
    assert python == {"anywhere": 4, "cache": 8, "tolerant": 8, "agent": 4, "batch-": 8, "numbered": 8, "nowhere": 8}
    # the facts state the size a pod without node selection or tolerations gets, and list the others
    data = facts_data(facts)
    assert data["platform"]["node_logical_cpus"] == facts.plain_node_logical_cpus() == 4
    wider = {"node_logical_cpus": 8, "cfs_screen_limit": 400}
    assert data["platform"]["cfs_screen_limit"] == 200
    assert data["platform"]["workloads"] == {
        "Deployment/web/cache": wider,
        "Pod//batch-": wider,
        "Pod//numbered": wider,
        "Pod//tolerant": wider,
        "Pod/web/nowhere": wider,
    }
    rego = dict(
        _rego(
            [o.raw for o in objects],
            data,
            tmp_path,
            '[[object.get(p.obj.metadata, "name", object.get(p.obj.metadata, "generateName", "")), '
            "data.podfit.lib.platform.node_logical_cpus_of(p.obj)] | some p in data.podfit.lib.k8s.pods]",
        )
    )
    assert rego == python


def test_one_node_size_lists_no_workload():
    """Bare metal (one host size) and pools of one node size: every workload has the run's size,
    so the facts list none, whatever the workloads select or tolerate."""
    from podfit.platform import parse_platform

    objects = load([InputFile("placed.yaml", PLACED.encode())]).objects
    bare = ROOT / "testdata" / "platforms" / "bare-metal-256.yaml"
    data = facts_data(build_facts(objects, parse_platform(bare.read_text(), str(bare))))
    assert data["platform"]["node_logical_cpus"] == 256 and data["platform"]["workloads"] == {}
    one = EKS.read_text().replace("vmClass: r6g.2xlarge", "vmClass: m5.xlarge")
    data = facts_data(build_facts(objects, parse_platform(one, "one-size.yaml")))
    assert data["platform"]["node_logical_cpus"] == 4 and data["platform"]["workloads"] == {}
    # facts over no workload list none, and say so by leaving the listing out
    assert "workloads" not in facts_data(build_facts((), parse_platform(one, "one-size.yaml")))["platform"]


# ------------------------ PF202's facts: Linux exclusion, exclusive CPUs, the screen ---

# per container of every pod: [document, container, Linux excluded, exclusive CPUs, node size],
# then PF202's findings as [document, container]
SCREEN_QUERY = """{"containers": [[doc, c.name, excluded, pinned, cpus] |
    some p in data.podfit.lib.k8s.pods
    doc := p.obj["podfit.io/document"]
    excluded := count({1 | data.podfit.lib.platform.linux_excluded(p.obj)}) == 1
    cpus := [n | n := data.podfit.lib.platform.node_logical_cpus_of(p.obj)]
    some c in p.containers
    pinned := count({1 | data.podfit.lib.platform.exclusive_cpus(p.obj, c.name)}) == 1
  ],
  "screened": [[f.document, f.container] | some f in data.podfit.cpu.cpu_limit_throttle_risk.findings]}"""


def _groups(paths: list[Path]) -> list[list]:
    """The fixtures' valid objects in groups whose workloads' keys (kind/namespace/name) are
    unique: one evaluation per group, so that no two workloads share their per-workload facts."""
    from podfit.facts import workload_key
    from podfit.model import template_path

    groups: list[tuple[list, set[str]]] = []
    for p in paths:
        objects = [o for o in load([InputFile(str(p), p.read_bytes())]).objects if _valid(o.raw)]
        keys = [workload_key(o.raw) for o in objects if template_path(o.ref.api_version, o.kind) is not None]
        if len(set(keys)) < len(keys):
            continue  # a file declaring one workload twice (PF910's fixtures)
        for members, taken in groups:
            if taken.isdisjoint(keys):
                members.extend(objects)
                taken.update(keys)
                break
        else:
            groups.append((list(objects), set(keys)))
    return [members for members, _ in groups]


def _static(platform):
    from dataclasses import replace

    return replace(platform, kubelet=replace(platform.kubelet, cpu_manager_policy="static"))


def _platforms():
    from podfit.platform import parse_platform

    bare = ROOT / "testdata" / "platforms" / "bare-metal-256.yaml"
    yield "bare-metal, static CPU Manager", _static(parse_platform(bare.read_text(), str(bare)))
    yield "EKS node groups", parse_platform(EKS.read_text(), str(EKS))


@pytest.mark.parametrize("name", ["bare-metal, static CPU Manager", "EKS node groups"])
def test_pf202_facts_agree_on_every_fixture(name, tmp_path):
    """For every workload of every fixture, the Rego library reads from data.podfit what the facts
    stage decides (whether the pods run only on non-Linux nodes, which containers the static CPU
    Manager pins, the node size), and PF202 flags exactly the containers of the facts' screen
    (Facts.cfs_screen, which PF203 simulates)."""
    platform = dict(_platforms())[name]
    paths = sorted(p for p in (ROOT / "testdata").rglob("*.yaml") if "broken" not in str(p) and "hostile" not in str(p))
    seen = {"workloads": 0, "excluded": 0, "pinned": 0, "screened": 0, "sizes": set()}
    for objects in _groups(paths):
        facts = build_facts(objects, platform)
        assert not facts.apart_clusters
        rego = _rego([o.raw for o in objects], facts_data(facts), tmp_path, SCREEN_QUERY)
        index = {id(o): i for i, o in enumerate(objects)}
        python = []
        for w in facts.workloads:
            cpus = facts.workload_node_logical_cpus(w)
            excluded = facts.linux_excluded(w)
            pinned = facts.exclusive_cpus(w)
            for c in w.pod.all_containers:
                python.append([index[id(w.obj)], c.name, excluded, c.name in pinned, [cpus]])
        assert sorted(rego["containers"]) == sorted(python)
        screened = sorted([index[id(w.obj)], c.name] for w in facts.workloads for c in facts.cfs_screen(w))
        assert sorted(rego["screened"]) == screened
        seen["workloads"] += len(facts.workloads)
        seen["excluded"] += sum(1 for row in python if row[2])
        seen["pinned"] += sum(1 for row in python if row[3])
        seen["screened"] += len(screened)
        seen["sizes"] |= {row[4][0] for row in python}
    # the fixtures exercise every fact: Windows-only pods, pinned containers (under the static
    # policy), screened limits, and on EKS more than one node size
    assert seen["workloads"] > 200 and seen["excluded"] >= 2 and seen["screened"] > 10
    if name.startswith("bare-metal"):
        assert seen["pinned"] > 5 and seen["sizes"] == {256}
    else:
        assert len(seen["sizes"]) > 1


COPIES = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  nodeSelector: {kubernetes.io/os: windows}
  containers:
    - {name: a, image: x, resources: {limits: {cpu: "2", memory: 1Gi}}}
    - {name: b, image: x, resources: {limits: {cpu: "1", memory: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
    - {name: a, image: x, resources: {limits: {cpu: "2", memory: 1Gi}}}
    - {name: b, image: x, resources: {limits: {cpu: "1500m", memory: 1Gi}}}
"""


def test_copies_of_one_key_share_the_facts_that_rate_most(tmp_path):
    """Two workloads of one kind/namespace/name in one evaluation (copies meant for different
    clusters) share their listed facts: Linux unless every copy rules it out, exclusive CPUs only
    for a container every copy pins; the Windows copy is then rated as the Linux one is."""
    from podfit.platform import parse_platform

    bare = ROOT / "testdata" / "platforms" / "bare-metal-256.yaml"
    platform = _static(parse_platform(bare.read_text(), str(bare)))
    windows, linux = (
        load([InputFile(f"{i}.yaml", doc.encode())]).objects[0] for i, doc in enumerate(COPIES.split("---\n"))
    )
    facts = build_facts((windows,), platform)
    assert facts_data(facts)["platform"]["workloads"] == {
        "Pod/shop/web": {"linux_excluded": True, "exclusive_cpus": ["a", "b"]}
    }
    both = build_facts((windows, linux), platform, cluster_for_path=lambda path: path)  # two clusters
    assert [facts.linux_excluded(w) for w in both.workloads] == [True, False]
    assert facts_data(both)["platform"]["workloads"] == {"Pod/shop/web": {"exclusive_cpus": ["a"]}}
    rego = _rego([windows.raw, linux.raw], facts_data(both), tmp_path, SCREEN_QUERY)
    assert sorted(rego["screened"]) == [[0, "b"], [1, "b"]]


def test_rego_formats_quantities_as_python_does(tmp_path):
    """Messages write a CPU or memory amount the same way on both sides: the Rego library's
    fmt_cpu/fmt_memory against podfit.quantity's format_cpu/format_memory (exact, the form a
    finding tells the user to write)."""
    from podfit.quantity import format_cpu, format_memory

    memory = [1, 1023, 1024, 1536 * 2**10, 512 * 2**20, 3 * 2**29, 2**30, 10**9, 32 * 2**30 - 100 * 2**20, 2**52]
    cpu = [1, 100, 999, 1000, 1500, 2000, 64_000, 2**31 * 1000 + 500]
    (tmp_path / "input.json").write_text("{}", encoding="utf-8")
    (tmp_path / "data.json").write_text("{}", encoding="utf-8")
    query = f"""[[data.podfit.lib.k8s.fmt_memory(b) | some b in {memory}],
                 [data.podfit.lib.k8s.fmt_cpu(m) | some m in {cpu}]]"""
    assert _eval(tmp_path, query) == [[format_memory(b) for b in memory], [format_cpu(m) for m in cpu]]


def test_a_proxy_annotation_that_is_no_quantity_is_pf903_on_its_line():
    """Istio's injector writes the value into the proxy's resources (the API server rejects the
    pod); Linkerd's leaves it out. Either way PF903 on the annotation's line, a namespace's once."""
    text = MESHED.replace(
        "config.linkerd.io/proxy-memory-request: 64Mi", "config.linkerd.io/proxy-memory-request: 64 Mi"
    )
    text = text.replace("sidecar.istio.io/proxyCPU: 250m", "sidecar.istio.io/proxyCPU: 250mc")
    text += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: api2, namespace: mesh-linkerd}\nspec: {containers: [{name: a, image: a:1}]}\n"
    facts = build_facts(load([InputFile("m.yaml", text.encode())]).objects, DEFAULT_PLATFORM)
    got = [(f.object.name, f.location.line, f.message.split(":")[0]) for f in facts.findings if f.rule == "PF903"]
    assert got == [
        ("sized", 32, "annotation sidecar.istio.io/proxyCPU"),
        ("mesh-linkerd", 7, "annotation config.linkerd.io/proxy-memory-request"),
    ]
    sized = next(w for w in facts.workloads if w.ref.name == "sized")
    # the valid annotation still counts; the invalid one sets nothing
    assert sized.pod.injected[0].resources.memory_limit == 2**29 and sized.pod.injected[0].resources.cpu_request is None
