"""``podfit fix``: propose (``--diff``), make (``--write``) or write as a Kustomize overlay
(``--kustomize DIR``) the changes that make findings go away."""

from __future__ import annotations

import os
import sys
import tempfile
from collections import defaultdict

import click

from ..quantity import QuantityError, parse_cpu, parse_memory
from ._common import config_option, platform_option

__all__ = ["command"]


class _Quantity(click.ParamType):
    def __init__(self, resource: str) -> None:
        self.resource = resource
        self.name = resource

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            parsed = parse_cpu(value) if self.resource == "cpu" else parse_memory(value)
        except QuantityError as e:
            self.fail(str(e), param, ctx)
        if parsed <= 0:
            self.fail(f"{value!r} must be above zero", param, ctx)
        return parsed


def _write_atomically(path: str, text: str) -> None:
    """Replace the file in one step (a crash never leaves it half-written); keeps its mode."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".podfit-fix-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@click.command("fix")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@platform_option
@config_option
@click.option("--cluster", metavar="NAME", help="The cluster all these manifests deploy to.")
@click.option(
    "--rule", "rules", multiple=True, metavar="ID", help="Fix only this rule's findings (id or slug); repeatable."
)
@click.option("--default-cpu", type=_Quantity("cpu"), metavar="CPU", help="CPU request for PF101/PF105 (e.g. 250m).")
@click.option(
    "--default-memory", type=_Quantity("memory"), metavar="MEM", help="Memory request for PF102/PF105 (e.g. 256Mi)."
)
@click.option(
    "--usage",
    "usage_files",
    multiple=True,
    metavar="[KIND=]FILE",
    help="Measured usage (as for check --usage): limits from the measured peak, requests from the steady state.",
)
@click.option(
    "--limit-headroom",
    type=click.IntRange(0, 1000),
    default=10,
    show_default=True,
    metavar="PERCENT",
    help="Room a limit set from a measured peak leaves above it.",
)
@click.option("--diff", "mode", flag_value="diff", default=True, help="Print a unified diff; write nothing (default).")
@click.option("--write", "mode", flag_value="write", help="Edit the files in place (every other byte kept).")
@click.option(
    "--kustomize",
    "kustomize_dir",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Write strategic-merge patches and a kustomization.yaml applying them to the files into DIR.",
)
def command(
    paths: tuple[str, ...],
    platform_path: str | None,
    config_path: str | None,
    cluster: str | None,
    rules: tuple[str, ...],
    default_cpu: int | None,
    default_memory: int | None,
    usage_files: tuple[str, ...],
    limit_headroom: int,
    mode: str,
    kustomize_dir: str | None,
) -> None:
    """Fix what `podfit check` finds in PATH..., where the right value is known.

    \b
    Fixes: PF201 (round a Guaranteed container's CPU up to whole CPUs), PF103 (request
    lowered to the limit), PF104 (limit to the declared peak plus the tolerance), PF107 and
    PF108 (limit to the measured peak plus --limit-headroom), PF109 and PF110 (request to
    the measured p50), PF101, PF102 and PF105 (requests from the measured p50, else from
    --default-cpu / --default-memory), PF402 (a vSphere Pod's limits from the measured peak
    plus --limit-headroom), PF301 and PF604 (a node pool's VM class and count in the
    TanzuKubernetesCluster / Cluster API manifest that declares it). Every other finding of these rules is listed with the
    reason it has no safe fix. The diff goes to standard output, the reasons to standard error.
    \b
    Exit status: 0 every fixable finding has its change; 1 some have no safe fix or a file
    had to be left alone (listed); 2 usage or input failure.
    \b
    Examples:
      podfit fix k8s/ | git apply
      podfit fix k8s/ --write --rule PF201
      podfit fix k8s/ --kustomize overlays/podfit --default-cpu 100m --default-memory 128Mi
    """
    from ..catalogue import resolve
    from ..fix import FIXABLE, FixOptions, edit_file, kustomize_overlay, plan_fixes, unified_diff
    from ..fix.plan import POD_FIXABLE, POOL_FIXABLE
    from ..formats.text import plural
    from ..pipeline import PipelineError, check
    from ..reading import NotRead, is_input, read_bytes
    from ._common import PodfitError, load_config, load_inputs, load_platform, load_usage

    if kustomize_dir is not None:
        mode = "kustomize"
    selected: list[str] = []
    for r in rules:
        rule = resolve(r)
        if rule is None:
            raise click.BadParameter(f"unknown rule {r!r} (see `podfit rules`)", param_hint="--rule")
        if rule.id not in FIXABLE and rule.id not in POD_FIXABLE | POOL_FIXABLE:
            known = ", ".join(sorted(set(FIXABLE) | POD_FIXABLE | POOL_FIXABLE))
            raise click.BadParameter(f"{rule.id} has no fix (fixable: {known})", param_hint="--rule")
        selected.append(rule.id)
    if "-" in paths:
        raise PodfitError("standard input cannot be fixed: fix needs the files the manifests come from")
    config = load_config(config_path)
    platform = load_platform(platform_path or config.platform, config.limits.max_file_bytes)
    result = load_inputs(paths, config)
    if not result.objects:
        raise PodfitError("no Kubernetes object in the inputs; nothing to fix")
    if mode == "kustomize":  # refused before any check: kustomize holds one object per identity
        seen: dict[object, list[str]] = defaultdict(list)
        for o in result.objects:
            seen[o.ref].append(o.location.file)
        for ref, where in seen.items():
            if len(where) > 1:  # patches match by identity too
                raise PodfitError(
                    f"{ref} appears in {len(where)} files ({', '.join(sorted(set(where)))}); a Kustomize overlay "
                    "cannot hold both: run fix --kustomize on each alternative"
                )
    usage = load_usage(usage_files, config.limits.max_file_bytes) if usage_files else None
    try:  # the check's run, of the selected rules only: fix acts on no other rule's findings
        report, facts = check(result, platform, config, rules=selected, cluster=cluster, usage=usage)
    except PipelineError as e:
        raise PodfitError(str(e)) from None
    plan = plan_fixes(report.findings, facts, FixOptions(default_cpu, default_memory, limit_headroom), selected)

    by_file: dict[str, list] = defaultdict(list)
    for ch in plan.changes:
        by_file[ch.file].append(ch)
    left_alone: list[str] = []
    outputs: dict[str, str] = {}
    diffs: list[str] = []
    for path in sorted(by_file):
        try:  # read again, as it is now (line ends and a byte order mark kept)
            old = read_bytes(path, config.limits.max_file_bytes).decode("utf-8")
        except (NotRead, UnicodeDecodeError) as e:
            left_alone.append(f"{path}: left alone: {getattr(e, 'reason', 'not UTF-8 text')}")
            continue
        res = edit_file(path, old, by_file[path])
        if res.new_text is None:
            left_alone.append(f"{path}: left alone: {res.error}")
            continue
        if res.new_text != old:
            outputs[path] = res.new_text
            diffs.append(unified_diff(path, old, res.new_text))

    err = sys.stderr
    for ch in plan.changes:
        if ch.file in outputs:
            was = f"{ch.old} → " if ch.old is not None else "+ "
            click.echo(f"{ch.file}:{ch.line}: {ch.rule} {ch.ref}: {ch.field}: {was}{ch.value}: {ch.reason}", file=err)
    for u in plan.unfixable:
        f = u.finding
        subject = f" {f.object}" if f.object is not None else ""
        click.echo(f"{f.location.file}:{f.location.line}: {f.rule}{subject}: no fix: {u.reason}", file=err)
    for line in left_alone:
        click.echo(f"podfit: {line}", file=err)

    if mode == "diff":
        click.echo("".join(diffs), nl=False)
    elif mode == "write":
        for path, text in outputs.items():
            _write_atomically(path, text)
    else:
        assert kustomize_dir is not None
        changes = [ch for ch in plan.changes if ch.file in outputs]
        if changes:
            resources = sorted({f.path for f in result.files if f.objects and f.path != "-"})
            files = kustomize_overlay(kustomize_dir, resources, changes)
            clobbered = sorted(path for path in files if is_input(path))
            if clobbered:  # the overlay goes beside the inputs, never over one
                raise PodfitError(
                    f"--kustomize {kustomize_dir}: {clobbered[0]} is one of the inputs; "
                    "podfit does not replace it: name a new directory for the overlay"
                )
            os.makedirs(kustomize_dir, exist_ok=True)
            for path, text in files.items():
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
    n_changes = sum(1 for ch in plan.changes if ch.file in outputs)
    verb = {"diff": "proposed", "write": "made", "kustomize": "written as patches"}[mode]
    summary = f"{plural(n_changes, 'change')} {verb} in {plural(len(outputs), 'file')}"
    if plan.unfixable:
        summary += f"; {plural(len(plan.unfixable), 'finding')} without a safe fix"
    if left_alone:
        summary += f"; {plural(len(left_alone), 'file')} left alone"
    click.echo(summary, file=err)
    sys.exit(1 if plan.unfixable or left_alone else 0)
