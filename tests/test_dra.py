"""DRA: PF101/PF102 leave a container that uses a claim alone when the nodes give CPU and memory
through DRA (DRANodeAllocatableResources, KEP-5517), and PF212 names the claims podfit cannot size;
the gate reaches the Rego as data.podfit.platform.kubelet.dra_node_allocatable."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.facts import KubeletFacts

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  resourceClaims: [{name: cpus, resourceClaimName: pinned-cpus}]
  containers:
    - name: app
      image: example/app:1
      resources: {claims: [{name: cpus}]}
    - name: side
      image: example/side:1
      resources: {requests: {cpu: 100m, memory: 64Mi}}
"""
KUBELET = """
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
featureGates: {DRANodeAllocatableResources: %s}
"""


def run(tmp: Path, text: str, *engine: str) -> list[dict]:
    f = tmp / "in.yaml"
    f.write_text(text)
    args = ["check", "--format", "json", "--fail-on", "never", *engine, str(f)]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["findings"]


@pytest.mark.parametrize("engine", [("--engine", "embedded"), ("--engine", "opa")])
def test_request_missing_by_gate(tmp_path: Path, engine: tuple[str, ...]) -> None:
    if engine[1] == "opa" and not (os.environ.get("PODFIT_OPA") or shutil.which("opa")):
        pytest.skip("no opa binary")
    on = {(f["rule"], f["container"]) for f in run(tmp_path, POD + KUBELET % "true", *engine)}
    off = {(f["rule"], f["container"]) for f in run(tmp_path, POD + KUBELET % "false", *engine)}
    assert ("PF101", "app") not in on and ("PF102", "app") not in on
    assert ("PF101", "app") in off and ("PF102", "app") in off
    assert ("PF212", "app") in on and ("PF212", "app") in off


def test_pf212_names_the_claim_and_the_gate(tmp_path: Path) -> None:
    found = [f for f in run(tmp_path, POD + KUBELET % "true") if f["rule"] == "PF212"]
    assert len(found) == 1 and found[0]["details"]["claims"] == ["cpus"]
    assert "ResourceClaim pinned-cpus" in found[0]["message"]
    assert "DRANodeAllocatableResources on" in found[0]["message"]


def test_the_gate_by_version() -> None:
    assert KubeletFacts(version=(1, 35)).feature("DRANodeAllocatableResources") is False
    assert KubeletFacts(version=(1, 36)).feature("DRANodeAllocatableResources") is False  # alpha
    assert KubeletFacts(version=(1, 36), feature_gates=(("DRANodeAllocatableResources", True),)).feature(
        "DRANodeAllocatableResources"
    )


def test_pf212_names_the_device_class_of_a_claim_template() -> None:
    fixture = Path(__file__).resolve().parents[1] / "testdata" / "PF212" / "fail_gpu_claim_template.yaml"
    res = CliRunner().invoke(
        main,
        ["check", "--rule", "PF212", "--format", "json", "--fail-on", "never", str(fixture)],
        catch_exceptions=False,
    )
    (found,) = json.loads(res.stdout)["findings"]
    assert found["details"]["device_classes"] == {"gpu": ["gpu.nvidia.com"]}
    assert "ResourceClaimTemplate single-gpu: device class gpu.nvidia.com" in found["message"]
