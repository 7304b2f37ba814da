"""``podfit pack``: do the workloads fit the node pools? With proof, least nodes and right-sizing."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace

import click

from ..quantity import QuantityError, parse_cpu, parse_memory
from ..words import plural, wrap_line, wrap_text
from ._common import (
    ManifestOptions,
    PodfitError,
    clear_status,
    emit,
    format_option,
    input_findings,
    load_inputs,
    load_usage,
    manifest_options,
    output_option,
    status,
    time_budget_option,
)

EXIT_FITS, EXIT_NO_FIT = 0, 1


def parse_percent(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*%?\s*", text)
    if not m:
        raise ValueError(f"{text!r} is not a percentage such as 100%")
    return int(m.group(1))


def parse_pool(text: str, taken: set[str] | None = None):
    """``[NAME:]CLASS=COUNT`` → a NodePool named NAME, else after its class (``CLASS-2``, … when
    the name is taken)."""
    from ..platform import MAX_NODES, NodePool

    spec, sep, count = text.partition("=")
    name, colon, cls = spec.rpartition(":")
    name, cls = name.strip(), cls.strip()
    if not sep or not cls or not count.strip().isdigit() or (colon and not name):
        raise ValueError(
            f"{text!r}: expected [NAME:]CLASS=COUNT, e.g. best-effort-xlarge=4 or gpu:guaranteed-8xlarge=2"
        )
    digits = count.strip()
    nodes = int(digits) if len(digits) <= 9 else MAX_NODES + 1  # (no int of 4,300+ digits from text)
    if not 1 <= nodes <= MAX_NODES:
        shown = digits if len(digits) <= 20 else f"of {len(digits):,} digits"
        raise ValueError(
            f"{spec[:60]!r}: COUNT {shown}: at least 1 and at most {MAX_NODES:,} nodes, Kubernetes' nodes per cluster"
        )
    taken = taken if taken is not None else set()
    if not name:
        name, i = cls, 2
        while name in taken:
            name, i = f"{cls}-{i}", i + 1
    elif name in taken:
        raise ValueError(f"{text!r}: a pool named {name!r} is given twice")
    taken.add(name)
    return NodePool(vm_class=cls, count=nodes, name=name)


def parse_pool_label(text: str) -> tuple[str, str, str]:
    """``NAME:KEY=VALUE`` → (pool name, key, value); VALUE may be empty."""
    name, colon, label = text.partition(":")
    key, sep, value = label.partition("=")
    if not colon or not name.strip() or not sep or not key.strip():
        raise ValueError(f"{text!r}: expected NAME:KEY=VALUE, e.g. gpu:nvidia.com/gpu.present=true")
    return name.strip(), key.strip(), value.strip()


_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def parse_pool_taint(text: str):
    """``NAME:KEY[=VALUE]:EFFECT`` → (pool name, Taint)."""
    from ..platform import Taint

    name, colon, rest = text.partition(":")
    taint, colon2, effect = rest.rpartition(":")
    key, _, value = taint.partition("=")
    if not colon or not colon2 or not name.strip() or not key.strip() or effect.strip() not in _EFFECTS:
        raise ValueError(
            f"{text!r}: expected NAME:KEY[=VALUE]:EFFECT with EFFECT one of {', '.join(_EFFECTS)}, "
            "e.g. gpu:nvidia.com/gpu=present:NoSchedule"
        )
    return name.strip(), Taint(key.strip(), value.strip(), effect.strip())


def _pool_names(p) -> set[str]:
    return {p.name, f"{p.cluster}/{p.name}"} if p.cluster else {p.name}


def apply_pool_labels(pools, labels, taints):
    """The pools with ``labels`` ((name, key, value)) and ``taints`` ((name, Taint)) added; a name
    that no pool has is a ValueError."""
    known = set().union(*(_pool_names(p) for p in pools)) if pools else set()
    for name in [n for n, _, _ in labels] + [n for n, _ in taints]:
        if name not in known:
            raise ValueError(f"no node pool named {name!r} (pools: {', '.join(sorted(known)) or 'none'})")
    out = []
    for p in pools:
        names = _pool_names(p)
        extra = {k: v for n, k, v in labels if n in names}
        more = tuple(t for n, t in taints if n in names)
        if extra or more:
            p = replace(p, labels=tuple(sorted({**dict(p.labels), **extra}.items())), taints=p.taints + more)
        out.append(p)
    return out


def _param(parse, text: str, hint: str):
    try:
        return parse(text)
    except (ValueError, QuantityError) as e:
        raise click.BadParameter(str(e), param_hint=hint) from None


@click.command(name="pack")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@manifest_options("report")
@click.option(
    "--pool",
    "pools",
    multiple=True,
    metavar="[NAME:]CLASS=COUNT",
    help="A node pool of COUNT nodes of VM class CLASS, named NAME (default: the class) "
    "(repeatable); replaces the pools of the platform and of cluster manifests.",
)
@click.option(
    "--pool-label",
    "pool_labels",
    multiple=True,
    metavar="NAME:KEY=VALUE",
    help="A node label on every node of pool NAME (repeatable; a --pool, platform or cluster "
    "manifest pool). Well-known labels (kubernetes.io/os=linux, kubernetes.io/arch=amd64, "
    "node.kubernetes.io/instance-type=CLASS) are always there.",
)
@click.option(
    "--pool-taint",
    "pool_taints",
    multiple=True,
    metavar="NAME:KEY[=VALUE]:EFFECT",
    help="A node taint on every node of pool NAME (repeatable); EFFECT is NoSchedule, PreferNoSchedule or NoExecute.",
)
@click.option(
    "--overhead-cpu", default=None, metavar="CPU", help="System pods' CPU per node. [default: platform's, 250m]"
)
@click.option(
    "--overhead-memory",
    default=None,
    metavar="MEM",
    help="Memory per node not allocatable. [default: platform's, 100Mi]",
)
@click.option(
    "--max-pods",
    type=click.IntRange(1, 2**31 - 1),  # the kubelet's maxPods is an int32
    default=None,
    help="Pods per node (kubelet maxPods). [default: platform's, 110]",
)
@click.option(
    "--headroom",
    "headroom_text",
    default="100%",
    show_default=True,
    help="Share of Σ(limit − request) that must fit the free capacity.",
)
@click.option(
    "--usage",
    "usage_files",
    multiple=True,
    metavar="[KIND=]FILE",
    help="Measured usage (as for check --usage): the measured p95 beside the requests, and the burst "
    "headroom from the measured peaks instead of the limits. Packing stays on requests.",
)
@time_budget_option(
    "2s",
    "the fit's exact solver (CP-SAT) when the heuristics place nothing, then the least-node search; "
    "0 for heuristics and bounds only",
)
@click.option(
    "--classes",
    "search_classes",
    type=click.Choice(["pools", "all"]),
    default="pools",
    show_default=True,
    help="VM classes whose least node count is searched for within the time budget: those of the pools "
    "in use, or all; the others get a lower bound and first-fit-decreasing's count.",
)
@format_option(("text", "json", "html"))
@output_option
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Text: list every node one by one (without it, up to 50 nodes; past that a summary per pool).",
)
def command(
    paths: tuple[str, ...],
    manifest: ManifestOptions,
    pools: tuple[str, ...],
    pool_labels: tuple[str, ...],
    pool_taints: tuple[str, ...],
    overhead_cpu: str | None,
    overhead_memory: str | None,
    max_pods: int | None,
    headroom_text: str,
    usage_files: tuple[str, ...],
    time_budget: float,
    search_classes: str,
    fmt: str,
    output: str | None,
    verbose: bool = False,
) -> None:
    """Pack the pods of PATH... onto the node pools and say whether they fit, with proof.

    \b
    Node pools come from --pool, else from the platform profile and from TanzuKubernetesCluster /
    Cluster API Cluster manifests among the inputs; --pool-label and --pool-taint add node labels
    and taints to them. Pods go only on pools they fit (nodeSelector, required node affinity,
    tolerations); DaemonSet pods are taken off every node they run on; replicas expand to pods;
    hostname anti-affinity and topology spread cap pods per node. Pods whose node selection
    depends on a label no pool describes are left out and listed as unknown.
    \b
    The answer is a placement (fits), a proof of misfit (a lower bound above the node count, or
    CP-SAT's infeasibility proof), or "budget exhausted". Also: least nodes per VM class, stranded
    capacity, burst headroom and the recommended VM class and count (NUMA-fitting classes only,
    never more nodes than the platform's hosts hold).
    \b
    With --usage (measured usage, as for `podfit check`), a pod whose containers were all measured
    bursts to its measured peak instead of its limit in the burst headroom (and so in the
    recommended count), and each cluster's measured p95 is set beside the requests of the same
    pods. The pods are still packed by their requests: that is what the scheduler places.
    \b
    Clusters are those of `podfit check` (the platform, the config's clusters: mapping, the
    TanzuKubernetesCluster / Cluster API Cluster a file sits beside): each cluster's workloads are
    packed onto its own pools (--pool: onto those), each object once, and the output is one section
    per cluster (JSON: {"clusters": [...]} when there are several, each with its "cluster" name).
    \b
    The verdict comes first: the heuristics answer most fits at once. The time budget (2 s unless
    --time-budget says otherwise) goes to the fit when they do not, then to the least node count
    of the pools' VM classes (all classes with --classes all); a count not proven within it is
    printed as the range it is proven to lie in. The other classes get a proven lower bound and
    first-fit-decreasing's count at once. The text lists each node with -v or up to 50 nodes;
    past that it summarises each pool (nodes used, how full, what is stranded).
    \b
    Exit status: 0 fits; 1 does not fit, undecided within the time budget, or pods left out as
    unknown; 2 usage or input error, or an answer whose proof needs the exact solver when it is not
    installed (pip install 'podfit[exact]'; the heuristics' answer is printed first).
    \b
    Examples:
      podfit pack k8s/ --pool best-effort-xlarge=3
      podfit pack k8s/ --pool best-effort-xlarge=3 --pool gpu:guaranteed-8xlarge=2 \\
          --pool-label gpu:nvidia.com/gpu.present=true --pool-taint gpu:nvidia.com/gpu=present:NoSchedule
      podfit pack app.yaml cluster-tkc.yaml --format json
    """
    from ..packing import Overhead
    from ..packing.engine import analyze_inputs
    from ..packing.measured import measured_json, measured_text
    from ..packing.report import scheduling_json, scheduling_notes, to_json, to_text
    from ..packing.rules_support import cluster_inputs, overcommit_ratio
    from ..platform import MAX_NODES
    from ..rule_context import RuleContext

    share = _param(parse_percent, headroom_text, "--headroom")
    config, platform = manifest.config_and_platform()
    ov = Overhead(
        _param(parse_cpu, overhead_cpu, "--overhead-cpu") if overhead_cpu is not None else platform.overhead_cpu,
        _param(parse_memory, overhead_memory, "--overhead-memory")
        if overhead_memory is not None
        else platform.overhead_memory,
    )
    taken: set[str] = set()
    cli_pools = [_param(lambda t: parse_pool(t, taken), p, "--pool") for p in pools]
    if sum(p.count for p in cli_pools) > MAX_NODES:  # one cluster's pools
        raise click.BadParameter(
            f"{sum(p.count for p in cli_pools):,} nodes in all: at most {MAX_NODES:,}, Kubernetes' nodes per cluster",
            param_hint="--pool",
        )
    labels = [_param(parse_pool_label, t, "--pool-label") for t in pool_labels]
    taints = [_param(parse_pool_taint, t, "--pool-taint") for t in pool_taints]
    result = load_inputs(paths, config, manifest.platform_file(config))
    for f in input_findings(result, result.findings, config):  # a chart's at its template line
        click.echo(wrap_line(f"podfit: {f.location}: {f.rule}: {f.message}"), err=True)
    if not result.objects:  # nothing to pack is never a fit
        from ..loader import nothing_found

        raise PodfitError(
            f"{nothing_found(paths, result.files, len(result.excluded), result.findings)}; nothing to pack"
        )
    series = load_usage(usage_files, config.limits.max_file_bytes) if usage_files else None
    # the same clusters as `podfit check` (platform, config `clusters:`, cluster manifests): each
    # cluster's workloads, every object once, onto its own pools (or onto --pool's)
    from ..pipeline import run_facts

    facts = run_facts(result.objects, platform, config, usage=series)
    if facts.usage is not None:
        from ..usage import unmatched_notice

        for line in unmatched_notice(facts.usage):
            click.echo(wrap_line(f"podfit: notice: {line}"), err=True)
    try:
        labelled = apply_pool_labels(cli_pools or list(facts.node_pools), labels, taints)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    relabel = {id(p): q for p, q in zip(cli_pools or facts.node_pools, labelled, strict=True)}
    ratio = overcommit_ratio(RuleContext(facts, config)) if platform.hosts else 0
    all_pools = labelled
    scopes = [c for c in facts.clusters if c.workloads] or list(facts.clusters[:1])
    several = len(scopes) > 1
    packed = []
    for scope in scopes:
        scope_pools = labelled if cli_pools else [relabel.get(id(p), p) for p in scope.node_pools]
        inputs = cluster_inputs(
            platform,
            scope.workloads,
            scope_pools,
            all_pools,
            usage=facts.usage,
            ratio=ratio,
            overhead=ov,
            max_pods=max_pods,
        )
        if inputs.unknown_classes:
            raise PodfitError(
                "unknown VM class or instance type: "
                + ", ".join(sorted(set(inputs.unknown_classes)))
                + " (see the platform's vmClasses, or docs/platform.md for instance types)"
            )
        packed.append((scope, inputs))
    if not any(inputs.pools for _, inputs in packed):
        standby = sorted({n.name for _, inputs in packed for n in inputs.standby})
        if standby:
            raise PodfitError(
                f"no worker node pool has nodes now ({', '.join(standby)}: 0 nodes, scaled from zero by the "
                "cluster autoscaler); podfit pack packs the nodes there are: podfit check (PF601, PF606) "
                "takes these pools at their maximum"
            )
        raise PodfitError(
            "no worker node pools: give --pool CLASS=COUNT, a platform profile with nodePools, "
            "or a TanzuKubernetesCluster / Cluster API Cluster among the inputs"
        )
    from ..packing import exact

    fits = True
    unproven = False  # an answer the exact solver would have been asked to settle
    out: list[dict] = []
    pictures = []
    text = ["(built-in default platform profile)\n"] if platform.is_default else []
    for scope, inputs in packed:
        if several:
            text.append(f"== {scope.label} ==\n")
        if not inputs.pools:
            fits = False
            out.append({"cluster": scope.name, "error": "no worker node pools"})
            text.append("no worker node pools for this cluster's workloads\n\n")
            continue
        search = None if search_classes == "all" else sorted({n.vm_class for n in inputs.pools})
        pods = sum(p.count for p in inputs.pods)
        nodes = sum(n.count for n in inputs.pools)
        status(f"packing {plural(pods, 'pod')} onto {plural(nodes, 'node')} (up to {time_budget:g} s)")
        try:
            analysis = analyze_inputs(inputs, share, time_budget, search)
        finally:
            clear_status()
        fits = fits and bool(analysis.fit.feasible) and not inputs.unknown
        unproven = unproven or (
            analysis.fit.solver_status == exact.NOT_INSTALLED
            or any(not m.exact for k, m in analysis.min_nodes.items() if search is None or k in search)
        )
        # only the chosen format is rendered (10,000 pods make each rendering take a while)
        if fmt == "json":
            measured = {"measured": measured_json(inputs, facts.usage)} if facts.usage is not None else {}
            out.append({"cluster": scope.name, **to_json(analysis), **measured, "scheduling": scheduling_json(inputs)})
        elif fmt == "html":
            from ..visuals import packing_picture

            pictures.append(packing_picture(inputs, analysis, scope.name if several else ""))
        else:
            text.append(to_text(analysis, verbose=verbose, budget=time_budget))
            if facts.usage is not None:
                text.append(measured_text(inputs, facts.usage))
            text.append("".join(f"Scheduling: {line}\n" for line in scheduling_notes(inputs)))
            if several:
                text.append("\n")
    if fmt == "html":
        from ..formats.html import pack_page

        emit(pack_page(pictures, platform.name), output)
    elif fmt == "json":
        platform_json = {"name": platform.name, "default": platform.is_default}
        doc = {**out[0], "platform": platform_json} if not several else {"clusters": out, "platform": platform_json}
        emit(json.dumps(doc, indent=2, sort_keys=False) + "\n", output)
    else:
        emit(wrap_text("".join(text)), output)  # a line past 160 characters goes on indented below
    if unproven and not exact.available():
        raise PodfitError(
            "the proof of this answer needs the exact solver, which is not installed: "
            f"{exact.INSTALL_HINT} (the answer above is the heuristics' and the bounds')"
        )
    sys.exit(EXIT_FITS if fits else EXIT_NO_FIT)
