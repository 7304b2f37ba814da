"""``podfit pack``: do the workloads fit the node pools? With proof, least nodes and right-sizing."""

from __future__ import annotations

import json
import re
import sys

import click

from ..quantity import QuantityError, parse_cpu, parse_memory

EXIT_FITS, EXIT_NO_FIT = 0, 1


def parse_percent(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*%?\s*", text)
    if not m:
        raise ValueError(f"{text!r} is not a percentage such as 100%")
    return int(m.group(1))


def parse_duration(text: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*", text)
    if not m:
        raise ValueError(f"{text!r} is not a duration such as 10s, 500ms or 1m")
    value = float(m.group(1))
    return value / 1000 if m.group(2) == "ms" else value * 60 if m.group(2) == "m" else value


def parse_pool(text: str, index: int):
    from ..platform import NodePool

    cls, sep, count = text.partition("=")
    if not sep or not cls.strip() or not count.strip().isdigit():
        raise ValueError(f"{text!r}: expected CLASS=COUNT, e.g. best-effort-xlarge=4")
    return NodePool(vm_class=cls.strip(), count=int(count), name=f"{cls.strip()}" if index == 0 else f"{cls.strip()}-{index}")


def _param(parse, text: str, hint: str):
    try:
        return parse(text)
    except (ValueError, QuantityError) as e:
        raise click.BadParameter(str(e), param_hint=hint) from None


@click.command(name="pack")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--platform", "platform_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Platform profile (VM classes, node pools, overhead, max pods). Default: built-in.")
@click.option("--pool", "pools", multiple=True, metavar="CLASS=COUNT",
              help="A node pool of COUNT nodes of VM class CLASS (repeatable); replaces the pools of the "
                   "platform and of cluster manifests.")
@click.option("--overhead-cpu", default=None, metavar="CPU", help="System pods' CPU per node. [default: platform's, 250m]")
@click.option("--overhead-memory", default=None, metavar="MEM",
              help="Memory per node not allocatable. [default: platform's, 100Mi]")
@click.option("--max-pods", type=click.IntRange(1), default=None, help="Pods per node (kubelet maxPods). [default: platform's, 110]")
@click.option("--headroom", "headroom_text", default="100%", show_default=True,
              help="Share of Σ(limit − request) that must fit the free capacity.")
@click.option("--time-budget", "budget_text", default="10s", show_default=True,
              help="Time for the exact solver (CP-SAT), e.g. 10s or 500ms; 0 for heuristics and bounds only.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(paths, platform_path, pools, overhead_cpu, overhead_memory, max_pods, headroom_text, budget_text, fmt):
    """Pack the pods of PATH... onto the node pools and say whether they fit, with proof.

    \b
    Node pools come from --pool, else from the platform profile and from TanzuKubernetesCluster /
    Cluster API Cluster manifests among the inputs. DaemonSet pods are taken off every node they
    select; replicas expand to pods; hostname anti-affinity and topology spread cap pods per node.
    \b
    The answer is a placement (fits), a proof of misfit (a lower bound above the node count, or
    CP-SAT's infeasibility proof), or "budget exhausted". Also: least nodes per VM class, stranded
    capacity, burst headroom and the recommended VM class and count (NUMA-fitting classes only).
    \b
    Exit status: 0 fits; 1 does not fit, or undecided within the time budget; 2 usage or input error.
    \b
    Examples:
      podfit pack k8s/ --pool best-effort-xlarge=3
      podfit pack app.yaml cluster-tkc.yaml --format json
    """
    from ..cli import PodfitError, load_config, load_inputs, load_platform
    from ..clusters import all_node_pools
    from ..loader import build_workloads
    from ..packing import Overhead, analyze
    from ..packing.adapter import inputs_from
    from ..packing.report import to_json, to_text

    share = _param(parse_percent, headroom_text, "--headroom")
    budget = _param(parse_duration, budget_text, "--time-budget")
    platform = load_platform(platform_path)
    ov = Overhead(
        _param(parse_cpu, overhead_cpu, "--overhead-cpu") if overhead_cpu is not None else platform.overhead_cpu,
        _param(parse_memory, overhead_memory, "--overhead-memory") if overhead_memory is not None else platform.overhead_memory,
    )
    cli_pools = [_param(lambda t, i=i: parse_pool(t, i), p, "--pool") for i, p in enumerate(pools)]
    result = load_inputs(paths, load_config(None))
    workloads, _ = build_workloads(result.objects)
    node_pools = cli_pools or list(all_node_pools(platform, result.objects))
    inputs = inputs_from(workloads, platform, node_pools, overhead=ov, max_pods=max_pods)
    if inputs.unknown_classes:
        raise PodfitError("unknown VM class: " + ", ".join(sorted(set(inputs.unknown_classes)))
                          + " (see the platform's vmClasses)")
    if not inputs.pools:
        raise PodfitError("no worker node pools: give --pool CLASS=COUNT, a platform profile with nodePools, "
                          "or a TanzuKubernetesCluster / Cluster API Cluster among the inputs")
    analysis = analyze(inputs.pods, inputs.pools, inputs.classes, overhead=inputs.overhead, daemons=inputs.daemons,
                       max_pods=inputs.max_pods, numa_cores=inputs.numa_cores, numa_memory=inputs.numa_memory,
                       share_percent=share, time_budget=budget, family=inputs.family)
    for f in result.findings:
        click.echo(f"podfit: {f.location}: {f.rule}: {f.message}", err=True)
    if fmt == "json":
        data = to_json(analysis)
        data["platform"] = {"name": platform.name, "default": platform.is_default}
        click.echo(json.dumps(data, indent=2, sort_keys=False))
    else:
        if platform.is_default:
            click.echo("(built-in default platform profile)")
        click.echo(to_text(analysis), nl=False)
    sys.exit(EXIT_FITS if analysis.fit.feasible else EXIT_NO_FIT)
