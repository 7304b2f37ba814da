"""Fuzzing: generated and mutated manifests never crash or hang podfit, and every file is accounted for.

Budget: a fixed number of examples per property (no shrinking deadline surprises in CI).
"""

from __future__ import annotations

import json
import os

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podfit.cli import main

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


@settings(
    max_examples=int(os.environ.get("PODFIT_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
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
