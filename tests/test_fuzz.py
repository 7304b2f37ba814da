"""Fuzzing: generated and mutated manifests, configs, platform profiles and numeric options never
crash or hang podfit: every run exits 0, 1 or 2 without a traceback or "internal error", the same
input gives the same output twice, and every file is accounted for.

Budget: a fixed number of examples per property, derandomized (the same examples on every run), so
CI time is stable (about 30 s here). ``make fuzz`` sets PODFIT_FUZZ_EXAMPLES for a long, randomized
run (docs/benchmarks.md has the last one's count and findings).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podfit.cli import main
from podfit.config import ConfigError, parse_config_text
from podfit.loader import InputFile, LoaderLimits, parse_file
from podfit.platform import PlatformError, parse_platform

ROOT = Path(__file__).resolve().parents[1]
EKS_PLATFORM = ROOT / "testdata" / "platform-import" / "eks" / "platform.yaml"
LONG = "PODFIT_FUZZ_EXAMPLES" in os.environ  # make fuzz: many examples, a new random seed each run


def budget(ci: int) -> int:
    """Examples for one property: ``ci`` in the test suite; PODFIT_FUZZ_EXAMPLES scales every
    property alike in a long run (the value is the budget of the 60-example property)."""
    if not LONG:
        return ci
    return max(1, int(os.environ["PODFIT_FUZZ_EXAMPLES"]) * ci // 60)


def fuzz_settings(ci: int) -> settings:
    return settings(
        max_examples=budget(ci),
        deadline=None,
        derandomize=not LONG,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def invoke(args: list[str]):
    """One in-process run: its exit code and output (stdout and stderr), checked for crashes."""
    r = CliRunner().invoke(main, args)
    out = r.output
    assert r.exit_code in (0, 1, 2), (args, r.exit_code, out)
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception))
    assert "Traceback" not in out and "internal error" not in out, (args, out)
    return r.exit_code, out


def invoke_twice(args: list[str]) -> tuple[int, str]:
    """:func:`invoke`, twice: the same exit code and output both times."""
    first = invoke(args)
    assert invoke(args) == first, args
    return first


KINDS = [
    "Pod",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "ReplicationController",
    "Job",
    "CronJob",
    "Service",
    "LimitRange",
    "KubeletConfiguration",
    "TanzuKubernetesCluster",
    "List",
    "ConfigMap",
    "Weird",
]
QUANTITIES = ["100m", "1.5", "2", "1e3", "2Gi", "0.5Gi", "-1", "1e30", ".nan", "abc", "", "1.5cores", "7Ei", "8Ei"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.sampled_from(QUANTITIES),
)
junk = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
quantity = st.one_of(
    st.sampled_from(QUANTITIES), st.integers(-5, 10**12), st.floats(allow_nan=True, allow_infinity=True), junk
)
resources = st.fixed_dictionaries(
    {},
    optional={
        "requests": st.dictionaries(
            st.sampled_from(["cpu", "memory", "ephemeral-storage", "gpu"]), quantity, max_size=3
        ),
        "limits": st.dictionaries(st.sampled_from(["cpu", "memory", "ephemeral-storage"]), quantity, max_size=3),
    },
)
container = st.fixed_dictionaries(
    {"name": st.one_of(st.text(max_size=6), st.integers(), st.none())},
    optional={"resources": st.one_of(resources, junk), "restartPolicy": st.sampled_from(["Always", "Never", 3])},
)
pod_spec = st.fixed_dictionaries(
    {"containers": st.one_of(st.lists(container, max_size=3), junk)},
    optional={
        "initContainers": st.lists(container, max_size=2),
        "overhead": resources.map(lambda r: r.get("requests", {})),
        "affinity": junk,
        "topologySpreadConstraints": st.one_of(
            junk, st.just([{"topologyKey": "kubernetes.io/hostname", "maxSkew": 1}])
        ),
        "nodeSelector": junk,
    },
)


@st.composite
def manifest(draw):
    kind = draw(st.sampled_from(KINDS))
    doc = {
        "apiVersion": draw(st.sampled_from(["v1", "apps/v1", "batch/v1", "run.tanzu.vmware.com/v1alpha3", 7])),
        "kind": kind,
        "metadata": draw(
            st.one_of(
                st.fixed_dictionaries(
                    {
                        "name": st.one_of(st.text(max_size=6), st.integers()),
                        "annotations": st.dictionaries(
                            st.sampled_from(["ignore.podfit.io/PF101", "podfit.io/peak-cpu", "podfit.io/threads", "x"]),
                            st.one_of(st.text(max_size=6), st.sampled_from(["2", "a=1", "0", "-1"])),
                            max_size=2,
                        ),
                    }
                ),
                junk,
            )
        ),
    }
    spec = draw(pod_spec)
    if kind == "Pod":
        doc["spec"] = spec
    elif kind == "CronJob":
        doc["spec"] = {
            "jobTemplate": {"spec": {"template": {"spec": spec}, "parallelism": draw(st.integers(-1, 10**9))}}
        }
    elif kind == "List":
        doc["items"] = draw(st.lists(junk, max_size=2))
    elif kind == "TanzuKubernetesCluster":
        doc["spec"] = {
            "topology": {
                "nodePools": [
                    {
                        "name": "w",
                        "vmClass": draw(st.sampled_from(["best-effort-small", "guaranteed-8xlarge", "nope", 1])),
                        "replicas": draw(st.integers(-1, 10**6)),
                    }
                ]
            }
        }
    else:
        doc["spec"] = {"replicas": draw(st.one_of(st.integers(-1, 10**9), junk)), "template": {"spec": spec}}
    return doc


def _mutate(text: str, data) -> bytes:
    raw = text.encode()
    how = data.draw(st.sampled_from(["none", "truncate", "flip", "insert", "dup-line"]))
    if how == "truncate" and raw:
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    elif how == "flip" and raw:
        i = data.draw(st.integers(0, len(raw) - 1))
        raw = raw[:i] + bytes([data.draw(st.integers(0, 255))]) + raw[i + 1 :]
    elif how == "insert":
        i = data.draw(st.integers(0, len(raw)))
        raw = (
            raw[:i]
            + data.draw(
                st.sampled_from(
                    [b"&a ", b"*a", b"<<: ", b"!!python/object ", b"\x00", b"\xff", b"[", b"{", b"---\n", b"\t"]
                )
            )
            + raw[i:]
        )
    elif how == "dup-line":
        lines = raw.split(b"\n")
        i = data.draw(st.integers(0, max(len(lines) - 1, 0)))
        lines.insert(i, lines[i] if lines else b"")
        raw = b"\n".join(lines)
    return raw


@fuzz_settings(60)
@given(st.lists(st.lists(manifest(), min_size=0, max_size=3), min_size=1, max_size=3), st.data())
def test_generated_and_mutated_manifests_never_crash(tmp_path_factory, files, data):
    d = tmp_path_factory.mktemp("fuzz")
    for i, docs in enumerate(files):
        text = yaml.safe_dump_all(docs, sort_keys=False) if docs else ""
        (d / f"m{i}.yaml").write_bytes(_mutate(text, data))
    r = CliRunner().invoke(
        main, ["check", str(d), "--engine", "embedded", "--format", "json", "--fail-on", "never", "--allow-empty"]
    )
    assert r.exit_code == 0, r.output  # never 2: hostile input is a finding, not a podfit failure
    report = json.loads(r.output)
    assert report["summary"]["files"] == len(files)
    assert {f["path"] for f in report["files"]} == {str(d / f"m{i}.yaml") for i in range(len(files))}
    assert all(f["line"] >= 0 for f in report["findings"])


# ------------------------------------------------------------------------------ the loader ---

# Fragments that once broke podfit (issue 32) or sit at a limit: deep nesting, numbers past Python's
# int-from-text limit, scalar merge keys, Lists in Lists, long names.
HOSTILE = st.sampled_from(
    [
        "[" * 1200 + "]" * 1200,
        '{"a":' * 1200 + "1" + "}" * 1200,
        "1" * 4400,
        "'" + "1" * 4400 + "'",
        "9223372036854775808",
        "2147483648",
        "-2147483649",
        "1e400",
        ".nan",
        '<<: "notamap"',
        "<<: [1, 2]",
        "a" * 300 + "/" + "v" * 300,
        "{apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: Pod}]}]}",
        "!!binary aGk=",
        "&a [*a]",
    ]
)


@st.composite
def hostile_text(draw) -> str:
    """A manifest whose values and lines are swapped for hostile fragments."""
    docs = draw(st.lists(manifest(), min_size=1, max_size=2))
    text = yaml.safe_dump_all(docs, sort_keys=False)
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        key, sep, _ = lines[i].partition(": ")
        frag = draw(HOSTILE)
        lines[i] = f"{key}: {frag}" if sep else f"{lines[i]}{frag}"
    return "\n".join(lines)


@fuzz_settings(300)
@given(st.one_of(hostile_text(), st.binary(max_size=300).map(lambda b: b.decode("latin-1"))), st.booleans())
def test_loader_reports_every_input(text, as_json):
    """The loader alone (pure, fast): any text is objects and findings, never an exception."""
    f = InputFile("x.json" if as_json else "x.yaml", text.encode("utf-8", "surrogatepass"))
    first = parse_file(f, LoaderLimits())
    assert first.record.status in ("parsed", "skipped", "failed")
    assert all(x.location.line >= 0 for x in first.findings)
    assert first.record.status != "failed" or any(x.rule in ("PF901", "PF907") for x in first.findings)
    again = parse_file(f, LoaderLimits())
    assert (again.record, [x.message for x in again.findings]) == (first.record, [x.message for x in first.findings])


@fuzz_settings(40)
@given(hostile_text())
def test_check_of_hostile_manifests_is_findings_and_the_same_twice(tmp_path_factory, text):
    d = tmp_path_factory.mktemp("hostile")
    (d / "m.yaml").write_text(text)
    code, out = invoke_twice(
        ["check", str(d), "--engine", "embedded", "--format", "json", "--fail-on", "never", "--allow-empty"]
    )
    assert code == 0, out


# ---------------------------------------------------------------------------- the config ---

CONFIG_KEYS = ["disable", "enable", "severity", "thresholds", "ignore", "fail-on", "limits", "clusters", "nope"]
RULE_REFS = st.sampled_from(["PF101", "PF902", "PF104", "cpu-request-missing", "PF999", "", 3])
OPTION_VALUES = st.one_of(
    scalars,
    st.sampled_from([1.5, -1, 0, 2**63, 10**30, math.inf, -math.inf, math.nan, "1.2", "abc", "9.99", "1.30", "10s"]),
)
config_values = {
    "disable": st.lists(RULE_REFS, max_size=3) | junk,
    "enable": st.lists(RULE_REFS, max_size=3) | junk,
    "severity": st.dictionaries(RULE_REFS.map(str), st.sampled_from(["error", "info", "loud", 1]), max_size=2),
    "thresholds": st.dictionaries(
        st.sampled_from(["PF902", "PF906", "PF104", "PF202", "PF601", "PF203"]),
        st.dictionaries(
            st.sampled_from(["kubernetes-version", "strict", "tolerance-percent", "budget", "ratio-percent", "x"]),
            OPTION_VALUES,
            max_size=2,
        )
        | junk,
        max_size=2,
    ),
    "ignore": st.lists(st.text(max_size=5), max_size=2) | junk,
    "fail-on": st.sampled_from(["error", "warning", "never", "loud", 1]),
    "limits": st.dictionaries(
        st.sampled_from(["max-file-bytes", "max-document-bytes", "max-yaml-nodes", "max-depth", "x"]),
        OPTION_VALUES,
        max_size=2,
    ),
    "clusters": st.dictionaries(st.text(max_size=4), st.text(max_size=4) | junk, max_size=2),
    "nope": junk,
}
config_doc = st.lists(st.sampled_from(CONFIG_KEYS), unique=True, max_size=4).flatmap(
    lambda keys: st.fixed_dictionaries({k: config_values[k] for k in keys})
)


@fuzz_settings(250)
@given(config_doc, st.booleans())
def test_config_validation_is_a_config_or_a_config_error(doc, as_toml):
    if as_toml:
        text = _toml(doc)
        source = "pyproject.toml"
    else:
        text = yaml.safe_dump(doc, sort_keys=False)
        source = ".podfit.yaml"
    try:
        parse_config_text(text, source)
    except ConfigError as e:
        assert str(e).startswith(source), str(e)


def _toml(doc) -> str:
    """[tool.podfit] holding the mapping's scalars and lists of scalars (what TOML can write
    simply), with TOML's nan and inf."""

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return "nan" if v != v else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        if isinstance(v, int):
            return str(v)
        if isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(str(v))

    lines = ["[tool.podfit]"]
    tables = []
    for k, v in doc.items():
        if isinstance(v, dict):
            tables.append(f"[tool.podfit.{json.dumps(k)}]")
            tables += [f"{json.dumps(str(kk))} = {value(vv)}" for kk, vv in v.items() if not isinstance(vv, dict)]
        else:
            lines.append(f"{json.dumps(k)} = {value(v)}")
    return "\n".join(lines + tables) + "\n"


