"""Measured usage: parsing Prometheus responses and kubectl top, matching series to containers."""

from __future__ import annotations

import json

import pytest

from podfit.facts import build_facts
from podfit.loader import make_object
from podfit.platform import DEFAULT_PLATFORM
from podfit.usage import (
    Sample,
    UsageError,
    _increase,
    match_usage,
    owner_pattern,
    parse_kubectl_top,
    parse_usage,
    percentile,
)

MI = 2**20


def deployment(name, ns="shop", kind="Deployment", containers=("app",)):
    spec = {"containers": [{"name": c, "image": "x"} for c in containers]}
    doc = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": ns}}
    doc["spec"] = spec if kind == "Pod" else {"template": {"spec": spec}}
    return make_object(doc, "m.yaml")


def workloads(*objs):
    return build_facts(objs, DEFAULT_PLATFORM).workloads


def vector(kind_name, rows):
    return json.dumps(
        {
            "status": "success",
            "data": {
                "resultType": "vector",
                "result": [
                    {
                        "metric": {"__name__": kind_name, "namespace": ns, "pod": pod, "container": c},
                        "value": [1700000000.5, v],
                    }
                    for ns, pod, c, v in rows
                ],
            },
        }
    )


def test_percentiles_are_nearest_rank():
    values = list(range(1, 101))
    assert [percentile(values, p) for p in (50, 95, 99, 100)] == [50, 95, 99, 100]
    assert [percentile([7], p) for p in (50, 99)] == [7, 7]
    assert percentile([1, 2, 3, 4], 50) == 2 and percentile([1, 2, 3, 4], 95) == 4


def test_values_are_exact_integers():
    text = vector("container_cpu_usage_seconds_total", [("shop", "p", "app", "0.1"), ("shop", "q", "app", "1.2345e-3")])
    s = parse_usage(text, "cpu.json")
    assert [x.samples[0].value for x in s] == [100, 2]  # 1.2345m rounds up to 2m, like Kubernetes
    mem = parse_usage(vector("container_memory_working_set_bytes", [("shop", "p", "app", "5.36870912e+08")]), "m")
    assert mem[0].samples == (Sample(1700000000500, 536870912),)


def test_nan_samples_are_left_out_and_the_kind_must_be_known():
    doc = {
        "status": "success",
        "data": {"resultType": "matrix", "result": [{"metric": {"pod": "p"}, "values": [[1, "NaN"], [2, "0.5"]]}]},
    }
    (s,) = parse_usage(json.dumps(doc), "x.json", "cpu")
    assert [x.value for x in s.samples] == [500]
    with pytest.raises(UsageError, match="KIND=FILE"):
        parse_usage(json.dumps(doc), "x.json")
    with pytest.raises(UsageError, match="query failed"):
        parse_usage('{"status": "error", "error": "bad_data"}', "x.json", "cpu")


def test_counter_increase_survives_restarts():
    s = [Sample(i, v) for i, v in enumerate([100, 150, 160, 10, 40])]
    assert _increase(s) == 50 + 10 + 10 + 30


@pytest.mark.parametrize(
    "kind, name, pod, matches",
    [
        ("Deployment", "api", "api-7d9f8c6b5-x2x7k", True),
        ("Deployment", "api", "api-gateway-7d9f8c6b5-x2x7k", False),
        ("StatefulSet", "db", "db-12", True),
        ("StatefulSet", "db", "db-a", False),
        ("DaemonSet", "agent", "agent-x2x7k", True),
        ("CronJob", "report", "report-29012345-x2x7k", True),
        ("Job", "report", "report-29012345-x2x7k", False),
        ("Pod", "debug", "debug", True),
    ],
)
def test_pod_owner_patterns(kind, name, pod, matches):
    assert bool(owner_pattern(kind, name).match(pod)) is matches


def test_matching_takes_the_longest_owner_and_lists_the_rest():
    ws = workloads(deployment("api"), deployment("api-gateway"), deployment("web", ns="other"))
    text = (
        "NAMESPACE POD NAME CPU(cores) MEMORY(bytes)\n"
        "shop api-gateway-6b7c8d9f5-bcd4f app 10m 20Mi\n"
        "shop api-7d9f8c6b5-x2x7k app 30m 40Mi\n"
        "shop api-7d9f8c6b5-x2x7k sidecar 1m 2Mi\n"
        "web  web-5f6d7c8b9-zzzzz app 1m 1Mi\n"
    )
    u = match_usage(parse_kubectl_top(text, "top.txt"), ws)
    by = {(x.workload, x.container): (x.cpu.max, x.memory.max) for x in u.containers}
    assert by == {("Deployment/api", "app"): (30, 40 * MI), ("Deployment/api-gateway", "app"): (10, 20 * MI)}
    assert u.unmatched == ("shop/api-7d9f8c6b5-x2x7k/sidecar", "web/web-5f6d7c8b9-zzzzz/app")


def test_manifests_without_a_namespace_are_in_default():
    (w,) = workloads(deployment("api", ns=""))
    u = match_usage(
        parse_kubectl_top("NAMESPACE POD NAME CPU(cores) MEMORY(bytes)\ndefault api-5f6d7c8b9-bcd4f app 5m 1Mi\n", "t"),
        [w],
    )
    assert u.of(w, "app").cpu.max == 5


