"""PF902 schema-invalid: fixtures, version selection, the fast path against jsonschema, kubeconform
agreement, and proof that neither path touches the network."""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from conftest import tool
from podfit.cli import main
from podfit.loader import LoaderLimits, discover, load, read_inputs
from podfit.schemas_k8s import (
    SchemaError,
    SchemaSet,
    Violation,
    build_schema_tree,
    kubernetes_schema_root,
    merge_required,
    pick_version,
    run_kubeconform,
    schema_file_name,
    shipped_versions,
    without_null_fields,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "testdata" / "PF902"
# testdata/ for kubeconform, less the input rules' fixtures: files that are not YAML or not manifests
# by design (kubeconform reports them as errors, podfit as PF901/PF905/PF907-PF909 findings)
INPUT_FIXTURES = {"PF901", "PF905", "PF907", "PF908", "PF909"}

pytestmark = pytest.mark.skipif(kubernetes_schema_root() is None, reason="no Kubernetes schemas (schemas/kubernetes)")


def check_json(args):
    r = CliRunner().invoke(main, ["check", *args, "--rule", "PF902", "--format", "json"], catch_exceptions=False)
    return r.exit_code, json.loads(r.output)


def load_objects(paths):
    return load(read_inputs(discover([str(p) for p in paths]), LoaderLimits())).objects


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.yaml")), ids=lambda p: p.name)
def test_fixtures(path):
    code, report = check_json([str(path)])
    rules = {f["rule"] for f in report["findings"]}
    if path.name.startswith("fail_"):
        assert code == 1 and rules == {"PF902"}
        assert all(f["line"] > 1 for f in report["findings"])
    else:
        assert code == 0 and report["findings"] == []


def test_misspelt_requests_points_at_the_key():
    _, report = check_json([str(FIXTURES / "fail_misspelt_requests.yaml")])
    (f,) = report["findings"]
    text = (FIXTURES / "fail_misspelt_requests.yaml").read_text().splitlines()
    assert text[f["line"] - 1].strip().startswith("request:")
    assert "unknown field 'request'" in f["message"]
    assert f["details"]["path"][-1] == "request"


POD_RESOURCES = """\
apiVersion: v1
kind: Pod
metadata: {name: pod-level}
spec:
  resources:
    requests: {cpu: 500m}
  containers:
    - name: app
      image: app:1
"""


def test_kubernetes_version_is_selectable(tmp_path):
    """Pod-level resources (spec.resources) appeared in Kubernetes 1.32."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD_RESOURCES)
    versions = shipped_versions()
    assert versions[0] <= "1.31" and versions[-1] >= "1.32"
    results = {}
    for ver in (versions[0], "1.31", "1.32", versions[-1]):
        cfg = tmp_path / f"{ver}.podfit.yaml"
        cfg.write_text(f'thresholds:\n  PF902: {{kubernetes-version: "{ver}"}}\n')
        code, report = check_json([str(pod), "--config", str(cfg)])
        results[ver] = [f["message"] for f in report["findings"]]
    assert len(results[versions[0]]) == len(results["1.31"]) == 1 and "resources" in results[versions[0]][0]
    assert "Kubernetes 1.31" in results["1.31"][0]
    assert results["1.32"] == results[versions[-1]] == []
    # not strict: unknown fields pass, type errors still fail
    cfg = tmp_path / "lax.podfit.yaml"
    cfg.write_text(f'thresholds:\n  PF902: {{kubernetes-version: "{versions[0]}", strict: false}}\n')
    assert check_json([str(pod), "--config", str(cfg)])[1]["findings"] == []
    assert check_json([str(FIXTURES / "fail_wrong_types.yaml"), "--config", str(cfg)])[1]["findings"]


def test_shipped_versions_are_the_releases_podfit_targets():
    """One schema file per release of kubeversions.RELEASES, no other (scripts/vendor-k8s-schemas.py)."""
    from podfit.kubeversions import RELEASES

    assert shipped_versions() == [f"{a}.{b}" for a, b in RELEASES]


def test_pick_version():
    shipped = ["1.25", "1.26", "1.30"]
    assert pick_version(None, shipped) == "1.30"
    assert pick_version("1.29", shipped) == "1.26"
    assert pick_version("v1.30.4", shipped) == "1.30"
    assert pick_version("1.99", shipped) == "1.30"
    with pytest.raises(SchemaError, match="1.20"):
        pick_version("1.20", shipped)
    with pytest.raises(SchemaError):
        pick_version("latest-ish", shipped)


def test_unavailable_version_is_a_config_error_naming_the_key_and_the_known_versions(tmp_path):
    cfg = tmp_path / ".podfit.yaml"
    cfg.write_text('thresholds:\n  PF902: {kubernetes-version: "1.10"}\n')
    r = CliRunner().invoke(main, ["check", str(FIXTURES / "fail_wrong_types.yaml"), "--config", str(cfg)])
    assert r.exit_code == 2  # not a run with PF902 quietly skipped
    assert "thresholds.PF902.kubernetes-version: no schemas for Kubernetes 1.10" in r.output
    assert f"known versions are {shipped_versions()[0]} to {shipped_versions()[-1]}" in r.output


def test_schema_file_names_follow_kubeconform():
    assert schema_file_name("apps/v1", "Deployment") == "deployment-apps-v1.json"
    assert schema_file_name("v1", "Pod") == "pod-v1.json"
    assert schema_file_name("rbac.authorization.k8s.io/v1", "ClusterRole") == "clusterrole-rbac-v1.json"
    assert (
        schema_file_name("run.tanzu.vmware.com/v1alpha3", "TanzuKubernetesCluster")
        == "tanzukubernetescluster-run-v1alpha3.json"
    )


def test_crd_schemas_are_valid_2020_12_and_cover_examples():
    for p in sorted((ROOT / "schemas" / "crds").glob("*.json")):
        jsonschema.Draft202012Validator.check_schema(json.loads(p.read_text()))
    objs = load_objects([ROOT / "testdata" / "examples" / "tkg-cluster.yaml"])
    s = SchemaSet()
    assert [s.validate(o.raw) for o in objs] == [[]]
    assert s.is_podfit_schema("run.tanzu.vmware.com/v1alpha3", "TanzuKubernetesCluster")


# --------------------------------------------------------------- messages and lines, compared whole ---

EXPECTED = {
    "fail_misspelt_requests.yaml": [
        (
            18,
            "fails the apps/v1 Deployment schema (Kubernetes {v}): "
            "spec.template.spec.containers[0].resources.request: unknown field 'request'",
        ),
    ],
    "fail_tanzu_cluster.yaml": [
        (
            9,
            "fails the run.tanzu.vmware.com/v1alpha3 TanzuKubernetesCluster schema: "
            "spec.topology.nodePools[0]: 'name' is a required property",
        ),
        (
            9,
            "fails the run.tanzu.vmware.com/v1alpha3 TanzuKubernetesCluster schema: "
            'spec.topology.nodePools[0].replicas: "four" is not of type integer',
        ),
    ],
    "fail_wrong_types.yaml": [
        (6, 'fails the apps/v1 StatefulSet schema (Kubernetes {v}): spec.replicas: "3" is not of type integer or null'),
        (
            15,
            "fails the apps/v1 StatefulSet schema (Kubernetes {v}): "
            "spec.template.spec.containers[0]: 'name' is a required property",
        ),
    ],
    "fail_null_required.yaml": [
        (
            14,
            "fails the apps/v1 Deployment schema (Kubernetes {v}): "
            "spec.template.spec.containers[0]: 'name' is a required property ('name': null is the same as unset)",
        ),
        (
            18,
            "fails the apps/v1 Deployment schema (Kubernetes {v}): "
            "spec.template.spec.containers[0].resources.limit: unknown field 'limit'",
        ),
    ],
    "fail_kubelet_configuration.yaml": [
        (
            9,
            "fails the kubelet.config.k8s.io/v1beta1 KubeletConfiguration schema: "
            'cpuManagerPolicyOptions.full-pcpus-only: true is not of type string (quote it: "true")',
        ),
        (
            11,
            "fails the kubelet.config.k8s.io/v1beta1 KubeletConfiguration schema: "
            'featureGates.CPUManagerPolicyBetaOptions: "true" is not of type boolean',
        ),
        (
            12,
            "fails the kubelet.config.k8s.io/v1beta1 KubeletConfiguration schema: "
            "topologyManagerPolicys: unknown field 'topologyManagerPolicys'",
        ),
    ],
    "fail_partial_object.yaml": [
        (
            7,
            "fails the apps/v1 Deployment schema (Kubernetes {v}): spec: 'selector' and 'template' are required properties",
        ),
    ],
    "fail_negative_counts.yaml": [
        (
            7,
            "fails the API server's validation of apps/v1 Deployment: "
            "spec.replicas: invalid value -2: must be greater than or equal to 0",
        ),
        (
            23,
            "fails the apps/v1 StatefulSet schema (Kubernetes {v}): spec.replicas: 1.5 is not of type integer or null",
        ),
        (
            40,
            "fails the API server's validation of batch/v1 Job: "
            "spec.parallelism: invalid value -1: must be greater than or equal to 0",
        ),
        (
            41,
            "fails the API server's validation of batch/v1 Job: "
            "spec.completions: invalid value -3: must be greater than or equal to 0",
        ),
        (
            57,
            "fails the API server's validation of batch/v1 CronJob: "
            "spec.jobTemplate.spec.parallelism: invalid value -4: must be greater than or equal to 0",
        ),
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings_compared_whole(name):
    _, report = check_json([str(FIXTURES / name)])
    got = sorted((f["line"], f["message"]) for f in report["findings"])
    assert got == sorted((line, msg.format(v=shipped_versions()[-1])) for line, msg in EXPECTED[name])


ODD = """\
apiVersion: v1
kind: Pod
metadata:
  name: odd
  labels:
    1: one
    tier: {a: b}
spec:
  restartPolicy: [Always]
  containers:
    - name: app
      image: app:1
      ports: [{containerPort: http}]
      resources:
        requests: {cpu: true, memory: .nan}
---
apiVersion: v1
kind: pod
metadata: {name: lower}
"""


def test_messages_name_the_value_the_types_and_the_line(tmp_path):
    """A non-string key (kubectl sends it as a string), a union of types (Quantity), an enum (the
    kind's spelling), a number JSON cannot hold: each message says what is wrong, at the field's
    own line."""
    f = tmp_path / "odd.yaml"
    f.write_text(ODD)
    _, report = check_json([str(f)])
    got = {(x["line"], x["message"].split(": ", 1)[1]) for x in report["findings"]}
    assert got == {
        (7, 'metadata.labels.tier: {"a": "b"} is not of type string or null'),
        (9, 'spec.restartPolicy: ["Always"] is not of type string or null'),
        (13, 'spec.containers[0].ports[0].containerPort: "http" is not of type integer'),
        (15, "spec.containers[0].resources.requests.cpu: true is not of type string or number or null"),
        (15, "spec.containers[0].resources.requests.memory: NaN is not a number JSON can hold"),
        (18, 'kind: "pod" is not one of "Pod"'),
    }, got


def test_missing_required_properties_are_one_violation_per_path():
    """Required properties missing at one path are one violation naming them all, in the order the
    schema gives; other paths and other kinds of violation stay as they are."""
    a = Violation(("spec",), "spec: 'group' is a required property", missing=("group",))
    b = Violation(("spec",), "spec: 'names' is a required property", missing=("names",))
    c = Violation(("spec",), "spec: 'scope' is a required property", missing=("scope",))
    typed = Violation(("spec", "x"), "spec.x: 1 is not of type string")
    other = Violation(("spec", "versions", 0), "spec.versions[0]: 'name' is a required property", missing=("name",))
    assert merge_required([a, typed, b, other, c, b]) == [
        Violation(
            ("spec",), "spec: 'group', 'names' and 'scope' are required properties", missing=("group", "names", "scope")
        ),
        typed,
        other,
    ]
    assert merge_required([a]) == [a]
    assert merge_required([]) == []


CRD_PATCH = """\
{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "widgets.example.com"},
 "spec": {"conversion": {"strategy": "None"}}}
"""


def test_a_patch_body_is_one_finding(tmp_path):
    """A JSON patch body for a CRD (only spec.conversion) misses four required properties of spec:
    one finding on spec's line, not four."""
    f = tmp_path / "patch.json"
    f.write_text(CRD_PATCH)
    _, report = check_json([str(f)])
    assert [(x["line"], x["message"].split(": ", 1)[1], x["details"]["path"]) for x in report["findings"]] == [
        (3, "spec: 'group', 'names', 'scope' and 'versions' are required properties", ["spec"])
    ]


# ------------------------------------------------------------------------------ null fields ---

PDB_NULL = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  maxUnavailable: 1
  minAvailable: null
  selector: {matchLabels: {app: web}}
"""

SERVICE_NULL = """\
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
    - port: 80
      targetPort: null
"""

POD_NULL_NAME = """\
apiVersion: v1
kind: Pod
metadata: {name: p, labels: null}
spec:
  containers:
    - name: app
      image: app:1
    - image: sidecar:1
      name: null
      args: [a, null]
"""


@pytest.mark.parametrize("text", [PDB_NULL, SERVICE_NULL], ids=["pdb-minAvailable", "service-targetPort"])
def test_a_null_int_or_string_is_unset_and_passes(tmp_path, text):
    """IntOrString accepts null in both branches of its oneOf, so validating the null itself fails;
    the API server's decoder leaves the field unset, and the object is valid."""
    f = tmp_path / "obj.yaml"
    f.write_text(text)
    code, report = check_json([str(f)])
    assert code == 0 and report["findings"] == []


def test_a_null_required_field_is_missing_at_its_object(tmp_path):
    """A required field given as null is unset, so missing: one finding on the line of the object
    that lacks it (as for any missing property), saying it was given as null."""
    f = tmp_path / "pod.yaml"
    f.write_text(POD_NULL_NAME)
    code, report = check_json([str(f)])
    assert code == 1
    assert [(x["line"], x["message"].split(": ", 1)[1], x["details"]["path"]) for x in report["findings"]] == [
        (
            8,
            "spec.containers[1]: 'name' is a required property ('name': null is the same as unset)",
            ["spec", "containers", 1],
        )
    ]


def test_null_fields_in_messages_merged_and_unknown():
    """Nulls and absences at one place are one finding naming both; an unknown field given as null
    is still unknown (a strict decoder rejects it whatever its value), a known one is not."""
    s = SchemaSet()
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {7: None}},
        "spec": {"selector": None, "strategy": None, "replica": None},
    }
    assert [(v.path, v.message) for v in s.validate(doc)] == [
        (
            ("spec",),
            "spec: 'selector' and 'template' are required properties ('selector': null is the same as unset)",
        ),
        (("spec", "replica"), "spec.replica: unknown field 'replica'"),
    ]
    lax = SchemaSet(strict=False)
    assert [v.message for v in lax.validate(doc)] == [
        "spec: 'selector' and 'template' are required properties ('selector': null is the same as unset)"
    ]


