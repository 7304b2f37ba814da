"""Conformance: the embedded engine (the compiled module), the opa engine and plain conftest (through
podfit.lib.conftest's deny/warn lines) agree on every fixture. Also: engine selection (stale
policies run through opa with a notice, or fail) and failures (EngineError, never a silent pass)."""

from __future__ import annotations

import json
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from conftest import tool
from podfit.catalogue import load_catalogue
from podfit.engines import get_engine
from podfit.engines.base import EngineError, RegoResult, policy_dir, policy_modules
from podfit.engines.opa import OpaEngine, find_opa
from podfit.engines.wasm import WasmEngine
from test_rego_fixtures import expected_rules, fixture_inputs, fixtures

ROOT = Path(__file__).resolve().parents[1]
OPA = tool("opa")
CONFTEST = tool("conftest")


def key(r: RegoResult) -> tuple:
    return (r.rule, r.severity, r.msg, r.container, json.dumps(dict(r.details), sort_keys=True))


@pytest.fixture(scope="module")
def groups() -> dict[str, tuple[dict, list[tuple[Path, list[dict]]]]]:
    """Fixtures grouped by the platform data they run with: {data json: (data, [(path, docs)])}."""
    out: dict[str, tuple[dict, list]] = {}
    for path in fixtures():
        docs, data = fixture_inputs(path)
        k = json.dumps(data, sort_keys=True)
        out.setdefault(k, (data, []))[1].append((path, docs))
    return out


def per_file(engine, groups) -> dict[str, Counter]:
    """Run the engine once per platform group (batched) and split results back per fixture file."""
    found: dict[str, Counter] = defaultdict(Counter)
    for data, files in groups.values():
        docs, owner = [], []
        for path, file_docs in files:
            docs += file_docs
            owner += [path] * len(file_docs)
            found[str(path)]  # every file present, even with no results
        for r in engine.evaluate(docs, data):
            found[str(owner[r.index])][key(r)] += 1
    return dict(found)


@pytest.fixture(scope="module")
def embedded_results(groups):
    return per_file(WasmEngine(policy_dir()), groups)


def test_embedded_engine_finds_every_fail_fixture(embedded_results):
    for path, results in embedded_results.items():
        rules = {k[0] for k in results}
        assert rules == expected_rules(Path(path)), path
        assert {(k[0], k[1]) for k in results} == {(r, load_catalogue()[r].severity) for r in rules}, path


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_opa_engine_matches_embedded(groups, embedded_results):
    assert per_file(OpaEngine(policy_dir(), OPA), groups) == embedded_results


def subject(doc: dict) -> str:
    """How podfit.lib.conftest names an object: "Deployment shop/web", or "Pod web" without a namespace."""
    meta = doc.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or ""
    return (
        f"{doc.get('kind', '')} {meta['namespace']}/{name}"
        if meta.get("namespace")
        else f"{doc.get('kind', '')} {name}"
    )


@pytest.mark.tools
@pytest.mark.skipif(CONFTEST is None, reason="conftest not built (make tools)")
def test_plain_conftest_matches_embedded(groups, tmp_path):
    """`conftest test --policy policies/ --all-namespaces --data <data.podfit>`: one line per
    finding, "PF101 Deployment shop/web: <message>", an error as a failure (deny) and a warning or
    advice as a warning (warn), and nothing else from any other package."""
    engine = WasmEngine(policy_dir())
    want: dict[str, set] = {}
    found: dict[str, set] = {}
    for n, (data, files) in enumerate(groups.values()):
        data_file = tmp_path / f"data{n}.json"
        data_file.write_text(json.dumps({"podfit": data}))
        docs, owner = [], []
        for path, file_docs in files:
            docs += file_docs
            owner += [str(path)] * len(file_docs)
            want[str(path)], found[str(path)] = set(), set()
        for r in engine.evaluate(docs, data):
            kind = "failures" if r.severity == "error" else "warnings"
            want[owner[r.index]].add((kind, f"{r.rule} {subject(docs[r.index])}: {r.msg}"))
        cmd = [
            CONFTEST,
            "test",
            "--policy",
            str(ROOT / "policies"),
            "--all-namespaces",
            "--no-color",
            "--data",
            str(data_file),
            "-o",
            "json",
        ] + [str(p) for p, _ in files]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
        for entry in json.loads(proc.stdout):
            for kind in ("failures", "warnings"):
                for r in entry.get(kind) or ():
                    assert entry["namespace"] == "podfit.lib.conftest", r
                    found[entry["filename"]].add((kind, r["msg"]))
    assert found == want
    kinds = {kind for lines in want.values() for kind, _ in lines}
    assert kinds == {"failures", "warnings"}  # both severities exercised


