"""The embedded engine's fast path: the policies compiled to WebAssembly by ``opa build -t wasm``,
run in-process by wasmtime.

OPA compiles the policy library into one module (``podfit/data/policies.wasm``, built by
``make wasm`` with the pinned opa and committed; a test rebuilds it and compares bytes). The module
records the SHA-256 of the policy sources it was built from (``policies.wasm.json``): the engine
runs only when that matches the policies being run (:func:`stale_reason` says why not otherwise).

Documents go in as the same tagged ``kind: List`` the opa engine uses
(:func:`podfit.engines.base.batch_input`). Large inputs are split into one part per CPU, each evaluated
by a forked worker with its own instance, beside the main process's Python rules; given
``locate``, the workers also resolve the lines of their results. (Processes, not threads: the
module calls back into Python for every ``sprintf``, and each call waits for the GIL.) The host
implements the one built-in OPA leaves to it, ``sprintf``, for the verbs the policies use (``%s``,
``%v``, ``%d``, ``%%``), with Go's formatting of numbers.

The ABI (OPA's "Wasm" docs): the module imports ``env.memory`` and ``env.opa_builtin0..4`` /
``env.opa_abort``; the host parses JSON into values on the module's heap (``opa_json_parse``,
which fails loudly on bad text, where ``opa_eval``'s own parse would leave the input undefined and
the rules silent), sets input, data and entrypoint on an evaluation context and reads the result
back with ``opa_json_dump``. The heap is reset to just after the data before each evaluation.
"""

from __future__ import annotations

import atexit
import ctypes
import dataclasses
import gc
import hashlib
import importlib.util
import json
import math
import os
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..cachedir import cache_dir, open_trusted, write_private
from ..children import become_child
from .base import (
    QUANTITY_MEMO,
    EngineError,
    RegoResult,
    Wait,
    batch_input,
    batch_results,
    in_thread,
    normalise,
    policy_modules,
    quantity_strings,
    rule_packages,
    sort_results,
    split_documents,
    worker_count,
)

__all__ = ["WasmEngine", "bundle_path", "stale_reason", "sources_digest", "build_bundle", "go_sprintf", "ENTRY_PACKAGE"]

_DATA = Path(__file__).resolve().parents[1] / "data"
BUNDLE = "policies.wasm"
MANIFEST = "policies.wasm.json"
ENTRY_PACKAGE = "podfit_engine"
_PAGE = 65536
_MIN_PAGES = 64
_SCRATCH = 4096
# Documents per evaluation: the heap is reset between evaluations, so this bounds the module's
# memory while keeping the per-call cost negligible.
CHUNK = 2000
MAX_INPUT_BYTES = 32 * 2**20
# Below this many documents per process, a second one costs more than it saves.
MIN_DOCUMENTS_PER_WORKER = 300


def bundle_path() -> Path:
    return _DATA / BUNDLE


def sources_digest(modules: Mapping[str, str]) -> str:
    """SHA-256 over the policy modules (path and text, sorted by path)."""
    h = hashlib.sha256()
    for name in sorted(modules):
        h.update(name.encode() + b"\0" + modules[name].encode() + b"\0")
    return h.hexdigest()


