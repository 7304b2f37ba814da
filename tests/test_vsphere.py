"""The vSphere analyzer's core: every vSphere figure of DESIGN.md's reference list, HA policies,
reservations, DRS placement, what-if, and property tests."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podfit.loader import InputFile, load
from podfit.model import Container, Location, PodSpec, Resources
from podfit.platform import DEFAULT_PLATFORM, HAPolicy, HostGroup, NodePool, Platform
from podfit.vsphere import (
    VM,
    GiB,
    analyze_capacity,
    capacity,
    critical_workloads,
    crx_size,
    describe_crx,
    loadbalancer_groups,
    mhz,
    overcommit_exceeds,
    place,
    reservations_of,
    what_if,
)
from podfit.workloads import build_workloads

MiB = 2**20


def objects_of(text: str, name: str = "in.yaml"):
    result = load([InputFile(name, text.encode())])
    assert not result.findings, result.findings
    return result.objects


def workloads_of(text: str):
    ws, findings = build_workloads(objects_of(text))
    assert not findings
    return ws


def container(name="c", cpu_req=None, cpu_lim=None, mem_req=None, mem_lim=None, init=False, sidecar=False) -> Container:
    declared = Resources(cpu_request=cpu_req, cpu_limit=cpu_lim, memory_request=mem_req, memory_limit=mem_lim)
    # Kubernetes defaulting (request = limit when unset), through the model's own function
    effective = declared.with_defaults(Resources(), Resources())
    return Container(name, "img", effective, declared, Location("x.yaml", 1), init=init, sidecar=sidecar)


def pod(*containers: Container, inits: tuple[Container, ...] = ()) -> PodSpec:
    return PodSpec(containers=tuple(containers), init_containers=inits)


def hosts_platform(
    count: int,
    sockets: int,
    cores: int,
    base_mhz: int,
    memory: int = 512 * GiB,
    ha: HAPolicy = HAPolicy(),
    pools=(),
    runtime: str = "tkg",
    **kw,
) -> Platform:
    return Platform(
        name="t",
        source="t.yaml",
        is_default=False,
        runtime=runtime,
        hosts=(HostGroup("esxi", count, sockets, cores, 2, base_mhz, memory, **kw),),
        ha=ha,
        node_pools=tuple(pools),
    )


def tkc(name: str, workers: int, worker_class: str, cp_class: str = "best-effort-small", cp: int = 1) -> str:
    return f"""apiVersion: run.tanzu.vmware.com/v1alpha3
kind: TanzuKubernetesCluster
metadata: {{name: {name}, namespace: ns}}
spec:
  topology:
    controlPlane: {{replicas: {cp}, vmClass: {cp_class}, storageClass: vsan}}
    nodePools:
      - {{name: workers, replicas: {workers}, vmClass: {worker_class}, storageClass: vsan}}
"""


# ------------------------------------------------------------------- DESIGN.md reference list ---


def test_study_cluster_294400_mhz_and_220800_after_ha():
    cap = capacity(DEFAULT_PLATFORM)
    assert cap.cpu_total_mhz == 4 * 2 * 16 * 2300 == 294_400
    assert cap.cpu_ha_reserved_mhz == 73_600
    assert cap.cpu_available_mhz == 220_800
    assert cap.memory_total_bytes == 4 * 512 * GiB
    assert cap.memory_available_bytes == 3 * 512 * GiB
    assert cap.physical_cores == 128  # hyper-threads never count


def test_16_core_2600_mhz_host_has_41600_mhz():
    p = hosts_platform(1, 1, 16, 2600)
    assert capacity(p).cpu_total_mhz == 41_600
    # threads per core do not change it
    p2 = replace(p, hosts=(replace(p.hosts[0], threads_per_core=1),))
    assert capacity(p2).cpu_total_mhz == 41_600


def test_750m_is_1950_mhz_on_a_2600_mhz_core():
    assert mhz(750, 2600) == 1950
    size = crx_size(pod(container(cpu_req=750)), 2600)
    assert size.cpu_reservation_mhz == 1950
    assert size.vcpus == 1


REDIS = """apiVersion: v1
kind: Pod
metadata: {name: none}
spec:
  containers: [{name: redis, image: redis}]
