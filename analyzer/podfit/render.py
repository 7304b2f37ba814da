"""Charts and kustomizations checked in place: ``helm template`` of a chart directory and
``kustomize build`` of a kustomization directory, the rendered objects traced back to their source.

:func:`render_inputs` takes the paths :func:`podfit.loader.discover` found and returns the paths
still to be read as files, the rendered text as :class:`podfit.loader.InputFile`\\ s (one per source
file: a chart's template, a kustomization's resource file), the findings of what could not be
rendered, and a :data:`SourceMap` that turns a line of the rendered text into the line of the
source and, for a chart, the values key that set it (:func:`remap`).

- A chart is a directory with a Chart.yaml holding one of the inputs (a subchart under
  ``charts/`` belongs to its parent). It is rendered with ``helm`` (``PODFIT_HELM``, else on PATH),
  with the values files and Kubernetes version of the config's ``helm:`` section and the
  dependencies vendored under ``charts/``. Without helm it is one PF908 naming how to get helm or
  leave the chart out: never a pass.
- A kustomization among the inputs is built with ``kustomize`` (``PODFIT_KUSTOMIZE``, else on
  PATH) unless another kustomization among them uses it as a resource; the files it uses
  (resources, patches, nested kustomizations) are not read again. Without kustomize the files are
  read raw as before (:mod:`podfit.kustomize` emulates what it can).

The tools run without a shell, in a new session, with a minimal environment (a temporary HOME, no
credentials, no kubeconfig, no network: proxies that refuse and git limited to local files, so a
remote kustomize base is an error, never a download), bounded in time (killed with their process group at the limit) and in
output (``RLIMIT_FSIZE`` on the files they write to; the output is read through
:mod:`podfit.reading` at the limit of ``limits.max-file-bytes``). The rendered text is parsed as
any file is (:mod:`podfit.loader`, :mod:`podfit.yamlio` limits).

Where a source line comes from: the rendered document's keys down to the line (its path) are
looked up in the source file's outline (the same keys by indentation, template actions skipped):
the line of the deepest key of that path the source holds. For a chart, a ``.Values.x.y`` on that
line (or on the action lines right around it, ``{{ toYaml .Values.resources | nindent 12 }}``)
names the values key; the rest of the path below it is appended (``resources.limits.cpu``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from .findings import Finding
from .kustomize import KUSTOMIZATION_NAMES, patch_files
from .model import WORKLOAD_KINDS, Location
from .reading import NotRead, kind_of, read_bytes, read_stream
from .templates import chart_of_file, chart_root

__all__ = [
    "Origin",
    "Rendered",
    "RenderOptions",
    "SourceMap",
    "render_inputs",
    "remap",
    "source_location",
    "helm_command",
    "kustomize_command",
    "HELM_VERSION",
    "OFF",
    "render_options",
    "target_version",
    "remote_references",
    "is_remote",
]

# The helm `make tools` builds (scripts/install-tools.sh), named in the finding of a chart without helm.
HELM_VERSION = "v3.22.0"
RENDER_TIMEOUT = 120.0  # seconds for one helm template / kustomize build
_RELEASE = "release-name"  # helm template's own default release name


@dataclass(frozen=True)
class Origin:
    """Where one line of rendered text comes from."""

    line: int  # the source file's line (the deepest key of the rendered line's path it holds)
    via: str  # the command that rendered it
    values: str | None = None  # the values key that set it (charts)
    values_file: str | None = None
    values_line: int | None = None
    file: str | None = None  # the source file, when not the one the rendered text is filed under


# rendered file (as the InputFile names it) → the origin of each of its lines (index: line - 1)
SourceMap = Mapping[str, tuple["Origin | None", ...]]


@dataclass(frozen=True)
class RenderOptions:
    helm: str | None = None  # the executable; None: not installed
    kustomize: str | None = None
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # absolute chart dir → values files
    kube_version: str | None = None  # helm template --kube-version: the release podfit targets
    api_versions: tuple[str, ...] = ()  # helm template --api-versions: APIs the cluster serves beyond the built-in
    max_bytes: int = 64 * 2**20
    timeout: float = RENDER_TIMEOUT
    workers: int = field(default_factory=lambda: max(os.cpu_count() or 1, 1))  # renders run at once


@dataclass(frozen=True)
class Rendered:
    paths: tuple[str, ...]  # the inputs still to be read as files
    files: tuple[Any, ...]  # InputFiles of rendered text
    findings: tuple[Finding, ...]
    sources: SourceMap
    left_out: tuple[tuple[str, str], ...] = ()  # (path, why): a chart's files that are no manifest


OFF = "off"  # PODFIT_HELM / PODFIT_KUSTOMIZE: no rendering, the files read one by one (PF908/PF909)


def helm_command(env: Mapping[str, str] | None = None) -> str | None:
    """The helm to run: ``PODFIT_HELM`` (a path, or a name looked up on PATH), else helm on PATH;
    None when there is none; :data:`OFF` when PODFIT_HELM says so."""
    env = os.environ if env is None else env
    name = env.get("PODFIT_HELM") or "helm"
    return OFF if name == OFF else _tool(name, env)


def kustomize_command(env: Mapping[str, str] | None = None) -> str | None:
    """The kustomize to run: ``PODFIT_KUSTOMIZE``, else kustomize on PATH (None: none; OFF)."""
    env = os.environ if env is None else env
    name = env.get("PODFIT_KUSTOMIZE") or "kustomize"
    return OFF if name == OFF else _tool(name, env)


def render_options(config: Any, env: Mapping[str, str] | None = None) -> RenderOptions:
    """The tools of this environment and the config's ``helm:`` settings: values files per chart
    (directories relative to the config file, values files relative to their chart), the APIs
    the cluster serves beyond Kubernetes' own, and the Kubernetes version (:func:`target_version`)."""
    base = os.path.dirname(os.path.abspath(config.source)) if config.source else os.getcwd()
    values = {os.path.normpath(os.path.join(base, chart)): tuple(files) for chart, files in config.helm_values}
    return RenderOptions(
        helm=helm_command(env),
        kustomize=kustomize_command(env),
        values=values,
        kube_version=target_version(config),
        api_versions=tuple(config.helm_api_versions),
        max_bytes=config.limits.max_file_bytes,
    )


def target_version(config: Any) -> str:
    """The Kubernetes release charts render for: the config's ``helm.kube-version``, else PF902's
    ``kubernetes-version`` (the release the manifests are validated against), else the newest
    release podfit knows (:data:`podfit.kubeversions.LATEST`). helm itself would assume 1.20 when
    built without release flags, and a chart declaring ``kubeVersion: >=1.23`` would not render."""
    from .kubeversions import LATEST

    version = config.helm_kube_version or (config.thresholds.get("PF902") or {}).get("kubernetes-version")
    if version in (None, "", "latest"):
        return f"{LATEST[0]}.{LATEST[1]}.0"
    return str(version).strip()