@fuzz_settings(30)
@given(config_doc)
def test_check_with_any_config_exits_0_1_or_2_the_same_twice(tmp_path_factory, doc):
    d = tmp_path_factory.mktemp("config")
    (d / ".podfit.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    (d / "m.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: a}]\n"
    )
    invoke_twice(["check", str(d / "m.yaml"), "--config", str(d / ".podfit.yaml"), "--engine", "embedded"])


# ------------------------------------------------------------------------- the platform ---

PLATFORM = yaml.safe_load(EKS_PLATFORM.read_text())
PLATFORM_VALUES = st.one_of(
    OPTION_VALUES, junk, st.sampled_from([0, 1, 10**9, 2**31, -5, "250m", "1e30", "7Ei", "100Ti", "static"])
)


def _paths(node, at=()):
    """Every path in a document, to a leaf or a branch."""
    yield at
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, at + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, at + (i,))


PLATFORM_PATHS = [p for p in _paths(PLATFORM) if p]


def _replaced(doc, path, value):
    if not path:
        return value
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    copy[path[0]] = _replaced(doc[path[0]], path[1:], value)
    return copy


@st.composite
def platform_doc(draw):
    doc = PLATFORM
    for n in range(draw(st.integers(1, 3))):
        # the first from the profile's paths, the next from what the replacements left
        paths = PLATFORM_PATHS if n == 0 else [p for p in _paths(doc) if p]
        if not paths:
            break
        doc = _replaced(doc, draw(st.sampled_from(paths)), draw(PLATFORM_VALUES))
    return doc