---
apiVersion: v1
kind: Pod
metadata: {name: request-2}
spec:
  containers: [{name: redis, image: redis, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: request-2-limit-8}
spec:
  containers: [{name: redis, image: redis, resources: {requests: {cpu: "2"}, limits: {cpu: "8"}}}]
"""


def test_redis_crx_cases_1_2_and_8_vcpus_with_2_reserved():
    ws = {w.ref.name: w for w in workloads_of(REDIS)}
    none = crx_size(ws["none"].pod, 2600)
    assert (none.vcpus, none.cpu_reservation_mhz, none.cpu_limit_mhz) == (1, 0, None)
    assert none.memory_bytes == GiB and none.memory_reservation_bytes == 0
    req = crx_size(ws["request-2"].pod, 2600)
    assert (req.vcpus, req.cpu_reservation_mhz, req.cpu_limit_mhz) == (2, 2 * 2600, None)
    lim = crx_size(ws["request-2-limit-8"].pod, 2600)
    assert lim.vcpus == 8
    assert lim.cpu_reservation_mhz == 2 * 2600  # only two of the eight CPUs reserved
    assert lim.cpu_limit_mhz == 8 * 2600
    assert "ceil(Σ CPU limits)" in lim.why["vcpus"] and "requests but no limits" in req.why["vcpus"]


def test_memory_capped_at_three_times_requests_with_several_containers():
    # Σ limits 12Gi; 3 × Σ requests = 9Gi; largest limit 8Gi → 9Gi
    p = pod(container("a", mem_req=2 * GiB, mem_lim=8 * GiB), container("b", mem_req=GiB, mem_lim=4 * GiB))
    s = crx_size(p, 2300)
    assert s.memory_bytes == 9 * GiB
    assert s.memory_reservation_bytes == 3 * GiB
    assert "max(3 × Σ requests" in s.why["memory_bytes"]
    # the largest single limit wins over 3 × requests: Σ limits 10Gi, 3 × 2Gi = 6Gi, largest 8Gi → 8Gi
    p = pod(container("a", mem_req=GiB, mem_lim=8 * GiB), container("b", mem_req=GiB, mem_lim=2 * GiB))
    assert crx_size(p, 2300).memory_bytes == 8 * GiB
    # below the cap: Σ limits
    p = pod(container("a", mem_req=GiB, mem_lim=2 * GiB), container("b", mem_req=GiB, mem_lim=2 * GiB))
    assert crx_size(p, 2300).memory_bytes == 4 * GiB
    # requests only: Σ requests
    p = pod(container("a", mem_req=GiB), container("b", mem_req=512 * MiB))
    assert crx_size(p, 2300).memory_bytes == GiB + 512 * MiB


def test_overcommit_180_vcpus_on_120_cores_is_150_percent():
    p = hosts_platform(4, 2, 15, 2300, pools=[NodePool("best-effort-large", 45, "w", "c")])  # 45 × 4 = 180 vCPUs
    r = analyze_capacity(_vms((), (), p), p, placement=False)
    assert (r.vcpus, r.capacity.physical_cores, r.overcommit_percent) == (180, 120, 150)
    assert not overcommit_exceeds(180, 120, 150) and overcommit_exceeds(180, 120, 149)


def test_20_clusters_of_6_vcpus_on_a_40_core_host_is_300_percent():
    # each cluster: two best-effort medium workers and a best-effort small control plane = 6 vCPUs
    p = hosts_platform(1, 2, 20, 2300)

    def vcpus(n: int) -> int:
        objs = objects_of("---\n".join(tkc(f"c{i}", 2, "best-effort-medium") for i in range(n)))
        return sum(v.vcpus * v.count for v in _vms(objs, (), p))

    assert vcpus(1) == 6
    assert vcpus(20) * 100 // 40 == 300
    assert not overcommit_exceeds(vcpus(20), 40, 300)  # the study's peak: at the default threshold
    assert overcommit_exceeds(vcpus(21), 40, 300)


def test_four_16_vcpu_clusters_on_32_cores_is_200_percent_and_only_two_guaranteed_fit():
    host = hosts_platform(1, 2, 16, 2300)  # one 32-core host, no HA
    pools = [NodePool("best-effort-xlarge", 4, "w", f"c{i}") for i in range(4)]
    r = analyze_capacity(_vms((), (), replace(host, node_pools=tuple(pools))), host, placement=False)
    assert r.overcommit_percent == 200
    # guaranteed: one cluster (4 × xlarge = 16 vCPUs) admitted, room for exactly one more
    base = replace(host, node_pools=(NodePool("guaranteed-xlarge", 4, "w", "g0"),))
    from podfit.vsphere import vms_from_node_pools

    unit, _ = vms_from_node_pools([NodePool("guaranteed-xlarge", 4, "w", "g1")], host)
    w = what_if(_vms((), (), base), unit, host, time_budget=2)
    assert (w.ha_limit, w.admitted, w.proven) == (1, 1, True)
    # best-effort clusters reserve nothing: admission control never refuses them
    be, _ = vms_from_node_pools([NodePool("best-effort-xlarge", 4, "w", "b")], host)
    assert what_if(_vms((), (), base), be, host).admitted is None


# ------------------------------------------------------------------------------ HA policies ---


def test_ha_reserves_the_n_largest_hosts_per_resource():
    p = Platform(
        hosts=(
            HostGroup("big", 1, 2, 20, 2, 3000, 256 * GiB),  # 120,000 MHz, 256 GiB
            HostGroup("small", 3, 2, 10, 2, 2000, 512 * GiB),  # 40,000 MHz, 512 GiB each
        ),
        ha=HAPolicy(host_failures_tolerated=1),
    )
    cap = capacity(p)
    assert cap.cpu_total_mhz == 240_000 and cap.cpu_ha_reserved_mhz == 120_000
    assert cap.memory_ha_reserved_bytes == 512 * GiB  # the largest by memory is another host
    p2 = replace(p, ha=HAPolicy(host_failures_tolerated=2))
    assert capacity(p2).cpu_ha_reserved_mhz == 160_000
    p9 = replace(p, ha=HAPolicy(host_failures_tolerated=9))
    assert capacity(p9).cpu_available_mhz == 0 and capacity(p9).memory_available_bytes == 0


def test_ha_percentages_round_the_reservation_up():
    p = hosts_platform(3, 1, 10, 2333, ha=HAPolicy(cpu_percent=25, memory_percent=10), memory=100 * GiB + 1)
    cap = capacity(p)
    total = 3 * 10 * 2333
    assert cap.cpu_ha_reserved_mhz == -(-total * 25 // 100)
    assert cap.memory_ha_reserved_bytes == -(-(3 * (100 * GiB + 1)) * 10 // 100)
    assert "25% CPU" in cap.ha_policy


def test_a_percentage_for_one_resource_only_assumes_the_same_for_the_other_and_says_so():
    # 4 hosts × 10 cores × 2,000 MHz, 100Gi: cpuPercent 25 alone reserves 25% of memory too
    only_cpu = capacity(hosts_platform(4, 1, 10, 2000, memory=100 * GiB, ha=HAPolicy(cpu_percent=25)))
    assert only_cpu.cpu_ha_reserved_mhz == 20_000 and only_cpu.memory_ha_reserved_bytes == 100 * GiB
    assert only_cpu.ha_policy == "25% CPU, 25% memory assumed (the profile gives cpuPercent only)"
    only_mem = capacity(hosts_platform(4, 1, 10, 2000, memory=100 * GiB, ha=HAPolicy(memory_percent=50)))
    assert only_mem.cpu_ha_reserved_mhz == 40_000 and only_mem.memory_ha_reserved_bytes == 200 * GiB
    assert only_mem.ha_policy == "50% memory, 50% CPU assumed (the profile gives memoryPercent only)"
    # with host failures tolerated, those cover the resource without a percentage (and say which)
    mixed = capacity(
        hosts_platform(4, 1, 10, 2000, memory=100 * GiB, ha=HAPolicy(host_failures_tolerated=1, cpu_percent=25))
    )
    assert mixed.memory_ha_reserved_bytes == 100 * GiB and mixed.cpu_ha_reserved_mhz == 20_000
    assert mixed.ha_policy == "25% CPU, 1 host failure tolerated (for memory)"


def test_pf501_names_the_assumed_percentage(tmp_path):
    from click.testing import CliRunner

    from podfit.cli import main

    platform = tmp_path / "p.yaml"
    platform.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: p}\nspec:\n  runtime: tkg\n"
        "  hosts: [{name: h, count: 2, sockets: 1, coresPerSocket: 8, threadsPerCore: 1, baseMHz: 2000, memory: 64Gi}]\n"
        "  ha: {cpuPercent: 50}\n"
        "  nodePools: [{name: w, vmClass: guaranteed-large, count: 3}]\n"
    )
    # 3 × guaranteed-large reserve 48Gi of memory; 128Gi less the assumed 50% leaves 64Gi: fits;
    # CPU: 3 × 4 × 2,000 = 24,000 MHz > 16,000 available after 50%
    app = tmp_path / "app.yaml"
    app.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    res = CliRunner().invoke(
        main, ["check", str(app), "--platform", str(platform), "--rule", "PF501", "--format", "json"]
    )
    import json

    (f,) = json.loads(res.output)["findings"]
    assert "50% memory assumed (the profile gives cpuPercent only)" in f["message"]


def test_dedicated_failover_hosts_are_removed_from_capacity_and_placement():
    p = Platform(
        hosts=(
            HostGroup("run", 2, 1, 16, 2, 2000, 256 * GiB),
            HostGroup("spare", 1, 1, 16, 2, 2000, 256 * GiB, dedicated_failover=True),
        )
    )
    cap = capacity(p)
    assert (cap.cpu_total_mhz, cap.cpu_ha_reserved_mhz, cap.cpu_available_mhz) == (96_000, 32_000, 64_000)
    assert cap.physical_cores == 32
    vms = [VM("vm", "node", 3, 8, 16_000, GiB)]  # 3 VMs of half a host: only two hosts run VMs
    res = place(vms, p, 2)
    assert res.feasible is True and len(res.hosts) == 2
    assert place([VM("vm", "node", 5, 8, 16_000, GiB)], p, 2).feasible is False


def test_placement_proof_names_only_the_vm_larger_than_every_host():
    # hosts of 32,000 MHz: "Pod a-2" (40,000 MHz) fits none; "Pod a", whose name is a prefix of it, fits
    p = Platform(hosts=(HostGroup("run", 2, 1, 16, 2, 2000, 256 * GiB),))
    res = place([VM("Pod a-2", "crx", 1, 20, 40_000, GiB), VM("Pod a", "crx", 1, 1, 1_000, GiB)], p, 2)
    assert res.feasible is False and res.proof != "solver"
    assert res.about == ("Pod a-2",)


# ------------------------------------------------------------------------------ reservations ---


def test_guaranteed_classes_reserve_everything_best_effort_nothing_control_planes_counted():
    objs = objects_of(
        tkc("a", 3, "guaranteed-large", cp_class="guaranteed-small", cp=3)
        + "---\n"
        + tkc("b", 5, "best-effort-2xlarge")
    )
    vms = _vms(objs, (), DEFAULT_PLATFORM)
    r = analyze_capacity(vms, DEFAULT_PLATFORM, placement=False)
    assert r.cpu_reserved_mhz == (3 * 4 + 3 * 2) * 2300
    assert r.memory_reserved_bytes == 3 * 16 * GiB + 3 * 4 * GiB
    assert r.vcpus == 3 * 4 + 3 * 2 + 5 * 8 + 2
    kinds = {v.name: v.kind for v in vms}
    assert kinds["a/a-control-plane"] == "control-plane"


def test_crx_reservations_only_on_vsphere_pods():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: team}
spec:
  replicas: 3
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: a, image: a, resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: "2", memory: 2Gi}}}]
"""
    objs = objects_of(text)
    ws, _ = build_workloads(objs)
    sup = hosts_platform(4, 1, 16, 2600, ha=HAPolicy(host_failures_tolerated=1), runtime="vsphere-pods")
    vms = _vms(objs, ws, sup)
    assert [(v.kind, v.count, v.vcpus, v.cpu_reservation_mhz, v.memory_reservation_bytes) for v in vms] == [
        ("crx", 3, 2, 1300, GiB)
    ]
    assert _vms(objs, ws, replace(sup, runtime="tkg")) == ()


# ----------------------------------------------------------------------------------- CRX cases ---


def test_limits_without_requests_reserve_the_limit():
    s = crx_size(pod(container(cpu_lim=1500, mem_lim=2 * GiB)), 2000)
    assert (s.vcpus, s.cpu_reservation_mhz, s.cpu_limit_mhz) == (2, 3000, 3000)
    assert (s.memory_bytes, s.memory_reservation_bytes) == (2 * GiB, 2 * GiB)


def test_some_containers_with_limits_some_without_count_the_request():
    # app: 1 → limit 3; sidecar-like second container: request 500m, no limit → counts 500m
    s = crx_size(pod(container("a", cpu_req=1000, cpu_lim=3000), container("b", cpu_req=500)), 2000)
    assert s.cpu_limit_mhz == 7000 and s.vcpus == 4 and s.cpu_reservation_mhz == 3000


def test_init_containers_size_the_crx_when_larger_than_the_app():
    big_init = container("migrate", cpu_req=3000, cpu_lim=3000, mem_req=4 * GiB, mem_lim=4 * GiB, init=True)
    s = crx_size(pod(container("a", cpu_req=500, cpu_lim=1000, mem_req=GiB, mem_lim=GiB), inits=(big_init,)), 2000)
    assert s.vcpus == 3 and s.cpu_reservation_mhz == 6000 and s.memory_bytes == 4 * GiB
    # a sidecar (restartPolicy Always) runs alongside: it adds
    side = container("proxy", cpu_req=500, cpu_lim=500, init=True, sidecar=True)
    s = crx_size(pod(container("a", cpu_req=500, cpu_lim=1000), inits=(side,)), 2000)
    assert s.cpu_limit_mhz == 3000 and s.cpu_reservation_mhz == 2000


def test_no_hosts_means_mhz_unknown():
    s = crx_size(pod(container(cpu_req=1000)), None)
    assert s.cpu_reservation_mhz is None and s.vcpus == 1


def test_a_sidecar_declared_before_an_init_container_runs_beside_it():
    side = container("envoy", cpu_req=1000, mem_req=512 * MiB, init=True, sidecar=True)
    migrate = container("migrate", cpu_req=2000, mem_req=2 * GiB, init=True)
    app = container("app", cpu_req=1000, mem_req=GiB)
    s = crx_size(pod(app, inits=(side, migrate)), 2600)
    # while migrate runs: 2 + 1 CPUs, 2Gi + 512Mi; afterwards app + sidecar: 2 CPUs, 1.5Gi
    assert (s.vcpus, s.cpu_reservation_mhz, s.memory_bytes) == (3, 7800, 2560 * MiB)
    # declared after the init container, the sidecar starts once it is done
    s = crx_size(pod(app, inits=(migrate, side)), 2600)
    assert (s.vcpus, s.cpu_reservation_mhz, s.memory_bytes) == (2, 5200, 2 * GiB)


def test_what_sized_the_crx():
    s = crx_size(pod(container()), 2600)
    assert (s.cpu_from, s.memory_from, s.memory_limits_bytes, s.memory_cap_bytes) == ("none", "none", None, None)
    s = crx_size(pod(container(cpu_req=2000, mem_req=GiB)), 2600)
    assert (s.cpu_from, s.memory_from, s.memory_capped) == ("requests", "requests", False)
    s = crx_size(
        pod(
            container(cpu_req=500, cpu_lim=1000, mem_req=GiB, mem_lim=8 * GiB),
            container("b", cpu_req=500, cpu_lim=1000, mem_req=GiB, mem_lim=8 * GiB),
        ),
        2600,
    )
    assert (s.cpu_from, s.memory_from) == ("limits", "limits")
    assert (s.memory_limits_bytes, s.memory_cap_bytes, s.memory_bytes, s.memory_capped) == (
        16 * GiB,
        8 * GiB,
        8 * GiB,
        True,
    )
    assert "capped" in s.why["memory_bytes"]


def test_describe_crx_gives_the_figures_of_podfit_vsphere_crx():
    assert describe_crx(crx_size(pod(container()), 2600)) == "1 vCPU (0 MHz reserved) and 1Gi of memory"
    s = crx_size(pod(container(cpu_req=2000, cpu_lim=8000, mem_req=4 * GiB)), 2600)
    assert describe_crx(s) == "8 vCPUs (CPU limit 20,800 MHz, 5,200 MHz reserved) and 4Gi of memory"
    assert describe_crx(crx_size(pod(container(cpu_req=1500, mem_req=GiB)), None)) == "2 vCPUs and 1Gi of memory"


# --------------------------------------------------------------------------------- placement ---


def brute_force_placeable(items: list[tuple[int, int]], hosts: list[tuple[int, int]]) -> bool:
    for assign in itertools.product(range(len(hosts)), repeat=len(items)):
        used = [[0, 0] for _ in hosts]
        for (c, m), h in zip(items, assign, strict=True):
            used[h][0] += c
            used[h][1] += m
        if all(u[0] <= h[0] and u[1] <= h[1] for u, h in zip(used, hosts, strict=True)):
            return True
    return False


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 10), st.integers(0, 10)), min_size=1, max_size=5),
    st.integers(1, 3),
    st.integers(4, 12),
    st.integers(4, 12),
)
def test_placement_agrees_with_brute_force(items, n_hosts, host_cpu, host_mem):
    p = Platform(hosts=(HostGroup("h", n_hosts, 1, host_cpu, 1, 1000, host_mem * GiB),))
    vms = [VM(f"vm{i}", "node", 1, 1, c * 1000, m * GiB) for i, (c, m) in enumerate(items)]
    res = place(vms, p, 5)
    assert res.feasible is brute_force_placeable(
        [(c * 1000, m * GiB) for c, m in items], [(host_cpu * 1000, host_mem * GiB)] * n_hosts
    )
    if res.feasible:
        for h in res.hosts:
            assert h.cpu_reserved_mhz <= h.cpu_capacity_mhz and h.memory_reserved_bytes <= h.memory_capacity_bytes


