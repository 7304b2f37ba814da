"""Clusters as a fact: which cluster each object deploys to, and duplicates within a cluster."""

from __future__ import annotations

from dataclasses import replace

import pytest

from podfit.config import Config, ConfigError, glob_matches, parse_config_text
from podfit.facts import build_facts, facts_data, missing_fact
from podfit.loader import InputFile, load
from podfit.platform import DEFAULT_PLATFORM, NodePool

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {ns}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
        - name: c
          resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}
"""

TKC = """\
apiVersion: run.tanzu.vmware.com/v1alpha3
kind: TanzuKubernetesCluster
metadata: {{name: {name}, namespace: team}}
spec:
  topology:
    controlPlane: {{replicas: 1, vmClass: best-effort-small, storageClass: vsan}}
    nodePools:
      - {{name: workers, replicas: 2, vmClass: best-effort-large, storageClass: vsan}}
"""


def facts_of(files: dict[str, str], platform=DEFAULT_PLATFORM, cluster=None, config: Config | None = None):
    objects = load([InputFile(path, text.encode()) for path, text in files.items()]).objects
    mapping = config.cluster_for_path if config is not None and config.clusters else None
    return build_facts(objects, platform, cluster, mapping)


def summary(facts):
    return {
        c.name: (c.source, sorted(f"{o.location.file}:{o.kind}/{o.ref.name}" for o in c.objects))
        for c in facts.clusters
    }


def test_without_any_hint_the_input_is_one_unnamed_cluster():
    f = facts_of({"a/x.yaml": DEPLOY.format(name="web", ns="shop"), "b/y.yaml": DEPLOY.format(name="db", ns="shop")})
    assert [(c.name, c.source, len(c.objects), len(c.workloads)) for c in f.clusters] == [("", "input", 2, 2)]
    assert all(f.cluster_of(o) is f.clusters[0] for o in f.objects)


def test_cluster_option_takes_every_object():
    files = {"prod/tkc.yaml": TKC.format(name="prod"), "prod/app.yaml": DEPLOY.format(name="web", ns="shop")}
    f = facts_of(files, cluster="mine")
    assert [(c.name, c.source, len(c.objects)) for c in f.clusters] == [("mine", "option", 2)]
    assert [p.vm_class for p in f.clusters[0].node_pools] == ["best-effort-small", "best-effort-large"]


def test_cluster_manifests_claim_their_directory_tree_and_their_file():
    files = {
        "k8s/prod/cluster.yaml": TKC.format(name="prod"),
        "k8s/prod/apps/web.yaml": DEPLOY.format(name="web", ns="shop"),
        "k8s/staging/cluster.yaml": TKC.format(name="staging"),
        "k8s/staging/web.yaml": DEPLOY.format(name="web", ns="shop"),
        "k8s/shared/mixed.yaml": TKC.format(name="tools") + "---\n" + DEPLOY.format(name="ci", ns="tools"),
        "elsewhere/orphan.yaml": DEPLOY.format(name="orphan", ns="x"),
    }
    f = facts_of(files)
    assert summary(f) == {
        "": ("input", ["elsewhere/orphan.yaml:Deployment/orphan"]),
        "prod": (
            "manifest",
            ["k8s/prod/apps/web.yaml:Deployment/web", "k8s/prod/cluster.yaml:TanzuKubernetesCluster/prod"],
        ),
        "staging": (
            "manifest",
            ["k8s/staging/cluster.yaml:TanzuKubernetesCluster/staging", "k8s/staging/web.yaml:Deployment/web"],
        ),
        "tools": (
            "manifest",
            ["k8s/shared/mixed.yaml:Deployment/ci", "k8s/shared/mixed.yaml:TanzuKubernetesCluster/tools"],
        ),
    }
    # the same Deployment in prod and in staging is no clash
    assert all(not c.duplicates for c in f.clusters)
    pools = {c.name: [(p.cluster, p.name) for p in c.node_pools] for c in f.clusters}
    assert pools["prod"] == [("prod", "prod-control-plane"), ("prod", "workers")]
    assert pools[""] == []  # no pools of its own, and the platform has none
    assert f.clusters[1].location.file == "k8s/prod/cluster.yaml"


def test_the_one_declared_cluster_takes_objects_outside_its_directory():
    f = facts_of({"clusters/shop.yaml": TKC.format(name="shop"), "apps/web.yaml": DEPLOY.format(name="web", ns="shop")})
    assert [(c.name, c.source, len(c.objects)) for c in f.clusters] == [("shop", "manifest", 2)]


def test_a_directory_declaring_two_clusters_decides_nothing():
    files = {
        "clusters/a.yaml": TKC.format(name="a"),
        "clusters/b.yaml": TKC.format(name="b"),
        "clusters/apps.yaml": DEPLOY.format(name="web", ns="shop"),
    }
    f = facts_of(files)
    assert summary(f)[""] == ("input", ["clusters/apps.yaml:Deployment/web"])
    assert {c.name for c in f.clusters} == {"", "a", "b"}


def test_a_profile_with_node_pools_is_one_cluster_but_never_swallows_a_tkc():
    profile = replace(
        DEFAULT_PLATFORM, name="lab", is_default=False, node_pools=(NodePool("best-effort-large", 3, "workers"),)
    )
    # the platform's cluster takes what no cluster manifest stands beside, with every pool of the run
    alone = facts_of({"apps/web.yaml": DEPLOY.format(name="web", ns="shop")}, platform=profile)
    assert [(c.name, c.source, len(c.objects)) for c in alone.clusters] == [("lab", "platform", 1)]
    assert [p.name for p in alone.clusters[0].node_pools] == ["workers"]
    # a TKC and the workloads beside it are the TKC's cluster, with the TKC's pools only; the
    # platform's pool stays with the platform's cluster
    files = {
        "k8s/a/tkc.yaml": TKC.format(name="a"),
        "k8s/a/web.yaml": DEPLOY.format(name="web", ns="shop"),
        "apps/api.yaml": DEPLOY.format(name="api", ns="shop"),
    }
    f = facts_of(files, platform=profile)
    assert [(c.name, c.source, len(c.objects), c.guest) for c in f.clusters] == [
        ("a", "manifest", 2, True),
        ("lab", "platform", 1, False),
    ]
    assert [p.name for p in f.clusters[0].node_pools] == ["a-control-plane", "workers"]
    assert [p.cluster for p in f.clusters[0].node_pools] == ["a", "a"]
    assert [(p.name, p.cluster) for p in f.clusters[1].node_pools] == [("workers", "")]
    # a pool of the profile naming another cluster is given to no other cluster
    named = replace(profile, node_pools=(NodePool("best-effort-large", 3, "workers", cluster="prod"),))
    scopes = facts_of(files, platform=named).clusters
    assert [(c.name, [p.name for p in c.node_pools]) for c in scopes] == [
        ("a", ["a-control-plane", "workers"]),
        ("prod", ["workers"]),
    ]
    assert [p.cluster for p in scopes[0].node_pools] == ["a", "a"]
    bare = facts_of(files, platform=replace(DEFAULT_PLATFORM, runtime="bare-metal")).clusters
    assert [(c.name, c.source) for c in bare] == [("a", "manifest"), ("default", "platform")]


def test_a_guest_cluster_on_a_supervisor_runs_no_vsphere_pods():
    supervisor = replace(DEFAULT_PLATFORM, name="sup", is_default=False, runtime="vsphere-pods")
    files = {
        "k8s/a/tkc.yaml": TKC.format(name="a"),
        "k8s/a/web.yaml": DEPLOY.format(name="web", ns="shop"),
        "ns/shop/api.yaml": DEPLOY.format(name="api", ns="shop"),
    }
    f = facts_of(files, platform=supervisor)
    assert [(c.name, c.runtime) for c in f.clusters] == [("a", "tkg"), ("sup", "vsphere-pods")]
    assert [w.ref.name for w in f.crx_workloads] == ["api"]
    assert {w.ref.name: f.runs_as_vsphere_pod(w) for w in f.workloads} == {"web": False, "api": True}
    # the Rego rules see the guest cluster's objects with its runtime
    guest = facts_data(f, None, f.clusters[0])["platform"]
    assert guest["runtime"] == "tkg" and guest["node_logical_cpus"] == 4  # its best-effort-large workers
    assert facts_data(f)["platform"]["runtime"] == "vsphere-pods"
    assert "node_logical_cpus" not in facts_data(f)["platform"]
    # so the node-size rules run (for the guest cluster's objects) though the Supervisor has no nodes
    assert missing_fact(f, ["node-logical-cpus"]) is None
    alone = facts_of({"ns/shop/api.yaml": DEPLOY.format(name="api", ns="shop")}, platform=supervisor)
    assert missing_fact(alone, ["node-logical-cpus"]) is not None


def test_config_mapping_comes_before_platform_and_manifests(tmp_path):
    cfg = parse_config_text(
        'clusters:\n  "provider/aws/**": aws\n  provider/baremetal: metal\n', str(tmp_path / ".podfit.yaml")
    )
    files = {
        "provider/aws/deploy.yaml": DEPLOY.format(name="controller", ns="ingress"),
        "provider/baremetal/deploy.yaml": DEPLOY.format(name="controller", ns="ingress"),
        "provider/kind/deploy.yaml": DEPLOY.format(name="controller", ns="ingress"),
    }
    f = facts_of(files, config=cfg)
    assert {c.name: (c.source, len(c.objects), len(c.duplicates)) for c in f.clusters} == {
        "aws": ("config", 1, 0),
        "metal": ("config", 1, 0),
        "": ("input", 1, 0),
    }
    # paths relative to the config file's directory match too
    absolute = {str(tmp_path / k): v for k, v in files.items()}
    assert {c.name for c in facts_of(absolute, config=cfg).clusters} == {"aws", "metal", ""}


def test_duplicates_within_a_cluster_count_once_and_pair_with_the_first():
    files = {
        "provider/aws/deploy.yaml": DEPLOY.format(name="controller", ns="ingress"),
        "provider/baremetal/deploy.yaml": DEPLOY.format(name="controller", ns="ingress"),
        "provider/kind/deploy.yaml": DEPLOY.format(name="controller", ns="ingress")
        + "---\n"
        + DEPLOY.format(name="controller", ns="other"),
    }
    f = facts_of(files)
    (c,) = f.clusters
    assert [o.location.file for o in c.objects] == ["provider/aws/deploy.yaml", "provider/kind/deploy.yaml"]
    assert [(a.location.file, b.location.file) for a, b in c.duplicates] == [
        ("provider/aws/deploy.yaml", "provider/baremetal/deploy.yaml"),
        ("provider/aws/deploy.yaml", "provider/kind/deploy.yaml"),
    ]
    assert len(f.workloads) == 4 and len(f.unique_workloads) == 2 and len(c.workloads) == 2
    assert len(f.unique_objects) == 2


def test_a_duplicated_cluster_manifest_declares_its_pools_once():
    files = {"a/tkc.yaml": TKC.format(name="shop"), "b/tkc.yaml": TKC.format(name="shop")}
    f = facts_of(files)
    assert [c.name for c in f.clusters] == ["shop"] and len(f.clusters[0].duplicates) == 1
    assert len(f.node_pools) == 2 and len(f.clusters[0].node_pools) == 2


def test_objects_without_a_name_are_never_duplicates():
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {generateName: job-}\nspec: {containers: [{name: c}]}\n"
    f = facts_of({"a.yaml": pod, "b.yaml": pod})
    assert len(f.clusters[0].objects) == 2 and not f.clusters[0].duplicates


def test_glob_matching():
    assert glob_matches("deploy/prod/**", "deploy/prod/a/b.yaml")
    assert glob_matches("deploy/prod", "./deploy/prod/x.yaml")
    assert not glob_matches("deploy/prod", "deploy/production/x.yaml")
    assert glob_matches("**/aws/**", "provider/aws/deploy.yaml")
    assert glob_matches("**/aws", "x/y/aws/deploy.yaml")
    assert not glob_matches("*/aws", "x/y/aws/deploy.yaml")
    assert glob_matches("provider/*/deploy.yaml", "provider/aws/deploy.yaml")
    assert not glob_matches("provider/*.yaml", "provider/aws/deploy.yaml")
    assert glob_matches("p/[ab]ws", "p/aws/x.yaml") and not glob_matches("p/[!a]ws", "p/aws/x.yaml")


def test_first_matching_pattern_wins_and_bad_values_are_config_errors():
    cfg = parse_config_text('clusters: {"deploy/prod/canary/**": canary, "deploy/prod/**": prod}\n', "c.yaml")
    assert cfg.cluster_for_path("deploy/prod/canary/a.yaml") == "canary"
    assert cfg.cluster_for_path("deploy/prod/a.yaml") == "prod"
    assert cfg.cluster_for_path("deploy/dev/a.yaml") is None
    with pytest.raises(ConfigError, match="clusters/a"):
        parse_config_text("clusters: {a: 3}\n", "c.yaml")


# ----------------------------------------------------------------------- fixtures, through the CLI ---

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from podfit.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def fixtures(rule: str, dirs_only: bool = False) -> list[Path]:
    return sorted(
        p
        for p in (ROOT / "testdata" / rule).iterdir()
        if p.name.startswith(("pass_", "fail_")) and (p.is_dir() or not dirs_only)
    )


def check_fixture(path: Path, rule: str, monkeypatch, *extra: str) -> tuple[int, list[dict]]:
    """A file fixture is checked as it is; a directory fixture is a repository: podfit runs in it on
    ``deploy/`` with its ``.podfit.yaml`` and ``platform.yaml`` when present."""
    args = ["check", "--format", "json", "--fail-on", "info", "--rule", rule, *extra]
    if path.is_dir():
        monkeypatch.chdir(path)
        args += ["--config", ".podfit.yaml"] if (path / ".podfit.yaml").exists() else ["--config", str(EMPTY_CONFIG)]
        if (path / "platform.yaml").exists():
            args += ["--platform", "platform.yaml"]
        args.append("deploy")
    else:
        args += ["--config", str(EMPTY_CONFIG), str(path)]
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    return r.exit_code, json.loads(r.output)["findings"]


EMPTY_CONFIG = ROOT / "tests" / "data" / "empty-config.yaml"


@pytest.mark.parametrize(
    "path", fixtures("PF910") + fixtures("PF701", dirs_only=True), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_fixture(path: Path, monkeypatch):
    rule = path.parent.name
    code, findings = check_fixture(path, rule, monkeypatch)
    fired = [f for f in findings if f["rule"] == rule]
    if path.name.startswith("fail_"):
        assert fired and code == 1, findings
        assert all(f["line"] > 1 for f in fired)
    else:
        assert not fired and code == 0, findings


def test_every_rule_has_pass_and_fail_fixtures():
    for rule in ("PF910", "PF701"):
        names = [p.name for p in fixtures(rule)]
        assert any(n.startswith("pass_") for n in names) and any(n.startswith("fail_") for n in names), rule


def test_pf910_without_a_named_cluster_is_one_summary(monkeypatch):
    """Nothing names a cluster: one info finding for the run, at the first repeated object of the
    later file, counting the repeated objects and naming the files."""
    code, findings = check_fixture(ROOT / "testdata/PF910/fail_provider_variants", "PF910", monkeypatch)
    second = "deploy/static/provider/baremetal/deploy.yaml"
    first = "deploy/static/provider/aws/deploy.yaml"
    assert [
        (f["file"], f["line"], f["object"]["kind"], f["details"]["count"], f["details"]["cluster_source"])
        for f in findings
    ] == [(second, 2, "Namespace", 3, "input")]
    (f,) = findings
    assert f["severity"] == "info"
    assert f["message"] == (
        f"3 objects are declared more than once (6 declarations across 2 files, e.g. Namespace edge-system in {first} "
        f"and {second}); nothing names a cluster, so each counts once. If the files are alternatives for different "
        "clusters, map their paths to clusters in the config (clusters: {glob: name})"
    )
    assert f["details"]["files"] == [first, second] and f["details"]["objects"] == 3


def test_pf910_on_the_platforms_cluster_is_one_summary(monkeypatch):
    """A platform profile names the cluster the files go to without mapping any file to it: the
    copies are alternatives as often as when nothing names a cluster, so one summary too."""
    platform = ROOT / "testdata" / "platforms" / "bare-metal-256.yaml"
    code, findings = check_fixture(
        ROOT / "testdata/PF910/fail_provider_variants", "PF910", monkeypatch, "--platform", str(platform)
    )
    assert [(f["details"]["cluster"], f["details"]["cluster_source"], f["details"]["count"]) for f in findings] == [
        ("bare-metal-256", "platform", 3)
    ]
    assert (
        "; the files are taken to deploy to the platform's cluster bare-metal-256, so each counts once."
        in (findings[0]["message"])
    )


def test_pf910_points_at_the_second_copy_with_the_first_in_the_message(monkeypatch):
    code, findings = check_fixture(
        ROOT / "testdata/PF910/fail_provider_variants", "PF910", monkeypatch, "--cluster", "one"
    )
    second = "deploy/static/provider/baremetal/deploy.yaml"
    first = "deploy/static/provider/aws/deploy.yaml"
    # one finding for the pair of files, at the first repeated object, listing all three
    assert [
        (
            f["file"],
            f["line"],
            f["object"]["kind"],
            f["details"]["first"]["file"],
            f["details"]["first"]["line"],
            f["details"]["count"],
        )
        for f in findings
    ] == [(second, 2, "Namespace", first, 2, 3)]
    (f,) = findings
    assert f["severity"] == "info" and f"3 objects of this file are already declared in {first}" in f["message"]
    assert len(f["details"]["objects"]) == 3 and f["details"]["cluster"] == "one"


def test_pf910_silent_under_the_cluster_option_only_when_the_mapping_separates(monkeypatch):
    # --cluster puts everything in one cluster: the provider copies clash again
    path = ROOT / "testdata/PF910/pass_provider_variants_mapped"
    _, findings = check_fixture(path, "PF910", monkeypatch, "--cluster", "one")
    assert [(f["details"]["count"], f["details"]["cluster"]) for f in findings] == [(3, "one")]


def test_pf910_can_be_suppressed_on_the_second_object(tmp_path):
    doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: n\n{extra}data: {{a: '1'}}\n"
    (tmp_path / "a.yaml").write_text(doc.format(extra=""))
    (tmp_path / "b.yaml").write_text(doc.format(extra="  annotations: {ignore.podfit.io/PF910: 'kind overlay'}\n"))
    r = CliRunner().invoke(
        main,
        ["check", str(tmp_path), "--format", "json", "--rule", "PF910", "--config", str(EMPTY_CONFIG)],
        catch_exceptions=False,
    )
    assert json.loads(r.output)["findings"] == []


# ------------------------------------------------------------------ rules over several objects ---


def run_check(tmp_path, files: dict[str, str], *args: str, config: str | None = None) -> list[dict]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    cfg = tmp_path / ".podfit.yaml"
    cfg.write_text(config or "# no settings\n")
    r = CliRunner().invoke(
        main,
        ["check", "--format", "json", "--config", str(cfg), "--engine", "embedded", *args, str(tmp_path / "deploy")],
        catch_exceptions=False,
    )
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.output)["findings"]


BIG = DEPLOY.replace("replicas: 2", "replicas: 3").replace("cpu: 500m, memory: 1Gi", "cpu: '2', memory: 4Gi")
SMALL_TKC = TKC.replace("replicas: 2, vmClass: best-effort-large", "replicas: 3, vmClass: best-effort-large")


def test_packing_counts_provider_copies_once(tmp_path):
    # 3 nodes of 4 CPUs (3.75 after overhead) hold 3 pods of 2 CPUs; 9 copies of the Deployment would not fit
    files = {"deploy/cluster.yaml": SMALL_TKC.format(name="edge")}
    for provider in ("aws", "gcp", "azure", "kind", "baremetal", "do", "exoscale", "oracle", "scw"):
        files[f"deploy/provider/{provider}/deploy.yaml"] = BIG.format(name="controller", ns="edge")
    findings = run_check(tmp_path, files, "--rule", "PF601", "--rule", "PF303", "--rule", "PF910")
    assert [f["rule"] for f in findings] == ["PF910"] * 8


def test_packing_works_per_cluster_and_names_the_cluster(tmp_path):
    files = {
        "deploy/prod/cluster.yaml": SMALL_TKC.format(name="prod"),
        "deploy/prod/app.yaml": BIG.format(name="api", ns="shop"),
        "deploy/dev/cluster.yaml": TKC.format(name="dev").replace("best-effort-large", "best-effort-medium"),
        "deploy/dev/app.yaml": BIG.format(name="api", ns="shop"),
    }
    findings = run_check(tmp_path, files, "--rule", "PF601", "--rule", "PF303", "--rule", "PF910")
    # dev's medium nodes (2 CPUs, 1.75 allocatable) take no 2-CPU pod; prod's large nodes take them all
    assert [(f["rule"], f["file"].rsplit("deploy/", 1)[1], f["details"]["cluster"]) for f in findings] == [
        ("PF303", "dev/app.yaml", "dev")
    ]
    assert findings[0]["message"].startswith("cluster dev: pod requests 2 CPU")
    # one cluster for both (--cluster): the same Deployment twice is PF910, and prod's large nodes serve it
    findings = run_check(tmp_path, files, "--rule", "PF601", "--rule", "PF303", "--rule", "PF910", "--cluster", "all")
    assert [(f["rule"], f["file"].rsplit("deploy/", 1)[1], f["details"]["cluster"]) for f in findings] == [
        ("PF910", "prod/app.yaml", "all")
    ]


def test_vsphere_capacity_counts_every_cluster_once(tmp_path):
    # the TKC at the HA limit, copied into a second directory: one cluster (db), so its node VMs count once
    at_limit = (ROOT / "testdata/PF501/pass_at_ha_limit.yaml").read_text()
    files = {"deploy/a/cluster.yaml": at_limit, "deploy/b/cluster.yaml": at_limit}
    findings = run_check(tmp_path, files, "--rule", "PF501", "--rule", "PF502", "--rule", "PF503", "--rule", "PF910")
    assert [(f["rule"], f["file"].rsplit("deploy/", 1)[1]) for f in findings] == [("PF910", "b/cluster.yaml")]
    # two clusters of that size share the one vSphere cluster: over HA capacity
    other = at_limit.replace("name: db", "name: db2")
    files = {"deploy/a/cluster.yaml": at_limit, "deploy/b/cluster.yaml": other}
    findings = run_check(tmp_path, files, "--rule", "PF501", "--rule", "PF910")
    assert [f["rule"] for f in findings] == ["PF501"]


def test_crx_reservations_count_each_vsphere_pod_workload_once(tmp_path):
    sup = ROOT / "testdata/platforms/vsphere-pods.yaml"
    # after HA, 3 hosts × 41,600 MHz = 124,800 MHz; 10 pods of 4 CPUs reserve 104,000 MHz: they fit once,
    # not twice
    pod = DEPLOY.replace("replicas: 2", "replicas: 10").replace("cpu: 500m, memory: 1Gi", "cpu: '4', memory: 1Gi")
    files = {
        "deploy/aws/app.yaml": pod.format(name="api", ns="shop"),
        "deploy/kind/app.yaml": pod.format(name="api", ns="shop"),
    }
    findings = run_check(tmp_path, files, "--platform", str(sup), "--rule", "PF501", "--rule", "PF910")
    assert [f["rule"] for f in findings] == ["PF910"]
    config = 'clusters: {"deploy/aws": one, "deploy/kind": two}\n'
    findings = run_check(tmp_path, files, "--platform", str(sup), "--rule", "PF501", "--rule", "PF910", config=config)
    assert [f["rule"] for f in findings] == ["PF501"]  # two Supervisors' worth of CRXs on the same hosts


# ---------------------------------------------------------------------------------------- PF701 ---


def test_pf701_counts_unique_services_of_one_cluster(monkeypatch):
    code, findings = check_fixture(ROOT / "testdata/PF701/fail_unique_over_small", "PF701", monkeypatch)
    assert code == 1
    assert [(f["file"], f["object"]["name"], f["details"]) for f in findings] == [
        (
            "deploy/provider/gcp/deploy.yaml",
            "gcp-tenant-08",
            # no platform given: the built-in profile's small NSX-T load balancer is assumed (at most info)
            {
                "cluster": "",
                "services": 23,
                "threshold": 20,
                "size": "small",
                "copies": 1,
                "scope": "tkg-cluster",
                "assumed": "platform",
            },
        ),
    ]
    assert findings[0]["severity"] == "info"
    assert findings[0]["message"].startswith(
        "23 Services of type LoadBalancer in one cluster (the whole input), with 1 copy counted once (PF910), "
        "above the 20 virtual servers of its small NSX-T load balancer (one per TKG cluster)"
    )


def test_pf701_names_the_vsphere_namespace(monkeypatch):
    code, findings = check_fixture(ROOT / "testdata/PF701/fail_vsphere_namespace", "PF701", monkeypatch)
    assert [(f["object"]["name"], f["details"]) for f in findings] == [
        (
            "shop-20",
            {
                "cluster": "supervisor",
                "namespace": "shop",
                "services": 21,
                "threshold": 20,
                "size": "small",
                "copies": 0,
                "scope": "vsphere-namespace",
            },
        ),
    ]
    assert "in vSphere Namespace shop of cluster supervisor" in findings[0]["message"]


def test_pf701_is_skipped_without_an_nsx_t_load_balancer(monkeypatch):
    monkeypatch.chdir(ROOT / "testdata/PF701/pass_bare_metal")
    r = CliRunner().invoke(
        main,
        [
            "check",
            "deploy",
            "--platform",
            "platform.yaml",
            "--config",
            str(EMPTY_CONFIG),
            "--rule",
            "PF701",
            "--format",
            "json",
        ],
        catch_exceptions=False,
    )
    report = json.loads(r.output)
    assert report["findings"] == [] and r.exit_code == 0
    assert [(s["rule"], s["reason"]) for s in report["skipped_rules"]] == [
        (
            "PF701",
            "an NSX-T load balancer: runtime tkg or vsphere-pods in the platform (spec.runtime); bare-metal has none",
        )
    ]


SERVICES = "---\n".join(
    f"apiVersion: v1\nkind: Service\nmetadata: {{name: s{i:03d}, namespace: web}}\nspec: {{type: LoadBalancer}}\n"
    for i in range(101)
)


@pytest.mark.parametrize(
    ("runtime", "config", "expected"),
    [
        ("tkg", "", (20, "small")),
        ("vsphere-pods", "", (100, "medium")),  # the study: vSphere Pods' Services get a medium load balancer
        ("tkg", "thresholds: {PF701: {size: medium}}\n", (100, "medium")),
        ("tkg", "thresholds: {PF701: {size: large}}\n", None),
        ("vsphere-pods", "thresholds: {PF701: {size: large, max-services: 50}}\n", (50, "large")),
    ],
)
def test_pf701_size_and_max_services(tmp_path, runtime, config, expected):
    platform = tmp_path / "platform.yaml"
    platform.write_text(
        f"apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {{name: p}}\nspec: {{runtime: {runtime}}}\n"
    )
    findings = run_check(
        tmp_path,
        {"deploy/services.yaml": SERVICES},
        "--rule",
        "PF701",
        "--platform",
        str(platform),
        config=config or None,
    )
    got = [(f["details"]["threshold"], f["details"]["size"]) for f in findings]
    assert got == ([expected] if expected else [])
    if expected and "max-services" in config:
        assert "above max-services 50 for its large NSX-T load balancer" in findings[0]["message"]


def test_pf701_size_must_be_a_known_size(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("thresholds: {PF701: {size: huge}}\n")
    (tmp_path / "s.yaml").write_text(SERVICES)
    r = CliRunner().invoke(main, ["check", str(tmp_path / "s.yaml"), "--config", str(cfg)])
    assert r.exit_code == 2 and "size must be one of auto, small, medium, large, not 'huge'" in r.output


def test_pf701_a_guest_cluster_on_a_supervisor_has_its_own_small_load_balancer(tmp_path):
    # 21 LoadBalancer Services beside a TKC on a vsphere-pods Supervisor are the TKC's: its own small
    # load balancer (20), not the vSphere Namespace's medium one (100)
    platform = tmp_path / "platform.yaml"
    platform.write_text(
        "apiVersion: podfit.io/v1alpha1\nkind: Platform\nmetadata: {name: sup}\nspec: {runtime: vsphere-pods}\n"
    )
    services = "---\n".join(
        f"apiVersion: v1\nkind: Service\nmetadata: {{name: s{i:03d}, namespace: web}}\nspec: {{type: LoadBalancer}}\n"
        for i in range(21)
    )
    files = {"deploy/guest/cluster.yaml": TKC.format(name="guest"), "deploy/guest/services.yaml": services}
    findings = run_check(tmp_path, files, "--rule", "PF701", "--platform", str(platform))
    assert [(f["details"]["cluster"], f["details"]["scope"], f["details"]["size"]) for f in findings] == [
        ("guest", "tkg-cluster", "small")
    ]
    # the same Services in a vSphere Namespace (no TKC): the medium load balancer holds them
    files = {"deploy/ns/services.yaml": services}
    assert run_check(tmp_path / "ns", files, "--rule", "PF701", "--platform", str(platform)) == []


def test_one_configured_cluster_takes_the_profile_s_unnamed_pools_but_not_another_cluster_s(tmp_path):
    cfg = parse_config_text('clusters:\n  "apps/**": prod\n', str(tmp_path / ".podfit.yaml"))
    files = {"apps/web.yaml": DEPLOY.format(name="web", ns="shop")}
    unnamed = replace(DEFAULT_PLATFORM, name="lab", node_pools=(NodePool("best-effort-large", 3, "workers"),))
    (prod,) = facts_of(files, platform=unnamed, config=cfg).clusters
    assert (prod.name, [p.name for p in prod.node_pools]) == ("prod", ["workers"])
    other = replace(unnamed, node_pools=(NodePool("best-effort-large", 3, "workers", cluster="staging"),))
    (prod,) = facts_of(files, platform=other, config=cfg).clusters
    assert prod.node_pools == ()
    # two configured clusters: an unnamed pool is given to neither (it is not both clusters' pool)
    cfg2 = parse_config_text('clusters:\n  "apps/**": prod\n  "ops/**": ops\n', str(tmp_path / ".podfit.yaml"))
    files2 = {**files, "ops/job.yaml": DEPLOY.format(name="job", ns="ops")}
    assert [c.node_pools for c in facts_of(files2, platform=unnamed, config=cfg2).clusters] == [(), ()]