def _tool(name: str, env: Mapping[str, str]) -> str | None:
    if os.sep in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    # shutil.which's search on POSIX, without importing shutil (and its compression modules) into
    # every run
    for directory in env.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or os.curdir, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: the same documents, 5-10 times faster


def _yaml(text: str) -> Any:
    """One YAML document, as yaml.safe_load reads it."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 (a safe loader)


# ------------------------------------------------------------------------------- running ---


class RenderError(Exception):
    pass


def _limit_output(limit: int) -> Any:
    import resource  # imported here, in the parent: the child only calls into it

    def apply() -> None:  # in the child, before exec: what it writes to a file stops at the limit
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit + 1, limit + 1))

    return apply


NO_NETWORK_PROXY = "http://127.0.0.1:9"


class _Started:
    """One tool started without a shell, in a new session, with a minimal environment; its output
    in temporary files until :meth:`finish`."""

    def __init__(self, argv: Sequence[str], cwd: str, max_bytes: int, timeout: float) -> None:
        import subprocess
        import tempfile
        import time

        self.argv, self.max_bytes, self.timeout = list(argv), max_bytes, timeout
        self.home = tempfile.TemporaryDirectory(prefix="podfit-render-")
        home = self.home.name
        env = {
            "HOME": home,
            "PATH": os.defpath,
            "LANG": "C",
            "HELM_CACHE_HOME": os.path.join(home, "cache"),
            "HELM_CONFIG_HOME": os.path.join(home, "config"),
            "HELM_DATA_HOME": os.path.join(home, "data"),
            "KUBECONFIG": os.path.join(home, "kubeconfig"),
            # no network: a chart's repository is not fetched (the proxies point at the discard
            # port, which refuses; git may use local files only). Go never proxies loopback
            # addresses, so remote kustomize entries are refused before the build (remote_references).
            **{k: NO_NETWORK_PROXY for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")},
            "NO_PROXY": "",
            "no_proxy": "",
            "GIT_ALLOW_PROTOCOL": "file",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        self.deadline = time.monotonic() + timeout
        self.proc: Any = None
        try:
            self.proc = subprocess.Popen(
                self.argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=self.out,
                stderr=self.err,
                start_new_session=True,
                preexec_fn=_limit_output(max_bytes),  # noqa: PLW1509 (started from the main thread only)
            )
        except (OSError, subprocess.SubprocessError) as e:  # not started (a preexec failure included)
            self.failure: str | None = f"cannot run {argv[0]}: {getattr(e, 'strerror', None) or e}"
        else:
            self.failure = None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def finish(self, timed_out: bool) -> bytes:
        """Stop the tool and anything it started; its standard output, or RenderError with its own
        words (its last lines of standard error)."""
        import signal

        try:
            if self.failure is not None:
                raise RenderError(self.failure)
            try:  # the tool and anything it started
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            code = self.proc.wait()
            name = os.path.basename(self.argv[0])
            if timed_out:
                raise RenderError(f"{name} ran longer than {self.timeout:g} s and was stopped")
            err = self.err
            err.seek(max(err.seek(0, os.SEEK_END) - 4096, 0))  # its last words say what failed
            lines = [line.strip() for line in err.read(4096).decode("utf-8", "replace").splitlines() if line.strip()]
            # deprecation warnings come first and say nothing of the failure
            lines = [line for line in lines if not line.startswith(("# Warning", "WARNING"))] or lines
            words = " ".join(lines[-3:])[:400]
            self.out.seek(0, os.SEEK_END)
            if self.out.tell() > self.max_bytes or code == -signal.SIGXFSZ:
                raise RenderError(f"{name} wrote more than {self.max_bytes:,} bytes (limits.max-file-bytes)")
            if code != 0:
                raise RenderError(f"{name} failed (exit {code}): {words or 'no message'}")
            self.out.seek(0)
            try:
                return read_stream(self.out, self.max_bytes, "rendered output")
            except NotRead as e:
                raise RenderError(e.reason) from None
        finally:
            self.out.close()
            self.err.close()
            self.home.cleanup()


def run_tool(argv: Sequence[str], cwd: str, max_bytes: int, timeout: float) -> bytes:
    """Run ``argv`` (no shell) and return its standard output, at most ``max_bytes``; raises
    RenderError with the tool's own words (its last lines of standard error) when it fails, runs
    past ``timeout`` seconds or writes more than ``max_bytes``. Nothing it started is left running."""
    import subprocess

    started = _Started(argv, cwd, max_bytes, timeout)
    timed_out = False
    if started.proc is not None:
        try:
            started.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        except BaseException:
            started.finish(False)
            raise
    return started.finish(timed_out)


@dataclass(frozen=True)
class Job:
    """One render: the command, where it runs, and the files whose content decides its output."""

    argv: tuple[str, ...]
    cwd: str
    reads: tuple[str, ...]  # directories read whole (a chart; a kustomization's root), then files


# a render up to its tool run: it yields the Job, and is sent the output or the RenderError
_Render = Generator[Job, "bytes | RenderError", None]


def run_jobs(jobs: Sequence[Job], max_bytes: int, timeout: float, workers: int) -> list[bytes | RenderError]:
    """Each job's output (or its RenderError), in order: the renders of a run are independent, so up
    to ``workers`` run at once; each is started from this thread (no fork from another) and
    stopped at its own time limit. A job whose inputs and tool are unchanged since a run that
    cached it is not run again (:func:`_cache_key`)."""
    import time

    results: list[bytes | RenderError | None] = [None] * len(jobs)
    keys = [_cache_key(job, max_bytes) for job in jobs]
    pending = []
    for i, key in enumerate(keys):
        cached = _cache_read(key, max_bytes) if key is not None else None
        if cached is not None and cached.startswith(_FAILED):  # the same inputs failed the same way
            results[i] = RenderError(cached[len(_FAILED) :].decode("utf-8", "replace"))
        elif cached is not None:
            results[i] = cached
        else:
            pending.append(i)
    running: dict[int, _Started] = {}
    try:
        while pending or running:
            while pending and len(running) < max(workers, 1):
                i = pending.pop(0)
                running[i] = _Started(jobs[i].argv, jobs[i].cwd, max_bytes, timeout)
            for i, started in list(running.items()):
                late = time.monotonic() >= started.deadline
                if not started.running() or late:
                    del running[i]
                    timed_out = late and started.running()
                    try:
                        output = started.finish(timed_out)
                    except RenderError as e:
                        results[i] = e
                        # a failure of these inputs is kept too (a time limit reached is not: load decides it)
                        if keys[i] is not None and not timed_out:
                            _cache_write(keys[i], _FAILED + str(e).encode())  # type: ignore[arg-type]
                    else:
                        results[i] = output
                        if keys[i] is not None:
                            _cache_write(keys[i], output)  # type: ignore[arg-type]
            if running:
                time.sleep(0.01)
    finally:
        for started in running.values():  # interrupted: nothing it started is left running
            try:
                started.finish(True)
            except RenderError:  # finish() reports the stop as a failure; every one must still run
                pass
    return [r if r is not None else RenderError("not run") for r in results]


# ------------------------------------------------------------------------------- caching ---
# A render's output is cached under the hash of everything it depends on: the tool (its path,
# size and modification time), the command and directory, and the name and content of every file
# the render may read. kustomize reads only below a kustomization's root (its load restrictor) and
# helm only the chart's directory and the values files named, so those directories are hashed whole.
# Trees too large to hash cheaply are rendered every time.

_CACHE_VERSION = b"podfit-render-1"
_FAILED = b"\0podfit: render failed\0"  # a cached failure: this, then the tool's words (no output starts so)
_CACHE_MAX_INPUT = 64 * 2**20  # bytes of input hashed for one render, at most
_CACHE_MAX_FILES = 5000
_CACHE_MAX_TOTAL = 256 * 2**20  # the render cache's size: older entries go beyond it


def _cache_key(job: Job, max_bytes: int) -> str | None:
    import hashlib

    h = hashlib.sha256(_CACHE_VERSION)
    try:
        st = os.stat(job.argv[0])
    except OSError:
        return None
    h.update(repr((os.path.realpath(job.argv[0]), st.st_size, st.st_mtime_ns, job.argv, job.cwd, max_bytes)).encode())
    files: list[str] = []
    seen = 0  # directories and files walked: a tree of empty directories is bounded too
    for top in job.reads:
        if os.path.isdir(top):
            for root, dirs, names in os.walk(top, followlinks=False):
                dirs.sort()
                files += [os.path.join(root, n) for n in sorted(names)]
                seen += len(dirs) + len(names)
                if seen > _CACHE_MAX_FILES:
                    return None
        else:
            files.append(top)
    total = 0
    for path in sorted(set(files)):
        try:
            st = os.lstat(path)
        except OSError:
            h.update(f"{path}\0missing\0".encode())
            continue
        if not stat.S_ISREG(st.st_mode):  # a link or a special file: rendered every time
            return None
        total += st.st_size
        if total > _CACHE_MAX_INPUT:
            return None
        try:
            data = read_bytes(path, st.st_size + 1)
        except NotRead:
            return None
        h.update(f"{path}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _cache_read(key: str, max_bytes: int) -> bytes | None:
    from .cachedir import cache_dir, read_trusted

    root = cache_dir("render")
    data = read_trusted(root / key, max_bytes) if root is not None else None
    if data is not None:
        try:  # kept as recently used: the cache drops the oldest first
            os.utime(root / key)  # type: ignore[operator]
        except OSError:
            pass
    return data


def _cache_write(key: str, data: bytes) -> None:
    from .cachedir import cache_dir, write_private

    root = cache_dir("render")
    if root is None:
        return
    try:
        write_private(root / key, data)
        entries = []
        for entry in os.scandir(root):
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                entries.append((st.st_mtime_ns, st.st_size, entry.path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):  # the oldest first, until the cache is within its size
            if total <= _CACHE_MAX_TOTAL:
                break
            os.unlink(path)
            total -= size
    except OSError:
        pass  # no cache: the same results, rendered each run


# ------------------------------------------------------------------------------ outlines ---

_KEY = re.compile(
    r"""^( *)((?:- +)*)("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"{}\[\],:-][^#{}:]*?|-[^\s#{}:][^#{}:]*?)\s*:(?:\s|$)"""
)
_VALUES_REF = re.compile(r"\.Values((?:\.[A-Za-z_][\w-]*)+)")


