"""Scheduling semantics (podfit.scheduling): node selection, taints and tolerations, pod selectors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podfit.scheduling import (
    FITS,
    HOSTNAME,
    NO,
    NO_CONSTRAINTS,
    UNKNOWN,
    LabelSelector,
    NodeSelectorTerm,
    PodAffinityTerm,
    Requirement,
    SchedulingConstraints,
    SpreadConstraint,
    Taint,
    Toleration,
    constraints_from_spec,
    decide,
    pool_labels,
    pool_taints,
)

WORKER = dict(pool_labels("best-effort-large", "worker", [("gpu", "true"), ("cores", "8")]))
PLAIN = dict(pool_labels("best-effort-large"))
DESCRIBED = {"gpu", "cores"}  # keys some pool of the platform carries


def affinity(*reqs: Requirement, fields: tuple[Requirement, ...] = ()) -> SchedulingConstraints:
    return SchedulingConstraints(node_affinity=(NodeSelectorTerm(tuple(reqs), fields),))


def answer(c: SchedulingConstraints, labels=WORKER, taints=(), described=DESCRIBED) -> str:
    return decide(c, labels, taints, described).answer


# ----------------------------------------------------------------------------- pool labels ---


def test_every_pool_has_the_well_known_labels():
    assert PLAIN["kubernetes.io/os"] == "linux" and PLAIN["kubernetes.io/arch"] == "amd64"
    assert PLAIN["node.kubernetes.io/instance-type"] == "best-effort-large"
    assert PLAIN["beta.kubernetes.io/os"] == "linux"
    assert HOSTNAME not in PLAIN and "node-role.kubernetes.io/control-plane" not in PLAIN
    arm = dict(pool_labels("c", "worker", [("kubernetes.io/arch", "arm64")]))
    assert arm["kubernetes.io/arch"] == arm["beta.kubernetes.io/arch"] == "arm64"


def test_control_plane_pools_carry_the_role_label_and_taint():
    labels = dict(pool_labels("best-effort-small", "control-plane"))
    assert labels["node-role.kubernetes.io/control-plane"] == ""
    taints = pool_taints("control-plane")
    assert taints == (Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"),)
    assert pool_taints("worker") == ()
    assert answer(NO_CONSTRAINTS, labels, taints) == NO
    tolerating = SchedulingConstraints(
        node_selector=(("node-role.kubernetes.io/control-plane", ""),),
        tolerations=(Toleration("node-role.kubernetes.io/control-plane", "Exists", "", "NoSchedule"),),
    )
    assert answer(tolerating, labels, taints) == FITS
    assert answer(tolerating, PLAIN) == NO  # the role label is well known: workers lack it


# ---------------------------------------------------------------------------- nodeSelector ---


def test_node_selector_os_linux_fits_every_pool():
    c = SchedulingConstraints(node_selector=(("kubernetes.io/os", "linux"),))
    assert answer(c, PLAIN, described=()) == FITS
    assert answer(SchedulingConstraints(node_selector=(("kubernetes.io/os", "windows"),)), PLAIN) == NO


def test_node_selector_on_a_described_key():
    c = SchedulingConstraints(node_selector=(("gpu", "true"),))
    assert answer(c, WORKER) == FITS
    assert answer(c, PLAIN) == NO  # another pool describes gpu; this one has none
    assert answer(SchedulingConstraints(node_selector=(("gpu", "false"),)), WORKER) == NO


def test_node_selector_on_an_undescribed_key_is_unknown():
    c = SchedulingConstraints(node_selector=(("team", "a"),))
    d = decide(c, PLAIN, (), DESCRIBED)
    assert d.answer == UNKNOWN and d.unknown_keys == ("team",) and "team" in d.reason
    # without a platform-wide set, the pool's own keys are what is described
    assert decide(c, PLAIN).answer == UNKNOWN
    # a definite no elsewhere in the selector wins over unknown
    both = SchedulingConstraints(node_selector=(("kubernetes.io/os", "windows"), ("team", "a")))
    assert answer(both, PLAIN) == NO


def test_hostname_is_matched_only_through_topology():
    assert answer(SchedulingConstraints(node_selector=((HOSTNAME, "node-1"),)), PLAIN) == UNKNOWN
    assert answer(affinity(Requirement(HOSTNAME, "In", ("node-1",))), PLAIN) == UNKNOWN
    assert answer(affinity(Requirement(HOSTNAME, "NotIn", ("node-1",))), PLAIN) == UNKNOWN
    assert answer(affinity(Requirement(HOSTNAME, "Exists")), PLAIN) == FITS
    assert answer(affinity(Requirement(HOSTNAME, "DoesNotExist")), PLAIN) == NO


# --------------------------------------------------------------------- required node affinity ---


@pytest.mark.parametrize(
    "req, on_worker, on_plain",
    [
        (Requirement("gpu", "In", ("true", "yes")), FITS, NO),
        (Requirement("gpu", "In", ("no",)), NO, NO),
        (Requirement("gpu", "NotIn", ("true",)), NO, FITS),
        (Requirement("gpu", "NotIn", ("no",)), FITS, FITS),
        (Requirement("gpu", "Exists"), FITS, NO),
        (Requirement("gpu", "DoesNotExist"), NO, FITS),
        (Requirement("cores", "Gt", ("4",)), FITS, NO),
        (Requirement("cores", "Gt", ("8",)), NO, NO),
        (Requirement("cores", "Lt", ("16",)), FITS, NO),
        (Requirement("cores", "Lt", ("8",)), NO, NO),
        (Requirement("kubernetes.io/arch", "In", ("amd64", "arm64")), FITS, FITS),
        (Requirement("kubernetes.io/os", "NotIn", ("windows",)), FITS, FITS),
        (Requirement("node.kubernetes.io/instance-type", "In", ("best-effort-xlarge",)), NO, NO),
        (Requirement("team", "In", ("a",)), UNKNOWN, UNKNOWN),
        (Requirement("team", "DoesNotExist"), UNKNOWN, UNKNOWN),
        (Requirement("gpu", "Gt", ("not-a-number",)), UNKNOWN, UNKNOWN),
    ],
)
def test_node_affinity_operators(req, on_worker, on_plain):
    assert answer(affinity(req), WORKER) == on_worker
    assert answer(affinity(req), PLAIN) == on_plain


def test_gt_lt_on_a_label_that_is_not_an_integer_do_not_match():
    labels = {**PLAIN, "cores": "many"}
    assert answer(affinity(Requirement("cores", "Gt", ("1",))), labels) == NO


def test_terms_are_ored_and_expressions_anded():
    gpu = NodeSelectorTerm((Requirement("gpu", "In", ("true",)), Requirement("cores", "Gt", ("4",))))
    arm = NodeSelectorTerm((Requirement("kubernetes.io/arch", "In", ("arm64",)),))
    team = NodeSelectorTerm((Requirement("team", "In", ("a",)),))
    assert answer(SchedulingConstraints(node_affinity=(gpu, arm)), WORKER) == FITS
    assert answer(SchedulingConstraints(node_affinity=(gpu, arm)), PLAIN) == NO
    assert answer(SchedulingConstraints(node_affinity=(team, gpu)), WORKER) == FITS  # one term fits
    assert answer(SchedulingConstraints(node_affinity=(team, gpu)), PLAIN) == UNKNOWN
    both = NodeSelectorTerm((Requirement("gpu", "In", ("true",)), Requirement("cores", "Gt", ("10",))))
    assert answer(SchedulingConstraints(node_affinity=(both,)), WORKER) == NO


def test_empty_terms_match_nothing():
    assert answer(SchedulingConstraints(node_affinity=()), PLAIN) == NO
    assert answer(SchedulingConstraints(node_affinity=(NodeSelectorTerm(),)), PLAIN) == NO


def test_match_fields_on_the_node_name_are_unknown():
    c = affinity(fields=(Requirement("metadata.name", "In", ("node-1",)),))
    d = decide(c, PLAIN, (), DESCRIBED)
    assert d.answer == UNKNOWN and d.unknown_keys == ("field metadata.name",)


# ----------------------------------------------------------------------- taints/tolerations ---

DB = Taint("dedicated", "db", "NoSchedule")


@pytest.mark.parametrize("effect, blocks", [("NoSchedule", True), ("NoExecute", True), ("PreferNoSchedule", False)])
def test_taint_effects(effect, blocks):
    d = decide(NO_CONSTRAINTS, PLAIN, [Taint("dedicated", "db", effect)])
    assert d.answer == (NO if blocks else FITS)
    if blocks:
        assert "dedicated=db:" + effect in d.reason and not d.tolerated


@pytest.mark.parametrize(
    "tol, ok",
    [
        (Toleration("dedicated", "Equal", "db", "NoSchedule"), True),
        (Toleration("dedicated", "", "db", ""), True),  # operator defaults to Equal; empty effect: all
        (Toleration("dedicated", "Equal", "web", "NoSchedule"), False),
        (Toleration("dedicated", "Exists", "", "NoSchedule"), True),
        (Toleration("dedicated", "Exists", "", "NoExecute"), False),  # other effect
        (Toleration("other", "Exists"), False),
        (Toleration("", "Exists"), True),  # empty key with Exists tolerates every taint
        (Toleration("", "Exists", "", "NoExecute"), False),
    ],
)
def test_tolerations(tol, ok):
    assert tol.tolerates(DB) is ok
    assert answer(SchedulingConstraints(tolerations=(tol,)), PLAIN, [DB]) == (FITS if ok else NO)


def test_every_blocking_taint_must_be_tolerated():
    taints = [DB, Taint("gpu", "", "NoExecute"), Taint("soft", "", "PreferNoSchedule")]
    one = SchedulingConstraints(tolerations=(Toleration("dedicated", "Exists"),))
    two = SchedulingConstraints(tolerations=(Toleration("dedicated", "Exists"), Toleration("gpu", "Exists")))
    assert answer(one, PLAIN, taints) == NO
    assert answer(two, PLAIN, taints) == FITS


def test_a_taint_makes_a_pod_of_unknown_selection_a_definite_no():
    c = SchedulingConstraints(node_selector=(("team", "a"),))
    assert answer(c, PLAIN, [DB]) == NO


def test_daemonsets_get_the_controllers_tolerations():
    spec = {"containers": [{"name": "a"}]}
    ds = constraints_from_spec(spec, daemonset=True)
    pressure = [Taint("node.kubernetes.io/memory-pressure", "", "NoSchedule")]
    assert answer(ds, PLAIN, pressure) == FITS
    assert answer(constraints_from_spec(spec), PLAIN, pressure) == NO
    net = [Taint("node.kubernetes.io/network-unavailable", "", "NoSchedule")]
    assert answer(ds, PLAIN, net) == NO
    assert answer(constraints_from_spec({**spec, "hostNetwork": True}, daemonset=True), PLAIN, net) == FITS


# --------------------------------------------------------------------------- pod selectors ---


@pytest.mark.parametrize(
    "sel, ok",
    [
        (LabelSelector((("app", "api"),)), True),
        (LabelSelector((("app", "web"),)), False),
        (LabelSelector((), (Requirement("app", "In", ("api", "web")),)), True),
        (LabelSelector((), (Requirement("app", "NotIn", ("api",)),)), False),
        (LabelSelector((), (Requirement("tier", "NotIn", ("x",)),)), True),  # key absent
        (LabelSelector((), (Requirement("app", "Exists"),)), True),
        (LabelSelector((), (Requirement("tier", "Exists"),)), False),
        (LabelSelector((), (Requirement("tier", "DoesNotExist"),)), True),
        (LabelSelector((("app", "api"),), (Requirement("tier", "Exists"),)), False),  # ANDed
        (LabelSelector(), True),  # {} selects every pod
    ],
)
def test_label_selectors(sel, ok):
    assert sel.matches({"app": "api", "team": "a"}) is ok


def test_pod_affinity_term_namespaces_and_match_label_keys():
    sel = LabelSelector((("app", "api"),))
    own = {"app": "api", "version": "1"}
    t = PodAffinityTerm(HOSTNAME, sel)
    assert t.matches("shop", own, "shop", {"app": "api"}, False) is True
    assert t.matches("shop", own, "other", {"app": "api"}, False) is False  # own namespace only
    assert PodAffinityTerm(HOSTNAME, None).matches("shop", own, "shop", own, True) is False  # null selector
    listed = PodAffinityTerm(HOSTNAME, sel, namespaces=("other",))
    assert listed.matches("shop", own, "other", {"app": "api"}, False) is True
    assert listed.matches("shop", own, "shop", {"app": "api"}, False) is False
    every = PodAffinityTerm(HOSTNAME, sel, namespace_selector=LabelSelector())
    assert every.matches("shop", own, "x", {"app": "api"}, False) is True
    by_name = PodAffinityTerm(HOSTNAME, sel, namespace_selector=LabelSelector((("kubernetes.io/metadata.name", "x"),)))
    assert by_name.matches("shop", own, "x", {"app": "api"}, False) is True
    by_team = PodAffinityTerm(HOSTNAME, sel, namespace_selector=LabelSelector((("team", "a"),)))
    assert by_team.matches("shop", own, "x", {"app": "api"}, False) is None  # namespace labels unknown
    keyed = PodAffinityTerm(HOSTNAME, sel, match_label_keys=("version", "pod-template-hash"))
    assert keyed.matches("shop", own, "shop", {"app": "api", "version": "1"}, True) is True
    assert keyed.matches("shop", own, "shop", {"app": "api", "version": "2"}, True) is False
    assert keyed.matches("shop", own, "shop", {"app": "api", "version": "1"}, False) is False  # other revision


# ---------------------------------------------------------------------------------- parsing ---


def test_constraints_from_spec_reads_every_part():
    spec = {
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}, {"operator": "Exists"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["true"]}]},
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                    ]
                }
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": HOSTNAME,
                        "labelSelector": {
                            "matchLabels": {"app": "api"},
                            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
                        },
                    },
                    {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"app": "api"}}},
                ]
            },
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": HOSTNAME, "labelSelector": {"matchLabels": {"app": "cache"}}}
                ]
            },
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": HOSTNAME,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["api"]}]},
            },
            {
                "maxSkew": 2,
                "topologyKey": HOSTNAME,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "api"}},
            },
            {"maxSkew": 0, "topologyKey": HOSTNAME},  # invalid: left out
        ],
    }
    c = constraints_from_spec(spec)
    assert c.node_selector == (("kubernetes.io/os", "linux"),)
    assert c.node_affinity == (
        NodeSelectorTerm((Requirement("gpu", "In", ("true",)),)),
        NodeSelectorTerm((), (Requirement("metadata.name", "In", ("n1",)),)),
    )
    assert c.tolerations == (Toleration("dedicated", "Exists", "", "NoSchedule"), Toleration("", "Exists"))
    assert len(c.anti_affinity) == 2 and len(c.hostname_anti_affinity()) == 1
    (term,) = c.hostname_anti_affinity()
    assert term.selector == LabelSelector((("app", "api"),), (Requirement("tier", "NotIn", ("db",)),))
    assert len(c.pod_affinity) == 1
    assert [s.max_skew for s in c.spread] == [1, 2]
    (spread,) = c.hostname_spread()
    assert isinstance(spread, SpreadConstraint) and spread.selector.matches({"app": "api"})
    assert constraints_from_spec({"containers": []}) is NO_CONSTRAINTS


def test_constraints_from_malformed_spec_do_not_raise():
    spec = {
        "nodeSelector": ["x"],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": ["x", {"matchExpressions": "y"}]
                }
            },
            "podAntiAffinity": "z",
        },
        "tolerations": {"a": 1},
        "topologySpreadConstraints": [{"maxSkew": "1"}],
    }
    c = constraints_from_spec(spec)
    assert c.node_selector == () and c.node_affinity == (NodeSelectorTerm(),) and c.tolerations == ()


# ------------------------------------------------------------------------------- properties ---

KEYS = ("gpu", "team", "kubernetes.io/os", "cores")
VALUES = ("true", "a", "linux", "1", "8", "x")
requirements = st.one_of(
    st.builds(
        Requirement,
        st.sampled_from(KEYS),
        st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")),
        st.lists(st.sampled_from(VALUES), min_size=1, max_size=2).map(tuple),
    ),
    st.builds(
        Requirement,
        st.sampled_from(KEYS),
        st.sampled_from(("Gt", "Lt")),
        st.sampled_from(("1", "8")).map(lambda v: (v,)),
    ),
)
constraints = st.builds(
    SchedulingConstraints,
    node_selector=st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2).map(
        lambda d: tuple(sorted(d.items()))
    ),
    node_affinity=st.one_of(
        st.none(),
        st.lists(
            st.builds(NodeSelectorTerm, st.lists(requirements, min_size=1, max_size=3).map(tuple)),
            min_size=1,
            max_size=3,
        ).map(tuple),
    ),
)
label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=4)


def _two_valued(c: SchedulingConstraints, labels: dict[str, str]) -> bool:
    """Kubernetes' own evaluation, on a node whose labels are all known."""

    def req(r: Requirement) -> bool:
        if r.operator in ("Gt", "Lt"):
            try:
                a, b = int(labels[r.key]), int(r.values[0])
            except (KeyError, ValueError):
                return False
            return a > b if r.operator == "Gt" else a < b
        return LabelSelector((), (r,)).matches(labels)

    ok = all(labels.get(k) == v and k in labels for k, v in c.node_selector)
    if c.node_affinity is not None:
        ok = ok and any(t.match_expressions and all(req(r) for r in t.match_expressions) for t in c.node_affinity)
    return ok


