"""``podfit platform-data``: the platform facts the Rego policies read, as a conftest ``--data`` file."""

from __future__ import annotations

import json
from typing import Any

import click

from ._common import ManifestOptions, emit, load_inputs, manifest_options, output_option


@click.command("platform-data")
@click.argument("paths", nargs=-1, metavar="[PATH...]")
@manifest_options()
@output_option
def command(
    paths: tuple[str, ...],
    manifest: ManifestOptions,
    output: str | None,
) -> None:
    """Print the facts the Rego policies read (data.podfit), as JSON for conftest --data.

    Feed it to plain conftest, with no podfit in the pipeline afterwards:

    \b
      podfit platform-data --platform platform.yaml k8s/clusters/ -o platform-data.json
      conftest test --policy policies/ --all-namespaces --data platform-data.json k8s/

    The same document `podfit check` gives its own engine. PATHs are optional manifests: their
    TanzuKubernetesCluster / Cluster API objects add node pools (the node size PF202 checks
    against), their LimitRanges the container defaults of each namespace, and their workloads
    each one's own facts (node size, Linux-only placement, pinned CPUs).
    """
    from ..catalogue import load_catalogue
    from ..facts import build_facts, facts_data

    config, platform = manifest.config_and_platform()
    objects: Any = load_inputs(paths, config, manifest.platform_file(config)).objects if paths else ()
    rego = [r.id for r in load_catalogue().values() if r.engine == "rego"]
    data = facts_data(build_facts(objects, platform, workload_kinds=config.workload_kinds), config.rego_options(rego))
    emit(json.dumps({"podfit": data}, indent=2, sort_keys=True) + "\n", output)
