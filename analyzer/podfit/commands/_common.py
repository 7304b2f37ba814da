"""What every command shares: the option vocabulary (one name, type and help per option across
``check``, ``fix``, ``pack``, ``vsphere``, ``throttle`` and ``platform-data``; the options of every
command that reads manifests defined once, :func:`manifest_options`), reading the config, the
platform and the inputs (charts and kustomizations rendered in place) with errors a user can act
on, status lines and writing the output."""

from __future__ import annotations

import errno
import functools
import io
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import click

EXIT_OK, EXIT_FAILURE = 0, 2  # 1 (findings) is pipeline.exit_status's
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + the signal's number, as a shell reports it
FAIL_ON_CHOICES = ("error", "warning", "info", "never")


class PodfitError(click.ClickException):
    """A failure of podfit or its inputs (not a finding): exit 2."""

    exit_code = EXIT_FAILURE

    def show(self, file: Any = None) -> None:
        click.echo(f"podfit: error: {self.format_message()}", err=True)


class Interrupted(PodfitError):
    """Ctrl-C (SIGINT) during a command: nothing was checked to the end, so neither a pass nor
    findings (click's own "Aborted!" would exit 1, which reads as findings)."""

    exit_code = EXIT_INTERRUPTED

    def __init__(self) -> None:
        super().__init__("interrupted")

    def show(self, file: Any = None) -> None:
        click.echo(err=True)  # ends the line the terminal's ^C echo is on
        super().show(file)


# ------------------------------------------------------------------------------------ options ---


class Duration(click.ParamType):
    """A duration: ``10s``, ``500ms``, ``2m`` or a number of seconds; converted to seconds."""

    name = "DURATION"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        if isinstance(value, (int, float)):
            return float(value)
        from ..options import parse_duration

        try:
            return parse_duration(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


DURATION = Duration()


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange without nan, which compares false with both bounds and so slips past them."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail(f"{value!r} is not a number in the range {self._describe_range()}", param, ctx)
        return number


platform_option = click.option(
    "--platform",
    "platform_path",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Platform profile (kind: Platform): hosts, VM classes, node pools, runtime. "
    "Default: the config's platform, else the built-in profile of the study's 4-host cluster.",
)
nodes_option = click.option(
    "--nodes",
    "nodes",
    multiple=True,
    metavar="PROVIDER:TYPE=COUNT",
    help="A node pool of COUNT cloud instances (repeatable; PROVIDER eks, gke or aks, e.g. "
    "gke:e2-standard-4=3), with that service's allocatable and pods per node (docs/platform.md). "
    "Added to the --platform profile's pools; without a profile, the nodes are the whole cluster.",
)
config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Config file (.podfit.yaml or pyproject.toml [tool.podfit]). Default: the one in the current directory.",
)
output_option = click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    metavar="FILE",
    help="Write the report to FILE instead of standard output.",
)
fail_on_option = click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON_CHOICES),
    default=None,
    help="Exit 1 when a finding has this severity or worse; never: exit 0 whatever is found. "
    "[default: the config's fail-on, else error]",
)


def _split(values: Sequence[str]) -> list[str]:
    """Repeated and comma-separated values, as ruff takes them (``--select PF101,PF102``)."""
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def path_selection_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--exclude``, ``--extend-exclude`` and ``--respect-gitignore``: the files a directory's
    expansion leaves out (:mod:`podfit.selection`); passed on as ``selection``."""
    options = [
        click.option(
            "--exclude",
            "exclude",
            multiple=True,
            metavar="GLOB",
            help="Leave out these paths (repeatable or comma-separated), replacing the default list "
            "(.git, node_modules, .venv, caches ...) and the config's exclude. A glob without / matches "
            "any file or directory name.",
        ),
        click.option(
            "--extend-exclude",
            "extend_exclude",
            multiple=True,
            metavar="GLOB",
            help="Leave out these paths too (repeatable or comma-separated).",
        ),
        click.option(
            "--respect-gitignore/--no-respect-gitignore",
            "respect_gitignore",
            default=None,
            help="Leave out what .gitignore files ignore. [default: the config's respect-gitignore, else yes]",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def rule_selection_options(what: str) -> Callable[[Any], Any]:
    """``--select`` (alias ``--rule``) and ``--ignore``: rule ids, slugs or id prefixes."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        f = click.option(
            "--ignore",
            "ignore_rules",
            multiple=True,
            metavar="RULE",
            help=f"Do not {what} this rule (id, slug or id prefix such as PF1; repeatable or comma-separated); "
            "added to the config's ignore.",
        )(f)
        return click.option(
            "--select",
            "--rule",
            "rules",
            multiple=True,
            metavar="RULE",
            help=f"{what.capitalize()} only this rule (id, slug or id prefix such as PF1; repeatable or "
            "comma-separated); replaces the config's select.",
        )(f)

    return decorate


