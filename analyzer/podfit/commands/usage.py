"""``podfit usage export``: run the usage queries against a Prometheus and write the bundle
``check --usage`` reads."""

from __future__ import annotations

import math
import os
import re
import stat
from typing import Any

import click


@click.group("usage")
def command() -> None:
    """Measured usage for `check --usage`."""


_DURATION = re.compile(r"^([0-9]{1,9})([smhdw])$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _seconds(text: str, what: str) -> int:
    m = _DURATION.match(text.strip())
    if not m or int(m[1]) == 0:
        raise click.BadParameter(f"{text!r} is not a duration such as 30s, 5m, 7d", param_hint=what)
    return int(m[1]) * _SECONDS[m[2]]


_TOKEN_FILE_CAP = 64 * 1024
_MAX_TIMEOUT_S = 86400.0


def _timeout(ctx: click.Context, param: click.Parameter, value: Any) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= _MAX_TIMEOUT_S):
        raise click.BadParameter(f"expected seconds above 0 and at most {_MAX_TIMEOUT_S:g}", ctx, param)
    return seconds


def _positive(ctx: click.Context, param: click.Parameter, value: Any) -> int:
    text = str(value).strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 12 and int(text) > 0):
        raise click.BadParameter("expected a whole number above 0 (at most 12 digits)", ctx, param)
    return int(text)


def _size(ctx: click.Context, param: click.Parameter, value: Any) -> int:
    from ..quantity import QuantityError, parse_memory

    try:
        nbytes = parse_memory(str(value))
    except QuantityError:
        nbytes = 0
    if nbytes <= 0:
        raise click.BadParameter("expected a size in bytes above 0, such as 268435456 or 256Mi", ctx, param)
    return nbytes


def _token(text: str, what: str) -> str:
    """A bearer token as HTTP can carry it; a usage error naming ``what``, never the token."""
    token = text.strip()
    if not token:
        raise click.BadParameter("the token is empty", param_hint=what)
    if not all(0x21 <= ord(c) <= 0x7E for c in token):
        raise click.BadParameter(
            "the token holds a space, a control or a non-ASCII character, which an HTTP header cannot carry",
            param_hint=what,
        )
    return token


def _read_token_file(path: str) -> str:
    """The token file: a regular file of at most 64 KiB (a FIFO or a device would never end)."""
    what = "--bearer-token-file"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise click.BadParameter(f"cannot open {path}: {e.strerror}", param_hint=what) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise click.BadParameter(f"{path} is not a regular file", param_hint=what)
        data = b""
        while len(data) <= _TOKEN_FILE_CAP:
            chunk = os.read(fd, _TOKEN_FILE_CAP + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError as e:
        raise click.BadParameter(f"cannot read {path}: {e.strerror}", param_hint=what) from None
    finally:
        os.close(fd)
    if len(data) > _TOKEN_FILE_CAP:
        raise click.BadParameter(f"{path} is larger than {_TOKEN_FILE_CAP // 1024} KiB", param_hint=what)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise click.BadParameter(f"{path} is not UTF-8 text", param_hint=what) from None
    return _token(text, f"{what} {path}")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # either is missing or unreadable: not the same existing file
        return False


@command.command("export")
@click.option(
    "--prometheus",
    "url",
    required=True,
    metavar="URL",
    help="Base URL of the Prometheus (HTTP API). A user and password in it (http://user:pass@host:9090) "
    "are sent as HTTP basic auth and shown in no message.",
)
@click.option(
    "--bearer-token-file",
    "token_file",
    metavar="PATH",
    help="Send the token in PATH (a regular file, at most 64 KiB) as `Authorization: Bearer`.",
)
@click.option(
    "--bearer-token-env",
    "token_env",
    metavar="NAME",
    help="Send the token in environment variable NAME as `Authorization: Bearer`.",
)
@click.option("--window", default="7d", show_default=True, help="How far back from --end: 1h, 7d, 2w.")
@click.option("--end", "end", type=int, metavar="UNIX", help="End of the window, Unix seconds. Default: now.")
@click.option("--step", default="5m", show_default=True, help="Resolution of the range queries.")
@click.option("--namespace", metavar="NS", help="Only this namespace.")
@click.option(
    "--timeout",
    default="300",
    show_default=True,
    callback=_timeout,
    metavar="SECONDS",
    help="Seconds for the whole export: every query, connection and read.",
)
@click.option(
    "--max-series",
    default="20000",
    show_default=True,
    callback=_positive,
    metavar="N",
    help="Most series one answer may hold.",
)
@click.option(
    "--max-bytes",
    default="64Mi",
    show_default=True,
    callback=_size,
    metavar="SIZE",
    help="Most bytes one answer may hold (a number or a quantity such as 64Mi).",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), metavar="FILE", help="Write to FILE.")
def export(
    url: str,
    token_file: str | None,
    token_env: str | None,
    window: str,
    end: int | None,
    step: str,
    namespace: str | None,
    timeout: float,
    max_series: int,
    max_bytes: int,
    output: str | None,
) -> None:
    """Query Prometheus at URL for CPU, memory, CFS throttling and termination reasons per
    container and write them as one file for `podfit check --usage FILE`. Only URL is contacted
    (on the same host when it redirects), and no proxy is used.

    \b
    Example:
      podfit usage export --prometheus http://localhost:9090 --window 7d -o usage.json
      PROM_TOKEN=... podfit usage export --prometheus https://prom.example --bearer-token-env PROM_TOKEN
      podfit check k8s/ --usage usage.json
    """
    import time

    from .. import __version__
    from ..usage_export import NAMESPACE, ExportError, PrometheusClient, export_bundle, parse_target
    from ._common import PodfitError, emit

    try:
        target = parse_target(url)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--prometheus") from None
    if token_file and token_env:
        raise click.UsageError("give one of --bearer-token-file and --bearer-token-env")
    token = None
    if token_env:
        value = os.environ.get(token_env)
        if value is None:
            raise click.BadParameter(f"environment variable {token_env} is not set", param_hint="--bearer-token-env")
        token = _token(value, f"--bearer-token-env {token_env}")
    elif token_file:
        if output and _same_file(output, token_file):
            raise click.BadParameter("names the --bearer-token-file: it would be overwritten", param_hint="--output")
        token = _read_token_file(token_file)
    if token and target.username is not None:
        raise click.UsageError("give either a user and password in --prometheus or a bearer token, not both")
    if namespace is not None and not NAMESPACE.fullmatch(namespace):
        raise click.BadParameter(
            "not a Kubernetes namespace name (lower-case letters, digits and '-', at most 63)", param_hint="--namespace"
        )
    end_s = int(time.time()) if end is None else end
    start_s = end_s - _seconds(window, "--window")
    step_s = _seconds(step, "--step")

    client = PrometheusClient(
        target,
        bearer_token=token,
        timeout_s=timeout,
        max_bytes=max_bytes,
        max_series=max_series,
        user_agent=f"podfit/{__version__}",
    )
    try:
        text, counts = export_bundle(client.get, start_s, end_s, step_s, namespace)
    except ExportError as e:
        raise PodfitError(str(e)) from None
    emit(text, output)
    click.echo("podfit: series: " + ", ".join(f"{k} {n}" for k, n in counts.items()), err=True)
