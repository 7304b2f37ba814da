"""podfit configuration: ``.podfit.yaml`` or ``[tool.podfit]`` in ``pyproject.toml``."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .catalogue import resolve
from .loader import LoaderLimits
from .model import CustomWorkloadKind
from .options import OptionError, check_value
from .paths import load_schema
from .reading import NotRead, read_text
from .schema_errors import expected, safe_key, where
from .yamlio import YamlLimits, iter_documents, line_of

__all__ = ["Config", "ConfigError", "config_from_mapping", "parse_config_text", "find_config", "glob_matches"]


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Config:
    source: str = ""
    disabled: frozenset[str] = frozenset()
    enabled: frozenset[str] | None = None  # None: every rule
    severity: Mapping[str, str] = field(default_factory=dict)
    thresholds: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    ignore: tuple[str, ...] = ()
    platform: str | None = None
    fail_on: str | None = None
    limits: LoaderLimits = field(default_factory=LoaderLimits)
    clusters: tuple[tuple[str, str], ...] = ()  # (path glob, cluster name), first match wins
    # workload CRDs beyond podfit's table (`workload-kinds:`): (API group, kind) -> CustomWorkloadKind
    workload_kinds: Mapping[tuple[str, str], CustomWorkloadKind] = field(default_factory=dict)

    def rule_enabled(self, rule_id: str) -> bool:
        if rule_id in self.disabled:
            return False
        return self.enabled is None or rule_id in self.enabled

    def rego_options(self, rule_ids: Any) -> dict[str, dict[str, Any]]:
        """The configured options of these (Rego) rules, as ``data.podfit.options`` carries them."""
        return {r: dict(v) for r, v in self.thresholds.items() if r in rule_ids and v}

    def cluster_for_path(self, path: str) -> str | None:
        """The cluster the ``clusters:`` mapping gives the file ``path``: the first pattern that
        matches the path as given, or its path relative to the config file's directory (when the
        file lies under it). A pattern matches a file when it matches the file's path or one of
        its parent directories (``deploy/prod`` and ``deploy/prod/**`` are the same)."""
        if not self.clusters:
            return None
        candidates = [_norm(path)]
        base = os.path.dirname(self.source) if self.source else ""
        if base and path != "<stdin>":
            rel = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
            if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
                candidates.append(_norm(rel))
        for pattern, name in self.clusters:
            if any(glob_matches(pattern, c) for c in candidates):
                return name
        return None

    def ignored(self, path: str) -> bool:
        norm = path.replace(os.sep, "/")
        return any(fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(os.path.basename(norm), pat) for pat in self.ignore)


def _norm(path: str) -> str:
    path = path.replace(os.sep, "/")
    return path if path in ("", "/") else os.path.normpath(path).replace(os.sep, "/")


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex: ``**`` any number of directories, ``*`` and ``?`` within one path
    component, ``[...]`` a character class."""
    pattern = _norm(pattern.rstrip("/")) if pattern.strip("/") else pattern
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (j := pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)) != -1:
            body = pattern[i + 1 : j]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_matches(pattern: str, path: str) -> bool:
    """Does the path glob ``pattern`` match ``path`` or one of its parent directories?"""
    regex = _glob_regex(pattern)
    path = _norm(path)
    while True:
        if regex.match(path):
            return True
        parent = os.path.dirname(path)
        if not parent or parent == path:
            return False
        path = parent


def _ids(values: Any, source: str, what: str, line: int) -> frozenset[str]:
    out = set()
    for v in values or ():
        rule = resolve(str(v))
        if rule is None:
            raise ConfigError(f"{source}:{line}: {what}: unknown rule {_shown(v)} (see `podfit rules`)")
        out.add(rule.id)
    return frozenset(out)


def config_from_mapping(data: Mapping[str, Any], source: str) -> Config:
    import jsonschema  # only when there is a file to validate (40 ms to import)

    def by_id(m: Mapping[str, Any] | None, what: str) -> dict[str, Any]:
        out = {}
        for k, v in (m or {}).items():
            rule = resolve(str(k))
            if rule is None:
                raise ConfigError(f"{source}:{line_of(m, k, 1)}: {what}: unknown rule {_shown(k)} (see `podfit rules`)")
            out[rule.id] = v
        return out

    def options(m: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
        """thresholds: {RULE: {option: value}}, each checked against the rule's declared options."""
        out: dict[str, dict[str, Any]] = {}
        for k, values in (m or {}).items():
            rule = resolve(str(k))
            if rule is None:
                raise ConfigError(
                    f"{source}:{line_of(m, k, 1)}: thresholds: unknown rule {_shown(k)} (see `podfit rules`)"
                )
            checked: dict[str, Any] = {}
            for name, value in (values or {}).items():
                key = str(name) if safe_key(str(name)) else "…"
                at = f"{source}:{line_of(values, name, line_of(m, k, 1))}: thresholds.{k}.{key}"
                option = rule.option(str(name))
                if option is None:
                    valid = ", ".join(o.name for o in rule.options) or "none"
                    raise ConfigError(f"{at}: {rule.id} has no option {_shown(name)} (its options: {valid})")
                try:
                    checked[option.name] = check_value(option, value)
                except OptionError as e:
                    raise ConfigError(f"{at}: {e}") from None
            out[rule.id] = checked
        return out

    # The rule options first: their declarations' messages name the rule's options and the type
    # each takes. The schema (whose thresholds `podfit docs` generates from the same declarations)
    # then checks the rest.
    thresholds = data.get("thresholds")
    structured = isinstance(thresholds, Mapping) and all(
        v is None or isinstance(v, Mapping) for v in thresholds.values()
    )
    checked = options(thresholds) if structured else {}
    errors = list(jsonschema.Draft202012Validator(load_schema("config.schema.json")).iter_errors(data))
    if errors:
        raise ConfigError(_schema_error(data, min(errors, key=lambda e: list(map(str, e.absolute_path))), source))

    platform = data.get("platform")
    if platform and source and not os.path.isabs(platform):
        platform = os.path.join(os.path.dirname(source), platform)
    lim = data.get("limits") or {}
    defaults = LoaderLimits()
    limits = LoaderLimits(
        max_file_bytes=lim.get("max-file-bytes", defaults.max_file_bytes),
        yaml=YamlLimits(
            max_nodes=lim.get("max-yaml-nodes", defaults.yaml.max_nodes),
            max_depth=lim.get("max-depth", defaults.yaml.max_depth),
            max_document_bytes=lim.get("max-document-bytes", defaults.yaml.max_document_bytes),
        ),
    )
    return Config(
        limits=limits,
        source=source,
        disabled=_ids(data.get("disable"), source, "disable", line_of(data, "disable", 1)),
        enabled=_ids(data.get("enable"), source, "enable", line_of(data, "enable", 1)) if "enable" in data else None,
        severity=by_id(data.get("severity"), "severity"),
        thresholds=checked,
        ignore=tuple(data.get("ignore") or ()),
        clusters=tuple((str(k), str(v)) for k, v in (data.get("clusters") or {}).items()),
        workload_kinds=_workload_kinds(data.get("workload-kinds") or {}),
        platform=platform,
        fail_on=data.get("fail-on"),
    )


def _path(text: str) -> tuple[str, ...]:
    return tuple(p for p in text.split(".") if p)


def _workload_kinds(data: Mapping[str, Any]) -> dict[tuple[str, str], CustomWorkloadKind]:
    """``workload-kinds:`` (checked by the schema): {"GROUP/KIND" or "GROUP/VERSION/KIND":
    {template: dotted path, replicas: dotted path (default: one pod), per-node: bool}}."""
    out: dict[tuple[str, str], CustomWorkloadKind] = {}
    for key, entry in data.items():
        parts = str(key).split("/")
        group, kind = ("/".join(parts[:-2]) if len(parts) > 2 else parts[0]), parts[-1]
        replicas = entry.get("replicas")
        out[(group, kind)] = CustomWorkloadKind(
            _path(entry["template"]),
            _path(replicas) if isinstance(replicas, str) else (),
            bool(entry.get("per-node", False)),
        )
    return out


def _schema_error(data: Mapping[str, Any], error: Any, source: str) -> str:
    """``FILE:LINE: PATH: MESSAGE`` for a schema error: the line of the deepest key of its path,
    and for a key the schema does not know, that key's line and the keys it does know."""
    line = line_of(data, default=1)
    node: Any = data
    for key in error.absolute_path:
        if isinstance(node, Mapping) and key in node:
            line = line_of(node, key, line)
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
        else:
            break
    known = error.schema.get("properties") if isinstance(error.schema, Mapping) else None
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping) and known is not None:
        unknown = [k for k in error.instance if k not in known]
        if unknown:
            line = line_of(error.instance, unknown[0], line)
    return f"{source}:{line}: {where(error)}: {expected(error)}"


def _shown(name: Any) -> str:
    """A name from the file in a message: quoted when it is a plain name, else not shown."""
    return safe_key(str(name)) or "(not a rule or option name)"


def parse_config_text(text: str, source: str) -> Config:
    if source.endswith(".toml"):
        try:
            import tomllib  # type: ignore[import-not-found]
        except ModuleNotFoundError:  # Python 3.10
            raise ConfigError(f"{source}: reading pyproject.toml needs Python 3.11+; use .podfit.yaml") from None
        try:
            data = tomllib.loads(text).get("tool", {}).get("podfit", {})
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{source}: {e}") from None
        return config_from_mapping(data, source)
    try:
        docs = [d.data for d in iter_documents(text) if d.data is not None]
    except Exception as e:  # yaml.YAMLError, YamlLimitError: what broke, never the line's text
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark else getattr(e, "line", 1)
        raise ConfigError(f"{source}:{line}: cannot parse: {getattr(e, 'problem', None) or e}") from None
    if not docs:
        return Config(source=source)
    if len(docs) > 1 or not isinstance(docs[0], Mapping):
        raise ConfigError(f"{source}:1: expected one mapping of podfit's settings (see the README's config section)")
    return config_from_mapping(docs[0], source)


def find_config(directory: str = ".") -> str | None:
    """``.podfit.yaml`` / ``.podfit.yml`` in the directory, else a pyproject.toml with [tool.podfit]."""
    for name in (".podfit.yaml", ".podfit.yml"):
        p = os.path.join(directory, name)
        if os.path.lexists(p):  # whatever it is: reading it says why it cannot be the config
            return p
    p = os.path.join(directory, "pyproject.toml")
    if os.path.lexists(p):
        try:
            text = read_text(p)
        except NotRead:
            return p  # it may configure podfit: reading it again reports why it cannot be read
        if "[tool.podfit]" in text:
            return p
    return None