@settings(max_examples=300, deadline=None)
@given(constraints, label_sets, label_sets, st.sets(st.sampled_from(KEYS)))
def test_a_decided_answer_holds_whatever_the_undescribed_labels_are(c, labels, extra, described):
    """Sound three-valued logic: fits / no never depend on labels the platform does not describe,
    and with every key described the answer is Kubernetes' own."""
    known = described | {"kubernetes.io/os"}  # well known: described on every pool
    pool = {k: v for k, v in labels.items() if k in known}
    d = decide(c, pool, (), described)
    completed = {**pool, **{k: v for k, v in extra.items() if k not in known}}
    if d.answer != UNKNOWN:
        assert _two_valued(c, completed) is (d.answer == FITS)
    if set(KEYS) <= known:
        assert d.answer != UNKNOWN


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.builds(
            Toleration,
            st.sampled_from(("", "a", "b")),
            st.sampled_from(("Equal", "Exists")),
            st.sampled_from(("", "x")),
            st.sampled_from(("", "NoSchedule", "NoExecute")),
        )
    ),
    st.lists(
        st.builds(
            Taint,
            st.sampled_from(("a", "b")),
            st.sampled_from(("", "x")),
            st.sampled_from(("NoSchedule", "NoExecute", "PreferNoSchedule")),
        )
    ),
    st.builds(Toleration, st.sampled_from(("", "a")), st.sampled_from(("Equal", "Exists"))),
)
def test_adding_a_toleration_never_turns_fits_into_no(tols, taints, more):
    before = decide(SchedulingConstraints(tolerations=tuple(tols)), PLAIN, taints).answer
    after = decide(SchedulingConstraints(tolerations=tuple(tols) + (more,)), PLAIN, taints).answer
    assert not (before == FITS and after != FITS)


def test_described_keys_are_every_pools_declared_label_keys():
    """What the platform describes, for decide(): the keys of every pool's declared labels, a control
    plane's too; the well-known keys decide() adds itself."""
    from podfit.platform import NodePool
    from podfit.scheduling import described_keys

    pools = [
        NodePool("best-effort-large", 3, name="workers", labels=(("tier", "web"),)),
        NodePool("best-effort-small", 1, name="cp", role="control-plane", labels=(("etcd", "local"),)),
        NodePool("best-effort-large", 2, name="plain"),
    ]
    assert described_keys(pools) == frozenset({"tier", "etcd"})
    assert described_keys([]) == frozenset()
