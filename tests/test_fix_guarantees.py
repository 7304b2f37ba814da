"""`podfit fix` guarantees (issue 34): it never overwrites what the user wrote, `--write` changes
nothing on the file system but the intended bytes, the Kustomize overlay builds to exactly what
`--write` gives, a change never brings a new finding, the formats stay, and the work is one parse
and one write per file."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT, tool
from fixkeys import brought
from podfit.cli import main
from podfit.fix import apply as fix_apply
from podfit.fix import yamledit

DEFAULTS = ["--default-cpu", "100m", "--default-memory", "64Mi"]


def _run(*args: str) -> tuple[int, str, str]:
    """Exit code, output and standard error, each of its entries on one line again (fix wraps them
    at 160 characters, the rest indented: tests/test_command_inputs.py holds it to that)."""
    r = CliRunner().invoke(main, list(args))
    if r.exception and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr.replace("\n    ", " ")


def _keys(path: Path | str, *extra: str) -> set[tuple[str, str, str, str]]:
    """Each finding's identity: rule, file, object and container (lines move with an edit)."""
    code, out, err = _run("check", str(path), "--format", "json", "--fail-on", "never", "--allow-empty", *extra)
    assert code == 0, err
    return {
        (f["rule"], f.get("file") or "", json.dumps(f.get("object")), f.get("container") or "")
        for f in json.loads(out)["findings"]
    }


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# A Deployment whose fixed containers are not the first: kustomize's strategic merge would move them
# to the front (kubernetes-sigs/kustomize#5904) and so change which init container runs first.
MULTI = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, namespace: team}
spec:
  replicas: 1
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      initContainers:
        - name: migrate-schema
          image: x:1
          resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 100m, memory: 64Mi}}
        - name: seed-data
          image: x:1
          resources: {requests: {cpu: 1500m, memory: 64Mi}, limits: {cpu: 1500m, memory: 64Mi}}
      containers:
        - name: web
          image: x:1
          resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 100m, memory: 64Mi}}
        - name: worker
          image: x:1
          resources:
            requests: {cpu: 1500m, memory: 1Gi}
            limits: {cpu: 1500m, memory: 1Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch, namespace: team}
spec:
  replicas: 1
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec:
      initContainers:
        - name: migrate-schema
          image: x:1
          resources: {requests: {cpu: 100m, memory: 64Mi}}
        - name: seed-data
          image: x:1
      containers:
        - name: web
          image: x:1
          resources: {requests: {cpu: 100m, memory: 64Mi}}
        - name: cache
          image: x:1
          resources:
            limits: {memory: 128Mi}