def test_what_if_replicas_stop_at_drs_before_ha():
    # 4 hosts of 32,000 MHz, no HA: a CRX reserving 20,000 MHz fits once per host, though the
    # total (128,000) holds six
    p = hosts_platform(4, 1, 16, 2000, runtime="vsphere-pods")
    unit = [VM("crx", "crx", 1, 10, 20_000, GiB, source="Deployment big")]
    w = what_if((), unit, p, time_budget=2)
    assert w.ha_limit == 6 and w.admitted == 4 and w.proven


def test_critical_from_platform_or_cluster_annotation():
    plain = objects_of(tkc("a", 1, "best-effort-small"))
    marked = objects_of(
        tkc("a", 1, "best-effort-small").replace(
            "metadata: {name: a, namespace: ns}",
            "metadata: {name: a, namespace: ns, annotations: {podfit.io/critical: 'true'}}",
        )
    )
    assert not critical_workloads(DEFAULT_PLATFORM, plain)
    assert critical_workloads(DEFAULT_PLATFORM, marked)
    assert critical_workloads(replace(DEFAULT_PLATFORM, critical=True), plain)


def test_loadbalancers_grouped_per_namespace_on_supervisor_and_per_cluster_on_tkg():
    from podfit.facts import build_facts

    svc = "apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}, namespace: {ns}}}\nspec: {{type: {t}}}\n"
    text = "---\n".join(
        [svc.format(i=i, ns="a", t="LoadBalancer") for i in range(3)]
        + [svc.format(i=i, ns="b", t="LoadBalancer") for i in range(3, 5)]
        + [svc.format(i=9, ns="b", t="NodePort")]
    )

    def groups(objs, platform):
        facts = build_facts(objs, platform)
        return {k: len(v) for k, v in loadbalancer_groups(facts.clusters, platform.runtime).items()}

    objs = objects_of(text)
    sup = replace(DEFAULT_PLATFORM, name="sup", runtime="vsphere-pods")
    assert groups(objs, sup) == {("sup", "a"): 3, ("sup", "b"): 2}
    assert groups(objs, DEFAULT_PLATFORM) == {("", ""): 5}
    assert groups(objects_of(text + "---\n" + tkc("shop", 1, "best-effort-small")), DEFAULT_PLATFORM) == {
        ("shop", ""): 5
    }
    assert groups(objs, replace(DEFAULT_PLATFORM, runtime="bare-metal")) == {}  # no NSX-T load balancer
    # a Service copied into a second file of the same cluster counts once
    assert groups(objs + objects_of(text, "copy.yaml"), DEFAULT_PLATFORM) == {("", ""): 5}