def test_platform_profiles_are_validated_as_written():
    """podfit reads its Platform profile itself (no API server decodes it): a null there is a null."""
    doc = {"apiVersion": "podfit.io/v1alpha1", "kind": "Platform", "metadata": {"name": "p"}, "spec": {"runtime": None}}
    (v,) = SchemaSet().validate(doc)
    assert v.path == ("spec", "runtime") and "null is not one of" in v.message


def test_without_null_fields():
    doc = {"a": None, "b": {"c": None, "d": [None, {"e": None, "f": 1}, "g"]}, "h": 0, "i": "", "j": False}
    before = copy.deepcopy(doc)
    assert without_null_fields(doc) == {"b": {"d": [None, {"f": 1}, "g"]}, "h": 0, "i": "", "j": False}
    assert doc == before  # the input is left as it was
    clean = {"a": {"b": [1, {"c": "x"}]}, "n": [None]}
    assert without_null_fields(clean) is clean  # nothing to leave out: the same object
    assert without_null_fields(None) is None and without_null_fields([None]) == [None]


# --------------------------------------------------- the API server's rules beside the schema ---

COUNTS = [
    ("apps/v1", "Deployment", ("spec", "replicas")),
    ("apps/v1", "ReplicaSet", ("spec", "replicas")),
    ("apps/v1", "StatefulSet", ("spec", "replicas")),
    ("v1", "ReplicationController", ("spec", "replicas")),
    ("batch/v1", "Job", ("spec", "parallelism")),
    ("batch/v1", "Job", ("spec", "completions")),
    ("batch/v1", "CronJob", ("spec", "jobTemplate", "spec", "parallelism")),
    ("batch/v1", "CronJob", ("spec", "jobTemplate", "spec", "completions")),
]


