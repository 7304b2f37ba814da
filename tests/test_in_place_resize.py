"""PF210 (resizePolicy the API server rejects) and PF211 (in-place resizes the kubelet marks
Infeasible or the API server refuses) on manifests written here, by version and feature gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main

GUARANTEED = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: ns}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
        - name: app
          image: example/app:1
          resources:
            requests: {cpu: "2", memory: 1Gi}
            limits: {cpu: "2", memory: 1Gi}
"""
BEST_EFFORT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: ns}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
        - {name: app, image: example/app:1}
"""
VPA = """
---
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: app, namespace: ns}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: app}
  updatePolicy: {updateMode: %s}
"""


def kubelet(policy: str = "none", memory: str = "None", gates: str = "") -> str:
    text = f"""
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: {policy}
reservedSystemCPUs: "0"
memoryManagerPolicy: {memory}
"""
    return text + (f"featureGates: {{{gates}}}\n" if gates else "")


def platform(tmp: Path, version: str) -> Path:
    p = tmp / "platform.yaml"
    p.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: p}\n"
        f'spec:\n  kubelet:\n    kubernetesVersion: "{version}"\n'
    )
    return p


def findings(tmp: Path, text: str, rule: str, version: str | None = "1.35") -> list[dict]:
    f = tmp / "in.yaml"
    f.write_text(text)
    args = ["check", "--rule", rule, "--format", "json", "--fail-on", "never", str(f)]
    if version:
        args += ["--platform", str(platform(tmp, version))]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return [x for x in json.loads(res.stdout)["findings"] if x["rule"] == rule]


def reasons(found: list[dict]) -> list[str]:
    return sorted(x["details"]["reason"] for x in found)


def test_static_cpu_manager_makes_cpu_resizes_infeasible(tmp_path: Path) -> None:
    text = GUARANTEED + VPA % "InPlaceOrRecreate" + kubelet("static")
    assert reasons(findings(tmp_path, text, "PF211")) == ["cpu-manager-static"]
    # the gate of KEP-5554 on: CPU resizes are feasible
    gated = (
        GUARANTEED + VPA % "InPlaceOrRecreate" + kubelet("static", gates="InPlacePodVerticalScalingExclusiveCPUs: true")
    )
    assert findings(tmp_path, gated, "PF211") == []
    # KEP-5554 has not left alpha: still Infeasible on 1.37 and on the latest release (no version)
    assert reasons(findings(tmp_path, text, "PF211", version="1.37")) == ["cpu-manager-static"]
    assert reasons(findings(tmp_path, text, "PF211", version=None)) == ["cpu-manager-static"]


def test_other_update_modes_and_the_none_policy_are_silent(tmp_path: Path) -> None:
    assert findings(tmp_path, GUARANTEED + VPA % "Recreate" + kubelet("static"), "PF211") == []
    assert findings(tmp_path, GUARANTEED + VPA % "InPlaceOrRecreate" + kubelet("none"), "PF211") == []


def test_static_memory_manager(tmp_path: Path) -> None:
    text = GUARANTEED + VPA % "InPlaceOrRecreate" + kubelet("none", "Static")
    found = findings(tmp_path, text, "PF211")
    assert reasons(found) == ["memory-manager-static"]
    assert "Static Memory Manager" in found[0]["message"]


def test_best_effort_pod_would_change_qos(tmp_path: Path) -> None:
    found = findings(tmp_path, BEST_EFFORT + VPA % "InPlaceOrRecreate", "PF211")
    assert reasons(found) == ["qos-change"] and found[0]["details"]["qos_class"] == "BestEffort"


def test_in_place_off_before_1_33_unless_the_gate_is_set(tmp_path: Path) -> None:
    text = GUARANTEED + VPA % "InPlaceOrRecreate"
    assert reasons(findings(tmp_path, text, "PF211", version="1.32")) == ["in-place-resize-off"]
    gated = text + kubelet(gates="InPlacePodVerticalScaling: true")
    # in place now, but before 1.34 a lower memory limit needs RestartContainer
    assert reasons(findings(tmp_path, gated, "PF211", version="1.32")) == ["memory-limit-decrease"]


@pytest.mark.parametrize(("version", "expected"), [("1.33", ["memory-limit-decrease"]), ("1.34", [])])
def test_memory_limit_decrease_by_version(tmp_path: Path, version: str, expected: list[str]) -> None:
    burstable = GUARANTEED.replace('limits: {cpu: "2", memory: 1Gi}', 'limits: {cpu: "4", memory: 2Gi}')
    assert reasons(findings(tmp_path, burstable + VPA % "InPlaceOrRecreate", "PF211", version)) == expected
    restart = burstable.replace(
        "          resources:",
        "          resizePolicy: [{resourceName: memory, restartPolicy: RestartContainer}]\n          resources:",
    )
    assert findings(tmp_path, restart + VPA % "InPlaceOrRecreate", "PF211", version) == []


NEVER_POD = """
apiVersion: v1
kind: Pod
metadata: {name: once, namespace: ns}
spec:
  restartPolicy: %s
  containers:
    - name: work
      image: example/work:1
      resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 100m, memory: 64Mi}}
      resizePolicy: [{resourceName: memory, restartPolicy: %s}]
