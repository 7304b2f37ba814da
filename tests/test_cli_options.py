"""One option vocabulary across the commands: the same names, types and help for --platform,
--config, --format, --output, --time-budget and --fail-on; errors that tell an installed user what
to do; contributor commands out of the user's help; vSphere commands that refuse platforms without
vSphere hosts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from podfit.cli import LAZY_COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
BARE_METAL = ROOT / "testdata" / "platforms" / "bare-metal-256.yaml"
POD = ROOT / "testdata" / "examples" / "web-shop.yaml"


def command(path: str) -> click.Command:
    ctx = click.Context(main)
    cmd: click.Command | None = main
    for name in path.split():
        assert isinstance(cmd, click.Group)
        cmd = cmd.get_command(ctx, name)
    assert cmd is not None, path
    return cmd


def options(path: str) -> dict[str, click.Option]:
    return {o.opts[0]: o for o in command(path).params if isinstance(o, click.Option)}


# every command that reads manifests or a platform, and what it must offer
SHARED = {
    "check": {"--platform", "--config", "--format", "--output", "--fail-on"},
    "pack": {"--platform", "--config", "--format", "--output", "--time-budget"},
    "vsphere crx": {"--platform", "--config", "--format", "--output"},
    "vsphere capacity": {"--platform", "--config", "--format", "--output", "--time-budget"},
    "platform-data": {"--platform", "--config", "--output"},
    "throttle": {"--format", "--output"},
}


@pytest.mark.parametrize("path", sorted(SHARED))
def test_shared_options_are_the_same_everywhere(path):
    opts = options(path)
    assert SHARED[path] <= set(opts), f"{path} lacks {SHARED[path] - set(opts)}"
    reference = options("check")
    for name in SHARED[path] & {"--platform", "--config", "--output", "--fail-on"}:
        mine, theirs = opts[name], reference[name]
        assert (mine.name, mine.opts, mine.help, type(mine.type)) == (
            theirs.name,
            theirs.opts,
            theirs.help,
            type(theirs.type),
        ), name
    assert "-o" in opts["--output"].opts
    if "--time-budget" in opts:
        assert opts["--time-budget"].type.name == "DURATION"


@pytest.mark.parametrize("path", ["pack", "vsphere capacity"])
def test_time_budget_takes_a_duration_and_names_the_form(path):
    opt = options(path)["--time-budget"]
    assert opt.type.convert("2s", opt, None) == 2.0
    assert opt.type.convert("500ms", opt, None) == 0.5
    assert opt.type.convert("1m", opt, None) == 60.0
    with pytest.raises(click.BadParameter, match="not a duration such as 10s"):
        opt.type.convert("lots", opt, None)


def test_vsphere_capacity_accepts_a_duration_from_the_command_line():
    r = CliRunner().invoke(main, ["vsphere", "capacity", "--time-budget", "2s", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["placement"]["feasible"] is True


@pytest.mark.parametrize("sub", ["crx", "capacity"])
def test_vsphere_commands_refuse_a_platform_without_vsphere_hosts(sub):
    args = ["vsphere", sub, str(POD), "--platform", str(BARE_METAL)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and r.stdout == ""
    assert (
        f"podfit: error: `podfit vsphere {sub}` answers about vSphere hosts, and platform bare-metal-256 "
        f"({BARE_METAL}): runtime bare-metal has no vSphere hosts; give a --platform profile with runtime "
        "tkg or vsphere-pods and spec.hosts"
    ) in r.stderr


def test_output_option_writes_the_file_for_every_command(tmp_path):
    for args in (
        ["throttle", "--limit", "1", "--cpus", "4", "--seconds", "0.5", "--format", "json"],
        ["vsphere", "crx", str(POD), "--format", "json"],
        ["pack", str(ROOT / "testdata/examples"), "--format", "json", "--time-budget", "1s"],
    ):
        out = tmp_path / "out.json"
        r = CliRunner().invoke(main, [*args, "-o", str(out)])
        assert r.exit_code in (0, 1) and r.stdout == "", (args, r.output)
        assert json.loads(out.read_text())
        out.unlink()


def test_contributor_commands_are_not_in_the_user_help():
    r = CliRunner().invoke(main, ["--help"])
    listed = {line.split()[0] for line in r.output.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == {"check", "explain", "rules", *LAZY_COMMANDS}
    assert "docs" not in listed
    assert CliRunner().invoke(main, ["docs", "--help"]).exit_code == 0  # still there for contributors


def test_missing_opa_says_how_to_install_it_or_use_the_embedded_engine(tmp_path):
    env = {"PYTHONPATH": str(ROOT / "analyzer"), "PATH": "/usr/bin:/bin", "PODFIT_OPA": str(tmp_path / "no-opa")}
    p = subprocess.run(
        [sys.executable, "-m", "podfit", "check", "--engine", "opa", str(POD)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 2 and p.stdout == ""
    assert "install opa (https://www.openpolicyagent.org/docs/#running-opa)" in p.stderr
    assert "leave out --engine opa: the shipped policies run in podfit's embedded engine" in p.stderr
    assert "make" not in p.stderr


def test_a_check_imports_no_other_command_and_one_format():
    code = (
        "import sys; from podfit.cli import main\n"
        "try:\n    main(['check', sys.argv[1], '--format', 'json'])\nexcept SystemExit: pass\n"
        "mods = set(sys.modules)\n"
        "print(sorted(m for m in mods if m.startswith(('podfit.commands.', 'podfit.formats.'))))"
    )
    env = {"PYTHONPATH": str(ROOT / "analyzer"), "PATH": "/usr/bin:/bin"}
    p = subprocess.run([sys.executable, "-c", code, str(POD)], capture_output=True, text=True, env=env, timeout=120)
    assert p.stdout.strip().splitlines()[-1] == "['podfit.commands._common', 'podfit.formats.json_report']"