def _with(doc, path, value):
    d = doc
    for k in path[:-1]:
        d = d.setdefault(k, {})
    d[path[-1]] = value
    return doc


@pytest.mark.parametrize("api,kind,path", COUNTS, ids=lambda x: ".".join(x) if isinstance(x, tuple) else x)
def test_negative_counts_are_rejected_as_the_api_server_does(api, kind, path):
    from podfit.schemas_k8s import api_server_violations

    base = {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}}
    (v,) = api_server_violations(_with(copy.deepcopy(base), path, -2))
    assert v.path == path and v.source == "api-server"
    assert v.message == f"{'.'.join(path)}: invalid value -2: must be greater than or equal to 0"
    assert api_server_violations(_with(copy.deepcopy(base), path, -0.5))  # negative, whatever its type
    for fine in (0, 3, "-2", True, None):  # strings, booleans, null: the schema's business
        assert api_server_violations(_with(copy.deepcopy(base), path, fine)) == []
    # the same field of another kind, or another version of the kind, is not this rule's
    assert api_server_violations(_with({"apiVersion": "apps/v1", "kind": "DaemonSet"}, path, -2)) == []
    assert api_server_violations(_with({"apiVersion": api + "beta1", "kind": kind}, path, -2)) == []


def test_negative_and_fractional_replicas_fail_pf902_at_their_line(tmp_path):
    f = tmp_path / "deploy.yaml"
    for value, check in (("-2", "api-server"), ("1.5", "schema"), ("'2'", "schema")):
        f.write_text(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {value}\n"
            "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
            "    spec:\n      containers: [{name: web, image: web:1}]\n"
        )
        code, report = check_json([str(f)])
        ((finding),) = report["findings"]
        assert code == 1 and finding["line"] == 5 and finding["details"]["check"] == check, finding
        assert finding["details"]["path"] == ["spec", "replicas"]


