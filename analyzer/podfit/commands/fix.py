"""``podfit fix``: propose (``--diff``), make (``--write``) or write as a Kustomize overlay
(``--kustomize DIR``) the changes that make findings go away."""

from __future__ import annotations

import gc
import os
import sys
from collections import defaultdict
from dataclasses import replace
from typing import Any

import click

from ..quantity import QuantityError, parse_cpu, parse_memory
from ._common import ManifestOptions, manifest_options

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


@click.command("fix")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@manifest_options("fix")
@click.option("--cluster", metavar="NAME", help="The cluster all these manifests deploy to.")
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
    help="Write JSON6902 patches (by list index: container order kept) and a kustomization.yaml applying "
    "them to the files into DIR; a kustomization there that podfit did not write is never overwritten.",
)
def command(
    paths: tuple[str, ...],
    manifest: ManifestOptions,
    cluster: str | None,
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
    No change is made that would bring a finding the inputs do not have: every rule checks
    the edited objects first (see docs/fix.md for this and for what fix refuses).
    \b
    Exit status: 0 every fixable finding has its change; 1 some have no safe fix or a file
    had to be left alone (listed); 2 usage or input failure.
    \b
    Examples:
      podfit fix k8s/ | git apply
      podfit fix k8s/ --write --rule PF201
      podfit fix k8s/ --kustomize overlays/podfit --default-cpu 100m --default-memory 128Mi
    """
    from ..fix import FIXABLE, FixOptions, plan_fixes
    from ..fix.plan import POD_FIXABLE, POOL_FIXABLE
    from ..pipeline import PipelineError, check
    from ._common import (
        PodfitError,
        _split,
        load_usage,
        read_inputs,
        rule_ids_of,
    )

    # one run over finite input, as check: memory comes back by reference counting, and the cyclic
    # collector would only walk the growing heap again and again (the composed nodes of a large
    # file made the edit superlinear with it)
    gc.disable()
    if kustomize_dir is not None:
        mode = "kustomize"
    fixable = set(FIXABLE) | POD_FIXABLE | POOL_FIXABLE
    selected: list[str] = []
    for value in _split(manifest.rules):
        ids = rule_ids_of([value], "--select")
        if len(ids) == 1 and ids[0] not in fixable:  # one rule named: it must have a fix
            raise click.BadParameter(
                f"{ids[0]} has no fix (fixable: {', '.join(sorted(fixable))})", param_hint="--select"
            )
        selected.extend(i for i in ids if i in fixable and i not in selected)
    if manifest.rules and not selected:
        raise click.BadParameter(f"no rule with a fix among {', '.join(manifest.rules)}", param_hint="--select")
    ignored = set(rule_ids_of(manifest.ignore_rules, "--ignore"))
    if ignored:
        selected = [r for r in (selected or sorted(fixable)) if r not in ignored]
        if not selected:  # an empty selection would mean every rule
            raise click.BadParameter("no rule with a fix is left to fix", param_hint="--ignore")
    if "-" in paths:
        raise PodfitError("standard input cannot be fixed: fix needs the files the manifests come from")
    # fix reads --select/--ignore itself (above): the config takes the path selection only
    config, platform = manifest.config_and_platform(rule_selection=False)
    # charts and kustomizations rendered in place, as check renders them: their findings are
    # reported at the template's line and never fixed in the rendered text (_rendered_refusals)
    inputs, result = read_inputs(paths, config, manifest.platform_file(config))
    if not result.objects:
        raise PodfitError("no Kubernetes object in the inputs; nothing to fix")
    if mode == "kustomize":  # refused before any check: kustomize holds one object per identity
        seen: dict[object, list[str]] = defaultdict(list)
        for o in result.objects:
            if o.location.file not in result.sources:  # rendered objects get no patch
                seen[o.ref].append(o.location.file)
        for ref, where in seen.items():
            if len(where) > 1:  # patches match by identity too
                raise PodfitError(
                    f"{ref} appears in {len(where)} files ({', '.join(sorted(set(where)))}); a Kustomize overlay "
                    "cannot hold both: run fix --kustomize on each alternative"
                )
        _overlay_refusal(kustomize_dir or "")
    usage = load_usage(usage_files, config.limits.max_file_bytes) if usage_files else None

    def run_check(res: Any, only: list[str]) -> Any:
        try:
            return check(res, platform, config, rules=only, cluster=cluster, usage=usage)
        except PipelineError as e:
            raise PodfitError(str(e)) from None

    # the check's run, of the selected rules only: fix acts on no other rule's findings; every rule's
    # findings are the baseline no change may add to
    report, facts = run_check(result, selected)
    baseline = report if not selected else run_check(result, [])[0]
    opts = FixOptions(default_cpu, default_memory, limit_headroom)

    def replan(findings: Any, facts: Any) -> Any:
        return plan_fixes([f for f in findings if not _rendered(f)], facts, opts, selected)

    plan = replan(report.findings, facts)
    refusals = _rendered_refusals([f for f in report.findings if _rendered(f)], facts, opts, selected)
    plan = replace(plan, unfixable=plan.unfixable + refusals)
    fixer = _Fix(plan, report, baseline, inputs, config, run_check, replan, mode, kustomize_dir, result)
    # a chart not rendered (no helm, a failed render) or a template given raw was not checked, so
    # nothing in it was fixed: said, and the run is no success
    fixer.left_alone += [
        f"{f.location.file}: left alone: {f.rule} {f.message}"
        for f in result.findings
        if f.rule == "PF908" and config.rule_enabled("PF908") and "PF908" not in ignored
    ]
    fixer.run()


def _rendered(f: Any) -> bool:
    """Is ``f`` a finding on rendered text (a chart's ``helm template``, a ``kustomize build``)?"""
    return "rendered" in f.details


def _rendered_refusals(findings: Any, facts: Any, opts: Any, selected: list[str]) -> tuple[Any, ...]:
    """The fixable findings on rendered text, each with why fix leaves it: the rendered text is
    made anew from the chart or the kustomization on every render, so the change belongs there (in
    the values key that set the value, when the finding names one); the value the fix would
    set, where fix knows it, is named."""
    from ..fix import FIXABLE, Unfixable, plan_fixes
    from ..fix.plan import POD_FIXABLE, POOL_FIXABLE

    fixable = set(FIXABLE) | POD_FIXABLE | POOL_FIXABLE
    mine = [f for f in findings if f.rule in fixable and (not selected or f.rule in selected)]
    # planned on the rendered objects only to name the value; nothing of it is written
    would: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
    for ch in plan_fixes(mine, facts, opts, selected).changes:
        would[(ch.rule, ch.ref)].append(ch)
    out = []
    for f in mine:
        source = f.details["rendered"]
        by = str(source.get("by") or "the renderer")
        if source.get("values"):
            where = source.get("values-file") or "values.yaml"
            if source.get("values-line"):
                where = f"{where}:{source['values-line']}"
            target = f"the chart's values, key {source['values']} ({where})"
        elif by.startswith("helm"):
            target = f"the chart's template ({f.location.file}:{f.location.line})"
        else:
            target = f"the kustomization's resource or a patch ({f.location.file}:{f.location.line})"
        made = "rendered" if by.startswith("helm") else "built"
        reason = f"{made} by `{by}`, whose output fix never writes; the fix belongs in {target}"
        changes = [ch for ch in would.get((f.rule, f.object), ()) if not f.container or ch.container == f.container]
        if changes:
            reason += ": set " + ", ".join(f"{ch.field.split('.resources.', 1)[-1]} to {ch.value}" for ch in changes)
        out.append(Unfixable(f, reason))
    return tuple(out)


def _key(f: Any) -> tuple[Any, ...]:
    """A finding's identity across the edit (its line and message may move with the change)."""
    return (f.rule, f.location.file, f.object, f.container)


def _unmasked(f: Any, baseline: Any) -> bool:
    """Was ``f`` there before, hidden behind a finding of the same container (or of its pod) that its
    rule leaves to another (its catalogue ``masked_by``: PF111's missing memory limit behind PF102's
    missing request or PF105's BestEffort pod)? Fixing the one shows the other; the fix did not bring it."""
    from ..catalogue import load_catalogue

    rules = load_catalogue()
    if f.rule not in rules or f.container is None:
        return False
    masks = rules[f.rule].masked_by
    return any(
        b.rule in masks
        and b.location.file == f.location.file
        and b.object == f.object
        and b.container in (None, f.container)  # the container's, or its whole pod's
        for b in baseline
    )


def _overlay_refusal(out_dir: str) -> None:
    """Exit 2 if ``out_dir`` holds a kustomization podfit did not write."""
    from ..fix.apply import KUSTOMIZATION_MARKER
    from ..loader import KUSTOMIZATION_NAMES
    from ._common import PodfitError

    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise PodfitError(f"--kustomize {out_dir}: not a directory")
    for name in KUSTOMIZATION_NAMES:
        path = os.path.join(out_dir, name)
        if not os.path.lexists(path):
            continue
        if os.path.islink(path) or not os.path.isfile(path) or not _first_line(path).startswith(KUSTOMIZATION_MARKER):
            raise PodfitError(
                f"{path} exists and was not written by podfit fix: it is not overwritten; "
                "give --kustomize a new directory (and add it to that kustomization's resources)"
            )


def _first_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readline()
    except OSError:
        return ""


class _Fix:
    """The edits, their check for new findings, and the output of one ``podfit fix`` run."""

    def __init__(
        self,
        plan: Any,
        report: Any,
        baseline: Any,
        inputs: Any,
        config: Any,
        run_check: Any,
        replan: Any,
        mode: str,
        kustomize_dir: str | None,
        result: Any,
    ) -> None:
        self.plan = plan  # the changes, and the findings without a safe fix
        self.report = report  # the check of the selected rules the plan comes from
        self.baseline = baseline  # every rule's findings on the inputs as they are
        self.inputs = inputs  # the files read (InputFile), in the loader's order
        self.result = result  # what the loader made of them
        self.config = config
        self.run_check = run_check  # (LoadResult, rules) → (report, facts), with the run's platform and usage
        self.replan = replan  # (findings, facts) → FixPlan, with the run's options and rules
        self.mode = mode  # diff, write or kustomize
        self.kustomize_dir = kustomize_dir
        self.left_alone: list[str] = []
        self.notes: list[str] = []
        self.unfixable = list(plan.unfixable)

    def run(self) -> None:
        from ..fix import safewrite
        from ..words import plural, wrap_line

        changes = list(self.plan.changes)
        by_file: dict[str, list] = defaultdict(list)
        for ch in changes:
            by_file[ch.file].append(ch)
        texts = self._read(by_file)
        changes = [ch for ch in changes if ch.file in texts]
        results = self._edit_without_new_findings(changes, texts)
        outputs = {
            path: r.new_text for path, r in results.items() if r.new_text is not None and r.new_text != texts[path][0]
        }
        made = [ch for path in outputs for ch in results[path].changes]
        if self.mode == "kustomize" and made:  # before the report: a refused overlay reports nothing as made
            self._write_overlay([o for path in outputs for o in results[path].objects])

        err = sys.stderr
        dirs = [os.path.dirname(os.path.abspath(f.path)) for f in self.inputs]
        if self.kustomize_dir is not None:
            dirs.append(os.path.abspath(self.kustomize_dir))
        removed, left = safewrite.remove_stale_temp_files(dirs)
        for stale in removed:
            click.echo(f"podfit: {stale}: removed, a temporary file left by a killed podfit fix", file=err)
        for stale in left:
            click.echo(
                f"podfit: {stale}: a temporary file left by an interrupted podfit fix (never read as a "
                "manifest); remove it",
                file=err,
            )
        # one entry per change, finding and note: its first line at most LINE_LIMIT characters, the
        # rest on lines indented below it
        for ch in sorted(made, key=lambda ch: (ch.file, ch.line, ch.rule, tuple(map(str, ch.path)))):
            was = f"{ch.old} → " if ch.old is not None else "+ "
            entry = f"{ch.file}:{ch.line}: {ch.rule} {ch.ref}: {ch.field}: {was}{ch.value}: {ch.reason}"
            click.echo(wrap_line(entry), file=err)
        for u in self.unfixable:
            f = u.finding
            subject = f" {f.object}" if f.object is not None else ""
            entry = f"{f.location.file}:{f.location.line}: {f.rule}{subject}: no fix: {u.reason}"
            click.echo(wrap_line(entry), file=err)
        for line in self.notes:
            click.echo(wrap_line(f"podfit: {line}"), file=err)
        for line in self.left_alone:
            click.echo(wrap_line(f"podfit: {line}"), file=err)

        if self.mode == "diff":
            from ..fix import unified_diff

            diffs = (unified_diff(p, texts[p][0], outputs[p], results[p].splices) for p in sorted(outputs))
            click.echo("".join(diffs), nl=False)
        elif self.mode == "write":
            with safewrite.cleanup_on_signals():
                for path in sorted(outputs):
                    try:
                        safewrite.write(path, outputs[path].encode("utf-8"), expect=texts[path][1])
                    except OSError as e:
                        from ._common import PodfitError

                        raise PodfitError(f"{path}: not written: {e}") from None
        verb = {"diff": "proposed", "write": "made", "kustomize": "written as patches"}[self.mode]
        summary = f"{plural(len(made), 'change')} {verb} in {plural(len(outputs), 'file')}"
        if self.unfixable:
            summary += f"; {plural(len(self.unfixable), 'finding')} without a safe fix"
        if self.left_alone:
            summary += f"; {plural(len(self.left_alone), 'file')} left alone"
        click.echo(summary, file=err)
        sys.exit(1 if self.unfixable or self.left_alone else 0)

    def _reload(self, edited: dict[str, Any]) -> Any:
        """The inputs as loaded, with the edited files (by real path) parsed again from their new
        text; every other file keeps the objects and findings it was loaded with."""
        from ..loader import LoadResult, parse_file

        files: list[Any] = []
        objects: list[Any] = []
        findings: list[Any] = []
        by_file: dict[str, list] = defaultdict(list)
        for o in self.result.objects:
            by_file[o.location.file].append(o)
        found: dict[str, list] = defaultdict(list)
        for f in self.result.findings:
            found[f.location.file].append(f)
        records = {r.path: r for r in self.result.files}
        for f in self.inputs:
            res = edited.get(os.path.realpath(f.path)) if f.data is not None else None
            if res is None:
                if f.path in records:
                    files.append(records[f.path])
                objects.extend(by_file.pop(f.path, ()))
                findings.extend(found.pop(f.path, ()))
                continue
            limits = self.config.limits

            def docs(text: str, res: Any = res, limits: Any = limits) -> Any:
                return _reload_docs(text, res, limits.yaml)

            parsed = parse_file(replace(f, data=res.new_text.encode("utf-8")), limits, docs)
            files.append(parsed.record)
            objects.extend(parsed.objects)
            findings.extend(parsed.findings)
            by_file.pop(f.path, None)
            found.pop(f.path, None)
        for rest in found.values():  # findings of no input file (none expected): kept
            findings.extend(rest)
        # the rendered files are never edited: their findings stay at their sources' lines
        return LoadResult(
            files=tuple(files), objects=tuple(objects), findings=tuple(findings), sources=self.result.sources
        )

    def _write_overlay(self, edits: list) -> None:
        """The overlay's files, each inside DIR and none overwriting a file podfit did not write;
        all are checked before the first is written."""
        from ..fix import OverlayError, kustomize_overlay, safewrite
        from ..fix.apply import KUSTOMIZATION_MARKER, PATCH_MARKER
        from ..reading import is_input
        from ._common import PodfitError

        out_dir = self.kustomize_dir or ""
        rendered = self.result.sources  # a chart's template is no resource a kustomization can take
        resources = sorted({f.path for f in self.result.files if f.objects and f.path not in ("-", *rendered)})
        try:
            files = kustomize_overlay(out_dir, resources, edits)
        except OverlayError as e:
            raise PodfitError(str(e)) from None
        _overlay_refusal(out_dir)
        os.makedirs(out_dir, exist_ok=True)
        root = os.path.realpath(out_dir)
        for path in files:
            if is_input(path):  # the overlay goes beside the inputs, never over one
                raise PodfitError(
                    f"--kustomize {out_dir}: {path} is one of the inputs; podfit does not replace it: "
                    "name a new directory for the overlay"
                )
            real = os.path.realpath(path)
            if os.path.dirname(real) != root:
                raise PodfitError(f"{path} would be written outside {out_dir} (at {real}); nothing written")
            if os.path.lexists(path):
                marker = KUSTOMIZATION_MARKER if os.path.basename(path) == "kustomization.yaml" else PATCH_MARKER
                if os.path.islink(path) or not os.path.isfile(path) or not _first_line(path).startswith(marker):
                    raise PodfitError(
                        f"{path} exists and was not written by podfit fix: it is not overwritten; nothing written"
                    )
        with safewrite.cleanup_on_signals():
            for path, text in files.items():
                try:
                    safewrite.write(path, text.encode("utf-8"))
                except OSError as e:
                    raise PodfitError(f"{path}: not written: {e}") from None

    def _read(self, by_file: dict[str, list]) -> dict[str, tuple[str, Any]]:
        """Each file to edit: its text and what it was when read. A symbolic link is edited
        through its target when the target is among the inputs, else left alone; a file named
        twice is edited once."""
        from ..fix import safewrite
        from ..reading import NotRead, read_bytes

        real_inputs = {
            os.path.realpath(f.path) for f in self.inputs if f.data is not None and not os.path.islink(f.path)
        }
        texts: dict[str, tuple[str, Any]] = {}
        seen: dict[str, str] = {}  # real path → the spelling edited
        for path in sorted(by_file):
            real = os.path.realpath(path)
            if path in self.result.sources:  # never planned (_rendered_refusals); never written either
                self.left_alone.append(f"{path}: left alone: rendered output (helm template, kustomize build)")
                continue
            if os.path.islink(path):
                target = real
                if target in real_inputs:
                    self.notes.append(f"{path}: a symbolic link to {target}, which is fixed itself")
                else:
                    self.left_alone.append(
                        f"{path}: left alone: a symbolic link to {target}, which is not among the inputs; "
                        "fix the target itself"
                    )
                continue
            if real in seen:  # one file named twice (k8s/a.yaml and ./k8s/a.yaml): edited once
                self.notes.append(f"{path}: the same file as {seen[real]}, fixed once")
                continue
            seen[real] = path
            why = safewrite.refusal(path) if self.mode == "write" else None
            if why is not None:  # refused before the edit, so the other files' changes are checked without it
                self.left_alone.append(f"{path}: left alone: {why}")
                continue
            try:
                snap = safewrite.snapshot(path)
                text = read_bytes(path, self.config.limits.max_file_bytes).decode("utf-8")
            except NotRead as e:
                self.left_alone.append(f"{path}: left alone: {e.reason}")
                continue
            except (OSError, UnicodeDecodeError) as e:
                self.left_alone.append(f"{path}: left alone: cannot be read: {e}")
                continue
            texts[path] = (text, snap)
        return texts

    def _edit_without_new_findings(self, changes: list, texts: dict[str, tuple[str, Any]]) -> dict[str, Any]:
        """The files edited in memory, checked again by every rule until nothing moves:
        - a change whose object then shows a finding the baseline does not have is dropped, with
          the reason (and a new finding of no changed object drops them all);
        - a fix whose value depends on others (a pool right-sized for the pods' new requests) is
          planned again on the edited objects and takes its final value,
        so a second ``fix`` finds nothing to change."""
        from ..findings import Finding
        from ..fix import Unfixable, edit_file

        before = {_key(f) for f in self.baseline.findings}
        origin: dict[tuple[Any, ...], Finding] = {}
        for f in self.report.findings:
            origin.setdefault((f.rule, f.location.file, f.object, f.location.line), f)
            origin.setdefault((f.rule, f.location.file, f.object), f)  # a change planned again has moved lines
        first: dict[tuple[Any, ...], Any] = {(ch.file, ch.ref, ch.path): ch for ch in changes}
        current = dict(first)
        banned: set[tuple[Any, ...]] = set()  # (rule, file, object) whose change brought a new finding
        results: dict[str, Any] = {}
        verified: dict[str, Any] = {}  # the last edit the check found nothing new in
        for _round in range(8):
            by_file: dict[str, list] = defaultdict(list)
            for ch in current.values():
                by_file[ch.file].append(ch)
            results = {path: edit_file(path, texts[path][0], chs) for path, chs in sorted(by_file.items())}
            failed = {p for p, r in results.items() if r.new_text is None}
            for path in sorted(failed):
                self.left_alone.append(f"{path}: left alone: {results[path].error}")
            current = {k: ch for k, ch in current.items() if ch.file not in failed}
            results = {p: r for p, r in results.items() if p not in failed}
            edited = {os.path.realpath(p): r for p, r in results.items() if r.new_text != texts[p][0]}
            if not edited:
                return results
            after, facts = self.run_check(self._reload(edited), [])
            new = [f for f in after.findings if _key(f) not in before and not _unmasked(f, self.baseline.findings)]
            if new:
                changed = {(ch.file, ch.ref) for ch in current.values()}
                blame: dict[tuple[str, Any], Any] = {}
                for f in new:
                    if f.object is not None and (f.location.file, f.object) in changed:
                        blame.setdefault((f.location.file, f.object), f)
                together = not blame
                if together:  # the new findings are no one object's: none of the changes is made
                    blame = {obj: new[0] for obj in changed}
                for k, ch in list(current.items()):
                    f = blame.get((ch.file, ch.ref))
                    if f is None:
                        continue
                    del current[k]
                    banned.add((ch.rule, ch.file, ch.ref))
                    src = origin.get((ch.rule, ch.file, ch.ref, ch.line)) or origin.get((ch.rule, ch.file, ch.ref))
                    if src is not None and all(u.finding is not src for u in self.unfixable):
                        self.unfixable.append(Unfixable(src, _new_finding_reason(ch, f, together)))
                continue
            more = [
                ch
                for ch in self.replan(after.findings, facts).changes
                if ch.file in texts and (ch.rule, ch.file, ch.ref) not in banned
            ]
            moved = False
            for ch in more:
                k = (ch.file, ch.ref, ch.path)
                was = first.get(k)
                final = ch if was is None else replace(ch, old=was.old, line=was.line, reason=_replanned(was, ch))
                if was is not None and final.value == (was.old or ""):
                    moved = moved or k in current
                    current.pop(k, None)  # back to the value the file holds: no change
                elif k not in current or current[k].value != final.value:
                    current[k], moved = final, True
                    first.setdefault(k, final)
            if not moved:
                return results
            verified = results
        # the fixes kept planning each other anew: what was last checked is made; the rest waits
        made = _made(verified)
        unsettled = sorted({f"{ch.rule} {ch.ref}" for k, ch in current.items() if made.get(k) != ch.value})
        if unsettled:
            self.notes.append(
                f"left for the next run (their values depend on each other's): {', '.join(unsettled)}; "
                "run fix again after these changes"
            )
        return verified


def _made(results: dict[str, Any]) -> dict[tuple[Any, ...], str]:
    """The value each change of these edits sets, by file, object and field."""
    return {(ch.file, ch.ref, ch.path): ch.value for r in results.values() for ch in r.changes}


def _reload_docs(text: str, result: Any, limits: Any) -> Any:
    """The edited file's documents as :func:`podfit.loader.parse_file` takes them: those the edit
    read back when they are of this very text and read with these limits, else read now."""
    from ..yamlio import YamlLimits, iter_documents

    if result.documents is not None and limits == YamlLimits() and text == result.new_text:
        return result.documents
    return iter_documents(text, limits, fast=True)


def _replanned(was: Any, now: Any) -> str:
    """The reason of a change planned again on the edited objects, told from the file's state
    (a pool's "instead of N × class" names what the file holds, not the first plan's value)."""
    import re

    if was.reason == now.reason:
        return now.reason
    reason = now.reason
    said = re.search(r"instead of [^:]+", was.reason)
    if said is not None:
        reason = re.sub(r"instead of [^:]+", lambda _m: said.group(0), reason, count=1)
    return reason + " (planned for the objects as this run changes them)"


def _new_finding_reason(ch: Any, f: Any, together: bool) -> str:
    """Why a change is not made: the finding it would bring, and what would work instead."""
    what = "together the changes would bring" if together else f"{ch.field} = {ch.value} would bring"
    subject = f" {f.object}" if f.object is not None else ""
    reason = f"{what} a new finding, {f.rule}{subject}: {f.message}"
    if ch.rule == "PF201" and not together:
        from ..quantity import format_cpu, parse_cpu

        try:
            down = (parse_cpu(ch.value) // 1000 - 1) * 1000
        except Exception:
            down = 0
        if down > 0:
            n = format_cpu(down)
            reason += f"; request {n} whole CPU{'' if down == 1000 else 's'} instead (rounded down), or a larger node"
    return reason
