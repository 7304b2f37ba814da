"""Offline schema validation of manifests (rule PF902): Kubernetes, podfit's CRDs, the Platform.

Where the schemas come from
  * Kubernetes: the JSON Schemas the ``kubernetes-validate`` package ships, one directory per
    Kubernetes version (``v1.37.0-local`` and ``v1.37.0-local-strict``). Their ``$ref``s point at a
    shared ``/api/_definitions.json``; :func:`standalone` inlines them so that each kind's schema
    stands alone (kubeconform cannot resolve those references, and inlined schemas also validate
    faster in-process).
  * podfit's CRD schemas under ``schemas/crds/`` (TanzuKubernetesCluster, VirtualMachineClass),
    named as kubeconform names schemas: ``<kind>-<group prefix>-<version>.json``.
  * the Platform profile schema ``schemas/platform.schema.json`` (kind Platform, podfit.io).

Two ways to validate, which agree (a test proves it on ``testdata/``):
  * in-process with ``jsonschema`` (:class:`SchemaSet`), used by ``podfit check``;
  * the ``kubeconform`` binary over schemas written by ``scripts/build-schemas.py`` in kubeconform's
    ``-schema-location`` template layout (:func:`run_kubeconform`).
Neither reads anything but local files. Kinds without a schema are not validated.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .paths import schemas_dir

__all__ = [
    "SchemaError",
    "kubernetes_schema_root",
    "shipped_versions",
    "pick_version",
    "schema_file_name",
    "standalone",
    "SchemaSet",
    "Violation",
    "build_schema_tree",
    "kubeconform_locations",
    "run_kubeconform",
]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
PLATFORM_API = ("podfit.io/v1alpha1", "Platform")


class SchemaError(Exception):
    """The schemas needed for a validation are not available."""


# ------------------------------------------------------------------------------- locations ---


def kubernetes_schema_root() -> Path | None:
    """The ``kubernetes-json-schema`` directory of the installed kubernetes-validate package, or None."""
    override = os.environ.get("PODFIT_K8S_SCHEMAS")
    if override:
        return Path(override) if Path(override).is_dir() else None
    try:
        from importlib.util import find_spec

        spec = find_spec("kubernetes_validate")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        p = Path(loc) / "kubernetes-json-schema"
        if p.is_dir():
            return p
    return None


_VERSION_DIR = re.compile(r"^v(\d+)\.(\d+)\.(\d+)-local$")


def shipped_versions(root: Path | None = None) -> list[str]:
    """Kubernetes versions with schemas, oldest first, as "1.37"."""
    root = root or kubernetes_schema_root()
    if root is None:
        return []
    found = []
    for d in root.iterdir():
        m = _VERSION_DIR.match(d.name)
        if m and (root / f"{d.name}-strict").is_dir():
            found.append((int(m.group(1)), int(m.group(2))))
    return [f"{a}.{b}" for a, b in sorted(found)]


def _mm(version: str) -> tuple[int, int]:
    m = re.match(r"^v?(\d+)\.(\d+)", str(version).strip())
    if not m:
        raise SchemaError(f"not a Kubernetes version: {version!r} (expected e.g. 1.30)")
    return int(m.group(1)), int(m.group(2))


def pick_version(wanted: str | None, shipped: Sequence[str]) -> str:
    """The newest shipped version not newer than ``wanted`` (default: the newest shipped)."""
    if not shipped:
        raise SchemaError("no Kubernetes JSON schemas found (install the kubernetes-validate package)")
    if wanted in (None, "", "latest"):
        return shipped[-1]
    want = _mm(str(wanted))
    older = [v for v in shipped if _mm(v) <= want]
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


def _version_dir(root: Path, version: str, strict: bool) -> Path:
    d = root / f"v{version}.0-local{'-strict' if strict else ''}"
    if not d.is_dir():
        raise SchemaError(f"no Kubernetes schemas for {version} under {root}")
    return d


# -------------------------------------------------------------------------------- inlining ---

# keys whose value maps names to schemas (names must not be mistaken for keywords)
_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_DROP = ("description", "$id", "$schema", "example", "examples")


class _Inliner:
    """Inline ``$ref``s into ``#/$defs/…`` of one definitions document; cycles become ``{}``."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.done: dict[str, Any] = {}
        self.stack: list[str] = []
        self.cut = False

    def ref(self, ref: str) -> Any:
        name = ref.rsplit("/", 1)[-1]
        if name in self.done:
            return self.done[name]
        if name not in self.defs:
            raise SchemaError(f"unresolvable $ref {ref}")
        if name in self.stack:  # a recursive type (e.g. JSONSchemaProps): accept anything below
            self.cut = True
            return {}
        self.stack.append(name)
        outer_cut, self.cut = self.cut, False
        out = self.walk(self.defs[name])
        if not self.cut:  # a subtree cut short by an ancestor's cycle depends on context: no memo
            self.done[name] = out
        self.cut = self.cut or outer_cut
        self.stack.pop()
        return out

    def walk(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = self.ref(node["$ref"])
            rest = {k: v for k, v in node.items() if k != "$ref" and k not in _DROP and not k.startswith("x-")}
            if not rest:
                return target
            return {"allOf": [target], **{k: self.walk(v) for k, v in rest.items()}}
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k in _DROP or k.startswith("x-"):
                continue
            if k in _NAMED and isinstance(v, dict):
                out[k] = {name: self.walk(s) for name, s in v.items()}
            else:
                out[k] = self.walk(v)
        return out


@lru_cache(maxsize=4)
def _definitions(directory: str) -> Mapping[str, Any]:
    with open(os.path.join(directory, "_definitions.json"), encoding="utf-8") as fh:
        return json.load(fh)["$defs"]


@lru_cache(maxsize=4)
def _inliner(directory: str) -> _Inliner:
    return _Inliner(_definitions(directory))


def standalone(schema: Mapping[str, Any], defs: Mapping[str, Any] | _Inliner) -> dict[str, Any]:
    """``schema`` with every ``$ref`` into ``defs`` inlined, descriptions dropped: self-contained."""
    inl = defs if isinstance(defs, _Inliner) else _Inliner(defs)
    out = inl.walk(dict(schema))
    out["$schema"] = DRAFT_2020_12
    return out


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
    return _read_json(p) if p.is_file() else None


# ----------------------------------------------------------------------- fast boolean check ---

# The keywords the standalone Kubernetes schemas use. A schema using only these is compiled into
# Python functions that answer "valid?" far faster than jsonschema's interpreter; the
# detailed messages of an invalid object still come from jsonschema (so both always agree on the
# message text), and a test checks the two agree on valid/invalid.
_FAST_KEYWORDS = frozenset({"type", "properties", "additionalProperties", "items", "required", "enum",
                            "oneOf", "allOf", "format", "$schema", "title", "default"})  # fmt: skip


def _is_integer(x: Any) -> bool:
    return (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())


_JSON_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
# Keywords that only annotate: a schema of these alone accepts everything.
_ANNOTATIONS = frozenset({"$schema", "title", "default", "format"})
_PY_TYPES = {"object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,), "null": (type(None),)}


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return isinstance(a, str) and isinstance(b, str) and a == b if isinstance(a, str) or isinstance(b, str) else a == b


def _always(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


def compile_fast(schema: Any, gen: _Codegen | None = None) -> Any:
    """A predicate ``f(instance) -> bool`` equivalent to the schema, or None when it uses other
    keywords. Give the same ``gen`` for schemas that share subschemas (the inlined definitions of
    one Kubernetes version): each shared node is compiled once."""
    gen = gen or _Codegen()
    name = gen.node(schema)
    if name is None:
        return None
    gen.flush()
    return gen.namespace[name]


class _Codegen:
    """Python source for a schema's boolean check: one function per schema node (a node reached
    twice, as inlined references are, is written once), type tests inlined, properties dispatched
    through a dict of their checks or of the Python types they need. Compiled once per kind."""

    def __init__(self) -> None:
        self.lines: list[str] = []  # generated, not yet compiled
        self.namespace: dict[str, Any] = {"_is_integer": _is_integer, "_json_equal": _json_equal, "_always": _always, "_never": _never}
        self.memo: dict[int, str | None] = {}
        self.keep: list[Any] = []  # the schemas memo names by id() stay alive with it
        self.tables: list[dict[str, Any]] = []  # property dispatch tables whose names need binding
        self.count = 0

    def flush(self) -> None:
        """Compile what was generated since the last flush and bind the new tables' names."""
        if self.lines:
            exec(compile("\n".join(self.lines), "<podfit schema predicate>", "exec"), self.namespace)
            self.lines = []
        for table in self.tables:
            for k, v in table.items():
                if isinstance(v, str):
                    table[k] = self.namespace[v]
        self.tables = []

    def const(self, value: Any) -> str:
        self.count += 1
        name = f"_c{self.count}"
        self.namespace[name] = value
        return name

    def _type_test(self, names: list[str], var: str) -> str | None:
        if any(n not in _JSON_TYPES for n in names):
            return None
        tests = []
        py = tuple(c for n in names if n in _PY_TYPES for c in _PY_TYPES[n])
        if py:
            # bool is an int in Python: only "boolean" takes it
            tests.append(f"isinstance({var}, {self.const(py)})")
        if "integer" in names:
            tests.append(f"_is_integer({var})")
        if "number" in names:
            tests.append(f"(isinstance({var}, (int, float)) and not isinstance({var}, bool))")
        return " or ".join(tests) if tests else "False"

    def leaf(self, schema: Any) -> Any:
        """A property's check as the property dispatch holds it: a tuple of Python types (the
        schema is only a type test on them), else a function."""
        if isinstance(schema, dict) and set(schema) - _ANNOTATIONS <= {"type"}:
            t = schema.get("type")
            names = [t] if isinstance(t, str) else list(t or [])
            if names and all(n in _PY_TYPES for n in names):
                return tuple(c for n in names for c in _PY_TYPES[n])
        return self.node(schema)

    def node(self, schema: Any) -> str | None:
        """The name of the function (or constant) checking ``schema``; None when not compilable."""
        if schema is True or (isinstance(schema, dict) and set(schema) <= _ANNOTATIONS):
            return "_always"
        if schema is False:
            return "_never"
        if not isinstance(schema, dict) or not set(schema) <= _FAST_KEYWORDS:
            return None
        key = id(schema)
        if key in self.memo:
            return self.memo[key]
        self.count += 1
        name = self.memo[key] = f"_f{self.count}"
        self.keep.append(schema)
        try:
            body = self._body(schema)
        except _NotFast:
            self.memo[key] = None
            return None
        self.lines.append(f"def {name}(x):")
        self.lines.extend("    " + line for line in body)
        self.lines.append("    return True")
        return name

    def _sub(self, schema: Any) -> str:
        name = self.node(schema)
        if name is None:
            raise _NotFast
        return name

    def _body(self, schema: dict[str, Any]) -> list[str]:
        """The statements of the function checking ``schema`` (raises _NotFast)."""
        body: list[str] = []
        is_dict = False
        t = schema.get("type")
        if t is not None:
            names = [t] if isinstance(t, str) else list(t)
            test = self._type_test(names, "x")
            if test is None:
                raise _NotFast
            body.append(f"if not ({test}): return False")
            is_dict = names == ["object"]
        if "enum" in schema:
            enum = list(schema["enum"])
            if enum and all(isinstance(v, str) for v in enum):  # the common case: a set lookup
                body.append(f"if not (isinstance(x, str) and x in {self.const(frozenset(enum))}): return False")
            else:
                body.append(f"if not any(_json_equal(x, v) for v in {self.const(enum)}): return False")
        props_schema = schema.get("properties") or {}
        addl_schema = schema.get("additionalProperties", True)
        required = tuple(schema.get("required") or ())
        if props_schema or addl_schema is not True or required:
            props: dict[str, Any] = {}
            for k, sub in props_schema.items():
                check = self.leaf(sub)
                if check is None:
                    raise _NotFast
                props[k] = check
            addl = self._sub(addl_schema)
            inner = []
            for k in required:
                inner.append(f"if {k!r} not in x: return False")
            if props or addl != "_always":
                # {key: types, or the name of a function: bound by flush()}
                table = self.const(props)
                self.tables.append(props)
                inner.append("for k, v in x.items():")
                inner.append(f"    c = {table}.get(k)")
                inner.append("    if c is None:")
                if addl == "_always":
                    inner.append("        continue")
                elif addl == "_never":
                    inner.append("        return False")
                else:
                    inner.append(f"        if not {addl}(v): return False")
                    inner.append("        continue")
                inner.append("    if c.__class__ is tuple:")
                inner.append("        if not isinstance(v, c): return False")
                inner.append("    elif not c(v): return False")
            if is_dict:
                body.extend(inner)
            elif inner:
                body.append("if isinstance(x, dict):")
                body.extend("    " + line for line in inner)
        if "items" in schema:
            item = self._sub(schema["items"])
            if item != "_always":
                body.append("if isinstance(x, list):")
                body.append("    for v in x:")
                body.append(f"        if not {item}(v): return False")
        for kw in ("oneOf", "allOf"):
            if kw in schema:
                subs = [self._sub(s) for s in schema[kw]]
                if kw == "allOf":
                    body.extend(f"if not {s}(x): return False" for s in subs)
                else:
                    body.append(f"if ({' + '.join(f'(1 if {s}(x) else 0)' for s in subs) or '0'}) != 1: return False")
        return body


class _NotFast(Exception):
    """A keyword or type the generated check does not handle: jsonschema answers for the schema."""


# ------------------------------------------------------------------------ in-process check ---


@dataclass(frozen=True)
class Violation:
    """One schema violation: where in the object (JSON path) and what is wrong."""

    path: tuple[Any, ...]  # into the object; the line is looked up by the rule
    message: str


def _dotted(path: Sequence[Any]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(object)"


def _violations(error: Any) -> Iterator[Violation]:
    """Human-sized messages from a jsonschema error (the unexpected key itself for strict schemas)."""
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set((error.schema.get("properties") or {}).keys())
        patterns = list((error.schema.get("patternProperties") or {}).keys())
        extra = [k for k in error.instance if k not in allowed and not any(re.search(p, k) for p in patterns)]
        if extra and error.schema.get("additionalProperties") is False:
            for k in extra:
                yield Violation(path + (k,), f"{_dotted(path + (k,))}: unknown field {k!r}")
            return
    if error.validator in ("oneOf", "anyOf") and error.context:
        # the alternatives failed; the message names the value and the expected types
        types = sorted({str(t) for sub in error.context if sub.validator == "type" for t in
                        (sub.validator_value if isinstance(sub.validator_value, list) else [sub.validator_value])})  # fmt: skip
        if types:
            yield Violation(path, f"{_dotted(path)}: {error.instance!r} is not of type {' or '.join(types)}")
            return
    msg = error.message
    if len(msg) > 200:
        msg = msg[:197] + "..."
    yield Violation(path, f"{_dotted(path)}: {msg}")


class SchemaSet:
    """Compiled validators for one Kubernetes version, built lazily per kind and cached.

    ``validate(doc)`` returns None when the kind has no schema (not validated), else the
    violations (empty when valid).
    """

    def __init__(self, version: str | None = None, strict: bool = True, root: Path | None = None, fast: bool = True) -> None:
        self.fast = fast
        self.root = root or kubernetes_schema_root()
        self.versions = shipped_versions(self.root) if self.root else []
        self.version = pick_version(version, self.versions) if self.root else None
        self.strict = strict
        self._dir = str(_version_dir(self.root, self.version, strict)) if self.root and self.version else None
        self._validators: dict[tuple[str, str], Any] = {}
        self._own: set[tuple[str, str]] = set()
        self._codegen = _Codegen()  # the kinds' schemas share their inlined definitions

    def is_podfit_schema(self, api_version: str, kind: str) -> bool:
        """True when the kind is validated by one of podfit's own schemas (not Kubernetes')."""
        return (api_version, kind) in self._own

    def schema_for(self, api_version: str, kind: str) -> dict[str, Any] | None:
        own = podfit_schema(api_version, kind)
        if own is not None:
            self._own.add((api_version, kind))
            return own
        if self._dir is None:
            return None
        p = Path(self._dir) / schema_file_name(api_version, kind)
        if not p.is_file():
            return None
        raw = _read_json(p)
        if "x-kubernetes-group-version-kind" not in raw:  # a sub-type file (e.g. container-v1), not a kind
            return None
        return standalone(raw, _inliner(self._dir))

    def validator(self, api_version: str, kind: str) -> Any:
        """(fast predicate or None, jsonschema validator) for a kind, or None without a schema."""
        key = (api_version, kind)
        if key not in self._validators:
            schema = self.schema_for(api_version, kind)
            if schema is None:
                self._validators[key] = None
            else:
                fast = compile_fast(schema, self._codegen) if self.fast else None
                self._validators[key] = (fast, _LazyValidator(schema))
        return self._validators[key]

    def validate(self, doc: Mapping[str, Any]) -> list[Violation] | None:
        api, kind = doc.get("apiVersion"), doc.get("kind")
        if not isinstance(api, str) or not isinstance(kind, str):
            return None
        pair = self.validator(api, kind)
        if pair is None:
            return None
        fast, v = pair
        if fast(doc) if fast is not None else v.is_valid(doc):
            return []
        out: list[Violation] = []
        for err in sorted(v.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
            out.extend(_violations(err))
        return out


class _LazyValidator:
    """A jsonschema validator built on first use: with the fast predicate, only invalid objects
    need one (importing jsonschema and building a validator take about 70 ms)."""

    __slots__ = ("_schema", "_validator")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._schema = schema
        self._validator: Any = None

    def _get(self) -> Any:
        if self._validator is None:
            import jsonschema

            self._validator = jsonschema.Draft202012Validator(self._schema)
        return self._validator

    def is_valid(self, doc: Any) -> bool:
        return self._get().is_valid(doc)

    def iter_errors(self, doc: Any) -> Any:
        return self._get().iter_errors(doc)


# ------------------------------------------------------------------- kubeconform's layout ---


def build_schema_tree(out: Path, versions: Iterable[str] | None = None, root: Path | None = None) -> dict[str, int]:
    """Write standalone schemas for kubeconform: ``out/v<ver>-standalone[-strict]/<kind>-<suffix>.json``
    for each Kubernetes version, plus ``out/podfit/`` with podfit's CRD and Platform schemas.
    Returns the number of files written per directory."""
    root = root or kubernetes_schema_root()
    if root is None:
        raise SchemaError("no Kubernetes JSON schemas found (install the kubernetes-validate package)")
    shipped = shipped_versions(root)
    wanted = list(versions) if versions else [shipped[-1]]
    counts: dict[str, int] = {}
    for ver in wanted:
        ver = pick_version(ver, shipped)
        for strict in (False, True):
            src = _version_dir(root, ver, strict)
            dst = out / f"v{ver}.0-standalone{'-strict' if strict else ''}"
            dst.mkdir(parents=True, exist_ok=True)
            inl = _Inliner(_definitions(str(src)))
            n = 0
            for f in sorted(src.glob("*.json")):
                if f.name in ("_definitions.json", "all.json"):
                    continue
                raw = _read_json(f)
                if "x-kubernetes-group-version-kind" not in raw:
                    continue
                _write_json(dst / f.name, standalone(raw, inl))
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
        str(tree) + "/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json",
        str(tree) + "/podfit/{{ .ResourceKind }}{{ .KindSuffix }}.json",
    ]


def run_kubeconform(
    binary: str, paths: Sequence[str], tree: Path, version: str, strict: bool = True, timeout: float = 120,
    wrapper: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Run kubeconform offline over ``paths`` with the local schema tree; return its JSON resources.

    Kinds without a schema are skipped (``-ignore-missing-schemas``), as in-process. Raises
    SchemaError when kubeconform fails for another reason than invalid resources."""
    # -ignore-missing-schemas would turn a missing tree into a silent pass: check the tree first
    for need in (tree / f"v{version}.0-standalone{'-strict' if strict else ''}", tree / "podfit"):
        if not need.is_dir():
            raise SchemaError(f"no schemas at {need} (run scripts/build-schemas.py --out {tree} --version {version})")
    args = [*wrapper, binary, "-output", "json", "-verbose", "-ignore-missing-schemas", "-kubernetes-version", f"{version}.0"]
    for loc in kubeconform_locations(tree):
        args += ["-schema-location", loc]
    if strict:
        args.append("-strict")
    p = subprocess.run([*args, *paths], capture_output=True, text=True, timeout=timeout)
    try:
        resources = json.loads(p.stdout or "{}").get("resources") or []
    except json.JSONDecodeError:
        raise SchemaError(f"kubeconform printed no JSON (exit {p.returncode}): {p.stderr.strip() or p.stdout[:500]}") from None
    errors = [r for r in resources if r.get("status") == "statusError"]
    if errors:
        raise SchemaError("kubeconform: " + "; ".join(f"{r.get('filename')}: {r.get('msg')}" for r in errors[:5]))
    return resources
