"""Admission policies from podfit's own Rego: Gatekeeper ConstraintTemplates and Constraints.

Each per-object rule that can be judged on one object as the API server admits it becomes one
ConstraintTemplate whose Rego is podfit's policy text from policies/, wrapped rather than
rewritten: the modules move under Gatekeeper's ``lib.`` namespace (Gatekeeper lets a template
reference nothing else), ``rego.metadata.chain()`` becomes the literal METADATA of the rule
(Gatekeeper parses no annotations), and the entry point evaluates the rule's findings with
``input`` bound to ``input.review.object``. Everything here is a pure function of the policy
texts; the CLI (podfit.commands.export) reads the files and writes the stream."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = [
    "ADMISSION_KINDS",
    "CI_ONLY_KINDS",
    "NOT_AT_ADMISSION",
    "SEVERITY_ACTION",
    "PolicySource",
    "RegoRule",
    "gatekeeper_stream",
    "parse_rule",
    "rule_modules",
]

# The kinds the exported policies match, by API group: the pod and the built-in workloads that
# carry a pod template (podfit.lib.k8s.workload_kinds, ReplicationController left out as legacy).
ADMISSION_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("", ("Pod",)),
    ("apps", ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")),
    ("batch", ("Job", "CronJob")),
)

# Workload CRDs podfit reads in CI but the exported policies do not match: their controllers create
# Pods (or ReplicaSets), which the policies then judge at admission.
CI_ONLY_KINDS = (
    "argoproj.io/Rollout",
    "serving.knative.dev/Service",
    "serving.knative.dev/Configuration",
    "apps.kruise.io/CloneSet",
    "keda.sh/ScaledJob",
    "apps.openshift.io/DeploymentConfig",
)

# Rego rules that need more than the one object under review, and why (the Python rules of
# `podfit check`, packing, quotas and the rest across objects, are never exported).
NOT_AT_ADMISSION: Mapping[str, str] = {
    "PF202": "needs the nodes' logical CPU count (platform profile)",
    "PF204": "needs the nodes' CPU Manager and SMT settings (platform profile)",
    "PF205": "needs the kubelet's reserved CPUs (platform profile)",
    "PF302": "needs the nodes' NUMA layout (platform profile)",
}

# Python rules by family, why not at admission (for the stream's head and the help).
CI_ONLY_FAMILIES = (
    "packing onto nodes, namespace quotas and LimitRanges, PodDisruptionBudgets and autoscalers:"
    " they compare several objects",
    "usage (Prometheus) and vSphere CRX sizing: they need measured usage or the platform",
    "schema, rendering and suppression checks (PF9xx): they judge the files, not the objects",
)

SEVERITY_ACTION = {"error": "deny", "warning": "warn", "info": "dryrun"}

SUPPRESS_PREFIX = "ignore.podfit.io/"


@dataclass(frozen=True)
class PolicySource:
    """One Rego module of policies/: its path relative to policies/ and its text."""

    path: str
    text: str


@dataclass(frozen=True)
class RegoRule:
    """A rule module: its id, slug, severity, title, package and METADATA custom block."""

    id: str
    slug: str
    severity: str
    title: str
    package: str
    custom: Mapping[str, Any]
    source: PolicySource


_PACKAGE = re.compile(r"^package\s+(\S+)", re.MULTILINE)
_DIRECT = re.compile(r"\bdata\.podfit\.lib\.(\w+)\.")


def _metadata(text: str) -> dict[str, Any]:
    """The YAML of the module's first ``# METADATA`` comment block."""
    lines = text.splitlines()
    try:
        start = lines.index("# METADATA")
    except ValueError:
        return {}
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith("#"):
            break
        block.append(line[2:] if line.startswith("# ") else line[1:])
    loaded = yaml.safe_load("\n".join(block))
    return loaded if isinstance(loaded, dict) else {}


def parse_rule(source: PolicySource) -> RegoRule | None:
    """The rule a module defines, or None for a library module."""
    meta = _metadata(source.text)
    custom = meta.get("custom")
    match = _PACKAGE.search(source.text)
    if not isinstance(custom, dict) or not isinstance(custom.get("id"), str) or match is None:
        return None
    return RegoRule(
        id=custom["id"],
        slug=str(custom.get("slug", "")),
        severity=str(custom.get("severity", "")),
        title=str(meta.get("title", "")),
        package=match.group(1),
        custom=custom,
        source=source,
    )


