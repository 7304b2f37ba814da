"""One self-contained HTML page: summary, sortable and filterable findings, and plain-SVG pictures of
the packing, the vSphere capacity and the throttling curves (pure: report and figures in, text out).

Everything the page needs is inside it: the stylesheet (``data/report.css``) and the small sorting
and filtering script (``data/report.js``) are inlined, and a Content-Security-Policy of
``default-src 'none'`` with the hashes of those two lets the browser load nothing else. Every
picture is an ``<svg role="img">`` with a ``<title>`` and ``<desc>``, and a table of its figures
beside it. Findings link to their section of docs/rules.md on the project's repository
(``Rule.help_uri``, the address SARIF's ``helpUri`` gives too), so the links work from any copy of
the file.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from functools import cache, partial
from html import escape
from importlib.resources import files

from ..catalogue import load_catalogue
from ..check import Report
from ..findings import SEVERITIES, SEVERITY_RANK
from ..quantity import format_cpu, format_memory
from ..visuals import CrxRow, NodeBar, PackingPicture, ThrottleCurve, Visuals, VsphereCapacity
from .text import platform_source, plural

# memory figures for reading (tables, bars, captions): rounded to a tenth of their unit
_memory = partial(format_memory, exact=False)

NAME = "html"

__all__ = ["NAME", "render", "pack_page", "vsphere_page", "throttle_page"]


@cache
def _asset(name: str) -> str:
    return (files("podfit") / "data" / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _e(x: object) -> str:
    return escape(str(x), quote=True)


def _n(x: float) -> str:
    """A coordinate: two decimals at most."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _cpus(millicores: int) -> str:
    return f"{millicores / 1000:g}"


def _mhz(n: int) -> str:
    return f"{n:,} MHz"


# ------------------------------------------------------------------------------------ summary ---


def _summary(report: Report) -> str:
    files_ = report.files
    parsed = sum(1 for f in files_ if f.status == "parsed")
    skipped = sum(1 for f in files_ if f.status == "skipped")
    failed = sum(1 for f in files_ if f.status == "failed")
    cards = [
        (
            "files",
            f"{len(files_):,}",
            f"{parsed} parsed" + (f", {skipped} skipped" if skipped else "") + (f", {failed} failed" if failed else ""),
        ),
        ("objects", f"{report.objects:,}", "Kubernetes objects"),
    ]
    for sev in SEVERITIES:
        cards.append((sev, f"{report.count(sev):,}", "findings"))
    out = ['<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2><ul class="cards">']
    for label, value, sub in cards:
        cls = f' class="sev-{label}"' if label in SEVERITY_RANK else ""
        out.append(
            f'<li data-card="{_e(label)}"><b{cls}>{value}</b>{_e(label)} <span class="muted">{_e(sub)}</span></li>'
        )
    out.append("</ul>")
    plat = report.platform
    rows = [
        ("platform", f"{plat.name}: {platform_source(plat)}"),
        ("runtime", plat.runtime),
        ("node pools", "; ".join(report.node_pools) or "none (give them in the platform or a TanzuKubernetesCluster)"),
    ]
    if report.engine:
        rows.append(("Rego engine", report.engine))
    if report.config_source:
        rows.append(("config", report.config_source))
    if report.suppressed:
        rows.append(("suppressed", plural(report.suppressed, "finding")))
    out.append('<dl class="facts">')
    out.extend(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows)
    out.append("</dl>")
    if report.skipped_rules:
        by_fact: dict[str, list[str]] = {}
        for rid, why in report.skipped_rules:
            by_fact.setdefault(why, []).append(rid)
        out.append(
            f'<h3 id="lacking">Facts the run lacked ({plural(len(report.skipped_rules), "rule")} skipped)</h3><ul>'
        )
        out.extend(f"<li>{_e(why)}: {_e(', '.join(rids))}</li>" for why, rids in by_fact.items())
        out.append("</ul>")
    if report.notices:
        out.append("<ul>" + "".join(f'<li class="note">{_e(n)}</li>' for n in report.notices) + "</ul>")
    out.append("</section>")
    return "\n".join(out)


# ----------------------------------------------------------------------------------- findings ---


