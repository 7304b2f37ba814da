"""`check --usage` against a real Prometheus: the containers' usage is written as OpenMetrics
(cAdvisor's and kube-state-metrics' metric names, one sample every 15 s for an hour), turned into a
TSDB block by `promtool tsdb create-blocks-from openmetrics`, served by `prometheus` on 127.0.0.1,
queried over the HTTP API (by `podfit usage export` and by plain query_range calls), and the files
that come back are what `podfit check --usage` reads. Needs the pinned prometheus and promtool in
.tools/bin (`make tools` builds them; `make test` builds them first)."""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.usage_export import queries

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".tools" / "bin"
PROMETHEUS, PROMTOOL = BIN / "prometheus", BIN / "promtool"
MANIFESTS = ROOT / "testdata" / "usage-prometheus" / "manifests.yaml"

pytestmark = pytest.mark.skipif(
    not (PROMETHEUS.is_file() and PROMTOOL.is_file()),
    reason="prometheus/promtool not built: run `make tools` (scripts/install-tools.sh prometheus promtool)",
)

T0 = 1763856000  # 2025-11-23T00:00:00Z, a multiple of the 2 h block range
STEP_S, POINTS = 15, 241  # an hour of samples
START, END = T0 + 300, T0 + 3600  # the queried window: rate(...[5m]) has a full range from START on
MI = 2**20