def rule_modules(sources: Sequence[PolicySource]) -> list[RegoRule]:
    """The rule modules among the sources (tests left out), by id."""
    rules = [parse_rule(s) for s in sources if not s.path.endswith("_test.rego")]
    return sorted((r for r in rules if r is not None), key=lambda r: r.id)


def _libs(sources: Sequence[PolicySource]) -> list[PolicySource]:
    """The library modules the rules import (lib/, without conftest's, which walks every rule)."""
    return [
        s
        for s in sources
        if s.path.startswith("lib/") and not s.path.endswith("_test.rego") and s.path != "lib/conftest.rego"
    ]


def _under_lib(text: str, chain: str | None = None) -> str:
    """A module moved under Gatekeeper's lib namespace: its package and every data.podfit
    reference; with chain, rego.metadata.chain() replaced by that literal."""
    text = re.sub(r"^package podfit\.", "package lib.podfit.", text, flags=re.MULTILINE)
    # a library function called by its full data reference: Gatekeeper's rewriter moves imports
    # but not such calls, so each such library is imported under an alias and called through it
    body = text.split("\n")
    direct = sorted({m for line in body if not line.startswith("import ") for m in _DIRECT.findall(line)})
    if direct:
        body = [line if line.startswith("import ") else _DIRECT.sub(r"gk_\1.", line) for line in body]
        at = next(i for i, line in enumerate(body) if line.startswith("package "))
        body[at + 1 : at + 1] = ["", *(f"import data.podfit.lib.{m} as gk_{m}" for m in direct)]
        text = "\n".join(body)
    text = text.replace("data.podfit.", "data.lib.podfit.")
    if chain is not None:
        text = text.replace("rego.metadata.chain()", chain)
    return text


def _entry_point(rule: RegoRule) -> str:
    """The template's own module: the rule's findings on the reviewed object, unless the object
    suppresses the rule by annotation; the constraint's options stand for podfit's config."""
    names = sorted({f"{SUPPRESS_PREFIX}{rule.id.lower()}", f"{SUPPRESS_PREFIX}{rule.slug.lower()}"})
    return f"""package podfit{rule.id.lower()}

import data.lib.podfit.lib.k8s

# the rule's options, as podfit's config gives them (options: {{{rule.id}: {{...}}}})
_options := {{"{rule.id}": object.get(input, ["parameters", "options"], {{}})}}

# an ignore.podfit.io/<id or slug> annotation on the object or its pod template
_suppressed if {{
	some key, _ in k8s.annotations(input.review.object)
	lower(key) in {json.dumps(names)}
}}

violation contains {{"msg": msg, "details": {{"rule": f.rule, "container": f.container}}}} if {{
	not _suppressed
	findings := data.lib.{rule.package}.findings with input as input.review.object
		with data.lib.podfit.options as _options
	some f in findings
	msg := concat("", [f.rule, " ", f.severity, ": ", f.message])
}}
"""


def _option_schema(rule: RegoRule) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for opt in rule.custom.get("options") or ():
        if not isinstance(opt, dict) or not isinstance(opt.get("name"), str):
            continue
        schema: dict[str, Any] = {"type": opt.get("type", "string")}
        for key in ("minimum", "maximum"):
            if key in opt:
                schema[key] = opt[key]
        if "doc" in opt:
            schema["description"] = str(opt["doc"])
        props[opt["name"]] = schema
    return {"type": "object", "properties": props}


def _kind_name(rule: RegoRule) -> str:
    return f"Podfit{rule.id.upper()}"


