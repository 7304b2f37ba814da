"""Kubernetes scheduling semantics: may a pod run on the nodes of a node pool? Pure.

:func:`constraints_from_spec` reads what a pod spec says about placement — ``nodeSelector``,
required node affinity, tolerations, required pod (anti-)affinity and topology spread constraints —
into one frozen :class:`SchedulingConstraints` (:mod:`podfit.workloads` does it once per workload).
:func:`decide` answers for one pod and one node pool (its labels and taints):

* ``fits``: the nodeSelector and the required node affinity match the pool's labels and every
  NoSchedule / NoExecute taint is tolerated;
* ``no``: one of them proves that the pod never runs there;
* ``unknown``: the answer depends on a node label the platform does not describe — a key that is
  neither well-known (:data:`WELL_KNOWN_KEYS`) nor among the pools' labels — or on the node's name
  (``kubernetes.io/hostname`` values, ``matchFields`` on ``metadata.name``), which is unique per
  node and which no pool can give.

Selectors are evaluated in three-valued logic: nodeSelector pairs and the requirements of one
``nodeSelectorTerm`` are ANDed (one ``no`` makes the term ``no``, else one ``unknown`` makes it
``unknown``), the terms are ORed (one ``fits`` makes the affinity ``fits``). Pod label selectors
(anti-affinity, topology spread) are evaluated against pod labels, which are always known.

Node pools always carry the well-known labels (:func:`pool_labels`): ``kubernetes.io/os: linux``,
``kubernetes.io/arch: amd64`` (and their ``beta.`` twins, which the kubelet still sets), unless
the pool says otherwise, ``node.kubernetes.io/instance-type`` = the VM class, and on control-plane
pools ``node-role.kubernetes.io/control-plane`` with its NoSchedule taint (:func:`pool_taints`).
``kubernetes.io/hostname`` exists on every node with a value of its own: it takes part only
through topology (anti-affinity and spread over hostname), and a selector on its value is unknown.

This module imports nothing of podfit's, so the model and the platform can both use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FITS",
    "NO",
    "UNKNOWN",
    "HOSTNAME",
    "WELL_KNOWN_KEYS",
    "Taint",
    "Toleration",
    "Requirement",
    "LabelSelector",
    "NodeSelectorTerm",
    "PodAffinityTerm",
    "SpreadConstraint",
    "SchedulingConstraints",
    "NO_CONSTRAINTS",
    "Decision",
    "pool_labels",
    "pool_taints",
    "described_keys",
    "decide",
    "constraints_from_spec",
    "DAEMONSET_TOLERATIONS",
    "REVISION_KEYS",
    "HostPort",
    "host_ports_from_spec",
]

FITS, NO, UNKNOWN = "fits", "no", "unknown"

HOSTNAME = "kubernetes.io/hostname"
OS = "kubernetes.io/os"
ARCH = "kubernetes.io/arch"
BETA_OS = "beta.kubernetes.io/os"
BETA_ARCH = "beta.kubernetes.io/arch"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CONTROL_PLANE = "node-role.kubernetes.io/control-plane"

# Label keys whose presence and value podfit knows on every node: a selector on them is decided.
WELL_KNOWN_KEYS = frozenset({HOSTNAME, OS, ARCH, BETA_OS, BETA_ARCH, INSTANCE_TYPE, CONTROL_PLANE})

# Label keys the workload controllers add to every pod of one revision (matchLabelKeys on them
# means "pods of the same workload").
REVISION_KEYS = frozenset({"pod-template-hash", "controller-revision-hash"})

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")  # PreferNoSchedule only steers the scheduler


@dataclass(frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"  # NoSchedule | PreferNoSchedule | NoExecute

    def __str__(self) -> str:
        return f"{self.key}{'=' + self.value if self.value else ''}:{self.effect}"


CONTROL_PLANE_TAINT = Taint(CONTROL_PLANE, "", "NoSchedule")


@dataclass(frozen=True)
class Toleration:
    key: str = ""  # empty with operator Exists: every key
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # empty: every effect

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes' ``Toleration.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


# What the DaemonSet controller adds to every DaemonSet pod (network-unavailable only with hostNetwork).
DAEMONSET_TOLERATIONS = (
    Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute"),
    Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute"),
    Toleration("node.kubernetes.io/disk-pressure", "Exists", "", "NoSchedule"),
    Toleration("node.kubernetes.io/memory-pressure", "Exists", "", "NoSchedule"),
    Toleration("node.kubernetes.io/pid-pressure", "Exists", "", "NoSchedule"),
    Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),
)
_HOST_NETWORK_TOLERATION = Toleration("node.kubernetes.io/network-unavailable", "Exists", "", "NoSchedule")


@dataclass(frozen=True)
class Requirement:
    """One ``matchExpressions`` (or ``matchFields``) item."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} ({', '.join(self.values)})"


