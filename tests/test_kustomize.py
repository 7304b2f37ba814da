"""Files a kustomization lists as resources are checked as `kustomize build` gives them: its
namespace, commonLabels / labels (selectors and pod templates where kustomize puts them) and
commonAnnotations, with the lines of the original file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml
from click.testing import CliRunner

from conftest import tool
from podfit.cli import main
from podfit.kustomize import Layer, apply, layers_for
from podfit.loader import load, read_inputs

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: legacy
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: api
          image: registry.example.com/api:2.1
"""

LIMITS = """\
apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
spec:
  limits:
    - type: Container
      defaultRequest: {cpu: 100m, memory: 128Mi}
      default: {cpu: 500m, memory: 256Mi}
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_base_is_checked_as_kustomize_builds_it(tmp_path, monkeypatch):
    """The Deployment's selector comes from commonLabels (no PF902), the LimitRange of the
    kustomization's namespace gives its container requests (no PF101/PF102/PF105), and findings
    keep the lines of the original file."""
    write(
        tmp_path,
        {
            "base/kustomization.yaml": "namespace: payments\ncommonLabels:\n  app: api\n"
            "resources:\n  - deployment.yaml\n  - limits.yaml\n",
            "base/deployment.yaml": DEPLOYMENT,
            "base/limits.yaml": LIMITS,
        },
    )
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["check", "base", "--format", "json", "--engine", "embedded"])
    report = json.loads(r.output)
    # the kustomization has nothing podfit does not apply: no "render first" either
    assert report["findings"] == []
    assert r.exit_code == 0
    # without the kustomization, the same files are what they say: no selector, and no LimitRange
    # in the Deployment's namespace (BestEffort)
    (tmp_path / "base/kustomization.yaml").unlink()
    report = json.loads(CliRunner().invoke(main, ["check", "base", "--format", "json", "--engine", "embedded"]).output)
    assert sorted({(f["rule"], f["line"]) for f in report["findings"]}) == [("PF105", 1), ("PF902", 6)]


def test_objects_get_namespace_labels_selectors_and_templates_like_kustomize(tmp_path):
    """The objects podfit checks, field for field, as `kubectl kustomize base` (kustomize v5.5)
    renders them: a nested kustomization's layer first, then its parent's; includeSelectors and
    includeTemplates labels; cluster-scoped kinds keep no namespace; existing selectors of Jobs,
    PodDisruptionBudgets and NetworkPolicies grow, missing ones are not created."""
    write(
        tmp_path,
        {
            "base/kustomization.yaml": "namespace: shop\ncommonLabels: {app: web}\nlabels:\n"
            "  - pairs: {team: a}\n  - pairs: {tier: t}\n    includeTemplates: true\n"
            "  - pairs: {sel: s}\n    includeSelectors: true\ncommonAnnotations: {note: x}\n"
            "resources: [all.yaml, worker]\n",
            "base/all.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"
            "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers: [{name: c, image: busybox}]\n"
            "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pdb}\nspec: {minAvailable: 1}\n"
            "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
            "base/worker/kustomization.yaml": "namespace: inner\ncommonLabels: {inner: '1'}\nresources: [w.yaml]\n",
            "base/worker/w.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: worker\n  namespace: x\n"
            "spec:\n  selector:\n    matchLabels: {x: y}\n  template:\n    metadata:\n      labels: {x: y}\n"
            "    spec:\n      containers: [{name: c, image: busybox}]\n",
        },
    )
    objects = {
        o.ref.name: (json.loads(json.dumps(dict(o.raw))), o.location.line)
        for o in load(read_inputs([str(tmp_path / "base")])).objects
    }
    meta_labels = {"app": "web", "sel": "s", "team": "a", "tier": "t"}
    selector = {"app": "web", "sel": "s"}
    template = {"app": "web", "sel": "s", "tier": "t"}
    ann = {"note": "x"}
    assert objects["web"] == (
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "shop", "labels": meta_labels, "annotations": ann},
            "spec": {"ports": [{"port": 80}], "selector": selector},
        },
        1,
    )
    assert objects["j"][0]["metadata"]["namespace"] == "shop"
    assert objects["j"][0]["spec"] == {
        "template": {
            "metadata": {"labels": template, "annotations": ann},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
        }
    }
    assert objects["pdb"][0]["spec"] == {"minAvailable": 1}
    assert objects["shop"][0]["metadata"] == {"name": "shop", "labels": meta_labels, "annotations": ann}
    worker, line = objects["worker"]
    assert line == 1
    assert worker["metadata"] == {
        "name": "worker",
        "namespace": "shop",
        "labels": {"inner": "1", **meta_labels},
        "annotations": ann,
    }
    assert worker["spec"]["selector"] == {"matchLabels": {"x": "y", "inner": "1", **selector}}
    assert worker["spec"]["template"]["metadata"] == {
        "labels": {"x": "y", "inner": "1", **template},
        "annotations": ann,
    }


def test_an_overlay_does_not_change_its_bases_files():
    """`../base` is one of several builds of a base: only resources inside the kustomization's
    own directory take its layer."""
    layers = layers_for(
        {
            "app/base/kustomization.yaml": {"resources": ["deploy.yaml"]},
            "app/overlays/prod/kustomization.yaml": {"namespace": "prod", "resources": ["../../base", "hpa.yaml"]},
        },
        ["app/base/deploy.yaml", "app/overlays/prod/hpa.yaml", "app/other.yaml"],
    )
    assert layers == {"app/overlays/prod/hpa.yaml": (Layer("app/overlays/prod/kustomization.yaml", namespace="prod"),)}


def test_apply_leaves_the_original_untouched():
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    out = apply(doc, (Layer("k", namespace="n", labels=(("a", "b"),)),))
    assert out["metadata"] == {"name": "c", "namespace": "n", "labels": {"a": "b"}}
    assert doc == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


WEBHOOK = """\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: defaults}
webhooks:
  - name: defaults.example.com
    clientConfig: {service: {name: webhook, path: /mutate}}
    admissionReviewVersions: [v1]
    sideEffects: None
  - name: pinned.example.com
    clientConfig: {service: {name: webhook, namespace: elsewhere, path: /pinned}}
    admissionReviewVersions: [v1]
    sideEffects: None