def template(rule: RegoRule, libs: Sequence[PolicySource]) -> dict[str, Any]:
    """The ConstraintTemplate of one rule."""
    chain = json.dumps([{"annotations": {"custom": dict(rule.custom)}}], sort_keys=True)
    kind = _kind_name(rule)
    return {
        "apiVersion": "templates.gatekeeper.sh/v1",
        "kind": "ConstraintTemplate",
        "metadata": {
            "name": kind.lower(),
            "annotations": {"podfit.io/rule": rule.id, "description": f"{rule.id} {rule.title}"},
        },
        "spec": {
            "crd": {
                "spec": {
                    "names": {"kind": kind},
                    "validation": {
                        "openAPIV3Schema": {"type": "object", "properties": {"options": _option_schema(rule)}}
                    },
                }
            },
            "targets": [
                {
                    "target": "admission.k8s.gatekeeper.sh",
                    "code": [
                        {
                            "engine": "Rego",
                            "source": {
                                "version": "v1",
                                "rego": _entry_point(rule),
                                "libs": [_under_lib(s.text) for s in libs] + [_under_lib(rule.source.text, chain)],
                            },
                        }
                    ],
                }
            ],
        },
    }


def constraint(rule: RegoRule, options: Mapping[str, Any], excluded_namespaces: Sequence[str]) -> dict[str, Any]:
    """The Constraint of one rule: the kinds it matches, CREATE and UPDATE (Gatekeeper's
    admission webhook reviews both), the action from the rule's severity."""
    match: dict[str, Any] = {"kinds": [{"apiGroups": [g], "kinds": list(ks)} for g, ks in ADMISSION_KINDS]}
    if excluded_namespaces:
        match["excludedNamespaces"] = list(excluded_namespaces)
    spec: dict[str, Any] = {"enforcementAction": SEVERITY_ACTION.get(rule.severity, "dryrun"), "match": match}
    if options:
        spec["parameters"] = {"options": dict(options)}
    return {
        "apiVersion": "constraints.gatekeeper.sh/v1beta1",
        "kind": _kind_name(rule),
        "metadata": {"name": f"podfit-{rule.slug or rule.id.lower()}", "annotations": {"podfit.io/rule": rule.id}},
        "spec": spec,
    }


def header(rules: Sequence[RegoRule], left_out: Mapping[str, str]) -> str:
    """The comment at the head of the stream: what it enforces and what stays in CI."""
    lines = [
        "podfit admission policies for Gatekeeper (podfit export gatekeeper)",
        "rules: " + ", ".join(r.id for r in rules),
        "kinds: " + ", ".join(k for _, ks in ADMISSION_KINDS for k in ks) + "; operations CREATE and UPDATE",
        "workload CRDs left to CI (their Pods are judged here): " + ", ".join(CI_ONLY_KINDS),
        "not judged at admission:",
    ]
    lines += [f"  {rid}: {why}" for rid, why in sorted(left_out.items())]
    lines += [f"  {why}" for why in CI_ONLY_FAMILIES]
    return "".join(f"# {line}\n" for line in lines)


def gatekeeper_stream(
    sources: Sequence[PolicySource],
    rule_ids: Sequence[str],
    options: Mapping[str, Mapping[str, Any]],
    excluded_namespaces: Sequence[str],
) -> str:
    """The YAML stream: a header comment, then each rule's ConstraintTemplate and Constraint."""
    by_id = {r.id: r for r in rule_modules(sources)}
    rules = [by_id[i] for i in rule_ids]
    libs = _libs(sources)
    left_out = {i: why for i, why in NOT_AT_ADMISSION.items() if i in by_id}
    docs: list[dict[str, Any]] = []
    for rule in rules:
        docs.append(template(rule, libs))
        docs.append(constraint(rule, options.get(rule.id, {}), excluded_namespaces))
    body = yaml.safe_dump_all(docs, sort_keys=False, width=100)
    return header(rules, left_out) + "---\n" + body


def admission_rules(sources: Sequence[PolicySource]) -> list[RegoRule]:
    """The Rego rules that can be judged on one object at admission."""
    return [r for r in rule_modules(sources) if r.id not in NOT_AT_ADMISSION]


# ValidatingAdmissionPolicy: CEL written per rule (podfit's Rego cannot run there), so only the
# rules whose CEL is written and held equal to `podfit check` by tests/test_admission.py.
_SPEC = (
    "object.kind == 'Pod' ? object.spec : object.kind == 'CronJob' ? "
    "object.spec.jobTemplate.spec.template.spec : object.spec.template.spec"
)
_CONTAINERS = "variables.spec.containers + (has(variables.spec.initContainers) ? variables.spec.initContainers : [])"


def _q(field: str) -> str:
    return f"quantity(string({field}))"


def _valid(field: str) -> str:
    return f"isQuantity(string({field}))"