# ------------------------------------------- jsonschema-rs agrees with jsonschema on the same schemas ---


def _mutations(doc, rng, n):
    """Random small edits: a leaf's type changed, an unknown key added, a key removed."""
    paths = []

    def walk(x, path):
        if isinstance(x, dict):
            for k, v in x.items():
                paths.append(path + (k,))
                walk(v, path + (k,))
        elif isinstance(x, list):
            for i, v in enumerate(x):
                paths.append(path + (i,))
                walk(v, path + (i,))

    walk(doc, ())
    for _ in range(n):
        d = copy.deepcopy(doc)
        path = rng.choice(paths)
        parent = d
        for k in path[:-1]:
            parent = parent[k]
        op = rng.randrange(4)
        if op == 0:
            parent[path[-1]] = rng.choice(["x", 7, 1.5, True, None, [], {}])
        elif op == 1 and isinstance(parent, dict):
            parent[f"zz{rng.randrange(9)}"] = 1
        elif op == 2 and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent[path[-1]], dict):
            parent[path[-1]]["unexpected"] = "x"
        yield d


def _reference_validator(s, api, kind):
    """Python jsonschema over the same schema, its $refs resolved by the referencing library."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    schema = s.schema_for(api, kind)
    if s.is_podfit_schema(api, kind):
        return jsonschema.Draft202012Validator(schema)
    defs = s._dir.definitions()
    registry = Registry().with_resource("file:///api/_definitions.json", Resource.from_contents(defs, DRAFT202012))
    base = "file:///api/" + schema_file_name(api, kind)
    return jsonschema.Draft202012Validator({**schema, "$id": base}, registry=registry)


def test_jsonschema_rs_agrees_with_jsonschema():
    """On every schema-checked fixture and random edits of it: the same verdict, and errors at the
    same places (the paths jsonschema's leaf errors point at)."""
    objs = load_objects([ROOT / "testdata"])
    s = SchemaSet()
    rng = random.Random(902)
    compared = invalid = 0
    reference = {}
    for o in objs:
        api, kind = o.raw.get("apiVersion"), o.raw.get("kind")
        if not isinstance(api, str) or not isinstance(kind, str) or s.validator(api, kind) is None:
            continue
        if (api, kind) not in reference:
            reference[(api, kind)] = _reference_validator(s, api, kind)
        rs, ref = s.validator(api, kind), reference[(api, kind)]
        raw = json.loads(json.dumps(o.raw, default=str))
        for d in [raw, *_mutations(raw, rng, 25)]:
            a, b = rs.is_valid(d), ref.is_valid(d)
            assert a == b, (o.location, d)
            if not b:
                rs_paths = {tuple(e.instance_path) for e in rs.iter_errors(d)}
                ref_paths = {tuple(e.absolute_path) for e in ref.iter_errors(d)}
                assert rs_paths == ref_paths, (o.location, rs_paths, ref_paths)
            compared += 1
            invalid += not b
    assert compared > 2000 and invalid > 500  # both outcomes were exercised


def test_validation_is_offline_by_construction():
    """A reference outside the registry is refused, not fetched."""
    import jsonschema_rs

    with pytest.raises(jsonschema_rs.ValidationError, match="Retrieval is disabled"):
        jsonschema_rs.validator_for({"$ref": "https://example.invalid/schema.json"}, offline=True)


# ---------------------------------------------------------------------- kubeconform agreement ---


@pytest.fixture(scope="module")
def schema_tree(tmp_path_factory):
    out = tmp_path_factory.mktemp("schemas")
    counts = build_schema_tree(out, [shipped_versions()[-1], "1.31"])
    assert counts["podfit"] >= 7 and all(n > 100 for k, n in counts.items() if k != "podfit")
    return out


def test_standalone_schemas_have_no_refs(schema_tree):
    d = next(schema_tree.glob("v*-standalone-strict"))
    text = (d / "deployment-apps-v1.json").read_text()
    assert "$ref" not in text and '"additionalProperties":false' in text


def _inprocess_invalid(paths, version, strict=True):
    """Objects failing their schema (kubeconform checks schemas only, not the API server's rules)."""
    s = SchemaSet(version, strict)
    out = set()
    for o in load_objects(paths):
        v = s.validate(o.raw)
        if v and any(x.source == "schema" for x in v):
            out.add((Path(o.location.file).resolve(), o.kind, o.ref.name))
    return out


def _as_written_invalid(paths, version, strict=True):
    """Objects failing their schema as written, null fields kept as the value null."""
    s = SchemaSet(version, strict)
    out = set()
    for o in load_objects(paths):
        api, kind = o.raw.get("apiVersion"), o.raw.get("kind")
        v = s.validator(api, kind) if isinstance(api, str) and isinstance(kind, str) else None
        if v is not None and not v.is_valid(json.loads(json.dumps(o.raw, default=str))):
            out.add((Path(o.location.file).resolve(), o.kind, o.ref.name))
    return out


def _kubeconform_invalid(resources):
    return {(Path(r["filename"]).resolve(), r["kind"], r["name"]) for r in resources if r["status"] == "statusInvalid"}


def fixture_manifests() -> list[str]:
    """The YAML files under testdata/ that hold objects: podfit config files (.podfit.yaml, in the
    fixtures that are repositories) are left out, kubeconform would call them objects without a kind,
    and so are the regression corpus testdata/repos/ and the rendering fixtures testdata/render/,
    whose charts and kustomize inputs are not manifests on purpose."""
    skip = [ROOT / "testdata" / d for d in ("repos", "render", *INPUT_FIXTURES)]
    return sorted(
        str(p)
        for p in (ROOT / "testdata").rglob("*.y*ml")
        if p.name not in (".podfit.yaml", ".podfit.yml") and not any(d in p.parents for d in skip)
    )


@pytest.mark.tools
@pytest.mark.parametrize("strict", [True, False])
def test_kubeconform_and_inprocess_agree_on_testdata(schema_tree, strict):
    kc = tool("kubeconform")
    if kc is None:
        pytest.skip("kubeconform not built (make tools)")
    version = shipped_versions()[-1]
    resources = run_kubeconform(kc, fixture_manifests(), schema_tree, version, strict=strict)
    assert any(r["status"] == "statusValid" and r["kind"] == "TanzuKubernetesCluster" for r in resources)
    assert any(r["status"] == "statusValid" and r["kind"] == "Platform" for r in resources)
    manifests = [Path(p) for p in fixture_manifests()]
    ours = _inprocess_invalid(manifests, version, strict)
    theirs = _kubeconform_invalid(resources)
    # They differ on null fields only. kubeconform validates a null as the value null, and the
    # schemas' IntOrString and Quantity accept null in both branches of their oneOf, so exactly one
    # cannot match; podfit validates what the API server does, the object with its null fields
    # unset (SchemaSet.validate). kubeconform's verdicts are the schema's on the objects as written.
    assert theirs == _as_written_invalid(manifests, version, strict)
    assert ours <= theirs
    assert {(p.name, k) for p, k, _ in theirs - ours} == {
        ("pass_null_fields.yaml", "PodDisruptionBudget"),
        ("pass_null_fields.yaml", "Service"),
        ("pass_null_fields.yaml", "Deployment"),
    }
    names = {(p.name, k) for p, k, _ in ours}
    assert ("fail_wrong_types.yaml", "StatefulSet") in names and (
        "fail_tanzu_cluster.yaml",
        "TanzuKubernetesCluster",
    ) in names
    assert (("fail_misspelt_requests.yaml", "Deployment") in names) is strict


@pytest.mark.tools
def test_kubeconform_version_selection_agrees(schema_tree, tmp_path):
    kc = tool("kubeconform")
    if kc is None:
        pytest.skip("kubeconform not built (make tools)")
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD_RESOURCES)
    for version, invalid in (("1.31", True), (shipped_versions()[-1], False)):
        res = run_kubeconform(kc, [str(pod)], schema_tree, version)
        assert bool(_kubeconform_invalid(res)) is invalid
        assert bool(_inprocess_invalid([pod], version)) is invalid