def _label_requirement(r: Requirement, labels: Mapping[str, str]) -> bool:
    """A label selector requirement against (fully known) labels."""
    has = r.key in labels
    if r.operator == "In":
        return has and labels[r.key] in r.values
    if r.operator == "NotIn":
        return not has or labels[r.key] not in r.values
    if r.operator == "Exists":
        return has
    if r.operator == "DoesNotExist":
        return not has
    return False  # not a label selector operator: the API server rejects it


@dataclass(frozen=True)
class LabelSelector:
    """A ``metav1.LabelSelector``: matchLabels and matchExpressions, ANDed. Empty: every object."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: Mapping[str, str] | Iterable[tuple[str, str]]) -> bool:
        have = labels if isinstance(labels, dict) else dict(labels)
        return all(k in have and have[k] == v for k, v in self.match_labels) and all(
            _label_requirement(r, have) for r in self.match_expressions
        )

    def __str__(self) -> str:
        parts = [f"{k}={v}" for k, v in self.match_labels] + [str(r) for r in self.match_expressions]
        return ", ".join(parts) or "(every pod)"


@dataclass(frozen=True)
class NodeSelectorTerm:
    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()


@dataclass(frozen=True)
class PodAffinityTerm:
    """A required pod (anti-)affinity term. ``selector`` None matches no pod."""

    topology_key: str
    selector: LabelSelector | None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None  # None: not given
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()

    def matches(
        self,
        own_namespace: str,
        own_labels: Mapping[str, str],
        namespace: str,
        labels: Mapping[str, str],
        same_workload: bool,
    ) -> bool | None:
        """Does the term select a pod of ``namespace`` with ``labels``? None when it depends on the
        labels of a namespace (a namespaceSelector on anything but the namespace's name)."""
        if self.selector is None:
            return False
        in_scope = _namespace_in_scope(self, own_namespace, namespace)
        if in_scope is False:
            return False
        if not _label_keys_match(self.match_label_keys, own_labels, labels, same_workload):
            return False
        for key in self.mismatch_label_keys:
            if key in own_labels:
                if labels.get(key) == own_labels[key]:
                    return False
            elif key in REVISION_KEYS and same_workload:
                return False
        if not self.selector.matches(labels):
            return False
        return in_scope


def _label_keys_match(
    keys: tuple[str, ...], own_labels: Mapping[str, str], labels: Mapping[str, str], same_workload: bool
) -> bool:
    """matchLabelKeys: the other pod carries the pod's own value of each key; a revision key the pod
    itself lacks (the controller adds it) matches only pods of the same workload."""
    for key in keys:
        if key in own_labels:
            if labels.get(key) != own_labels[key]:
                return False
        elif key in REVISION_KEYS and not same_workload:
            return False
    return True


def _namespace_in_scope(term: PodAffinityTerm, own: str, other: str) -> bool | None:
    if term.namespace_selector is None and not term.namespaces:
        return other == own
    if other in term.namespaces:
        return True
    sel = term.namespace_selector
    if sel is None:
        return False
    if sel.is_empty:
        return True  # namespaceSelector: {} selects every namespace
    keys = {k for k, _ in sel.match_labels} | {r.key for r in sel.match_expressions}
    if keys <= {"kubernetes.io/metadata.name"}:  # the one namespace label every namespace has
        return sel.matches({"kubernetes.io/metadata.name": other})
    return None


@dataclass(frozen=True)
class SpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str = "DoNotSchedule"
    selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
    match_label_keys: tuple[str, ...] = ()

    def matches(self, own_labels: Mapping[str, str], labels: Mapping[str, str], same_workload: bool) -> bool:
        """Does the constraint count a pod (of the same namespace) with ``labels``?"""
        if self.selector is None:
            return False
        return _label_keys_match(self.match_label_keys, own_labels, labels, same_workload) and self.selector.matches(
            labels
        )


@dataclass(frozen=True)
class SchedulingConstraints:
    """What a pod template says about where its pods may run (required parts only)."""

    node_selector: tuple[tuple[str, str], ...] = ()
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None  # None: no required node affinity
    tolerations: tuple[Toleration, ...] = ()
    anti_affinity: tuple[PodAffinityTerm, ...] = ()
    pod_affinity: tuple[PodAffinityTerm, ...] = ()  # read, not modelled by packing
    spread: tuple[SpreadConstraint, ...] = ()

    @property
    def selects_nodes(self) -> bool:
        return bool(self.node_selector) or self.node_affinity is not None

    def hostname_anti_affinity(self) -> tuple[PodAffinityTerm, ...]:
        return tuple(t for t in self.anti_affinity if t.topology_key == HOSTNAME)

    def hostname_spread(self) -> tuple[SpreadConstraint, ...]:
        return tuple(s for s in self.spread if s.topology_key == HOSTNAME and s.when_unsatisfiable == "DoNotSchedule")


NO_CONSTRAINTS = SchedulingConstraints()


@dataclass(frozen=True)
class Decision:
    """The answer for one pod and one pool, with the reason (for ``no`` and ``unknown``)."""

    answer: str  # FITS | NO | UNKNOWN
    reason: str = ""
    unknown_keys: tuple[str, ...] = ()  # label keys (or fields) that made the answer unknown
    selected: bool | None = True  # nodeSelector and node affinity alone (None: unknown)
    tolerated: bool = True  # every NoSchedule / NoExecute taint tolerated

    @property
    def fits(self) -> bool:
        return self.answer == FITS


# ------------------------------------------------------------------------------- host ports ---

BIND_ALL = ""  # an unset hostIP (and "0.0.0.0", the scheduler's DefaultBindAllHostIP) binds every address


@dataclass(frozen=True, order=True)
class HostPort:
    """A port a pod binds on its node: ``(hostIP, hostPort, protocol)``, hostIP ``""`` for every
    address. The scheduler's NodePorts filter admits at most one pod per node for each: a pod does
    not fit a node where another pod binds a conflicting one (``HostPortInfo.CheckConflict``)."""

    ip: str
    port: int
    protocol: str = "TCP"

    def conflicts(self, other: HostPort) -> bool:
        """The same port and protocol, and the same address or either binding every address."""
        return (
            self.port == other.port
            and self.protocol == other.protocol
            and (self.ip == other.ip or self.ip == BIND_ALL or other.ip == BIND_ALL)
        )

    def __str__(self) -> str:
        return f"{self.ip + ':' if self.ip else ''}{self.port}/{self.protocol}"


def host_ports_from_spec(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    """The host ports a pod binds, as the scheduler counts them: the ``ports`` of its app
    containers (not its init containers) with a hostPort above 0; under ``hostNetwork: true`` the
    API server defaults an unset hostPort to the containerPort. hostIP unset or ``0.0.0.0`` binds
    every address; protocol defaults to TCP. Malformed entries are skipped (the schema check,
    PF902, reports them)."""
    host_network = spec.get("hostNetwork") is True
    out: set[HostPort] = set()
    for c in _l(spec.get("containers")):
        if not isinstance(c, dict):
            continue
        for port in _l(c.get("ports")):
            if not isinstance(port, dict):
                continue
            number = port.get("hostPort")
            if (number is None or number == 0) and host_network:
                number = port.get("containerPort")
            if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
                continue
            ip = _s(port.get("hostIP"))
            protocol = _s(port.get("protocol")) or "TCP"
            out.add(HostPort(BIND_ALL if ip == "0.0.0.0" else ip, number, protocol))
    return tuple(sorted(out))


# ------------------------------------------------------------------------------- node pools ---


def pool_labels(
    vm_class: str = "", role: str = "worker", declared: Iterable[tuple[str, str]] = ()
) -> tuple[tuple[str, str], ...]:
    """Every label a pool's nodes carry, except the per-node ``kubernetes.io/hostname``."""
    given = dict(declared)
    out = {OS: "linux", ARCH: "amd64"}
    if vm_class:
        out[INSTANCE_TYPE] = vm_class
    if role == "control-plane":
        out[CONTROL_PLANE] = ""
    out.update(given)
    if BETA_OS not in given:
        out[BETA_OS] = out[OS]
    if BETA_ARCH not in given:
        out[BETA_ARCH] = out[ARCH]
    out.pop(HOSTNAME, None)  # a pool cannot give every node the same name
    return tuple(sorted(out.items()))


def pool_taints(role: str = "worker", declared: Iterable[Taint] = ()) -> tuple[Taint, ...]:
    """A pool's taints: those declared, and the control plane's NoSchedule taint on control-plane pools."""
    out = list(declared)
    if role == "control-plane" and not any(t.key == CONTROL_PLANE and t.effect == "NoSchedule" for t in out):
        out.append(CONTROL_PLANE_TAINT)
    return tuple(out)


# --------------------------------------------------------------------------------- deciding ---


def _node_requirement(r: Requirement, labels: Mapping[str, str], described: frozenset[str]) -> bool | None:
    """A node selector requirement against a pool's labels: True, False, or None (unknown)."""
    op = r.operator
    if r.key == HOSTNAME:
        # every node has one, each its own: only its existence is known
        return True if op == "Exists" else False if op == "DoesNotExist" else None
    if r.key not in labels and r.key not in described:
        return None
    has = r.key in labels
    if op == "In":
        return has and labels[r.key] in r.values
    if op == "NotIn":
        return not has or labels[r.key] not in r.values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt"):
        if len(r.values) != 1:
            return None
        try:
            bound = int(r.values[0])
        except ValueError:
            return None  # the API server rejects the pod
        if not has:
            return False
        try:
            value = int(labels[r.key])
        except ValueError:
            return False  # the scheduler: a label that is not an integer does not match
        return value > bound if op == "Gt" else value < bound
    return None


def _and(values: Iterable[bool | None]) -> bool | None:
    unknown = False
    for v in values:
        if v is False:
            return False
        if v is None:
            unknown = True
    return None if unknown else True


def _term(term: NodeSelectorTerm, labels: Mapping[str, str], described: frozenset[str]) -> bool | None:
    if not term.match_expressions and not term.match_fields:
        return False  # an empty term matches no node
    fields: list[bool | None] = [None for _ in term.match_fields]  # metadata.name: the node's name, unknown here
    return _and([_node_requirement(r, labels, described) for r in term.match_expressions] + fields)


def _unknown_keys(c: SchedulingConstraints, labels: Mapping[str, str], described: frozenset[str]) -> tuple[str, ...]:
    keys: list[str] = []
    for k, _ in c.node_selector:
        if k == HOSTNAME or (k not in labels and k not in described):
            keys.append(k)
    for term in c.node_affinity or ():
        for r in term.match_expressions:
            if _node_requirement(r, labels, described) is None:
                keys.append(r.key)
        keys.extend(f"field {r.key}" for r in term.match_fields)
    return tuple(dict.fromkeys(keys))


def described_keys(pools: Iterable[Any]) -> frozenset[str]:
    """The node label keys a platform describes: every key its pools' declared labels use, control
    planes' included (what :func:`decide` takes as ``described``, beside the well-known keys)."""
    return frozenset(k for p in pools for k, _ in getattr(p, "labels", ()))


def decide(
    c: SchedulingConstraints,
    labels: Mapping[str, str] | Iterable[tuple[str, str]],
    taints: Iterable[Taint] = (),
    described: Iterable[str] | None = None,
) -> Decision:
    """Fits, no, or unknown: may pods with constraints ``c`` run on nodes with ``labels`` and ``taints``?

    ``described`` is the set of label keys the platform describes (the keys of every pool's labels);
    with None, this pool's keys. Well-known keys are always described.
    """
    labels = labels if isinstance(labels, dict) else dict(labels)
    known = WELL_KNOWN_KEYS | frozenset(labels if described is None else described)
    reasons: list[str] = []
    parts: list[bool | None] = []
    for k, v in c.node_selector:
        if k == HOSTNAME:
            ok: bool | None = None
        elif k in labels:
            ok = labels[k] == v
        else:
            ok = None if k not in known else False
        if ok is False:
            reasons.append(
                f"nodeSelector {k}={v}"
                + (f" (the pool has {k}={labels[k]})" if k in labels else " (the pool has no such label)")
            )
        parts.append(ok)
    if c.node_affinity is not None:
        terms = [_term(t, labels, known) for t in c.node_affinity]
        ok = True if True in terms else None if None in terms else False
        if ok is False:
            reasons.append("required node affinity: no nodeSelectorTerm matches the pool's labels")
        parts.append(ok)
    selected = _and(parts)
    untolerated = [
        t for t in taints if t.effect in BLOCKING_EFFECTS and not any(tol.tolerates(t) for tol in c.tolerations)
    ]
    tolerated = not untolerated
    if untolerated:
        reasons.append("taint " + ", ".join(map(str, untolerated)) + " not tolerated")
    if selected is False or not tolerated:
        return Decision(NO, "; ".join(reasons), (), selected, tolerated)
    if selected is None:
        keys = _unknown_keys(c, labels, known)
        return Decision(
            UNKNOWN, "depends on " + ", ".join(keys) + ", which the platform does not describe", keys, None, tolerated
        )
    return Decision(FITS, "", (), True, True)


# ---------------------------------------------------------------------------------- parsing ---


def _s(v: Any) -> str:
    return "" if v is None else str(v)


def _m(x: Any) -> Mapping[str, Any]:
    return x if isinstance(x, dict) else {}


def _l(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


def _requirements(items: Any) -> tuple[Requirement, ...]:
    return tuple(
        Requirement(_s(r.get("key")), _s(r.get("operator")), tuple(_s(v) for v in _l(r.get("values"))))
        for r in _l(items)
        if isinstance(r, dict)
    )


def _label_selector(x: Any) -> LabelSelector | None:
    if not isinstance(x, dict):
        return None
    pairs = tuple(sorted((_s(k), _s(v)) for k, v in _m(x.get("matchLabels")).items()))
    return LabelSelector(pairs, _requirements(x.get("matchExpressions")))


def _strings(x: Any) -> tuple[str, ...]:
    return tuple(_s(v) for v in _l(x))


def _pod_terms(x: Any) -> tuple[PodAffinityTerm, ...]:
    out = []
    for t in _l(x):
        if not isinstance(t, dict):
            continue
        ns_sel = t.get("namespaceSelector")
        out.append(
            PodAffinityTerm(
                topology_key=_s(t.get("topologyKey")),
                selector=_label_selector(t.get("labelSelector")),
                namespaces=_strings(t.get("namespaces")),
                namespace_selector=_label_selector(ns_sel) if isinstance(ns_sel, dict) else None,
                match_label_keys=_strings(t.get("matchLabelKeys")),
                mismatch_label_keys=_strings(t.get("mismatchLabelKeys")),
            )
        )
    return tuple(out)


def _spread(x: Any) -> tuple[SpreadConstraint, ...]:
    out = []
    for t in _l(x):
        if not isinstance(t, dict):
            continue
        skew = t.get("maxSkew")
        if not isinstance(skew, int) or isinstance(skew, bool) or skew < 1:
            continue  # the API server rejects it
        min_domains = t.get("minDomains")
        out.append(
            SpreadConstraint(
                max_skew=skew,
                topology_key=_s(t.get("topologyKey")),
                when_unsatisfiable=_s(t.get("whenUnsatisfiable") or "DoNotSchedule"),
                selector=_label_selector(t.get("labelSelector")),
                min_domains=min_domains if isinstance(min_domains, int) and not isinstance(min_domains, bool) else None,
                node_affinity_policy=_s(t.get("nodeAffinityPolicy") or "Honor"),
                node_taints_policy=_s(t.get("nodeTaintsPolicy") or "Ignore"),
                match_label_keys=_strings(t.get("matchLabelKeys")),
            )
        )
    return tuple(out)


def _tolerations(x: Any) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(_s(t.get("key")), _s(t.get("operator") or "Equal"), _s(t.get("value")), _s(t.get("effect")))
        for t in _l(x)
        if isinstance(t, dict)
    )


_PLACEMENT_FIELDS = ("nodeSelector", "affinity", "tolerations", "topologySpreadConstraints")


def constraints_from_spec(spec: Mapping[str, Any], *, daemonset: bool = False) -> SchedulingConstraints:
    """The placement constraints of a pod spec (``spec`` of a Pod or of a pod template).

    ``daemonset``: the pod belongs to a DaemonSet, whose controller adds tolerations of its own
    (:data:`DAEMONSET_TOLERATIONS`). Malformed parts are read as far as they go (the schema check,
    PF902, reports them).
    """
    if not daemonset and not any(k in spec for k in _PLACEMENT_FIELDS):
        return NO_CONSTRAINTS
    affinity = _m(spec.get("affinity"))
    node_aff = _m(affinity.get("nodeAffinity")).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = None
    if isinstance(node_aff, dict):
        terms = tuple(
            NodeSelectorTerm(_requirements(t.get("matchExpressions")), _requirements(t.get("matchFields")))
            for t in _l(node_aff.get("nodeSelectorTerms"))
            if isinstance(t, dict)
        )
    tolerations = _tolerations(spec.get("tolerations"))
    if daemonset:
        tolerations += DAEMONSET_TOLERATIONS
        if spec.get("hostNetwork") is True:
            tolerations += (_HOST_NETWORK_TOLERATION,)
    return SchedulingConstraints(
        node_selector=tuple(sorted((_s(k), _s(v)) for k, v in _m(spec.get("nodeSelector")).items())),
        node_affinity=terms,
        tolerations=tolerations,
        anti_affinity=_pod_terms(
            _m(affinity.get("podAntiAffinity")).get("requiredDuringSchedulingIgnoredDuringExecution")
        ),
        pod_affinity=_pod_terms(_m(affinity.get("podAffinity")).get("requiredDuringSchedulingIgnoredDuringExecution")),
        spread=_spread(spec.get("topologySpreadConstraints")),
    )
