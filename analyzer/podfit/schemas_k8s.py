"""Offline schema validation of manifests (rule PF902): Kubernetes, podfit's CRDs, the Platform.

Where the schemas come from
  * Kubernetes: the JSON Schemas of the releases podfit targets (``kubeversions.RELEASES``), one
    file per release under ``schemas/kubernetes/`` (``v1.37.json.gz``: the shared definitions and
    every kind's schema, descriptions left out), written by ``scripts/vendor-k8s-schemas.py`` from
    the ``kubernetes-validate`` package's plain schemas. The strict schemas are derived when read
    (:func:`strict_schema`: what kubernetes-validate's strict copies add). A kind's ``$ref``s point
    at a shared ``/api/_definitions.json``, which jsonschema-rs resolves from a registry holding
    that one document (``offline=True``: nothing is ever fetched).
  * podfit's CRD schemas under ``schemas/crds/`` (TanzuKubernetesCluster, VirtualMachineClass),
    named as kubeconform names schemas: ``<kind>-<group prefix>-<version>.json``.
  * the Platform profile schema ``schemas/platform.schema.json`` (kind Platform, podfit.io).

Validation is jsonschema-rs (:class:`SchemaSet`, used by ``podfit check``), plus the few rules the
API server enforces that the OpenAPI schemas do not state (:func:`api_server_violations`). The
``kubeconform`` binary validates against the same schemas written standalone by
``scripts/build-schemas.py`` (:func:`build_schema_tree`, :func:`run_kubeconform`); a test shows the
two agree on ``testdata/`` but for null fields. The in-process check validates what the API server
does, the object with its null fields unset (:func:`without_null_fields`); kubeconform validates a
null as the value null, which the schemas' IntOrString and Quantity cannot take (both branches of
their ``oneOf`` accept it). Neither reads anything but local files. Kinds without a schema are not
validated.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeGuard

from .cachedir import cache_dir, read_trusted, write_private
from .paths import schemas_dir

__all__ = [
    "SchemaError",
    "kubernetes_schema_root",
    "release_file",
    "Release",
    "strict_schema",
    "shipped_versions",
    "parse_version",
    "pick_version",
    "schema_file_name",
    "standalone",
    "SchemaSet",
    "Violation",
    "without_null_fields",
    "api_server_violations",
    "Removal",
    "REMOVED_APIS",
    "Deprecation",
    "deprecated_api",
    "removed_api",
    "build_schema_tree",
    "kubeconform_locations",
    "run_kubeconform",
]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
PLATFORM_API = ("podfit.io/v1alpha1", "Platform")
# The base URI given to each Kubernetes kind's schema, and where its "$ref":
# "/api/_definitions.json#/$defs/..." then lands: the URI the registry holds the definitions under.
_BASE = "file:///api/"
_DEFS_URI = _BASE + "_definitions.json"
_MAX_CACHE_BYTES = 64 * 2**20  # a cached definitions file read back (a kind reaches some 250 kB)
# names that may become part of a schema file's name
_API_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*(/[A-Za-z0-9.-]+)?")
_KIND = re.compile(r"[A-Za-z0-9]+")


class SchemaError(Exception):
    """The schemas needed for a validation are not available."""


# ------------------------------------------------------------------------------- locations ---


def kubernetes_schema_root() -> Path | None:
    """The directory of the per-release schema files (``schemas/kubernetes``; the environment
    variable PODFIT_K8S_SCHEMAS names another), or None when it does not exist."""
    override = os.environ.get("PODFIT_K8S_SCHEMAS")
    root = Path(override) if override else schemas_dir() / "kubernetes"
    return root if root.is_dir() else None


_RELEASE_FILE = re.compile(r"^v(\d+)\.(\d+)\.json\.gz$")
DEFINITIONS = "_definitions.json"  # the shared definitions' name in a release file (as shipped)


def release_file(root: Path, version: str) -> Path:
    return root / f"v{version}.json.gz"


def shipped_versions(root: Path | None = None) -> list[str]:
    """Kubernetes versions with schemas, oldest first, as "1.37"."""
    root = root or kubernetes_schema_root()
    if root is None:
        return []
    found = []
    for f in root.iterdir():
        m = _RELEASE_FILE.match(f.name)
        if m:
            found.append((int(m.group(1)), int(m.group(2))))
    return [f"{a}.{b}" for a, b in sorted(found)]


def parse_version(version: str) -> tuple[int, int]:
    """(major, minor) of a Kubernetes version such as "1.30" or "v1.30.4"; SchemaError otherwise."""
    m = re.match(r"^v?(\d+)\.(\d+)", str(version).strip())
    if not m:
        raise SchemaError(f"not a Kubernetes version: {version!r} (expected e.g. 1.30)")
    return int(m.group(1)), int(m.group(2))


def pick_version(wanted: str | None, shipped: Sequence[str]) -> str:
    """The newest shipped version not newer than ``wanted`` (default: the newest shipped)."""
    if not shipped:
        raise SchemaError("no Kubernetes JSON schemas found (schemas/kubernetes: scripts/vendor-k8s-schemas.py)")
    if wanted in (None, "", "latest"):
        return shipped[-1]
    want = parse_version(str(wanted))
    older = [v for v in shipped if parse_version(v) <= want]
    if not older:
        raise SchemaError(f"no Kubernetes schemas for {wanted} (shipped: {shipped[0]}–{shipped[-1]})")
    return older[-1]


def schema_file_name(api_version: str, kind: str) -> str:
    """kubeconform's file name for a kind: ``{{ .ResourceKind }}{{ .KindSuffix }}.json``."""
    group_parts = api_version.split("/")
    suffix = "-" + group_parts[0].split(".")[0].lower()
    if len(group_parts) > 1:
        suffix += "-" + group_parts[1].lower()
    return f"{kind.lower()}{suffix}.json"


