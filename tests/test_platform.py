import pytest

from podfit.platform import DEFAULT_PLATFORM, DEFAULT_VM_CLASSES, PlatformError, parse_platform

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
GiB = 2**30


def test_default_platform_is_the_studys_cluster():
    (h,) = DEFAULT_PLATFORM.hosts
    assert (h.count, h.sockets, h.cores_per_socket, h.threads_per_core, h.base_mhz) == (4, 2, 16, 2, 2300)
    assert h.memory_bytes == 512 * GiB and DEFAULT_PLATFORM.numa_node_cores == 16
    assert h.count * h.cpu_mhz == 294_400
    assert DEFAULT_PLATFORM.ha.host_failures_tolerated == 1
    assert DEFAULT_PLATFORM.node_pools == () and DEFAULT_PLATFORM.runtime == "tkg"
    assert (DEFAULT_PLATFORM.overhead_cpu, DEFAULT_PLATFORM.overhead_memory) == (250, 100 * 2**20)


def test_default_vm_classes():
    by = {c.name: c for c in DEFAULT_VM_CLASSES}
    assert len(by) == 16
    assert (by["best-effort-xlarge"].cpus, by["best-effort-xlarge"].memory_bytes) == (4, 32 * GiB)
    assert (by["guaranteed-8xlarge"].cpus, by["guaranteed-8xlarge"].memory_bytes) == (32, 128 * GiB)
    assert by["guaranteed-small"].reserved and not by["best-effort-small"].reserved


@pytest.mark.parametrize("name", ["study-4-hosts", "bare-metal-256", "vsphere-pods"])
def test_example_profiles_load(name):
    p = parse_platform((ROOT / "testdata" / "platforms" / f"{name}.yaml").read_text(), name)
    assert not p.is_default and p.hosts


def test_bare_metal_logical_cpus():
    p = parse_platform((ROOT / "testdata/platforms/bare-metal-256.yaml").read_text(), "bm")
    assert p.hosts[0].logical_cpus == 256


def test_errors_point_into_the_file():
    text = "apiVersion: podfit.io/v1alpha1\nkind: Platform\nspec:\n  nodePools:\n    - vmClass: huge-class\n      count: 2\n"
    with pytest.raises(PlatformError) as e:
        parse_platform(text, "p.yaml")
    assert e.value.problems == ("p.yaml:5: spec.nodePools[0].vmClass: unknown VM class 'huge-class'",)
    with pytest.raises(PlatformError) as e:
        parse_platform(text.replace("count: 2", "count: -1"), "p.yaml")
    assert any(p.startswith("p.yaml:6: spec/nodePools/0/count") for p in e.value.problems)
    with pytest.raises(PlatformError) as e:
        parse_platform(
            "apiVersion: podfit.io/v1alpha1\nkind: Platform\nspec:\n  hosts:\n    - {count: 1, sockets: 1, coresPerSocket: 8, baseMHz: 2000, memory: 1Gb}\n",
            "h.yaml",
        )
    assert e.value.problems[0].startswith("h.yaml:5: spec.hosts[0].memory")


def test_custom_vm_class_overrides_default():
    p = parse_platform(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nspec:\n  vmClasses:\n    - {name: best-effort-large, cpus: 6, memory: 24Gi}\n",
        "p",
    )
    assert p.vm_class("best-effort-large").cpus == 6 and p.vm_class("best-effort-small").cpus == 2


def _profiles():
    return sorted(ROOT.glob("testdata/**/platform*.yaml")) + sorted(ROOT.glob("testdata/platforms/*.yaml"))


