"""The cache directory is used only when no one but the user can write to it (podfit.cachedir):
wasmtime runs the cached machine code as it is, and cached schema definitions decide PF902."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from podfit.cachedir import cache_dir, trusted_file, write_private

OTHER_UID = 65534  # nobody


def test_made_private_and_written_private(tmp_path, monkeypatch):
    base = tmp_path / "cache"
    base.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    d = cache_dir("schemas")
    assert d == base / "podfit" / "schemas"
    for p in (base / "podfit", d):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700
    write_private(d / "x.json", b"{}")
    assert stat.S_IMODE((d / "x.json").stat().st_mode) == 0o600
    assert trusted_file(d / "x.json")
    assert [p.name for p in d.iterdir()] == ["x.json"]  # no temporary file left


def test_a_relative_xdg_cache_home_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".cache").mkdir(mode=0o700)
    assert cache_dir() == tmp_path / ".cache" / "podfit"


@pytest.mark.parametrize("mode", [0o777, 0o775])
def test_a_directory_others_can_write_is_no_cache(tmp_path, monkeypatch, mode):
    base = tmp_path / "cache"
    (base / "podfit").mkdir(parents=True)
    os.chmod(base / "podfit", mode)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    assert cache_dir() is None


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_directory_of_another_user_is_no_cache(tmp_path, monkeypatch):
    """/tmp as the cache base: another user who made /tmp/podfit first does not get to plant code."""
    base = tmp_path / "shared"
    base.mkdir()
    os.chmod(base, 0o1777)  # sticky and world-writable, owned by root, as /tmp
    (base / "podfit").mkdir(mode=0o700)
    os.chown(base / "podfit", OTHER_UID, OTHER_UID)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    assert cache_dir() is None
    os.rmdir(base / "podfit")
    assert cache_dir() == base / "podfit"  # made by this user: private, so usable


def test_a_symlinked_cache_directory_is_not_followed(tmp_path, monkeypatch):
    base = tmp_path / "cache"
    base.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (base / "podfit").symlink_to(elsewhere)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    assert cache_dir() is None


def test_files_others_could_have_written_are_not_trusted(tmp_path):
    f = tmp_path / "policies-x.cwasm"
    f.write_bytes(b"\0asm")
    os.chmod(f, 0o664)
    assert not trusted_file(f)
    os.chmod(f, 0o600)
    assert trusted_file(f)
    link = tmp_path / "link.cwasm"
    link.symlink_to(f)
    assert not trusted_file(link)
    if os.geteuid() == 0:
        os.chown(f, OTHER_UID, OTHER_UID)
        assert not trusted_file(f)


def test_a_planted_compiled_module_is_never_loaded(tmp_path, monkeypatch):
    """A group-writable .cwasm in the cache is passed over: the policies are compiled again and the
    findings are right (wasmtime would run whatever machine code the file held)."""
    pytest.importorskip("wasmtime")
    from podfit.engines import wasm

    base = tmp_path / "cache"
    base.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    monkeypatch.setattr(wasm, "_compiled", {})
    _, cache = wasm._code_cache()
    assert cache is not None and cache.parent == base / "podfit"
    cache.write_bytes(b"not a module")  # were it loaded, deserialize would fail: compile again
    os.chmod(cache, 0o666)
    seen = []
    real = wasm.open_trusted
    monkeypatch.setattr(wasm, "open_trusted", lambda p: seen.append(Path(p)) or real(p))
    engine, module = wasm._module()
    assert module is not None and seen == [cache]
    assert trusted_file(cache) and stat.S_IMODE(cache.stat().st_mode) == 0o600  # replaced by our own


def test_a_missing_cache_base_is_made_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "new" / "cache"))
    assert cache_dir() == tmp_path / "new" / "cache" / "podfit"
    assert stat.S_IMODE((tmp_path / "new" / "cache").stat().st_mode) == 0o700


def _swap_on_open(monkeypatch, base: Path, evil: Path) -> None:
    """Just before the first open of a file under ``base``, replace ``base`` by a link to ``evil``:
    what another user who can write the directory above the cache base could do between a check of
    the file by its name and its open."""
    real_open = os.open

    def swapping_open(path, flags, *args, **kwargs):
        if str(path).startswith(str(base) + os.sep) and not base.is_symlink():
            base.rename(base.with_name("real"))
            base.symlink_to(evil)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", swapping_open)


def _planted(tmp_path: Path, name: str, data: bytes) -> Path:
    evil = tmp_path / "evil"
    (evil / "podfit").mkdir(parents=True)
    (evil / "podfit" / name).write_bytes(data)
    os.chmod(evil / "podfit" / name, 0o666)  # stands for a file of another user's
    return evil


def test_a_directory_swapped_before_the_open_hands_over_no_code(tmp_path, monkeypatch):
    """XDG_CACHE_HOME=<dir>/cache where someone else can write <dir>: the cached dataclass methods
    read are the user's own, checked on the file opened, never the file a swap put there."""
    import marshal

    from podfit import codecache

    base = tmp_path / "above" / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    path = codecache._file()
    assert path is not None
    write_private(path, marshal.dumps({"text": compile("x = 'mine'", "<string>", "exec")}))
    evil = _planted(tmp_path, path.name, marshal.dumps({"text": compile("x = 'planted'", "<string>", "exec")}))
    _swap_on_open(monkeypatch, base, evil)
    assert codecache._load(path) == {}
    assert base.is_symlink()  # the swap happened before the open


def test_a_directory_swapped_before_the_open_hands_over_no_catalogue(tmp_path, monkeypatch):
    from podfit import registry

    base = tmp_path / "above" / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    root = cache_dir()
    assert root is not None
    place, version = registry.installation_key()
    name = f"probe-{place}-{version}.json"
    write_private(root / name, b'{"from": "user"}')
    evil = _planted(tmp_path, name, b'{"from": "planted"}')
    _swap_on_open(monkeypatch, base, evil)
    assert registry.cached("probe", lambda: {"from": "built"}) == {"from": "built"}
    assert base.is_symlink()