# --------------------------------------------------------------------------- property tests ---

host_groups = st.builds(
    lambda count, sockets, cores, mhz_, mem: HostGroup("g", count, sockets, cores, 2, mhz_, mem * GiB),
    st.integers(1, 6),
    st.integers(1, 4),
    st.integers(1, 64),
    st.integers(1000, 4000),
    st.integers(1, 2048),
)
ha_policies = st.one_of(
    st.builds(HAPolicy, host_failures_tolerated=st.integers(0, 3)),
    st.builds(HAPolicy, cpu_percent=st.integers(0, 100), memory_percent=st.integers(0, 100)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(host_groups, min_size=1, max_size=4), host_groups, ha_policies, st.booleans())
def test_more_hosts_never_lower_available_capacity(groups, extra, ha, add_count):
    groups = [replace(g, name=f"g{i}") for i, g in enumerate(groups)]
    before = capacity(Platform(hosts=tuple(groups), ha=ha))
    if add_count:  # one more host in an existing group
        more = groups[:-1] + [replace(groups[-1], count=groups[-1].count + 1)]
    else:  # a new group of hosts
        more = groups + [replace(extra, name="extra")]
    after = capacity(Platform(hosts=tuple(more), ha=ha))
    assert after.cpu_available_mhz >= before.cpu_available_mhz
    assert after.memory_available_bytes >= before.memory_available_bytes
    assert 0 <= after.cpu_available_mhz <= after.cpu_total_mhz


quantity = st.one_of(st.none(), st.integers(0, 64_000))
containers_st = st.lists(st.tuples(quantity, quantity, quantity, quantity), min_size=1, max_size=4)


def _pod_from(specs, inits=()) -> PodSpec:
    cs = tuple(
        container(f"c{i}", a, b, None if c is None else c * MiB, None if d is None else d * MiB)
        for i, (a, b, c, d) in enumerate(specs)
    )
    return pod(*cs)


@settings(max_examples=300, deadline=None)
@given(containers_st, st.integers(0, 3), st.integers(1, 20_000), st.integers(1, 64_000))
def test_a_larger_request_never_lowers_a_reservation(specs, which, more_cpu, more_mem):
    which %= len(specs)
    before = crx_size(_pod_from(specs), 2600)
    a, b, c, d = specs[which]
    bigger = list(specs)
    # the effective request (Kubernetes: an unset request is the limit) grows
    cpu_req = a if a is not None else (b or 0)
    mem_req = c if c is not None else (d or 0)
    bigger[which] = (cpu_req + more_cpu, b, mem_req + more_mem, d)
    after = crx_size(_pod_from(bigger), 2600)
    assert after.cpu_reservation_mhz >= before.cpu_reservation_mhz
    assert after.memory_reservation_bytes >= before.memory_reservation_bytes


@settings(max_examples=300, deadline=None)
@given(containers_st, st.lists(st.tuples(quantity, quantity, quantity, quantity, st.booleans()), max_size=3))
def test_crx_reserves_the_kubernetes_effective_pod_request(specs, init_specs):
    inits = tuple(
        container(
            f"i{i}", a, b, None if c is None else c * MiB, None if d is None else d * MiB, init=True, sidecar=side
        )
        for i, (a, b, c, d, side) in enumerate(init_specs)
    )
    p = replace(_pod_from(specs), init_containers=inits)
    s = crx_size(p, 2600)
    # the Kubernetes effective pod request as the model computes it (no overhead here)
    assert s.cpu_request_millicores == p.cpu_request
    assert s.memory_reservation_bytes == p.memory_request


@settings(max_examples=300, deadline=None)
@given(containers_st)
def test_crx_invariants(specs):
    # valid pods only (request ≤ limit, else the API server rejects them: PF103)
    specs = [
        (a if a is None or b is None else min(a, b), b, c if c is None or d is None else min(c, d), d)
        for a, b, c, d in specs
    ]
    s = crx_size(_pod_from(specs), 2600)
    assert s.vcpus >= 1
    assert s.vcpus * 1000 >= s.cpu_request_millicores  # the reservation fits in the vCPUs
    assert s.cpu_reservation_mhz <= s.vcpus * 2600
    assert s.memory_bytes >= s.memory_reservation_bytes
    if s.cpu_limit_mhz is not None:
        assert s.cpu_reservation_mhz <= s.cpu_limit_mhz <= s.vcpus * 2600


@pytest.mark.parametrize("n", [0, 1, 3])
def test_reservations_scale_with_replicas(n):
    text = REDIS.split("---")[2].replace("kind: Pod", "kind: Deployment", 1)
    text = f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: r}}
