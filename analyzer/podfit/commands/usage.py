"""``podfit usage export``: run the usage queries against a Prometheus and write the bundle
``check --usage`` reads."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

import click


@click.group("usage")
def command() -> None:
    """Measured usage for `check --usage`."""


_DURATION = re.compile(r"^(\d+)([smhdw])$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _seconds(text: str, what: str) -> int:
    m = _DURATION.match(text.strip())
    if not m or int(m[1]) == 0:
        raise click.BadParameter(f"{text!r} is not a duration such as 30s, 5m, 7d", param_hint=what)
    return int(m[1]) * _SECONDS[m[2]]


@command.command("export")
@click.option("--prometheus", "url", required=True, metavar="URL", help="Base URL of the Prometheus (HTTP API).")
@click.option("--window", default="7d", show_default=True, help="How far back from --end: 1h, 7d, 2w.")
@click.option("--end", "end", type=int, metavar="UNIX", help="End of the window, Unix seconds. Default: now.")
@click.option("--step", default="5m", show_default=True, help="Resolution of the range queries.")
@click.option("--namespace", metavar="NS", help="Only this namespace.")
@click.option("--timeout", default=60, show_default=True, help="Seconds per query.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), metavar="FILE", help="Write to FILE.")
def export(
    url: str, window: str, end: int | None, step: str, namespace: str | None, timeout: int, output: str | None
) -> None:
    """Query Prometheus at URL for CPU, memory, CFS throttling and termination reasons per
    container and write them as one file for `podfit check --usage FILE`. Only URL is contacted.

    \b
    Example:
      podfit usage export --prometheus http://localhost:9090 --window 7d -o usage.json
      podfit check k8s/ --usage usage.json
    """
    import time

    from ..usage_export import export_bundle
    from ._common import PodfitError, emit

    base = url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise click.BadParameter("expected an http:// or https:// URL", param_hint="--prometheus")
    end_s = int(time.time()) if end is None else end
    start_s = end_s - _seconds(window, "--window")
    step_s = _seconds(step, "--step")

    def get(path: str, params: Mapping[str, str]) -> Any:
        data = urllib.parse.urlencode(params).encode()
        req = urllib.request.Request(
            base + path, data=data, headers={"Content-Type": "application/x-www-form-urlencoded"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the URL the user named
                doc = json.load(resp)
        except urllib.error.HTTPError as e:
            try:
                detail = json.load(e).get("error", "")
            except (ValueError, AttributeError):
                detail = ""
            raise PodfitError(f"{base}{path}: HTTP {e.code} {detail or e.reason} ({params['query']})") from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise PodfitError(f"{base}{path}: {getattr(e, 'reason', None) or e}") from None
        if doc.get("status") != "success":
            raise PodfitError(f"{base}{path}: {doc.get('error') or doc.get('status')} ({params['query']})")
        return doc

    bundle = export_bundle(get, start_s, end_s, step_s, namespace)
    emit(json.dumps(bundle, indent=1) + "\n", output)
    counts = {k: len(v["response"]["data"]["result"]) for k, v in bundle["queries"].items()}
    click.echo("podfit: series: " + ", ".join(f"{k} {n}" for k, n in counts.items()), err=True)