@pytest.fixture
def edited_policies(tmp_path) -> Path:
    """A copy of the policies with one edit: not what the compiled module was built from."""
    edited = tmp_path / "policies"
    for name, text in policy_modules(policy_dir()).items():
        (edited / name).parent.mkdir(parents=True, exist_ok=True)
        (edited / name).write_text(text + ("\n# edited\n" if name == "lib/k8s.rego" else ""))
    return edited


def test_auto_picks_the_compiled_module_for_the_policies_it_was_built_from():
    engine = get_engine("auto")
    assert isinstance(engine, WasmEngine) and engine.name == "embedded" and engine.notice == ""
    assert isinstance(get_engine("embedded"), WasmEngine)


@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_auto_runs_stale_policies_with_opa_and_says_so(edited_policies, monkeypatch):
    monkeypatch.setenv("PODFIT_OPA", OPA)
    engine = get_engine("auto", edited_policies)
    assert isinstance(engine, OpaEngine) and engine.policy_dir == edited_policies
    assert str(edited_policies) in engine.notice and "make wasm" in engine.notice and OPA in engine.notice
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}}
    assert [r.rule for r in engine.evaluate([pod], {})] == ["PF105"]  # the edited policies do run


def test_stale_policies_without_opa_are_an_error_naming_make_wasm(edited_policies, monkeypatch, tmp_path):
    monkeypatch.setenv("PODFIT_OPA", str(tmp_path / "no-such-opa"))
    assert find_opa() is None
    with pytest.raises(EngineError, match=r"differ from those compiled.*`make wasm`"):
        get_engine("auto", edited_policies)
    with pytest.raises(EngineError, match=r"`make wasm`, or use --engine opa"):
        get_engine("embedded", edited_policies)  # never falls back, even with opa
    with pytest.raises(EngineError, match="make wasm"):
        WasmEngine(edited_policies)


@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_embedded_never_falls_back_to_opa(edited_policies, monkeypatch):
    monkeypatch.setenv("PODFIT_OPA", OPA)
    with pytest.raises(EngineError, match="make wasm"):
        get_engine("embedded", edited_policies)
    assert get_engine("opa").notice == ""  # opa chosen by the user: nothing to explain


def test_unknown_engine_is_an_error():
    with pytest.raises(EngineError, match="unknown engine"):
        get_engine("wasm")


def test_missing_opa_binary_is_an_error(tmp_path):
    engine = OpaEngine(policy_dir(), str(tmp_path / "no-such-opa"))
    with pytest.raises(EngineError, match="could not be run"):
        engine.evaluate([{"kind": "Pod"}], {})


@pytest.fixture
def broken_policies(tmp_path) -> Path:
    (tmp_path / "broken.rego").write_text("package podfit.broken\n\ndeny contains r if {\n\tr := \n}\n")
    return tmp_path


def test_embedded_engine_refuses_policies_it_was_not_built_from(broken_policies):
    """The compiled module runs only its own policies: a broken (or any other) policy directory is
    an EngineError before anything is evaluated."""
    with pytest.raises(EngineError, match="make wasm"):
        WasmEngine(broken_policies)


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_opa_engine_reports_a_broken_policy(broken_policies):
    with pytest.raises(EngineError, match="opa eval failed"):
        OpaEngine(broken_policies, OPA).evaluate([{"kind": "Pod"}], {})


def test_empty_policy_dir_is_an_error(tmp_path):
    for make in (
        lambda: WasmEngine(tmp_path),
        lambda: get_engine("auto", tmp_path),
        lambda: OpaEngine(tmp_path, "opa"),
    ):
        with pytest.raises(EngineError, match="no Rego policies"):
            make()


def test_no_documents_no_results():
    assert WasmEngine(policy_dir()).evaluate([], {}) == []


def test_results_point_at_their_document():
    pod = yaml.safe_load((ROOT / "testdata/PF105/fail_best_effort.yaml").read_text())
    ok = yaml.safe_load((ROOT / "testdata/PF105/pass_burstable.yaml").read_text())
    results = WasmEngine(policy_dir()).evaluate([ok, pod, ok, pod], {})
    assert [(r.index, r.rule, r.severity) for r in results] == [(1, "PF105", "error"), (3, "PF105", "error")]
    # the message is about the object, which the report names separately
    assert results[0].msg.startswith("no container sets") and "batch" not in results[0].msg


def test_non_json_yaml_values_do_not_break_the_engines():
    """YAML timestamps and non-finite floats reach the engines as text, as conftest passes them."""
    import datetime

    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "t", "creationTimestamp": datetime.date(2020, 1, 1)},
        "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": float("inf"), "memory": "1Gi"}}}]},
    }
    engines = [WasmEngine(policy_dir())] + ([OpaEngine(policy_dir(), OPA)] if OPA else [])
    for engine in engines:
        # an invalid CPU quantity: PF101 stays silent (PF903 is Python's); the valid memory request
        # without a limit is PF111's
        assert [(r.rule, r.container) for r in engine.evaluate([doc], {})] == [("PF111", "a")], engine.name


