"""What `kustomize build` does to a base's own files, applied to files checked raw.

A directory with a kustomization.yaml is a unit: the files its ``resources:`` list are built with
its ``namespace:``, ``commonLabels:``, ``labels:`` and ``commonAnnotations:``. Checked file by file,
a base Deployment whose selector comes from ``commonLabels`` has none (the API server would reject
it), and a LimitRange of the kustomization's namespace would not reach its workloads. podfit gives
each object of such a file what ``kustomize build`` of that directory gives it:

- ``namespace``: metadata.namespace of every namespaced object (cluster-scoped kinds keep none);
- ``commonLabels`` and ``labels`` with ``includeSelectors: true``: metadata.labels, the selectors
  and the pod template labels (kustomize's commonLabels field specs);
- ``labels`` with ``includeTemplates: true``: metadata.labels and the pod template labels;
- other ``labels``: metadata.labels only;
- ``commonAnnotations``: metadata.annotations and the pod template annotations;
- ``namespace`` again: a webhook configuration's Service references that name no namespace.

A kustomization listing a subdirectory (a nested kustomization, ``worker/``) applies its own
transformations after the nested one's, as kustomize does. Only resources inside the
kustomization's own directory count: an overlay's ``../../base`` is one of several alternative
builds of that base, so an overlay's namespace or labels are not given to the base's files (the
overlay itself is reported as "render first").

Everything here is pure: :func:`layers_for` reads the kustomizations' parsed content, and
:func:`apply` returns a new document (the original's lines are unchanged: fields kustomize adds
report the line of the mapping they are added to).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "KUSTOMIZE_VERSION",
    "on_this_machine",
    "Layer",
    "layer_of",
    "layers_for",
    "apply",
    "applies_whole",
    "plugin_configs",
    "PLUGIN_KEYS",
    "local",
    "CLUSTER_SCOPED_KINDS",
    "KUSTOMIZATION_NAMES",
]

# The file names kustomize reads as a directory's kustomization.
# The kustomize `make tools` builds (scripts/install-tools.sh), named where a kustomization needs it.
KUSTOMIZE_VERSION = "v5.8.1"

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# Kinds kustomize's namespace transformer leaves alone (cluster-scoped built-in kinds).
CLUSTER_SCOPED_KINDS = frozenset(
    {
        "APIService",
        "CSIDriver",
        "CSINode",
        "CertificateSigningRequest",
        "ClusterIssuer",
        "ClusterRole",
        "ClusterRoleBinding",
        "ComponentStatus",
        "CustomResourceDefinition",
        "FlowSchema",
        "IngressClass",
        "MutatingWebhookConfiguration",
        "Namespace",
        "Node",
        "PersistentVolume",
        "PodSecurityPolicy",
        "PriorityClass",
        "PriorityLevelConfiguration",
        "RuntimeClass",
        "StorageClass",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
    }
)

# (kinds, path) where commonLabels / includeSelectors labels go besides metadata.labels, and
# whether kustomize creates the field when it is missing (False: only an existing selector grows).
_TEMPLATE_LABELS: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (
        frozenset({"Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "ReplicationController"}),
        ("spec", "template", "metadata", "labels"),
    ),
    (frozenset({"CronJob"}), ("spec", "jobTemplate", "metadata", "labels")),
    (frozenset({"CronJob"}), ("spec", "jobTemplate", "spec", "template", "metadata", "labels")),
)
_SELECTORS: tuple[tuple[frozenset[str], tuple[str, ...], bool], ...] = (
    (frozenset({"Service", "ReplicationController"}), ("spec", "selector"), True),
    (frozenset({"Deployment", "ReplicaSet", "DaemonSet", "StatefulSet"}), ("spec", "selector", "matchLabels"), True),
    (frozenset({"Job"}), ("spec", "selector", "matchLabels"), False),
    (frozenset({"CronJob"}), ("spec", "jobTemplate", "spec", "selector", "matchLabels"), False),
    (frozenset({"PodDisruptionBudget"}), ("spec", "selector", "matchLabels"), False),
    (frozenset({"NetworkPolicy"}), ("spec", "podSelector", "matchLabels"), False),
)
_TEMPLATE_ANNOTATIONS: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (
        frozenset({"Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "ReplicationController"}),
        ("spec", "template", "metadata", "annotations"),
    ),
    (frozenset({"CronJob"}), ("spec", "jobTemplate", "metadata", "annotations")),
    (frozenset({"CronJob"}), ("spec", "jobTemplate", "spec", "template", "metadata", "annotations")),
)


@dataclass(frozen=True)
class Layer:
    """The transformations of one kustomization, as they reach the objects of its resources."""

    kustomization: str  # its path
    namespace: str | None = None
    selector_labels: tuple[tuple[str, str], ...] = ()  # metadata, selectors and templates
    template_labels: tuple[tuple[str, str], ...] = ()  # metadata and templates
    labels: tuple[tuple[str, str], ...] = ()  # metadata only
    annotations: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.namespace or self.selector_labels or self.template_labels or self.labels or self.annotations)


def _pairs(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        return ()
    return tuple((str(k), "" if v is None else str(v)) for k, v in value.items())


def layer_of(path: str, doc: Any) -> Layer:
    """The layer of the kustomization at ``path`` whose parsed content is ``doc``."""
    if not isinstance(doc, dict):
        return Layer(path)
    ns = doc.get("namespace")
    selector = list(_pairs(doc.get("commonLabels")))
    template: list[tuple[str, str]] = []
    plain: list[tuple[str, str]] = []
    for entry in doc.get("labels") or ():
        if not isinstance(entry, dict):
            continue
        pairs = _pairs(entry.get("pairs"))
        if entry.get("includeSelectors") is True:
            selector += pairs
        elif entry.get("includeTemplates") is True:
            template += pairs
        else:
            plain += pairs
    return Layer(
        kustomization=path,
        namespace=ns if isinstance(ns, str) and ns else None,
        selector_labels=tuple(selector),
        template_labels=tuple(template),
        labels=tuple(plain),
        annotations=_pairs(doc.get("commonAnnotations")),
    )


# The fields of a kustomization podfit gives its resources itself (layer_of, apply); any other
# (patches, generators, images, replicas, name prefixes, components, …) only kustomize build gives.
_APPLIED_FIELDS = frozenset(
    {"apiVersion", "kind", "metadata", "namespace", "commonLabels", "labels", "commonAnnotations", "resources"}
)


def applies_whole(doc: Mapping[str, Any]) -> bool:
    """Whether podfit gives a kustomization's resources everything its build does: no field but
    those :func:`layer_of` reads, in the forms it reads (a string namespace, mappings of labels and
    annotations, label entries of pairs and the include flags, not ``fields:`` specs)."""
    labels = doc.get("labels") or []
    return (
        set(doc) <= _APPLIED_FIELDS
        and isinstance(doc.get("namespace") or "", str)
        and all(isinstance(doc.get(k) or {}, dict) for k in ("commonLabels", "commonAnnotations"))
        and isinstance(labels, list)
        and all(isinstance(e, dict) and set(e) <= {"pairs", "includeSelectors", "includeTemplates"} for e in labels)
    )


def patch_files(doc: Mapping[str, Any]) -> list[str]:
    """The files a kustomization names as patches, as paths relative to its directory:
    patchesStrategicMerge entries, ``path`` of patches and patchesJson6902 entries, and patches
    entries that are a bare file name (kustomize 5 refuses such a kustomization, and podfit reports
    that, but the file is a patch all the same, never a manifest)."""

    def entries(key: str) -> list[Any]:
        value = doc.get(key)
        return value if isinstance(value, list) else []  # a string or mapping here lists no file

    out = [p for key in ("patchesStrategicMerge", "patches") for p in entries(key) if isinstance(p, str)]
    for key in ("patches", "patchesJson6902"):
        out += [p["path"] for p in entries(key) if isinstance(p, dict) and isinstance(p.get("path"), str)]
    return out


def on_this_machine(entry: Any) -> bool:
    """A resource entry naming a path on this machine (inside or above the kustomization's
    directory), not a URL or a repository."""
    return (
        isinstance(entry, str)
        and bool(entry)
        and "://" not in entry
        and not entry.startswith(("/", "git@", "github.com/"))
    )


def local(entry: Any) -> bool:
    """A resource entry naming a path inside the kustomization's directory (not ``../``, not a URL)."""
    if not isinstance(entry, str) or not entry or "://" in entry or entry.startswith(("/", "git@", "github.com/")):
        return False
    norm = posixpath.normpath(entry)
    return norm != ".." and not norm.startswith("../")


