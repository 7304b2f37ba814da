"""The fast YAML path (Rust parser, lazy lines) reads every document exactly as the line-tracking
PyYAML path does: same data, same document lines, same field lines; or it leaves the document to
the slow path."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from podfit import yamlio
from podfit.yamlio import YamlLimits, _fast_document, iter_documents

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


@pytest.fixture(autouse=True)
def _rust_parser_on():
    """Every comparison here reads fast=True through the Rust parser, whatever this process has
    parsed before (a fresh process waits for _FAST_AFTER bytes)."""
    assert yamlio._rust() is not None
    assert yamlio._fast_pays(0)


def test_the_rust_parser_is_imported_only_once_it_pays():
    """A one-file run does not import yaml_rs (about 6 ms); after _FAST_AFTER bytes it does, and the
    documents read before and after are the same as the slow path's."""
    code = (
        "import sys\n"
        "from podfit.yamlio import iter_documents, _FAST_AFTER\n"
        "small = 'apiVersion: v1\\nkind: Pod\\nmetadata: {name: p}\\n'\n"
        "before = [d.data for d in iter_documents(small, fast=True)]\n"
        "print('yaml_rs' in sys.modules)\n"
        "big = small + ('---\\n' + small) * (_FAST_AFTER // len(small))\n"
        "after = [d.data for d in iter_documents(big, fast=True)]\n"
        "print('yaml_rs' in sys.modules, before == after[:1], len(after))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "False"
    flag, same, count = out[1].split()
    assert (flag, same) == ("True", "True")
    assert int(count) > 1000


def _walk_paths(x, prefix=()):
    yield prefix
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _walk_paths(v, prefix + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _walk_paths(v, prefix + (i,))


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def assert_equivalent(text: str):
    try:
        slow = list(iter_documents(text, fast=False))
    except (yaml.YAMLError, Exception) as e:  # the slow path refuses: the fast one must too
        with pytest.raises(type(e)):
            list(iter_documents(text, fast=True))
        return
    fast = list(iter_documents(text, fast=True))
    assert len(fast) == len(slow)
    for f, s in zip(fast, slow, strict=True):
        assert _same(f.data, s.data), (f.data, s.data)
        assert f.line == s.line
        for path in _walk_paths(s.data):
            # existing fields, and missing keys and indexes below them (the line of the parent)
            for p in (path, path + ("podfit-no-such-key",), path + (10**6,)):
                assert f.lines.line(p, -1) == s.lines.line(p, -1), p


def _corpus_texts():
    for p in sorted(ROOT.glob("testdata/**/*.yaml")):
        # as the loader decodes files: a leading byte order mark is not part of the text
        yield pytest.param(p.read_text(encoding="utf-8-sig", errors="replace"), id=str(p.relative_to(ROOT)))


@pytest.mark.parametrize("char", ["\x07", "\x1b", "\x7f", "\x85", "\u2028", "\u2029", "\ufeff", "\ufffe"])
def test_characters_pyyaml_refuses_or_breaks_on_read_the_same(char):
    """A control character PyYAML (as kubectl) refuses, a YAML 1.1 line break (NEL, LS, PS) or a
    byte order mark is text to the Rust parser: the file is PF901 or read alike, at any size."""
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: {}\n"
    assert_equivalent(cm.format(f"a{char}b"))
    assert_equivalent(char + cm.format("x"))
    assert_equivalent(cm.format("x") + "---\n" + char + cm.format("y"))


@pytest.mark.parametrize(
    "text",
    [
        "metadata:\n  name: a\n: orphan\n",  # an empty key: PyYAML's (and kubectl's) syntax error
        "metadata: {: batch, namespace: shop}\n",
        "metadata: {name,: k}\n",
        "spec:\n  ?  - a\n",  # an explicit key that is a sequence
        "requests: {cpu: 100m, memory:}\n",
        "requests: {cpu:? 1, memory: 1Gi}\n",
        "pool: {count: |3, class: x}\n",
        "requests: {cpu: '2', me\nmory: 2Gi}\n",  # an implicit key broken over two lines
        "resources: {requests: {cpu: 1}, lim\nits: {cpu: 2}}\n",
        "metadata: {labels: ,{app: web}}\n",  # a mapping as a key
        "spec:\non:\n  x: 1\n",  # `on` is true to YAML 1.1
        "# a comment\rkind: ConfigMap\n",  # a lone CR is a line break to PyYAML
        "kind: A\n---\r\nkind: B\n",  # the second document starts on line 3
        "\r\n\r\nkind: A\n",
    ],
)
def test_what_pyyaml_refuses_or_reads_otherwise_reads_the_same(text):
    """Found by mutating testdata: documents the Rust parser reads (into None or collection keys)
    where PyYAML stops with a syntax error, as kubectl does, or reads a key or line otherwise.
    Each is PF901 or read alike whatever the file's size."""
    assert_equivalent(text)


@pytest.mark.parametrize("text", list(_corpus_texts()))
def test_testdata_reads_the_same_both_ways(text):
    assert_equivalent(text)


def test_generated_corpus_reads_the_same_and_mostly_fast():
    from gen import generate  # bench/gen.py: every workload kind, every quantity form

    docs = generate(600, seed=7)

    class NoAliases(yaml.SafeDumper):
        def ignore_aliases(self, data):
            return True

    text = yaml.dump_all(docs, Dumper=NoAliases, sort_keys=False)
    assert_equivalent(text)
    chunks = text.split("\n---\n")
    fast = sum(1 for c in chunks if _fast_document(c, YamlLimits())[0])
    assert fast >= len(chunks) * 0.6, f"only {fast}/{len(chunks)} documents took the fast path"


TOKENS = [
    "1e3",
    "1E3",
    "1.5e3",
    ".5",
    "1.",
    "0777",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "12:30",
    "1:2:3.5",
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "true",
    "False",
    "~",
    "null",
    "Null",
    "=",
    ".inf",
    "-.Inf",
    ".nan",
    "2024-01-02",
    "2024-01-02T03:04:05Z",
    "+1",
    "-0",
    "00",
    "0",
    "1.0.0",
    "v1",
    "500m",
    "2Gi",
    "'1'",
    '"on"',
    "''",
    "'a: b'",
    "-",
    "- a",
    "[]",
    "{}",
    "[1, on]",
    "{a: 1e3}",
    "0.1",
    "-1.5",
    "1__0",
    "_1",
    "0.",
    "+.5",
    "12e",
    "e3",
    "0x",
    "1:60",
]


@settings(max_examples=int(__import__("os").environ.get("PODFIT_FUZZ_EXAMPLES", "300")), deadline=None)
@given(
    st.lists(
        st.sampled_from(TOKENS)
        | st.text(alphabet="0123456789.:eE+-_xobyYnNaftrulTFO~=<>!&*|%@` ", min_size=1, max_size=6),
        min_size=1,
        max_size=4,
    )
)
def test_scalars_read_the_same_both_ways(tokens):
    text = "apiVersion: v1\nkind: ConfigMap\ndata:\n" + "".join(f"  k{i}: {t}\n" for i, t in enumerate(tokens))
    text += "list: [" + ", ".join(tokens) + "]\n"
    assert_equivalent(text)


# Lines in every place a token can take: block list items, values with comments, keys, quoted
# values holding indicators, plain scalars continued on the next line, block scalars.
LINES = [
    "  k{i}: {t}\n",
    "  - {t}\n",
    "  k{i}: {t} # c\n",
    "  {t}: v{i}\n",
    "  k{i}: '{q}'\n",
    '  k{i}: "{q}"\n',
    "  k{i}: '{q}' # c\n",
    "  k{i}: text\n    {t}\n",
    "  - k{i}: {t}\n    j{i}: x\n",
    "  k{i}: |\n    {t} '{q}'\n",
    "  k{i}: a '{q}' {t}\n",
    "  - '{q}'\n",
    "  k{i}: ['{q}', {t}]\n",
]
QUOTED = ["*/5 * * * *", "&a", "*a", "!tag", "<<", "%x", "@", "`", "it''s", "a: b", "#", "1e3", ".inf"]


@settings(max_examples=int(__import__("os").environ.get("PODFIT_FUZZ_EXAMPLES", "300")), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(LINES), st.sampled_from(TOKENS), st.sampled_from(QUOTED)), min_size=1, max_size=5
    ),
    st.sampled_from(["data:\n", "items:\n"]),
)
def test_tokens_in_every_position_read_the_same_both_ways(lines, head):
    body = "".join(
        line.format(i=i, t=t, q=q if '"' not in line else q.replace("''", "'")) for i, (line, t, q) in enumerate(lines)
    )
    assert_equivalent("apiVersion: v1\nkind: ConfigMap\n" + head + body)


