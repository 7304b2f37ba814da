"""The rule catalogue: every rule's identity, options, required facts and prose, each written once.

* A Rego rule's identity lives in its package's METADATA: ``title``, ``description`` (the summary)
  and ``custom`` (``id``, ``severity``, ``slug``, ``source``, ``requires``, ``options``).
* A Python rule module declares ``ID``, ``SLUG``, ``TITLE``, ``SEVERITY``, ``OPTIONS`` and
  ``REQUIRES`` (see :mod:`podfit.rules`; found by :mod:`podfit.registry`).
* ``catalogue.yaml`` holds the prose (category, rationale, fix, example, and for Python rules the
  summary and source), and the whole entry of the rules the loader and pipeline raise.

:func:`catalogue_problems` lists a field written twice or missing; ``podfit docs --check`` and the
tests fail on them, so a user's run never meets an incomplete rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from .options import Option, option_from_metadata
from .registry import declarations

__all__ = ["Rule", "load_catalogue", "get_rule", "resolve", "catalogue_problems", "rego_metadata", "CATEGORIES"]

CATEGORIES = ("resources", "cpu", "numa", "packing", "vsphere", "capacity", "network", "input")
SEVERITIES = ("error", "warning", "info")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # LibYAML: ~10× faster, read at every start


@dataclass(frozen=True)
class Rule:
    id: str
    slug: str
    title: str
    severity: str
    engine: str
    category: str
    summary: str
    rationale: str
    source: str
    fix: str
    requires: tuple[str, ...] = ()
    example: str = ""
    options: tuple[Option, ...] = ()
    defined_in: str = ""  # the file that declares the rule's identity

    @property
    def help_uri(self) -> str:
        return f"https://github.com/podfit/podfit/blob/main/docs/rules.md#{self.id.lower()}-{self.slug}"

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)


_RULE_FIELDS = {f.name for f in fields(Rule)}
# what each kind of declaration owns; catalogue.yaml must not repeat it
_REGO_OWNS = ("id", "slug", "title", "severity", "summary", "source", "requires", "options", "engine")
_PYTHON_OWNS = ("id", "slug", "title", "severity", "requires", "options", "engine")
_METADATA = re.compile(r"^# METADATA\n((?:#.*\n)+?)package\s+([\w.]+)", re.M)


def rego_metadata(source: str) -> tuple[str, dict[str, Any]] | None:
    """(package, package METADATA) of a Rego module, or None when it has none."""
    m = _METADATA.search(source)
    if m is None:
        return None
    text = "\n".join(line[2:] if line.startswith("# ") else line[1:] for line in m.group(1).splitlines())
    return m.group(2), yaml.load(text, Loader=_LOADER) or {}


def _rego_rules() -> dict[str, dict[str, Any]]:
    from .paths import policies_dir

    out: dict[str, dict[str, Any]] = {}
    root = policies_dir()
    for path in sorted(Path(root).rglob("*.rego")):
        if path.name.endswith("_test.rego") or path.parent.name == "lib":
            continue
        found = rego_metadata(path.read_text(encoding="utf-8"))
        if found is None:
            continue
        _, meta = found
        custom = meta.get("custom") or {}
        where = str(path.relative_to(root.parent) if root.parent in path.parents else path)
        out[str(custom.get("id"))] = {
            "id": custom.get("id"),
            "slug": custom.get("slug"),
            "title": meta.get("title"),
            "severity": custom.get("severity"),
            "summary": " ".join(str(meta.get("description", "")).split()),
            "source": " ".join(str(custom.get("source", "")).split()),
            "requires": tuple(custom.get("requires") or ()),
            "options": tuple(option_from_metadata(o, where) for o in custom.get("options") or ()),
            "engine": "rego",
            "defined_in": where,
        }
    return out


def _python_rules() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for rule_id, decl in declarations().items():
        out[rule_id] = {
            "id": rule_id,
            "slug": decl["slug"],
            "title": decl["title"],
            "severity": decl["severity"],
            "requires": decl["requires"],
            "options": decl["options"],
            "engine": "python",
            "defined_in": f"podfit.rules.{decl['module']}",
        }
    return out


def _merge() -> tuple[dict[str, Rule], list[str]]:
    # beside this module in a checkout and in an installed wheel alike (importlib.resources would
    # cost a one-file check 10 ms of imports)
    text = (Path(__file__).resolve().parent / "catalogue.yaml").read_text(encoding="utf-8")
    prose = {str(e["id"]): dict(e) for e in yaml.load(text, Loader=_LOADER)["rules"]}
    declared = {**_rego_rules(), **_python_rules()}
    problems: list[str] = []
    rules: dict[str, Rule] = {}
    for rule_id in sorted(set(prose) | set(declared)):
        entry = dict(prose.get(rule_id) or {})
        decl = declared.get(rule_id)
        if rule_id not in prose:
            problems.append(
                f"{rule_id}: declared in {decl['defined_in'] if decl else '?'} but has no catalogue.yaml entry"
            )
            entry = {"category": "input", "rationale": "", "fix": "", "example": "", "summary": "", "source": ""}
        if decl is not None:
            owns = _REGO_OWNS if decl["engine"] == "rego" else _PYTHON_OWNS
            for key in owns:
                if key != "id" and key in entry:
                    problems.append(f"{rule_id}: catalogue.yaml repeats {key!r}, which {decl['defined_in']} declares")
            entry.update({k: v for k, v in decl.items() if k in owns or k == "defined_in"})
        else:
            entry.setdefault("engine", "python")
            entry.setdefault("defined_in", "catalogue.yaml")
        entry["requires"] = tuple(entry.get("requires") or ())
        entry["options"] = tuple(entry.get("options") or ())
        unknown = set(entry) - _RULE_FIELDS
        if unknown:
            problems.append(f"{rule_id}: unknown catalogue fields {sorted(unknown)}")
        for key in ("slug", "title", "severity", "category", "summary", "rationale", "source", "fix"):
            if not entry.get(key):
                problems.append(f"{rule_id}: no {key} ({entry.get('defined_in')})")
                entry[key] = entry.get(key) or ""
        if entry["severity"] and entry["severity"] not in SEVERITIES:
            problems.append(f"{rule_id}: severity {entry['severity']!r} is not one of {', '.join(SEVERITIES)}")
        rules[rule_id] = Rule(**{k: v for k, v in entry.items() if k in _RULE_FIELDS})
    return rules, problems


@lru_cache(maxsize=1)
def _catalogue() -> tuple[Mapping[str, Rule], tuple[str, ...]]:
    rules, problems = _merge()
    return rules, tuple(problems)


def load_catalogue() -> Mapping[str, Rule]:
    """All rules by id, sorted by id."""
    return _catalogue()[0]


def catalogue_problems() -> tuple[str, ...]:
    """Fields missing or written twice; empty for a consistent catalogue."""
    return _catalogue()[1]


def get_rule(rule_id: str) -> Rule:
    return load_catalogue()[rule_id]


def resolve(name: str) -> Rule | None:
    """A rule by id (case-insensitive) or slug."""
    cat = load_catalogue()
    key = name.strip()
    if key.upper() in cat:
        return cat[key.upper()]
    for rule in cat.values():
        if rule.slug == key.lower():
            return rule
    return None
