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
