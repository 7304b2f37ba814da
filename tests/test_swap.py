"""Swap (NodeSwap, KEP-2400): memorySwap.swapBehavior LimitedSwap reaches the facts (Python and
data.podfit for Rego) and PF111's message, for the containers the kubelet lets swap
(GetContainerSwapBehavior: Burstable pod, not critical, memory request differing from the limit);
the verdict and its severity stay (no limit still bounds nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.facts import build_facts, facts_data
from podfit.loader import InputFile, load
from podfit.platform import DEFAULT_PLATFORM

KUBELET = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failSwapOn: false
memorySwap: {swapBehavior: %s}
"""

DEPLOYMENT = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:%s
      containers:
        - name: api
          image: registry.example.com/api:1
          resources:
            requests: {cpu: 500m, memory: 1Gi}
            limits: {cpu: "1"}
"""


def pf111(tmp_path: Path, text: str, version: str | None = None) -> list[dict]:
    f = tmp_path / "in.yaml"
    f.write_text(text)
    args = ["check", "--rule", "PF111", "--format", "json", "--fail-on", "never", str(f)]
    if version:
        p = tmp_path / "platform.yaml"
        p.write_text(
            "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: v}\nspec:\n"
            f"  kubelet: {{kubernetesVersion: '{version}'}}\n"
        )
        args += ["--platform", str(p)]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["findings"]


@pytest.mark.parametrize(
    ("behaviour", "priority", "version", "swaps"),
    [
        ("LimitedSwap", "", None, True),
        ("LimitedSwap", "", "1.34", True),  # NodeSwap GA
        ("LimitedSwap", "", "1.29", False),  # NodeSwap beta, off by default: no swap (the kubelet refuses it)
        ("NoSwap", "", None, False),
        ('""', "", None, False),  # the default: NoSwap
        ("LimitedSwap", "\n      priorityClassName: system-node-critical", None, False),  # IsCriticalPod
        ("LimitedSwap", "\n      priorityClassName: batch-low", None, True),
    ],
)
def test_pf111_says_a_container_without_limit_swaps_first(tmp_path, behaviour, priority, version, swaps):
    (f,) = pf111(tmp_path, KUBELET % behaviour + DEPLOYMENT % priority, version)
    assert f["severity"] == "warning"  # the same verdict: no limit bounds nothing, swap or not
    assert f["message"].startswith('container "api" requests 1Gi of memory and sets no memory limit')
    assert ("LimitedSwap" in f["message"]) is swaps
    assert f["details"].get("limited_swap", False) is swaps


def test_without_a_kubelet_configuration_nothing_swaps(tmp_path):
    (f,) = pf111(tmp_path, DEPLOYMENT.removeprefix("---\n") % "")
    assert "swap" not in f["message"] and "limited_swap" not in f["details"]


def test_swap_behaviour_reaches_data_podfit(tmp_path):
    f = tmp_path / "k.yaml"
    f.write_text(KUBELET % "LimitedSwap")
    facts = build_facts(load([InputFile(str(f), f.read_bytes())]).objects, DEFAULT_PLATFORM)
    kubelet = facts_data(facts)["platform"]["kubelet"]
    assert (kubelet["swap_behavior"], kubelet["limited_swap"]) == ("LimitedSwap", True)
    f.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
    facts = build_facts(load([InputFile(str(f), f.read_bytes())]).objects, DEFAULT_PLATFORM)
    assert "swap_behavior" not in facts_data(facts)["platform"]["kubelet"]


def test_hostile_memory_swap_is_no_swap(tmp_path):
    for value in ("[LimitedSwap]", "{swapBehavior: [1]}", "{swapBehavior: 7}", "null"):
        text = f"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmemorySwap: {value}\n"
        (f,) = pf111(tmp_path, text + DEPLOYMENT % "")
        assert "limited_swap" not in f["details"]


def test_before_1_30_an_unset_behaviour_is_limited_swap(tmp_path):
    """Before NoSwap (1.30) an unset swapBehavior with NodeSwap on means LimitedSwap."""
    kubelet = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
    on = kubelet + "featureGates: {NodeSwap: true}\nfailSwapOn: false\n"
    (f,) = pf111(tmp_path, on + DEPLOYMENT % "", "1.29")
    assert f["details"].get("limited_swap") is True
    (f,) = pf111(tmp_path, on + DEPLOYMENT % "", "1.30")  # NoSwap by default from 1.30
    assert "limited_swap" not in f["details"]
    (f,) = pf111(tmp_path, kubelet + DEPLOYMENT % "", "1.29")  # NodeSwap off by default in 1.29
    assert "limited_swap" not in f["details"]


def pf214(tmp_path: Path, body: str, version: str) -> list[str]:
    f = tmp_path / "k.yaml"
    f.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" + body)
    p = tmp_path / "platform.yaml"
    p.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: v}\nspec:\n"
        f"  kubelet: {{kubernetesVersion: '{version}'}}\n"
    )
    args = ["check", "--rule", "PF214", "--format", "json", "--fail-on", "never", "--platform", str(p), str(f)]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return [x["message"] for x in json.loads(res.stdout)["findings"]]


@pytest.mark.parametrize(
    ("version", "body", "refused"),
    [
        ("1.29", "memorySwap: {swapBehavior: LimitedSwap}\n", "NodeSwap off in Kubernetes 1.29 (off by default)"),
        ("1.29", "featureGates: {NodeSwap: true}\nmemorySwap: {swapBehavior: UnlimitedSwap}\n", None),
        ("1.29", "featureGates: {NodeSwap: true}\nmemorySwap: {swapBehavior: NoSwap}\n", "'NoSwap' is not one of"),
        ("1.30", "memorySwap: {swapBehavior: NoSwap}\n", None),  # beta, on by default
        ("1.30", "memorySwap: {swapBehavior: UnlimitedSwap}\n", "'UnlimitedSwap' is not one of NoSwap or LimitedSwap"),
        (
            "1.31",
            "featureGates: {NodeSwap: false}\nmemorySwap: {swapBehavior: NoSwap}\n",
            "with the feature gate NodeSwap off",
        ),
        (
            "1.34",
            "featureGates: {NodeSwap: false}\nmemorySwap: {swapBehavior: NoSwap}\n",
            "locked on in Kubernetes 1.34",
        ),
        ("1.37", "memorySwap: {swapBehavior: ''}\n", None),
        ("1.37", "memorySwap: {swapBehavior: [LimitedSwap]}\n", None),  # not a string: PF902's
    ],
)
def test_pf214_memory_swap_the_kubelet_refuses(tmp_path, version, body, refused):
    found = pf214(tmp_path, body, version)
    if refused is None:
        assert found == []
    else:
        (message,) = found
        assert refused in message and message.endswith("the kubelet refuses to start")
