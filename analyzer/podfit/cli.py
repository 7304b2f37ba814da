"""The ``podfit`` command line: one click group; only this module reads files and prints."""

from __future__ import annotations

import gc
import json
import os
import sys
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import click

from . import __version__
from .catalogue import load_catalogue, resolve
from .check import Report, analyze
from .config import Config, ConfigError, find_config, parse_config_text
from .findings import SEVERITY_RANK
from .loader import InputError, container_line, discover, load, nothing_found, read_files
from .platform import DEFAULT_PLATFORM, Platform, PlatformError, parse_platform

EXIT_OK, EXIT_FINDINGS, EXIT_FAILURE = 0, 1, 2


class PodfitError(click.ClickException):
    """A failure of podfit or its inputs (not a finding): exit 2."""

    exit_code = EXIT_FAILURE

    def show(self, file: Any = None) -> None:
        click.echo(f"podfit: error: {self.format_message()}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except BrokenPipeError:
            sys.exit(EXIT_FAILURE)
        except Exception as e:  # a bug in podfit is never reported as a pass
            if os.environ.get("PODFIT_DEBUG"):
                traceback.print_exc()
            raise PodfitError(f"internal error: {type(e).__name__}: {e} (set PODFIT_DEBUG=1 for a traceback)") from e


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="podfit")
def main() -> None:
    """podfit: are your Kubernetes workloads sized to run fast?

    Lints manifests against performance best practices (Rego policies) and analyses what no
    per-object policy can: packing onto nodes, vSphere Pod (CRX) sizes, HA-adjusted vSphere
    capacity and CFS throttling. Start with `podfit check DIR`.
    """


_RETAINED: list[Any] = []


def run() -> None:
    """The ``podfit`` command: :func:`main`, then out without tearing the heap down. A large run
    leaves hundreds of thousands of objects (``check`` keeps them in ``_RETAINED`` rather than
    let them be freed one by one as it returns) that the process's end frees at once (0.3-0.4 s at
    10,000 objects when it was measured, docs/benchmarks.md). The output is flushed first; every
    file podfit writes is closed before."""
    try:
        main()  # standalone: ends in SystemExit
        code: Any = 0
    except SystemExit as e:
        code = e.code
    if code is None:
        code = EXIT_OK
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = EXIT_FAILURE
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: the output is lost, so not a pass
            code = code or EXIT_FAILURE
    os._exit(code)


# ----------------------------------------------------------------------------------- helpers ---