def outline(text: str) -> list[tuple[str, ...] | None]:
    """Each line's path of mapping keys (list positions left out), None for a line that holds no
    key (a list scalar, a template action, a comment, a block scalar's text)."""
    return [None if e is None else e[0] for e in _outline(text)]


def _outline(text: str) -> list[tuple[tuple[str, ...], int, tuple[tuple[str, int], ...]] | None]:
    """:func:`outline` with, for each key, the line (0-based) that starts the list item it is in
    (kustomize sorts keys, so a container's ``- name:`` may come second), and the path with the
    position of each list item in its list (-1 where a key is in no list item)."""
    out: list[tuple[tuple[str, ...], int, tuple[tuple[str, int], ...]] | None] = []
    # (column, key, line of its list item's dash, item position, its own line)
    stack: list[tuple[int, str, int, int, int]] = []
    counts: dict[tuple[int, int], int] = {}  # (line of the list's parent key, dash column) → items so far
    block = -1  # indentation of the key whose block scalar (| or >) we are in
    for n, line in enumerate(text.splitlines()):
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if block >= 0:
            if not body.strip() or indent > block:
                out.append(None)
                continue
            block = -1
        if body.startswith("---"):
            stack, counts = [], {}
            out.append(None)
            continue
        m = _KEY.match(line)
        if m is None:
            out.append(None)
            continue
        col = len(m.group(1)) + len(m.group(2))
        key = m.group(3).strip()
        if key[:1] in "\"'" and len(key) >= 2:
            key = key[1:-1]
        item, position = (n, -1) if m.group(2) else (-1, -1)
        while stack and stack[-1][0] >= col:
            popped = stack.pop()
            if popped[0] == col and item < 0:
                item, position = popped[2], popped[3]  # a sibling key of the same list item (or mapping)
        if m.group(2):
            parent = (stack[-1][4] if stack else -1, len(m.group(1)))
            position = counts.get(parent, 0)
            counts[parent] = position + 1
        stack.append((col, key, item, position, n))
        out.append((tuple(e[1] for e in stack), item, tuple((e[1], e[3]) for e in stack)))
        rest = line[m.end() :]
        if re.match(r"\s*[|>][0-9+-]*\s*(?:#.*)?$", rest):
            block = col
    return out


_SCOPE = re.compile(r"^\s*\{\{-?\s*(?:with|range)\b")


