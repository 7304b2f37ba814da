"""The ``podfit`` command line: parses options and prints. The work is done by
:mod:`podfit.pipeline` (check), :mod:`podfit.docs` and the modules the other commands call; the
options they share, and reading the config, platform and inputs, are in
:mod:`podfit.commands._common`. Subcommands are imported when they run, so a ``check`` pays for
none of the others."""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Any

import click

from . import __version__, codecache
from .commands._common import (
    EXIT_FAILURE,
    EXIT_OK,
    GuardedStdout,
    Interrupted,
    ManifestOptions,
    PodfitError,
    StdoutError,
    clear_status,
    emit,
    fail_on_option,
    load_config,
    load_inputs,
    load_platform,
    load_usage,
    manifest_options,
    output_option,
    read_text,
    status,
    status_enabled,
    stdout_failure,
)

__all__ = ["main", "run", "PodfitError", "emit", "load_config", "load_inputs", "load_platform", "read_text"]

# Subcommands defined in other modules, imported only when named (or when the help lists them).
LAZY_COMMANDS = {
    "export": "podfit.commands.export",
    "fix": "podfit.commands.fix",
    "pack": "podfit.commands.pack",
    "platform": "podfit.commands.platform",
    "platform-data": "podfit.commands.platform_data",
    "throttle": "podfit.commands.throttle",
    "usage": "podfit.commands.usage",
    "vsphere": "podfit.commands.vsphere",
}
FORMATS = ("text", "json", "sarif", "junit", "github", "html")  # podfit.formats.NAMES, without importing it


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands or name not in LAZY_COMMANDS:
            return super().get_command(ctx, name)
        cmd = importlib.import_module(LAZY_COMMANDS[name]).command
        self.add_command(cmd, name)
        return cmd

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:  # while the arguments are read or the help is written
            raise Interrupted() from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            raise Interrupted() from None
        except BrokenPipeError:
            sys.exit(EXIT_FAILURE)
        except (OSError, ValueError) as e:
            failure = stdout_failure()
            if failure is not None:  # closed or full: the output is lost, and that is no pass
                raise StdoutError(failure) from None
            raise self._internal(e) from e
        except Exception as e:  # a bug in podfit is never reported as a pass
            raise self._internal(e) from e

    @staticmethod
    def _internal(e: Exception) -> PodfitError:
        if os.environ.get("PODFIT_DEBUG"):
            import traceback

            traceback.print_exception(e)
        return PodfitError(f"internal error: {type(e).__name__}: {e} (set PODFIT_DEBUG=1 for a traceback)")


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
    """The ``podfit`` command (the console script and ``python -m podfit``): :func:`run_main`,
    then out without tearing the heap down. A large run leaves hundreds of thousands of objects (``check`` keeps them in ``_RETAINED`` rather than let them
    be freed one by one as it returns) that the process's end frees at once (0.3-0.4 s at 10,000
    objects)."""
    _PRESTART.append(True)  # this process is the command's own: check may start its engine early
    try:
        code = run_main()
    except KeyboardInterrupt:  # after the command, while its engine and caches are put away
        Interrupted().show()
        code = Interrupted.exit_code
    os._exit(code)


_PRESTART: list[bool] = []


def run_main(prog_name: str | None = None) -> int:
    """:func:`main` with ``sys.argv``; its exit status, after the output is flushed (every file
    podfit writes is closed before). A closed pipe loses the output, so it is not a pass.
    ``prog_name``: the name usage lines show (click's own guess when None)."""
    # a write that fails (standard output closed or full) is the run's error, exit 2
    stdout = sys.stdout
    sys.stdout = GuardedStdout(stdout)  # type: ignore[assignment]
    try:
        return _run_guarded(prog_name)
    finally:
        sys.stdout = stdout
        if "podfit.engines.wasm" in sys.modules:  # an engine started early and never used ends
            sys.modules["podfit.engines.wasm"].stop_prestarted()
        codecache.save()


