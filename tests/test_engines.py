"""Conformance: the embedded engine, the opa engine and plain conftest agree on every fixture.
Also: engine selection and failures (EngineError, never a silent pass)."""

from __future__ import annotations

import json
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from podfit.catalogue import load_catalogue
from podfit.engines import EngineError, RegoResult, get_engine, policy_dir
from podfit.engines.embedded import EmbeddedEngine
from podfit.engines.opa import OpaEngine, find_opa
from podfit.engines.wasm import WasmEngine

from conftest import tool
from test_rego_fixtures import fixture_inputs, fixtures

ROOT = Path(__file__).resolve().parents[1]
OPA = tool("opa")
CONFTEST = tool("conftest")


def key(r: RegoResult) -> tuple:
    return (r.rule, r.msg, r.container, json.dumps(dict(r.details), sort_keys=True))


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
    return per_file(EmbeddedEngine(policy_dir()), groups)


def test_embedded_engine_finds_every_fail_fixture(embedded_results):
    for path, results in embedded_results.items():
        rules = {k[0] for k in results}
        if Path(path).name.startswith("fail_"):
            assert rules == {Path(path).parent.name}, path
        else:
            assert not results, path


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_opa_engine_matches_embedded(groups, embedded_results):
    assert per_file(OpaEngine(policy_dir(), OPA), groups) == embedded_results


@pytest.mark.tools
@pytest.mark.skipif(CONFTEST is None, reason="conftest not built (make tools)")
def test_plain_conftest_matches_embedded(groups, embedded_results, tmp_path):
    """`conftest test --policy policies/ --all-namespaces --data <facts>`: same results, same
    messages (with the rule prefix podfit strips), and the catalogue's severity in the metadata."""
    catalogue = load_catalogue()
    found: dict[str, Counter] = {p: Counter() for p in embedded_results}
    for n, (data, files) in enumerate(groups.values()):
        data_file = tmp_path / f"data{n}.json"
        data_file.write_text(json.dumps({"podfit": {"platform": data}}))
        cmd = [CONFTEST, "test", "--policy", str(ROOT / "policies"), "--all-namespaces", "--no-color",
               "--data", str(data_file), "-o", "json"] + [str(p) for p, _ in files]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
        for entry in json.loads(proc.stdout):
            for failure in entry.get("failures") or ():
                meta = failure["metadata"]
                assert meta["severity"] == catalogue[meta["rule"]].severity
                prefix = meta["rule"] + ": "
                assert failure["msg"].startswith(prefix)
                r = RegoResult(0, meta["rule"], failure["msg"][len(prefix):], meta.get("container"), meta.get("details") or {})
                found[entry["filename"]][key(r)] += 1
    assert found == embedded_results


def test_auto_picks_the_compiled_module_then_opa(monkeypatch):
    """auto: the committed WebAssembly module when it matches the policies, else the opa binary
    when found, else regopy."""
    assert isinstance(get_engine("auto"), WasmEngine)
    monkeypatch.setenv("PODFIT_EMBEDDED_BACKEND", "regopy")
    engine = get_engine("auto")
    assert engine.name == ("opa" if find_opa() else "embedded")
    assert isinstance(get_engine("embedded"), EmbeddedEngine)


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


def test_embedded_engine_reports_a_broken_policy(broken_policies):
    with pytest.raises(EngineError, match="could not compile"):
        EmbeddedEngine(broken_policies).evaluate([{"kind": "Pod"}], {})


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_opa_engine_reports_a_broken_policy(broken_policies):
    with pytest.raises(EngineError, match="opa eval failed"):
        OpaEngine(broken_policies, OPA).evaluate([{"kind": "Pod"}], {})


def test_empty_policy_dir_is_an_error(tmp_path):
    with pytest.raises(EngineError, match="no Rego policies"):
        EmbeddedEngine(tmp_path)


def test_no_documents_no_results():
    assert EmbeddedEngine(policy_dir()).evaluate([], {}) == []