def test_batch_input_tags_the_objects_of_each_document():
    from podfit.engines.base import DOCUMENT_KEY, batch_input

    pod = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": 0.5}}}]},
    }
    lst = {"kind": "List", "items": [pod, "not-an-object", {"kind": "Service"}]}
    broken_list = {"kind": "List", "items": "x"}  # not a List podfit.lib.k8s opens: an object itself
    batch = batch_input([pod, lst, ["not", "an", "object"], broken_list], offset=10)
    assert batch["kind"] == "List"
    assert [item[DOCUMENT_KEY] for item in batch["items"]] == [10, 11, 11, 13]
    assert batch["items"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "0.5"  # normalised
    assert batch["items"][2]["kind"] == "Service"
    assert DOCUMENT_KEY not in pod and DOCUMENT_KEY not in lst["items"][0]  # the documents are untouched


def test_result_without_its_document_is_an_error():
    from podfit.engines.base import batch_results

    finding = {
        "rule": "PF101",
        "severity": "error",
        "message": "m",
        "container": "a",
        "details": {},
        "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "", "name": "p"},
    }
    (r,) = batch_results([{**finding, "document": 3}], "test")
    assert (r.index, r.rule, r.severity, r.msg, r.container) == (3, "PF101", "error", "m", "a")
    with pytest.raises(EngineError, match="without its document"):
        batch_results([finding], "test")


@pytest.mark.parametrize(
    "bad",
    [
        {"rule": "PF101", "message": "m", "document": 0},  # no severity
        {"rule": "PF101", "severity": "fatal", "message": "m", "document": 0},
        {"rule": "PF101", "severity": "error", "msg": "m", "document": 0},  # the old shape
        "PF101 Pod p: m",  # a conftest line, not a finding
    ],
)
def test_a_result_that_is_not_a_finding_is_an_error(bad):
    from podfit.engines.base import batch_results

    with pytest.raises(EngineError):
        batch_results([bad], "test")


def _corpus_and_platforms():
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from gen import generate
    from podfit.facts import build_facts, cfs_screen_limit, facts_data
    from podfit.platform import DEFAULT_PLATFORM

    base = facts_data(build_facts((), DEFAULT_PLATFORM))
    p = base["platform"]
    vsphere = {k: v for k, v in p.items() if k != "node_logical_cpus"} | {"runtime": "vsphere-pods"}
    bare = p | {
        "runtime": "bare-metal",
        "node_logical_cpus": 256,
        "cfs_screen_limit": cfs_screen_limit(256),
        "numa_node": {"cores": 2, "memory": 2 * 2**30},
        "kubelet": {"cpu_manager_policy": "static"},
    }
    platforms = {"tkg": p, "vsphere-pods": vsphere, "bare-metal": bare}
    return generate(120, 3), {name: base | {"platform": q} for name, q in platforms.items()}


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_engines_agree_on_a_generated_corpus(monkeypatch):
    """Every workload kind and quantity form of bench/gen.py, on three platforms that make every
    per-pod rule fire: the opa engine in one process, and split over three, against the compiled
    module in one process and split over three."""
    docs, platforms = _corpus_and_platforms()
    opa, wasm = OpaEngine(policy_dir(), OPA), WasmEngine(policy_dir())
    fired = set()
    for name, data in platforms.items():
        monkeypatch.setenv("PODFIT_OPA_WORKERS", "1")
        want = opa.evaluate(docs, data)
        fired |= {r.rule for r in want}
        monkeypatch.setenv("PODFIT_OPA_WORKERS", "3")
        assert opa.evaluate(docs, data) == want, name
        for n in ("1", "3"):
            monkeypatch.setenv("PODFIT_EMBEDDED_WORKERS", n)
            assert wasm.evaluate(docs, data) == want, name
    assert {"PF101", "PF102", "PF105", "PF201", "PF202", "PF302"} <= fired


def test_opa_workers(monkeypatch):
    from podfit.engines.opa import MIN_DOCUMENTS_PER_WORKER, workers

    monkeypatch.delenv("PODFIT_OPA_WORKERS", raising=False)

    assert workers(10, cpus=2) == 1
    assert workers(2 * MIN_DOCUMENTS_PER_WORKER, cpus=2) == 2
    assert workers(100 * MIN_DOCUMENTS_PER_WORKER, cpus=64) == 4
    monkeypatch.setenv("PODFIT_OPA_WORKERS", "3")
    assert workers(10, cpus=1) == 3


def test_quantity_memo_candidates():
    from podfit.engines.base import quantity_strings

    doc = {
        "kind": "Pod",
        "spec": {
            "overhead": {"cpu": "250m"},
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": 0.5, "memory": "1Gi"}, "limits": {"memory": 2}}},
                {"name": "b", "resources": {"limits": {"cpu": "x" * 65}}},
            ],
        },
    }
    assert quantity_strings([doc, {"kind": "List", "items": [doc]}]) == {"250m", "0.5", "1Gi"}