def _run_guarded(prog_name: str | None) -> int:
    try:
        main(prog_name=prog_name)  # standalone: ends in SystemExit
        code: Any = 0
    except SystemExit as e:
        code = e.code
    except (OSError, ValueError):  # outside a command: --help, --version, a usage message
        failure = stdout_failure()
        if failure is None:
            raise
        StdoutError(failure).show()
        code = EXIT_FAILURE
    if code is None:
        code = EXIT_OK
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = EXIT_FAILURE
    shown = stdout_failure() is not None  # the command's error said so already
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`podfit ... | head`): the output is cut short
        code = EXIT_FAILURE
    except (OSError, ValueError) as e:  # full: what was not written is lost, whatever the findings
        if not shown:
            StdoutError(getattr(e, "strerror", None) or str(e)).show()
        code = EXIT_FAILURE
    try:
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        code = code or EXIT_FAILURE
    return int(code)


# ------------------------------------------------------------------------------------- check ---

_STATUS_MIN_OBJECTS = 2000  # below this a run is over before a status line could be read


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@manifest_options("run")
@click.option(
    "--format",
    "fmt",
    default="text",
    show_default=True,
    type=click.Choice([*FORMATS, "auto"]),
    help="Report format (auto: github under GitHub Actions, else text).",
)
@output_option
@fail_on_option
@click.option(
    "--engine",
    type=click.Choice(["auto", "embedded", "opa"]),
    default="auto",
    show_default=True,
    help="Rego engine: in-process (embedded), the opa binary, or opa when the shipped policies were edited.",
)
@click.option(
    "--cluster",
    metavar="NAME",
    help="The cluster all these manifests deploy to. Default: from the config's clusters: mapping, the "
    "platform, or the TanzuKubernetesCluster / Cluster beside them.",
)
@click.option("--show-fixes", is_flag=True, help="Text: the fix under every finding (default: once per rule).")
@click.option("--quiet", "-q", is_flag=True, help="Text: only the findings and the totals line.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Text: also list the skipped rules and files and every path left out and why, one per line, "
    "and each message whole.",
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
    "--baseline",
    "baseline_path",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Report and fail only on findings not in this baseline (written by --write-baseline); the totals "
    "say how many it accepted, SARIF marks each result new or unchanged.",
)
@click.option(
    "--write-baseline",
    "write_baseline",
    type=click.Path(dir_okay=False, writable=True),
    metavar="FILE",
    help="Write every finding of this run to FILE as the baseline (fingerprints that survive moved lines "
    "and renamed files) and exit 0: the findings written are accepted.",
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Let inputs without any Kubernetes object (empty stdin, no manifest files) exit by the "
    "findings; without it such a run exits 2, since nothing was checked.",
)
def check(
    paths: tuple[str, ...],
    manifest: ManifestOptions,
    fmt: str,
    output: str | None,
    fail_on: str | None,
    engine: str,
    cluster: str | None,
    show_fixes: bool,
    quiet: bool,
    verbose: bool,
    color: bool | None,
    allow_empty: bool,
    usage_files: tuple[str, ...] = (),
    baseline_path: str | None = None,
    write_baseline: str | None = None,
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
    from .loader import nothing_found
    from .pipeline import PipelineError, exit_status
    from .pipeline import check as run_check
    from .words import plural

    # One run over finite input: its objects live until the report is written, and memory comes
    # back by reference counting. The cyclic collector would only walk the growing heap again
    # and again (and, in forked workers, copy every page it touches): 10,000 objects take 4.9 s
    # to analyse with it and 1.7 s without (bench/stages.py --variant gc-on).
    gc.disable()
    if _PRESTART and engine in ("auto", "embedded"):
        # the embedded engine loads on the other CPU while the inputs are read (engines.wasm.prestart)
        from .engines.wasm import prestart

        prestart()
    if fmt == "auto":
        fmt = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    config, platform = manifest.config_and_platform()
    replaces = baseline_path  # the one input the baseline written may replace
    if write_baseline is not None:
        if output and os.path.abspath(output) == os.path.abspath(write_baseline):
            raise click.BadParameter("names the file of --output; give each its own", param_hint="--write-baseline")
        replaces = _old_baseline(write_baseline, config.limits.max_file_bytes) or baseline_path
    baselines = [(p, "the baseline") for p in (baseline_path, write_baseline) if p]
    result = load_inputs(paths, config, manifest.platform_file(config), baselines)
    progress = status if status_enabled() and len(result.objects) >= _STATUS_MIN_OBJECTS else None
    try:
        report, facts = run_check(
            result,
            platform,
            config,
            engine=engine,
            cluster=cluster,
            progress=progress,
            usage=load_usage(usage_files, config.limits.max_file_bytes) if usage_files else None,
        )
    except PipelineError as e:
        raise PodfitError(str(e)) from None
    finally:
        clear_status()
    if baseline_path is not None:
        from .baseline import BaselineError, apply_baseline, parse_baseline

        try:
            accepted = parse_baseline(read_text(baseline_path, "baseline", config.limits.max_file_bytes))
        except BaselineError as e:
            raise PodfitError(f"baseline {baseline_path}: {e}") from None
        report = apply_baseline(report, accepted, baseline_path)
    threshold = fail_on or config.fail_on or "error"
    text = render(
        report,
        fmt,
        color=_use_color(color, output, fmt),
        fail_on=threshold,
        show_fixes=show_fixes,
        quiet=quiet,
        verbose=verbose,
        **({"visuals": _visuals(report, facts)} if fmt == "html" else {}),
    )
    if write_baseline is not None:
        from .baseline import baseline_text

        emit(baseline_text(report), write_baseline, "--write-baseline", replaces=replaces)
    emit(text, output)
    if write_baseline is not None:
        n = len(report.findings) + len(report.baselined)
        click.echo(f"podfit: wrote {plural(n, 'finding')} to the baseline {write_baseline}", err=True)
    for notice in report.notices:  # on stderr: every format's output stays what it is
        click.echo(f"podfit: notice: {notice}", err=True)
    _RETAINED[:] = [result, report]  # freed by the process's end (see run), not one by one here
    code = EXIT_OK if write_baseline is not None else exit_status(report, threshold)
    if code == EXIT_OK and not result.objects and not allow_empty:
        # nothing was checked: never a pass (findings at or above --fail-on already fail the run)
        ignored = len(result.excluded)
        raise PodfitError(
            f"{nothing_found(paths, result.files, ignored, result.findings)}; pass --allow-empty if that is expected"
        )
    sys.exit(code)


def _old_baseline(path: str, limit: int) -> str | None:
    """``path`` when it holds a baseline that --write-baseline may replace, None when there is no
    file; exit 2 when it holds anything else (a manifest named by mistake is never overwritten)."""
    from .baseline import BaselineError, parse_baseline

    if not os.path.lexists(path):
        return None
    try:
        parse_baseline(read_text(path, "--write-baseline", limit))
    except (BaselineError, PodfitError):
        raise PodfitError(
            f"--write-baseline {path} exists and is not a podfit baseline; podfit does not replace it: name another file"
        ) from None
    return path


def _visuals(report: Any, facts: Any) -> Any:
    """The figures of the HTML report's pictures (podfit.visuals)."""
    from .visuals import collect

    return collect(facts, report.findings, report.analyses)


def _use_color(flag: bool | None, output: str | None, fmt: str) -> bool:
    if fmt != "text" or output:
        return False
    if flag is not None:
        return flag
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


# ------------------------------------------------------------------------- rules, explain, docs ---


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_cmd(fmt: str) -> None:
    """List every rule: id, slug, severity, engine and what it finds."""
    from .docs import rules_json, rules_lines

    if fmt == "json":
        click.echo(rules_json())
    else:
        click.echo("\n".join(rules_lines()))


@main.command()
@click.argument("rule_id", metavar="ID")
def explain(rule_id: str) -> None:
    """Explain one rule (by id or slug): what it finds, why it matters, an example, the fix."""
    from .catalogue import resolve
    from .docs import explain as explain_rule

    rule = resolve(rule_id)
    if rule is None:
        raise PodfitError(f"unknown rule {rule_id!r}; `podfit rules` lists them")
    click.echo(explain_rule(rule))


@main.command(hidden=True)  # a contributor's tool: not in the user's help
@click.option("--check", "check_only", is_flag=True, help="Exit 1 if the generated docs are out of date.")
@click.option("--root", default=".", show_default=True, type=click.Path(file_okay=False), help="Repository root.")
def docs(check_only: bool, root: str) -> None:
    """Generate docs/rules.md, the README's rule table and counts, and the config schema's rule options."""
    from .catalogue import catalogue_problems
    from .docs import generated_files

    problems = catalogue_problems()
    if problems:
        click.echo("the rule catalogue is inconsistent:\n  " + "\n  ".join(problems), err=True)
        sys.exit(1)
    stale = []
    for path, make in generated_files(root).items():
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
        sys.exit(1)
    for path in stale:
        click.echo(f"wrote {path}")