def _values_near(lines: Sequence[str], i: int, below: bool) -> str | None:
    """The ``.Values`` path on line ``i`` of a template, else of a ``with``/``range`` right before
    it (``{{- with .Values.worker.resources }}`` above ``resources:``); when the value comes from
    ``below`` the key on that line, first on the action-only lines right after it (``{{- toYaml
    .Values.resources | nindent 12 }}``)."""
    m = _VALUES_REF.search(lines[i])
    if m is not None:
        return m.group(1)[1:]
    j = i + 1
    while below and j < len(lines) and lines[j].strip().startswith("{{"):
        m = _VALUES_REF.search(lines[j])
        if m is not None:
            return m.group(1)[1:]
        j += 1
    j = i - 1
    while j >= 0 and lines[j].strip().startswith("{{"):
        m = _VALUES_REF.search(lines[j]) if _SCOPE.match(lines[j]) else None
        if m is not None:
            return m.group(1)[1:]
        j -= 1
    return None


class _Source:
    """A source file's text and outline, with each path's lines in order."""

    def __init__(self, path: str, text: str, strict: bool = False) -> None:
        self.path = path
        self.strict = strict  # a patch: only the occurrences it has count
        self.lines = text.splitlines()
        self.by_path: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        self.by_item: dict[tuple[tuple[str, int], ...], tuple[int, int]] = {}
        for n, entry in enumerate(_outline(text)):
            if entry is not None:
                self.by_path.setdefault(entry[0], []).append((n, entry[1]))
                self.by_item.setdefault(entry[2], (n, entry[1]))

    def find(self, path: tuple[tuple[str, int], ...], nth: int, item: bool) -> tuple[int, int] | None:
        """(0-based line, keys matched) of the deepest prefix of ``path`` (keys and list positions)
        this file holds; None when not even the first key is here. Where the list items differ (a
        template's ``range`` makes several of one), by keys alone: the ``nth`` occurrence of the
        deepest prefix, or the last. ``item``: the rendered line starts a list item, so the line of
        that item's dash is wanted."""
        keys = tuple(k for k, _ in path)
        for depth in range(len(path), 0, -1):
            hit = self.by_item.get(path[:depth])
            if hit is not None:
                if depth == len(path) or path[depth][1] < 0:
                    line, dash = hit
                    return (dash if item and depth == len(path) and dash >= 0 else line), depth
                break  # a list item this file does not have: by keys alone
        for depth in range(len(keys), 0, -1):
            hits = self.by_path.get(keys[:depth])
            if hits and (not self.strict or nth < len(hits)):
                line, dash = hits[min(nth, len(hits) - 1)]
                return (dash if item and depth == len(keys) and dash >= 0 else line), depth
        return None


def _trace(rendered: str, sources: Sequence[_Source], via: str, values: _Values | None) -> list[Origin | None]:
    """The origin of each line of ``rendered``: of the ``sources`` (a resource file, then the patches
    applied to it), the one holding most of the line's path; the later one on a tie."""
    origins: list[Origin | None] = []
    seen: dict[tuple[str, ...], int] = {}
    last: Origin | None = None
    for entry in _outline(rendered):
        if entry is None:
            origins.append(last)  # a list scalar or block text: where the key above it came from
            continue
        path, dash, items = entry
        nth = seen.get(path, 0)
        seen[path] = nth + 1
        best: tuple[int, int, _Source] | None = None
        for source in sources:
            found = source.find(items, nth, dash == len(origins))
            if found is not None and (best is None or found[1] >= best[1]):
                best = (*found, source)
        if best is None:
            origins.append(None)
            last = None
            continue
        i, depth, source = best
        key = _values_near(source.lines, i, depth < len(path)) if values is not None else None
        origin = Origin(i + 1, via, file=source.path)
        if key is not None and values is not None:
            full = ".".join((key, *path[depth:])) if depth < len(path) else key
            file, line = values.line_of(full)
            origin = Origin(i + 1, via, full, file, line, file=source.path)
        origins.append(origin)
        last = origin
    return origins


class _Values:
    """A chart's values files, last first (the last one given wins in helm)."""

    def __init__(self, files: Sequence[tuple[str, str]]) -> None:
        self.files = [
            (path, {p: n + 1 for n, p in reversed(list(enumerate(outline(text)))) if p}) for path, text in files
        ]

    def line_of(self, key: str) -> tuple[str | None, int | None]:
        parts = tuple(key.split("."))
        for path, lines in reversed(self.files):
            for depth in range(len(parts), 0, -1):
                if parts[:depth] in lines:
                    return path, lines[parts[:depth]]
        return (self.files[0][0], None) if self.files else (None, None)


# --------------------------------------------------------------------------------- charts ---


def _shown(absolute: str, given: str) -> str:
    """A directory as the user would name it: relative when the input was."""
    if os.path.isabs(given):
        return absolute
    rel = os.path.relpath(absolute)
    return rel


def _read(path: str, limit: int) -> str | None:
    try:
        return read_bytes(path, limit).decode("utf-8", "replace")
    except NotRead:
        return None


def _split_helm(output: str) -> list[tuple[str, str]]:
    """helm template's output as (source, text) per document, from its ``# Source:`` comments."""
    parts: list[tuple[str, str]] = []
    for doc in re.split(r"(?m)^---[ \t]*$\n?", output):
        m = re.match(r"\s*# Source: (\S[^\n]*)\n", doc)
        if m is None:
            if doc.strip():
                parts.append(("", doc))
            continue
        parts.append((m.group(1).strip(), doc))
    return parts


def _chart_name(chart: str, limit: int) -> str:
    text = _read(os.path.join(chart, "Chart.yaml"), limit) or ""
    try:
        doc = _yaml(text)
    except yaml.YAMLError:
        doc = None
    name = doc.get("name") if isinstance(doc, dict) else None
    return str(name) if name else os.path.basename(chart)


def _no_helm(chart: str) -> Finding:
    return Finding(
        rule="PF908",
        message=(
            f"Helm chart {chart} not checked: helm is not installed. Install helm 3 "
            f"(https://helm.sh/docs/intro/install/, or `go install helm.sh/helm/v3/cmd/helm@{HELM_VERSION}`) "
            f"or set PODFIT_HELM to it; or leave the chart out: ignore: ['{chart}/**'] in .podfit.yaml"
        ),
        location=Location(os.path.join(chart, "Chart.yaml"), 1, 0),
        details={"chart": chart, "render": f"helm template {chart} | podfit check -", "helm": None},
    )


def _failed(where: str, what: str, why: str, command: str) -> Finding:
    return Finding(
        rule="PF908",
        message=f"{what} not checked: {why}",
        location=Location(where, 1, 0),
        details={"render": command, "error": why},
    )