def read_text(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as e:
        raise PodfitError(f"{what} {path}: {getattr(e, 'strerror', None) or e}") from None


def load_config(path: str | None) -> Config:
    path = path or find_config(".")
    if path is None:
        return Config()
    try:
        return parse_config_text(read_text(path, "config"), path)
    except ConfigError as e:
        raise PodfitError(f"invalid config: {e}") from None


def load_platform(path: str | None) -> Platform:
    if path is None:
        return DEFAULT_PLATFORM
    try:
        return parse_platform(read_text(path, "platform"), path)
    except PlatformError as e:
        raise PodfitError("invalid platform profile:\n  " + "\n  ".join(e.problems)) from None


def load_inputs(paths: Sequence[str], config: Config):  # -> LoadResult
    """Read and parse the inputs (exit 2 when a named path does not exist)."""
    try:
        files = [p for p in discover(paths) if p == "-" or not config.ignored(p)]
        progress = _progress(len(files))
        result = load(read_files(files, config.limits), config.limits, progress)
        if progress is not None:
            click.echo("\r\x1b[K", nl=False, err=True)
        return result
    except InputError as e:
        raise PodfitError(str(e)) from None


_STATUS_MIN_OBJECTS = 2000


def _progress(total: int):
    """A status line on a terminal for long inputs: `podfit: parsed 1,200/5,000 files`."""
    if total < 200 or not sys.stderr.isatty():
        return None
    step = max(total // 100, 1)

    def show(done: int) -> None:
        if done % step == 0 or done == total:
            click.echo(f"\rpodfit: parsed {done:,}/{total:,} files", nl=False, err=True)

    return show


PLATFORM_OPTION = click.option(
    "--platform",
    "platform_path",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Platform profile (kind: Platform). Default: the built-in profile of the study's 4-host cluster.",
)


def _format_choices() -> list[str]:
    from .formats import renderers

    return sorted(renderers()) + ["auto"]  # auto: github under GitHub Actions, else text


# ------------------------------------------------------------------------------------- check ---


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@PLATFORM_OPTION
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Config file (.podfit.yaml or pyproject.toml). Default: ./.podfit.yaml or [tool.podfit].",
)
@click.option(
    "--format", "fmt", default="text", show_default=True, type=click.Choice(_format_choices()), help="Report format."
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    metavar="FILE",
    help="Write the report to FILE instead of standard output.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info", "never"]),
    default=None,
    help="Exit 1 when a finding has this severity or worse. [default: error]",
)
@click.option(
    "--engine",
    type=click.Choice(["auto", "embedded", "opa"]),
    default="auto",
    show_default=True,
    help="Rego engine: in-process (embedded), the opa binary, or opa when found.",
)
@click.option("--rule", "rules", multiple=True, metavar="ID", help="Run only this rule (id or slug); repeatable.")
@click.option(
    "--cluster",
    metavar="NAME",
    help="The cluster all these manifests deploy to. Default: from the config's clusters: mapping, the "
    "platform, or the TanzuKubernetesCluster / Cluster beside them.",
)
@click.option("--color/--no-color", default=None, help="Colour the text report. [default: when a terminal]")
@click.option(
    "--usage",
    "usage_files",
    multiple=True,
    metavar="[KIND=]FILE",
    help="Measured usage: Prometheus query results (KIND cpu, memory, throttled, periods, terminated) or "
    "`kubectl top pods -A --containers` output; repeatable. Enables the usage rules (PF107-PF110, PF209).",
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Let inputs without any Kubernetes object (empty stdin, no manifest files) exit by the "
    "findings; without it such a run exits 2, since nothing was checked.",
)
def check(
    paths: tuple[str, ...],
    platform_path: str | None,
    config_path: str | None,
    fmt: str,
    output: str | None,
    fail_on: str | None,
    engine: str,
    rules: tuple[str, ...],
    cluster: str | None,
    color: bool | None,
    allow_empty: bool,
    usage_files: tuple[str, ...] = (),
) -> None:
    """Check manifests in PATH... (files, directories, or - for stdin) against every rule.

    \b
    Exit status: 0 no finding at or above --fail-on; 1 findings at or above it;
    2 usage, input/output or engine failure (never reported as a pass), or no
    Kubernetes object in the inputs at all (unless --allow-empty).
    \b
    Examples:
      podfit check k8s/
      helm template ./chart | podfit check - --platform platform.yaml
      podfit check deploy.yaml --format json --fail-on warning
    """
    from .formats import render

    # One run over finite input: its objects live until the report is written, and memory comes
    # back by reference counting. The cyclic collector would only walk the growing heap again
    # and again (and, in forked workers, copy every page it touches): 10,000 objects took 4.9 s
    # to analyse with it and 1.7 s without (docs/benchmarks.md).
    gc.disable()
    if fmt == "auto":
        fmt = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    config = load_config(config_path)
    platform = load_platform(platform_path or config.platform)
    selected = []
    for r in rules:
        rule = resolve(r)
        if rule is None:
            raise click.BadParameter(f"unknown rule {r!r} (see `podfit rules`)", param_hint="--rule")
        selected.append(rule.id)
    result = load_inputs(paths, config)
    status = sys.stderr.isatty() and len(result.objects) >= _STATUS_MIN_OBJECTS
    if status:  # a status line while the rules run (seconds for large inputs)
        click.echo(f"\rpodfit: checking {len(result.objects):,} objects", nl=False, err=True)
    from .facts import build_facts

    usage = load_usage(usage_files) if usage_files else None
    facts = build_facts(
        result.objects, platform, cluster, config.cluster_for_path if config.clusters else None, usage=usage
    )
    eng, rego_results = start_engine(engine, facts, selected, config)
    notices: tuple[str, ...] = (eng.notice,) if eng is not None and eng.notice else ()
    if facts.usage is not None:
        from .usage import unmatched_notice

        notices += unmatched_notice(facts.usage)
    report = analyze(result, facts, config, rego_results, selected, eng.name if eng is not None else "", notices)
    if status:
        click.echo("\r\x1b[K", nl=False, err=True)
    emit(render(report, fmt, color=_use_color(color, output, fmt)), output)
    for notice in report.notices:  # on stderr: every format's output stays what it is
        click.echo(f"podfit: notice: {notice}", err=True)
    threshold = fail_on or config.fail_on or "error"
    _RETAINED[:] = [result, report]  # freed by the process's end (see run), not one by one here
    code = exit_status(report, threshold)
    if code == EXIT_OK and not result.objects and not allow_empty:
        # nothing was checked: never a pass (findings at or above --fail-on already fail the run)
        ignored = len(discover(paths)) - len(result.files)
        raise PodfitError(f"{nothing_found(paths, result.files, ignored)}; pass --allow-empty if that is expected")
    sys.exit(code)


def load_usage(specs: Sequence[str]):  # -> list[usage.Series]
    """Read and parse every ``--usage [KIND=]FILE`` (exit 2 on a file podfit cannot read)."""
    from .usage import UsageError, parse_usage

    series = []
    for spec in specs:
        kind, sep, path = spec.partition("=")
        if not sep or os.path.exists(spec):
            kind, path = "", spec
        try:
            series.extend(parse_usage(read_text(path, "usage"), path, kind or None))
        except UsageError as e:
            raise PodfitError(str(e)) from None
    return series