def stale_reason(modules: Mapping[str, str], directory: Path) -> str | None:
    """Why the compiled module cannot run these policies (None when it can): it was built from
    other sources, or it or wasmtime is missing."""
    try:
        manifest = json.loads((_DATA / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"the compiled policies ({_DATA / MANIFEST}) are missing"
    # found, not imported: importing wasmtime costs a one-file check about 23 ms, which a
    # prestarted engine (prestart) pays on the other CPU
    if importlib.util.find_spec("wasmtime") is None:
        return "wasmtime, which runs the compiled policies, is not installed"
    if manifest.get("sources_sha256") != sources_digest(modules) or not bundle_path().is_file():
        return f"the policies in {directory} differ from those compiled into {bundle_path().name}"
    return None


def entry_module(packages: Sequence[str]) -> str:
    """The entrypoints: every rule's ``findings`` set, in one array (a union of the sets would hash
    each result again for every set after its own), and the quantity memo (see quantity.rego)."""
    sets = ", ".join(f"data.{pkg}.findings" for pkg in packages)
    return f"package {ENTRY_PACKAGE}\n\nfindings := [{sets}]\n\nquantities := {QUANTITY_MEMO}\n"


def build_bundle(opa: str, policy_dir: Path, out_dir: Path) -> Path:
    """Compile the policies with ``opa build -t wasm`` into ``out_dir`` (module and manifest).
    The build runs on a copy with relative paths, so the bytes do not depend on the checkout."""
    import subprocess  # a build step (make wasm), not a check's: imported here, not by every run
    import tarfile
    import tempfile

    opa = os.path.abspath(opa) if os.sep in opa else opa  # the build runs in another directory
    modules = policy_modules(policy_dir)
    with tempfile.TemporaryDirectory(prefix="podfit-wasm-") as tmp:
        src = Path(tmp) / "src"
        for name, text in modules.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text, encoding="utf-8")
        (src / "_engine").mkdir()
        (src / "_engine" / "entry.rego").write_text(entry_module(rule_packages(modules)), encoding="utf-8")
        cmd = [
            opa,
            "build",
            "-t",
            "wasm",
            "-e",
            f"{ENTRY_PACKAGE}/findings",
            "-e",
            f"{ENTRY_PACKAGE}/quantities",
            "-o",
            str(Path(tmp) / "bundle.tar.gz"),
            ".",
        ]
        proc = subprocess.run(cmd, cwd=src, capture_output=True, text=True)
        if proc.returncode != 0:
            raise EngineError(f"opa build -t wasm failed: {proc.stderr.strip()[:500]}")
        with tarfile.open(Path(tmp) / "bundle.tar.gz") as tar:
            member = tar.extractfile("/policy.wasm")
            wasm = member.read() if member else b""
        version = subprocess.run([opa, "version"], capture_output=True, text=True).stdout.splitlines()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / BUNDLE).write_bytes(wasm)
    manifest = {
        "built_by": "make wasm (podfit.engines.wasm.build_bundle)",
        "opa": version[0].split(":", 1)[-1].strip() if version else "unknown",
        "sources_sha256": sources_digest(modules),
        "wasm_sha256": hashlib.sha256(wasm).hexdigest(),
    }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return out_dir / BUNDLE


# ------------------------------------------------------------------------------------ module ---

_compiled: dict[str, Any] = {}
_compile_lock = threading.Lock()
atexit.register(_compiled.clear)  # before wasmtime's own module is torn down


def _module() -> tuple[Any, Any]:
    """(wasmtime Engine, compiled Module), compiled once per process; the machine code is cached
    under ``$XDG_CACHE_HOME/podfit`` (0.2 s to compile, 1 ms to load)."""
    import wasmtime

    with _compile_lock:
        if _compiled.get("pid") == os.getpid():
            return _compiled["engine"], _compiled["module"]
        wasm, cache = _code_cache()
        profiler = os.environ.get("PODFIT_WASM_PROFILER")
        # with a profiler (e.g. perfmap: `perf` then names the module's functions): compiled now, not cached
        engine, cached = _engine(profiler), (None if profiler else cache)
        module = None
        module = _deserialize(engine, cached) if cached is not None else None
        if module is None:
            if "pid" in _compiled:
                # a forked worker (no or no usable cache): wasmtime's parallel compilation would
                # queue work for the parent's compiler threads, which do not exist here, and hang
                engine = _engine(profiler, parallel=False)
            try:
                module = wasmtime.Module(engine, wasm)
            except Exception as e:
                raise EngineError(f"embedded engine could not compile {bundle_path()}: {e}") from None
            if cached is not None:
                _save(module, cached)
        _compiled.update(engine=engine, module=module, pid=os.getpid())  # not reused after a fork
        return engine, module


