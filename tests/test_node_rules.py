"""Node-level CPU and memory management rules from kubelet configuration and version: PF206
(Topology Manager single-numa-node admission), PF207 (CPU Manager policy options by version and
gate), PF208 (Memory Manager policy spelling and reserved memory).

Each rule's testdata/<ID>/ fixtures run through `podfit check` with every rule on: fail_*.yaml raise
findings of that rule only, compared whole with testdata/<ID>/expected.json; pass_*.yaml raise
nothing. PODFIT_UPDATE_EXPECTED=1 rewrites expected.json (the run then fails on purpose).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.facts import cpu_manager_option_stage

ROOT = Path(__file__).resolve().parents[1]
RULES = ("PF206", "PF207", "PF208")


def run(path: Path, *extra: str, platform: Path | None = None) -> list[list]:
    args = ["check", "--format", "json", "--fail-on", "never", *extra]
    profile = platform or path.parent / "platform.yaml"
    if profile.is_file():
        args += ["--platform", str(profile)]
    res = CliRunner().invoke(main, args + [str(path)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return [[f["rule"], f["line"], f["message"]] for f in json.loads(res.stdout)["findings"]]


@pytest.mark.parametrize("rule", RULES)
def test_fixtures(rule):
    folder = ROOT / "testdata" / rule
    fails = sorted(folder.glob("fail_*.yaml"))
    passes = sorted(folder.glob("pass_*.yaml"))
    assert fails and passes
    got = {p.name: run(p) for p in fails}
    for name, found in got.items():
        assert found and {f[0] for f in found} == {rule}, (name, found)
    for p in passes:
        assert run(p) == [], p.name
    expected_file = folder / "expected.json"
    if os.environ.get("PODFIT_UPDATE_EXPECTED"):
        expected_file.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        pytest.fail(f"rewrote {expected_file}")
    assert got == json.loads(expected_file.read_text(encoding="utf-8"))


def _kubelet(tmp_path: Path, body: str, version: str | None = None) -> tuple[Path, Path | None]:
    f = tmp_path / "kubelet.yaml"
    f.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" + body)
    if version is None:
        return f, None
    p = tmp_path / "platform.yaml"
    p.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: v}\nspec:\n"
        f"  kubelet: {{kubernetesVersion: '{version}'}}\n"
    )
    return f, p


def test_option_stages_by_version():
    assert cpu_manager_option_stage("full-pcpus-only", (1, 32)) == "beta"
    assert cpu_manager_option_stage("full-pcpus-only", (1, 33)) == "GA"
    assert cpu_manager_option_stage("distribute-cpus-across-numa", (1, 32)) == "alpha"
    assert cpu_manager_option_stage("distribute-cpus-across-numa", (1, 33)) == "beta"
    assert cpu_manager_option_stage("strict-cpu-reservation", (1, 31)) == "absent"  # KEP-4540
    assert cpu_manager_option_stage("strict-cpu-reservation", (1, 32)) == "alpha"
    assert cpu_manager_option_stage("strict-cpu-reservation", (1, 33)) == "beta"
    assert cpu_manager_option_stage("strict-cpu-reservation", (1, 35)) == "GA"
    assert cpu_manager_option_stage("prefer-align-cpus-by-uncorecache", (1, 31)) == "absent"  # KEP-4800
    assert cpu_manager_option_stage("prefer-align-cpus-by-uncorecache", (1, 34)) == "beta"
    assert cpu_manager_option_stage("prefer-align-cpus-by-uncorecache", (1, 36)) == "GA"
    assert cpu_manager_option_stage("align-by-socket", (1, 35)) == "alpha"
    assert cpu_manager_option_stage("no-such-option", (1, 35)) is None


def test_option_alpha_before_its_beta_release_needs_the_gate(tmp_path):
    body = 'cpuManagerPolicy: static\ncpuManagerPolicyOptions: {distribute-cpus-across-numa: "true"}\n'
    f, p = _kubelet(tmp_path, body, "1.32")
    (found,) = run(f, "--rule", "PF207", platform=p)
    assert "alpha in Kubernetes 1.32" in found[2] and "CPUManagerPolicyAlphaOptions" in found[2]
    f, p = _kubelet(tmp_path, body, "1.33")
    assert run(f, "--rule", "PF207", platform=p) == []


def test_strict_cpu_reservation_is_alpha_in_1_32(tmp_path):
    """KEP-4540: alpha in 1.32, so with the default gates a 1.32 kubelet refuses it; beta from 1.33."""
    body = (
        'cpuManagerPolicy: static\nreservedSystemCPUs: "0"\ncpuManagerPolicyOptions: {strict-cpu-reservation: "true"}\n'
    )
    f, p = _kubelet(tmp_path, body, "1.32")
    (found,) = run(f, "--rule", "PF207", platform=p)
    assert "alpha in Kubernetes 1.32" in found[2] and "CPUManagerPolicyAlphaOptions" in found[2]
    f, p = _kubelet(tmp_path, body, "1.33")
    assert run(f, "--rule", "PF207", platform=p) == []


def test_uncorecache_is_ga_in_1_36(tmp_path):
    """KEP-4800: GA in 1.36, so it needs no gate there, even with beta options turned off."""
    body = (
        "featureGates: {CPUManagerPolicyBetaOptions: false}\ncpuManagerPolicy: static\n"
        'cpuManagerPolicyOptions: {prefer-align-cpus-by-uncorecache: "true"}\n'
    )
    f, p = _kubelet(tmp_path, body, "1.36")
    assert run(f, "--rule", "PF207", platform=p) == []
    f, p = _kubelet(tmp_path, body, "1.35")
    (found,) = run(f, "--rule", "PF207", platform=p)
    assert "beta in Kubernetes 1.35" in found[2]


def test_option_newer_than_the_kubelet_and_beta_gate_off(tmp_path):
    f, p = _kubelet(
        tmp_path,
        'cpuManagerPolicy: static\ncpuManagerPolicyOptions: {prefer-align-cpus-by-uncorecache: "true"}\n',
        "1.31",
    )
    (found,) = run(f, "--rule", "PF207", platform=p)
    assert "does not exist in Kubernetes 1.31 (alpha from 1.32)" in found[2]
    body = (
        "featureGates: {CPUManagerPolicyBetaOptions: false}\ncpuManagerPolicy: static\n"
        'cpuManagerPolicyOptions: {strict-cpu-reservation: "true"}\n'
    )
    f, p = _kubelet(tmp_path, body, "1.34")
    (found,) = run(f, "--rule", "PF207", platform=p)
    assert "beta in Kubernetes 1.34" in found[2]
    f, p = _kubelet(tmp_path, body, "1.35")  # GA: no gate
    assert run(f, "--rule", "PF207", platform=p) == []


def test_option_value_and_unknown_name_and_socket_with_single_numa(tmp_path):
    f, _ = _kubelet(
        tmp_path, 'cpuManagerPolicy: static\ncpuManagerPolicyOptions: {full-pcpus-only: "yes", pcpus: "true"}\n'
    )
    msgs = [x[2] for x in run(f, "--rule", "PF207")]
    assert any("'yes' is not a boolean" in m for m in msgs) and any(
        "unknown CPU Manager policy option 'pcpus'" in m for m in msgs
    )
    body = (
        "featureGates: {CPUManagerPolicyAlphaOptions: true}\ncpuManagerPolicy: static\ntopologyManagerPolicy: single-numa-node\n"
        'cpuManagerPolicyOptions: {align-by-socket: "true"}\n'
    )
    f, _ = _kubelet(tmp_path, body)
    (found,) = run(f, "--rule", "PF207")
    assert "align-by-socket cannot be used with topologyManagerPolicy single-numa-node" in found[2]
    # options are only read by the static policy
    f, _ = _kubelet(tmp_path, 'cpuManagerPolicy: none\ncpuManagerPolicyOptions: {pcpus: "true"}\n')
    assert run(f, "--rule", "PF207") == []


SOLVER = (ROOT / "testdata" / "PF206" / "fail_solver_wider_than_numa.yaml").read_text()


def test_restricted_and_best_effort_admit_the_wide_pod(tmp_path):
    for policy in ("restricted", "best-effort", "none"):
        f = tmp_path / f"{policy}.yaml"
        f.write_text(SOLVER.replace("topologyManagerPolicy: single-numa-node", f"topologyManagerPolicy: {policy}"))
        assert run(f, "--rule", "PF206", platform=ROOT / "testdata" / "PF206" / "platform.yaml") == []


def test_single_numa_needs_an_aligning_manager_and_counts_the_pod_in_pod_scope(tmp_path):
    platform = ROOT / "testdata" / "PF206" / "platform.yaml"
    f = tmp_path / "nocpumanager.yaml"
    f.write_text(SOLVER.replace("cpuManagerPolicy: static", "cpuManagerPolicy: none"))
    assert run(f, "--rule", "PF206", platform=platform) == []  # no CPU Manager hints: nothing to align
    two = SOLVER.replace('cpu: "40"', 'cpu: "20"').replace(
        "          image: registry.example.com/hpc/solver:2.1\n",
        "          image: registry.example.com/hpc/solver:2.1\n",
    )
    two = two.replace(
        "        - name: solver\n",
        "        - name: helper\n          image: registry.example.com/hpc/helper:2.1\n"
        '          resources: {requests: {cpu: "20", memory: 1Gi}, limits: {cpu: "20", memory: 1Gi}}\n'
        "        - name: solver\n",
    )
    f = tmp_path / "container_scope.yaml"
    f.write_text(two)
    assert run(f, "--rule", "PF206", platform=platform) == []  # 20 + 20, each fits in container scope
    f = tmp_path / "pod_scope.yaml"
    f.write_text(
        two.replace(
            "topologyManagerPolicy: single-numa-node",
            "topologyManagerPolicy: single-numa-node\ntopologyManagerScope: pod",
        )
    )
    (found,) = run(f, "--rule", "PF206", platform=platform)
    assert found[2].startswith("the Guaranteed pod needs more than one NUMA node (40 exclusive CPUs > 32")


def test_pod_scope_counts_only_the_whole_cpu_containers(tmp_path):
    """The kubelet's podGuaranteedCPUs: 20 + 20 + a 0.5-CPU logger is 40 exclusive CPUs on a
    32-CPU NUMA node (the pod's 40.5 total is not whole, yet the pod is refused)."""
    from podfit.model import Container, Location, PodSpec, Resources
    from podfit.rules.topology_single_numa_admission import pod_guaranteed_cpus

    def c(name, cpu, init=False, sidecar=False):
        r = Resources(cpu_request=cpu, cpu_limit=cpu)
        return Container(name, "i", r, r, Location("t.yaml"), init=init, sidecar=sidecar)

    assert pod_guaranteed_cpus(PodSpec(containers=(c("a", 40000), c("b", 40000), c("log", 500)))) == 80
    # a one-shot init container of 50 after a 4-CPU sidecar: max(4 + 50, 40 + 4)
    pod = PodSpec(containers=(c("a", 40000),), init_containers=(c("s", 4000, True, True), c("i", 50000, True)))
    assert pod_guaranteed_cpus(pod) == 54
    platform = ROOT / "testdata" / "PF206" / "platform.yaml"
    two = SOLVER.replace('cpu: "40"', 'cpu: "20"').replace(
        "        - name: solver\n",
        "        - name: helper\n          image: registry.example.com/hpc/helper:2.1\n"
        '          resources: {requests: {cpu: "20", memory: 1Gi}, limits: {cpu: "20", memory: 1Gi}}\n'
        "        - name: logger\n          image: registry.example.com/hpc/logger:2.1\n"
        "          resources: {requests: {cpu: 500m, memory: 64Mi}, limits: {cpu: 500m, memory: 64Mi}}\n"
        "        - name: solver\n",
    )
    f = tmp_path / "pod_scope.yaml"
    f.write_text(
        two.replace(
            "topologyManagerPolicy: single-numa-node",
            "topologyManagerPolicy: single-numa-node\ntopologyManagerScope: pod",
        )
    )
    (found,) = run(f, "--rule", "PF206", platform=platform)
    assert found[2].startswith("the Guaranteed pod needs more than one NUMA node (40 exclusive CPUs > 32")


def test_pf206_replaces_pf302_on_the_same_pod():
    rules = [f[0] for f in run(ROOT / "testdata" / "PF206" / "fail_solver_wider_than_numa.yaml")]
    assert rules == ["PF206"]
    rules = [f[0] for f in run(ROOT / "testdata" / "PF206" / "fail_solver_wider_than_numa.yaml", "--rule", "PF302")]
    assert rules == ["PF302"]


BIG_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: solver, namespace: hpc}
spec:
  containers:
    - name: solver
      image: solver:1
      resources: {requests: {cpu: "CPUS", memory: 64Gi}, limits: {cpu: "CPUS", memory: 64Gi}}
