"""The rule catalogue: every rule's identity, options, required facts and prose, each written once,
beside the rule.

* A Rego rule's package METADATA: ``title``, ``description`` (the summary) and ``custom`` (``id``,
  ``severity``, ``slug``, ``source``, ``requires``, ``options``, and the prose: ``rationale``,
  ``fix``, ``example``); its category is its package's, ``podfit.<category>.<slug>``.
* A Python rule module: the constants ``ID``, ``SLUG``, ``TITLE``, ``SEVERITY``, ``CATEGORY``,
  ``OPTIONS`` and ``REQUIRES`` (see :mod:`podfit.rules`; found by :mod:`podfit.registry`), and the prose in its docstring, whose
  Markdown sections are :data:`DOC_SECTIONS` in that order (an ``## Implementation`` section for
  maintainers may follow; the user docs leave it out). The docstring and ``CATEGORY`` are read from
  the module's source, so that a run imports only the rules it runs.
* ``catalogue.yaml``: the whole entry of the findings the loader and the pipeline raise, which have
  no rule file.

:func:`catalogue_problems` lists a field written twice or missing; ``podfit docs --check`` and the
tests fail on them, so a user's run never meets an incomplete rule.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from .options import Option, option_from_metadata
from .registry import cached, declarations

__all__ = [
    "Rule",
    "load_catalogue",
    "get_rule",
    "resolve",
    "catalogue_problems",
    "rego_metadata",
    "rule_doc",
    "CATEGORIES",
    "DOC_SECTIONS",
]

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
    # the rules whose finding on the same container (or its whole pod) leaves this one unreported
    # (one cause, one finding): `podfit fix` counts this one as shown by fixing them, not brought
    masked_by: tuple[str, ...] = ()
    defined_in: str = ""  # the file that declares the rule's identity

    @property
    def help_uri(self) -> str:
        return f"https://github.com/podfit/podfit/blob/main/docs/rules.md#{self.id.lower()}-{self.slug}"

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)


_RULE_FIELDS = {f.name for f in fields(Rule)}
_REQUIRED = ("slug", "title", "severity", "category", "summary", "rationale", "source", "fix")
_REGO_CUSTOM = ("id", "severity", "slug", "source", "requires", "options", "masked_by", "rationale", "fix", "example")
_METADATA = re.compile(r"^# METADATA\n((?:#.*\n)+?)package\s+([\w.]+)", re.M)

# A Python rule's docstring: these Markdown sections, in this order, each holding one field.
DOC_SECTIONS = (
    ("What it does", "summary"),
    ("Why it matters", "rationale"),
    ("Example", "example"),
    ("How to fix", "fix"),
    ("Source", "source"),
)
_MAINTAINERS = "Implementation"  # optional last section: for whoever changes the rule, not in the docs
_HEADING = re.compile(r"^## (.*)\n", re.M)
_FENCED_YAML = re.compile(r"\A```yaml\n(.*)\n```\Z", re.S)
_DOCSTRING = re.compile(r"\A(?:[ \t]*(?:#[^\n]*)?\n)*([rR]?(\"\"\"|''').*?\2)", re.S)
_CATEGORY = re.compile(r"^CATEGORY(?:\s*:\s*str)?\s*=\s*[\"']([^\"'\n]*)[\"']", re.M)


def rule_doc(doc: str) -> tuple[dict[str, str], list[str]]:
    """The prose fields of a Python rule's docstring, and what is wrong with its sections.

    A prose section is paragraphs of Markdown, each paragraph's lines joined into one line; the
    example is one fenced ``yaml`` block, taken verbatim."""
    parts = _HEADING.split(doc.strip() + "\n")
    problems = ["text before its first section"] if parts[0].strip() else []
    names = parts[1::2]
    sections = dict(zip(names, parts[2::2], strict=True))
    expected = [name for name, _ in DOC_SECTIONS]
    if names not in (expected, [*expected, _MAINTAINERS]):
        problems.append(f"sections {names}, expected {expected} (then optionally {_MAINTAINERS!r})")
    out: dict[str, str] = {}
    for name, key in DOC_SECTIONS:
        body = sections.get(name, "").strip()
        if key == "example":
            m = _FENCED_YAML.match(body)
            if body and m is None:
                problems.append("its Example is not one ```yaml block")
            out[key] = m.group(1) + "\n" if m else ""
        else:
            paragraphs = re.split(r"\n[ \t]*\n", body)
            out[key] = "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs if p.strip())
    return out, problems


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
        package, meta = found
        custom = meta.get("custom") or {}
        where = str(path.relative_to(root.parent) if root.parent in path.parents else path)
        out[str(custom.get("id"))] = {
            "id": custom.get("id"),
            "slug": custom.get("slug"),
            "title": meta.get("title"),
            "severity": custom.get("severity"),
            "category": package.split(".")[1] if package.count(".") == 2 else "",  # podfit.<category>.<slug>
            "summary": " ".join(str(meta.get("description", "")).split()),
            "rationale": " ".join(str(custom.get("rationale", "")).split()),
            "source": " ".join(str(custom.get("source", "")).split()),
            "fix": " ".join(str(custom.get("fix", "")).split()),
            "example": str(custom["example"]).rstrip("\n") + "\n" if custom.get("example") else "",
            "requires": tuple(custom.get("requires") or ()),
            "options": tuple(option_from_metadata(o, where) for o in custom.get("options") or ()),
            "masked_by": tuple(str(r) for r in custom.get("masked_by") or ()),
            "engine": "rego",
            "defined_in": where,
            "problems": [f"unknown METADATA custom field {k!r}" for k in sorted(set(custom) - set(_REGO_CUSTOM))],
        }
    return out


def _module_prose(rules_dir: Path, module: str) -> tuple[str | None, str]:
    """(docstring, CATEGORY) of a rule module, read from its source: importing every rule module
    would cost a run more than the rest of a one-file check. Without the source (an install of
    bytecode only) the module is imported."""
    try:
        source = (rules_dir / f"{module}.py").read_text(encoding="utf-8")
    except OSError:
        imported = importlib.import_module(f"{__package__}.rules.{module}")
        return imported.__doc__, str(getattr(imported, "CATEGORY", ""))
    doc = _DOCSTRING.match(source)
    category = _CATEGORY.search(source)
    return (ast.literal_eval(doc.group(1)) if doc else None), (category.group(1) if category else "")


def _python_rules() -> dict[str, dict[str, Any]]:
    rules_dir = Path(__file__).resolve().parent / "rules"
    out: dict[str, dict[str, Any]] = {}
    for rule_id, decl in declarations().items():
        doc, category = _module_prose(rules_dir, decl["module"])
        prose, problems = rule_doc(doc or "")
        out[rule_id] = {
            "id": rule_id,
            "slug": decl["slug"],
            "title": decl["title"],
            "severity": decl["severity"],
            "category": category,
            **prose,
            "requires": decl["requires"],
            "options": decl["options"],
            "engine": "python",
            "defined_in": f"podfit.rules.{decl['module']}",
            "problems": [f"docstring: {p}" for p in problems] if doc else ["no docstring"],
        }
    return out


def _merge() -> tuple[dict[str, Rule], list[str]]:
    # beside this module in a checkout and in an installed wheel alike (importlib.resources would
    # cost a one-file check 10 ms of imports)
    text = (Path(__file__).resolve().parent / "catalogue.yaml").read_text(encoding="utf-8")
    written = {str(e["id"]): dict(e) for e in yaml.load(text, Loader=_LOADER)["rules"]}
    declared = {**_rego_rules(), **_python_rules()}
    problems: list[str] = []
    rules: dict[str, Rule] = {}
    for rule_id in sorted(set(written) | set(declared)):
        decl = declared.get(rule_id)
        if decl is not None:
            if rule_id in written:
                problems.append(f"{rule_id}: catalogue.yaml repeats the rule {decl['defined_in']} declares")
            problems += [f"{rule_id}: {p} ({decl['defined_in']})" for p in decl.pop("problems")]
            entry = decl
        else:
            entry = written[rule_id]
            entry.setdefault("engine", "python")
            entry.setdefault("defined_in", "catalogue.yaml")
        entry["requires"] = tuple(entry.get("requires") or ())
        entry["options"] = tuple(entry.get("options") or ())
        entry["masked_by"] = tuple(entry.get("masked_by") or ())
        unknown = set(entry) - _RULE_FIELDS
        if unknown:
            problems.append(f"{rule_id}: unknown catalogue fields {sorted(unknown)}")
        for key in _REQUIRED:
            if not entry.get(key):
                problems.append(f"{rule_id}: no {key} ({entry.get('defined_in')})")
                entry[key] = entry.get(key) or ""
        if entry["severity"] and entry["severity"] not in SEVERITIES:
            problems.append(f"{rule_id}: severity {entry['severity']!r} is not one of {', '.join(SEVERITIES)}")
        if entry["category"] and entry["category"] not in CATEGORIES:
            problems.append(f"{rule_id}: category {entry['category']!r} is not one of {', '.join(CATEGORIES)}")
        rules[rule_id] = Rule(**{k: v for k, v in entry.items() if k in _RULE_FIELDS})
    return rules, problems


def _merged_json() -> dict[str, Any]:
    rules, problems = _merge()
    return {"rules": [asdict(rule) for rule in rules.values()], "problems": problems}


def _rule_from_json(entry: Mapping[str, Any]) -> Rule:
    options = tuple(
        Option(**{**o, "choices": tuple(o["choices"]) if o["choices"] is not None else None}) for o in entry["options"]
    )
    return Rule(
        **{
            **entry,
            "requires": tuple(entry["requires"]),
            "masked_by": tuple(entry.get("masked_by", ())),
            "options": options,
        }
    )


@lru_cache(maxsize=1)
def _catalogue() -> tuple[Mapping[str, Rule], tuple[str, ...]]:
    """The merged catalogue, cached with the installation's other derived data
    (:func:`podfit.registry.cached`): merging reads every Rego file and rule module's source and
    parses their METADATA, about a tenth of a one-file check."""
    data = cached("catalogue", _merged_json)
    try:
        rules = {entry["id"]: _rule_from_json(entry) for entry in data["rules"]}
        problems = tuple(str(p) for p in data["problems"])
    except (KeyError, TypeError, ValueError, AttributeError):  # a cache file of another shape
        rules = {}
    # a file of another shape, or one that lost a rule, is merged afresh: a rule missing from the
    # catalogue would not run, and a field of another type would fail where it is used
    if not rules or not set(declarations()) <= set(rules) or not all(map(_well_typed, rules.values())):
        merged, merge_problems = _merge()
        return merged, tuple(merge_problems)
    return rules, problems


def _well_typed(rule: Rule) -> bool:
    strings = (getattr(rule, f.name) for f in fields(Rule) if f.name not in ("requires", "options", "masked_by"))
    return (
        all(isinstance(v, str) for v in strings)
        and all(isinstance(r, str) for r in rule.requires + rule.masked_by)
        and all(
            isinstance(o.name, str)
            and isinstance(o.type, str)
            and isinstance(o.doc, str)
            and (o.choices is None or all(isinstance(c, str) for c in o.choices))
            and (o.minimum is None or type(o.minimum) in (int, float))
            for o in rule.options
        )
    )


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
