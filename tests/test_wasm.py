"""The embedded engine's compiled module (podfit/data/policies.wasm): current with policies/, run
only for the policies it was built from, the same results as opa, its sprintf like OPA's, and its
failures reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import tool
from podfit.engines import get_engine, wasm
from podfit.engines.base import EngineError, policy_dir, policy_modules
from podfit.engines.wasm import WasmEngine, go_sprintf
from test_engines import groups, per_file  # noqa: F401  (groups is a fixture)

OPA = tool("opa")


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_committed_module_is_built_from_the_policies(tmp_path):
    """`make wasm` was run after the last policy change: a fresh build gives the same bytes."""
    built = wasm.build_bundle(OPA, policy_dir(), tmp_path)
    assert built.read_bytes() == wasm.bundle_path().read_bytes(), (
        "policies changed: run `make wasm` and commit the result"
    )
    manifest = json.loads((tmp_path / wasm.MANIFEST).read_text())
    assert manifest["sources_sha256"] == wasm.sources_digest(policy_modules(policy_dir()))
    assert wasm.stale_reason(policy_modules(policy_dir()), policy_dir()) is None


def test_embedded_engine_uses_the_module_only_for_the_policies_it_was_built_from(tmp_path, monkeypatch):
    assert isinstance(get_engine("embedded"), WasmEngine)
    # an edited copy of the policies: the module was not built from them
    edited = tmp_path / "policies"
    for name, text in policy_modules(policy_dir()).items():
        (edited / name).parent.mkdir(parents=True, exist_ok=True)
        (edited / name).write_text(text + ("\n# edited\n" if name == "lib/k8s.rego" else ""))
    reason = wasm.stale_reason(policy_modules(edited), edited)
    assert reason is not None and str(edited) in reason and "policies.wasm" in reason
    with pytest.raises(EngineError, match="make wasm"):
        get_engine("embedded", edited)
    with pytest.raises(EngineError, match="make wasm"):
        WasmEngine(edited)
    # without the manifest the module is not trusted either
    monkeypatch.setattr(wasm, "_DATA", tmp_path / "nowhere")
    assert "missing" in wasm.stale_reason(policy_modules(policy_dir()), policy_dir())


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_module_in_parallel_and_opa_agree_on_every_fixture(groups, monkeypatch):  # noqa: F811
    """The fixtures once more, each group split over worker processes (test_engines runs them serially)."""
    from podfit.engines.opa import OpaEngine

    want = per_file(OpaEngine(policy_dir(), OPA), groups)
    monkeypatch.setenv("PODFIT_EMBEDDED_WORKERS", "3")
    assert per_file(WasmEngine(policy_dir()), groups) == want
    assert any(want.values())


def test_every_rego_rule_fires_in_the_module(groups):  # noqa: F811
    from podfit.catalogue import load_catalogue

    found = per_file(WasmEngine(policy_dir()), groups)
    fired = {rule for results in found.values() for (rule, *_rest) in results}
    assert fired == {r.id for r in load_catalogue().values() if r.engine == "rego"}


def test_serial_and_parallel_runs_give_the_same_results(monkeypatch):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1500m"}, "limits": {"cpu": "1.5"}}}]},
    }
    docs = [dict(pod, metadata={"name": f"p{i}"}) for i in range(700)]
    engine = WasmEngine(policy_dir())
    monkeypatch.setenv("PODFIT_EMBEDDED_WORKERS", "1")
    serial = engine.evaluate(docs, {})
    monkeypatch.setenv("PODFIT_EMBEDDED_WORKERS", "3")
    assert engine.evaluate(docs, {}) == serial
    assert len(serial) == 700 and {r.rule for r in serial} == {"PF102"}
    assert [r.index for r in serial] == list(range(700))


def test_chunks_reset_the_heap_without_losing_results(monkeypatch):
    monkeypatch.setattr(wasm, "CHUNK", 7)
    monkeypatch.setenv("PODFIT_EMBEDDED_WORKERS", "1")
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}}
    results = WasmEngine(policy_dir()).evaluate([pod] * 30, {})
    assert [r.index for r in results] == list(range(30))


def test_compiled_code_is_cached_and_a_corrupt_cache_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(wasm, "_compiled", {})
    wasm._module()
    (cached,) = (tmp_path / "podfit").glob("policies-*.cwasm")
    cached.write_bytes(b"not machine code")
    monkeypatch.setattr(wasm, "_compiled", {})
    wasm._module()  # falls back to compiling, and rewrites the cache
    assert cached.read_bytes() != b"not machine code"
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}}
    assert [r.rule for r in WasmEngine(policy_dir()).evaluate([pod], {})] == ["PF105"]


def test_bad_input_is_an_engine_error():
    inst = wasm.Instance()
    inst.set_data({})
    with pytest.raises(EngineError, match="could not read|failed|aborted"):
        inst.evaluate(f"{wasm.ENTRY_PACKAGE}/findings", b'{"kind": "List", "items": [')
    with pytest.raises(EngineError, match="no entrypoint"):
        inst.evaluate(f"{wasm.ENTRY_PACKAGE}/deny", b"{}")  # rules return findings; conftest's deny is not built in


def test_a_module_needing_an_unknown_builtin_is_refused(monkeypatch):
    monkeypatch.setattr(wasm, "_HOST_BUILTINS", {})
    with pytest.raises(EngineError, match="built-in sprintf"):
        wasm.Instance()


# sprintf: the host's against OPA's own ------------------------------------------------------

CASES = [
    ('%s: %s "%s" sets no CPU request', ["Deployment web", "container", "app"]),
    ("%v %v", ["Pod", "x"]),
    ("%v slices of %v µs, %d%%", [15, 5000, 100]),
    ("%v", [0.5]),
    ("%v", [1e-07]),
    ("%v", [1234567.5]),
    ("%v", [123.25]),
    ("%v", [0.0001]),
    ("%v", [-2.5]),
    ("%v", [9223372036854775807]),
    ("%v", [100000000000000000000000]),
    ("%v", [True]),
    ("%vm", [1500]),
    ("%v%s", [2, "Gi"]),
]


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_sprintf_matches_opa():
    query = "x := [sprintf(c[0], c[1]) | some c in input]"
    out = subprocess.run(
        [OPA, "eval", "--format", "json", "--stdin-input", query],
        input=json.dumps(CASES),
        capture_output=True,
        text=True,
        check=True,
    )
    want = json.loads(out.stdout)["result"][0]["bindings"]["x"]
    assert [go_sprintf(fmt, args) for fmt, args in CASES] == want


def test_sprintf_missing_and_extra_arguments():
    assert go_sprintf("%s and %s", ["a"]) == "a and %!s(MISSING)"
    assert go_sprintf("100%%", []) == "100%"
    with pytest.raises(ValueError, match="verb %x"):
        go_sprintf("%x", [1])


# differential fuzzing: the compiled module against the opa binary on hostile documents ----------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_fuzz import manifest  # noqa: E402


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
@settings(
    max_examples=int(os.environ.get("PODFIT_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(manifest(), min_size=1, max_size=6), st.sampled_from(["tkg", "vsphere-pods", "bare-metal"]))
def test_module_and_opa_agree_on_generated_documents(docs, runtime):
    """Junk quantities (huge, negative, floats, NaN), unnamed containers, odd kinds: the compiled
    module gives exactly the opa binary's results, or both fail."""
    from podfit.engines.opa import OpaEngine
    from podfit.facts import build_facts, cfs_screen_limit, facts_data
    from podfit.platform import DEFAULT_PLATFORM

    data = facts_data(build_facts((), DEFAULT_PLATFORM))
    data["platform"] |= {"runtime": runtime}
    if runtime == "bare-metal":
        data["platform"] |= {
            "node_logical_cpus": 256,
            "cfs_screen_limit": cfs_screen_limit(256),
            "kubelet": {"cpu_manager_policy": "static"},
        }
    try:
        want = OpaEngine(policy_dir(), OPA).evaluate(docs, data)
    except EngineError:
        with pytest.raises(EngineError):
            WasmEngine(policy_dir()).evaluate(docs, data)
        return
    assert WasmEngine(policy_dir()).evaluate(docs, data) == want


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_text_beyond_the_basic_plane_and_lone_surrogates_read_as_opa_reads_them():
    from podfit.engines.opa import OpaEngine

    docs = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"containers": [{"name": name, "resources": {"requests": {"memory": "1Gi"}}}]},
        }
        for name in ("\U00020000", "a\ud800b", "\u00e9\U0001f600")
    ]
    want = OpaEngine(policy_dir(), OPA).evaluate(docs, {})
    assert WasmEngine(policy_dir()).evaluate(docs, {}) == want
    assert [(r.rule, r.container) for r in want if r.rule == "PF101"] == [
        ("PF101", "\U00020000"),
        ("PF101", "a\ufffdb"),
        ("PF101", "\u00e9\U0001f600"),
    ]
    assert want[0].msg == 'container "\U00020000" sets no CPU request'


