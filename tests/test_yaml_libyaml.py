"""podfit's YAML reading against LibYAML itself: both of podfit's paths (the fast one, yaml-rs with
its checks and lazy lines, and the line-tracking one, LibYAML's nodes through podfit's converter)
give the data LibYAML's own loader gives, on real-shaped manifests (every file of testdata/, whose
repos/ are modelled on public repositories), the generated corpus and random documents.

The reference is PyYAML's ``CSafeLoader`` (LibYAML's parser and composer) with one declared
difference: timestamps and ``!!binary`` stay text, as Kubernetes reads them (JSON has neither).
Mappings compare as mappings (with a merge key LibYAML puts the merged keys first; Kubernetes
does not see key order). Where LibYAML refuses a document, podfit refuses it too; podfit may also
refuse one by its own limits (YamlLimitError: alias bombs, depth, size)."""

from __future__ import annotations

import datetime
import math
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from podfit.yamlio import YamlLimitError, iter_documents

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


class Reference(yaml.CSafeLoader):
    pass


def _text(loader: yaml.CSafeLoader, node: yaml.Node) -> str:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


Reference.add_constructor("tag:yaml.org,2002:timestamp", _text)
Reference.add_constructor("tag:yaml.org,2002:binary", _text)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def assert_reads_as_libyaml(text: str) -> None:
    try:
        want = [d for d in yaml.load_all(text, Loader=Reference) if d is not None]
    except yaml.YAMLError:
        for fast in (True, False):
            with pytest.raises((yaml.YAMLError, YamlLimitError)):
                list(iter_documents(text, fast=fast))
        return
    for fast in (True, False):
        try:
            got = [d.data for d in iter_documents(text, fast=fast) if d.data is not None]
        except YamlLimitError:
            continue  # podfit's own bounds; LibYAML has none
        assert len(got) == len(want), ("fast" if fast else "slow", len(got), len(want))
        for g, w in zip(got, want, strict=True):
            assert same(g, w), ("fast" if fast else "slow", g, w)


def _files():
    for p in sorted([*ROOT.glob("testdata/**/*.yaml"), *ROOT.glob("testdata/**/*.yml")]):
        # as the loader decodes files: a leading byte order mark is not part of the text
        yield pytest.param(p.read_text(encoding="utf-8-sig", errors="replace"), id=str(p.relative_to(ROOT)))


@pytest.mark.parametrize("text", list(_files()))
def test_real_shaped_manifests_read_as_libyaml_reads_them(text):
    assert_reads_as_libyaml(text)


def test_generated_corpus_reads_as_libyaml_reads_it(tmp_path):
    from gen import generate, write  # bench/gen.py: every workload kind, every quantity form, 100 per file

    write(generate(1000, seed=11), tmp_path, per_file=100)
    files = sorted(tmp_path.rglob("*.yaml"))
    assert len(files) == 10
    for p in files:
        assert_reads_as_libyaml(p.read_text(encoding="utf-8"))


def test_the_reference_keeps_timestamps_as_text():
    assert yaml.load("t: 2024-01-02", Loader=Reference) == {"t": "2024-01-02"}
    assert isinstance(yaml.load("t: 2024-01-02", Loader=yaml.CSafeLoader)["t"], datetime.date)


SCALARS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=12),
    st.sampled_from(["1e3", "0777", "0x1F", "yes", "on", "~", "12:30", "2024-01-02", "*/5 * * * *", "a: b", "- x"]),
)
KEYS = st.one_of(st.text(min_size=1, max_size=8), st.sampled_from(["on", "yes", "1", "null", "<<x"]), st.integers(0, 9))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=int(__import__("os").environ.get("PODFIT_FUZZ_EXAMPLES", "300")), deadline=None)
@given(
    st.lists(st.dictionaries(KEYS, VALUES, min_size=1, max_size=5), min_size=1, max_size=3),
    st.sampled_from([None, False, True]),
    st.sampled_from([2, 4]),
    st.sampled_from([None, "'", '"']),
)
def test_random_documents_read_as_libyaml_reads_them(docs, flow, indent, style):
    text = yaml.safe_dump_all(docs, default_flow_style=flow, indent=indent, default_style=style, sort_keys=False)
    assert_reads_as_libyaml(text)