def rule_ids_of(values: Sequence[str], hint: str) -> list[str]:
    """The rule ids that ``--select`` / ``--ignore`` values name; a usage error naming the option
    for one that names no rule."""
    from ..config import rule_ids

    out: list[str] = []
    for value in _split(values):
        ids = rule_ids(value)
        if not ids:
            raise click.BadParameter(f"unknown rule {value!r} (see `podfit rules`)", param_hint=hint)
        out.extend(i for i in ids if i not in out)
    return out


def apply_selection(
    config: Any,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    exclude: Sequence[str] = (),
    extend_exclude: Sequence[str] = (),
    respect_gitignore: bool | None = None,
) -> Any:
    """The config with the command line's selection applied (see Config.with_selection); a
    usage error when it leaves no rule to run (nothing checked is never a pass)."""
    from ..catalogue import load_catalogue

    out = config.with_selection(
        select=rule_ids_of(select, "--select"),
        ignore=rule_ids_of(ignore, "--ignore"),
        exclude=_split(exclude),
        extend_exclude=_split(extend_exclude),
        respect_gitignore=respect_gitignore,
    )
    if (select or ignore) and not any(out.rule_enabled(r) for r in load_catalogue()):
        raise click.BadParameter(
            "no rule is left to run, so nothing would be checked (`podfit rules` lists them)",
            param_hint="--ignore" if ignore else "--select",
        )
    return out


@dataclass(frozen=True)
class ManifestOptions:
    """What the options of :func:`manifest_options` say, as one value: the command line's
    ``--platform`` and ``--config``, its path selection and (for a command with a verb) its rule
    selection."""

    platform_path: str | None = None
    nodes: tuple[str, ...] = ()
    config_path: str | None = None
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool | None = None
    rules: tuple[str, ...] = ()
    ignore_rules: tuple[str, ...] = ()

    def config(self, *, rule_selection: bool = True) -> Any:
        """The config (``--config``, else the one discovered in the current directory) with the
        selection applied; without ``rule_selection``, the path selection only (for a command
        that reads ``--select``/``--ignore`` itself)."""
        return apply_selection(
            load_config(self.config_path),
            select=self.rules if rule_selection else (),
            ignore=self.ignore_rules if rule_selection else (),
            exclude=self.exclude,
            extend_exclude=self.extend_exclude,
            respect_gitignore=self.respect_gitignore,
        )

    def platform_file(self, config: Any) -> str | None:
        """The platform profile's path: ``--platform``, else the config's ``platform``."""
        return self.platform_path or config.platform

    def config_and_platform(self, *, rule_selection: bool = True) -> tuple[Any, Any]:
        """:meth:`config` and the platform profile it names (the built-in one without any)."""
        config = self.config(rule_selection=rule_selection)
        platform = load_platform(self.platform_file(config), config.limits.max_file_bytes)
        if self.nodes:
            from ..cloud import CloudError
            from ..platform import with_nodes

            try:
                platform = with_nodes(platform, self.nodes)
            except CloudError as e:
                raise click.BadParameter(str(e), param_hint="--nodes") from None
        return config, platform


_MANIFEST_OPTIONS = tuple(f.name for f in fields(ManifestOptions))


