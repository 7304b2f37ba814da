"""``podfit platform import``: a Platform profile from ``kubectl get nodes`` (and pods)."""

from __future__ import annotations

import os
import sys

import click
import yaml

from ..words import plural


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
    "on each node are recorded as the pool's systemPods, the other kube-system and openshift-* pods (coredns, router) as its "
    "reservedPods. Default with a cluster-info dump directory: its <namespace>/pods.json.",
)
@click.option(
    "--name", metavar="NAME", help="metadata.name of the profile. Default: the cluster the nodes name, else 'imported'."
)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), metavar="FILE", help="Write to FILE.")
def import_cmd(nodes: str, pods_path: str | None, name: str | None, output: str | None) -> None:
    """Write a Platform profile from NODES, the output of `kubectl get nodes -o yaml` (or -o json,
    or `kubectl get --raw /api/v1/nodes`; - for stdin), or the directory `kubectl cluster-info dump
    --output-directory DIR` writes (its nodes.json, and each namespace's pods.json as the pods).

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
      kubectl cluster-info dump --all-namespaces --output-directory dump/
      podfit platform import dump/ -o platform.yaml
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
        reserved_pods_per_node,
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

    nodes_file, pod_files = nodes, [pods_path] if pods_path else []
    if nodes != "-" and os.path.isdir(nodes):
        nodes_file, dumped = _dump_files(nodes)
        pod_files = pod_files or dumped
    try:
        node_docs = parse_objects(text_of(nodes_file, "nodes"), nodes_file, "Node")
        if not node_docs:
            raise PodfitError(f"{nodes_file}: no Node objects (expected `kubectl get nodes -o yaml` output)")
        infos = node_infos(node_docs, nodes_file)
        system = None
        reserved = None
        unplaced = 0
        if pod_files:
            pods = [p for f in pod_files for p in parse_objects(text_of(f, "pods"), f, "Pod")]
            system, unplaced = system_pods_per_node(pods)
            reserved = reserved_pods_per_node(pods)
            unknown = sorted(set(system) - {n.name for n in infos})
            if unknown:
                click.echo(
                    f"podfit: notice: {plural(len(unknown), 'node')} with system pods "
                    f"{'is' if len(unknown) == 1 else 'are'} not among the nodes: " + ", ".join(unknown[:5]),
                    err=True,
                )
    except NodeImportError as e:
        raise PodfitError(str(e)) from None
    imported = import_platform(infos, system, reserved)
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
        + (f" and {pods_path}" if pods_path else f" and {len(pod_files)} pods.json" if pod_files else "")
        + f": {plural(sum(p.count for p in imported.pools), 'node')} in {plural(len(imported.pools), 'pool')}.\n"
        + "# Not visible on nodes, left for you to add:\n"
        + "".join(f"#   {line}\n" for line in LEFT_FOR_THE_USER)
    )
    emit(header + yaml.safe_dump(doc, sort_keys=False, width=100, allow_unicode=True), output)
    for p in imported.pools:
        click.echo(
            f"podfit: pool {p.name}: {p.count} × {p.vm_class}"
            + (f" ({p.provider})" if p.provider else " (by instance type)")
            + (", control plane" if p.role == "control-plane" else "")
            + ("; reserved: " + ", ".join(f"{n} × {count}" for n, count, _, _ in p.reserved) if p.reserved else ""),
            err=True,
        )
    for note in imported.notes:
        click.echo(f"podfit: notice: {note}", err=True)
    if unplaced:
        click.echo(f"podfit: notice: {unplaced} DaemonSet/static pod(s) not yet on a node were left out", err=True)
    click.echo("podfit: notice: add spec.hosts (NUMA) and spec.ha yourself: nodes do not show them", err=True)


def _dump_files(directory: str) -> tuple[str, list[str]]:
    """The nodes file and the pods files of a ``kubectl cluster-info dump --output-directory``
    directory: ``DIR/nodes.json`` and ``DIR/<namespace>/pods.json``, namespaces in name order."""
    from ._common import PodfitError

    nodes = os.path.join(directory, "nodes.json")
    if not os.path.isfile(nodes):
        raise PodfitError(
            f"{directory}: a directory without nodes.json (expected `kubectl cluster-info dump "
            "--output-directory DIR` output, or a file of `kubectl get nodes -o yaml`)"
        )
    try:
        entries = sorted(os.listdir(directory))
    except OSError as e:
        raise PodfitError(f"{directory}: cannot list: {e.strerror}") from None
    pods = [path for e in entries if os.path.isfile(path := os.path.join(directory, e, "pods.json"))]
    return nodes, pods