def _select(ident: str, label: str, values: Iterable[str]) -> str:
    opts = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
    return f'<label for="{ident}">{_e(label)}<select id="{ident}"><option value="">all</option>{opts}</select></label>'


def _findings(report: Report) -> str:
    cat = load_catalogue()
    fs = report.findings
    out = [f'<section id="findings" aria-labelledby="findings-h"><h2 id="findings-h">Findings ({len(fs):,})</h2>']
    if not fs:
        out.append("<p>No findings.</p></section>")
        return "\n".join(out)
    rules = sorted({f.rule for f in fs})
    sevs = [s for s in SEVERITIES if any(f.severity == s for f in fs)]
    files_ = sorted({f.location.file for f in fs})
    out.append('<div class="filters" id="findings-filters" hidden>')
    out.append(_select("filter-rule", "rule", rules))
    out.append(_select("filter-severity", "severity", sevs))
    out.append(_select("filter-file", "file", files_))
    out.append(
        f'<span id="findings-shown" role="status" aria-live="polite">{len(fs)} of {len(fs)} findings shown</span></div>'
    )
    heads = [
        ("severity", "rank rule file line"),
        ("rule", "rule file line"),
        ("file", "file line"),
        ("object", "object file line"),
        ("message", "message"),
    ]
    out.append('<table id="findings-table"><thead><tr>')
    for label, keys in heads:
        out.append(f'<th scope="col" data-sort="{keys}"><button type="button">{label}</button></th>')
    out.append("</tr></thead><tbody>")
    for i, f in enumerate(fs):
        rule = cat[f.rule]
        where = f.location.file + (f":{f.location.line}" if f.location.line else "")
        obj = str(f.object) if f.object is not None else ""
        if f.container:
            obj += f" container {f.container}"
        href = rule.help_uri
        out.append(
            f'<tr class="finding" data-order="{i}" data-rank="{SEVERITY_RANK[f.severity]}" data-severity="{_e(f.severity)}" '
            f'data-rule="{_e(f.rule)}" data-file="{_e(f.location.file)}" data-line="{f.location.line or 0}" '
            f'data-object="{_e(obj)}" data-message="{_e(f.message)}">'
            f'<td class="sev sev-{_e(f.severity)}">{_e(f.severity)}</td>'
            f'<td><a href="{_e(href)}" title="{_e(rule.title)}">{_e(f.rule)}</a> <span class="muted">{_e(rule.slug)}</span></td>'
            f'<td class="mono">{_e(where)}</td><td>{_e(obj)}</td>'
            f'<td>{_e(f.message)}<br><span class="muted">fix: {_e(rule.fix)}</span></td></tr>'
        )
    out.append("</tbody></table></section>")
    return "\n".join(out)


# ------------------------------------------------------------------------------------ packing ---

# node label | CPU bar, "requested/allocatable" | memory bar, "requested/allocatable"
_LABEL_W, _BAR_W, _FIG_W, _ROW, _BAR_H, _TOP = 190, 260, 90, 24, 14, 22
_CHART_W = _LABEL_W + 2 * (_BAR_W + _FIG_W)
_NAME_CHARS = 22  # longer node names are shortened on the picture (whole in its tooltip and table)


def _segments(
    x0: float, y: float, parts: Sequence[tuple[str, int, str]], whole: int, width: float = _BAR_W
) -> list[str]:
    out = []
    x = x0
    for cls, value, what in parts:
        if value <= 0 or whole <= 0:
            continue
        w = value * width / whole
        out.append(
            f'<rect class="{cls}" x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_BAR_H}"><title>{_e(what)}</title></rect>'
        )
        x += w
    return out


