"""podfit.codecache: dataclass methods compiled once and kept in the private cache; what runs is
what the standard library's own ``exec`` would have made, and only a trusted cache file is read."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from podfit import codecache

ROOT = Path(__file__).resolve().parents[1]

SOURCE = """
from dataclasses import dataclass, field

@dataclass(frozen=True, order=True)
class Sample:
    name: str
    cpu: int = 0
    tags: tuple = ()
    notes: list = field(default_factory=list, compare=False)
"""


def _define(with_cache: bool):
    namespace: dict = {"__name__": "sample_module"}
    saved = dataclasses.__dict__.pop("exec", None)
    try:
        if with_cache:
            dataclasses.exec = codecache._exec  # type: ignore[attr-defined]
        exec(compile(SOURCE, "<sample>", "exec", dont_inherit=True), namespace)
    finally:
        dataclasses.__dict__.pop("exec", None)
        if saved is not None:
            dataclasses.exec = saved  # type: ignore[attr-defined]
    return namespace["Sample"]


def _code(fn) -> tuple:
    c = fn.__code__
    return (c.co_code, c.co_consts, c.co_names, c.co_varnames, c.co_flags, c.co_filename, fn.__annotations__)


def test_cached_methods_are_the_ones_exec_makes():
    """Every generated method has the bytecode, constants, names, flags and annotations the
    standard library's exec gives (no __future__ flag of podfit's leaks in), and behaves alike."""
    plain, cached = _define(False), _define(True)
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__lt__"):
        assert _code(getattr(plain, name)) == _code(getattr(cached, name)), name
    a, b = cached("web", 250, ("x",)), cached("web", 250, ("x",), ["other notes"])
    assert a == b and hash(a) == hash(b) and repr(a) == repr(plain("web", 250, ("x",)))
    assert cached("a") < cached("b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.cpu = 1  # type: ignore[misc]
    # the second definition of the same source compiled nothing new
    compiled = codecache._state["compiled"]
    _define(True)
    assert codecache._state["compiled"] == compiled


RUN = """
import json, sys
sys.argv = ["podfit", "check", sys.argv[1], "-q"]
from podfit import codecache
from podfit.cli import run_main
code = run_main()
print(json.dumps({"exit": code, "loaded": codecache._state["loaded"], "added": codecache._state["compiled"]}),
      file=sys.stderr)
"""


def _run(tmp_path: Path, manifest: Path) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT / "analyzer"))
    proc = subprocess.run([sys.executable, "-c", RUN, str(manifest)], capture_output=True, text=True, env=env)
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_a_second_run_compiles_nothing_and_an_untrusted_cache_is_not_read(tmp_path):
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: x}\n"
    )
    first = _run(tmp_path, manifest)
    assert first["added"] > 100 and first["loaded"] == 0
    (cache,) = (tmp_path / "cache" / "podfit").glob("dataclass-code-*.marshal")
    assert cache.stat().st_mode & 0o777 == 0o600
    second = _run(tmp_path, manifest)
    assert (second["added"], second["exit"]) == (0, first["exit"])
    assert second["loaded"] >= first["added"]
    # writable by others: not read (the code it holds would run as the user)
    cache.chmod(0o666)
    assert _run(tmp_path, manifest)["loaded"] == 0
    # not a marshal dump, or a dump of something else: compiled afresh, same verdict
    for junk in (b"\x00garbage", b"", __import__("marshal").dumps([1, 2])):
        cache.write_bytes(junk)
        cache.chmod(0o600)
        again = _run(tmp_path, manifest)
        assert (again["loaded"], again["exit"]) == (0, first["exit"])


def test_a_full_cache_keeps_only_what_the_run_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(codecache, "MAX_ENTRIES", 1)
    monkeypatch.setattr(codecache, "_codes", {"stale text": compile("x = 1", "<string>", "exec")})
    monkeypatch.setattr(codecache, "_used", set())
    monkeypatch.setitem(codecache._state, "added", 0)
    _define(True)
    codecache.save()
    (cache,) = (tmp_path / "podfit").glob("dataclass-code-*.marshal")
    kept = codecache._load(cache)
    assert "stale text" not in kept
    assert kept and all("__create_fn__" in k for k in kept)


def test_code_of_another_bytecode_version_is_not_read(tmp_path, monkeypatch):
    """Releases that share a cache tag (a beta and its final release) may differ in bytecode: the
    file is named by the interpreter's bytecode version (as a .pyc is checked by it), so code
    compiled by another is never loaded."""
    import marshal
    from importlib.util import MAGIC_NUMBER

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = codecache._file()
    assert path is not None and path.name.endswith(f"-{MAGIC_NUMBER[:2].hex()}.marshal")
    other = (MAGIC_NUMBER[0] ^ 1).to_bytes(1, "little") + MAGIC_NUMBER[1:2]
    foreign = path.with_name(path.name.replace(MAGIC_NUMBER[:2].hex(), other.hex()))
    foreign.write_bytes(marshal.dumps({"text": compile("x = 1", "<string>", "exec")}))
    foreign.chmod(0o600)
    assert foreign != path and codecache._load(path) == {}