# The lines of plain documents come from their outline (yamlio._Outline: the block structure read
# line by line) where it can tell, else from LibYAML's node graph; both must give the slow path's
# lines for every path. Documents of every block layout: indented and compact sequences, indent 2
# and 4, long values folded over lines (plain and quoted), quoted keys, flow collections, block
# scalars, comments and blank lines anywhere.
class _IndentedSequences(yaml.SafeDumper):
    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


_KEYS = st.sampled_from(
    ["name", "spec", "containers", "a b", "app.kubernetes.io/name", "x-1", "on", "1", "null", "'q'", "k:v", "#h", "é"]
)
_VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            "plain",
            "500m",
            "1e3",
            "it's",
            'say "hi"',
            "a: b",
            "x # y",
            "- z",
            "[1]",
            "{a: 1}",
            "|",
            "*a",
            "line\nbreak",
        ]
    ),
    st.text(alphabet="ab :#-'\"[]{},\n", max_size=30),
    st.integers(),
    st.booleans(),
    st.none(),
)
_DATA = st.recursive(
    _VALUES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5), max_leaves=25
)


@settings(max_examples=int(__import__("os").environ.get("PODFIT_FUZZ_EXAMPLES", "300")), deadline=None)
@given(
    st.dictionaries(_KEYS, _DATA, min_size=1, max_size=6),
    st.sampled_from([2, 4]),
    st.sampled_from([12, 40, 200]),
    st.booleans(),
    st.sampled_from([None, False]),
    st.sampled_from([None, "'", '"']),
    st.lists(st.tuples(st.integers(0, 200), st.integers(0, 8), st.sampled_from(["# note", "", "#"])), max_size=4),
)
def test_lines_of_every_block_layout_match_the_slow_path(data, indent, width, indented, flow, style, comments):
    dumper = _IndentedSequences if indented else yaml.SafeDumper
    text = yaml.dump(
        data,
        Dumper=dumper,
        indent=indent,
        width=width,
        default_flow_style=flow,
        default_style=style,
        allow_unicode=True,
        sort_keys=False,
    )
    lines = text.split("\n")
    for at, col, comment in comments:  # comment and blank lines (inside a scalar they become its text)
        lines.insert(at % len(lines), " " * col + comment)
    assert_equivalent("\n".join(lines))