def _node_parts(n: NodeBar, dim: str) -> tuple[list[tuple[str, int, str]], int, int]:
    fmt: Callable[[int], str]
    if dim == "cpu":
        cap, sys_, ds, alloc, used, free, fmt = (
            n.capacity_cpu,
            n.overhead_cpu,
            n.daemon_cpu,
            n.allocatable_cpu,
            n.used_cpu,
            n.free_cpu,
            format_cpu,
        )
    else:
        cap, sys_, ds, alloc, used, free, fmt = (
            n.capacity_memory,
            n.overhead_memory,
            n.daemon_memory,
            n.allocatable_memory,
            n.used_memory,
            n.free_memory,
            _memory,
        )
    free_cls, free_word = ("seg-stranded", "stranded") if n.stranded else ("seg-free", "free")
    parts = [
        ("seg-sys", sys_, f"{n.name} {dim}: system overhead {fmt(sys_)}"),
        ("seg-ds", ds, f"{n.name} {dim}: DaemonSets {fmt(ds)}"),
        ("seg-req", used, f"{n.name} {dim}: requested {fmt(used)} of {fmt(alloc)} allocatable"),
        (free_cls, free, f"{n.name} {dim}: {free_word} {fmt(free)}"),
    ]
    return parts, cap, cap - alloc


def _node_label(n: NodeBar) -> str:
    pods = sum(k for _, k in n.pods)
    return (
        f"{n.name}: CPU requested {format_cpu(n.used_cpu)} of {format_cpu(n.allocatable_cpu)} allocatable "
        f"({format_cpu(n.capacity_cpu)} capacity, system {format_cpu(n.overhead_cpu)}, DaemonSets {format_cpu(n.daemon_cpu)}); "
        f"memory requested {_memory(n.used_memory)} of {_memory(n.allocatable_memory)} allocatable "
        f"({_memory(n.capacity_memory)} capacity, system {_memory(n.overhead_memory)}, DaemonSets {_memory(n.daemon_memory)}); "
        f"{plural(pods, 'pod')}" + ("; its free capacity is stranded" if n.stranded else "")
    )


def _pool_svg(ident: str, title: str, nodes: Sequence[NodeBar]) -> str:
    h = _TOP + _ROW * len(nodes) + 4
    cpu_x = _LABEL_W
    mem_x = _LABEL_W + _BAR_W + _FIG_W
    desc = " ".join(_node_label(n) + "." for n in nodes)
    out = [
        f'<svg class="chart" id="{ident}" role="img" aria-labelledby="{ident}-t {ident}-d" viewBox="0 0 {_CHART_W} {h}" '
        f'xmlns="http://www.w3.org/2000/svg"><title id="{ident}-t">{_e(title)}</title><desc id="{ident}-d">{_e(desc)}</desc>',
        f'<text x="{cpu_x}" y="14">CPU</text><text x="{mem_x}" y="14">memory</text>',
    ]
    for i, n in enumerate(nodes):
        y = _TOP + i * _ROW
        pods = sum(k for _, k in n.pods)
        out.append(f'<g class="node-bar" data-node="{_e(n.name)}" data-pool="{_e(n.pool)}">')
        name = n.name if len(n.name) <= _NAME_CHARS else n.name[: _NAME_CHARS - 1] + "…"
        out.append(
            f'<text x="0" y="{y + 11}"><title>{_e(n.name)}</title>{_e(name)} '
            f'<tspan class="small">{_e(plural(pods, "pod"))}</tspan></text>'
        )
        figures = (
            ("cpu", f"{_cpus(n.used_cpu)}/{_cpus(n.allocatable_cpu)} CPU"),
            ("memory", f"{_memory(n.used_memory)}/{_memory(n.allocatable_memory)}"),
        )
        for x0, (dim, figure) in zip((cpu_x, mem_x), figures, strict=True):
            parts, cap, before = _node_parts(n, dim)
            out.extend(_segments(x0, y, parts, cap))
            out.append(f'<text class="small" x="{x0 + _BAR_W + 5}" y="{y + 11}">{_e(figure)}</text>')
            if cap > 0:
                ax = x0 + before * _BAR_W / cap
                out.append(
                    f'<rect class="alloc" fill="none" x="{_n(ax)}" y="{y - 1}" width="{_n(x0 + _BAR_W - ax)}" height="{_BAR_H + 2}">'
                    f"<title>{_e(n.name)} {dim}: allocatable</title></rect>"
                )
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


_PACK_LEGEND = (
    '<ul class="legend" aria-hidden="true"><li class="sw-sys">system overhead</li><li class="sw-ds">DaemonSets</li>'
    '<li class="sw-req">requested by pods</li><li class="sw-free">free</li><li class="sw-stranded">stranded (no pod fits)</li>'
    "<li>outlined: allocatable</li></ul>"
)