def _outside_or_special(chart: str, values: Sequence[str]) -> str | None:
    """Why helm must not read this chart (None: it may): helm follows a symbolic link wherever it
    leads and reads whatever it names, so a link out of the chart would put a foreign file's
    content in the rendered text (and in a finding quoting it), and a named pipe or a device
    would hold the run until its time is up. The values files the config names (which may lie
    outside the chart) must be regular files too."""
    root = os.path.realpath(chart)
    paths: list[str] = []
    for dirpath, dirnames, filenames in os.walk(chart):
        paths += [os.path.join(dirpath, n) for n in filenames + dirnames]
    for path in [*paths, *values]:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode) and path not in values:
            real = os.path.realpath(path)
            if real != root and not real.startswith(root + os.sep):
                return f"{path} is a symbolic link out of the chart (to {real}); podfit does not let helm read it"
            try:
                st = os.stat(path)
            except OSError:
                continue
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            return f"{path} is {kind_of(st.st_mode)}, not a regular file; podfit does not let helm read it"
    return None


_KUBE_VERSION_REFUSED = re.compile(
    r"chart requires kubeVersion: (\S+(?: \S+)*?) which is incompatible with Kubernetes (\S+)"
)
_DEPENDENCIES_MISSING = re.compile(r"found in Chart\.yaml, but missing in charts/ directory: ([^\n]+?)(?:$|\s{2})")


def _helm_says(words: str, chart: str, opts: RenderOptions) -> str:
    """helm's failure in podfit's terms where podfit knows the way out: a chart whose
    ``kubeVersion`` excludes the target release, dependencies not vendored under ``charts/``
    (podfit never fetches them); helm's own words otherwise."""
    m = _KUBE_VERSION_REFUSED.search(words)
    if m is not None:
        return (
            f"the chart requires Kubernetes {m.group(1)} (kubeVersion in Chart.yaml) and podfit renders for "
            f"{opts.kube_version or m.group(2)}; set helm.kube-version (or PF902's kubernetes-version) in "
            ".podfit.yaml to a release the chart supports"
        )
    m = _DEPENDENCIES_MISSING.search(words)
    if m is not None:
        return (
            f"its dependencies {m.group(1).strip()} are not vendored under {chart}/charts/ (helm needs every "
            f"dependency Chart.yaml declares, even one the values turn off); run `helm dependency build {chart}` "
            "(podfit fetches nothing) and check again"
        )
    if "Use --debug flag" in words:  # helm's advice to its own user: podfit's says where values go
        words = words.replace("Use --debug flag to render out invalid YAML", "").strip()
        return f"{words}; set the chart's values in .podfit.yaml (helm.values) or render it yourself"
    return words


def _render_chart(chart: str, opts: RenderOptions, out: _Out) -> _Render:
    """Render a chart into ``out``: yields the one :class:`Job` that runs helm (unless a check
    before it failed) and takes its output, or its RenderError, back (:func:`render_inputs`)."""
    chart_yaml = os.path.join(chart, "Chart.yaml")
    if opts.helm is None or opts.helm == OFF:
        out.findings.append(_no_helm(chart))
        return
    values = [os.path.normpath(os.path.join(chart, v)) for v in opts.values.get(os.path.abspath(chart), ())]
    # --skip-tests: a chart's `helm test` pods are not what it deploys
    argv = [opts.helm, "template", _RELEASE, os.path.abspath(chart), "--skip-tests"]
    for v in values:
        argv += ["--values", os.path.abspath(v)]
    # flag=value: a value that looks like a flag is still the value, never a flag of its own
    if opts.kube_version:
        argv.append(f"--kube-version={opts.kube_version}")
    argv += [f"--api-versions={api}" for api in opts.api_versions]
    via = " ".join(["helm template", chart, *(f"-f {v}" for v in values)])
    unsafe = _outside_or_special(chart, values)
    if unsafe is not None:
        out.findings.append(_failed(chart_yaml, f"Helm chart {chart}", unsafe, via))
        return
    text = yield Job(
        tuple(argv), os.path.dirname(os.path.abspath(chart)), (os.path.abspath(chart), *map(os.path.abspath, values))
    )
    if isinstance(text, RenderError):
        out.findings.append(_failed(chart_yaml, f"Helm chart {chart}", _helm_says(str(text), chart, opts), via))
        return
    name = _chart_name(chart, opts.max_bytes)
    value_files = [os.path.join(chart, "values.yaml"), *values]
    vals = _Values([(v, t) for v in value_files if (t := _read(v, opts.max_bytes)) is not None])
    documents = _split_helm(text.decode("utf-8", "replace"))
    if not any(re.search(r"(?m)^kind:", doc) for _, doc in documents):
        out.findings.append(
            Finding(
                rule="PF909",
                message=f"Helm chart {chart} renders no Kubernetes object with these values: {via}",
                location=Location(chart_yaml, 1, 0),
                details={"render": via},
            )
        )
    placed = []
    for source, doc in documents:
        parts = source.split("/")
        file = os.path.normpath(os.path.join(chart, *parts[1:])) if parts[0] == name and len(parts) > 1 else chart_yaml
        if ".." in parts or os.path.isabs(source):  # only the chart's own files are sources
            file = chart_yaml
        placed.append((file, doc))
    rendered_from: dict[str, int] = {}
    for file, _doc in placed:
        rendered_from[file] = rendered_from.get(file, 0) + 1
    nth: dict[str, int] = {}
    for file, doc in placed:
        k = nth[file] = nth.get(file, -1) + 1
        out.add(file, doc, via, vals, _template_document(file, k, rendered_from[file], opts.max_bytes))


def _template_document(file: str, k: int, rendered: int, limit: int) -> list[_Source]:
    """The ``k``-th of a template's documents as the source of its ``k``-th rendered one, when the
    template has as many documents as it rendered (a second Deployment in one file must not be
    traced to the first's lines); the whole template otherwise (no sources: :class:`_Out` reads it)."""
    if rendered < 2:
        return []
    body = _read(file, limit) or ""
    pieces = [(offset, piece) for offset, piece, _ in _documents(body) if re.search(r"(?m)^kind:", piece)]
    if len(pieces) != rendered:
        return []
    offset, piece = pieces[k]
    return [_Source(file, "\n" * offset + piece)]


# ------------------------------------------------------------------------------ kustomize ---


def _kustomization_file(directory: str) -> str | None:
    for name in KUSTOMIZATION_NAMES:
        p = os.path.join(directory, name)
        if os.path.isfile(p):
            return p
    return None


@dataclass(frozen=True)
class _Reads:
    """What one kustomization file names itself: nested kustomization files, resource files,
    patch files, and the other things it reads (a named pipe, refused before the build)."""

    nested: tuple[str, ...] = ()
    resources: frozenset[str] = frozenset()
    patches: frozenset[str] = frozenset()
    other: frozenset[str] = frozenset()


