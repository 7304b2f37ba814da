"""Jobs, CronJobs and Helm hooks are packed as the largest group that runs at one time, not as if
every one of them ran all the time beside the Deployments."""

from __future__ import annotations

import json

from click.testing import CliRunner

from podfit.cli import main


def pod_template(cpu: str, memory: str, annotations: str = "") -> str:
    return f"""    metadata:
      labels: {{app: x}}{annotations}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          requests: {{cpu: "{cpu}", memory: {memory}}}
          limits: {{cpu: "{cpu}", memory: {memory}}}
"""


def deployment(name: str, replicas: int, cpu: str, memory: str) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: app}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: x}}}}
  template:
{pod_template(cpu, memory).replace("restartPolicy: Never", "restartPolicy: Always")}"""


def job(name: str, cpu: str, memory: str, hook: str | None = None, parallelism: int = 1) -> str:
    ann = f"\n  annotations: {{helm.sh/hook: {hook}}}" if hook else ""
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: app{ann}
spec:
  parallelism: {parallelism}
  template:
{pod_template(cpu, memory)}"""


def cronjob(name: str, cpu: str, memory: str) -> str:
    body = pod_template(cpu, memory).replace("\n    ", "\n        ")
    return f"""apiVersion: batch/v1
kind: CronJob
metadata: {{name: {name}, namespace: app}}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
    {body}"""


def pack(tmp_path, *docs: str) -> tuple[int, dict]:
    app = tmp_path / "app.yaml"
    app.write_text("---\n".join(docs))
    res = CliRunner().invoke(
        main, ["pack", str(app), "--pool", "best-effort-large=2", "--format", "json", "--time-budget", "0"]
    )
    return res.exit_code, json.loads(res.output)


def test_hooks_run_one_at_a_time_and_jobs_and_cronjobs_are_groups(tmp_path):
    # 2 × large nodes: 3750m allocatable each. The Deployment takes 2 × 2500m; three hooks of 1000m
    # each would not fit beside it all together (3 × 1000m > 2 × 1250m free), one at a time they do
    code, d = pack(
        tmp_path,
        deployment("web", 2, "2500m", "1Gi"),
        job("migrate", "1000m", "1Gi", hook="pre-upgrade"),
        job("seed", "1000m", "1Gi", hook="post-install"),
        job("smoke", "1000m", "1Gi", hook="test"),
        job("reindex", "500m", "512Mi"),
        cronjob("backup", "200m", "256Mi"),
    )
    assert code == 0 and d["feasible"] is True
    rtc = d["scheduling"]["run_to_completion"]
    # the largest group: one hook (1000m) over the Jobs (500m) and the CronJobs (200m); ties by name
    assert rtc["packed"] == "hook Job/app/migrate" and rtc["packed_pods"] == ["Job/app/migrate"]
    assert set(rtc["left_out"]) == {"Job/app/seed", "Job/app/smoke", "Job/app/reindex", "CronJob/app/backup"}
    assert sum(n for node in d["nodes"] for n in node["pods"].values()) == 3


def test_jobs_applied_together_run_together(tmp_path):
    # two plain Jobs of 1300m each run at once: beside the Deployment (1250m free per node) they
    # do not fit, though the larger hook alone (1200m) would
    code, d = pack(
        tmp_path,
        deployment("web", 2, "2500m", "1Gi"),
        job("a", "1300m", "1Gi"),
        job("b", "1300m", "1Gi"),
        job("hook", "1200m", "1Gi", hook="pre-install"),
    )
    assert code == 1 and d["feasible"] is False
    assert d["scheduling"]["run_to_completion"]["packed"] == "jobs"
    assert d["scheduling"]["run_to_completion"]["left_out"] == ["Job/app/hook"]


def test_only_long_running_pods_have_no_run_to_completion_note(tmp_path):
    code, d = pack(tmp_path, deployment("web", 2, "1", "1Gi"))
    assert code == 0 and d["scheduling"]["run_to_completion"] is None


def test_pf601_details_name_the_run_to_completion_group_packed(tmp_path):
    app = tmp_path / "app.yaml"
    app.write_text(
        "---\n".join(
            [
                deployment("web", 2, "2500m", "1Gi"),
                job("a", "1300m", "1Gi"),
                job("b", "1300m", "1Gi"),
                job("hook", "1200m", "1Gi", hook="pre-install"),
                # a TKC of two large workers: the cluster the pods are packed onto
                """apiVersion: run.tanzu.vmware.com/v1alpha3
kind: TanzuKubernetesCluster
metadata: {name: c, namespace: team}
spec:
  topology:
    controlPlane: {replicas: 1, vmClass: best-effort-small}
    nodePools: [{name: w, replicas: 2, vmClass: best-effort-large}]
""",
            ]
        )
    )
    res = CliRunner().invoke(main, ["check", str(app), "--rule", "PF601", "--format", "json", "--fail-on", "never"])
    (f,) = [f for f in json.loads(res.output)["findings"] if f["rule"] == "PF601"]
    assert f["details"]["run_to_completion"] == {"packed": "jobs", "left_out": ["Job/app/hook"]}


def test_a_job_no_node_can_run_is_still_reported(tmp_path):
    # the CronJobs are the largest group; the hook asks for 8 CPUs, more than a large node holds:
    # left out or not, it can never run (PF303 on `check`, and `pack` does not fit)
    code, d = pack(
        tmp_path,
        deployment("web", 1, "1", "1Gi"),
        job("huge-hook", "8", "1Gi", hook="pre-install"),
        cronjob("a", "1", "4Gi"),
        cronjob("b", "1", "4Gi"),
    )
    assert code == 1 and d["feasible"] is False
    assert d["scheduling"]["run_to_completion"]["packed"] == "cronjobs"
    assert d["scheduling"]["run_to_completion"]["left_out"] == []
    assert "Job/app/huge-hook" in {p["name"] for p in d["pods"]}