def _pool_table(nodes: Sequence[NodeBar]) -> str:
    head = "".join(
        f'<th scope="col" class="num">{h}</th>'
        for h in (
            "CPU capacity",
            "system",
            "DaemonSets",
            "requested",
            "free",
            "memory capacity",
            "system",
            "DaemonSets",
            "requested",
            "free",
        )
    )
    out = [
        f'<table class="fallback"><thead><tr><th scope="col">node</th>{head}<th scope="col">pods</th></tr></thead><tbody>'
    ]
    for n in nodes:
        free = " (stranded)" if n.stranded else ""
        cells = [
            format_cpu(n.capacity_cpu),
            format_cpu(n.overhead_cpu),
            format_cpu(n.daemon_cpu),
            format_cpu(n.used_cpu),
            format_cpu(n.free_cpu) + free,
        ]
        cells += [
            _memory(n.capacity_memory),
            _memory(n.overhead_memory),
            _memory(n.daemon_memory),
            _memory(n.used_memory),
            _memory(n.free_memory) + free,
        ]
        pods = ", ".join(f"{k} × {name}" for name, k in n.pods) or "-"
        out.append(
            f'<tr><th scope="row">{_e(n.name)}</th>'
            + "".join(f'<td class="num">{_e(c)}</td>' for c in cells)
            + f"<td>{_e(pods)}</td></tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def _packing(pictures: Sequence[PackingPicture]) -> str:
    out = ['<section id="packing" aria-labelledby="packing-h"><h2 id="packing-h">Packing onto the node pools</h2>']
    if not pictures:
        out.append(
            "<p>No packing: no cluster of the run has both workloads and worker node pools to pack them onto (node pools come from the platform, a TanzuKubernetesCluster or a Cluster API Cluster).</p></section>"
        )
        return "\n".join(out)
    out.append(
        "<p>One bar per node, as podfit's packing placed the pods (PF601-PF605): each bar is the node's VM class capacity, "
        "split into the system overhead, the DaemonSets' requests, the pods' requests and what is left; "
        "left-over capacity where no further pod fits is stranded.</p>"
    )
    for c, pic in enumerate(pictures):
        where = f" — cluster {pic.cluster}" if pic.cluster else ""
        verdict_cls = {True: "verdict-yes", False: "verdict-no", None: "verdict-unknown"}[pic.feasible]
        out.append(f'<div class="cluster" data-cluster="{_e(pic.cluster)}">')
        if pic.cluster:
            out.append(f"<h3>Cluster {_e(pic.cluster)}</h3>")
        out.append(f'<p>Fits: <span class="{verdict_cls}">{_e(pic.verdict)}</span></p>')
        for p, pool in enumerate(pic.pools):
            ident = f"pack-{c}-{p}"
            ds = f"; DaemonSets: {', '.join(pool.daemonsets)}" if pool.daemonsets else ""
            title = f"Pool {pool.name}{where}: {pool.count} × {pool.vm_class}{ds}"
            out.append(
                f'<figure aria-labelledby="{ident}-c"><figcaption id="{ident}-c"><b>{_e(title)}</b></figcaption>'
            )
            out.append(_pool_svg(ident, title, pool.nodes))
            out.append(_PACK_LEGEND)
            out.append(
                f"<details><summary>Figures of pool {_e(pool.name)} as a table</summary>{_pool_table(pool.nodes)}</details></figure>"
            )
        if pic.unplaced:
            out.append(
                '<p class="unplaced"><b>Not placed:</b> '
                + _e(", ".join(f"{k} × {name}" for name, k in pic.unplaced))
                + "</p>"
            )
        if pic.stranded_cpu or pic.stranded_memory:
            out.append(
                f"<p>Stranded in total: {format_cpu(pic.stranded_cpu)} CPU, {_memory(pic.stranded_memory)} memory.</p>"
            )
        if pic.notes:
            out.append("<ul>" + "".join(f'<li class="note">{_e(n)}</li>' for n in pic.notes) + "</ul>")
        out.append("</div>")
    out.append("</section>")
    return "\n".join(out)


# ------------------------------------------------------------------------------------ vSphere ---


def _capacity_bar(
    ident: str, y: float, label: str, parts: Sequence[tuple[str, int, str]], total: int, fmt
) -> list[str]:
    used = sum(v for _, v, _ in parts)
    whole = max(total, used)
    out = [f'<text x="0" y="{_n(y + 11)}">{_e(label)}</text>']
    out.extend(_segments(150, y, parts, whole, 700))
    if used > total and whole > 0:
        x = 150 + total * 700 / whole
        out.append(
            f'<line class="alloc" x1="{_n(x)}" x2="{_n(x)}" y1="{_n(y - 3)}" y2="{_n(y + _BAR_H + 3)}"><title>total {fmt(total)}</title></line>'
        )
    out.append(f'<text class="small" x="150" y="{_n(y + _BAR_H + 12)}">{_e(fmt(total))} in total</text>')
    return out


def _crx_table(crxs: Sequence[CrxRow]) -> str:
    if not crxs:
        return ""
    out: list[str] = []
    out.append("<h3>CRXs of the vSphere Pods</h3>")
    out.append(
        '<table id="crx-table"><thead><tr><th scope="col">workload</th><th scope="col" class="num">replicas</th>'
        '<th scope="col" class="num">vCPUs</th><th scope="col" class="num">CPU limit</th><th scope="col" class="num">CPU reserved</th>'
        '<th scope="col" class="num">memory</th><th scope="col" class="num">memory reserved</th></tr></thead><tbody>'
    )
    for r in crxs:
        cells = [
            str(r.replicas),
            str(r.vcpus),
            "none" if r.cpu_limit_mhz is None else _mhz(r.cpu_limit_mhz),
            "-" if r.cpu_reservation_mhz is None else _mhz(r.cpu_reservation_mhz),
            _memory(r.memory_bytes),
            _memory(r.memory_reservation_bytes),
        ]
        out.append(
            f'<tr class="crx"><th scope="row">{_e(r.name)}</th>'
            + "".join(f'<td class="num">{_e(c)}</td>' for c in cells)
            + "</tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _vsphere_crxs(crxs: Sequence[CrxRow]) -> str:
    return (
        '<section id="vsphere" aria-labelledby="vsphere-h"><h2 id="vsphere-h">CRXs of the vSphere Pods</h2>'
        + (_crx_table(crxs) or "<p>No pods in the input.</p>")
        + "</section>"
    )


def _vsphere(v: VsphereCapacity | None) -> str:
    if v is None:
        return ""
    out = ['<section id="vsphere" aria-labelledby="vsphere-h"><h2 id="vsphere-h">vSphere capacity</h2>']
    out.append(
        f"<p>Platform {_e(v.platform)}; HA admission control: {_e(v.ha_policy)}. Reservations of powered-on VMs against the capacity HA leaves.</p>"
    )
    over = [
        f"{what} reservations exceed the capacity HA leaves by {fmt(-free)}: VMs beyond it are refused power-on (PF501)"
        for what, free, fmt in (("CPU", v.cpu_free_mhz, _mhz), ("Memory", v.memory_free_bytes, _memory))
        if free < 0
    ]
    out.extend(f'<p class="verdict-no">{_e(o)}.</p>' for o in over)

    def parts(ha: int, nodes: int, crx: int, free: int, fmt) -> list[tuple[str, int, str]]:
        return [
            ("seg-ha", ha, f"HA reserved {fmt(ha)}"),
            ("seg-nodes", nodes, f"reserved by node VMs {fmt(nodes)}"),
            ("seg-crx", crx, f"reserved by CRXs {fmt(crx)}"),
            ("seg-free", max(free, 0), f"free {fmt(max(free, 0))}"),
        ]

    cpu = parts(v.cpu_ha_reserved_mhz, v.cpu_nodes_mhz, v.cpu_crx_mhz, v.cpu_free_mhz, _mhz)
    mem = parts(v.memory_ha_reserved_bytes, v.memory_nodes_bytes, v.memory_crx_bytes, v.memory_free_bytes, _memory)
    desc = (
        f"CPU: {_mhz(v.cpu_total_mhz)} in total, {_mhz(v.cpu_ha_reserved_mhz)} HA reserved, {_mhz(v.cpu_nodes_mhz)} reserved by node VMs, "
        f"{_mhz(v.cpu_crx_mhz)} by CRXs, {_mhz(v.cpu_free_mhz)} free. Memory: {_memory(v.memory_total_bytes)} in total, "
        f"{_memory(v.memory_ha_reserved_bytes)} HA reserved, {_memory(v.memory_nodes_bytes)} by node VMs, "
        f"{_memory(v.memory_crx_bytes)} by CRXs, {_memory(v.memory_free_bytes)} free."
    )
    ident = "vsphere-capacity"
    out.append(
        f'<figure><svg class="chart" id="{ident}" role="img" aria-labelledby="{ident}-t {ident}-d" viewBox="0 0 860 84" '
        f'xmlns="http://www.w3.org/2000/svg"><title id="{ident}-t">vSphere capacity of {_e(v.platform)}</title><desc id="{ident}-d">{_e(desc)}</desc>'
    )
    out.extend(_capacity_bar(ident, 4, "CPU (MHz)", cpu, v.cpu_total_mhz, _mhz))
    out.extend(_capacity_bar(ident, 46, "memory", mem, v.memory_total_bytes, _memory))
    out.append("</svg>")
    out.append(
        '<ul class="legend" aria-hidden="true"><li class="sw-ha">HA reserved</li><li class="sw-nodes">node VMs</li>'
        '<li class="sw-crx">CRXs (vSphere Pods)</li><li class="sw-free">free</li><li>a line marks the total when reservations exceed it</li></ul>'
    )
    rows = [
        ("total", _mhz(v.cpu_total_mhz), _memory(v.memory_total_bytes)),
        ("HA reserved", _mhz(v.cpu_ha_reserved_mhz), _memory(v.memory_ha_reserved_bytes)),
        ("reserved by node VMs", _mhz(v.cpu_nodes_mhz), _memory(v.memory_nodes_bytes)),
        ("reserved by CRXs", _mhz(v.cpu_crx_mhz), _memory(v.memory_crx_bytes)),
        ("free", _mhz(v.cpu_free_mhz), _memory(v.memory_free_bytes)),
    ]
    out.append(
        '<details><summary>Capacity as a table</summary><table class="fallback"><thead><tr><th scope="col"></th>'
        '<th scope="col" class="num">CPU</th><th scope="col" class="num">memory</th></tr></thead><tbody>'
        + "".join(
            f'<tr><th scope="row">{a}</th><td class="num">{_e(b)}</td><td class="num">{_e(c)}</td></tr>'
            for a, b, c in rows
        )
        + "</tbody></table></details></figure>"
    )
    out.append(_crx_table(v.crxs))
    out.append("</section>")
    return "\n".join(out)


# --------------------------------------------------------------------------------- throttling ---


def _ticks(top: float) -> list[float]:
    """0 and three more round ticks (1, 2, 2.5 or 5 × a power of ten apart) reaching at least ``top``."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / 3
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [step * i for i in range(4)]


def _panel(
    x0: float,
    w: float,
    h: float,
    xs: Sequence[int],
    ys: Sequence[float],
    label: str,
    cls: str,
    marks: Sequence[tuple[str, int, str]],
    fmt_y,
) -> list[str]:
    top, bottom = 22.0, 22.0 + h
    lo, hi = xs[0], xs[-1]
    span = max(hi - lo, 1)
    ticks = _ticks(max(ys))
    ymax = ticks[-1] or 1.0

    def px(x: int) -> float:
        return x0 + (x - lo) * w / span

    def py(y: float) -> float:
        return bottom - y * h / ymax

    out = [f'<text x="{_n(x0)}" y="12">{_e(label)}</text>']
    for t in ticks:
        out.append(f'<line class="grid" x1="{_n(x0)}" x2="{_n(x0 + w)}" y1="{_n(py(t))}" y2="{_n(py(t))}"/>')
        out.append(f'<text class="small" text-anchor="end" x="{_n(x0 - 4)}" y="{_n(py(t) + 3)}">{_e(fmt_y(t))}</text>')
    out.append(f'<path class="axis" d="M{_n(x0)} {_n(top)}V{_n(bottom)}H{_n(x0 + w)}"/>')
    step = max(1, len(xs) // 5)
    for x in xs[::step]:
        out.append(f'<text class="small" text-anchor="middle" x="{_n(px(x))}" y="{_n(bottom + 14)}">{_cpus(x)}</text>')
    for mcls, x, text in marks:
        out.append(
            f'<line class="{mcls}" x1="{_n(px(x))}" x2="{_n(px(x))}" y1="{_n(top)}" y2="{_n(bottom)}"><title>{_e(text)}</title></line>'
        )
    pts = " ".join(f"{_n(px(x))},{_n(py(y))}" for x, y in zip(xs, ys, strict=True))
    out.append(f'<polyline class="{cls}" points="{pts}"/>')
    dot = "dot" if cls == "curve" else "dot2"
    for x, y in zip(xs, ys, strict=True):
        out.append(
            f'<circle class="{dot}" cx="{_n(px(x))}" cy="{_n(py(y))}" r="3"><title>limit {_cpus(x)} CPU: {_e(fmt_y(y))}</title></circle>'
        )
    out.append(
        f'<text class="small" text-anchor="middle" x="{_n(x0 + w / 2)}" y="{_n(bottom + 28)}">CPU limit (CPUs)</text>'
    )
    return out


def _ms(y: float) -> str:
    return f"{y:g} ms"


def _curve(i: int, tc: ThrottleCurve) -> str:
    s = tc.sweep
    ident = f"throttle-{i}"
    xs = [p.limit_millicores for p in s.points]
    throttled = [p.throttled_per_period_ns / 1e6 for p in s.points]
    delay = [p.burst_delay_p99_ns / 1e6 for p in s.points]
    sugg = s.suggested_millicores
    marks = [("mark-now", s.current_millicores, f"current limit {format_cpu(s.current_millicores)}")]
    if sugg is not None:
        marks.append(("mark-sugg", sugg, f"suggested limit {format_cpu(sugg)}"))
    sugg_text = (
        f"the least limit that brings the score below {s.threshold} is {format_cpu(sugg)}"
        if sugg is not None
        else f"no limit up to {format_cpu(xs[-1])} brings the score below {s.threshold}: drop the limit or use whole CPUs with the static CPU Manager"
    )
    desc = (
        f"{tc.subject}: {s.threads} threads offering {format_cpu(s.demand_millicores)} of CPU on {s.cpus}-CPU nodes. "
        + " ".join(
            f"Limit {format_cpu(p.limit_millicores)}: throttled {p.throttled_per_period_ns / 1e6:g} ms per period, "
            f"p99 added delay {p.burst_delay_p99_ns / 1e6:g} ms, score {p.score}."
            for p in s.points
        )
        + f" Current limit {format_cpu(s.current_millicores)}; {sugg_text}."
    )
    finding_attr = "" if tc.finding is None else f' data-finding="{tc.finding}"'
    out = [
        f'<figure class="throttle"{finding_attr}><figcaption><b>{_e(tc.subject)}</b>: current limit '
        f"{format_cpu(s.current_millicores)}, {s.threads} threads offering {format_cpu(s.demand_millicores)} CPU on {s.cpus}-CPU nodes; {_e(sugg_text)}.</figcaption>",
        f'<svg class="chart" id="{ident}" role="img" aria-labelledby="{ident}-t {ident}-d" viewBox="0 0 880 230" '
        f'xmlns="http://www.w3.org/2000/svg"><title id="{ident}-t">Throttling of {_e(tc.subject)} against its CPU limit</title>'
        f'<desc id="{ident}-d">{_e(desc)}</desc>',
    ]
    out.extend(
        _panel(60, 340, 160, xs, throttled, "throttled time per 100 ms period (summed over CPUs)", "curve", marks, _ms)
    )
    out.extend(_panel(520, 340, 160, xs, delay, "p99 delay added to a request burst", "curve2", marks, _ms))
    out.append("</svg>")
    out.append(
        '<ul class="legend" aria-hidden="true"><li class="sw-curve">throttled time</li><li class="sw-curve2">p99 added latency</li>'
        '<li class="sw-now">current limit</li>'
        + ('<li class="sw-sugg">suggested limit</li>' if sugg is not None else "")
        + "</ul>"
    )
    out.append(
        '<details><summary>Curve as a table</summary><table class="fallback"><thead><tr><th scope="col" class="num">CPU limit</th>'
        '<th scope="col" class="num">throttled per period</th><th scope="col" class="num">p99 added delay</th><th scope="col" class="num">score</th></tr></thead><tbody>'
    )
    for p in s.points:
        note = (
            " (current)"
            if p.limit_millicores == s.current_millicores
            else " (suggested)"
            if p.limit_millicores == sugg
            else ""
        )
        out.append(
            f'<tr><td class="num">{format_cpu(p.limit_millicores)}{note}</td><td class="num">{p.throttled_per_period_ns / 1e6:g} ms</td>'
            f'<td class="num">{p.burst_delay_p99_ns / 1e6:g} ms</td><td class="num">{p.score}</td></tr>'
        )
    out.append("</tbody></table></details></figure>")
    return "\n".join(out)


def _throttling(curves: Sequence[ThrottleCurve], standalone: bool = False) -> str:
    if not curves:
        return ""
    heading = "CPU throttling against the limit" if standalone else "CPU throttling (PF203)"
    whose = "The" if standalone else "For each container PF203 flags: the"
    out = [f'<section id="throttling" aria-labelledby="throttling-h"><h2 id="throttling-h">{heading}</h2>']
    out.append(
        f"<p>{whose} CFS simulator run again with its offered demand held and only the CPU limit "
        "raised. The suggested limit is the least one whose throttling score falls below the threshold.</p>"
    )
    out.extend(_curve(i, c) for i, c in enumerate(curves))
    out.append("</section>")
    return "\n".join(out)


# -------------------------------------------------------------------------------------- page ---


def _page(heading: str, title: str, meta: str, sections: Sequence[str]) -> str:
    from .. import __version__

    css = _asset("report.css")
    js = _asset("report.js")
    csp = (
        f"default-src 'none'; style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{_e(title)}</title><style>{css}</style></head>\n<body>\n"
        f'<header><h1>{_e(heading)}</h1><p class="meta">podfit {_e(__version__)} · {meta}</p></header>\n<main>\n'
        + "\n".join(s for s in sections if s)
        + f"\n</main>\n<footer>Made by podfit {_e(__version__)}. This page loads nothing from the network; "
        "sorting and filtering run in the page.</footer>\n"
        f"<script>{js}</script>\n</body></html>\n"
    )


def render(report: Report, color: bool = False, visuals: Visuals | None = None, **_: object) -> str:
    """The page. ``visuals`` (:func:`podfit.visuals.collect`) adds the pictures; without it the page
    has the summary and the findings."""
    v = visuals or Visuals()
    docs = next(iter(load_catalogue().values())).help_uri.partition("#")[0]  # docs/rules.md itself
    title = f"podfit report: {plural(len(report.findings), 'finding')} in {plural(len(report.files), 'file')}"
    meta = f'{_e(title)} · each rule id links to its section of <a href="{_e(docs)}">docs/rules.md</a>'
    body = [
        _summary(report),
        _findings(report),
        _packing(v.packing) if visuals is not None else "",
        _vsphere(v.vsphere),
        _throttling(v.throttle),
    ]
    return _page("podfit report", title, meta, body)


def pack_page(pictures: Sequence[PackingPicture], platform: str) -> str:
    """``podfit pack --format html``: the packing pictures of one run, one per cluster."""
    title = f"podfit pack: {sum(p.node_count for p in pictures)} nodes"
    return _page("podfit pack", title, _e(f"{title} · platform {platform}"), [_packing(list(pictures))])


def vsphere_page(shown: VsphereCapacity | Sequence[CrxRow], platform: str) -> str:
    """``podfit vsphere capacity|crx --format html``: the capacity picture with its CRX table
    (capacity), or the CRX table alone (crx)."""
    body = _vsphere(shown) if isinstance(shown, VsphereCapacity) else _vsphere_crxs(shown)
    title = f"podfit vsphere: {platform}"
    return _page("podfit vsphere", title, _e(title), [body])


def throttle_page(curve: ThrottleCurve) -> str:
    """``podfit throttle --format html``: the throttling curve of the simulated container."""
    title = f"podfit throttle: {curve.subject}"
    return _page("podfit throttle", title, _e(title), [_throttling([curve], standalone=True)])