# A kustomization file's text and document (None where it is no YAML), read and parsed once a run
# however many of the run's walks reach it: absolute path → (text, document).
_KDocs = dict[str, tuple[str, Any]]


def _kdoc(path: str, limit: int, docs: _KDocs) -> tuple[str, Any]:
    key = os.path.abspath(path)
    if key not in docs:
        text = _read(key, limit) or ""
        try:
            docs[key] = (text, _yaml(text))
        except (yaml.YAMLError, RecursionError):  # kustomize refuses it without loading anything
            docs[key] = (text, None)
    return docs[key]


def _reads(current: str, limit: int, docs: _KDocs) -> _Reads:
    doc = _kdoc(current, limit, docs)[1]
    if not isinstance(doc, dict):
        return _Reads()
    base = os.path.dirname(current)
    nested: list[str] = []
    resources: set[str] = set()
    other: set[str] = set()
    entries = [
        e for key in ("resources", "bases", "components", "crds") if isinstance(doc.get(key), list) for e in doc[key]
    ]
    for entry in entries:
        if not isinstance(entry, str) or "://" in entry or entry.startswith(("github.com/", "git@")):
            continue
        target = os.path.normpath(os.path.join(base, entry))
        if os.path.isdir(target):
            found = _kustomization_file(target)
            if found is not None:
                nested.append(os.path.abspath(found))
        elif os.path.isfile(target):
            resources.add(target)
        elif os.path.exists(target):  # a named pipe or a device: read by the build, refused before it
            other.add(target)
    patches = frozenset(os.path.normpath(os.path.join(base, p)) for p in patch_files(doc))
    return _Reads(tuple(nested), frozenset(resources), patches, frozenset(other))


def _kustomization_uses(
    kfile: str, limit: int, seen: set[str], memo: dict[str, _Reads] | None = None, docs: _KDocs | None = None
) -> tuple[set[str], set[str], set[str]]:
    """(the manifest files a kustomization's build takes its objects from, its patch files, every
    file it reads: those and nested kustomizations), following local directories to any depth
    (a chain of a thousand bases is walked, not recursed into). ``memo``: each file's own
    entries, shared by the kustomizations of one run (each is read and parsed once)."""
    memo = {} if memo is None else memo
    resources: set[str] = set()
    fixes: set[str] = set()
    used: set[str] = set()
    pending = [kfile]
    while pending:
        current = os.path.abspath(pending.pop())
        used.add(current)
        if current in seen:
            continue
        seen.add(current)
        if current not in memo:
            memo[current] = _reads(current, limit, {} if docs is None else docs)
        reads = memo[current]
        pending.extend(reads.nested)
        resources |= reads.resources
        fixes |= reads.patches
        used |= reads.resources | reads.patches | reads.other
    return resources, fixes, used


# Fields of a kustomization that name files, directories or repositories kustomize loads.
_LOADED_LISTS = (
    "resources",
    "bases",
    "components",
    "crds",
    "generators",
    "transformers",
    "validators",
    "configurations",
)
_LOADED_PATHS = ("patches", "patchesJson6902", "replacements")
# How kustomize spells a remote target: a URL, an scp-like git address, a hosting site's path
_REMOTE = re.compile(
    r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[A-Za-z0-9_.-]+@[^/:]+:|git::|(?:github|gitlab|bitbucket)\.(?:com|org)/)"
)
_HOST_LIKE = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?/")


def _loaded_entries(doc: Mapping[str, Any]) -> list[str]:
    """Every entry of a kustomization that kustomize loads: resources and the other lists of
    targets, the ``path`` of patches and replacements, patchesStrategicMerge files, openapi's path."""
    out = [e for key in _LOADED_LISTS if isinstance(doc.get(key), list) for e in doc[key] if isinstance(e, str)]
    for key in _LOADED_PATHS:
        entries = doc.get(key)
        if isinstance(entries, list):
            out += [e["path"] for e in entries if isinstance(e, dict) and isinstance(e.get("path"), str)]
    if isinstance(doc.get("patchesStrategicMerge"), list):
        out += [e for e in doc["patchesStrategicMerge"] if isinstance(e, str) and "\n" not in e]
    openapi = doc.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        out.append(openapi["path"])
    return out


def is_remote(entry: str, base: str) -> bool:
    """Whether kustomize would fetch ``entry`` (relative to the directory ``base``): a URL, a git
    address, or a path that exists nowhere locally and starts with a host name
    (``example.com/org/repo//dir?ref=v1``), which kustomize tries as a repository."""
    text = entry.strip()
    if _REMOTE.match(text):
        return True
    return _HOST_LIKE.match(text) is not None and not os.path.lexists(os.path.join(base, text))


@dataclass(frozen=True)
class Remote:
    """A kustomization entry kustomize would fetch from the network."""

    kustomization: str  # the kustomization file naming it
    line: int
    entry: str


def remote_references(kfile: str, limit: int, docs: _KDocs | None = None) -> list[Remote]:
    """The entries of ``kfile`` and of the local kustomizations it loads (nested bases and
    components, to any depth) that kustomize would fetch: podfit builds none of them, so that a
    check of an untrusted repository reaches no address its author chose."""
    seen: set[str] = set()
    out: list[Remote] = []
    pending = [kfile]
    while pending:
        current = pending.pop()
        key = os.path.abspath(current)
        if key in seen:
            continue
        seen.add(key)
        text, doc = _kdoc(key, limit, {} if docs is None else docs)
        if not isinstance(doc, dict):
            continue
        base = os.path.dirname(key)
        lines: dict[str, int] | None = None  # an entry's text → the first line holding it, made once
        nested_here = []
        for entry in _loaded_entries(doc):
            if is_remote(entry, base):
                if lines is None:
                    lines = _entry_lines(text or "")
                line = lines.get(entry.strip())
                if line is None and len(out) < 64:  # a flow list ([a, b]): the line holding it
                    line = next((n + 1 for n, t in enumerate((text or "").splitlines()) if entry in t), None)
                out.append(Remote(current, line or 1, entry))
                continue
            target = os.path.normpath(os.path.join(base, entry))
            nested = _kustomization_file(target) if os.path.isdir(target) else None
            if nested is not None:  # named as the top kustomization is: relative when it is
                nested_here.append(_shown(nested, kfile))
        pending.extend(reversed(nested_here))  # depth first, in the order written
    return out