def manifest_options(what: str | None = None) -> Callable[[Any], Any]:
    """The options of every command that reads manifests, defined once: ``--platform``,
    ``--config``, the path selection (:func:`path_selection_options`) and, with ``what`` (the
    verb its help uses: run, fix, report), the rule selection (:func:`rule_selection_options`).
    The command's function takes them as one value, ``manifest`` (:class:`ManifestOptions`)."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in _MANIFEST_OPTIONS if name in kwargs}
            return f(*args, manifest=ManifestOptions(**given), **kwargs)

        decorated: Callable[..., Any] = path_selection_options(command)
        if what is not None:
            decorated = rule_selection_options(what)(decorated)
        return platform_option(nodes_option(config_option(decorated)))

    return decorate


def format_option(choices: Sequence[str] = ("text", "json")) -> Callable[[Any], Any]:
    return click.option(
        "--format", "fmt", type=click.Choice(list(choices)), default="text", show_default=True, help="Report format."
    )


def time_budget_option(default: str, what: str) -> Callable[[Any], Any]:
    return click.option(
        "--time-budget",
        "time_budget",
        type=DURATION,
        default=default,
        show_default=True,
        help=f"Time for {what}: a duration such as 10s, 500ms or 1m.",
    )


# -------------------------------------------------------------------------------------- input ---


def read_text(path: str, what: str, limit: int | None = None) -> str:
    """A file's text through podfit's one reader (:mod:`podfit.reading`): a regular file of at
    most ``limit`` bytes (``limits.max-file-bytes``; 64 MiB by default), else exit 2 saying why."""
    from ..reading import DEFAULT_MAX_BYTES, NotRead
    from ..reading import read_text as read

    try:
        return read(path, DEFAULT_MAX_BYTES if limit is None else limit)
    except NotRead as e:
        raise PodfitError(f"{what} {path}: {e.reason}") from None


def load_config(path: str | None):  # -> Config
    from ..config import Config, ConfigError, find_config, parse_config_text

    path = path or find_config(".")
    if path is None:
        return Config()
    try:
        return parse_config_text(read_text(path, "config"), path)
    except ConfigError as e:
        raise PodfitError(f"invalid config: {e}") from None


def load_platform(path: str | None, limit: int | None = None):  # -> Platform
    """The platform profile at ``path`` (the built-in one when None), read to ``limit`` bytes."""
    from ..platform import DEFAULT_PLATFORM, PlatformError, parse_platform

    if path is None:
        return DEFAULT_PLATFORM
    try:
        return parse_platform(read_text(path, "platform", limit), path)
    except PlatformError as e:
        raise PodfitError("invalid platform profile:\n  " + "\n  ".join(e.problems)) from None


def load_inputs(
    paths: Sequence[str], config: Any, platform: str | None = None, others: Sequence[tuple[str, str]] = ()
):  # -> LoadResult
    """Read and parse the inputs (exit 2 when a named path does not exist): directories expanded
    by the config's path selection (:mod:`podfit.selection`), the platform profile at
    ``platform``, the config file and ``others`` ((path, what it is): the baseline) left out;
    what was left out is the result's ``excluded``."""
    return read_inputs(paths, config, platform, others)[1]


def read_inputs(
    paths: Sequence[str], config: Any, platform: str | None = None, others: Sequence[tuple[str, str]] = ()
):  # -> (list[InputFile], LoadResult)
    """:func:`load_inputs`, with the files read (the rendered text of charts and kustomizations
    among them: ``InputFile.rendered``, named after its source) as well as what was made of them."""
    from dataclasses import replace

    from ..loader import InputError, discover, load, read_files

    try:
        excluded: list[tuple[str, str]] = []
        files = discover(paths, config.path_filter(platform, others), excluded)
        rendered = None
        if any(_may_render(p) for p in files):
            # charts and kustomizations among them rendered in place (podfit.render); the rest read as files
            from ..render import render_inputs, render_options

            rendered = render_inputs(files, render_options(config))
            files = list(rendered.paths)
        rendered_files = [f for f in rendered.files if not config.ignored(f.path)] if rendered else []
        progress = _parse_progress(len(files) + len(rendered_files))
        inputs = read_files(files, config.limits) + rendered_files
        result = load(inputs, config.limits, progress)
        clear_status()
        if rendered is not None and (rendered.files or rendered.findings):
            result = replace(result, findings=result.findings + rendered.findings, sources=rendered.sources)
        if rendered is not None:
            excluded += rendered.left_out
        return inputs, replace(result, excluded=tuple(excluded))
    except InputError as e:
        raise PodfitError(str(e)) from None


def _may_render(path: str) -> bool:
    """A kustomization file, or a file of a Helm chart: what :mod:`podfit.render` renders in place
    (the run without any imports none of the rendering machinery)."""
    from ..kustomize import KUSTOMIZATION_NAMES
    from ..templates import chart_of_file

    return path != "-" and (os.path.basename(path) in KUSTOMIZATION_NAMES or chart_of_file(path) is not None)


def input_findings(result: Any, findings: Sequence[Any], config: Any) -> list[Any]:
    """The findings of reading the inputs (``findings``: the loader's and the facts' own) that the
    config's rule selection keeps, each on a rendered chart or kustomization moved to its source's
    file and line as `podfit check` reports it (:func:`podfit.render.remap`)."""
    kept = [f for f in findings if config.rule_enabled(f.rule)]
    if not result.sources:
        return kept
    from ..render import remap
    from ..workloads import container_path

    return list(remap(kept, result.sources, result.objects, container_path))


def source_of(result: Any, location: Any) -> Any:
    """Where ``location`` comes from: on rendered text (a chart's template, a kustomization's
    resource), the source file and line (:func:`podfit.render.source_location`); else itself."""
    if not result.sources:
        return location
    from ..render import source_location

    return source_location(result.sources, location)


# ----------------------------------------------------------------------------- status, output ---


def status_enabled() -> bool:
    """Status lines go to a terminal only: never into a pipe, a file or a CI log."""
    return sys.stderr.isatty()


_shown = [False]


def status(text: str) -> None:
    """Show (replace) the one status line on the terminal; nothing when stderr is not one."""
    if status_enabled():
        click.echo(f"\r\x1b[Kpodfit: {text}", nl=False, err=True)
        _shown[0] = True