# The Prometheus asks for HTTP basic auth (its web config holds the bcrypt hash of the password,
# cost 4 to keep the test quick); podfit is given them in the URL.
USER, PASSWORD = "reader", "podfit-test-Pa55"
BCRYPT = "$2b$04$h3ptlJtGZNKdeuIGPhP9NeAMNORHR32Pgm9bzHOjp9KKL6ESScZH."
AUTH = {"Authorization": "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()}


def _api_memory(i: int) -> int:
    """Pod api-…-x2x7k: 400Mi rising to 700Mi at half past, and back."""
    return 400 * MI + (300 * MI * (120 - abs(120 - i))) // 120


# (namespace, pod, container[, cgroup id]) → per-sample CPU seconds per 15 s (exact in binary),
# memory, CFS periods and throttled periods per 15 s (None: not measured)
SERIES = {
    ("shop", "api-7d9f8c6b5-x2x7k", "app"): (3.75, _api_memory, None, None),
    ("shop", "api-7d9f8c6b5-q9w8z", "app"): (3.75, lambda i: 450 * MI, None, None),
    ("shop", "web-6c8d7f9b4-2kq8n", "app"): (7.5, lambda i: 200 * MI, None, None),
    ("shop", "checkout-5f6d7c8b9-bcd4f", "app", "/c1"): (5.625, lambda i: 300 * MI, 150, 60),
    # checkout's container restarted: cAdvisor gives the new instance its own cgroup and series
    ("shop", "checkout-5f6d7c8b9-bcd4f", "app", "/c2"): (None, None, 150, 60),
    # a second checkout pod whose container ran from the start, but whose first samples were lost
    # (its node's cAdvisor was not scraped until 25): a scrape gap, not a new container
    ("shop", "checkout-5f6d7c8b9-zq8wx", "app", "/c3"): (None, None, 150, 60),
    ("shop", "cart-0", "app"): (None, lambda i: 600 * MI, None, None),
    ("kube-system", "coredns-5d78c9869d-8xk2p", "coredns"): (0.375, lambda i: 15 * MI, None, None),
    # the pod's own cgroup (container=""): podfit leaves it out
    ("shop", "api-7d9f8c6b5-x2x7k", ""): (None, lambda i: 999 * MI, None, None),
    # names that collide: StatefulSet web beside Deployment web, Job web-migrate, CronJob
    # web-nightly, and the pod of a ReplicaSet orphaned from Deployment web (its name still reads
    # as web's: only kube-state-metrics' owners tell it is not)
    ("shop", "web-0", "app"): (None, lambda i: 300 * MI, None, None),
    ("shop", "web-migrate-x7k2p", "app"): (None, lambda i: 1536 * MI, None, None),
    ("shop", "web-nightly-29400000-bcd4f", "app"): (None, lambda i: 400 * MI, None, None),
    ("shop", "web-fdb45-zz2k4", "app"): (None, lambda i: 1536 * MI, None, None),
}
# The samples a series has (first and last index) and the index its counter was 0 at: checkout's
# first container ran from before the window and stopped at 110; the second started at 119, was
# first scraped at 121 (two steps counted before its first sample) and ran to the end.
LIFE = {
    ("shop", "checkout-5f6d7c8b9-bcd4f", "app", "/c1"): (0, 110, 0),
    ("shop", "checkout-5f6d7c8b9-bcd4f", "app", "/c2"): (121, POINTS - 1, 119),
    ("shop", "checkout-5f6d7c8b9-zq8wx", "app", "/c3"): (25, POINTS - 1, 0),
}
# container_start_time_seconds of the counters' container instances: the index each started at
STARTED = {
    ("shop", "checkout-5f6d7c8b9-bcd4f", "app", "/c1"): 0,
    ("shop", "checkout-5f6d7c8b9-bcd4f", "app", "/c2"): 119,
    ("shop", "checkout-5f6d7c8b9-zq8wx", "app", "/c3"): 0,
}
# kube-state-metrics' owner references (cart-0 has none: its owner is found by its name)
POD_OWNERS = {
    "shop": [
        ("api-7d9f8c6b5-x2x7k", "ReplicaSet", "api-7d9f8c6b5"),
        ("api-7d9f8c6b5-q9w8z", "ReplicaSet", "api-7d9f8c6b5"),
        ("web-6c8d7f9b4-2kq8n", "ReplicaSet", "web-6c8d7f9b4"),
        ("checkout-5f6d7c8b9-bcd4f", "ReplicaSet", "checkout-5f6d7c8b9"),
        ("checkout-5f6d7c8b9-zq8wx", "ReplicaSet", "checkout-5f6d7c8b9"),
        ("web-0", "StatefulSet", "web"),
        ("web-migrate-x7k2p", "Job", "web-migrate"),
        ("web-nightly-29400000-bcd4f", "Job", "web-nightly-29400000"),
        ("web-fdb45-zz2k4", "ReplicaSet", "web-fdb45"),
    ],
    "kube-system": [("coredns-5d78c9869d-8xk2p", "ReplicaSet", "coredns-5d78c9869d")],
}
REPLICASET_OWNERS = {
    "shop": [
        ("api-7d9f8c6b5", "Deployment", "api"),
        ("web-6c8d7f9b4", "Deployment", "web"),
        ("checkout-5f6d7c8b9", "Deployment", "checkout"),
        ("web-fdb45", "<none>", "<none>"),
    ],
    "kube-system": [("coredns-5d78c9869d", "Deployment", "coredns")],
}
JOB_OWNERS = {"shop": [("web-nightly-29400000", "CronJob", "web-nightly")]}


def openmetrics() -> str:
    """The test data: every family's series, each in time order, timestamps in seconds."""
    out: list[str] = []

    def family(name: str, kind: str, value) -> None:
        out.append(f"# TYPE {name} {kind}")
        sample = name + ("_total" if kind == "counter" else "")
        for key, spec in SERIES.items():
            per_step = value(spec)
            if per_step is None:
                continue
            ns, pod, container = key[:3]
            cgroup = f',id="{key[3]}"' if len(key) > 3 else ""
            labels = f'{{namespace="{ns}",pod="{pod}",container="{container}"{cgroup}}}'
            first, last, zero = LIFE.get(key, (0, POINTS - 1, 0))
            for i in range(first, last + 1):
                v = per_step(i) if callable(per_step) else per_step * (i - zero)
                out.append(f"{sample}{labels} {v} {T0 + i * STEP_S}")

    family("container_cpu_usage_seconds", "counter", lambda s: s[0])
    family("container_memory_working_set_bytes", "gauge", lambda s: s[1])
    family("container_cpu_cfs_periods", "counter", lambda s: s[2])
    family("container_cpu_cfs_throttled_periods", "counter", lambda s: s[3])
    out.append("# TYPE container_start_time_seconds gauge")
    for (ns, pod, container, cgroup), at in STARTED.items():
        labels = f'{{namespace="{ns}",pod="{pod}",container="{container}",id="{cgroup}"}}'
        first, last, _ = LIFE[(ns, pod, container, cgroup)]
        out.extend(
            f"container_start_time_seconds{labels} {T0 + at * STEP_S} {T0 + i * STEP_S}" for i in range(first, last + 1)
        )
    out.append("# TYPE kube_pod_container_status_last_terminated_reason gauge")
    for reason, v in (("OOMKilled", 1), ("Error", 0)):
        labels = f'{{namespace="shop",pod="cart-0",container="app",reason="{reason}"}}'
        out.extend(
            f"kube_pod_container_status_last_terminated_reason{labels} {v} {T0 + i * STEP_S}" for i in range(POINTS)
        )
    for metric, label, owners in (
        ("kube_pod_owner", "pod", POD_OWNERS),
        ("kube_replicaset_owner", "replicaset", REPLICASET_OWNERS),
        ("kube_job_owner", "job_name", JOB_OWNERS),
    ):
        out.append(f"# TYPE {metric} gauge")
        for ns, rows in owners.items():
            for name, kind, owner in rows:
                controller = "<none>" if kind == "<none>" else "true"
                labels = (
                    f'{{namespace="{ns}",{label}="{name}",owner_kind="{kind}",owner_name="{owner}",'
                    f'owner_is_controller="{controller}"}}'
                )
                out.extend(f"{metric}{labels} 1 {T0 + i * STEP_S}" for i in range(POINTS))
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    """A Prometheus serving the test data's block; yields its base URL."""
    work = tmp_path_factory.mktemp("prometheus")
    data = work / "data"
    (work / "metrics.om").write_text(openmetrics())
    made = subprocess.run(
        [str(PROMTOOL), "tsdb", "create-blocks-from", "openmetrics", str(work / "metrics.om"), str(data)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    (work / "prometheus.yml").write_text("global: {scrape_interval: 15s}\n")
    (work / "web.yml").write_text(f"basic_auth_users:\n  {USER}: {BCRYPT}\n")
    port = _free_port()
    log = (work / "prometheus.log").open("w")
    proc = subprocess.Popen(
        [
            str(PROMETHEUS),
            f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={data}",
            "--storage.tsdb.retention.time=100y",  # the block's fixed 2025 timestamps must stay
            f"--web.listen-address=127.0.0.1:{port}",
            f"--web.config.file={work / 'web.yml'}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # until ready (a bound on a hung start, not on the results)
            if proc.poll() is not None:
                pytest.fail("prometheus exited:\n" + (work / "prometheus.log").read_text()[-3000:])
            try:
                with urllib.request.urlopen(urllib.request.Request(url + "/-/ready", headers=AUTH), timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            pytest.fail("prometheus did not become ready:\n" + (work / "prometheus.log").read_text()[-3000:])
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(data, ignore_errors=True)


def query_range(url: str, query: str) -> dict:
    params = urllib.parse.urlencode({"query": query, "start": START, "end": END, "step": 60})
    req = urllib.request.Request(f"{url}/api/v1/query_range?{params}", headers=AUTH)
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def query(url: str, q: str) -> dict:
    params = urllib.parse.urlencode({"query": q, "time": END})
    req = urllib.request.Request(f"{url}/api/v1/query?{params}", headers=AUTH)
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def check(*args: str):
    res = CliRunner().invoke(
        main, ["check", str(MANIFESTS), "--format", "json", "--engine", "embedded", "--fail-on", "never", *args]
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), res.stderr


def summary(report: dict) -> set[tuple[str, str, str, str]]:
    return {
        (f["rule"], f["object"]["name"], f["container"], f["details"].get("resource", "cpu"))
        for f in report["findings"]
    }


EXPECTED = {
    ("PF107", "api", "app", "memory"),  # 700Mi peak, 512Mi limit
    ("PF110", "api", "app", "cpu"),  # p50 250m, 100m request
    ("PF108", "web", "app", "cpu"),  # 4-CPU limit, 500m peak
    ("PF109", "web", "app", "cpu"),  # 2-CPU request, 500m p95
    ("PF209", "checkout", "app", "cpu"),  # 40% of periods throttled
    ("PF107", "cart", "app", "memory"),  # OOMKilled
}


def export(url: str, *args: str):
    return CliRunner().invoke(
        main, ["usage", "export", "--prometheus", url, "--end", str(END), "--window", "55m", "--step", "1m", *args]
    )


def with_password(url: str, password: str = PASSWORD) -> str:
    return url.replace("http://", f"http://{USER}:{urllib.parse.quote(password, safe='')}@")


def test_usage_export_then_check(prometheus, tmp_path):
    bundle = tmp_path / "usage.json"
    res = export(with_password(prometheus), "-o", str(bundle))
    assert res.exit_code == 0, res.output
    assert (
        "cpu 5, memory 10, periods 3, throttled 3, started 3, terminated 2, pod_owner 10, replicaset_owner 5, "
        "job_owner 1" in res.stderr
    )
    report, stderr = check("--usage", str(bundle))
    assert summary(report) == EXPECTED
    by = {(f["rule"], f["object"]["name"]): f for f in report["findings"]}
    api = by[("PF107", "api")]["details"]
    # 56 steps of each of the two pods; the working set is exact
    assert (api["max"], api["samples"], api["window_ms"]) == (700 * MI, 112, [START * 1000, END * 1000])
    assert api["p50"] == 450 * MI and api["pods"] == ["api-7d9f8c6b5-q9w8z", "api-7d9f8c6b5-x2x7k"]
    # the first container from the window's start (i=20) to its end at 110: 90 steps; the restarted
    # one from 0 at 119 to the window's end (240): 121 steps, the 2 before its first sample included
    # (it started at 119, inside the window); the other pod's container, first seen at the step of
    # 28 (1m steps from 20) though it started at 0, before the window: from 28 to 240, 212 steps,
    # not the 28 it had counted before the window too
    throttled = by[("PF209", "checkout")]["details"]
    assert (throttled["throttled_periods"], throttled["periods"], throttled["throttled_ppm"]) == (
        (90 + 121 + 212) * 60,
        (90 + 121 + 212) * 150,
        400_000,
    )
    # without the start times, the late series is taken for a new container: its 28 steps count
    bundle_doc = json.loads(bundle.read_text())
    del bundle_doc["queries"]["started"]
    no_starts = tmp_path / "no-starts.json"
    no_starts.write_text(json.dumps(bundle_doc))
    report, _ = check("--usage", str(no_starts))
    details = {(f["rule"], f["object"]["name"]): f for f in report["findings"]}[("PF209", "checkout")]["details"]
    assert details["periods"] == (90 + 121 + 240) * 150
    assert by[("PF107", "cart")]["details"]["oom_killed"] is True
    # rate() over the real TSDB: 250m per api container, within a millicore of it
    assert 249 <= by[("PF110", "api")]["details"]["p50"] <= 251
    assert (
        "usage: 2 measured containers match no container of the manifests: "
        "kube-system/coredns-5d78c9869d-8xk2p/coredns (owner Deployment/coredns, not in the manifests), "
        "shop/web-fdb45-zz2k4/app (owner ReplicaSet/web-fdb45, not in the manifests)"
    ) in stderr
    # every colliding name has its own pod's usage, and web's is its own
    measured = {(u["workload"], u["container"]): u for u in report["usage"]["containers"]}
    assert {w: measured[(w, "app")]["pods"] for w in ("StatefulSet/web", "Job/web-migrate", "CronJob/web-nightly")} == {
        "StatefulSet/web": ["web-0"],
        "Job/web-migrate": ["web-migrate-x7k2p"],
        "CronJob/web-nightly": ["web-nightly-29400000-bcd4f"],
    }
    assert measured[("Deployment/web", "app")]["pods"] == ["web-6c8d7f9b4-2kq8n"]


def test_raw_query_range_files_by_kind(prometheus, tmp_path):
    """The files a user saves from /api/v1/query_range themselves, one per kind."""
    files = {
        "cpu": 'sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{container!=""}[5m]))',
        "memory": "container_memory_working_set_bytes",  # keeps __name__ and the pod cgroup series
    }
    args = []
    for kind, q in files.items():
        path = tmp_path / f"{kind}-query.json"
        path.write_text(json.dumps(query_range(prometheus, q)))
        args += ["--usage", f"{kind}={path}" if kind == "cpu" else str(path)]
    # no throttling or termination data: PF209 and the OOM finding are not among them; without the
    # owners the orphaned ReplicaSet's pod reads as Deployment web's, and its 1.5Gi peak is web's
    expected = EXPECTED - {("PF209", "checkout", "app", "cpu"), ("PF107", "cart", "app", "memory")}
    report, _ = check(*args)
    assert summary(report) == expected | {("PF107", "web", "app", "memory")}
    # with kube-state-metrics' owners, saved from /api/v1/query, the pod is nobody's
    for kind, metric in (("pod_owner", "kube_pod_owner"), ("replicaset_owner", "kube_replicaset_owner")):
        path = tmp_path / f"{kind}.json"
        path.write_text(json.dumps(query(prometheus, metric)))
        args += ["--usage", str(path)]  # the kind from the series' __name__
    report, stderr = check(*args)
    assert summary(report) == expected
    assert "shop/web-fdb45-zz2k4/app (owner ReplicaSet/web-fdb45, not in the manifests)" in stderr


def test_export_without_the_password_is_refused_and_says_no_password(prometheus):
    res = export(prometheus)
    assert res.exit_code == 2
    assert res.stderr.startswith(f"podfit: error: {prometheus}/api/v1/query_range: HTTP 401 Unauthorized")
    res = export(with_password(prometheus, "not-the-Pa55"))
    assert res.exit_code == 2 and "HTTP 401" in res.stderr
    assert "not-the-Pa55" not in res.output and PASSWORD not in res.output


def test_export_of_one_namespace(prometheus, tmp_path):
    res = export(with_password(prometheus), "--namespace", "kube-system", "-o", str(tmp_path / "ks.json"))
    assert res.exit_code == 0, res.output
    assert (
        "cpu 1, memory 1, periods 0, throttled 0, started 0, terminated 0, pod_owner 1, replicaset_owner 1, job_owner 0"
        in res.stderr
    )


def test_a_hostile_label_value_is_one_promql_string(prometheus):
    """Quoted as podfit quotes it, a namespace that would close the selector and add `or vector(1)`
    is one label value: Prometheus parses the query and finds no such namespace."""
    hostile = 'shop"} or vector(1) #\\\n'
    for q, ranged in queries(hostile, 3300).values():
        if ranged:
            doc = query_range(prometheus, q)
            assert doc["status"] == "success" and doc["data"]["result"] == [], q
    plain = queries("shop", 3300)["memory"][0]
    assert len(query_range(prometheus, plain)["data"]["result"]) == 9
