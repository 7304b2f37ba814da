"""``podfit platform import``: a Platform profile from ``kubectl get nodes`` (and pods)."""

from __future__ import annotations

import sys

import click
import yaml


@click.group("platform")
def command() -> None:
    """Platform profiles: write one from a cluster's nodes."""


@command.command("import")
@click.argument("nodes", metavar="NODES")
@click.option(
    "--pods",
    "pods_path",
    metavar="FILE",
    help="`kubectl get pods -A -o yaml` of the same cluster: the DaemonSet and static pods' requests "
    "on each node are recorded as the pool's systemPods.",
)
@click.option(
    "--name", metavar="NAME", help="metadata.name of the profile. Default: the cluster the nodes name, else 'imported'."
)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), metavar="FILE", help="Write to FILE.")
def import_cmd(nodes: str, pods_path: str | None, name: str | None, output: str | None) -> None:
    """Write a Platform profile from NODES, the output of `kubectl get nodes -o yaml` (or -o json;
    - for stdin).

    \b
    Nodes are grouped into pools by the label their platform defines a pool with (EKS node
    group, GKE node pool, AKS agent pool, Karpenter NodePool, kOps instance group, Cluster API
    MachineDeployment), else by instance type. Each pool gets its node count, its shape as a VM
    class, the kubelet's allocatable, the labels and taints all its nodes carry and the kubelet
    version. The hosts under the nodes (NUMA, sockets), vSphere HA and, on most platforms, the
    CPU Manager policy are not visible on nodes: add them to the profile yourself.
    \b
    Examples:
      kubectl get nodes -o yaml > nodes.yaml; kubectl get pods -A -o yaml > pods.yaml
      podfit platform import nodes.yaml --pods pods.yaml -o platform.yaml
      podfit check k8s/ --platform platform.yaml
    """
    from ..platform import MAX_NODES, PlatformError, platform_from_doc
    from ..platform_import import (
        LEFT_FOR_THE_USER,
        NodeImportError,
        import_platform,
        node_infos,
        parse_objects,
        profile_document,
        system_pods_per_node,
    )
    from ._common import PodfitError, emit, read_text

    def text_of(path: str, what: str) -> str:
        if path != "-":
            return read_text(path, what)
        from ..reading import NotRead, decode, read_stream

        try:  # standard input to the same limit as a file
            return decode(read_stream(sys.stdin.buffer), "<stdin>")
        except NotRead as e:
            raise PodfitError(f"{what} <stdin>: {e.reason}") from None

    try:
        node_docs = parse_objects(text_of(nodes, "nodes"), nodes, "Node")
        if not node_docs:
            raise PodfitError(f"{nodes}: no Node objects (expected `kubectl get nodes -o yaml` output)")
        infos = node_infos(node_docs, nodes)
        system = None
        unplaced = 0
        if pods_path:
            pods = parse_objects(text_of(pods_path, "pods"), pods_path, "Pod")
            system, unplaced = system_pods_per_node(pods)
            unknown = sorted(set(system) - {n.name for n in infos})
            if unknown:
                click.echo(
                    f"podfit: notice: {len(unknown)} node(s) with system pods are not among the nodes: "
                    + ", ".join(unknown[:5]),
                    err=True,
                )
    except NodeImportError as e:
        raise PodfitError(str(e)) from None
    imported = import_platform(infos, system)
    total = sum(p.count for p in imported.pools)
    if total > MAX_NODES:  # more than one cluster can have: the profile would not load
        raise PodfitError(f"{nodes}: {total:,} nodes: at most {MAX_NODES:,}, Kubernetes' nodes per cluster")
    clusters = sorted({p.cluster for p in imported.pools if p.cluster})
    profile_name = name or (clusters[0] if len(clusters) == 1 else "imported")
    doc = profile_document(imported, profile_name, nodes)
    try:
        platform_from_doc(doc, output or "platform")  # what is written must load
    except PlatformError as e:  # a bug in the import, never a file the user cannot use
        raise PodfitError("the imported profile does not validate:\n  " + "\n  ".join(e.problems)) from None
    header = (
        f"# Written by `podfit platform import` from {nodes}"
        + (f" and {pods_path}" if pods_path else "")
        + f": {sum(p.count for p in imported.pools)} node(s) in {len(imported.pools)} pool(s).\n"
        + "# Not visible on nodes, left for you to add:\n"
        + "".join(f"#   {line}\n" for line in LEFT_FOR_THE_USER)
    )
    emit(header + yaml.safe_dump(doc, sort_keys=False, width=100, allow_unicode=True), output)
    for p in imported.pools:
        click.echo(
            f"podfit: pool {p.name}: {p.count} × {p.vm_class}"
            + (f" ({p.provider})" if p.provider else " (by instance type)")
            + (", control plane" if p.role == "control-plane" else ""),
            err=True,
        )
    for note in imported.notes:
        click.echo(f"podfit: notice: {note}", err=True)
    if unplaced:
        click.echo(f"podfit: notice: {unplaced} DaemonSet/static pod(s) not yet on a node were left out", err=True)
    click.echo("podfit: notice: add spec.hosts (NUMA) and spec.ha yourself: nodes do not show them", err=True)