def test_schema_check_agrees_with_jsonschema_on_every_profile_and_broken_copies():
    """A profile jsonschema-rs finds valid is one jsonschema finds valid (the fast check decides
    alone only then), on the repo's profiles and copies broken in ways the schema forbids."""
    import copy

    import jsonschema

    from podfit.paths import load_schema
    from podfit.platform import _schema_errors
    from podfit.yamlio import iter_documents

    slow = jsonschema.Draft202012Validator(load_schema("platform.schema.json"))
    docs = []
    for path in _profiles():
        for d in iter_documents(path.read_text()):
            doc = d.data
            if isinstance(doc, dict) and doc.get("kind") == "Platform":
                docs.append(doc)
                for key, value in (("count", -1), ("count", "two"), ("vmClass", 3), ("extra", 1)):
                    broken = copy.deepcopy(doc)
                    for pool in broken.get("spec", {}).get("nodePools") or []:
                        pool[key] = value
                    docs.append(broken)
                bad_version = copy.deepcopy(doc)
                bad_version.setdefault("spec", {})["kubernetesVersion"] = "2.0"
                docs.append(bad_version)
    assert len(docs) > 40
    assert sum(slow.is_valid(d) for d in docs) > 10 and sum(not slow.is_valid(d) for d in docs) > 10
    for d in docs:
        assert (not _schema_errors(d)) == slow.is_valid(d)


def test_a_valid_profile_is_checked_without_importing_jsonschema():
    import subprocess
    import sys

    code = (
        "import sys; from podfit.platform import parse_platform; "
        f"parse_platform(open({str(ROOT / 'testdata/platforms/study-4-hosts.yaml')!r}).read(), 'p'); "
        "print('jsonschema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_sizing_classes_are_those_the_runtime_can_provision():
    """Built-in vSphere with Tanzu classes are right-sizing candidates on tkg and vsphere-pods only;
    elsewhere the declared classes and the pools' own (a built-in one a pool names stays)."""
    from dataclasses import replace

    from podfit.platform import NodePool, sizing_classes

    text = (
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nspec:\n  runtime: RUNTIME\n  vmClasses:\n"
        "    - {name: m5.xlarge, cpus: 4, memory: 16Gi}\n    - {name: best-effort-large, cpus: 4, memory: 16Gi}\n"
        "  nodePools:\n    - {name: general, vmClass: m5.xlarge, count: 3}\n"
    )
    builtin = {c.name for c in DEFAULT_VM_CLASSES}
    for runtime in ("kubernetes", "bare-metal"):
        p = parse_platform(text.replace("RUNTIME", runtime), "p")
        assert len(p.vm_classes) == 17 and p.vm_class("best-effort-small") is not None  # still looked up
        # a built-in name declared again is the profile's own class
        assert [c.name for c in sizing_classes(p, p.node_pools)] == ["best-effort-large", "m5.xlarge"]
        tkg_pool = NodePool("best-effort-xlarge", 2, name="tkg")
        names = [c.name for c in sizing_classes(p, (*p.node_pools, tkg_pool))]
        assert names == ["best-effort-large", "best-effort-xlarge", "m5.xlarge"]
    for runtime in ("tkg", "vsphere-pods"):
        p = parse_platform(text.replace("RUNTIME", runtime), "p")
        assert {c.name for c in sizing_classes(p, p.node_pools)} == builtin | {"m5.xlarge"}
    assert sizing_classes(DEFAULT_PLATFORM, ()) == DEFAULT_VM_CLASSES
    assert sizing_classes(replace(DEFAULT_PLATFORM, runtime="kubernetes"), ()) == ()


def test_a_pools_autoscaler_maximum_is_read_and_checked():
    text = (
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nspec:\n  nodePools:\n"
        "    - vmClass: best-effort-large\n      count: 3\n      maxCount: 10\n"
    )
    (pool,) = parse_platform(text, "p.yaml").node_pools
    assert (pool.count, pool.max_count, pool.most_nodes) == (3, 10, 10)
    with pytest.raises(PlatformError) as e:
        parse_platform(text.replace("maxCount: 10", "maxCount: 2"), "p.yaml")
    assert e.value.problems == (
        "p.yaml:7: spec.nodePools[0].maxCount: 2 is below count (3): the autoscaler's maximum is at least "
        "the nodes the pool has",
    )
    # the cluster's nodes at the autoscalers' maxima stay within Kubernetes' 5,000
    with pytest.raises(PlatformError) as e:
        big = text.replace("maxCount: 10", "maxCount: 4000")
        parse_platform(big + big.split("nodePools:\n")[1], "p.yaml")
    assert "8,000 nodes in the pools without a cluster at the autoscalers' maxima" in e.value.problems[0]
