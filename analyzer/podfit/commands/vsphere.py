"""``podfit vsphere``: CRX sizes of vSphere Pods, HA-adjusted capacity, DRS placement, what-if."""

from __future__ import annotations

import json
from typing import Any

import click

from ..words import LINE_LIMIT, plural, wrap_line, wrap_text
from ._common import (
    ManifestOptions,
    PodfitError,
    emit,
    format_option,
    input_findings,
    load_inputs,
    manifest_options,
    output_option,
    refuse_without_hosts,
    source_of,
    time_budget_option,
)


@click.group("vsphere")
def command() -> None:
    """vSphere analyzer: CRX sizing of vSphere Pods and HA/DRS-aware capacity.

    \b
    Examples:
      podfit vsphere crx redis.yaml --platform supervisor.yaml
      podfit vsphere capacity clusters/ --platform hosts.yaml --format json
      podfit vsphere capacity --platform hosts.yaml --add-pool guaranteed-large --pool-nodes 3
    """


def _thousands(n: int | None, unit: str = "") -> str:
    return "-" if n is None else f"{n:,}{unit}"


def _load(paths: tuple[str, ...], config: Any, platform: Any, platform_path: str | None = None):
    """The facts of PATH... (the same stage `podfit check` runs: charts and kustomizations rendered
    in place, the platform profile at ``platform_path`` never read as a manifest), the loader's
    problems as lines (the config's rule selection applied; on rendered text at the source's
    file and line) and the load's result."""
    from ..facts import build_facts
    from ..loader import LoadResult
    from ..pipeline import run_facts

    if not paths:
        return build_facts((), platform), [], LoadResult((), (), ())
    result = load_inputs(paths, config, platform_path)
    # the clusters of `podfit check` (the platform, the config's clusters: mapping, cluster manifests)
    facts = run_facts(result.objects, platform, config)
    found = input_findings(result, list(result.findings) + list(facts.findings), config)
    problems = [f"{f.location}: {f.rule}: {f.message}" for f in found]
    return facts, problems, result


# ---------------------------------------------------------------------------------------- crx ---


@command.command("crx")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@manifest_options("report")
@format_option(("text", "json", "html"))
@output_option
def crx(
    paths: tuple[str, ...],
    manifest: ManifestOptions,
    fmt: str,
    output: str | None,
) -> None:
    """Size the CRX VM of every pod in PATH... as vSphere Pods would run it.

    For each workload's pod: vCPUs, vSphere CPU limit (MHz), CPU reservation (MHz), memory size
    and memory reservation, with the rule of the best-practices study that gave each.
    """
    from ..vsphere import crx_size, fmt_memory, fmt_mhz, reference_mhz

    config, platform = manifest.config_and_platform()
    refuse_without_hosts(platform, "crx")
    facts, problems, result = _load(paths, config, platform, manifest.platform_file(config))
    workloads = facts.workloads
    base = reference_mhz(platform)
    rows = []
    for w in workloads:
        s = crx_size(w.pod, base)
        where = source_of(result, w.location)  # a chart's template line, not the rendered text's
        rows.append(
            {
                "cluster": _cluster_name(facts, w),
                # False: the pod runs on a guest cluster's nodes (TKC / Cluster API), or the platform's
                # runtime is not vsphere-pods: the CRX is what it would get as a vSphere Pod
                "vsphere_pod": facts.runs_as_vsphere_pod(w),
                "name": w.ref.name,
                "namespace": w.ref.namespace,
                "kind": w.ref.kind,
                "file": where.file,
                "line": where.line,
                "replicas": w.replicas,
                **s.figures(),
                "why": dict(s.why),
            }
        )
    if not rows and problems:
        raise PodfitError("no pods could be read:\n  " + "\n  ".join(wrap_line(p, LINE_LIMIT - 2) for p in problems))
    if fmt == "html":
        from ..formats.html import vsphere_page
        from ..visuals import crx_rows

        for p in problems:
            click.echo(wrap_line(f"warning: {p}"), err=True)
        emit(vsphere_page(crx_rows(workloads, platform), platform.name), output)
        return
    if fmt == "json":
        doc = {"platform": platform.name, "base_mhz": base, "pods": rows, "input_problems": problems}
        emit(json.dumps(doc, indent=2) + "\n", output)
        return
    for p in problems:
        click.echo(wrap_line(f"warning: {p}"), err=True)
    if not rows:
        emit("no pods in the input\n", output)
        return
    lines = [
        f"CRX sizes on {platform.name} ({'base clock ' + _thousands(base, ' MHz') if base else 'no hosts: MHz unknown'})"
    ]
    several = len({r["cluster"] for r in rows}) > 1
    if several:
        rows.sort(key=lambda r: r["cluster"])  # stable: input order within a cluster
    current = None
    for r in rows:
        if several and r["cluster"] != current:
            current = r["cluster"]
            lines.append(f"\n== cluster {current} ==" if current else "\n== the rest of the input ==")
        ns = f"{r['namespace']}/" if r["namespace"] else ""
        note = "" if r["vsphere_pod"] or platform.runtime != "vsphere-pods" else "  [guest cluster: runs on its nodes]"
        lines.append(f"\n{r['kind']} {ns}{r['name']}  ({r['file']}:{r['line']}){note}")
        table = [
            ("vCPUs", str(r["vcpus"]), r["why"]["vcpus"]),
            (
                "CPU limit",
                fmt_mhz(r["cpu_limit_mhz"]) if r["cpu_limit_mhz"] is not None else "none",
                r["why"]["cpu_limit_mhz"],
            ),
            ("CPU reservation", fmt_mhz(r["cpu_reservation_mhz"]), r["why"]["cpu_reservation_mhz"]),
            ("memory", fmt_memory(r["memory_bytes"]), r["why"]["memory_bytes"]),
            ("memory reservation", fmt_memory(r["memory_reservation_bytes"]), r["why"]["memory_reservation_bytes"]),
        ]
        for label, value, why in table:
            lines.append(f"  {label:<19} {value:>12}   {why}")
    emit(wrap_text("\n".join(lines) + "\n"), output)