def strict_schema(node: Any) -> Any:
    """``node`` with ``additionalProperties: false`` on every schema that lists ``properties`` and
    says nothing of other keys: kubernetes-validate's strict schemas, exactly (a test compares)."""
    if isinstance(node, list):
        return [strict_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: {name: strict_schema(v2) for name, v2 in v.items()}
        if k in _NAMED and isinstance(v, dict)
        else strict_schema(v)
        for k, v in node.items()
    }
    if "properties" in node and "additionalProperties" not in node:
        out["additionalProperties"] = False
    return out


@dataclass(frozen=True)
class Release:
    """One release's schemas: its file (every kind and the shared definitions) and strictness."""

    path: Path
    strict: bool

    def _document(self) -> dict[str, Any]:
        st = self.path.stat()
        return _read_release(self.path, st.st_size, st.st_mtime_ns)

    def names(self) -> list[str]:
        """The kinds' file names (kubeconform's: ``deployment-apps-v1.json``), sorted."""
        return sorted(n for n in self._document() if n != DEFINITIONS)

    def has(self, file_name: str) -> bool:
        return file_name != DEFINITIONS and file_name in self._document()

    def kind(self, file_name: str) -> dict[str, Any] | None:
        raw = self._document().get(file_name) if file_name != DEFINITIONS else None
        if raw is None:
            return None
        return strict_schema(raw) if self.strict else raw

    def definitions(self) -> dict[str, Any]:
        return self._strict_definitions() if self.strict else self._document()[DEFINITIONS]

    def _strict_definitions(self) -> dict[str, Any]:
        st = self.path.stat()
        return _strict_definitions(self.path, st.st_size, st.st_mtime_ns)

    def cache_key(self) -> str:
        st = self.path.stat()
        return f"{self.path}\0{st.st_size}\0{st.st_mtime_ns}\0{self.strict}"


@lru_cache(maxsize=4)
def _read_release(path: Path, _size: int, _mtime: int) -> dict[str, Any]:
    """A release file's document (size and modification time in the key: a file replaced is read again)."""
    with gzip.open(path, "rb") as fh:
        doc = json.loads(fh.read())
    if not isinstance(doc, dict) or not isinstance(doc.get(DEFINITIONS), dict):
        raise SchemaError(f"{path}: not a release's schemas (scripts/vendor-k8s-schemas.py writes them)")
    return doc


@lru_cache(maxsize=4)
def _strict_definitions(path: Path, size: int, mtime: int) -> dict[str, Any]:
    return strict_schema(_read_release(path, size, mtime)[DEFINITIONS])


def _release(root: Path, version: str, strict: bool) -> Release:
    p = release_file(root, version)
    if not p.is_file():
        raise SchemaError(f"no Kubernetes schemas for {version} under {root}")
    return Release(p, strict)


# ------------------------------------------------------------------------------- the schemas ---


def _read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def crd_dir() -> Path:
    return schemas_dir() / "crds"


def podfit_schema(api_version: str, kind: str) -> dict[str, Any] | None:
    """podfit's own schema for a kind (CRDs it reads, its Platform profile), or None."""
    if (api_version, kind) == PLATFORM_API:
        return _read_json(schemas_dir() / "platform.schema.json")
    p = crd_dir() / schema_file_name(api_version, kind)
    return _read_json(p) if _is_file(p) else None


def _is_file(path: Path) -> bool:
    """A regular file; False also for a name the file system cannot hold (a kind of 300 letters)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _kind_schema(release: Release, api_version: str, kind: str) -> dict[str, Any] | None:
    """A Kubernetes kind's schema as shipped (its ``$ref``s into the definitions left as they are)."""
    raw = release.kind(schema_file_name(api_version, kind))
    if raw is None or "x-kubernetes-group-version-kind" not in raw:
        return None
    return raw


def _registry(release: Release) -> Any:
    """A jsonschema-rs registry holding one version's shared definitions document."""
    import jsonschema_rs

    return jsonschema_rs.Registry([(_DEFS_URI, release.definitions())])


def _refs(node: Any, out: list[str]) -> list[str]:
    """Every ``$ref`` string under ``node``."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            out.append(ref)
        for v in node.values():
            _refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _refs(v, out)
    return out


def reachable_definitions(definitions: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The definitions document keeping only the ``$defs`` that ``schema`` reaches through
    ``$ref``s (directly or through other definitions): the same document at the same URI, so every
    reference resolves to the same schema. None when a reference leads anywhere else."""
    defs = definitions.get("$defs")
    if not isinstance(defs, dict):
        return None
    kept: dict[str, Any] = {}
    todo = _refs(schema, [])
    while todo:
        ref = todo.pop()
        prefix, sep, pointer = ref.partition("#/$defs/")
        if not sep or prefix not in ("", _DEFS_URI[len("file://") :]):
            return None
        name = pointer.split("/", 1)[0].replace("~1", "/").replace("~0", "~")
        if name in kept:
            continue
        if name not in defs:
            return None
        kept[name] = defs[name]
        _refs(kept[name], todo)
    return {**{k: v for k, v in definitions.items() if k != "$defs"}, "$defs": kept}