# The address space each instance's linear memory takes. wasmtime's default reserves 4 GiB plus
# guard pages per memory, so that no access needs a bounds check; under an address-space limit
# (`ulimit -v`, RLIMIT_AS, as some CI runners and sandboxes set) that reservation fails and the
# engine cannot start. Under such a limit each memory reserves 64 MiB and grows by moving
# (memory_may_move, the default): explicit bounds checks, 8% more evaluation time
# (bench/wasm_memory.py, docs/benchmarks.md), which is why an unlimited process keeps the default.
_SMALL_RESERVATION = (64 * 2**20, 64 * 2**10, 16 * 2**20)  # reservation, guard, reservation for growth


def _memory_sizing() -> tuple[int, int, int] | None:
    """The small sizing under an address-space limit, else None (wasmtime's default)."""
    return _SMALL_RESERVATION if _address_space_limit() else None


def _engine(profiler: str | None = None, parallel: bool = True) -> Any:
    """A wasmtime Engine sized for the process's address space (above); ``parallel=False`` in a
    forked worker."""
    import wasmtime

    config = wasmtime.Config()
    sizing = _memory_sizing()
    if sizing is not None:
        config.memory_reservation, config.memory_guard_size, config.memory_reservation_for_growth = sizing
    if not parallel:
        config.parallel_compilation = False
    if profiler:
        config.profiler = profiler
    return wasmtime.Engine(config)


def _deserialize(engine: Any, cache: Path) -> Any:
    """The module compiled before and kept in ``cache`` when that is the user's own file
    (:func:`podfit.cachedir.open_trusted`); None when it is not, or stale or foreign."""
    import wasmtime

    fd = open_trusted(cache)
    if fd is None:
        return None
    try:
        # the file opened and checked, by a name that cannot be swapped: wasmtime maps it (reading
        # it whole to deserialize the bytes costs 7 ms more)
        proc = f"/proc/self/fd/{fd}"
        if os.path.exists(proc):
            return wasmtime.Module.deserialize_file(engine, proc)
        with os.fdopen(os.dup(fd), "rb") as f:
            return wasmtime.Module.deserialize(engine, f.read())
    except Exception:  # stale or foreign: compile again
        return None
    finally:
        os.close(fd)


def _save(module: Any, cache: Path) -> None:
    """Cache the compiled code (and drop other builds'); without a writable cache, compile each run."""
    try:
        write_private(cache, module.serialize())
        for old in cache.parent.glob("policies-*.cwasm"):
            if old != cache:
                old.unlink(missing_ok=True)
    except OSError:
        pass


def _code_cache() -> tuple[bytes, Path | None]:
    """(the module's bytes, where its compiled code is cached: None without a private cache
    directory, podfit.cachedir). Worked out once per run, before the workers fork: they inherit it."""
    root = cache_dir()
    key = (bundle_path(), root, _memory_sizing())
    got = _CODE_CACHE.get(key)
    if got is None:
        wasm = bundle_path().read_bytes()
        # code compiled for one memory sizing does not load into an engine of the other
        digest = hashlib.sha256(wasm + f"{_wasmtime_version()}/{_memory_sizing()}".encode()).hexdigest()[:32]
        got = _CODE_CACHE[key] = (wasm, root / f"policies-{digest}.cwasm" if root is not None else None)
    return got


_CODE_CACHE: dict[tuple[Path, Path | None, tuple[int, int, int] | None], tuple[bytes, Path | None]] = {}


def _wasmtime_version() -> str:
    """The installed wasmtime's version, from its dist-info directory's name (importlib.metadata
    takes 25 ms to import, and each worker would)."""
    spec = importlib.util.find_spec("wasmtime")
    if spec is None or spec.origin is None:
        return "unknown"
    site = Path(spec.origin).resolve().parents[1]
    names = sorted(p.name for p in site.glob("wasmtime-*.dist-info"))
    return names[-1][len("wasmtime-") : -len(".dist-info")] if names else "unknown"