def test_outline_answers_for_the_generated_corpus():
    """The outline places every container of block-style manifests (no LibYAML graph needed)."""
    from gen import generate
    from podfit.yamlio import _Outline

    text = yaml.dump_all(generate(300, seed=3), sort_keys=False)
    placed = 0
    for doc in iter_documents(text, fast=True):
        if not doc.lines.plain:
            continue
        outline = doc.lines._outline()
        assert outline is not None
        for key in ("containers", "initContainers"):
            spec = doc.data.get("spec", {}).get("template", {}).get("spec", {})
            for i, _ in enumerate(spec.get(key) or []):
                path = ("spec", "template", "spec", key, i)
                assert outline.line(path) is not None, path
                placed += 1
    assert placed > 300
    assert _Outline.valid("a: 'open\nb: c'") is False
    assert _Outline.valid("a: [1,\n2]") is False
    assert _Outline.valid("a: 'closed' # c\nb: [1, {c: 'd'}]\n") is True


def test_flow_collection_as_implicit_key_is_refused_both_ways():
    """`{{ x }}` (an unrendered template) is a flow mapping keyed by a mapping: PyYAML refuses it, and
    the Rust parser, which made it a frozenset key, is not asked."""
    for text in ("replicas: {{ n }}\n", "metadata:\n  name: {{ name }}\n", "a: {[1, 2]}\n"):
        assert_equivalent(text)
        with pytest.raises(yaml.YAMLError):
            list(iter_documents(text, fast=True))
    assert_equivalent('a: "{{ x }}"\nb: [{c: 1}]\n')


@pytest.mark.parametrize(
    "text",
    [
        "%YAML 1.1\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
        "# made by a tool\n%YAML 1.2\n%TAG !e! tag:example.com,2000:\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
        # after a document's end marker (a directive needs one after a document)
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n...\n%YAML 1.1\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
    ],
)
def test_directives_go_with_the_document_they_precede(text):
    """A stream that starts with (or has) a %YAML or %TAG directive: the directive belongs to the
    document after the next ---; it was split off as a document of its own and failed as PF901."""
    docs = [d for d in iter_documents(text, fast=True) if d.data is not None]
    assert docs[-1].data["kind"] == "Pod"
    assert docs[-1].line == text.splitlines().index("kind: Pod")  # its apiVersion line, 1-based


@pytest.mark.parametrize("before", ["x", "ééé"])
def test_a_control_character_is_reported_at_its_line(before):
    """PyYAML's ReaderError has a position only (in characters, or UTF-8 bytes from LibYAML):
    podfit gives it the line and column of the character, counted from the start of the text."""
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: {}\n"
    text = cm.format("ü") + "---\n" + cm.format(before + "\x07")
    for fast in (False, True):
        with pytest.raises(yaml.reader.ReaderError) as got:
            list(iter_documents(text, fast=fast))
        mark = got.value.problem_mark  # type: ignore[attr-defined]
        assert (mark.line + 1, mark.column + 1) == (13, 6 + len(before))