def clear_status() -> None:
    if _shown[0]:
        click.echo("\r\x1b[K", nl=False, err=True)
        _shown[0] = False


def _parse_progress(total: int):
    """A status line on a terminal for long inputs: `podfit: parsed 1,200/5,000 files`."""
    if total < 200 or not status_enabled():
        return None
    step = max(total // 100, 1)

    def show(done: int) -> None:
        if done % step == 0 or done == total:
            status(f"parsed {done:,}/{total:,} files")

    return show


class StdoutError(PodfitError):
    """Standard output is closed or cannot take the report (a full disk): exit 2, never a pass."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"cannot write to standard output: {reason}")


class ClosedStdout(io.TextIOBase):
    """Standard output when the process started without one (``podfit check x >&-``): writing
    to it fails, where click would drop the report without a word."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, s: str) -> int:
        raise OSError(errno.EBADF, "it is closed")

    def isatty(self) -> bool:
        return False


class GuardedStdout:
    """Standard output, remembering whether a write to it failed (closed, full): the command's
    error is then that, exit 2, whatever error the failure surfaced as."""

    def __init__(self, stream: Any) -> None:
        self._stream = ClosedStdout() if stream is None else stream
        self.failure: str | None = None

    def _guard(self, op: Callable[[], Any]) -> Any:
        try:
            return op()
        except (TypeError, BrokenPipeError):  # TypeError: click probing for a binary stream
            raise
        except (OSError, ValueError) as e:
            self.failure = getattr(e, "strerror", None) or str(e)
            raise

    def write(self, s: Any) -> Any:
        return self._guard(lambda: self._stream.write(s))

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def stdout_failure() -> str | None:
    """Why writing to standard output failed, or None (it did not, as far as anything wrote)."""
    return getattr(sys.stdout, "failure", None) if sys.stdout is not None else "it is closed"


def emit(text: str, output: str | None, option: str = "--output", replaces: str | None = None) -> None:
    """The report to ``output`` (a file, given by ``option``), else to standard output. A file
    podfit read as one of its inputs is never replaced (exit 2 before anything is written), but
    for ``replaces``: the one input this output is meant to replace (a baseline it updates)."""
    if output:
        from ..fix import safewrite
        from ..reading import is_input

        if is_input(output) and not (replaces and _same_file(output, replaces)):
            raise PodfitError(f"{option} {output} is one of the inputs; podfit does not replace it: name another file")
        if os.path.lexists(output):
            why = safewrite.refusal(output)
            if why is not None:
                # never through a link, over a device, a pipe, a file with other names or a read-only one
                raise PodfitError(f"{option} {output}: {why}; podfit does not write there: name another file")
        try:  # whole or not at all, the mode and owner of a report written before kept
            with safewrite.cleanup_on_signals():
                safewrite.write(output, text.encode("utf-8"))
        except OSError as e:
            raise PodfitError(f"cannot write {output}: {e.strerror or e}") from None
    else:  # colour codes are in the text only when the caller decided for them (a terminal, --color)
        try:
            click.echo(text, nl=False, color=True)
            if sys.stdout is not None:
                sys.stdout.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as e:
            raise StdoutError(getattr(e, "strerror", None) or str(e)) from None
        if sys.stdout is None:  # click writes nothing then, without a word
            raise StdoutError("it is closed")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_without_hosts(platform: Any, command: str) -> None:
    """The vSphere commands answer about vSphere hosts (DRS, HA, CRX MHz): a bare-metal platform, or
    one without hosts, is a usage error (exit 2) naming what to give instead."""
    if platform.hosts and platform.runtime != "bare-metal":
        return
    source = "the built-in profile" if platform.is_default else platform.source
    why = "runtime bare-metal has no vSphere hosts" if platform.hosts else "it has no hosts"
    raise PodfitError(
        f"`podfit vsphere {command}` answers about vSphere hosts, and platform {platform.name} ({source}): "
        f"{why}; give a --platform profile with runtime tkg or vsphere-pods and spec.hosts"
    )


def load_usage(specs: Sequence[str], limit: int | None = None):  # -> list[usage.Series]
    """Read and parse every ``--usage [KIND=]FILE`` (exit 2 on a file podfit cannot read; each
    read to ``limit`` bytes, ``limits.max-file-bytes``)."""
    from ..usage import UsageError, parse_usage

    series = []
    for spec in specs:
        kind, sep, path = spec.partition("=")
        if not sep or os.path.exists(spec):
            kind, path = "", spec
        try:
            series.extend(parse_usage(read_text(path, "usage", limit), path, kind or None))
        except UsageError as e:
            raise PodfitError(str(e)) from None
    return series