def _start_error(e: Exception) -> EngineError:
    """One line for an instance that cannot start; for address space refused (an RLIMIT_AS below
    what one instance reserves), the way out: the OPA binary, which reserves none of it."""
    first = str(e).splitlines()[0] if str(e) else type(e).__name__
    if "mmap" in first or "allocate memory" in str(e):
        limit = _address_space_limit()
        return EngineError(f"the embedded engine cannot reserve its memory{limit} ({first}): run with --engine opa")
    return EngineError(f"embedded engine could not start the policy module: {first}")


def _address_space_limit() -> str:
    """The words "under an address-space limit of N MiB" when RLIMIT_AS is set, else nothing."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return ""
    return "" if soft == resource.RLIM_INFINITY else f" under an address-space limit of {soft // 2**20} MiB"


def _died(what: str) -> str:
    """Why a worker may have died: out of memory, and under an address-space limit the way out."""
    limit = _address_space_limit()
    return f"{what}{limit}: run with --engine opa" if limit else f"{what} (killed for memory?)"


class _Abort(Exception):
    pass


class Instance:
    """One instance of the policy module with its own store and memory (one per thread)."""

    def __init__(self) -> None:
        import wasmtime as wt

        engine, module = _module()
        self._store = store = wt.Store(engine)
        i32 = wt.ValType.i32()
        imports: list[Any] = []
        memory = None
        for imp in module.imports:
            if imp.name == "memory":
                # the module's data needs more than the 2 pages it declares
                try:
                    memory = wt.Memory(store, wt.MemoryType(wt.Limits(max(imp.type.limits.min, _MIN_PAGES), None)))
                except Exception as e:
                    raise _start_error(e) from None
                imports.append(memory)
            elif imp.name == "opa_abort":
                imports.append(wt.Func(store, wt.FuncType([i32], []), self._abort))
            elif imp.name == "opa_println":
                imports.append(wt.Func(store, wt.FuncType([i32], []), lambda _addr: None))
            elif imp.name.startswith("opa_builtin") and imp.name[-1].isdigit():
                arity = int(imp.name[-1])
                imports.append(wt.Func(store, wt.FuncType([i32] * (arity + 2), [i32]), self._builtin))
            else:
                raise EngineError(f"the policy module imports {imp.module}.{imp.name}, which podfit does not provide")
        if memory is None:
            raise EngineError("the policy module does not import env.memory, which podfit's wasm host provides")
        self._memory = memory
        try:
            instance = wt.Instance(store, module, imports)
        except Exception as e:
            raise _start_error(e) from None
        ex = instance.exports(store)

        def func(name: str) -> wt.Func:
            f = ex.get(name)
            if not isinstance(f, wt.Func):
                raise EngineError(f"the policy module does not export the function {name}")
            return f

        self._malloc, self._json_parse, self._json_dump = (
            func("opa_malloc"),
            func("opa_json_parse"),
            func("opa_json_dump"),
        )
        self._heap_get, self._heap_set = func("opa_heap_ptr_get"), func("opa_heap_ptr_set")
        self._ctx_new, self._ctx_eval, self._ctx_get_result = (
            func("opa_eval_ctx_new"),
            func("eval"),
            func("opa_eval_ctx_get_result"),
        )
        self._ctx_set_input, self._ctx_set_data = func("opa_eval_ctx_set_input"), func("opa_eval_ctx_set_data")
        self._ctx_set_entrypoint = func("opa_eval_ctx_set_entrypoint")
        names = self._read_json(func("builtins")(store))
        self._builtins: dict[int, Callable[..., Any]] = {}
        for name, ident in names.items():
            if name not in _HOST_BUILTINS:
                raise EngineError(f"the policy module needs the built-in {name}, which podfit's wasm host lacks")
            self._builtins[ident] = _HOST_BUILTINS[name]
        self.entrypoints: dict[str, int] = self._read_json(func("entrypoints")(store))
        self._scratch = self._malloc(store, _SCRATCH)  # below the heap base: kept across resets
        self._base = self._heap_get(store)
        self._data = 0
        self._free = self._base

    # memory helpers ------------------------------------------------------------------------
    def _cstring(self, addr: int) -> bytes:
        base = ctypes.addressof(self._memory.data_ptr(self._store).contents)
        return ctypes.string_at(base + addr)

    def _read_json(self, value_addr: int) -> Any:
        return json.loads(self._cstring(self._json_dump(self._store, value_addr)))

    def _ensure(self, end: int) -> None:
        size = self._memory.data_len(self._store)
        if end > size:
            self._memory.grow(self._store, -(-(end - size) // _PAGE))

    def _value(self, text: bytes) -> int:
        """Parse JSON text into a value on the module's heap; its address. Short texts (the
        results of built-ins) go through a scratch buffer allocated once, saving a call."""
        n = len(text)
        addr = self._scratch if n <= _SCRATCH else self._malloc(self._store, n)
        self._ensure(addr + n)
        ctypes.memmove(ctypes.addressof(self._memory.data_ptr(self._store).contents) + addr, text, n)
        value = self._json_parse(self._store, addr, n)
        if not value:
            raise EngineError("the policy module could not read its JSON input")
        return value

    # imports ------------------------------------------------------------------------------
    def _abort(self, addr: int) -> None:
        raise _Abort(self._cstring(addr).decode("utf-8", "replace"))

    def _builtin(self, ident: int, _ctx: int, *args: int) -> int:
        result = self._builtins[ident](*(self._read_json(a) for a in args))
        return self._value(_json(result))

    # evaluation ---------------------------------------------------------------------------
    def set_data(self, data: Mapping[str, Any]) -> None:
        self._heap_set(self._store, self._base)
        self._data = self._value(_json(data))
        self._free = self._heap_get(self._store)

    def evaluate(self, entrypoint: str, text: bytes) -> Any:
        """The value of ``entrypoint`` for the JSON input ``text`` (the heap is reset after data)."""
        try:
            ident = self.entrypoints[entrypoint]
        except KeyError:
            raise EngineError(f"the policy module has no entrypoint {entrypoint}") from None
        store = self._store
        self._heap_set(store, self._free)
        try:
            value = self._value(text)  # EngineError when the text is not JSON
            ctx = self._ctx_new(store)
            self._ctx_set_input(store, ctx, value)
            self._ctx_set_data(store, ctx, self._data)
            self._ctx_set_entrypoint(store, ctx, ident)
            self._ctx_eval(store, ctx)
            result = self._read_json(self._ctx_get_result(store, ctx))
        except _Abort as e:
            raise EngineError(f"the policy module aborted: {e}") from None
        except EngineError:
            raise
        except Exception as e:  # a trap (out of memory, unreachable) or a host-function error
            cause = e.__cause__ or e.__context__
            if isinstance(cause, _Abort):
                raise EngineError(f"the policy module aborted: {cause}") from None
            raise EngineError(
                f"the policy module failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            ) from None
        if not isinstance(result, list):
            raise EngineError(f"the policy module returned {str(result)[:200]}")
        return result[0]["result"] if result else None


# ------------------------------------------------------------------------------------ engine ---


class WasmEngine:
    name = "embedded"
    notice = ""

    def __init__(self, policy_dir: Path, modules: Mapping[str, str] | None = None) -> None:
        self.policy_dir = Path(policy_dir)
        self.modules = modules if modules is not None else policy_modules(self.policy_dir)
        stale = stale_reason(self.modules, self.policy_dir)
        if stale is not None:
            raise EngineError(f"{stale} (run `make wasm`)")
        _code_cache()  # here, so that forked workers inherit it

    def start(
        self,
        documents: Sequence[Mapping[str, Any]],
        facts: Mapping[str, Any],
        locate: Callable[[int, str | None], int] | None = None,
    ) -> Wait:
        """A small input is evaluated in a thread of this process (the module runs outside the
        GIL but for its ``sprintf`` calls); a large one by forked workers, all forked before this
        returns, which also resolve the lines of their results (the documents' texts are theirs
        by fork)."""
        if not documents:
            return lambda: []
        data = {"podfit": normalise(facts)}
        parts = split_documents(documents, _workers(len(documents)))
        if len(parts) == 1:
            handed = _hand_to_prestarted(documents, data)
            if handed is not None:
                return handed
            return in_thread(lambda: sort_results(_run_part(documents, 0, data)))  # lines: the caller's
        stop_prestarted()  # the workers below each start their own
        return _start_workers(parts, data, locate)

    def evaluate(
        self,
        documents: Sequence[Mapping[str, Any]],
        facts: Mapping[str, Any],
        locate: Callable[[int, str | None], int] | None = None,
    ) -> list[RegoResult]:
        return self.start(documents, facts, locate)()


def _start_workers(
    parts: list[tuple[int, Sequence[Mapping[str, Any]]]],
    data: dict[str, Any],
    locate: Callable[[int, str | None], int] | None = None,
) -> Wait:
    """One forked process per part, each forked here in the calling thread; the returned function
    collects their results (a pipe each). Processes rather than threads: every ``sprintf`` calls
    back into Python and waits for the GIL, and preparing the input is Python too. The parts and
    ``locate`` are inherited by fork: nothing but the results is pickled."""
    import multiprocessing

    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        return in_thread(lambda: sort_results([r for start, part in parts for r in _run_part(part, start, data)]))
    global _PARTS, _LOCATE, _FORKER
    _PARTS, _LOCATE, _FORKER = parts, locate, os.getpid()
    workers: list[tuple[Any, Any]] = []
    try:
        for k in range(len(parts)):
            receive, send = ctx.Pipe(duplex=False)
            process = ctx.Process(target=_worker, args=(k, data, send), name=f"podfit-engine-{k}", daemon=True)
            process.start()
            send.close()  # the child's copy stays open: its end is this pipe's end of file
            workers.append((process, receive))
    except BaseException:
        _stop(workers, kill=True)
        raise
    finally:
        _PARTS, _LOCATE = [], None

    def wait() -> list[RegoResult]:
        results: list[RegoResult] = []
        done = False
        try:
            for _, receive in workers:
                try:
                    ok, value = receive.recv()
                except EOFError:
                    raise EngineError(_died("an embedded engine worker died")) from None
                if not ok:
                    raise value
                results.extend(value)
            done = True
        finally:
            _stop(workers, kill=not done)
        return sort_results(results)

    return wait


# ---------------------------------------------------------------------------- prestarted ---

_PRESTARTED: list[tuple[int, int, int]] = []  # (pid, its input's write end, its output's read end)


def prestart() -> None:
    """Start the engine in a child process now, before the inputs are read: it imports wasmtime
    and loads the compiled module (about a fifth of a one-file check) on another CPU while this
    process reads and analyses the manifests, then evaluates the one part it is handed
    (:func:`_hand_to_prestarted`). Only with a CPU to spare, only from the command line's own
    process (:func:`podfit.cli.run`: a fork of a process with threads, such as a test runner's,
    could inherit a held lock), and never more than one. Plain ``os.fork`` and pipes (the
    ``multiprocessing`` machinery would cost the main process more to import than it saves).
    :func:`stop_prestarted` ends it; a child whose parent is gone reads end-of-file and exits."""
    if _PRESTARTED or (os.cpu_count() or 1) < 2 or os.environ.get("PODFIT_PRESTART") == "0":
        return
    try:
        to_child = os.pipe()
        from_child = os.pipe()
        parent = os.getpid()
        pid = os.fork()
    except OSError:  # no process to be had: the engine runs in this one, as before
        return
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(to_child[1])
            os.close(from_child[0])
            _prestarted(to_child[0], from_child[1], parent)
            code = 0
        finally:
            os._exit(code)
    os.close(to_child[0])
    os.close(from_child[1])
    _PRESTARTED.append((pid, to_child[1], from_child[0]))


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


ORPHANED = 3  # the exit status of a child that finds the process that forked it gone


def _prestarted(receive: int, send: int, parent: int) -> None:
    import pickle

    become_child(parent, ORPHANED)
    gc.disable()
    try:
        _module()
    except Exception:
        pass  # the work, if any comes, reports the failure
    work = _read_all(receive)
    os.close(receive)
    if not work:  # nothing handed over (stop_prestarted)
        return
    try:
        documents, data = pickle.loads(work)
        answer: tuple[bool, Any] = (True, _run_part(documents, 0, data))
    except Exception as e:
        answer = (False, e if isinstance(e, EngineError) else EngineError(f"{type(e).__name__}: {e}"))
    _write_all(send, pickle.dumps(answer))
    os.close(send)


def _hand_to_prestarted(documents: Sequence[Mapping[str, Any]], data: dict[str, Any]) -> Wait | None:
    """The prestarted engine's results for ``documents`` (None without one: it is used once)."""
    if not _PRESTARTED:
        return None
    import pickle

    pid, send, receive = _PRESTARTED.pop()
    try:
        work = pickle.dumps((list(documents), data))
    except Exception:  # (a RecursionError, nested past pickle's limit) the caller evaluates here
        _end(pid, send, receive, kill=True)
        return None
    try:
        _write_all(send, work)
        os.close(send)
    except OSError:  # it died: the caller evaluates here
        _end(pid, send, receive, kill=True)
        return None

    def wait() -> list[RegoResult]:
        done = False
        try:
            answer = _read_all(receive)
            if not answer:
                raise EngineError(_died("the embedded engine's process died"))
            ok, value = pickle.loads(answer)
            if not ok:
                raise value
            done = True
            return sort_results(value)
        finally:
            _end(pid, None, receive, kill=not done)

    return wait