# ----------------------------------------------------------------------------------- capacity ---


def _host_json(h) -> dict[str, Any]:
    return {
        "name": h.name,
        "cpu_capacity_mhz": h.cpu_capacity_mhz,
        "cpu_reserved_mhz": h.cpu_reserved_mhz,
        "memory_capacity_bytes": h.memory_capacity_bytes,
        "memory_reserved_bytes": h.memory_reserved_bytes,
        "vms": {name: n for name, n in h.vms},
    }


def _what_if_json(w) -> dict[str, Any]:
    return {
        "unit": w.unit,
        "unit_vms": w.unit_vms,
        "unit_vcpus": w.unit_vcpus,
        "unit_cpu_reservation_mhz": w.unit_cpu_reservation_mhz,
        "unit_memory_reservation_bytes": w.unit_memory_reservation_bytes,
        "ha_limit": w.ha_limit,
        "admitted": w.admitted,
        "proven": w.proven,
        "overcommit_limit": w.overcommit_limit,
        "overcommit_threshold_percent": w.overcommit_threshold_percent,
    }


@command.command("capacity")
@click.argument("paths", nargs=-1, metavar="[PATH...]")
@manifest_options("report")
@format_option(("text", "json", "html"))
@output_option
@click.option(
    "--add-replicas",
    "add_replicas",
    type=click.Path(dir_okay=False),
    metavar="POD_FILE",
    help="What-if: how many more replicas of the (first) pod in POD_FILE, as vSphere Pods, are admitted.",
)
@click.option(
    "--add-pool", "add_pool", metavar="CLASS", help="What-if: how many more node pools of VM class CLASS are admitted."
)
@click.option(
    "--pool-nodes",
    default=1,
    show_default=True,
    type=click.IntRange(min=1, max=5000),  # platform.MAX_NODES: Kubernetes' nodes per cluster
    help="Nodes per added pool (with --add-pool), at most 5,000.",
)
@time_budget_option("5s", "each DRS placement proof")
def capacity_cmd(
    paths: tuple[str, ...],
    manifest: ManifestOptions,
    fmt: str,
    output: str | None,
    add_replicas: str | None,
    add_pool: str | None,
    pool_nodes: int,
    time_budget: float,
) -> None:
    """HA-adjusted vSphere capacity, reservations, overcommit and DRS placement.

    Reservations come from the platform's node pools, TanzuKubernetesCluster and Cluster API
    manifests in PATH... (guaranteed classes reserve all their CPU and memory) and, when the
    runtime is vsphere-pods, the CRX of every pod. Exit 0 even when over capacity (use
    `podfit check` to fail a pipeline: PF501, PF502, PF503).
    """
    from ..platform import NodePool
    from ..vsphere import (
        analyze_capacity,
        critical_workloads,
        reservations_of,
        vms_from_node_pools,
        vms_from_workloads,
        what_if,
    )

    config, platform = manifest.config_and_platform()
    refuse_without_hosts(platform, "capacity")
    if time_budget <= 0:
        raise click.BadParameter("must be more than 0 (each placement proof needs time)", param_hint="--time-budget")
    facts, problems, _result = _load(paths, config, platform, manifest.platform_file(config))
    objects = facts.objects
    vms = reservations_of(facts.crx_workloads, platform, facts.node_pools, lambda w: _cluster_name(facts, w))
    report = analyze_capacity(vms, platform, time_budget=time_budget)
    critical = critical_workloads(platform, objects)
    from ..catalogue import get_rule

    name = "critical-ratio-percent" if critical else "ratio-percent"
    threshold = config.thresholds.get("PF503", {}).get(name, get_rule("PF503").option(name).default)  # type: ignore[union-attr]
    whatifs: dict[str, Any] = {}
    if add_replicas:
        extra_facts, extra_problems, _extra = _load((add_replicas,), config, platform)
        extra = extra_facts.workloads
        pods = [w for w in extra if not w.per_node]
        if not pods:
            raise PodfitError(
                f"{add_replicas}: no pod or workload to add"
                + (
                    ":\n  " + "\n  ".join(wrap_line(p, LINE_LIMIT - 2) for p in extra_problems)
                    if extra_problems
                    else ""
                )
            )
        unit = vms_from_workloads([_one_replica(pods[0])], platform)
        whatifs["replicas"] = what_if(
            vms, unit, platform, overcommit_threshold_percent=threshold, time_budget=time_budget
        )
    if add_pool:
        if platform.vm_class(add_pool) is None:
            raise PodfitError(
                f"unknown VM class {add_pool!r} (known: {', '.join(c.name for c in platform.vm_classes)})"
            )
        unit_vms, _ = vms_from_node_pools([NodePool(add_pool, pool_nodes, name=f"{add_pool}-pool")], platform)
        whatifs["pools"] = what_if(
            vms, unit_vms, platform, overcommit_threshold_percent=threshold, time_budget=time_budget
        )
    cap = report.capacity
    pl = report.placement
    assert pl is not None  # analyze_capacity places the VMs unless told not to
    data = {
        "platform": platform.name,
        "runtime": platform.runtime,
        "ha_policy": cap.ha_policy,
        "base_mhz": report.base_mhz,
        "cpu_total_mhz": cap.cpu_total_mhz,
        "cpu_ha_reserved_mhz": cap.cpu_ha_reserved_mhz,
        "cpu_available_mhz": cap.cpu_available_mhz,
        "memory_total_bytes": cap.memory_total_bytes,
        "memory_ha_reserved_bytes": cap.memory_ha_reserved_bytes,
        "memory_available_bytes": cap.memory_available_bytes,
        "cpu_reserved_mhz": report.cpu_reserved_mhz,
        "memory_reserved_bytes": report.memory_reserved_bytes,
        "cpu_over_ha": report.cpu_over_ha,
        "memory_over_ha": report.memory_over_ha,
        "vcpus": report.vcpus,
        "physical_cores": cap.physical_cores,
        "overcommit_ratio": round(report.vcpus / cap.physical_cores, 4) if cap.physical_cores else None,
        "overcommit_percent": report.overcommit_percent,
        "overcommit_threshold_percent": threshold,
        "critical": critical,
        "vms": [
            {
                "cluster": v.cluster,
                "name": v.name,
                "kind": v.kind,
                "count": v.count,
                "vcpus": v.vcpus,
                "source": v.source,
                "cpu_reservation_mhz": v.cpu_reservation_mhz,
                "memory_reservation_bytes": v.memory_reservation_bytes,
            }
            for v in vms
        ],
        "placement": {
            "feasible": pl.feasible,
            "proof": pl.proof,
            "detail": pl.detail,
            "unplaced": {n: k for n, k in pl.unplaced},
            "hosts": [_host_json(h) for h in pl.hosts],
        },
        "what_if": {k: _what_if_json(v) for k, v in whatifs.items()},
        "input_problems": problems,
    }
    if fmt == "json":
        emit(json.dumps(data, indent=2) + "\n", output)
        return
    for p in problems:
        click.echo(wrap_line(f"warning: {p}"), err=True)
    if fmt == "html":
        from ..formats.html import vsphere_page
        from ..visuals import vsphere_capacity

        capacity = vsphere_capacity(facts)
        assert capacity is not None  # refuse_without_hosts let only a platform with vSphere hosts through
        emit(vsphere_page(capacity, platform.name), output)
        return
    emit(wrap_text(_capacity_text(data, platform.is_default) + "\n"), output)