# --------------------------------------------------------------------------------- no network ---


@pytest.mark.tools
def test_kubeconform_runs_without_network(schema_tree):
    """In a new network namespace (no interfaces but a down loopback) kubeconform still validates
    everything from the local schemas, quickly: a single remote lookup would fail or hang."""
    kc = tool("kubeconform")
    if kc is None:
        pytest.skip("kubeconform not built (make tools)")
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here")
    # run_kubeconform's timeout is what catches a hanging remote lookup
    resources = run_kubeconform(
        kc, fixture_manifests(), schema_tree, shipped_versions()[-1], timeout=60, wrapper=["unshare", "-n"]
    )
    # (a document of comments only, before a file's first ---, is listed with no kind and no status)
    assert len(resources) > 20 and all(
        r["status"] in ("statusValid", "statusInvalid", "statusSkipped") or (r["status"], r["kind"]) == ("", "")
        for r in resources
    )
    assert _kubeconform_invalid(resources)


def _can_unshare():
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.tools
def test_the_network_namespace_really_has_no_network(tmp_path):
    """The guard above has teeth: in the same namespace, kubeconform's default (remote) schema
    location fails with a download error instead of validating."""
    kc = tool("kubeconform")
    if kc is None or not _can_unshare():
        pytest.skip("kubeconform not built, or no network namespaces here")
    p = subprocess.run(
        ["unshare", "-n", kc, "-output", "json", str(FIXTURES / "pass_workloads.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    resources = json.loads(p.stdout)["resources"]
    assert p.returncode != 0 and resources
    assert all(r["status"] == "statusError" and "downloading schema" in r["msg"] for r in resources)


def test_missing_local_tree_is_an_error_not_a_silent_pass(tmp_path):
    with pytest.raises(SchemaError, match="no schemas at"):
        run_kubeconform(
            "kubeconform", [str(FIXTURES / "pass_workloads.yaml")], tmp_path / "nothing", shipped_versions()[-1]
        )


NO_NET = r"""
import socket, sys, time
def refuse(*a, **k):
    print("network access attempted", file=sys.stderr)
    raise OSError("network access attempted")
class NoSocket(socket.socket):
    def __init__(self, *a, **k):
        refuse()
socket.socket = NoSocket
socket.create_connection = refuse
socket.getaddrinfo = refuse
from podfit.cli import main
t0 = time.monotonic()
try:
    main(["check", *sys.argv[1:], "--rule", "PF902", "--format", "json"])
except SystemExit as e:
    print(f"exit={e.code} seconds={time.monotonic() - t0:.2f}", file=sys.stderr)
"""


def test_inprocess_validation_runs_with_sockets_disabled():
    """A fresh interpreter whose socket module refuses every use: PF902 still finds every fixture's error."""
    p = subprocess.run(
        [sys.executable, "-c", NO_NET, *fixture_manifests()],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT / "analyzer"), "PATH": "/usr/bin:/bin"},
    )
    assert "exit=1" in p.stderr, p.stderr
    report = json.loads(p.stdout)
    files = {Path(f["file"]).name for f in report["findings"]}
    assert files == {p.name for p in FIXTURES.glob("fail_*.yaml")}
    assert "network access attempted" not in p.stdout + p.stderr


def test_every_kind_reaches_only_the_shared_definitions():
    """Each shipped kind's validator is built over the definitions its schema reaches: every $ref
    of the kind and of those definitions resolves inside the kept ones."""
    from podfit.schemas_k8s import _kind_schema, _refs, reachable_definitions

    s = SchemaSet()
    defs = s._dir.definitions()
    kinds = 0
    for name in s._dir.names():
        raw = s._dir.kind(name)
        gvk = (raw.get("x-kubernetes-group-version-kind") or [{}])[0]
        if not gvk.get("kind"):
            continue
        api = f"{gvk['group']}/{gvk['version']}" if gvk.get("group") else gvk["version"]
        schema = _kind_schema(s._dir, api, gvk["kind"])
        if schema is None:
            continue
        doc = reachable_definitions(defs, schema)
        assert doc is not None, name
        kept = doc["$defs"]
        for ref in _refs(schema, []) + _refs(kept, []):
            assert ref.split("#/$defs/", 1)[1] in kept, (name, ref)
        kinds += 1
    assert kinds > 100


def test_definitions_cache_gives_the_same_violations(tmp_path, monkeypatch):
    """The first SchemaSet writes each kind's definitions to the cache, the next reads them: the
    same violations either way."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": "two",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "x", "resources": {"request": {"cpu": "1"}}}]},
            },
        },
    }
    first = SchemaSet().validate(doc)
    (cache,) = (tmp_path / "podfit" / "schemas").glob("*.json")
    second = SchemaSet().validate(doc)
    assert first == second and len(first) >= 2
    # a cache file of another shape (not JSON, nested past the recursion limit, no definitions or
    # not those the kind names) is computed afresh, not an internal error
    for damage in ("{not json", "[" * 100_000 + "]" * 100_000, "[]", '{"$defs": 5}', '{"$defs": {}}'):
        cache.write_text(damage)
        assert SchemaSet().validate(doc) == first, damage[:20]


# ------------------------------------------------------------- the kubelet's configuration file ---

KUBELET_SCHEMA = ROOT / "schemas" / "crds" / "kubeletconfiguration-kubelet-v1beta1.json"
GENERATOR = ROOT / "scripts" / "kubelet-schema"


@pytest.mark.skipif(shutil.which("go") is None, reason="needs Go (the generator reads the kubelet's Go type)")
def test_the_kubelet_schema_is_its_generators_output_and_takes_every_field():
    """The committed schema is what `make kubelet-schema` writes from the pinned k8s.io/kubelet, and
    it accepts a configuration with every field set as the kubelet's Go type encodes it (durations,
    quantities and the logging options' own encodings included)."""
    version = subprocess.run(
        ["go", "list", "-m", "-f", "{{.Version}}", "k8s.io/kubelet"],
        cwd=GENERATOR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    written = subprocess.run(["go", "run", ".", version], cwd=GENERATOR, capture_output=True, text=True, check=True)
    assert written.stdout == KUBELET_SCHEMA.read_text()
    example = subprocess.run(["go", "run", ".", "example"], cwd=GENERATOR, capture_output=True, text=True, check=True)
    doc = json.loads(example.stdout)
    assert len(doc) > 100  # every field of the type, set
    errors = list(jsonschema.Draft202012Validator(json.loads(KUBELET_SCHEMA.read_text())).iter_errors(doc))
    assert [e.message for e in errors] == []
    assert SchemaSet().validate(doc) == []


@pytest.mark.parametrize(
    "body",
    [
        'cpuManagerPolicyOptions: {full-pcpus-only: {x: 1}, 7: "true"}\n',
        "featureGates: {A: [1], 3: true}\n",
    ],
)
def test_an_integer_key_beside_a_violation_is_a_finding(tmp_path, body):
    """The validator may pass over an integer key in is_valid and meet it in iter_errors: both
    run on the JSON form then, and the violation is reported."""
    f = tmp_path / "kubelet.yaml"
    f.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" + body)
    code, report = check_json([str(f)])
    assert code == 1 and [x["rule"] for x in report["findings"]] == ["PF902"]
    assert report["findings"][0]["line"] == 3


def test_spread_and_autoscaler_counts_out_of_range_are_rejected_as_the_api_server_does():
    """maxSkew and minDomains of a pod template's topologySpreadConstraints are positive int32s, a
    HorizontalPodAutoscaler's maxReplicas too, and minReplicas at most maxReplicas: packing left
    such a constraint out and PF606 packed maxReplicas 2^63, silently."""
    from podfit.schemas_k8s import api_server_violations

    def deployment(**spread):
        spread = {"topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule", **spread}
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "spec": {"template": {"spec": {"topologySpreadConstraints": [spread]}}},
        }

    where = "spec.template.spec.topologySpreadConstraints[0]"
    for key in ("maxSkew", "minDomains"):
        for bad, why in ((0, "must be greater than zero"), (-1, "must be greater than zero"), (2**31, "int32")):
            (v,) = api_server_violations(deployment(**{"maxSkew": 1, key: bad}))
            assert v.path == ("spec", "template", "spec", "topologySpreadConstraints", 0, key)
            assert v.message.startswith(f"{where}.{key}: invalid value {bad}: ") and why in v.message
        for fine in (1, 5, 2**31 - 1, "2", 1.5, None, True):  # the rest is the schema's business
            assert api_server_violations(deployment(**{"maxSkew": 1, key: fine})) == [], (key, fine)
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"topologySpreadConstraints": [{"maxSkew": 0}]}}
    assert [v.path for v in api_server_violations(pod)] == [("spec", "topologySpreadConstraints", 0, "maxSkew")]

    def hpa(**spec):
        return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": spec}

    for bad in (0, -3, 2**31, 2**63):
        (v,) = api_server_violations(hpa(minReplicas=1, maxReplicas=bad))
        assert v.path == ("spec", "maxReplicas") and v.message.startswith(f"spec.maxReplicas: invalid value {bad}")
    (v,) = api_server_violations(hpa(minReplicas=5, maxReplicas=3))
    assert v.message == "spec.minReplicas: invalid value 5: must be less than or equal to maxReplicas (3)"
    assert api_server_violations(hpa(minReplicas=3, maxReplicas=3)) == []
    assert api_server_violations(hpa(maxReplicas=10)) == []