def _end(pid: int, send: int | None, receive: int, kill: bool) -> None:
    for fd in (send, receive):
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass  # closed already
    if kill:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def stop_prestarted() -> None:
    """End the prestarted engine if nothing was handed to it: it reads end-of-file and exits
    (waited for here, so that nothing outlives the command)."""
    while _PRESTARTED:
        pid, send, receive = _PRESTARTED.pop()
        _end(pid, send, receive, kill=False)


def _stop(workers: list[tuple[Any, Any]], kill: bool) -> None:
    for process, receive in workers:
        receive.close()
        if kill:
            process.kill()
        process.join()


_PARTS: list[tuple[int, Sequence[Mapping[str, Any]]]] = []
_LOCATE: Callable[[int, str | None], int] | None = None
_FORKER = 0  # the id of the process that forks the workers, for become_child


def _worker(k: int, data: dict[str, Any], send: Any) -> None:
    # a short-lived child: the cyclic collector would only walk (and copy, page by page) the
    # parent's heap it shares
    become_child(_FORKER, ORPHANED)
    gc.disable()
    try:
        start, part = _PARTS[k]
        results = _run_part(part, start, data)
        if _LOCATE is not None:
            try:
                results = [dataclasses.replace(r, line=_LOCATE(r.index, r.container)) for r in results]
            except Exception:  # lines are a courtesy here: the main process resolves what is missing
                pass
        send.send((True, results))
    except Exception as e:
        send.send((False, e if isinstance(e, EngineError) else EngineError(f"{type(e).__name__}: {e}")))
    finally:
        send.close()


