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
        "usage: 1 measured container has pods more than one workload could own, and count for none: "
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


# ------------------------------------------------------------ kube-state-metrics owner references ---


def owner_vector(metric, label, rows, controller="true"):
    """kube-state-metrics' ``metric`` (kube_pod_owner, …): one series per (namespace, name, kind, owner)."""
    result = [
        {
            "metric": {
                "__name__": metric,
                "namespace": ns,
                label: name,
                "owner_kind": kind,
                "owner_name": owner,
                "owner_is_controller": controller,
            },
            "value": [1700000000, "1"],
        }
        for ns, name, kind, owner in rows
    ]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})


def colliding():
    """Deployment web, StatefulSet web, Job web-migrate, CronJob web-nightly and DaemonSet web-bff:
    the DaemonSet's pod web-bff-x2x7k is also a name Deployment web gives (hash bff, suffix x2x7k)."""
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "web-nightly", "namespace": "shop"},
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "x"}]}}}}},
    }
    return workloads(
        deployment("web"),
        deployment("web", kind="StatefulSet"),
        deployment("web-migrate", kind="Job"),
        make_object(cron, "m.yaml"),
        deployment("web-bff", kind="DaemonSet"),
    )


PODS = [
    ("shop", "web-6c8d7f9b4-2kq8n", "ReplicaSet", "web-6c8d7f9b4"),
    ("shop", "web-0", "StatefulSet", "web"),
    ("shop", "web-migrate-x7k2p", "Job", "web-migrate"),
    ("shop", "web-nightly-29400000-bcd4f", "Job", "web-nightly-29400000"),
    ("shop", "web-bff-x2x7k", "DaemonSet", "web-bff"),
    ("shop", "web-fdb45-zz2k4", "ReplicaSet", "web-fdb45"),  # an orphaned ReplicaSet's pod
    ("shop", "debug", "<none>", "<none>"),
]
MEMORY = [
    ("shop", pod, "app", str(mi * MI))
    for pod, mi in (
        ("web-6c8d7f9b4-2kq8n", 200),
        ("web-0", 300),
        ("web-migrate-x7k2p", 1536),
        ("web-nightly-29400000-bcd4f", 400),
        ("web-bff-x2x7k", 50),
        ("web-fdb45-zz2k4", 60),
        ("debug", 70),
    )
]