@fuzz_settings(300)
@given(platform_doc())
def test_platform_validation_is_a_platform_or_a_platform_error(doc):
    try:
        parse_platform(yaml.safe_dump(doc, sort_keys=False), "p.yaml")
    except PlatformError as e:
        assert "p.yaml" in str(e)


@fuzz_settings(40)
@given(platform_doc(), st.sampled_from(["check", "pack", "vsphere"]))
def test_commands_with_any_platform_exit_0_1_or_2_the_same_twice(tmp_path_factory, doc, command):
    d = tmp_path_factory.mktemp("platform")
    (d / "platform.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    (d / "m.yaml").write_text(_DEPLOYMENT)
    platform = ["--platform", str(d / "platform.yaml")]
    args = {
        "check": ["check", str(d / "m.yaml"), *platform, "--engine", "embedded"],
        "pack": ["pack", str(d / "m.yaml"), *platform, "--time-budget", "0"],
        "vsphere": ["vsphere", "capacity", str(d / "m.yaml"), *platform, "--time-budget", "1s"],
    }[command]
    invoke_twice(args)


# ---------------------------------------------------------------- numeric CLI options ---

_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 3
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
        - name: app
          image: app:1
          resources: {requests: {cpu: 500m, memory: 256Mi}, limits: {cpu: "1", memory: 256Mi}}
"""

# Numbers as a user might type them, at and past every edge: nan, infinities, signs, exponents,
# int64 and int32 bounds, Python's 4,300-digit limit, units of durations and quantities.
NUMBER_TEXT = st.one_of(
    st.sampled_from(
        [
            "nan",
            "NaN",
            "-nan",
            "inf",
            "-inf",
            "Infinity",
            "0",
            "-0",
            "-1",
            "1",
            "2",
            "0.5",
            "1e20",
            "1e-400",
            "1e400",
            "9223372036854775808",
            "2147483648",
            "4294967296",
            "9" * 4400,
            "",
            " ",
            "abc",
            "0x10",
            "1_000",
            "10s",
            "500ms",
            "2m",
            "100us",
            "1.5",
            "250m",
            "1Gi",
            "7Ei",
            "100%",
            "-5%",
            "1e3",
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.tuples(st.integers(0, 10**6), st.sampled_from(["", "s", "ms", "us", "m", "%", "Mi", "Gi", "m"])).map(
        lambda t: f"{t[0]}{t[1]}"
    ),
)

# Every numeric option of every command, with the other arguments that make a quick run. Options
# whose valid range is slow to simulate at its top (throttle's seconds, CPUs and threads) take the
# invalid and small values only: the property is about the edges, not about the simulator's cost.
_THROTTLE = ["throttle", "--cpus", "2", "--limit", "1", "--seconds", "0.05", "--threads", "4", "--format", "json"]
NUMERIC_OPTIONS = {
    ("throttle", "--cpus"): _THROTTLE,
    ("throttle", "--threads"): _THROTTLE,
    ("throttle", "--seconds"): _THROTTLE,
    ("throttle", "--seed"): _THROTTLE,
    ("throttle", "--load"): _THROTTLE,
    ("throttle", "--timeline"): [*_THROTTLE[:-2], "--format", "text"],
    ("throttle", "--period"): _THROTTLE,
    ("throttle", "--burst-work"): _THROTTLE,
    ("throttle", "--cfs-burst"): _THROTTLE,
    ("throttle", "--slice"): _THROTTLE,
    ("throttle", "--limit"): _THROTTLE,
    ("throttle", "--demand"): _THROTTLE,
    ("pack", "--max-pods"): ["pack", "{m}", "--pool", "best-effort-large=2", "--time-budget", "0"],
    ("pack", "--headroom"): ["pack", "{m}", "--pool", "best-effort-large=2", "--time-budget", "0"],
    ("pack", "--overhead-cpu"): ["pack", "{m}", "--pool", "best-effort-large=2", "--time-budget", "0"],
    ("pack", "--overhead-memory"): ["pack", "{m}", "--pool", "best-effort-large=2", "--time-budget", "0"],
    ("pack", "--time-budget"): ["pack", "{m}", "--pool", "best-effort-large=2"],
    ("pack", "--pool"): ["pack", "{m}", "--time-budget", "0"],
    ("vsphere capacity", "--pool-nodes"): [
        "vsphere",
        "capacity",
        "{m}",
        "--add-pool",
        "best-effort-large",
        "--time-budget",
        "1s",
    ],
    ("vsphere capacity", "--time-budget"): ["vsphere", "capacity", "{m}"],
    # (an address where nothing listens: the options are checked before any connection, and a
    # valid set fails at once to connect, exit 2)
    ("usage export", "--end"): ["usage", "export", "--prometheus", "http://127.0.0.1:1"],
    ("usage export", "--window"): ["usage", "export", "--prometheus", "http://127.0.0.1:1"],
    ("usage export", "--step"): ["usage", "export", "--prometheus", "http://127.0.0.1:1"],
    ("usage export", "--timeout"): ["usage", "export", "--prometheus", "http://127.0.0.1:1"],
    ("usage export", "--max-series"): ["usage", "export", "--prometheus", "http://127.0.0.1:1"],
    ("usage export", "--max-bytes"): ["usage", "export", "--prometheus", "http://127.0.0.1:1"],
    ("fix", "--default-cpu"): ["fix", "{m}"],
    ("fix", "--default-memory"): ["fix", "{m}"],
    ("fix", "--limit-headroom"): ["fix", "{m}"],
}
# valid values that take long to simulate: each stands for a slow run, not for a crash
_SLOW = {"--seconds": 1.0, "--cpus": 64, "--threads": 64, "--load": 1000, "--timeline": 1000}


def _slow(option: str, text: str) -> bool:
    top = _SLOW.get(option)
    if top is None:
        return False
    try:
        return float(text) > top
    except ValueError:
        return False


@fuzz_settings(400)
@given(st.sampled_from(sorted(NUMERIC_OPTIONS)), NUMBER_TEXT)
def test_numeric_options_are_a_run_or_a_usage_error_naming_the_option(tmp_path_factory, key, text):
    _, option = key
    if _slow(option, text):
        return
    d = tmp_path_factory.mktemp("option")
    (d / "m.yaml").write_text(_DEPLOYMENT)
    base = [a.replace("{m}", str(d / "m.yaml")) for a in NUMERIC_OPTIONS[key]]
    value = f"best-effort-large={text}" if option == "--pool" else text
    if option in base:
        i = base.index(option)
        base = base[:i] + base[i + 2 :]
    code, out = invoke_twice([*base, option, value])
    if code == 2 and "Usage:" in out:  # click's usage error: it names the option
        assert option in out or re.search(r"Invalid value for '?" + re.escape(option), out), out
    if code == 2:  # one clear line: at most the value as typed (click echoes it), no more
        assert len(out) < 1000 + len(value), out