def _workers(n: int, cpus: int | None = None) -> int:
    """Processes (``PODFIT_EMBEDDED_WORKERS``; see :func:`podfit.engines.base.worker_count`)."""
    return worker_count(n, "PODFIT_EMBEDDED_WORKERS", MIN_DOCUMENTS_PER_WORKER, cpus)


def _run_part(documents: Sequence[Mapping[str, Any]], offset: int, data: dict[str, Any]) -> list[RegoResult]:
    inst = Instance()
    results: list[RegoResult] = []
    for start in range(0, len(documents), CHUNK):
        results.extend(_run_chunk(inst, documents[start : start + CHUNK], offset + start, data))
    return results


def _run_chunk(
    inst: Instance, documents: Sequence[Mapping[str, Any]], first: int, data: dict[str, Any]
) -> list[RegoResult]:
    """One evaluation; halved while its input is over ``MAX_INPUT_BYTES`` (a few huge documents
    would otherwise ask the 32-bit module for more memory than it can have)."""
    chunk = batch_input(documents, first)
    text = _json(chunk)
    if len(text) > MAX_INPUT_BYTES and len(documents) > 1:
        half = len(documents) // 2
        return _run_chunk(inst, documents[:half], first, data) + _run_chunk(inst, documents[half:], first + half, data)
    # the quantity memo first (one evaluation over the distinct strings), then the rules
    inst.set_data(data)
    texts = sorted(quantity_strings([chunk]))
    memo = inst.evaluate(f"{ENTRY_PACKAGE}/quantities", _json(texts)) if texts else [{}, {}]
    inst.set_data({"podfit": {**data["podfit"], "quantities": {"cpu": memo[0], "memory": memo[1]}}})
    sets = inst.evaluate(f"{ENTRY_PACKAGE}/findings", text)
    if not isinstance(sets, list) or not all(isinstance(s, list) for s in sets):
        raise EngineError(f"the policy module returned {str(sets)[:200]} for findings")
    raw = [r for results in sets for r in results]
    return batch_results(raw, f"embedded engine (documents {first}-{first + len(documents) - 1})")