def _holds_refs(doc: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``doc`` is a definitions document holding every definition ``schema`` names itself
    (a check of shape only, for a cache file: a missing one fails validation, not the run)."""
    defs = doc.get("$defs") if isinstance(doc, dict) else None
    if not isinstance(defs, dict):
        return False
    for ref in _refs(schema, []):
        prefix, sep, pointer = ref.partition("#/$defs/")
        if sep and pointer.split("/", 1)[0].replace("~1", "/").replace("~0", "~") not in defs:
            return False
    return True


def _kind_registry(release: Release, file_name: str, schema: Mapping[str, Any], full: Any) -> Any:
    """A jsonschema-rs registry with the definitions one kind's schema reaches: a few dozen
    kilobytes where the whole document is some hundreds, which take longer to read and register
    than a small file's check. Cached as JSON under the user's cache directory, keyed by the
    release file (path, size, modification time), its strictness and the kind; ``full()`` gives
    the whole document when the cache has no entry."""
    import jsonschema_rs

    h = hashlib.sha256(f"{release.cache_key()}\0{file_name}\0".encode())
    root = cache_dir("schemas")
    cache = root / f"{h.hexdigest()[:32]}.json" if root is not None else None
    try:
        data = read_trusted(cache, _MAX_CACHE_BYTES) if cache is not None else None
        if data is None:
            raise OSError("no private cache")
        doc = json.loads(data)
        if not _holds_refs(doc, schema):
            raise ValueError("a cache file of another shape")
    except (OSError, ValueError, RecursionError):
        doc = reachable_definitions(full(), schema)
        if doc is None:
            return None
        try:
            if cache is not None:
                write_private(cache, json.dumps(doc).encode("utf-8"))
        except OSError:
            pass  # no writable cache: computed again next run
    return jsonschema_rs.Registry([(_DEFS_URI, doc)])


# keys whose value maps names to schemas (names must not be mistaken for keywords)
_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_DROP = ("description", "$id", "$schema", "example", "examples")


def standalone(schema: Mapping[str, Any], registry: Any, base_uri: str) -> dict[str, Any]:
    """``schema`` with every ``$ref`` inlined by jsonschema-rs, for a validator that cannot resolve
    the shared definitions (kubeconform). Descriptions and ``x-`` extensions are dropped; the
    references dereferencing leaves in place (a recursive type such as JSONSchemaProps, below its
    first level) accept anything."""
    import jsonschema_rs

    out = _prune(jsonschema_rs.dereference(dict(schema), registry=registry, base_uri=base_uri, offline=True))
    out["$schema"] = DRAFT_2020_12
    return out


def _prune(node: Any) -> Any:
    if isinstance(node, list):
        return [_prune(v) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:  # a cycle: dereference() left the reference
        return {}
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k in _DROP or k.startswith("x-"):
            continue
        out[k] = {name: _prune(s) for name, s in v.items()} if k in _NAMED and isinstance(v, dict) else _prune(v)
    return out


# ---------------------------------------------------------------------------- violations ---


@dataclass(frozen=True)
class Violation:
    """One violation: where in the object (JSON path), what is wrong, and which check found it:
    ``schema`` (the JSON Schema) or ``api-server`` (a rule of the API server's validation that the
    OpenAPI schema does not state)."""

    path: tuple[Any, ...]  # into the object; the line is looked up by the rule
    message: str
    source: str = "schema"
    missing: tuple[str, ...] = ()  # the required properties absent there (a "required" violation)
    nulls: tuple[str, ...] = ()  # those of ``missing`` the object gives as null


def _and(names: Sequence[str]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def merge_required(violations: Sequence[Violation]) -> list[Violation]:
    """One violation per object path for its missing required properties, naming them all: a
    partial object (a patch, a fragment) misses several at once, and one cause is one finding."""
    out: list[Violation] = []
    at: dict[tuple[str, ...], int] = {}
    for v in violations:
        if not v.missing:
            out.append(v)
            continue
        key = tuple(str(p) for p in v.path)
        if key not in at:
            at[key] = len(out)
            out.append(v)
            continue
        first = out[at[key]]
        names = first.missing + tuple(n for n in v.missing if n not in first.missing)
        nulls = tuple(n for n in names if n in first.nulls or n in v.nulls)
        message = _required_message(first.path, names, nulls)
        out[at[key]] = Violation(first.path, message, first.source, names, nulls)
    return out


def _dotted(path: Sequence[Any]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(object)"


def _show(value: Any) -> str:
    """A value as JSON (as the API server would read it), cut to a readable length."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _types(names: Iterable[str]) -> str:
    names = list(dict.fromkeys(names))
    return " or ".join([n for n in names if n != "null"] + (["null"] if "null" in names else []))


def _json_key(key: Any) -> str:
    """A mapping key as the YAML-to-JSON conversion of kubectl writes it."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    return str(key)


def _jsonable(value: Any) -> Any:
    """A copy JSON can hold: non-string keys as strings, other values as their text."""
    if isinstance(value, dict):
        return {_json_key(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def without_null_fields(value: Any) -> Any:
    """``value`` with every mapping entry whose value is null left out, at any depth: the object
    the API server validates. Its decoder leaves a field given as null unset, as if absent (a CRD's
    non-nullable fields are pruned the same way), so a null optional field is valid and a null
    required field is missing. In a map such as labels or resources.limits a null value decodes as
    the zero value ("" or 0), which the schemas of such maps accept as they accept its absence.
    List items stay where they are, null or not: the decoder makes a null item a zero-valued one,
    and removing it would shift the indices that point at lines. Returns ``value`` itself (not a
    copy) when it holds no null field; never changes ``value``."""
    if isinstance(value, dict):
        kept = {k: without_null_fields(v) for k, v in value.items() if v is not None}
        unchanged = len(kept) == len(value) and all(kept[k] is value[k] for k in kept)
        return value if unchanged else kept
    if isinstance(value, list):
        items = [without_null_fields(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def _has_null_field(value: Any) -> bool:
    """Whether a mapping at any depth of ``value`` holds a null value: what
    :func:`without_null_fields` would leave out. Most objects hold none, and this walk allocates
    nothing (rebuilding every mapping to find out took a third of PF902's time on 10,000 objects)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for v in node.values():
                if v is None:
                    return True
                if isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return False


def _null_keys(node: Any, names: Iterable[str]) -> tuple[str, ...]:
    """Those of ``names`` that the mapping ``node`` holds with a null value."""
    if not isinstance(node, dict):
        return ()
    nulls = {_json_key(k) for k, v in node.items() if v is None}
    return tuple(n for n in names if n in nulls)


def _required_message(path: Sequence[Any], names: Sequence[str], nulls: Sequence[str]) -> str:
    """``path: 'a' and 'b' are required properties``, saying which of them were given as null."""
    text = f"{_dotted(path)}: {_and(names)} " + (
        "is a required property" if len(names) == 1 else "are required properties"
    )
    if nulls:
        text += f" ({_and(nulls)}: null is the same as unset)"
    return text


def _locate(doc: Any, path: Sequence[Any]) -> tuple[tuple[Any, ...], Any]:
    """The path into the original object (its own keys, not their JSON text) and the value there."""
    out: list[Any] = []
    node = doc
    for step in path:
        if isinstance(node, dict):
            key = step if step in node else next((k for k in node if _json_key(k) == str(step)), step)
            node = node.get(key)
            out.append(key)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
            out.append(step)
        else:
            node = None
            out.append(step)
    return tuple(out), node


def _violations(error: Any, doc: Any) -> Iterator[Violation]:
    """Human-sized messages from a jsonschema-rs error: the unexpected key itself for strict schemas,
    the expected types of a union, the value as JSON. ``doc`` is the object as written: the error's
    path is looked up in it (its own keys, its null fields), whichever form of it was validated."""
    path, value = _locate(doc, error.instance_path)
    where = _dotted(path)
    kind = error.kind
    detail = kind.as_dict()
    if kind.name == "additionalProperties" and isinstance(value, dict):
        for name in detail.get("unexpected") or ():
            key = _locate(value, [name])[0][0]
            yield Violation(path + (key,), f"{_dotted(path + (key,))}: unknown field {key!r}")
        return
    if isinstance(value, float) and not math.isfinite(value):
        yield Violation(path, f"{where}: {_show(value)} is not a number JSON can hold")
        return
    if kind.name == "type":
        text = f"{where}: {_show(value)} is not of type {_types(detail['types'])}"
        if "string" in detail["types"] and isinstance(value, (bool, int, float)):
            # YAML reads `true`, `1` or `1.0` unquoted as a boolean or number
            text += f' (quote it: "{_show(value)}")'
        yield Violation(path, text)
        return
    branches = detail.get("context") if kind.name in ("oneOf", "anyOf") else None
    if branches and all(b and all(e.kind.name == "type" for e in b) for b in branches):
        # no alternative took the value (IntOrString, Quantity): name the types they accept
        types = [t for b in branches for e in b for t in e.kind.as_dict()["types"]]
        yield Violation(path, f"{where}: {_show(value)} is not of type {_types(types)}")
        return
    if kind.name == "required":
        name = str(detail["property"])
        nulls = _null_keys(value, (name,))
        yield Violation(path, _required_message(path, (name,), nulls), missing=(name,), nulls=nulls)
        return
    if kind.name == "enum":
        yield Violation(path, f"{where}: {_show(value)} is not one of {', '.join(_show(o) for o in detail['options'])}")
        return
    msg = error.message
    if len(msg) > 200:
        msg = msg[:197] + "..."
    yield Violation(path, f"{where}: {msg}")


def _unknown_null_fields(validator: Any, sent: Any, doc: Any) -> list[Violation]:
    """Unknown fields given as null, which validating without null fields cannot see: a strict
    decoder rejects an unknown field whatever its value (``request: null`` for ``requests:``).
    ``sent`` is the object as sent (null fields kept), ``doc`` as written, for the paths."""
    return [
        x
        for err in validator.iter_errors(sent)
        if err.kind.name == "additionalProperties"
        for x in _violations(err, doc)
        if _locate(doc, x.path)[1] is None
    ]


# ----------------------------------------------------------- the API server's own rules ---

# Rules of the API server's validation that the OpenAPI schemas do not state: counts it rejects
# when negative ("must be greater than or equal to 0"). Non-integer values are type errors of the
# schema already.
_NON_NEGATIVE: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("apps/v1", "Deployment"): (("spec", "replicas"),),
    ("apps/v1", "ReplicaSet"): (("spec", "replicas"),),
    ("apps/v1", "StatefulSet"): (("spec", "replicas"),),
    ("v1", "ReplicationController"): (("spec", "replicas"),),
    ("batch/v1", "Job"): (("spec", "parallelism"), ("spec", "completions")),
    ("batch/v1", "CronJob"): (
        ("spec", "jobTemplate", "spec", "parallelism"),
        ("spec", "jobTemplate", "spec", "completions"),
    ),
}


# These counts are int32 fields: the API server cannot decode a larger number into them.
INT32_MAX = 2**31 - 1


def api_server_violations(doc: Mapping[str, Any]) -> list[Violation]:
    """What the API server's validation rejects in ``doc`` beyond its schema."""
    api, kind = doc.get("apiVersion"), doc.get("kind")
    if not isinstance(api, str) or not isinstance(kind, str):
        return []
    out = []
    for path in _NON_NEGATIVE.get((api, kind), ()):
        value: Any = doc
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        if value < 0:
            msg = f"{_dotted(path)}: invalid value {_show(value)}: must be greater than or equal to 0"
            out.append(Violation(path, msg, "api-server"))
        elif value > INT32_MAX:
            msg = f"{_dotted(path)}: invalid value {_show(value)}: out of range for int32 (at most {INT32_MAX})"
            out.append(Violation(path, msg, "api-server"))
    out.extend(_spread_violations(api, kind, doc))
    out.extend(_autoscaler_violations(api, kind, doc))
    out.extend(_quota_violations(api, kind, doc))
    return out


# what the API server's quantity parser refuses (podfit's own bounds, "too large", are not its)
_REFUSED_QUANTITY = ("expected a number", "resource quantities cannot be negative")


def _quota_violations(api: str, kind: str, doc: Mapping[str, Any]) -> list[Violation]:
    """A ResourceQuota's spec.hard: each value a non-negative quantity (validation.go,
    ValidateResourceQuotaSpec). PF112 cannot compare usage with a limit it cannot read."""
    if (api, kind) != ("v1", "ResourceQuota"):
        return []
    spec = doc.get("spec")
    hard = spec.get("hard") if isinstance(spec, Mapping) else None
    if not isinstance(hard, Mapping):
        return []
    from .quantity import QuantityError, parse_quantity

    out = []
    for name, value in hard.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            continue  # the schema's type error
        try:
            parse_quantity(value)
        except QuantityError as e:
            if e.reason.startswith(_REFUSED_QUANTITY):
                path = ("spec", "hard", name)
                out.append(Violation(path, f"{_dotted(path)}: invalid value {_show(value)}: {e.reason}", "api-server"))
    return out


def _int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _at_least_one(path: tuple[Any, ...], value: Any, what: str = "must be greater than zero") -> Violation | None:
    """The API server's range for a positive int32 count, or None within it (or not an integer:
    the schema's type error)."""
    if not _int(value):
        return None
    if value < 1:
        return Violation(path, f"{_dotted(path)}: invalid value {_show(value)}: {what}", "api-server")
    if value > INT32_MAX:
        msg = f"{_dotted(path)}: invalid value {_show(value)}: out of range for int32 (at most {INT32_MAX})"
        return Violation(path, msg, "api-server")
    return None


def _spread_violations(api: str, kind: str, doc: Mapping[str, Any]) -> list[Violation]:
    """A pod template's topologySpreadConstraints: maxSkew and minDomains are positive int32s
    (validation.go, validateTopologySpreadConstraints; packing leaves such a constraint out), and
    its containers' port numbers."""
    from .model import WORKLOAD_KINDS

    if api not in ("v1", "apps/v1", "batch/v1") or kind not in WORKLOAD_KINDS:
        return []
    spec_path: tuple[Any, ...] = (*WORKLOAD_KINDS[kind], "spec")
    spec: Any = doc
    for step in spec_path:
        spec = spec.get(step) if isinstance(spec, Mapping) else None
    if not isinstance(spec, Mapping):
        return []
    out = []
    spread = spec.get("topologySpreadConstraints")
    for i, t in enumerate(spread if isinstance(spread, list) else ()):
        if isinstance(t, Mapping):
            for key in ("maxSkew", "minDomains"):
                v = _at_least_one((*spec_path, "topologySpreadConstraints", i, key), t.get(key))
                if v is not None:
                    out.append(v)
    # a container's ports: containerPort, and hostPort when set (0 is unset), are 1-65535
    # (validation.go, validateContainerPorts); PF601 compares host ports
    for group in ("initContainers", "containers"):
        containers = spec.get(group)
        for ci, c in enumerate(containers if isinstance(containers, list) else ()):
            ports = c.get("ports") if isinstance(c, Mapping) else None
            for pi, port in enumerate(ports if isinstance(ports, list) else ()):
                for key in ("containerPort", "hostPort"):
                    value = port.get(key) if isinstance(port, Mapping) else None
                    if _int(value) and not 1 <= value <= 65535 and not (key == "hostPort" and value == 0):
                        path = (*spec_path, group, ci, "ports", pi, key)
                        msg = f"{_dotted(path)}: invalid value {_show(value)}: must be between 1 and 65535, inclusive"
                        out.append(Violation(path, msg, "api-server"))
    return out


def _autoscaler_violations(api: str, kind: str, doc: Mapping[str, Any]) -> list[Violation]:
    """A HorizontalPodAutoscaler's maxReplicas is a positive int32 and minReplicas, when set, at
    most maxReplicas (validation.go, validateHorizontalPodAutoscalerSpec)."""
    if kind != "HorizontalPodAutoscaler" or not api.startswith("autoscaling/"):
        return []
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        return []
    out = []
    top = _at_least_one(("spec", "maxReplicas"), spec.get("maxReplicas"), "must be greater than or equal to 1")
    if top is not None:
        out.append(top)
    least, most = spec.get("minReplicas"), spec.get("maxReplicas")
    if top is None and _int(least) and _int(most) and least > most:
        path = ("spec", "minReplicas")
        msg = f"{_dotted(path)}: invalid value {_show(least)}: must be less than or equal to maxReplicas ({most})"
        out.append(Violation(path, msg, "api-server"))
    return out


# An apiVersion is GROUP/VERSION: the group a DNS subdomain (RFC 1123, at most 253 characters),
# the version a DNS label (at most 63).
_MAX_GROUP, _MAX_VERSION = 253, 63


def api_version_problem(api_version: str) -> str | None:
    """Why the API server can serve no ``api_version`` by its length alone, or None."""
    group, _, version = api_version.rpartition("/")
    if len(group) > _MAX_GROUP:
        return f"apiVersion: API group of {len(group):,} characters: a group name has at most {_MAX_GROUP}"
    if len(version) > _MAX_VERSION:
        return f"apiVersion: version of {len(version):,} characters: a version name has at most {_MAX_VERSION}"
    return None


# -------------------------------------------------------------------------- removed APIs ---


@dataclass(frozen=True)
class Removal:
    """An apiVersion of a kind that the API server no longer serves."""

    api_version: str
    kind: str
    removed_in: str  # the release that stopped serving it, e.g. "1.16"
    replacement: str | None  # the apiVersion serving the kind now; None: the kind itself is gone
    since: str | None  # the release that first served the replacement
    note: str = ""  # what else changes on the way (from the migration guide)


_SELECTOR = "spec.selector is required there"
_INGRESS = "spec.backend becomes spec.defaultBackend, serviceName/servicePort become service.name/service.port, pathType is required"
_PSP = (
    "PodSecurityPolicy has no successor API (Kubernetes 1.25 removed the kind): enforce pod security with "
    "Pod Security Admission, the namespace label pod-security.kubernetes.io/enforce"
)

# The Kubernetes Deprecated API Migration Guide ("Removed APIs by release"): release that stopped
# serving the apiVersion, the apiVersion, its kinds, the replacement and the release serving it first.
_REMOVED = (
    ("1.16", "extensions/v1beta1", ("NetworkPolicy",), "networking.k8s.io/v1", "1.8", ""),
    ("1.16", "extensions/v1beta1", ("PodSecurityPolicy",), None, None, _PSP),
    ("1.16", "extensions/v1beta1", ("DaemonSet", "Deployment", "ReplicaSet"), "apps/v1", "1.9", _SELECTOR),
    ("1.16", "apps/v1beta1", ("Deployment", "StatefulSet", "ReplicaSet"), "apps/v1", "1.9", _SELECTOR),
    ("1.16", "apps/v1beta2", ("DaemonSet", "Deployment", "StatefulSet", "ReplicaSet"), "apps/v1", "1.9", _SELECTOR),
    (
        "1.22",
        "admissionregistration.k8s.io/v1beta1",
        ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"),
        "admissionregistration.k8s.io/v1",
        "1.16",
        "webhooks[].sideEffects and admissionReviewVersions are required",
    ),
    (
        "1.22",
        "apiextensions.k8s.io/v1beta1",
        ("CustomResourceDefinition",),
        "apiextensions.k8s.io/v1",
        "1.16",
        "spec.scope and spec.versions[].schema.openAPIV3Schema are required",
    ),
    ("1.22", "apiregistration.k8s.io/v1beta1", ("APIService",), "apiregistration.k8s.io/v1", "1.10", ""),
    ("1.22", "authentication.k8s.io/v1beta1", ("TokenReview",), "authentication.k8s.io/v1", "1.6", ""),
    (
        "1.22",
        "authorization.k8s.io/v1beta1",
        ("LocalSubjectAccessReview", "SelfSubjectAccessReview", "SubjectAccessReview"),
        "authorization.k8s.io/v1",
        "1.6",
        "spec.group becomes spec.groups",
    ),
    (
        "1.22",
        "certificates.k8s.io/v1beta1",
        ("CertificateSigningRequest",),
        "certificates.k8s.io/v1",
        "1.19",
        "spec.signerName and spec.usages are required",
    ),
    ("1.22", "coordination.k8s.io/v1beta1", ("Lease",), "coordination.k8s.io/v1", "1.14", ""),
    ("1.22", "extensions/v1beta1", ("Ingress",), "networking.k8s.io/v1", "1.19", _INGRESS),
    ("1.22", "networking.k8s.io/v1beta1", ("Ingress",), "networking.k8s.io/v1", "1.19", _INGRESS),
    ("1.22", "networking.k8s.io/v1beta1", ("IngressClass",), "networking.k8s.io/v1", "1.19", ""),
    (
        "1.22",
        "rbac.authorization.k8s.io/v1beta1",
        ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
        "rbac.authorization.k8s.io/v1",
        "1.8",
        "",
    ),
    ("1.22", "scheduling.k8s.io/v1beta1", ("PriorityClass",), "scheduling.k8s.io/v1", "1.14", ""),
    ("1.22", "storage.k8s.io/v1beta1", ("CSIDriver",), "storage.k8s.io/v1", "1.19", ""),
    ("1.22", "storage.k8s.io/v1beta1", ("CSINode",), "storage.k8s.io/v1", "1.17", ""),
    ("1.22", "storage.k8s.io/v1beta1", ("StorageClass",), "storage.k8s.io/v1", "1.6", ""),
    ("1.22", "storage.k8s.io/v1beta1", ("VolumeAttachment",), "storage.k8s.io/v1", "1.13", ""),
    ("1.25", "batch/v1beta1", ("CronJob",), "batch/v1", "1.21", ""),
    (
        "1.25",
        "discovery.k8s.io/v1beta1",
        ("EndpointSlice",),
        "discovery.k8s.io/v1",
        "1.21",
        "topology gives way to each endpoint's nodeName and zone",
    ),
    ("1.25", "events.k8s.io/v1beta1", ("Event",), "events.k8s.io/v1", "1.19", ""),
    (
        "1.25",
        "autoscaling/v2beta1",
        ("HorizontalPodAutoscaler",),
        "autoscaling/v2",
        "1.23",
        "targetAverageUtilization becomes target.averageUtilization with target.type: Utilization",
    ),
    (
        "1.25",
        "policy/v1beta1",
        ("PodDisruptionBudget",),
        "policy/v1",
        "1.21",
        "an empty spec.selector selects every pod of the namespace",
    ),
    ("1.25", "policy/v1beta1", ("PodSecurityPolicy",), None, None, _PSP),
    ("1.25", "node.k8s.io/v1beta1", ("RuntimeClass",), "node.k8s.io/v1", "1.20", ""),
    (
        "1.26",
        "flowcontrol.apiserver.k8s.io/v1beta1",
        ("FlowSchema", "PriorityLevelConfiguration"),
        "flowcontrol.apiserver.k8s.io/v1",
        "1.29",
        "",
    ),
    ("1.26", "autoscaling/v2beta2", ("HorizontalPodAutoscaler",), "autoscaling/v2", "1.23", ""),
    ("1.27", "storage.k8s.io/v1beta1", ("CSIStorageCapacity",), "storage.k8s.io/v1", "1.24", ""),
    (
        "1.29",
        "flowcontrol.apiserver.k8s.io/v1beta2",
        ("FlowSchema", "PriorityLevelConfiguration"),
        "flowcontrol.apiserver.k8s.io/v1",
        "1.29",
        "",
    ),
    (
        "1.32",
        "flowcontrol.apiserver.k8s.io/v1beta3",
        ("FlowSchema", "PriorityLevelConfiguration"),
        "flowcontrol.apiserver.k8s.io/v1",
        "1.29",
        "spec.limited.nominalConcurrencyShares defaults to 30 only when unset",
    ),
)
REMOVED_APIS: Mapping[tuple[str, str], Removal] = {
    (api, kind): Removal(api, kind, release, replacement, since, note)
    for release, api, kinds, replacement, since, note in _REMOVED
    for kind in kinds
}


@dataclass(frozen=True)
class Deprecation:
    """An apiVersion of a kind that the API server still serves but has deprecated: it answers a
    request for it with a deprecation warning. ``removed_in`` None: no removal is scheduled."""

    api_version: str
    kind: str
    deprecated_in: str | None  # the release that deprecated it (None: not recorded here)
    removed_in: str | None
    replacement: str | None  # "apiVersion Kind" of what to use instead
    note: str = ""


# Kinds Kubernetes deprecated without removing (the API server's deprecation warnings):
# release that deprecated it, apiVersion, kind, replacement, what the move changes.
_DEPRECATED = (
    (
        "1.33",
        "v1",
        "Endpoints",
        "discovery.k8s.io/v1 EndpointSlice",
        "an EndpointSlice names its Service in the label kubernetes.io/service-name",
    ),
)


def deprecated_api(api_version: str, kind: str, version: str | None = None) -> Deprecation | None:
    """The deprecation of ``api_version`` ``kind`` that release ``version`` (default: the newest)
    still serves: an apiVersion whose removal (REMOVED_APIS) comes after ``version``, or a kind
    deprecated without removal (from its deprecating release on); None otherwise."""
    target = None if version in (None, "", "latest") else parse_version(str(version))
    removal = REMOVED_APIS.get((api_version, kind))
    if removal is not None:
        if target is None or target >= parse_version(removal.removed_in):
            return None  # removed: PF906's
        return Deprecation(
            api_version,
            kind,
            None,
            removal.removed_in,
            f"{removal.replacement} {kind}" if removal.replacement else None,
            removal.note,
        )
    for release, api, k, replacement, note in _DEPRECATED:
        if (api, k) == (api_version, kind) and (target is None or target >= parse_version(release)):
            return Deprecation(api_version, kind, release, None, replacement, note)
    return None


def removed_api(api_version: str, kind: str, version: str | None = None) -> Removal | None:
    """The removal of ``api_version`` ``kind`` by Kubernetes ``version`` (default: any release so
    far), or None while that release still serves it. Raises SchemaError for a malformed version."""
    removal = REMOVED_APIS.get((api_version, kind))
    if removal is None:
        return None
    if version not in (None, "", "latest") and parse_version(str(version)) < parse_version(removal.removed_in):
        return None
    return removal


# ------------------------------------------------------------------------ in-process check ---


class SchemaSet:
    """jsonschema-rs validators for one Kubernetes version, built lazily per kind and cached.

    ``validate(doc)`` returns None when the kind has no schema (not validated), else the
    violations (empty when valid): the schema's, then for Kubernetes kinds the API server's own
    rules (:func:`api_server_violations`).
    """

    def __init__(self, version: str | None = None, strict: bool = True, root: Path | None = None) -> None:
        self.root = root or kubernetes_schema_root()
        self.versions = shipped_versions(self.root) if self.root else []
        self.version = pick_version(version, self.versions) if self.root else None
        self.strict = strict
        self._dir = _release(self.root, self.version, strict) if self.root and self.version else None
        self._validators: dict[tuple[str, str], Any] = {}
        self._own: set[tuple[str, str]] = set()
        self._registry: Any = None  # the version's definitions, read on first use
        self._definitions: Any = None  # the same document as parsed JSON

    def is_podfit_schema(self, api_version: str, kind: str) -> bool:
        """True when the kind is validated by one of podfit's own schemas (not Kubernetes')."""
        return (api_version, kind) in self._own

    def schema_for(self, api_version: str, kind: str) -> dict[str, Any] | None:
        """The kind's schema: podfit's own, or Kubernetes' as shipped (with ``$ref``s), or None."""
        if not _API_VERSION.fullmatch(api_version) or not _KIND.fullmatch(kind) or api_version_problem(api_version):
            return None
        own = podfit_schema(api_version, kind)
        if own is not None:
            self._own.add((api_version, kind))
            return own
        return _kind_schema(self._dir, api_version, kind) if self._dir is not None else None

    def validator(self, api_version: str, kind: str) -> Any:
        """The kind's jsonschema-rs validator, or None without a schema."""
        key = (api_version, kind)
        if key not in self._validators:
            self._validators[key] = self._build(api_version, kind)
        return self._validators[key]

    def _build(self, api_version: str, kind: str) -> Any:
        import jsonschema_rs

        schema = self.schema_for(api_version, kind)
        if schema is None:
            return None
        if (api_version, kind) in self._own:
            return jsonschema_rs.validator_for(schema, offline=True)
        if self._dir is None:
            return None
        file_name = schema_file_name(api_version, kind)
        registry = _kind_registry(self._dir, file_name, schema, self._whole_definitions)
        if registry is None:
            if self._registry is None:
                self._registry = jsonschema_rs.Registry([(_DEFS_URI, self._whole_definitions())])
            registry = self._registry
        return jsonschema_rs.Draft202012Validator(schema, registry=registry, base_uri=_BASE + file_name, offline=True)

    def _whole_definitions(self) -> Any:
        if self._definitions is None:
            assert self._dir is not None
            self._definitions = self._dir.definitions()
        return self._definitions

    def validate(self, doc: Mapping[str, Any]) -> list[Violation] | None:
        api, kind = doc.get("apiVersion"), doc.get("kind")
        if not isinstance(api, str) or not isinstance(kind, str):
            return None
        problem = api_version_problem(api)
        if problem is not None:
            return [Violation(("apiVersion",), problem, "api-server")]
        v = self.validator(api, kind)
        if v is None:
            return None
        # The object as the API server decodes it, its null fields unset (without_null_fields);
        # podfit's Platform profile is read by podfit, not decoded by an API server: as written.
        instance: Any = doc if (api, kind) == PLATFORM_API or not _has_null_field(doc) else without_null_fields(doc)
        has_null_fields = instance is not doc
        try:  # is_valid may stop before the key that iter_errors reaches: both under the guard
            valid = v.is_valid(instance)
            errors = [] if valid else list(v.iter_errors(instance))
        except ValueError:  # a key or value JSON cannot hold: validate what kubectl would send
            instance = _jsonable(instance)
            valid = v.is_valid(instance)
            errors = [] if valid else list(v.iter_errors(instance))
        out = [x for err in errors for x in _violations(err, doc)]
        if has_null_fields:
            out.extend(_unknown_null_fields(v, _jsonable(doc), doc))
        if (api, kind) not in self._own:
            out.extend(api_server_violations(doc))
        out.sort(key=lambda x: [str(p) for p in x.path])
        return merge_required(out)


# ------------------------------------------------------------------- kubeconform's layout ---


def build_schema_tree(out: Path, versions: Iterable[str] | None = None, root: Path | None = None) -> dict[str, int]:
    """Write standalone schemas for kubeconform: ``out/v<ver>-standalone[-strict]/<kind>-<suffix>.json``
    for each Kubernetes version, plus ``out/podfit/`` with podfit's CRD and Platform schemas.
    Returns the number of files written per directory."""
    root = root or kubernetes_schema_root()
    if root is None:
        raise SchemaError("no Kubernetes JSON schemas found (schemas/kubernetes: scripts/vendor-k8s-schemas.py)")
    shipped = shipped_versions(root)
    wanted = list(versions) if versions else [shipped[-1]]
    counts: dict[str, int] = {}
    for ver in wanted:
        ver = pick_version(ver, shipped)
        for strict in (False, True):
            src = _release(root, ver, strict)
            dst = out / f"v{ver}.0-standalone{'-strict' if strict else ''}"
            dst.mkdir(parents=True, exist_ok=True)
            registry = _registry(src)
            n = 0
            for name in src.names():
                raw = src.kind(name)
                if raw is None or "x-kubernetes-group-version-kind" not in raw:
                    continue
                _write_json(dst / name, standalone(raw, registry, _BASE + name))
                n += 1
            counts[dst.name] = n
    own = out / "podfit"
    own.mkdir(parents=True, exist_ok=True)
    n = 0
    for f in sorted(crd_dir().glob("*.json")):
        _write_json(own / f.name, _read_json(f))
        n += 1
    _write_json(own / schema_file_name(*PLATFORM_API), _read_json(schemas_dir() / "platform.schema.json"))
    counts["podfit"] = n + 1
    return counts


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, separators=(",", ":"), sort_keys=True)
    os.replace(tmp, path)