def layers_for(kustomizations: Mapping[str, Any], files: Sequence[str]) -> dict[str, tuple[Layer, ...]]:
    """For each of ``files`` listed (directly, or through nested kustomizations of subdirectories)
    as a resource of a kustomization in ``kustomizations`` (path → parsed content): the layers that
    apply to its objects, innermost first. Files not listed, or whose layers change nothing, are
    left out. Paths are compared normalised, with ``/`` separators."""
    own: dict[str, tuple[str, Layer]] = {}  # normalised file → the kustomization listing it
    parent: dict[str, str] = {}  # kustomization's directory → the kustomization listing that directory
    layers: dict[str, Layer] = {}
    dirs = {posixpath.dirname(_norm(k)): k for k in kustomizations}
    for k, doc in sorted(kustomizations.items()):
        layers[k] = layer_of(k, doc)
        base = posixpath.dirname(_norm(k))
        entries = doc.get("resources") if isinstance(doc, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            if not local(entry):
                continue
            target = _norm(posixpath.join(base, entry))
            if target in dirs and target != base:
                parent.setdefault(target, k)
            else:
                own.setdefault(target, (k, layers[k]))
    out: dict[str, tuple[Layer, ...]] = {}
    for f in files:
        hit = own.get(_norm(f))
        if hit is None:
            continue
        chain = [hit[1]]
        seen = {hit[0]}
        d = posixpath.dirname(_norm(hit[0]))
        while (up := parent.get(d)) is not None and up not in seen:
            seen.add(up)
            chain.append(layers[up])
            d = posixpath.dirname(_norm(up))
        chain = [layer for layer in chain if not layer.empty]
        if chain:
            out[f] = tuple(chain)
    return out


# A kustomization's fields that list plugin configurations: files of transformer, generator and
# validator settings (`apiVersion: builtin`, `kind: LabelTransformer`, or a plugin's own kind) that
# kustomize reads to build, never cluster objects.
PLUGIN_KEYS = ("transformers", "generators", "validators")


def plugin_configs(kustomizations: Mapping[str, Any]) -> dict[str, str]:
    """Normalised path of each file a kustomization in ``kustomizations`` (path → parsed content)
    lists under ``transformers:``, ``generators:`` or ``validators:`` → that kustomization. An
    entry naming a directory with a kustomization of its own stands for that kustomization's
    ``resources:`` (kustomize loads them as the plugin configs); inline configs (an entry holding
    YAML) and remote entries name no file."""
    dirs = {posixpath.dirname(_norm(k)): k for k in kustomizations}
    out: dict[str, str] = {}
    for k, doc in sorted(kustomizations.items()):
        base = posixpath.dirname(_norm(k))
        for key in PLUGIN_KEYS:
            entries = doc.get(key) if isinstance(doc, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                if not isinstance(entry, str) or "\n" in entry or "://" in entry:
                    continue
                target = _norm(posixpath.join(base, entry))
                inner = dirs.get(target)
                if inner is None:
                    out.setdefault(target, k)
                    continue
                resources = kustomizations[inner].get("resources") if isinstance(kustomizations[inner], dict) else None
                for r in resources if isinstance(resources, list) else ():
                    if isinstance(r, str) and "://" not in r:
                        out.setdefault(_norm(posixpath.join(target, r)), k)
    return out


def _norm(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _merge(doc: dict[str, Any], path: tuple[str, ...], pairs: Sequence[tuple[str, str]], create: bool) -> None:
    cur: Any = doc
    for key in path[:-1]:
        nxt = cur.get(key)
        if not isinstance(nxt, dict):
            if not create or nxt is not None:
                return
            nxt = cur[key] = {}
        cur = nxt
    last = cur.get(path[-1])
    if last is None:
        if not create:
            return
        last = cur[path[-1]] = {}
    if isinstance(last, dict):
        last.update(pairs)


_WEBHOOK_KINDS = frozenset({"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"})


def _webhook_services(doc: dict[str, Any], namespace: str) -> None:
    """A webhook's Service reference without a namespace gets the kustomization's: kustomize moves
    the reference with the Service when the Service is among the build's resources, as it is in the
    layouts that name one without a namespace (kubebuilder's config/webhook beside its service).
    Whether the Service is among them is not checked here (a layer does not read its resources), so
    a reference to a Service outside the build, which kustomize leaves without a namespace and the
    API server rejects, passes too."""
    hooks = doc.get("webhooks")
    for hook in hooks if isinstance(hooks, list) else ():
        config = hook.get("clientConfig") if isinstance(hook, dict) else None
        service = config.get("service") if isinstance(config, dict) else None
        if isinstance(service, dict) and not service.get("namespace"):
            service["namespace"] = namespace


def apply(doc: Mapping[str, Any], layers: Sequence[Layer]) -> dict[str, Any]:
    """A copy of the object ``doc`` as ``kustomize build`` gives it, ``layers`` innermost first."""
    out: dict[str, Any] = _plain(doc)
    kind = out.get("kind")
    for layer in layers:
        if layer.namespace and kind not in CLUSTER_SCOPED_KINDS:
            _merge(out, ("metadata",), (("namespace", layer.namespace),), True)
        if layer.namespace and kind in _WEBHOOK_KINDS:
            _webhook_services(out, layer.namespace)
        meta_labels = layer.selector_labels + layer.template_labels + layer.labels
        if meta_labels:
            _merge(out, ("metadata", "labels"), meta_labels, True)
        templates = layer.selector_labels + layer.template_labels
        if templates:
            for kinds, path in _TEMPLATE_LABELS:
                if kind in kinds:
                    _merge(out, path, templates, True)
            spec = out.get("spec")
            claims = spec.get("volumeClaimTemplates") if kind == "StatefulSet" and isinstance(spec, dict) else None
            for claim in claims if isinstance(claims, list) else ():
                if isinstance(claim, dict):
                    _merge(claim, ("metadata", "labels"), templates, True)
        if layer.selector_labels:
            for kinds, path, create in _SELECTORS:
                if kind in kinds:
                    _merge(out, path, layer.selector_labels, create)
        if layer.annotations:
            _merge(out, ("metadata", "annotations"), layer.annotations, True)
            for kinds, path in _TEMPLATE_ANNOTATIONS:
                if kind in kinds:
                    _merge(out, path, layer.annotations, True)
    return out
