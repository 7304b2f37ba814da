"""podfit configuration: ``.podfit.yaml`` or ``[tool.podfit]`` in ``pyproject.toml``."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .catalogue import load_catalogue, resolve
from .loader import LoaderLimits
from .model import CustomWorkloadKind
from .options import OptionError, check_value
from .paths import load_schema
from .reading import NotRead, read_text
from .schema_errors import expected, safe_key, where
from .selection import _norm, glob_matches
from .yamlio import YamlLimits, iter_documents, line_of

__all__ = [
    "Config",
    "ConfigError",
    "config_from_mapping",
    "parse_config_text",
    "find_config",
    "glob_matches",
    "rule_ids",
]


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Config:
    source: str = ""
    disabled: frozenset[str] = frozenset()
    enabled: frozenset[str] | None = None  # None: every rule
    severity: Mapping[str, str] = field(default_factory=dict)
    thresholds: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    ignore: tuple[str, ...] = ()  # path globs of the config's `ignore:` (entries that name no rule)
    exclude: tuple[str, ...] | None = None  # None: podfit.selection.DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    platform: str | None = None
    fail_on: str | None = None
    limits: LoaderLimits = field(default_factory=LoaderLimits)
    clusters: tuple[tuple[str, str], ...] = ()  # (path glob, cluster name), first match wins
    # helm: charts rendered in place (podfit.render): (chart directory, its values files), kube-version
    helm_values: tuple[tuple[str, tuple[str, ...]], ...] = ()
    helm_kube_version: str | None = None
    helm_api_versions: tuple[str, ...] = ()
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

    def path_filter(self, platform: str | None = None, others: Sequence[tuple[str, str]] = ()) -> Any:
        """The :class:`podfit.selection.PathFilter` of this config: its excludes, the config's
        ``ignore:`` path globs, its ``.gitignore`` choice, and the platform profile ``platform``,
        this config file and ``others`` ((path, what it is)) as files never checked as manifests."""
        from .selection import DEFAULT_EXCLUDE, PathFilter

        never = [(platform, "the platform profile (--platform), not a manifest")] if platform else []
        never += [(path, f"{what}, not a manifest") for path, what in others]
        if self.source:
            never.append((self.source, "podfit's config file, not a manifest"))
        return PathFilter(
            exclude=DEFAULT_EXCLUDE if self.exclude is None else self.exclude,
            extend_exclude=self.extend_exclude,
            ignore=self.ignore,
            base=os.path.dirname(self.source) if self.source else "",
            respect_gitignore=self.respect_gitignore,
            never=tuple(never),
            max_file_bytes=self.limits.max_file_bytes,
        )

    def with_selection(
        self,
        *,
        select: Any = None,
        ignore: Any = (),
        exclude: Any = None,
        extend_exclude: Any = (),
        respect_gitignore: bool | None = None,
    ) -> Config:
        """This config with the command line's selection: ``select`` (rule ids) replaces the
        rules it runs, ``ignore`` (rule ids) adds to those it does not, ``exclude`` replaces its
        exclude globs, ``extend_exclude`` adds to them, ``respect_gitignore`` overrides."""
        from dataclasses import replace

        return replace(
            self,
            enabled=frozenset(select) if select else self.enabled,
            disabled=self.disabled | frozenset(ignore),
            exclude=tuple(exclude) if exclude else self.exclude,
            extend_exclude=self.extend_exclude + tuple(extend_exclude),
            respect_gitignore=self.respect_gitignore if respect_gitignore is None else respect_gitignore,
        )


def rule_ids(name: str) -> list[str]:
    """The rule ids ``name`` selects: a rule's id or slug (any case), or an id prefix as ruff takes
    them (``PF1``: PF101, PF102, ...; ``ALL``: every rule); [] when it names none."""
    from .catalogue import load_catalogue

    rule = resolve(name)
    if rule is not None:
        return [rule.id]
    key = name.strip().upper()
    cat = load_catalogue()
    if key == "ALL":
        return sorted(cat)
    if re.fullmatch(r"PF\d{1,2}", key):
        return sorted(r for r in cat if r.startswith(key))
    return []


def _ids(values: Any, source: str, what: str, line: int) -> frozenset[str]:
    out: set[str] = set()
    for v in values or ():
        ids = rule_ids(str(v))
        if not ids:
            raise ConfigError(f"{source}:{line}: {what}: unknown rule {_shown(v)} (see `podfit rules`)")
        out.update(ids)
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
                if option.name == "kubernetes-version":
                    _check_kubernetes_version(rule.id, value, at)
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
    for key, value in lim.items():
        # (the schema's "integer" takes 1e23 from TOML, a float with no fraction)
        if not isinstance(value, int) or value > _MAX_LIMIT:
            raise ConfigError(
                f"{source}:{line_of(lim, key, 1)}: limits/{key}: {value!r} is not a whole number from 1 to {_MAX_LIMIT:,}"
            )
    defaults = LoaderLimits()
    limits = LoaderLimits(
        max_file_bytes=lim.get("max-file-bytes", defaults.max_file_bytes),
        yaml=YamlLimits(
            max_nodes=lim.get("max-yaml-nodes", defaults.yaml.max_nodes),
            max_depth=lim.get("max-depth", defaults.yaml.max_depth),
            max_document_bytes=lim.get("max-document-bytes", defaults.yaml.max_document_bytes),
        ),
    )
    # `ignore:` as ruff has it: rule ids and slugs (and id prefixes such as PF1) not to run; an
    # entry that names no rule is a path glob, as the key always took
    ignore_rules = [v for v in data.get("ignore") or () if rule_ids(str(v))]
    ignore_paths = [str(v) for v in data.get("ignore") or () if not rule_ids(str(v))]
    for v in ignore_paths:
        if re.fullmatch(r"(?i)pf\d{1,3}", v.strip()):
            raise ConfigError(
                f"{source}:{line_of(data, 'ignore', 1)}: ignore: unknown rule {_shown(v)} (see `podfit rules`)"
            )
    selected = None
    for key in ("enable", "select"):
        if key in data:
            ids = _ids(data.get(key), source, key, line_of(data, key, 1))
            selected = ids if selected is None else selected | ids
    disabled = _ids(data.get("disable"), source, "disable", line_of(data, "disable", 1)) | _ids(
        ignore_rules, source, "ignore", line_of(data, "ignore", 1)
    )
    if not any((selected is None or r in selected) and r not in disabled for r in load_catalogue()):
        chose = next((k for k in ("select", "enable") if k in data), "enable")
        dropped = next((k for k in ("disable", "ignore") if k in data), "disable")
        key = (
            chose
            if selected is not None and not selected
            else f"{chose}/{dropped}"
            if selected is not None
            else dropped
        )
        raise ConfigError(
            f"{source}:{line_of(data, key.split('/')[0], 1)}: {key}: no rule is left to run, so nothing would be "
            "checked (remove the key to run every rule; `podfit rules` lists them)"
        )
    return Config(
        limits=limits,
        source=source,
        disabled=disabled,
        enabled=selected,
        severity=by_id(data.get("severity"), "severity"),
        thresholds=checked,
        ignore=tuple(ignore_paths),
        exclude=tuple(str(v) for v in data["exclude"]) if "exclude" in data else None,
        extend_exclude=tuple(str(v) for v in data.get("extend-exclude") or ()),
        respect_gitignore=bool(data.get("respect-gitignore", True)),
        clusters=tuple((str(k), str(v)) for k, v in (data.get("clusters") or {}).items()),
        workload_kinds=_workload_kinds(data.get("workload-kinds") or {}),
        platform=platform,
        fail_on=data.get("fail-on"),
        helm_values=tuple(
            (str(k), tuple(map(str, v))) for k, v in ((data.get("helm") or {}).get("values") or {}).items()
        ),
        helm_kube_version=(data.get("helm") or {}).get("kube-version"),
        helm_api_versions=tuple(map(str, (data.get("helm") or {}).get("api-versions") or ())),
    )


# The largest value of a ``limits:`` key: 1 TiB (bytes), or as many nodes.
_MAX_LIMIT = 2**40
_VERSION = re.compile(r"v?([0-9]{1,4})\.([0-9]{1,4})(?:\.[0-9]{1,6})?(?:[-+][0-9A-Za-z.+-]{0,60})?")


def _check_kubernetes_version(rule_id: str, value: str, where: str) -> None:
    """A rule's ``kubernetes-version``: a release such as 1.30 (or latest); for PF902, one whose
    schemas are shipped (kubernetes-validate's versions), which it would otherwise replace with
    the nearest it has or, below the oldest, skip."""
    if value in ("", "latest"):
        return
    m = _VERSION.fullmatch(value.strip())
    if m is None:
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise ConfigError(f"{where}: {shown!r} is not a Kubernetes version (e.g. 1.30, or latest)")
    if rule_id != "PF902":
        return
    from .schemas_k8s import parse_version, shipped_versions

    shipped = shipped_versions()
    if shipped and not parse_version(shipped[0]) <= (int(m.group(1)), int(m.group(2))) <= parse_version(shipped[-1]):
        raise ConfigError(
            f"{where}: no schemas for Kubernetes {value}: the known versions are {shipped[0]} to {shipped[-1]}"
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