def kubeconform_locations(tree: Path) -> list[str]:
    """``-schema-location`` values for a tree written by :func:`build_schema_tree`."""
    return [
        str(tree)
        + "/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json",
        str(tree) + "/podfit/{{ .ResourceKind }}{{ .KindSuffix }}.json",
    ]


def run_kubeconform(
    binary: str,
    paths: Sequence[str],
    tree: Path,
    version: str,
    strict: bool = True,
    timeout: float = 120,
    wrapper: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Run kubeconform offline over ``paths`` with the local schema tree; return its JSON resources.

    Kinds without a schema are skipped (``-ignore-missing-schemas``), as in-process. Raises
    SchemaError when kubeconform fails for another reason than invalid resources."""
    # -ignore-missing-schemas would turn a missing tree into a silent pass: check the tree first
    for need in (tree / f"v{version}.0-standalone{'-strict' if strict else ''}", tree / "podfit"):
        if not need.is_dir():
            raise SchemaError(f"no schemas at {need} (run scripts/build-schemas.py --out {tree} --version {version})")
    args = [
        *wrapper,
        binary,
        "-output",
        "json",
        "-verbose",
        "-ignore-missing-schemas",
        "-kubernetes-version",
        f"{version}.0",
    ]
    for loc in kubeconform_locations(tree):
        args += ["-schema-location", loc]
    if strict:
        args.append("-strict")
    import subprocess  # kubeconform for the benchmarks and tests, never in a check

    p = subprocess.run([*args, *paths], capture_output=True, text=True, timeout=timeout)
    try:
        resources = json.loads(p.stdout or "{}").get("resources") or []
    except json.JSONDecodeError:
        raise SchemaError(
            f"kubeconform printed no JSON (exit {p.returncode}): {p.stderr.strip() or p.stdout[:500]}"
        ) from None
    errors = [r for r in resources if r.get("status") == "statusError"]
    if errors:
        raise SchemaError("kubeconform: " + "; ".join(f"{r.get('filename')}: {r.get('msg')}" for r in errors[:5]))
    return resources