def start_engine(engine: str, facts: Any, selected: list[str], config: Config):
    """Start the Rego evaluation in the background; returns (the engine, or None when no Rego rule
    runs; a function that waits for and returns the results). The Python rules run meanwhile: the
    OPA processes (or the embedded engine's workers) use the other cores. Engine failures surface,
    as PodfitError, on the wait."""
    from .facts import facts_data

    cat = load_catalogue()
    wanted = [
        r.id
        for r in cat.values()
        if r.engine == "rego" and config.rule_enabled(r.id) and (not selected or r.id in selected)
    ]
    if not wanted or not facts.objects:
        return None, lambda: []
    try:
        from .engines import EngineError, get_engine
    except ImportError as e:
        raise PodfitError(f"no Rego engine available: {e}") from None
    try:
        eng = get_engine(engine)
    except EngineError as e:
        raise PodfitError(f"Rego engine unavailable: {e}") from None
    objects = facts.objects
    docs = [o.raw for o in objects]
    data = facts_data(facts, config.rego_options(wanted))
    # evaluated in a thread while the Python rules run here (the wasm engine forks its workers from
    # that thread: see docs/architecture.md, a known gap on Python 3.12+)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="podfit-engine")
    future = pool.submit(eng.evaluate, docs, data, lambda i, name: container_line(objects[i], name))
    pool.shutdown(wait=False)

    def wait() -> list[Any]:
        try:
            return future.result()
        except EngineError as e:
            raise PodfitError(f"Rego engine failed: {e}") from None

    return eng, wait


def exit_status(report: Report, fail_on: str) -> int:
    if fail_on == "never":
        return EXIT_OK
    return EXIT_FINDINGS if report.worst() >= SEVERITY_RANK[fail_on] else EXIT_OK


def _use_color(flag: bool | None, output: str | None, fmt: str) -> bool:
    if fmt != "text" or output:
        return False
    if flag is not None:
        return flag
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def emit(text: str, output: str | None) -> None:
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as e:
            raise PodfitError(f"cannot write {output}: {e.strerror}") from None
    else:
        click.echo(text, nl=False)


# ------------------------------------------------------------------------- rules, explain, docs ---


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_cmd(fmt: str) -> None:
    """List every rule: id, slug, severity, engine and what it finds."""
    cat = sorted(load_catalogue().values(), key=lambda r: r.id)
    if fmt == "json":
        click.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "slug": r.slug,
                        "title": r.title,
                        "severity": r.severity,
                        "engine": r.engine,
                        "category": r.category,
                        "summary": r.summary,
                        "fix": r.fix,
                        "source": r.source,
                    }
                    for r in cat
                ],
                indent=2,
            )
        )
        return
    for r in cat:
        click.echo(f"{r.id}  {r.slug:<38} {r.severity:<8} {r.engine:<7} {r.title}")


@main.command()
@click.argument("rule_id", metavar="ID")
def explain(rule_id: str) -> None:
    """Explain one rule (by id or slug): what it finds, why it matters, an example, the fix."""
    from .docs import explain as explain_rule

    rule = resolve(rule_id)
    if rule is None:
        raise PodfitError(f"unknown rule {rule_id!r}; `podfit rules` lists them")
    click.echo(explain_rule(rule))


@main.command()
@click.option("--check", "check_only", is_flag=True, help="Exit 1 if the generated docs are out of date.")
@click.option("--root", default=".", show_default=True, type=click.Path(file_okay=False), help="Repository root.")
def docs(check_only: bool, root: str) -> None:
    """Generate docs/rules.md and the README's rule table from the catalogue."""
    from .catalogue import catalogue_problems
    from .docs import rules_md, update_readme

    problems = catalogue_problems()
    if problems:
        click.echo("the rule catalogue is inconsistent:\n  " + "\n  ".join(problems), err=True)
        sys.exit(EXIT_FINDINGS)
    targets = {os.path.join(root, "docs", "rules.md"): lambda _old: rules_md()}
    readme = os.path.join(root, "README.md")
    targets[readme] = update_readme
    stale = []
    for path, make in targets.items():
        old = read_text(path, "file") if os.path.exists(path) else ""
        try:
            new = make(old)
        except ValueError as e:
            raise PodfitError(f"{path}: {e}") from None
        if new != old:
            stale.append(path)
            if not check_only:
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(new)
    if check_only and stale:
        click.echo("out of date (run `podfit docs`): " + ", ".join(stale), err=True)
        sys.exit(EXIT_FINDINGS)
    for path in stale:
        click.echo(f"wrote {path}")


def _register_plugins() -> None:
    from .commands import discover as discover_commands

    for cmd in discover_commands():
        if cmd.name not in main.commands:
            main.add_command(cmd)


_register_plugins()