"""


@pytest.mark.parametrize(("cpus", "over"), [(100, False), (130, True)])
def test_a_numa_node_holds_its_logical_cpus_on_bare_metal(tmp_path, cpus, over):
    """On the 2 × 64-core, 2-thread host a NUMA node has 128 logical CPUs, and a pod's CPU is a
    hardware thread: 100 CPUs fit one node, 130 do not. PF302 counts them as PF206 does."""
    f = tmp_path / "solver.yaml"
    f.write_text(BIG_POD.replace("CPUS", str(cpus)))
    found = run(f, "--rule", "PF302", platform=ROOT / "testdata" / "PF202" / "platform.yaml")
    assert [(r, m.split(", more than one NUMA node ")[-1][:5]) for r, _, m in found] == (
        [("PF302", "(128)")] if over else []
    )


def test_an_unquoted_option_value_is_pf902s_and_its_name_still_pf207s(tmp_path):
    """A YAML boolean does not decode into the kubelet's map of strings (PF902). PF207 still names
    an option the kubelet does not know, but neither judges a non-string value nor counts it as on:
    no conflict is reported for an option whose value never decoded."""
    f = tmp_path / "kubelet.yaml"
    f.write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\n"
        'reservedSystemCPUs: "0"\ncpuManagerPolicyOptions:\n  no-such-option: true\n'
        '  prefer-align-cpus-by-uncorecache: true\n  distribute-cpus-across-numa: "true"\n'
    )
    found = run(f, "--rule", "PF207", "--rule", "PF902")
    assert [(rule, line) for rule, line, _ in found] == [("PF207", 6), ("PF902", 6), ("PF902", 7)]
    assert found[0][2].startswith("unknown CPU Manager policy option 'no-such-option'")
    assert [m.split(": ", 1)[1] for r, _, m in found if r == "PF902"] == [
        'cpuManagerPolicyOptions.no-such-option: true is not of type string (quote it: "true")',
        'cpuManagerPolicyOptions.prefer-align-cpus-by-uncorecache: true is not of type string (quote it: "true")',
    ]


SNC_PLATFORM = """apiVersion: podfit.io/v1alpha1
kind: Platform
metadata: {name: snc}
spec:
  runtime: bare-metal
  kubelet: {kubernetesVersion: '%s'}
  hosts:
    - {name: metal, count: 1, sockets: 2, coresPerSocket: 64, threadsPerCore: 2, baseMHz: 2400,
       memory: 1Ti, numaNodesPerSocket: %d}