def test_embedded_quantity_memo_matches_the_parser():
    """The memo the embedded engine passes as data.podfit.quantities (the module's quantities
    entrypoint) holds what the library's own parser gives, and leaves out what it does not parse."""
    import random

    from podfit.engines import wasm
    from podfit.engines.base import quantity_strings
    from podfit.quantity import QuantityError, parse_cpu, parse_memory

    rng = random.Random(5)
    texts = ["1", "1.5", "500m", "2Gi", "0.004k", "1e3", "+1", "bogus", "-1", "9223372036854775807"]
    texts += [f"{rng.randint(0, 5000)}{rng.choice(['', 'm', 'Mi', 'Gi', 'k', 'e-2'])}" for _ in range(50)]
    doc = {
        "kind": "Pod",
        "spec": {"containers": [{"name": "a", "resources": {"requests": {str(i): t for i, t in enumerate(texts)}}}]},
    }
    assert quantity_strings([doc]) == set(texts)
    inst = wasm.Instance()
    inst.set_data({})
    cpu, memory = inst.evaluate(f"{wasm.ENTRY_PACKAGE}/quantities", wasm._json(sorted(texts)))
    memo = {"cpu": cpu, "memory": memory}

    def py(f, t):
        try:
            v = f(t)
        except QuantityError:
            return None
        return v if v < 2**53 else None

    assert memo["cpu"] == {t: py(parse_cpu, t) for t in texts if py(parse_cpu, t) is not None}
    assert memo["memory"] == {t: py(parse_memory, t) for t in texts if py(parse_memory, t) is not None}


def test_names_with_control_characters_and_quotes_survive_both_engines():
    name = 'a\x1fb"c\\d\u00e9'
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": name, "resources": {"requests": {"memory": "1Gi"}}}]},
    }
    # the same text as a (bogus) quantity: it reaches the embedded engine's quantity memo pass
    doc["spec"]["overhead"] = {"cpu": name}
    engines = [WasmEngine(policy_dir())] + ([OpaEngine(policy_dir(), OPA)] if OPA else [])
    for engine in engines:
        (r,) = [r for r in engine.evaluate([doc], {}) if r.rule != "PF111"]
        assert (r.rule, r.container) == ("PF101", name), engine.name
        assert r.msg == f'container "{name}" sets no CPU request', engine.name


def test_whole_cpu_counts_agree_at_every_size():
    """PF201 decides "whole CPUs" by millicores % 1000: the same answer in every engine for
    ordinary and huge values (beyond 2^64 millicores; the compiled module's format_int stops at
    2^31, its division at 2^53). (The "round to" hint of a fractional count near 2^63 CPUs
    differs: the engines' division is inexact there.)"""

    def pod(cpu: str) -> dict:
        res = {"cpu": cpu, "memory": "1Gi"}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{cpu}"},
            "spec": {"containers": [{"name": "a", "resources": {"requests": res, "limits": res}}]},
        }

    cpus = ["100", "100500m", "2", "1500m", "3000000", "3000000500m", "9223372036854775807", "9223372036854775806500m"]
    docs = [pod(c) for c in cpus]
    engines = [WasmEngine(policy_dir())] + ([OpaEngine(policy_dir(), OPA)] if OPA else [])
    answers = []
    for engine in engines:
        results = [r for r in engine.evaluate(docs, {}) if r.rule == "PF201"]
        answers.append([(cpus[r.index], r.msg if len(cpus[r.index]) < 15 else "") for r in results])
    assert all(a == answers[0] for a in answers), answers
    assert [c for c, _ in answers[0]] == ["100500m", "1500m", "3000000500m", "9223372036854775806500m"]
    assert "(round to 101)" in answers[0][0][1]


def test_sort_results_orders_by_details_only_where_the_rest_ties():
    """The engines' result order: document, rule, container, message, then canonical details."""
    import json
    import random

    from podfit.engines.base import RegoResult, sort_results

    rng = random.Random(7)
    results = [
        RegoResult(
            rng.randrange(40),
            f"PF10{rng.randrange(3)}",
            "warning",
            f"m{rng.randrange(3)}",
            rng.choice([None, "", "c"]),
            {"z": rng.randrange(3), "a": [rng.randrange(2)]},
        )
        for _ in range(2000)
    ]
    expected = sorted(
        results, key=lambda r: (r.index, r.rule, r.container or "", r.msg, json.dumps(r.details, sort_keys=True))
    )
    assert sort_results(results) == expected
    assert sort_results([]) == []