def test_a_worker_that_dies_is_an_engine_error(monkeypatch):
    """A worker killed mid-run (the kernel's OOM killer, say) fails the run: exit 2, never a pass."""
    import signal

    monkeypatch.setenv("PODFIT_EMBEDDED_WORKERS", "2")
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}}
    with pytest.raises(EngineError, match="worker died"):
        # locate runs in the workers (inherited by fork): here it kills the one it runs in
        WasmEngine(policy_dir()).evaluate([pod] * 10, {}, locate=lambda i, c: os.kill(os.getpid(), signal.SIGKILL))


def test_large_inputs_are_halved_not_refused(monkeypatch):
    monkeypatch.setattr(wasm, "MAX_INPUT_BYTES", 2000)
    monkeypatch.setenv("PODFIT_EMBEDDED_WORKERS", "1")
    pods = [
        {
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "annotations": {"x": "y" * 300}},
            "spec": {"containers": [{"name": "a"}]},
        }
        for i in range(40)
    ]
    results = WasmEngine(policy_dir()).evaluate(pods, {})
    assert [(r.index, r.rule) for r in results] == [(i, "PF105") for i in range(40)]


def test_profiler_switch_names_the_module_functions_for_perf(tmp_path):
    """PODFIT_WASM_PROFILER=perfmap (docs/benchmarks.md): wasmtime writes /tmp/perf-PID.map naming
    the compiled Rego and runtime functions, and the module is compiled then, not taken from the
    cache (cached code carries no such names)."""
    code = (
        "import os; from podfit.engines.base import policy_dir; from podfit.engines.wasm import WasmEngine; "
        "pod = {'kind': 'Pod', 'metadata': {'name': 'p'}, 'spec': {'containers': [{'name': 'a'}]}}; "
        "assert [r.rule for r in WasmEngine(policy_dir()).evaluate([pod], {})] == ['PF105']; print(os.getpid())"
    )
    env = dict(os.environ, PODFIT_WASM_PROFILER="perfmap", XDG_CACHE_HOME=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    perf_map = Path(f"/tmp/perf-{p.stdout.strip()}.map")
    try:
        names = perf_map.read_text()
    finally:
        perf_map.unlink(missing_ok=True)
    assert "opa_value_hash" in names and "data.podfit.lib.k8s.pods" in names
    assert not list(tmp_path.rglob("*.cwasm"))


def test_workers_that_must_compile_the_module_do_not_hang(tmp_path):
    """Forked workers find no compiled code to load when the cache cannot be written (or another
    podfit build replaced it; or under PODFIT_WASM_PROFILER): each compiles the module itself, after
    the parent compiled it with wasmtime's compiler threads, which a forked child does not have."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")  # XDG_CACHE_HOME/podfit cannot be created
    code = (
        "import os; from podfit.engines.base import policy_dir; from podfit.engines.wasm import WasmEngine; "
        "pod = {'kind': 'Pod', 'metadata': {'name': 'p'}, 'spec': {'containers': [{'name': 'a'}]}}; "
        "e = WasmEngine(policy_dir()); serial = e.evaluate([pod] * 8, {}); "
        "os.environ['PODFIT_EMBEDDED_WORKERS'] = '2'; "
        "assert e.evaluate([pod] * 8, {}) == serial; "
        "assert sorted((r.index, r.rule) for r in serial) == [(i, 'PF105') for i in range(8)], serial"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(blocker))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