def test_results_point_at_their_document():
    pod = yaml.safe_load((ROOT / "testdata/PF105/fail_best_effort.yaml").read_text())
    ok = yaml.safe_load((ROOT / "testdata/PF105/pass_burstable.yaml").read_text())
    results = EmbeddedEngine(policy_dir()).evaluate([ok, pod, ok, pod], {})
    assert [(r.index, r.rule) for r in results] == [(1, "PF105"), (3, "PF105")]
    assert results[0].msg.startswith("Job batch: no container sets")


def test_non_json_yaml_values_do_not_break_the_engines():
    """YAML timestamps and non-finite floats reach the engines as text, as conftest passes them."""
    import datetime

    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t", "creationTimestamp": datetime.date(2020, 1, 1)},
           "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": float("inf"), "memory": "1Gi"}}}]}}  # fmt: skip
    engines = [EmbeddedEngine(policy_dir()), WasmEngine(policy_dir())] + ([OpaEngine(policy_dir(), OPA)] if OPA else [])
    for engine in engines:
        # an invalid CPU quantity: PF101 stays silent (PF903 is Python's), nothing else applies
        assert engine.evaluate([doc], {}) == []


def test_batch_input_tags_the_objects_of_each_document():
    from podfit.engines import DOCUMENT_KEY, batch_input

    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": 0.5}}}]}}
    lst = {"kind": "List", "items": [pod, "not-an-object", {"kind": "Service"}]}
    broken_list = {"kind": "List", "items": "x"}  # not a List podfit.lib.k8s opens: an object itself
    batch = batch_input([pod, lst, ["not", "an", "object"], broken_list], offset=10)
    assert batch["kind"] == "List"
    assert [item[DOCUMENT_KEY] for item in batch["items"]] == [10, 11, 11, 13]
    assert batch["items"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "0.5"  # normalised
    assert batch["items"][2]["kind"] == "Service"
    assert DOCUMENT_KEY not in pod and DOCUMENT_KEY not in lst["items"][0]  # the documents are untouched


def test_result_without_its_document_is_an_error():
    from podfit.engines import batch_results

    with pytest.raises(EngineError, match="without its document"):
        batch_results([{"rule": "PF101", "msg": "m"}], "test")


def _corpus_and_platforms():
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from gen import generate
    from podfit.engines.platform_data import platform_data
    from podfit.platform import DEFAULT_PLATFORM

    base = platform_data(DEFAULT_PLATFORM)
    vsphere = {k: v for k, v in base.items() if k != "node_logical_cpus"} | {"runtime": "vsphere-pods"}
    bare = base | {"runtime": "bare-metal", "node_logical_cpus": 256, "numa_node": {"cores": 2, "memory": 2 * 2**30},
                   "kubelet": {"cpu_manager_policy": "static"}}  # fmt: skip
    return generate(120, 3), {"tkg": base, "vsphere-pods": vsphere, "bare-metal": bare}


@pytest.mark.tools
@pytest.mark.skipif(OPA is None, reason="opa not built (make tools)")
def test_engines_agree_on_a_generated_corpus(monkeypatch):
    """Every workload kind and quantity form of bench/gen.py, on three platforms that make every
    per-pod rule fire: regopy, the compiled module in one process and split over three, and the
    opa engine in one process and split over three."""
    docs, platforms = _corpus_and_platforms()
    embedded, opa, wasm = EmbeddedEngine(policy_dir()), OpaEngine(policy_dir(), OPA), WasmEngine(policy_dir())
    fired = set()
    for name, data in platforms.items():
        want = embedded.evaluate(docs, data)
        fired |= {r.rule for r in want}
        for n in ("1", "3"):
            monkeypatch.setenv("PODFIT_OPA_WORKERS", n)
            assert opa.evaluate(docs, data) == want, name
            monkeypatch.setenv("PODFIT_EMBEDDED_WORKERS", n)
            assert wasm.evaluate(docs, data) == want, name
    assert {"PF101", "PF102", "PF105", "PF201", "PF202", "PF302", "PF401", "PF402", "PF403"} <= fired


def test_opa_workers(monkeypatch):
    from podfit.engines.opa import MIN_DOCUMENTS_PER_WORKER, workers

    monkeypatch.delenv("PODFIT_OPA_WORKERS", raising=False)

    assert workers(10, cpus=2) == 1
    assert workers(2 * MIN_DOCUMENTS_PER_WORKER, cpus=2) == 2
    assert workers(100 * MIN_DOCUMENTS_PER_WORKER, cpus=64) == 4
    monkeypatch.setenv("PODFIT_OPA_WORKERS", "3")
    assert workers(10, cpus=1) == 3


def test_quantity_memo_candidates():
    from podfit.engines import quantity_strings

    doc = {"kind": "Pod", "spec": {"overhead": {"cpu": "250m"}, "containers": [
        {"name": "a", "resources": {"requests": {"cpu": 0.5, "memory": "1Gi"}, "limits": {"memory": 2}}},
        {"name": "b", "resources": {"limits": {"cpu": "x" * 65}}}]}}  # fmt: skip
    assert quantity_strings([doc, {"kind": "List", "items": [doc]}]) == {"250m", "0.5", "1Gi"}


def test_embedded_quantity_memo_matches_the_parser():
    """The memo the embedded engine passes as data.podfit.quantities holds what the library's own
    parser gives, and leaves out what it does not parse."""
    import random

    from podfit.quantity import QuantityError, parse_cpu, parse_memory

    rng = random.Random(5)
    texts = ["1", "1.5", "500m", "2Gi", "0.004k", "1e3", "+1", "bogus", "-1", "9223372036854775807"]
    texts += [f"{rng.randint(0, 5000)}{rng.choice(['', 'm', 'Mi', 'Gi', 'k', 'e-2'])}" for _ in range(50)]
    doc = {"kind": "Pod", "spec": {"containers": [{"name": "a", "resources": {"requests": {str(i): t for i, t in enumerate(texts)}}}]}}
    memo = EmbeddedEngine(policy_dir())._quantities([doc])

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
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [{"name": "x"}]}}
    # the same text as a (bogus) quantity: it reaches the embedded engine's quantity memo pass
    doc["spec"]["overhead"] = {"cpu": name}
    engines = [EmbeddedEngine(policy_dir()), WasmEngine(policy_dir())] + ([OpaEngine(policy_dir(), OPA)] if OPA else [])
    for engine in engines:
        (r,) = engine.evaluate([doc], {})
        assert r.rule == "PF105" and r.msg.startswith(f"Pod {name}: "), engine.name