"""


@pytest.mark.parametrize(
    ("version", "numa_per_socket", "body", "refused"),
    [
        ("1.35", 8, "topologyManagerPolicy: restricted\n", "allows 8 (the default"),
        ("1.35", 4, "topologyManagerPolicy: restricted\n", None),  # 8 NUMA nodes: the default holds
        ("1.35", 8, "topologyManagerPolicy: none\n", None),  # no Topology Manager, no limit
        (
            "1.35",
            8,
            "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '16'}\n",
            None,
        ),
        (
            "1.35",
            8,
            "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '12'}\n",
            "allows 12",
        ),
        (
            "1.35",
            8,
            "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: 'many'}\n",
            "PF213 'many' is not a whole number",
        ),
        (
            "1.30",
            8,
            "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '16'}\n",
            "PF213 does not exist in Kubernetes 1.30",
        ),
        (
            "1.33",
            8,
            "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '16'}\n",
            None,
        ),  # beta, gate on by default
        (
            "1.33",
            8,
            "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '16'}\n"
            "featureGates: {TopologyManagerPolicyBetaOptions: false}\n",
            "PF213 the feature gate TopologyManagerPolicyBetaOptions is off",
        ),
        (
            "1.35",
            8,
            "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '16'}\n"
            "featureGates: {TopologyManagerPolicyBetaOptions: false}\n",
            None,  # GA: no gate needed
        ),
    ],
)
def test_pf206_topology_manager_numa_node_limit(tmp_path, version, numa_per_socket, body, refused):
    """topologymanager NewManager: a policy other than none on more NUMA nodes than
    max-allowable-numa-nodes (8 unless set; the option from 1.31, beta behind
    TopologyManagerPolicyBetaOptions, GA in 1.35) stops the kubelet."""
    f, _ = _kubelet(tmp_path, "cpuManagerPolicy: none\n" + body)
    p = tmp_path / "snc.yaml"
    p.write_text(SNC_PLATFORM % (version, numa_per_socket))
    found = run(f, "--rule", "PF206", "--rule", "PF213", platform=p)
    if refused is None:
        assert found == []
    elif refused.startswith("PF213 "):  # the kubelet refuses the option itself: PF213's, not PF206's
        ((rule, _, message),) = found
        assert rule == "PF213" and refused[6:] in message and "the kubelet refuses to start" in message
    else:
        ((rule, _, message),) = found
        assert rule == "PF206" and refused in message and "the kubelet does not start" in message


@pytest.mark.parametrize(
    ("version", "body", "message"),
    [
        # KEP-3545: prefer-closest-numa-nodes beta 1.28 (gate on by default), GA 1.32
        ("1.31", "featureGates: {TopologyManagerPolicyBetaOptions: false}\n", "is beta in Kubernetes 1.31"),
        ("1.32", "featureGates: {TopologyManagerPolicyBetaOptions: false}\n", None),
        ("1.31", "", None),
        # alpha gate off by default; the option's own gate: off means no options at all
        ("1.31", "featureGates: {TopologyManagerPolicyOptions: false}\n", "with the feature gate"),
        ("1.37", "", None),
    ],
)
def test_pf213_prefer_closest_numa_nodes_by_version(tmp_path, version, body, message):
    f, p = _kubelet(
        tmp_path,
        body + "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {prefer-closest-numa-nodes: 'true'}\n",
        version,
    )
    found = run(f, "--rule", "PF213", platform=p)
    if message is None:
        assert found == []
    else:
        ((rule, _, text),) = found
        assert rule == "PF213" and message in text and text.endswith("the kubelet refuses to start")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("8", None),
        ("+9", None),
        ("64", None),
        ("7", "7 is less than 8"),
        (" 9", "not a whole number"),
        ("9.0", "not"),
        ("9" * 20, "out of the range"),
    ],
)
def test_pf213_max_allowable_numa_nodes_value(tmp_path, value, message):
    """strconv.Atoi, then at least defaultMaxAllowableNUMANodes (8)."""
    f, p = _kubelet(
        tmp_path,
        f"topologyManagerPolicy: best-effort\ntopologyManagerPolicyOptions: {{max-allowable-numa-nodes: '{value}'}}\n",
        "1.35",
    )
    found = run(f, "--rule", "PF213", platform=p)
    assert (found == []) if message is None else (message in found[0][2] and len(found) == 1)


def test_pf213_unknown_option_and_policy_none(tmp_path):
    body = "topologyManagerPolicyOptions: {prefer-closest-numa-node: 'true'}\n"
    f, p = _kubelet(tmp_path, "topologyManagerPolicy: single-numa-node\n" + body, "1.35")
    ((_, _, text),) = run(f, "--rule", "PF213", platform=p)
    assert "unknown Topology Manager policy option 'prefer-closest-numa-node'" in text
    assert "max-allowable-numa-nodes, prefer-closest-numa-nodes" in text
    f, p = _kubelet(tmp_path, "topologyManagerPolicy: none\n" + body, "1.35")  # NewManager returns first
    assert run(f, "--rule", "PF213", platform=p) == []


def test_pf213_unquoted_value_is_pf902s(tmp_path):
    """An unquoted number does not decode into map[string]string: the file does not load (PF902)."""
    f, p = _kubelet(
        tmp_path,
        "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: 4}\n",
        "1.35",
    )
    assert run(f, "--rule", "PF213", platform=p) == []


def test_pf206_leaves_a_refused_option_to_pf213(tmp_path):
    f, _ = _kubelet(
        tmp_path, "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '4'}\n"
    )
    p = tmp_path / "snc.yaml"
    p.write_text(SNC_PLATFORM % ("1.35", 1))  # 2 NUMA nodes: fine, were the option accepted
    assert [x[0] for x in run(f, "--rule", "PF206", "--rule", "PF213", platform=p)] == ["PF213"]


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("1.32", "cpuManagerPolicyOptions is set with the feature gate CPUManagerPolicyOptions off"),
        ("1.33", "the feature gate CPUManagerPolicyOptions is set off, but it is locked on in Kubernetes 1.33"),
    ],
)
def test_pf207_options_gate_off(tmp_path, version, message):
    """cmd/kubelet/app/server.go: options need CPUManagerPolicyOptions, whatever the policy; GA
    and locked on from 1.33."""
    f, p = _kubelet(
        tmp_path,
        "featureGates: {CPUManagerPolicyOptions: false}\ncpuManagerPolicy: none\n"
        "cpuManagerPolicyOptions: {full-pcpus-only: 'true'}\n",
        version,
    )
    ((rule, _, text),) = run(f, "--rule", "PF207", platform=p)
    assert rule == "PF207" and message in text


def test_a_gate_that_is_no_boolean_sets_nothing(tmp_path):
    """featureGates is a map of booleans: "false" quoted does not decode (PF902), so it is no gate
    turned off for PF207 and PF213."""
    f, p = _kubelet(
        tmp_path,
        "featureGates: {TopologyManagerPolicyBetaOptions: 'false', CPUManagerPolicyOptions: [0]}\n"
        "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '16'}\n"
        "cpuManagerPolicy: static\ncpuManagerPolicyOptions: {full-pcpus-only: 'true'}\n",
        "1.33",
    )
    assert run(f, "--rule", "PF207", "--rule", "PF213", platform=p) == []