def test_port_numbers_out_of_range_are_rejected_as_the_api_server_does():
    """containerPort, and hostPort when set (0 is unset), are 1-65535: PF601 compared host ports
    of -1 or 65536 between DaemonSets as if they could be bound."""
    from podfit.schemas_k8s import api_server_violations

    def daemonset(container_port, host_port):
        port = {"containerPort": container_port, "hostPort": host_port}
        spec = {"initContainers": [{"name": "i", "ports": [port]}], "containers": [{"name": "c", "ports": [port]}]}
        return {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"spec": spec}}}

    for bad in (-1, 65536, 2**40):
        found = api_server_violations(daemonset(80, bad))
        assert [v.path for v in found] == [
            ("spec", "template", "spec", group, 0, "ports", 0, "hostPort") for group in ("initContainers", "containers")
        ]
        assert found[0].message == (
            f"spec.template.spec.initContainers[0].ports[0].hostPort: invalid value {bad}: "
            "must be between 1 and 65535, inclusive"
        )
        assert len(api_server_violations(daemonset(bad, 80))) == 2
    for fine in (0, 1, 65535, "80", None):
        assert api_server_violations(daemonset(80, fine)) == [], fine
    assert len(api_server_violations(daemonset(0, 0))) == 2  # containerPort is required: never 0


