"""No vSphere assumption off vSphere (issue 47): given no platform, a rule that judges by the built-in
profile's hosts, NUMA nodes or NSX-T load balancer reports at most info, naming the assumption and
the option that replaces it; given a platform, the same finding keeps its rule's severity."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from podfit.cli import main

ROOT = Path(__file__).resolve().parents[1]
STUDY = str(ROOT / "testdata" / "platforms" / "study-4-hosts.yaml")

# a training job written for 8-GPU machines: 40 whole CPUs, more than the built-in hosts' 16-core NUMA node
GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: registry.example.com/trainer:1.0
          resources:
            requests: {cpu: "40", memory: 160Gi}
            limits: {cpu: "40", memory: 160Gi}
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata: {{name: svc-{n}, namespace: demo}}
spec:
  type: LoadBalancer
  selector: {{app: svc-{n}}}
  ports: [{{port: 80}}]
"""


def findings(tmp_path: Path, text: str, *args: str) -> list[dict]:
    (tmp_path / "k8s.yaml").write_text(text)
    r = CliRunner().invoke(main, ["check", str(tmp_path / "k8s.yaml"), "--format", "json", *args])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.output)["findings"]


def test_numa_verdict_on_the_built_in_hosts_is_info_naming_the_assumption(tmp_path):
    (pf302,) = [f for f in findings(tmp_path, GPU_JOB) if f["rule"] == "PF302"]
    assert pf302["severity"] == "info"
    assert "assumes the built-in vSphere profile" in pf302["message"] and "--platform FILE" in pf302["message"]
    assert pf302["details"]["assumed"] == "platform"
    (given,) = [f for f in findings(tmp_path, GPU_JOB, "--platform", STUDY) if f["rule"] == "PF302"]
    assert given["severity"] == "warning" and "assumes" not in given["message"]
    assert "assumed" not in given["details"]


def test_load_balancer_count_without_a_platform_is_info(tmp_path):
    text = "---\n".join(SERVICE.format(n=n) for n in range(21))
    (pf701,) = [f for f in findings(tmp_path, text) if f["rule"] == "PF701"]
    assert pf701["severity"] == "info" and "small NSX-T load balancer" in pf701["message"]
    (given,) = [f for f in findings(tmp_path, text, "--platform", STUDY) if f["rule"] == "PF701"]
    assert given["severity"] == "warning"


def test_rules_that_need_no_platform_keep_their_severity(tmp_path):
    no_request = GPU_JOB.replace('{cpu: "40", memory: 160Gi}', "{memory: 160Gi}")
    (pf101,) = [f for f in findings(tmp_path, no_request) if f["rule"] == "PF101"]
    assert pf101["severity"] == "error" and "assumes" not in pf101["message"]