"""


def test_a_webhooks_service_reference_gets_the_namespace_as_kustomize_gives_it(tmp_path, monkeypatch):
    """A kubebuilder-style config/webhook: the webhook names its Service without a namespace and the
    kustomization gives both one. The reference podfit checks is kustomize's (no PF902 for the
    missing namespace); one that names its namespace keeps it."""
    write(
        tmp_path,
        {
            "webhook/kustomization.yaml": "namespace: system\nresources: [manifests.yaml, service.yaml]\n",
            "webhook/manifests.yaml": WEBHOOK,
            "webhook/service.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: webhook}\n"
            "spec: {ports: [{port: 443}]}\n",
        },
    )
    (hook,) = [o for o in load(read_inputs([str(tmp_path / "webhook")])).objects if o.kind.endswith("Configuration")]
    services = [h["clientConfig"]["service"] for h in hook.raw["webhooks"]]
    assert services == [
        {"name": "webhook", "path": "/mutate", "namespace": "system"},
        {"name": "webhook", "namespace": "elsewhere", "path": "/pinned"},
    ]
    monkeypatch.chdir(tmp_path)
    report = json.loads(CliRunner().invoke(main, ["check", "webhook", "--format", "json", "--rule", "PF902"]).output)
    assert report["findings"] == []
    kustomize = tool("kustomize")
    if kustomize is not None:  # the first reference is what kustomize build gives it
        built = list(
            yaml.safe_load_all(
                subprocess.run([kustomize, "build", "webhook"], capture_output=True, text=True, check=True).stdout
            )
        )
        (real,) = [d for d in built if d["kind"] == "MutatingWebhookConfiguration"]
        assert real["webhooks"][0]["clientConfig"]["service"] == services[0]


LABEL_TRANSFORMER = """\
apiVersion: builtin
kind: LabelTransformer
metadata:
  name: labels
labels:
  app.kubernetes.io/part-of: flux
fieldSpecs:
  - path: metadata/labels
    create: true
"""

PLUGIN_CONFIG = """\
apiVersion: someteam.example.com/v1
kind: ValueAnnotator
metadata:
  name: notImportantHere
value: important-data
"""


def test_transformer_generator_and_validator_configs_are_not_objects(tmp_path):
    """flux2's manifests/install: the files a kustomization lists under transformers:,
    generators: or validators: (directly, or as the resources of a kustomization directory listed
    there) are settings kustomize reads, and a document of apiVersion builtin is one wherever it
    stands: none is a cluster object (no PF910 for two LabelTransformers of one name)."""
    write(
        tmp_path,
        {
            "install/kustomization.yaml": "namespace: flux-system\nresources:\n  - namespace.yaml\n"
            "transformers:\n  - labels.yaml\n  - plugins\ngenerators:\n  - annotator.yaml\n",
            "install/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n",
            "install/labels.yaml": LABEL_TRANSFORMER,
            "install/annotator.yaml": PLUGIN_CONFIG,
            "install/plugins/kustomization.yaml": "resources:\n  - annotate.yaml\n",
            "install/plugins/annotate.yaml": PLUGIN_CONFIG.replace("ValueAnnotator", "Annotator"),
            "other/labels.yaml": LABEL_TRANSFORMER,
        },
    )
    loaded = load(read_inputs([str(tmp_path)]))
    assert [(o.kind, o.ref.name) for o in loaded.objects] == [("Namespace", "flux-system")]
    reasons = {Path(f.path).relative_to(tmp_path).as_posix(): f.reason for f in loaded.files}
    config = "a Kustomize transformer, generator or validator config of"
    assert [k for k, v in sorted(reasons.items()) if v.startswith(config)] == [
        "install/annotator.yaml",
        "install/labels.yaml",
        "install/plugins/annotate.yaml",
    ]
    report = json.loads(
        CliRunner().invoke(main, ["check", str(tmp_path), "--format", "json", "--engine", "embedded"]).output
    )
    assert {f["rule"] for f in report["findings"]} == {"PF908"}  # the kustomization: not built without kustomize