def test_whole_cpu_counts_agree_at_every_size():
    """PF201 decides "whole CPUs" by the digits of the millicores: the same answer in every engine
    for ordinary and huge values (rego-cpp's % and format_int fail on some of them). (The "round
    to" hint of a fractional count near 2^63 CPUs differs: the engines' division is inexact there.)"""
    def pod(cpu: str) -> dict:
        res = {"cpu": cpu, "memory": "1Gi"}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{cpu}"},
                "spec": {"containers": [{"name": "a", "resources": {"requests": res, "limits": res}}]}}  # fmt: skip

    cpus = ["100", "100500m", "2", "1500m", "3000000", "3000000500m", "9223372036854775807", "9223372036854775806500m"]
    docs = [pod(c) for c in cpus]
    engines = [EmbeddedEngine(policy_dir()), WasmEngine(policy_dir())] + ([OpaEngine(policy_dir(), OPA)] if OPA else [])
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

    from podfit.engines import RegoResult, sort_results

    rng = random.Random(7)
    results = [RegoResult(rng.randrange(40), f"PF10{rng.randrange(3)}", f"m{rng.randrange(3)}", rng.choice([None, "", "c"]),
                          {"z": rng.randrange(3), "a": [rng.randrange(2)]}) for _ in range(2000)]  # fmt: skip
    expected = sorted(results, key=lambda r: (r.index, r.rule, r.container or "", r.msg, json.dumps(r.details, sort_keys=True)))
    assert sort_results(results) == expected
    assert sort_results([]) == []