spec:
  replicas: {n}
  template:
    spec:
      containers: [{{name: redis, image: redis, resources: {{requests: {{cpu: "2", memory: 1Gi}}, limits: {{cpu: "8"}}}}}}]
"""
    objs = objects_of(text)
    ws, _ = build_workloads(objs)
    p = replace(DEFAULT_PLATFORM, runtime="vsphere-pods")
    r = analyze_capacity(_vms(objs, ws, p), p, placement=False)
    assert r.cpu_reserved_mhz == n * 2 * 2300 and r.memory_reserved_bytes == n * GiB and r.vcpus == n * 8


def _vms(objects, workloads, platform):
    """The VMs of the platform's and the manifests' node pools (gathered as the facts stage does)."""
    from podfit.clusters import node_pools_from_objects

    return reservations_of(workloads, platform, tuple(platform.node_pools) + tuple(node_pools_from_objects(objects)))


def test_pod_level_resources_size_the_crx_and_need_no_container_resources(tmp_path):
    """A vSphere Pod whose spec.resources set CPU and memory gets its CRX from them (1 vCPU,
    1 GiB), and PF401 does not ask its containers for resources of their own."""
    import json as _json
    from pathlib import Path

    from click.testing import CliRunner

    from podfit.cli import main
    from podfit.facts import build_facts
    from podfit.loader import InputFile, load
    from podfit.platform import DEFAULT_PLATFORM
    from podfit.vsphere import crx_size

    doc = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  resources: {requests: {cpu: 750m, memory: 1Gi}, limits: {cpu: 750m, memory: 1Gi}}\n"
        "  containers: [{name: a, image: x}, {name: b, image: x}]\n"
    )
    (w,) = build_facts(load([InputFile("p.yaml", doc.encode())]).objects, DEFAULT_PLATFORM).workloads
    size = crx_size(w.pod, None)
    assert (size.vcpus, size.memory_bytes, size.cpu_from, size.memory_from) == (1, 2**30, "limits", "limits")
    (tmp_path / "p.yaml").write_text(doc)
    platform = Path(__file__).resolve().parents[1] / "testdata/platforms/vsphere-pods.yaml"
    r = CliRunner().invoke(
        main, ["check", str(tmp_path / "p.yaml"), "--platform", str(platform), "--rule", "PF401", "--format", "json"]
    )
    assert _json.loads(r.output)["findings"] == []


def test_an_unset_pod_level_request_is_defaulted_for_the_crx_as_the_api_server_does():
    """Pod-level limits only: the CRX reserves the limit when no container requests memory, else
    the containers' request (the pod's effective request either way)."""
    from podfit.facts import build_facts
    from podfit.loader import InputFile, load
    from podfit.platform import DEFAULT_PLATFORM
    from podfit.vsphere import crx_size

    for container, reserved in (
        ("{name: a, image: x}", 2 * GiB),
        ("{name: a, image: x, resources: {requests: {memory: 512Mi}}}", GiB // 2),
    ):
        doc = (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
            f"  resources: {{limits: {{cpu: 1500m, memory: 2Gi}}}}\n  containers: [{container}]\n"
        )
        (w,) = build_facts(load([InputFile("p.yaml", doc.encode())]).objects, DEFAULT_PLATFORM).workloads
        size = crx_size(w.pod, None)
        assert (size.vcpus, size.memory_bytes, size.memory_reservation_bytes) == (2, 2 * GiB, reserved)
        assert w.pod.memory_request == reserved