def _json(value: Any) -> bytes:
    """JSON as UTF-8 (the module's parser mis-decodes the surrogate pairs of escaped characters
    beyond U+FFFF, so nothing is escaped that need not be). A lone surrogate becomes U+FFFD, as
    OPA's own JSON reader makes it."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


# ------------------------------------------------------------------------------------ sprintf ---


def go_sprintf(fmt: str, args: Any) -> str:
    """OPA's ``sprintf`` (Go's fmt) for the verbs the policies use: %s, %v, %d and %%. A string
    prints as itself, an integer in decimal, a float like Go's %v (shortest, exponent from 1e21
    or below 1e-4), other values as JSON."""
    if not isinstance(args, list):
        raise ValueError("sprintf: operand 2 must be an array")
    out: list[str] = []
    i = k = 0
    while i < len(fmt):
        j = fmt.find("%", i)
        if j < 0 or j + 1 >= len(fmt):
            out.append(fmt[i:])
            break
        out.append(fmt[i:j])
        verb = fmt[j + 1]
        i = j + 2
        if verb == "%":
            out.append("%")
            continue
        if verb not in "svd":
            raise ValueError(f"sprintf: verb %{verb} is not supported by podfit's wasm host")
        if k >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        out.append(_go_value(args[k]))
        k += 1
    if k < len(args):
        out.append("%!(EXTRA " + ", ".join(_go_value(a) for a in args[k:]) + ")")
    return "".join(out)


def _go_value(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _go_float(v)
    if v is None:
        return "null"
    return json.dumps(v, separators=(", ", ": "), ensure_ascii=False)


def _go_float(f: float) -> str:
    """A float as OPA's sprintf prints it. OPA keeps integral results of arithmetic as integers
    (printed in decimal); other floats go through Go's %v: the shortest digits, in exponent form
    when the exponent is below -4 or at least 6 (Go's %g precision for shortest output)."""
    if math.isinf(f) or math.isnan(f):
        return "NaN" if math.isnan(f) else ("+Inf" if f > 0 else "-Inf")
    if f == int(f) and abs(f) < 1e21:
        return str(int(f))
    digits, exp = _shortest(f)
    sign = "-" if f < 0 else ""
    if exp < -4 or exp >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    whole, frac = digits[: exp + 1].ljust(exp + 1, "0"), digits[exp + 1 :]
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


def _shortest(f: float) -> tuple[str, int]:
    """The shortest round-trip digits of |f| and its decimal exponent (d.ddd × 10^exp)."""
    s = f"{abs(f):.17e}"
    for p in range(1, 18):
        t = f"{abs(f):.{p - 1}e}"
        if float(t) == abs(f):
            s = t
            break
    mant, e = s.split("e")
    return mant.replace(".", "").rstrip("0") or "0", int(e)


_HOST_BUILTINS: dict[str, Callable[..., Any]] = {"sprintf": go_sprintf}