def test_owner_references_decide_and_patterns_alone_do_not():
    mem = parse_usage(vector("container_memory_working_set_bytes", MEMORY), "memory.json")
    by_pattern = match_usage(mem, colliding())
    # without the owners the DaemonSet's pod and the orphan's are Deployment web's by name
    assert by_pattern.ambiguous == ("shop/web-bff-x2x7k/app (DaemonSet/web-bff or Deployment/web)",)
    assert {u.workload: u.pods for u in by_pattern.containers}["Deployment/web"] == (
        "web-6c8d7f9b4-2kq8n",
        "web-fdb45-zz2k4",
    )

    owners = (
        parse_usage(owner_vector("kube_pod_owner", "pod", PODS), "o.json")
        + parse_usage(
            owner_vector(
                "kube_replicaset_owner",
                "replicaset",
                [("shop", "web-6c8d7f9b4", "Deployment", "web"), ("shop", "web-fdb45", "<none>", "<none>")],
            ),
            "o.json",
        )
        + parse_usage(
            owner_vector("kube_job_owner", "job_name", [("shop", "web-nightly-29400000", "CronJob", "web-nightly")]),
            "o.json",
        )
    )
    u = match_usage(mem + owners, colliding())
    got = {u.workload: (u.pods, u.memory.max // MI) for u in u.containers}
    assert got == {
        "Deployment/web": (("web-6c8d7f9b4-2kq8n",), 200),
        "StatefulSet/web": (("web-0",), 300),
        "Job/web-migrate": (("web-migrate-x7k2p",), 1536),
        "CronJob/web-nightly": (("web-nightly-29400000-bcd4f",), 400),
        "DaemonSet/web-bff": (("web-bff-x2x7k",), 50),
    }
    assert u.ambiguous == ()
    assert u.unmatched == (
        "shop/debug/app (owner Pod/debug, not in the manifests)",
        "shop/web-fdb45-zz2k4/app (owner ReplicaSet/web-fdb45, not in the manifests)",
    )
    assert u.sources == ("memory.json",)


def test_a_partly_known_chain_takes_the_maker_by_name_and_a_reused_name_counts_for_none():
    mem = parse_usage(vector("container_memory_working_set_bytes", MEMORY), "memory.json")
    # the pods' owners are known, the ReplicaSets' and Jobs' are not: the Deployment and the
    # CronJob are found by the names they give their ReplicaSets and Jobs
    pods = PODS + [("shop", "web-0", "Pod", "web-0-old")]  # web-0 was also another owner's pod
    u = match_usage(mem + parse_usage(owner_vector("kube_pod_owner", "pod", pods), "o.json"), colliding())
    got = {u.workload: u.pods for u in u.containers}
    assert got["Deployment/web"] == ("web-6c8d7f9b4-2kq8n", "web-fdb45-zz2k4")
    assert got["CronJob/web-nightly"] == ("web-nightly-29400000-bcd4f",)
    assert "StatefulSet/web" not in got
    assert u.ambiguous == ("shop/web-0/app (Pod/web-0-old or StatefulSet/web)",)


def test_references_that_are_not_the_controller_are_left_out():
    (s,) = parse_usage(owner_vector("kube_pod_owner", "pod", [("shop", "p", "ReplicaSet", "r")]), "o.json")
    assert (s.kind, s.pod, s.owner_kind, s.owner_name) == ("pod_owner", "p", "ReplicaSet", "r")
    other = owner_vector("kube_pod_owner", "pod", [("shop", "p", "ConfigMap", "c")], controller="false")
    assert parse_usage(other, "o.json") == []


def test_a_counter_that_began_in_the_window_counts_from_zero():
    """A container restarted (or a pod started) at 90 s: its counter's series begins then, and the
    periods it counted before its first sample are in the increase, as they are in the bundle's window."""

    def matrix(rows):
        result = [
            {
                "metric": {
                    "__name__": "container_cpu_cfs_periods_total",
                    "namespace": "shop",
                    "pod": p,
                    "container": "app",
                    "id": i,
                },
                "values": v,
            }
            for p, i, v in rows
        ]
        return {"status": "success", "data": {"resultType": "matrix", "result": result}}

    rows = [
        ("api-7d9f8c6b5-x2x7k", "old", [[0, "1000"], [60, "1600"]]),  # ran before the window
        ("api-7d9f8c6b5-x2x7k", "new", [[120, "300"], [180, "900"]]),  # restarted at ~90 s
    ]
    a, b = parse_usage(json.dumps(matrix(rows)), "periods.json")
    assert (a.began, b.began) == (False, True)
    assert (_increase(a.samples, a.began), _increase(b.samples, b.began)) == (600, 900)
    u = match_usage([a, b], workloads(deployment("api")))
    assert u.containers[0].periods == 1500
    # in a bundle the window's start decides: a series present from the start did not begin in it
    bundle = {
        "kind": "PodfitUsage",
        "window": {"start": 0, "end": 180, "step": 60},
        "queries": {"periods": {"response": matrix(rows[1:])}},
    }
    (c,) = parse_usage(json.dumps(bundle), "usage.json")
    assert c.began is True
    bundle["window"]["start"] = 120
    (c,) = parse_usage(json.dumps(bundle), "usage.json")
    assert c.began is False and _increase(c.samples, c.began) == 600


def test_throttle_container_follows_the_owners_too():
    """`podfit throttle --container` without manifests: with owner references, DaemonSet web-bff's
    pod is not Deployment web's, though its name reads as one of web's."""
    from podfit.usage import measured_container

    cpu = parse_usage(
        vector("container_cpu_usage_seconds_total", [("shop", p, "app", "0.5") for p, _ in _MEM_PODS]), "cpu.json"
    )
    assert measured_container(cpu, "shop/Deployment/web/app").pods == (
        "web-6c8d7f9b4-2kq8n",
        "web-bff-x2x7k",
        "web-fdb45-zz2k4",
    )
    owners = parse_usage(owner_vector("kube_pod_owner", "pod", PODS), "o.json") + parse_usage(
        owner_vector("kube_replicaset_owner", "replicaset", [("shop", "web-6c8d7f9b4", "Deployment", "web")]), "o.json"
    )
    u = measured_container(cpu + owners, "shop/Deployment/web/app")
    # web-fdb45's ReplicaSet has no known owner: its name still reads as web's (web-<hash>)
    assert u.pods == ("web-6c8d7f9b4-2kq8n", "web-fdb45-zz2k4")
    assert measured_container(cpu + owners, "shop/DaemonSet/web-bff/app").pods == ("web-bff-x2x7k",)
    assert measured_container(cpu + owners, "shop/StatefulSet/web/app").pods == ("web-0",)


_MEM_PODS = [(pod, None) for _, pod, _, _ in MEMORY]


def test_start_times_tell_a_scrape_gap_from_a_restart():
    """container_start_time_seconds (kind ``started``) beside the counters of a bundle whose window
    starts at 1000 s. A series first seen at 1120 s whose container started at 400 s lost its first
    samples to a scrape gap: only the increase from its first sample counts (600), not the 1000 it
    held (counted before the window). One that started at 1090 s counted from zero (900). In a series
    without a per-instance id, a start between two samples is a restart even where the counter did
    not drop (the new container counted 2000 before the next sample); with no start between, a drop
    is still a reset, as rate() takes it."""

    def series(pod, instance, values, metric="container_cpu_cfs_periods_total"):
        labels = {"__name__": metric, "namespace": "shop", "pod": pod, "container": "app"}
        if instance:
            labels["id"] = instance
        return {"metric": labels, "values": values}

    def bundle(periods, started):
        return json.dumps(
            {
                "kind": "PodfitUsage",
                "window": {"start": 1000, "end": 1600, "step": 60},
                "queries": {
                    "periods": {"response": {"status": "success", "data": {"resultType": "matrix", "result": periods}}},
                    "started": {"response": {"status": "success", "data": {"resultType": "matrix", "result": started}}},
                },
            }
        )

    pod = "api-7d9f8c6b5-x2x7k"
    periods = [
        series(pod, "/gap", [[1120, "1000"], [1180, "1600"]]),
        series(pod, "/new", [[1120, "300"], [1180, "900"]]),
    ]
    started = [
        series(pod, "/gap", [[1120, "400"], [1180, "400"]], "container_start_time_seconds"),
        series(pod, "/new", [[1120, "1090"], [1180, "1090"]], "container_start_time_seconds"),
    ]
    parsed = parse_usage(bundle(periods, started), "usage.json")
    assert {s.kind for s in parsed} == {"periods", "started"}
    u = match_usage(parsed, workloads(deployment("api")))
    assert u.containers[0].periods == 600 + 900
    # without the start times both series began in the window: 1600 + 900
    without = [s for s in parsed if s.kind == "periods"]
    assert match_usage(without, workloads(deployment("api"))).containers[0].periods == 1600 + 900
    # one series for every instance (no id): restarted at 1150 s, the counter 2000 at 1180 s is all new
    merged = [series(pod, "", [[1000, "500"], [1060, "800"], [1120, "1000"], [1180, "2000"], [1240, "100"]])]
    restarts = [series(pod, "", [[1000, "400"], [1180, "1150"]], "container_start_time_seconds")]
    parsed = parse_usage(bundle(merged, restarts), "usage.json")
    # 300 + 200, then the restart: 2000, then a drop with no start between: a reset, 100
    assert match_usage(parsed, workloads(deployment("api"))).containers[0].periods == 300 + 200 + 2000 + 100
    parsed = parse_usage(bundle(merged, []), "usage.json")
    assert match_usage(parsed, workloads(deployment("api"))).containers[0].periods == 300 + 200 + 1000 + 100