def _entry_lines(text: str) -> dict[str, int]:
    """Each list item's or ``path:`` value's text (unquoted) → the first line it stands on: where a
    kustomization names an entry, found in one pass however many entries it names."""
    out: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        body = line.split(" #", 1)[0].strip()
        for prefix in ("- path:", "path:", "-"):
            if body.startswith(prefix):
                body = body[len(prefix) :].strip()
                break
        out.setdefault(body.strip("'\""), n)
    return out


def _not_fetched(remote: Remote, kdir: str) -> Finding:
    return Finding(
        rule="PF908",
        message=(
            f"kustomization {kdir} not checked: {remote.entry} is remote and podfit fetches nothing; "
            f"build it where fetching is allowed and pipe it in: kustomize build {kdir} | podfit check -"
        ),
        location=Location(os.path.normpath(remote.kustomization), remote.line, 0),
        details={"render": f"kustomize build {kdir} | podfit check -", "remote": remote.entry},
    )


def _is_component(kfile: str, limit: int, docs: _KDocs) -> bool:
    """Is the kustomization file a Kustomize Component (``kind: Component``)?"""
    doc = _kdoc(kfile, limit, docs)[1]
    return isinstance(doc, dict) and doc.get("kind") == "Component"


def _identity(doc: Any) -> tuple[str, str] | None:
    if not isinstance(doc, dict):
        return None
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return (str(doc.get("kind") or ""), str(name or ""))


def _documents(body: str) -> list[tuple[int, str, tuple[str, str] | None]]:
    """A file's YAML documents: (the line before its first, its text, its kind and name)."""
    out = []
    offset = 0
    for piece in re.split(r"(?m)(?<=\n)---[ \t]*(?:#[^\n]*)?\n|\A---[ \t]*(?:#[^\n]*)?\n", body):
        try:
            ident = _identity(_yaml(piece))
        except yaml.YAMLError:
            ident = None
        out.append((offset, piece, ident))
        offset += piece.count("\n") + 1
    return out


def _render_kustomization(
    kdir: str, uses: tuple[set[str], set[str], set[str]], opts: RenderOptions, out: _Out
) -> _Render:
    """Build a kustomization into ``out``, as :func:`_render_chart` renders a chart."""
    kfile = _kustomization_file(kdir) or os.path.join(kdir, "kustomization.yaml")
    assert opts.kustomize is not None
    via = f"kustomize build {kdir}"
    for path in sorted(uses[2]):  # every file the build reads: a named pipe would hold it to its limit
        try:
            st = os.stat(path)
        except OSError:
            continue  # missing: kustomize says so itself
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            why = f"{path} is {kind_of(st.st_mode)}, not a regular file; podfit does not let kustomize read it"
            out.findings.append(_failed(kfile, f"kustomization {kdir}", why, via))
            return
    # what kustomize may read: below each kustomization's root (its load restrictor), and those files
    roots = sorted({os.path.dirname(u) for u in uses[2] if os.path.basename(u) in KUSTOMIZATION_NAMES})
    argv = (opts.kustomize, "build", os.path.abspath(kdir))
    text = yield Job(argv, os.path.abspath(kdir), (os.path.abspath(kdir), *roots, *sorted(uses[2])))
    if isinstance(text, RenderError):
        out.findings.append(_failed(kfile, f"kustomization {kdir}", str(text), via))
        return
    resources, patches, _ = uses
    # the resource files' objects by kind: a built object maps back to the one whose kind it has and
    # whose name its own name holds (namePrefix and nameSuffix), the exact name, else the longest
    owners: dict[str, list[tuple[str, str, _Source]]] = {}  # kind → (name, file, its document)
    fixes: dict[tuple[str, str], list[_Source]] = {}  # (kind, name) → the patches of that object
    for group, strict in ((resources, False), (patches, True)):
        for path in sorted(group):
            body = _read(path, opts.max_bytes)
            shown = _shown(path, kdir)
            for offset, piece, ident in _documents(body or ""):
                if ident is None or not ident[1]:
                    continue
                source = _Source(shown, "\n" * offset + piece, strict)
                if strict:
                    fixes.setdefault(ident, []).append(source)
                else:
                    owners.setdefault(ident[0], []).append((ident[1], shown, source))
    for doc_text in re.split(r"(?m)^---[ \t]*$\n?", text.decode("utf-8", "replace")):
        if not doc_text.strip():
            continue
        try:
            ident = _identity(_yaml(doc_text))
        except yaml.YAMLError:
            ident = None
        match = None
        if ident is not None:
            kind, name = ident
            candidates = [o for o in owners.get(kind, ()) if o[0] == name] or sorted(
                (o for o in owners.get(kind, ()) if o[0] in name), key=lambda o: -len(o[0])
            )
            if not candidates and kind in WORKLOAD_KINDS:
                # a JSON patch of /kind made it (emojivoto's Deployments turned DaemonSets and Jobs):
                # the one workload of its name, whatever its kind was
                candidates = [o for k, os_ in owners.items() if k in WORKLOAD_KINDS for o in os_ if o[0] == name]
                candidates = candidates if len(candidates) == 1 else []
            match = candidates[0] if candidates else None
        if match is None:  # made by a generator or from a remote base: the kustomization is its source
            out.add(kfile, doc_text, via, None, [_Source(kfile, "")])
        else:
            out.add(match[1], doc_text, via, None, [match[2], *fixes.get((ident[0], match[0]), ())])  # type: ignore[index]


# -------------------------------------------------------------------------------- driving ---


class _Out:
    """The rendered text gathered per source file, with each line's origin."""

    def __init__(self) -> None:
        self.text: dict[str, list[str]] = {}
        self.origins: dict[str, list[Origin | None]] = {}
        self.findings: list[Finding] = []
        self._sources: dict[str, _Source] = {}

    def add(self, file: str, doc: str, via: str, values: _Values | None, sources: Sequence[_Source] = ()) -> None:
        if not sources:
            source = self._sources.get(file)
            if source is None:
                source = self._sources[file] = _Source(file, _read(file, 64 * 2**20) or "")
            sources = [source]
        if not doc.endswith("\n"):
            doc += "\n"
        chunks = self.text.setdefault(file, [])
        origins = self.origins.setdefault(file, [])
        if chunks:
            chunks.append("---\n")
            origins.append(None)
        chunks.append(doc)
        origins.extend(_trace(doc, sources, via, values))