_NONZERO = (
    "has(c.resources) && ["
    + ", ".join(
        f"(has(c.resources.{kind}) && ['cpu', 'memory'].exists(r, r in c.resources.{kind} && "
        f"(!{_valid(f'c.resources.{kind}[r]')} || {_q(f'c.resources.{kind}[r]')}.compareTo(quantity('0')) != 0)))"
        for kind in ("requests", "limits")
    )
    + "].exists(b, b)"
)

CEL_RULES: Mapping[str, tuple[str, str]] = {
    # PF103: a request above the limit of the same resource
    "PF103": (
        "variables.containers.all(c, !has(c.resources) || !has(c.resources.requests) || "
        "!has(c.resources.limits) || ['cpu', 'memory'].all(r, !(r in c.resources.requests) || "
        "!(r in c.resources.limits) || "
        f"!{_valid('c.resources.requests[r]')} || !{_valid('c.resources.limits[r]')} || "
        f"{_q('c.resources.requests[r]')}.compareTo({_q('c.resources.limits[r]')}) <= 0))",
        "a container requests more CPU or memory than its limit",
    ),
    # PF105: no container sets a non-zero CPU or memory request or limit, nor the pod
    "PF105": (
        f"has(variables.spec.resources) || variables.containers.exists(c, {_NONZERO})",
        "no container sets a CPU or memory request or limit, so the pod is BestEffort",
    ),
}

VAP_ACTIONS = {"error": ["Deny"], "warning": ["Warn"], "info": ["Audit"]}

_RESOURCES = {
    "": ["pods"],
    "apps": ["deployments", "statefulsets", "daemonsets", "replicasets"],
    "batch": ["jobs", "cronjobs"],
}


def vap_policy(rule: RegoRule) -> dict[str, Any]:
    """The ValidatingAdmissionPolicy of one rule whose CEL is written."""
    expression, message = CEL_RULES[rule.id]
    names = sorted({f"{SUPPRESS_PREFIX}{rule.id.lower()}", f"{SUPPRESS_PREFIX}{rule.slug.lower()}"})
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": f"podfit-{rule.slug or rule.id.lower()}", "annotations": {"podfit.io/rule": rule.id}},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [g], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": rs}
                    for g, rs in _RESOURCES.items()
                ]
            },
            "matchConditions": [
                {
                    "name": "not-suppressed",
                    "expression": "!has(object.metadata.annotations) || !object.metadata.annotations.exists(k, "
                    f"k.lowerAscii() in {json.dumps(names)})",
                }
            ],
            "variables": [{"name": "spec", "expression": _SPEC}, {"name": "containers", "expression": _CONTAINERS}],
            "validations": [{"expression": expression, "message": f"{rule.id} {rule.severity}: {message}"}],
        },
    }


def vap_binding(rule: RegoRule, excluded_namespaces: Sequence[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "policyName": f"podfit-{rule.slug or rule.id.lower()}",
        "validationActions": VAP_ACTIONS.get(rule.severity, ["Audit"]),
    }
    if excluded_namespaces:
        spec["matchResources"] = {
            "namespaceSelector": {
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(excluded_namespaces)}
                ]
            }
        }
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"podfit-{rule.slug or rule.id.lower()}", "annotations": {"podfit.io/rule": rule.id}},
        "spec": spec,
    }


def vap_stream(sources: Sequence[PolicySource], rule_ids: Sequence[str], excluded_namespaces: Sequence[str]) -> str:
    """The YAML stream of ValidatingAdmissionPolicies and bindings for the rules with CEL."""
    by_id = {r.id: r for r in rule_modules(sources)}
    rules = [by_id[i] for i in rule_ids if i in CEL_RULES]
    docs: list[dict[str, Any]] = []
    for rule in rules:
        docs += [vap_policy(rule), vap_binding(rule, excluded_namespaces)]
    head = "".join(
        f"# {line}\n"
        for line in [
            "podfit ValidatingAdmissionPolicies (podfit export vap)",
            "rules with CEL: " + ", ".join(r.id for r in rules),
            "the other per-object rules run at admission through podfit export gatekeeper",
        ]
    )
    return head + "---\n" + yaml.safe_dump_all(docs, sort_keys=False, width=100)
