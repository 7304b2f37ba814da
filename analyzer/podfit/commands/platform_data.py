"""``podfit platform-data``: the platform facts the Rego policies read, as a conftest ``--data`` file."""

from __future__ import annotations

import json
from typing import Any

import click

from ..cli import PLATFORM_OPTION


@click.command("platform-data")
@click.argument("paths", nargs=-1, metavar="[PATH...]")
@PLATFORM_OPTION
@click.option("--config", "config_path", type=click.Path(dir_okay=False), metavar="FILE", help="Config file (PF104 tolerance).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), metavar="FILE", help="Write to FILE.")
def command(paths: tuple[str, ...], platform_path: str | None, config_path: str | None, output: str | None) -> None:
    """Print the platform facts the Rego policies read from data.podfit.platform, as JSON.

    Feed it to plain conftest, with no podfit in the pipeline afterwards:

    \b
      podfit platform-data --platform platform.yaml k8s/clusters/ -o platform-data.json
      conftest test --policy policies/ --all-namespaces --data platform-data.json k8s/

    PATHs are optional manifests whose TanzuKubernetesCluster / Cluster API objects add node pools
    (they decide the node size PF202 checks against).
    """
    from ..cli import emit, load_config, load_inputs, load_platform
    from ..engines.platform_data import platform_data

    config = load_config(config_path)
    platform = load_platform(platform_path or config.platform)
    objects: Any = load_inputs(paths, config).objects if paths else ()
    data = platform_data(platform, objects, peak_tolerance_percent=config.threshold("PF104", "tolerance-percent", None))
    emit(json.dumps({"podfit": {"platform": data}}, indent=2, sort_keys=True) + "\n", output)