"""


@pytest.mark.parametrize(
    ("pod_restart", "policy", "count"),
    [
        ("Never", "RestartContainer", 1),
        ("Never", "NotRequired", 0),
        ("OnFailure", "RestartContainer", 0),
        ("Always", "Sometimes", 1),
    ],
)
def test_pf210_restart_policies(tmp_path: Path, pod_restart: str, policy: str, count: int) -> None:
    assert len(findings(tmp_path, NEVER_POD % (pod_restart, policy), "PF210")) == count


def test_pf210_by_version(tmp_path: Path) -> None:
    text = NEVER_POD % ("Never", "RestartContainer")
    assert findings(tmp_path, text, "PF210", version="1.32") == []  # the API server drops the field
    assert len(findings(tmp_path, text, "PF210", version="1.33")) == 1
    assert "latest Kubernetes" in findings(tmp_path, text, "PF210", version=None)[0]["message"]


def test_hostile_shapes_give_findings_not_tracebacks() -> None:
    """Every field PF210, PF211, PF212 and the extended-resource packing read, of the wrong type."""
    root = Path(__file__).resolve().parents[1]
    args = ["check", "--format", "json", "--fail-on", "never", str(root / "tests/data/kube37-hostile-resize-dra.yaml")]
    args += ["--platform", str(root / "testdata/PF601/fail_three_gpu_pods_two_gpu_nodes/platform.yaml")]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    rules = {f["rule"] for f in json.loads(res.stdout)["findings"]}
    assert {"PF902", "PF211", "PF212"} <= rules


INIT_POD = """
apiVersion: v1
kind: Pod
metadata: {name: init, namespace: ns}
spec:
  restartPolicy: %s
  initContainers:
    - name: %s
      image: example/init:1%s
      resizePolicy: [{resourceName: cpu, restartPolicy: %s}]
  containers:
    - {name: app, image: example/app:1}
"""


@pytest.mark.parametrize(
    ("version", "sidecar", "expected"),
    [
        ("1.32", False, 1),  # gate set on an alpha release: no init container may set it
        ("1.32", True, 1),  # sidecars included
        ("1.33", False, 0),  # AllowSidecarResizePolicy: every init container, one-shot ones too
        ("1.33", True, 0),
        (None, False, 0),  # the latest release
    ],
)
def test_pf210_init_containers_by_version(tmp_path: Path, version: str | None, sidecar: bool, expected: int) -> None:
    """validateInitContainers refuses resizePolicy on init containers unless
    opts.AllowSidecarResizePolicy, which is the InPlacePodVerticalScaling gate from 1.33."""
    always = "\n      restartPolicy: Always" if sidecar else ""
    text = INIT_POD % ("Always", "side" if sidecar else "once", always, "NotRequired")
    found = findings(tmp_path, text + kubelet(gates="InPlacePodVerticalScaling: true"), "PF210", version)
    assert len(found) == expected
    if expected:
        assert "before Kubernetes 1.33 (sidecars included)" in found[0]["message"]


def test_pf210_judges_sidecars_by_the_pods_restart_policy(tmp_path: Path) -> None:
    """validateResizePolicy gets the pod's restartPolicy for every container: a sidecar's own
    Always does not make RestartContainer valid in a pod that is never restarted."""
    sidecar = INIT_POD % ("Never", "side", "\n      restartPolicy: Always", "RestartContainer")
    (found,) = findings(tmp_path, sidecar, "PF210")
    assert found["container"] == "side" and "restartPolicy is Never" in found["message"]
    assert (
        findings(
            tmp_path, INIT_POD % ("OnFailure", "side", "\n      restartPolicy: Always", "RestartContainer"), "PF210"
        )
        == []
    )
