"""The one versioned table of Kubernetes releases (podfit.kubeversions): its rows are well formed
and cite a source, the stages podfit relies on hold, and no other module keeps a copy (no version
tuple anywhere else in podfit)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from podfit import kubeversions as kv
from podfit.facts import CPU_MANAGER_OPTIONS, OPTION_GATES, KubeletFacts, cpu_manager_option_stage

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "analyzer" / "podfit"
TABLES = (kv.FEATURE_GATES, kv.CPU_MANAGER_OPTIONS, kv.TOPOLOGY_MANAGER_OPTIONS, kv.BEHAVIOURS)
ORDER = {"alpha": 0, "beta": 1, "GA": 2, "deprecated": 3}


def test_releases_are_1_29_to_1_37() -> None:
    assert kv.RELEASES[0] == (1, 29) and kv.LATEST == (1, 37) and len(kv.RELEASES) == 9


@pytest.mark.parametrize("entry", [e for t in TABLES for e in t.values()], ids=lambda e: e.name)
def test_every_row_cites_a_source_and_moves_forward(entry: kv.Entry) -> None:
    assert re.search(r"KEP-\d+|kubernetes/kubernetes ", entry.source), entry.source
    sinces = [s.since for s in entry.steps]
    assert sinces == sorted(sinces) and len(set(sinces)) == len(sinces)
    stages = [ORDER[s.stage] for s in entry.steps]
    assert stages == sorted(stages)
    for s in entry.steps:
        assert s.default is (s.stage != "alpha") or (s.stage == "beta" and not s.default)


@pytest.mark.parametrize(
    ("name", "version", "on"),
    [
        ("InPlacePodVerticalScaling", (1, 32), False),
        ("InPlacePodVerticalScaling", (1, 33), True),  # KEP-1287 beta
        ("InPlacePodVerticalScalingExclusiveCPUs", (1, 36), False),  # alpha since 1.32
        ("InPlacePodVerticalScalingExclusiveCPUs", (1, 37), False),  # KEP-5554: beta planned only
        ("DisableCPUQuotaWithExclusiveCPUs", (1, 37), True),  # deprecated, locked on
        ("DynamicResourceAllocation", (1, 33), False),  # beta, off by default
        ("DynamicResourceAllocation", (1, 34), True),  # GA
        ("PodLevelResources", (1, 33), False),
        ("PodLevelResources", (1, 34), True),
        ("SidecarContainers", (1, 29), True),
        ("DisableCPUQuotaWithExclusiveCPUs", (1, 32), False),
        ("DisableCPUQuotaWithExclusiveCPUs", (1, 33), True),
        ("CPUManagerPolicyAlphaOptions", (1, 37), False),
        ("CPUManagerPolicyBetaOptions", (1, 37), True),
        ("NoSuchGate", (1, 37), None),
        ("InPlacePodVerticalScaling", None, None),
    ],
)
def test_feature_defaults(name: str, version: tuple[int, int] | None, on: bool | None) -> None:
    assert kv.feature_default(name, version) is on


def test_kubelet_facts_read_the_table() -> None:
    assert KubeletFacts(version=(1, 33)).exclusive_cpus_without_quota is True
    assert KubeletFacts(version=(1, 32)).exclusive_cpus_without_quota is False
    assert KubeletFacts(version=(1, 32), feature_gates=(("DisableCPUQuotaWithExclusiveCPUs", True),)).feature(
        "DisableCPUQuotaWithExclusiveCPUs"
    )


def test_cpu_manager_views_are_the_table() -> None:
    assert set(CPU_MANAGER_OPTIONS) == set(kv.CPU_MANAGER_OPTIONS)
    assert OPTION_GATES == {
        "alpha": ("CPUManagerPolicyAlphaOptions", False),
        "beta": ("CPUManagerPolicyBetaOptions", True),
    }
    for name, entry in kv.CPU_MANAGER_OPTIONS.items():
        for v in kv.RELEASES:
            step = kv.stage_at(entry, v)
            assert cpu_manager_option_stage(name, v) == (step.stage if step else "absent")


def test_topology_manager_options() -> None:
    step = kv.stage_at(kv.TOPOLOGY_MANAGER_OPTIONS["max-allowable-numa-nodes"], (1, 35))
    assert step is not None and step.stage == "GA"  # KEP-4622
    assert kv.stage_at(kv.TOPOLOGY_MANAGER_OPTIONS["max-allowable-numa-nodes"], (1, 30)) is None


# a Kubernetes minor version written as a tuple, (1, 22) to (1, 39); ``range(1, 21)`` and the like
# are not versions
_VERSION_TUPLE = re.compile(r"(?<![\w.])\(\s*1\s*,\s*(2[2-9]|3\d)\s*\)")


def test_no_second_copy_of_the_table() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "kubeversions.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _VERSION_TUPLE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == [], "version tuples outside podfit.kubeversions:\n" + "\n".join(offenders)


def test_the_pattern_finds_a_copy() -> None:
    assert _VERSION_TUPLE.search('SINCE = {"X": (1, 33)}')
    assert not _VERSION_TUPLE.search("DFF_KS = tuple(range(1, 21))")


def test_memory_limit_decrease_behaviour() -> None:
    assert not kv.behaviour("memory-limit-decrease-in-place", (1, 33))
    assert kv.behaviour("memory-limit-decrease-in-place", (1, 34))
    assert kv.behaviour("memory-limit-decrease-in-place", None)  # the latest release


def test_locked_steps() -> None:
    step = kv.stage_at(kv.FEATURE_GATES["InPlacePodVerticalScaling"], (1, 35))
    assert step is not None and step.stage == "GA" and step.locked
    step = kv.stage_at(kv.FEATURE_GATES["DynamicResourceAllocation"], (1, 34))
    assert step is not None and step.stage == "GA" and not step.locked


def test_every_row_is_read_by_a_rule_or_said_not_modelled():
    """No dead rows: each gate, option and behaviour of the table is named by some module of podfit
    (besides the table and the docs that print it) or a policy, or in the docs' "Not modelled yet"."""
    from podfit.docs import KUBERNETES_NOT_MODELLED

    sources = [
        p.read_text(encoding="utf-8")
        for p in [*(ROOT / "analyzer" / "podfit").rglob("*.py"), *(ROOT / "policies").rglob("*.rego")]
        if p.name not in ("kubeversions.py", "docs.py") and not p.name.endswith("_test.rego")
    ]
    dead = [
        name
        for table in TABLES
        for name in table
        if not any(name in text for text in sources) and name not in KUBERNETES_NOT_MODELLED
    ]
    assert dead == []