"""


def _pod(name: str, cpu: str = "1500m") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: c\n    image: x\n"
        f"    resources:\n      requests: {{cpu: {cpu}, memory: 1Gi}}\n      limits: {{cpu: {cpu}, memory: 1Gi}}\n"
    )


# ------------------------------------------------------------- never overwrite what the user wrote ---


def test_an_existing_kustomization_is_refused_unless_podfit_wrote_it(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "pod.yaml").write_text(_pod("web"))
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    mine = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: team\nresources: [x.yaml]\n"
    (overlay / "kustomization.yaml").write_text(mine)
    code, _out, err = _run("fix", str(app), "--kustomize", str(overlay))
    assert code == 2
    assert f"{overlay / 'kustomization.yaml'} exists and was not written by podfit fix" in err
    assert _tree(overlay) == {"kustomization.yaml": mine.encode()}
    (overlay / "kustomization.yaml").unlink()
    code, _out, err = _run("fix", str(app), "--kustomize", str(overlay))
    assert code == 0, err
    first = _tree(overlay)
    code, _out, err = _run("fix", str(app), "--kustomize", str(overlay))  # podfit's own: rewritten
    assert code == 0, err
    assert _tree(overlay) == first


def test_a_patch_file_the_user_wrote_is_not_overwritten(tmp_path):
    app = tmp_path / "app.yaml"
    app.write_text(_pod("web"))
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "podfit-pod-web.yaml").write_text("# mine\n")
    code, _out, err = _run("fix", str(app), "--kustomize", str(overlay))
    assert code == 2 and "podfit-pod-web.yaml exists and was not written by podfit fix" in err
    assert _tree(overlay) == {"podfit-pod-web.yaml": b"# mine\n"}


def test_a_symlink_in_the_overlay_pointing_out_is_refused(tmp_path):
    app = tmp_path / "app.yaml"
    app.write_text(_pod("web"))
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    outside = tmp_path / "outside.yaml"
    outside.write_text("keep\n")
    (overlay / "podfit-pod-web.yaml").symlink_to(outside)
    code, _out, err = _run("fix", str(app), "--kustomize", str(overlay))
    assert code == 2 and "would be written outside" in err
    assert outside.read_text() == "keep\n"
    assert not (overlay / "kustomization.yaml").exists()


def test_names_from_objects_cannot_escape_the_overlay(tmp_path):
    repo = tmp_path / "repo"
    (repo / "k8s").mkdir(parents=True)
    (repo / "k8s" / "app.yaml").write_text(_pod("a/../../../../escaped"))
    overlay = repo / "overlay"
    code, _out, err = _run("fix", str(repo / "k8s"), "--kustomize", str(overlay))
    assert code == 0, err
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert written == [Path("repo/k8s/app.yaml"), Path("repo/overlay/kustomization.yaml"),
                       Path("repo/overlay/podfit-pod-a-escaped.yaml")]  # fmt: skip


def test_patch_names_are_sanitised_and_bounded():
    assert fix_apply.patch_name("Pod", "", "a/../../x") == "podfit-pod-a-x.yaml"
    assert fix_apply.patch_name("Deployment", "team", "web") == "podfit-deployment-team-web.yaml"
    assert fix_apply.patch_name("Pod", "", "..") == "podfit-pod.yaml"
    long = fix_apply.patch_name("Pod", "ns", "x" * 300)
    other = fix_apply.patch_name("Pod", "ns", "x" * 299 + "y")
    assert len(long) <= 100 and long.endswith(".yaml") and long != other
    for name in (long, fix_apply.patch_name("Pod", "", "\\..\\/\x00")):
        assert "/" not in name and "\\" not in name and ".." not in name and not name.startswith(".")


def test_two_objects_with_one_patch_name_are_refused(tmp_path):
    app = tmp_path / "app.yaml"
    app.write_text(_pod("x/y") + "---\n" + _pod("x-y"))
    code, _out, err = _run("fix", str(app), "--kustomize", str(tmp_path / "overlay"))
    assert code == 2 and "would both be patched by podfit-pod-x-y.yaml" in err
    assert "→" not in err  # no change reported as made
    assert not (tmp_path / "overlay").exists()


# ------------------------------------------------- --write: the intended bytes and nothing else ---


def test_a_symlink_is_fixed_through_its_target_when_the_target_is_an_input(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "real.yaml").write_text(_pod("web"))
    (app / "link.yaml").symlink_to("real.yaml")
    code, _out, err = _run("fix", str(app), "--write")
    assert code == 0, err
    assert (app / "link.yaml").is_symlink() and os.readlink(app / "link.yaml") == "real.yaml"
    assert "cpu: 2," in (app / "real.yaml").read_text()
    assert "link.yaml: a symbolic link to" in err


def test_a_file_named_twice_is_edited_once(tmp_path, monkeypatch):
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "a.yaml").write_text(_pod("web"))
    monkeypatch.chdir(tmp_path)
    same = str(tmp_path / "k8s" / "a.yaml")  # another spelling of it
    code, diff, err = _run("fix", "k8s/a.yaml", same)
    assert code == 0, err
    assert diff.count("+++ b/k8s/a.yaml") == 1 and "the same file as" in err
    code, _out, err = _run("fix", "k8s/a.yaml", "./k8s/a.yaml", "--write")
    assert code == 0, err
    assert (tmp_path / "k8s" / "a.yaml").read_text() == _pod("web").replace("cpu: 1500m", "cpu: 2")


def test_a_symlink_to_a_file_outside_the_inputs_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    target = tmp_path / "elsewhere" / "real.yaml"
    target.write_text(_pod("web"))
    app = tmp_path / "app"
    app.mkdir()
    (app / "link.yaml").symlink_to(target)
    code, _out, err = _run("fix", str(app), "--write")
    assert code == 1
    assert f"link.yaml: left alone: a symbolic link to {target}, which is not among the inputs" in err
    assert (app / "link.yaml").is_symlink() and target.read_text() == _pod("web")


def test_hard_linked_files_are_refused_and_stay_linked(tmp_path):
    a = tmp_path / "a.yaml"
    a.write_text(_pod("web"))
    os.link(a, tmp_path / "b.yaml")
    code, _out, err = _run("fix", str(a), "--write")
    assert code == 1 and "a.yaml: left alone: it has 2 hard links" in err
    assert a.stat().st_nlink == 2 and a.read_text() == _pod("web")
    code, diff, err = _run("fix", str(a))  # the diff is still offered
    assert "+      requests: {cpu: 2, memory: 1Gi}" in diff


def test_read_only_files_are_refused_with_the_reason(tmp_path):
    a = tmp_path / "a.yaml"
    a.write_text(_pod("web"))
    a.chmod(0o444)
    code, _out, err = _run("fix", str(a), "--write")
    assert code == 1 and "a.yaml: left alone: read-only (mode 0444)" in err
    assert a.read_text() == _pod("web")


def test_mode_is_kept_and_no_temporary_file_stays(tmp_path):
    a = tmp_path / "a.yaml"
    a.write_text(_pod("web"))
    a.chmod(0o640)
    inode = a.stat().st_ino
    code, _out, err = _run("fix", str(a), "--write")
    assert code == 0, err
    assert stat.S_IMODE(a.stat().st_mode) == 0o640 and "cpu: 2," in a.read_text()
    assert a.stat().st_ino != inode  # replaced by a rename, never written in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own a file as another user")
def test_run_as_root_a_file_keeps_its_owner(tmp_path):
    user = "podfit-fix-test"
    created = False
    try:
        pwd.getpwnam(user)
    except KeyError:
        if shutil.which("useradd") is None:
            pytest.skip("no useradd")
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True)
        created = True
    try:
        _owner_is_kept(pwd.getpwnam(user), tmp_path)
    finally:
        if created and shutil.which("userdel") is not None:
            subprocess.run(["userdel", user], check=False)


def _owner_is_kept(pw: pwd.struct_passwd, tmp_path: Path) -> None:
    a = tmp_path / "a.yaml"
    a.write_text(_pod("web"))
    os.chown(a, pw.pw_uid, pw.pw_gid)
    a.chmod(0o600)
    code, _out, err = _run("fix", str(a), "--write")
    assert code == 0, err
    st = a.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (pw.pw_uid, pw.pw_gid, 0o600)
    assert "cpu: 2," in a.read_text()


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_during_the_write_removes_the_temporary_file(tmp_path, sig):
    """The signal arrives while the new bytes are being synced (os.fsync sends it), so the run is
    interrupted at the worst moment: the original stays whole and no temporary file is left."""
    a = tmp_path / "a.yaml"
    a.write_text("old\n")
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(ROOT / "analyzer")!r})
from podfit.fix import safewrite
real_fsync = os.fsync
def fsync(fd):
    real_fsync(fd)
    os.kill(os.getpid(), signal.{sig})
os.fsync = fsync
with safewrite.cleanup_on_signals():
    safewrite.write({str(a)!r}, b"new\\n" * 100000)
print("not reached")
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert "not reached" not in r.stdout
    assert r.returncode != 0
    assert a.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]


def test_a_stale_temporary_file_is_reported_and_never_read_as_a_manifest(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "a.yaml").write_text(_pod("web"))
    stale = app / ".podfit-fix-k1ll3d.tmp"
    stale.write_text(_pod("ghost", "2500m"))  # what a killed run left: a manifest's bytes
    code, _out, err = _run("fix", str(app), "--write")
    assert code == 0, err
    assert f"{stale}: a temporary file left by an interrupted podfit fix" in err
    assert "ghost" not in err and stale.read_text() == _pod("ghost", "2500m")
    assert not [k for k in _keys(app) if "ghost" in k[2]]


# ------------------------------------------------------------ overlays build to what --write gives ---


def _cases() -> list[tuple[str, list[Path], list[str]]]:
    fixable = ("PF101", "PF102", "PF103", "PF104", "PF105", "PF201")
    cases = [
        (p.parent.name + "/" + p.name, [p], DEFAULTS)
        for rule in fixable
        for p in sorted((ROOT / "testdata" / rule).glob("fail_*.yaml"))
    ]
    platform = ["--platform", str(ROOT / "testdata" / "PF301" / "platform.yaml"), "--rule", "PF301"]
    cases += [("PF301/" + p.name, [p], platform) for p in sorted((ROOT / "testdata" / "PF301").glob("fail_*.yaml"))]
    return cases


def _objects(text: str) -> dict[tuple[str, str, str], dict]:
    out = {}
    for doc in yaml.safe_load_all(text):
        if not isinstance(doc, dict):
            continue
        for obj in doc["items"] if doc.get("kind") == "List" else [doc]:
            if not isinstance(obj, dict) or "kind" not in obj:
                continue
            meta = obj.get("metadata") or {}
            out[(obj["kind"], meta.get("namespace") or "", meta.get("name") or "")] = obj
    return out


@pytest.mark.tools
@pytest.mark.skipif(tool("kustomize") is None, reason="kustomize not built: make tools")
@pytest.mark.parametrize(
    "name,files,extra",
    [("several-containers", [], DEFAULTS), *_cases()],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_the_overlay_builds_to_exactly_what_write_gives(name, files, extra, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    if files:
        for f in files:
            shutil.copy(f, app / f.name)
    else:
        (app / "multi.yaml").write_text(MULTI)
    written = tmp_path / "written"
    shutil.copytree(app, written)
    overlay = tmp_path / "overlay"
    code, _out, err = _run("fix", str(app), "--kustomize", str(overlay), *extra)
    assert code in (0, 1), err
    if not overlay.exists():
        pytest.skip(f"{name}: nothing to patch")
    code, _out, err = _run("fix", str(written), "--write", *extra)
    assert code in (0, 1), err
    built = subprocess.run(
        [str(tool("kustomize")), "build", "--load-restrictor", "LoadRestrictionsNone", str(overlay)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    expected: dict = {}
    for p in sorted(written.iterdir()):
        expected.update(_objects(p.read_text()))
    got = _objects(built)
    assert got == expected
    if name == "several-containers":  # the order of containers and init containers kept
        for obj in ("shop", "batch"):
            spec = got[("Deployment", "team", obj)]["spec"]["template"]["spec"]
            assert [c["name"] for c in spec["initContainers"]] == ["migrate-schema", "seed-data"]
            assert [c["name"] for c in spec["containers"]] == ["web", "worker" if obj == "shop" else "cache"]
        spec = got[("Deployment", "team", "shop")]["spec"]["template"]["spec"]
        assert spec["containers"][1]["resources"]["limits"]["cpu"] == 2
        assert spec["initContainers"][1]["resources"]["requests"]["cpu"] == 2
        spec = got[("Deployment", "team", "batch")]["spec"]["template"]["spec"]
        # seed-data runs alone inside the reservation of the app containers: PF113 (info), not fixed
        assert "resources" not in spec["initContainers"][1]


@pytest.mark.tools
@pytest.mark.skipif(tool("kustomize") is None, reason="kustomize not built: make tools")
@pytest.mark.parametrize(
    "layout", sorted(p for p in (ROOT / "testdata" / "repos").iterdir() if p.is_dir()), ids=lambda p: p.name
)
def test_repository_overlays_build_to_exactly_what_write_gives(layout, tmp_path, monkeypatch):
    app, written, overlay = tmp_path / "app", tmp_path / "written", tmp_path / "overlay"
    for copy in (app, written):
        shutil.copytree(layout, copy, ignore=shutil.ignore_patterns("expected"))
    entries = sorted(p.name for p in app.iterdir() if not p.name.startswith("."))
    monkeypatch.chdir(app)  # its .podfit.yaml, when it has one, is found as a user's is
    code, _out, err = _run("fix", *entries, "--kustomize", str(overlay), *DEFAULTS)
    if code == 2:
        assert "appears in" in err or "no Kubernetes object" in err, err  # alternatives: one overlay cannot hold them
        pytest.skip(err.strip())
    if not overlay.exists():
        pytest.skip("nothing to patch")
    monkeypatch.chdir(written)
    code, _out, err = _run("fix", *entries, "--write", *DEFAULTS)
    assert code in (0, 1), err
    built = subprocess.run(
        [str(tool("kustomize")), "build", "--load-restrictor", "LoadRestrictionsNone", str(overlay)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    expected: dict = {}
    for resource in yaml.safe_load((overlay / "kustomization.yaml").read_text())["resources"]:
        source = (overlay / resource).resolve().relative_to(app.resolve())
        expected.update(_objects((written / source).read_text()))
    assert _objects(built) == expected


def test_overlay_operations_are_by_index_and_test_the_container_name():
    from podfit.fix import Change, ObjectEdit
    from podfit.model import ObjectRef

    ref = ObjectRef("v1", "Pod", "", "p")
    before = {"spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {"limits": {"cpu": "1"}}}]}}
    after = json.loads(json.dumps(before))
    after["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
    after["spec"]["containers"][1]["resources"]["limits"]["cpu"] = 2
    changes = tuple(
        Change("PF101", "f", ref, 1, p, v, None, "why")
        for p, v in (
            (("spec", "containers", 0, "resources", "requests", "cpu"), "100m"),
            (("spec", "containers", 0, "resources", "requests", "memory"), "64Mi"),
            (("spec", "containers", 1, "resources", "limits", "cpu"), "2"),
        )
    )
    assert fix_apply.json6902(ObjectEdit("f", ref, before, after, changes)) == [
        {"op": "test", "path": "/spec/containers/0/name", "value": "a"},
        {"op": "add", "path": "/spec/containers/0/resources", "value": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
        {"op": "test", "path": "/spec/containers/1/name", "value": "b"},
        {"op": "replace", "path": "/spec/containers/1/resources/limits/cpu", "value": 2},
    ]


# ------------------------------------------------------------------------------ no new finding ---

NODES_TOO_SMALL = """\
apiVersion: run.tanzu.vmware.com/v1alpha2
kind: TanzuKubernetesCluster
metadata: {name: shop, namespace: team}
spec:
  topology:
    controlPlane: {replicas: 1, vmClass: best-effort-small, storageClass: vsan}
    nodePools:
    - {name: workers, replicas: 3, vmClass: best-effort-medium, storageClass: vsan}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: app
        image: registry.example.com/api:1.0
        resources:
          requests: {cpu: 1500m, memory: 1Gi}
          limits: {cpu: 1500m, memory: 1Gi}