def test_quota_limits_that_are_no_quantity_are_rejected_as_the_api_server_does():
    """A ResourceQuota's spec.hard value that is not a quantity, or negative: PF112 skipped it
    (its comment said PF902 reports it; the schema states no pattern, so nothing did)."""
    from podfit.schemas_k8s import api_server_violations

    hard = {"cpu": "abc", "memory": "-1Gi", "limits.memory": -3, "pods": "1e30", "requests.cpu": "2", "x": None}
    found = api_server_violations({"apiVersion": "v1", "kind": "ResourceQuota", "spec": {"hard": hard}})
    assert [(v.path, v.message.split(": ", 2)[-1]) for v in found] == [
        (("spec", "hard", "cpu"), "expected a number with an optional suffix such as m, k, Mi, Gi or e3"),
        (("spec", "hard", "memory"), "resource quantities cannot be negative"),
        (("spec", "hard", "limits.memory"), "resource quantities cannot be negative"),
    ]
    assert api_server_violations({"apiVersion": "v1", "kind": "LimitRange", "spec": {"hard": hard}}) == []


def test_a_cluster_manifest_of_more_pools_than_a_cluster_holds():
    """A TanzuKubernetesCluster of 6,000 one-node pools: PF902 (at most 5,000, Kubernetes' nodes per
    cluster) and only the first 5,000 pools are packed. A manifest of 20,000 such pools kept
    `podfit check` past 120 s (packing grows with the square of the pools); now about 10 s."""
    from podfit.clusters import node_pools_from_objects
    from podfit.model import K8sObject, Location, ObjectRef
    from podfit.platform import MAX_NODES

    pools = [{"name": f"w{i}", "replicas": 1, "vmClass": "best-effort-small"} for i in range(MAX_NODES + 1000)]
    doc = {
        "apiVersion": "run.tanzu.vmware.com/v1alpha3",
        "kind": "TanzuKubernetesCluster",
        "metadata": {"name": "c", "namespace": "t"},
        "spec": {"topology": {"controlPlane": {"replicas": 1, "vmClass": "best-effort-small"}, "nodePools": pools}},
    }
    found = SchemaSet().validate(doc)
    assert found is not None and [v.path for v in found] == [("spec", "topology", "nodePools")]
    obj = K8sObject(ObjectRef(doc["apiVersion"], doc["kind"], "t", "c"), Location("c.yaml", 1), doc)
    got = node_pools_from_objects([obj])
    assert len(got) == MAX_NODES and got[-1].name.endswith(f"w{MAX_NODES - 2}")  # the control plane first
    doc["spec"]["topology"]["nodePools"] = pools[:MAX_NODES]
    assert SchemaSet().validate(doc) == []


KUBERNETES_VALIDATE = ROOT / "build" / "kubernetes-validate-1.37.0" / "kubernetes_validate" / "kubernetes-json-schema"


@pytest.mark.skipif(not KUBERNETES_VALIDATE.is_dir(), reason="make k8s-schemas installs kubernetes-validate there")
def test_shipped_schemas_are_kubernetes_validates_regenerated(tmp_path):
    """scripts/vendor-k8s-schemas.py writes the committed files again, byte for byte, from the
    pinned kubernetes-validate (it also checks the strict derivation against its strict copies)."""
    import subprocess
    import sys

    out = tmp_path / "kubernetes"
    args = [sys.executable, str(ROOT / "scripts/vendor-k8s-schemas.py"), "--from", str(KUBERNETES_VALIDATE)]
    subprocess.run([*args, "--out", str(out)], check=True, capture_output=True, timeout=300)
    shipped = ROOT / "schemas" / "kubernetes"
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in shipped.glob("v*.json.gz"))
    for p in out.iterdir():
        assert p.read_bytes() == (shipped / p.name).read_bytes(), p.name