def render_inputs(paths: Sequence[str], opts: RenderOptions) -> Rendered:
    """Render the charts and kustomizations among ``paths`` (see the module's docstring)."""
    from .loader import InputFile

    out = _Out()
    charts: dict[str, str] = {}  # absolute chart directory → as shown
    rest: list[str] = []
    left_out: list[tuple[str, str]] = []
    for p in paths:
        holder = chart_of_file(p) if p != "-" else None
        if holder is not None and chart_root(p) is None:
            # helm-unittest suites, test values, docs and examples beside the templates: helm
            # deploys none of them, and their YAML is no manifest (a test suite holds templates)
            left_out.append((p, f"a file of the Helm chart {_shown(holder, p)} outside what helm renders"))
            continue
        root = chart_root(p) if p != "-" and opts.helm != OFF else None
        if root is not None:
            charts.setdefault(root, _shown(root, p))
        else:
            rest.append(p)
    renders: list[_Render] = [_render_chart(shown, opts, out) for _root, shown in sorted(charts.items())]

    if opts.kustomize is not None and opts.kustomize != OFF:
        kfiles = [p for p in rest if os.path.basename(p) in KUSTOMIZATION_NAMES]
        reads: dict[str, _Reads] = {}  # each kustomization's own entries, however many others reach it
        docs: _KDocs = {}  # and its text and document, for every walk below
        uses = {k: _kustomization_uses(k, opts.max_bytes, set(), reads, docs) for k in kfiles}
        used_by_other = {u for k, (_, _, used) in uses.items() for u in used if u != os.path.abspath(k)}
        consumed: set[str] = set()
        for k in kfiles:
            if os.path.abspath(k) in used_by_other:
                continue  # another kustomization among the inputs builds it
            consumed |= uses[k][2]
            kdir = os.path.normpath(os.path.dirname(k) or ".")
            if _is_component(k, opts.max_bytes, docs):
                # a Component only patches the kustomizations that list it under components:;
                # built alone it fails, and its files are patches, not manifests
                out.findings.append(
                    Finding(
                        rule="PF909",
                        message=f"Kustomize Component {kdir} is checked as part of the kustomizations that list it "
                        "under components:, none of which is among the inputs",
                        location=Location(os.path.normpath(k), 1, 0),
                        details={"render": f"kustomize build DIR | podfit check - (DIR listing {kdir})"},
                    )
                )
                continue
            remote = remote_references(k, opts.max_bytes, docs)
            if remote:
                out.findings.extend(_not_fetched(r, kdir) for r in remote)
                continue
            renders.append(_render_kustomization(kdir, uses[k], opts, out))
        rest = [p for p in rest if p == "-" or os.path.abspath(p) not in consumed]

    # each render up to its tool run (the checks before it may end it), the runs side by side, then
    # each render's output read back in the order above: the same report whatever finished first
    started: list[tuple[_Render, Job]] = []
    for render in renders:
        job = next(render, None)
        if job is not None:
            started.append((render, job))
    results = run_jobs([job for _, job in started], opts.max_bytes, opts.timeout, opts.workers)
    for (render, _), result in zip(started, results, strict=True):
        try:
            render.send(result)
        except StopIteration:
            pass

    files = tuple(InputFile(path, "".join(chunks).encode(), rendered=True) for path, chunks in out.text.items())
    sources = {path: tuple(o) for path, o in out.origins.items()}
    return Rendered(tuple(rest), files, tuple(out.findings), sources, tuple(left_out))


_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def _field_line(obj: Any, f: Finding, container_path: Callable[[Any, str], Any]) -> int | None:
    """The rendered line of the field a container's finding is about: its ``resources.requests``
    or ``resources.limits`` entry of the resource the finding names, else its ``resources``; None
    when the container sets none (the container's line is then the place to add them).
    ``container_path``: :func:`podfit.workloads.container_path`."""
    path = container_path(obj, f.container) if f.container else None
    if path is None:
        return None
    node: Any = obj.raw
    for k in path:
        node = node[k]
    resources = node.get("resources") if isinstance(node, dict) else None
    if not isinstance(resources, dict):
        return None
    resource = f.details.get("resource")
    field: tuple[Any, ...] = ("resources",)
    if resource in _RESOURCES:
        for group in ("requests", "limits"):
            entries = resources.get(group)
            if isinstance(entries, dict) and resource in entries:
                field = ("resources", group, resource)
                break
    line = obj.line_at(tuple(path) + field)
    return int(line) if line else None


def source_location(sources: SourceMap, location: Location) -> Location:
    """The source file and line of ``location`` when it is on rendered text (the template line of
    a chart's object, the resource file's line of a kustomization's); line 0 when the rendered line
    comes from no line of the source; ``location`` itself on a file that was not rendered."""
    origins = sources.get(location.file)
    if origins is None:
        return location
    line = location.line
    origin = origins[line - 1] if 1 <= line <= len(origins) else None
    if origin is None:
        return Location(location.file, 0, 0)
    return Location(origin.file or location.file, origin.line, 0)


def remap(
    findings: Sequence[Finding],
    sources: SourceMap,
    objects: Sequence[Any] = (),
    container_path: Callable[[Any, str], Any] | None = None,
) -> tuple[Finding, ...]:
    """Findings on rendered text moved to their source: the source line (for a container's finding,
    of the resources field it is about, where the template holds it), and in ``details`` the command
    that rendered it and the values key (file and line) that set the value. ``objects``: the
    rendered objects and ``container_path`` (podfit.workloads'), to find a container's fields."""
    by_ref = {(o.location.file, o.ref): o for o in objects if o.location.file in sources}
    out = []
    for f in findings:
        origins = sources.get(f.location.file)
        line = f.location.line
        if origins is None:
            out.append(f)
            continue
        obj = by_ref.get((f.location.file, f.object)) if f.object is not None else None
        field = _field_line(obj, f, container_path) if obj is not None and container_path and f.container else None
        if field is not None and 1 <= field <= len(origins) and origins[field - 1] is not None:
            line = field
        origin = origins[line - 1] if 1 <= line <= len(origins) else None
        details = dict(f.details)
        if origin is None:
            details["rendered"] = {"line": line}
            out.append(replace(f, location=Location(f.location.file, 0, 0), details=details))
            continue
        source: dict[str, Any] = {"by": origin.via, "line": line}
        message = f.message
        if origin.values is not None:
            source["values"] = origin.values
            where = origin.values_file or "values"
            if origin.values_line is not None:
                where = f"{where}:{origin.values_line}"
            source["values-file"] = origin.values_file
            source["values-line"] = origin.values_line
            message = f"{message} [values: {origin.values} ({where})]"
        details["rendered"] = source
        where_file = origin.file or f.location.file
        out.append(replace(f, message=message, location=Location(where_file, origin.line, 0), details=details))
    # one source built by several kustomizations (a resource of a component they all list) gives the
    # same finding once per build: at its source it is one finding
    keyed = sorted(((f.sort_key(), f) for f in out), key=lambda kf: kf[0])
    return tuple(f for i, (k, f) in enumerate(keyed) if i == 0 or k != keyed[i - 1][0])