"""


def test_a_change_that_would_bring_a_new_finding_is_dropped_with_the_reason(tmp_path):
    # 2 whole CPUs exceed the 1750m a best-effort-medium node has allocatable: PF303 would follow
    a = tmp_path / "a.yaml"
    a.write_text(NODES_TOO_SMALL)
    code, out, err = _run("fix", str(a), "--write", "--rule", "PF201")
    assert code == 1 and out == ""
    assert "PF201 Deployment shop/api: no fix: spec.template.spec.containers[0].resources.limits.cpu = 2 would " in err
    assert "bring a new finding, PF303 Deployment shop/api: pod requests 2 CPU" in err
    assert "request 1 whole CPU instead (rounded down), or a larger node" in err
    assert a.read_text() == NODES_TOO_SMALL


def _every_fixture() -> list[tuple[Path, list[str]]]:
    out = []
    for d in sorted((ROOT / "testdata").glob("PF*")):
        platform = ["--platform", str(d / "platform.yaml")] if (d / "platform.yaml").is_file() else []
        for p in sorted(d.glob("*.yaml")):
            if p.name != "platform.yaml" and p.name.startswith(("fail_", "pass_")):
                out.append((p, platform))
    return out


@pytest.mark.parametrize("fixture,platform", _every_fixture(), ids=lambda v: getattr(v, "name", ""))
def test_after_write_check_shows_nothing_new_and_a_second_fix_changes_nothing(fixture, platform, tmp_path):
    target = tmp_path / fixture.name
    shutil.copy(fixture, target)
    before = _keys(target, *platform)
    code, _out, err = _run("fix", str(target), "--write", *DEFAULTS, *platform)
    if code == 2 and "no Kubernetes object in the inputs" in err:
        pytest.skip("no object to fix")
    assert code in (0, 1), err
    assert not brought(_keys(target, *platform), before), err
    text = target.read_bytes()
    code, diff, err = _run("fix", str(target), *DEFAULTS, *platform)
    assert diff == "" and target.read_bytes() == text, err


def _layouts() -> list[Path]:
    return sorted(p for p in (ROOT / "testdata" / "repos").iterdir() if p.is_dir())


@pytest.mark.parametrize("layout", _layouts(), ids=lambda p: p.name)
def test_repositories_after_write_show_nothing_new(layout, tmp_path, monkeypatch):
    repo = tmp_path / layout.name
    shutil.copytree(layout, repo, ignore=shutil.ignore_patterns("expected"))
    monkeypatch.chdir(repo)
    entries = sorted(p.name for p in repo.iterdir() if not p.name.startswith("."))
    before = _keys_of(entries)
    code, _out, err = _run("fix", *entries, "--write", *DEFAULTS)
    assert code in (0, 1, 2), err
    if code == 2:
        pytest.skip(f"fix refuses this layout: {err.strip()}")
    assert not brought(_keys_of(entries), before), err
    snapshot = _tree(repo)
    code, diff, err = _run("fix", *entries, *DEFAULTS)
    assert diff == "" and _tree(repo) == snapshot, err


def _keys_of(entries: list[str]) -> set:
    code, out, err = _run("check", *entries, "--format", "json", "--fail-on", "never", "--allow-empty")
    assert code in (0, 1), err
    return {
        (f["rule"], f.get("file") or "", json.dumps(f.get("object")), f.get("container") or "")
        for f in json.loads(out)["findings"]
    }


# --------------------------------------------------------------------------------- formats kept ---


def test_a_json_manifest_named_yaml_stays_json_with_its_indentation(tmp_path):
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "j"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"memory": "64Mi"}}}]},
    }
    text = json.dumps(doc, indent=4) + "\n"
    a = tmp_path / "pod.yaml"
    a.write_text(text)
    code, _out, err = _run("fix", str(a), "--write", *DEFAULTS)
    assert code == 0, err
    new = a.read_text()
    assert json.loads(new)["spec"]["containers"][0]["resources"] == {
        "limits": {"memory": "64Mi"},
        "requests": {"cpu": "100m"},
    }
    assert '\n                    "requests": {"cpu": "100m"}\n' in new  # at the column of its siblings


def test_bom_and_crlf_are_kept(tmp_path):
    text = "\ufeff" + _pod("web").replace("\n", "\r\n")
    a = tmp_path / "a.yaml"
    a.write_bytes(text.encode("utf-8"))
    code, _out, err = _run("fix", str(a), "--write")
    assert code == 0, err
    new = a.read_bytes().decode("utf-8")
    assert new == text.replace("cpu: 1500m", "cpu: 2")


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
@pytest.mark.parametrize("where,spelling", [("repo", "./k8s"), ("repo", "k8s/../k8s/"), ("k8s", "."), ("k8s", "./")])
def test_the_diff_applies_with_git_apply_from_any_spelling(tmp_path, monkeypatch, where, spelling):
    repo = tmp_path / "repo"
    (repo / "k8s").mkdir(parents=True)
    (repo / "k8s" / "app.yaml").write_text(_pod("web"))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.chdir(repo if where == "repo" else repo / "k8s")
    code, diff, err = _run("fix", spelling)
    assert code == 0, err
    header = "--- a/k8s/app.yaml\n+++ b/k8s/app.yaml\n" if where == "repo" else "--- a/app.yaml\n+++ b/app.yaml\n"
    assert diff.startswith(header)
    subprocess.run(["git", "apply", "-"], input=diff, text=True, check=True)
    assert (repo / "k8s" / "app.yaml").read_text() == _pod("web").replace("cpu: 1500m", "cpu: 2")


# ---------------------------------------------------------------------------------- linear time ---


def test_all_edits_of_a_file_are_made_with_one_parse(monkeypatch):
    composed: list[int] = []
    real = yamledit._compose
    monkeypatch.setattr(yamledit, "_compose", lambda text: composed.append(1) or real(text))
    docs = "---\n".join(_pod(f"p{i}") for i in range(200))
    edits = [
        yamledit.Edit(i, ("spec", "containers", 0, "resources", kind, "cpu"), "2")
        for i in range(200)
        for kind in ("requests", "limits")
    ]
    out = yamledit.apply_edits(docs, edits)
    assert len(composed) == 1
    assert out == docs.replace("cpu: 1500m", "cpu: 2")


def _edited(text: str, edits: list) -> tuple[str, list]:
    from podfit.fix.yamledit import edit_documents

    new, _after, splices, _docs = edit_documents(text, edits)
    return new, splices


@pytest.mark.parametrize(
    "text,edits",
    [
        (_pod("a"), [(0, ("spec", "containers", 0, "resources", "limits", "cpu"), "2")]),
        (  # a flow mapping changed twice on one line, a block added under another container
            MULTI,
            [
                (1, ("spec", "template", "spec", "initContainers", 1, "resources", "requests", "cpu"), "100m"),
                (1, ("spec", "template", "spec", "initContainers", 1, "resources", "requests", "memory"), "64Mi"),
                (1, ("spec", "template", "spec", "containers", 1, "resources", "requests", "cpu"), "100m"),
                (0, ("spec", "template", "spec", "initContainers", 1, "resources", "requests", "cpu"), "2"),
                (0, ("spec", "template", "spec", "initContainers", 1, "resources", "limits", "cpu"), "2"),
                (0, ("spec", "template", "spec", "containers", 1, "resources", "limits", "cpu"), "2"),
            ],
        ),
        (  # the last line without a newline, a key added after it
            "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x",
            [(0, ("spec", "containers", 0, "resources", "requests", "cpu"), "1")],
        ),
        (  # edits far apart: two hunks
            "---\n".join(_pod(f"p{i}") for i in range(3)),
            [
                (0, ("spec", "containers", 0, "resources", "limits", "cpu"), "2"),
                (2, ("spec", "containers", 0, "resources", "requests", "memory"), "2Gi"),
            ],
        ),
    ],
    ids=["one", "several-on-a-line", "no-final-newline", "two-hunks"],
)
def test_the_diff_from_the_splices_is_difflibs(text, edits):
    new, splices = _edited(text, [yamledit.Edit(*e) for e in edits])
    assert new != text
    ours = fix_apply.unified_diff("x.yaml", text, new, splices)
    assert ours == fix_apply.unified_diff("x.yaml", text, new)


def test_the_second_check_sees_every_object_as_a_fresh_load_would(tmp_path, monkeypatch):
    """The check of the edited objects parses only the edited files again; the rest keep what
    they were loaded with: the same files, objects and findings as loading everything anew."""
    from dataclasses import replace

    from podfit.commands import fix as fix_command
    from podfit.fix import Change, edit_file
    from podfit.loader import LoaderLimits, discover, load, read_files
    from podfit.model import ObjectRef

    shutil.copytree(ROOT / "testdata" / "repos" / "microservices", tmp_path / "m")
    monkeypatch.chdir(tmp_path / "m")
    (tmp_path / "m" / "kubernetes-manifests" / "zz.yaml").write_text(_pod("extra"))
    inputs = read_files(discover(["kubernetes-manifests", "src"]))
    result = load(inputs)
    path = str(Path("kubernetes-manifests") / "zz.yaml")
    change = Change("PF201", path, ObjectRef("v1", "Pod", "", "extra"), 9,
                    ("spec", "containers", 0, "resources", "limits", "cpu"), "2", "1500m", "why")  # fmt: skip
    edited = edit_file(path, (tmp_path / "m" / path).read_text(), [change])
    assert edited.new_text is not None and edited.documents is not None
    fix = fix_command._Fix.__new__(fix_command._Fix)
    fix.result, fix.inputs, fix.config = result, inputs, type("C", (), {"limits": LoaderLimits()})()
    got = fix._reload({os.path.realpath(path): edited})
    fresh = load([replace(f, data=edited.new_text.encode()) if f.path == path else f for f in inputs])
    assert len(got.objects) == len(result.objects) > 10
    assert got.files == fresh.files and got.findings == fresh.findings
    assert [(o.ref, o.location, o.raw) for o in got.objects] == [(o.ref, o.location, o.raw) for o in fresh.objects]


@pytest.mark.parametrize("value", ["a: b", "x\n---\ny", '"q', "[1, 2]", "&a x", "true", "~", "2", "1500m"])
def test_a_value_is_written_so_that_it_reads_back_as_itself(value):
    """A value (a VM class name comes from the platform profile) that would read as something
    else written plain is double-quoted; a quantity stays plain."""
    text = "kind: Pod\nspec:\n  x: 1\n"
    out = yamledit.apply_edits(text, [yamledit.Edit(0, ("spec", "x"), value)])
    back = yaml.safe_load(out)["spec"]["x"]
    assert str(back) == value and not isinstance(back, (bool, list, dict)) and back is not None
    assert out.startswith("kind: Pod\nspec:\n  x: ") and out.count("\n") == 3
    assert ('"' in out) == (value not in ("2", "1500m"))


def test_fixes_that_keep_planning_each_other_anew_stop_at_a_checked_state(tmp_path, monkeypatch):
    """A plan that never settles (here forced: each new plan raises the CPU by one) ends after a
    bounded number of rounds with the last state the check found nothing new in, and says what is
    left for the next run."""
    import dataclasses

    import podfit.fix as fix_package

    real = fix_package.plan_fixes
    calls: list = []

    def restless(findings, facts, opts, rules=()):
        if not calls:
            calls.append(real(findings, facts, opts, rules))
            return calls[0]
        calls.append(None)
        bumped = tuple(dataclasses.replace(ch, value=str(len(calls) + 1)) for ch in calls[0].changes)
        return dataclasses.replace(calls[0], changes=bumped)

    monkeypatch.setattr(fix_package, "plan_fixes", restless)
    a = tmp_path / "a.yaml"
    a.write_text(_pod("web"))
    code, _out, err = _run("fix", str(a), "--write", "--rule", "PF201")
    assert "left for the next run (their values depend on each other's): PF201 Pod web" in err
    assert len(calls) <= 10
    spec = yaml.safe_load(a.read_text())["spec"]["containers"][0]["resources"]
    assert spec["limits"]["cpu"] == spec["requests"]["cpu"] and spec["limits"]["cpu"] >= 2