def _cluster_name(facts, w) -> str:
    scope = facts.cluster_of(w.obj)
    return scope.name if scope is not None else ""


def _one_replica(w):
    from dataclasses import replace

    return replace(w, replicas=1)


def _pct(part: int, whole: int) -> str:
    return f"{part * 100 // whole}%" if whole else "-"


def _capacity_text(d: dict[str, Any], default_platform: bool) -> str:
    from ..vsphere import fmt_memory

    lines = [
        f"vSphere capacity of {d['platform']}"
        + (" (built-in default profile)" if default_platform else "")
        + f"; HA: {d['ha_policy']}"
    ]
    rows = [
        ("", "total", "HA reserved", "available", "reserved", "used"),
        (
            "CPU (MHz)",
            _thousands(d["cpu_total_mhz"]),
            _thousands(d["cpu_ha_reserved_mhz"]),
            _thousands(d["cpu_available_mhz"]),
            _thousands(d["cpu_reserved_mhz"]),
            _pct(d["cpu_reserved_mhz"], d["cpu_available_mhz"]),
        ),
        (
            "memory",
            fmt_memory(d["memory_total_bytes"]),
            fmt_memory(d["memory_ha_reserved_bytes"]),
            fmt_memory(d["memory_available_bytes"]),
            fmt_memory(d["memory_reserved_bytes"]),
            _pct(d["memory_reserved_bytes"], d["memory_available_bytes"]),
        ),
    ]
    for r in rows:
        lines.append(f"  {r[0]:<10}" + "".join(f"{c:>14}" for c in r[1:]))
    for res, flag in (("CPU", "cpu_over_ha"), ("memory", "memory_over_ha")):
        if d[flag]:
            lines.append(
                f"  ! {res} reservations exceed the HA-adjusted capacity: VMs will be refused power-on (PF501)"
            )
    oc = d["overcommit_percent"]
    lines.append(
        f"  overcommit: {plural(d['vcpus'], 'vCPU')} on {plural(d['physical_cores'], 'physical core')} = {oc}% "
        f"(threshold {d['overcommit_threshold_percent']}%{', critical workloads' if d['critical'] else ''})"
    )
    pl = d["placement"]
    verdict = {True: "feasible", False: "NOT feasible", None: "unknown"}[pl["feasible"]]
    lines.append(f"  DRS placement: {verdict} ({pl['proof']}{': ' + pl['detail'] if pl['detail'] else ''})")
    if pl["unplaced"] and pl["feasible"] is not True:
        lines.append("    unplaced: " + ", ".join(f"{n} × {k}" for n, k in pl["unplaced"].items()))
    if d["vms"]:
        lines.append("  VMs:")
        several = len({v["cluster"] for v in d["vms"]}) > 1
        current = None
        for v in sorted(d["vms"], key=lambda v: v["cluster"]) if several else d["vms"]:
            if several and v["cluster"] != current:
                current = v["cluster"]
                lines.append(f"   cluster {current}:" if current else "   no cluster named:")
            lines.append(
                f"    {v['count']:>4} × {v['name']:<40} {v['source']:<24} {v['vcpus']:>3} vCPU  "
                f"reserves {_thousands(v['cpu_reservation_mhz'])} MHz, {fmt_memory(v['memory_reservation_bytes'])}"
            )
    if pl["feasible"] and any(h["vms"] for h in pl["hosts"]):
        lines.append("  hosts:")
        for h in pl["hosts"]:
            lines.append(
                f"    {h['name']:<16} CPU {_thousands(h['cpu_reserved_mhz']):>9} / {_thousands(h['cpu_capacity_mhz'])} MHz"
                f"   memory {fmt_memory(h['memory_reserved_bytes']):>9} / {fmt_memory(h['memory_capacity_bytes'])}"
            )
    for key, label in (("replicas", "more replicas"), ("pools", "more node pools")):
        w = d["what_if"].get(key)
        if not w:
            continue
        admitted = (
            "unlimited by admission control (reserves nothing)"
            if w["admitted"] is None
            else f"{w['admitted']}{'' if w['proven'] else ' or more (placement search ran out of time)'}"
        )
        lines.append(
            f"  what-if {label} of {w['unit']}: {admitted}"
            + (f" (HA allows {w['ha_limit']})" if w["ha_limit"] is not None else "")
        )
        if w["overcommit_limit"] is not None:
            lines.append(f"    before overcommit passes {w['overcommit_threshold_percent']}%: {w['overcommit_limit']}")
    return "\n".join(lines) + "\n"