def test_kubectl_top_errors_name_the_line():
    with pytest.raises(UsageError, match="t.txt:3: expected 5 columns"):
        parse_kubectl_top("NAMESPACE POD NAME CPU(cores) MEMORY(bytes)\nns p c 1m 1Mi\nns p 1m\n", "t.txt")
    with pytest.raises(UsageError, match="no NAMESPACE POD NAME header"):
        parse_kubectl_top("NAME CPU(cores) MEMORY(bytes)\n", "t.txt")


def cronjob(name, ns="shop", containers=("app",)):
    spec = {"containers": [{"name": c, "image": "x"} for c in containers]}
    doc = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"schedule": "0 1 * * *", "jobTemplate": {"spec": {"template": {"spec": spec}}}},
    }
    return make_object(doc, "m.yaml")


@pytest.mark.parametrize(
    "kind, name, pod, matches",
    [
        # Kubernetes' generated names have no vowels and no 0, 1 or 3: "migrate" is no template hash
        ("Deployment", "web", "web-migrate-x7k2p", False),
        ("Deployment", "web", "web-6c8d7f9b4-2kq8n", True),
        ("Deployment", "web", "web-6c8d7f9b4-2kq8a", False),
        ("Job", "web-migrate", "web-migrate-x7k2p", True),
        ("Job", "web-migrate", "web-migrate-3-x7k2p", True),  # an Indexed Job's pod
        ("Job", "web", "web-29384756-x7k2p", False),  # a CronJob's: 8 digits are no completion index
        ("StatefulSet", "web", "web-0", True),
        ("StatefulSet", "web", "web-01", False),
        ("CronJob", "web-nightly", "web-nightly-29384756-q9w8z", True),
    ],
)
def test_generated_names_use_the_kubernetes_alphabet(kind, name, pod, matches):
    assert bool(owner_pattern(kind, name).match(pod)) is matches


def test_colliding_names_land_on_their_own_workloads():
    """Deployment web, Job web-migrate, CronJob web-nightly and StatefulSet web in one namespace:
    each pod's usage lands on the workload that made it, the migration's 1.5Gi peak never on web."""
    ws = workloads(
        deployment("web"),
        deployment("web-migrate", kind="Job"),
        cronjob("web-nightly"),
        deployment("web", kind="StatefulSet"),
    )
    text = (
        "NAMESPACE POD NAME CPU(cores) MEMORY(bytes)\n"
        "shop web-6c8d7f9b4-2kq8n app 100m 200Mi\n"
        "shop web-migrate-x7k2p app 900m 1536Mi\n"
        "shop web-nightly-29384756-q9w8z app 50m 64Mi\n"
        "shop web-0 app 10m 32Mi\n"
    )
    u = match_usage(parse_kubectl_top(text, "top.txt"), ws)
    by = {x.workload: (x.pods, x.memory.max) for x in u.containers}
    assert by == {
        "Deployment/web": (("web-6c8d7f9b4-2kq8n",), 200 * MI),
        "Job/web-migrate": (("web-migrate-x7k2p",), 1536 * MI),
        "CronJob/web-nightly": (("web-nightly-29384756-q9w8z",), 64 * MI),
        "StatefulSet/web": (("web-0",), 32 * MI),
    }
    assert u.unmatched == () and u.ambiguous == ()


def test_a_pod_two_workloads_could_own_is_listed_not_guessed():
    # DaemonSet web-bcd's pods and Deployment web's (template hash "bcd") read alike
    ws = workloads(deployment("web"), deployment("web-bcd", kind="DaemonSet"))
    text = "NAMESPACE POD NAME CPU(cores) MEMORY(bytes)\nshop web-bcd-fghjk app 100m 200Mi\n"
    u = match_usage(parse_kubectl_top(text, "top.txt"), ws)
    assert u.containers == ()
    assert u.ambiguous == ("shop/web-bcd-fghjk/app (DaemonSet/web-bcd or Deployment/web)",)
    from podfit.usage import unmatched_notice

    assert unmatched_notice(u)[1] == (
        "usage: 1 measured container(s) have pods more than one workload could own, and count for none: "
        "shop/web-bcd-fghjk/app (DaemonSet/web-bcd or Deployment/web)"
    )


def test_a_job_pod_is_not_taken_for_a_deployment_pod():
    """The manifests hold Deployment web but not the Job whose pod web-migrate-x7k2p ran a migration:
    its 1.5Gi peak is unmatched, not web's."""
    ws = workloads(deployment("web"))
    text = (
        "NAMESPACE POD NAME CPU(cores) MEMORY(bytes)\n"
        "shop web-6c8d7f9b4-2kq8n app 100m 200Mi\n"
        "shop web-migrate-x7k2p app 900m 1536Mi\n"
    )
    u = match_usage(parse_kubectl_top(text, "top.txt"), ws)
    (web,) = u.containers
    assert (web.workload, web.pods, web.memory.max) == ("Deployment/web", ("web-6c8d7f9b4-2kq8n",), 200 * MI)
    assert u.unmatched == ("shop/web-migrate-x7k2p/app",)
