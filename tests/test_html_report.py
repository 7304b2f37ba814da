"""`podfit check --format html`: the page's content checked against the JSON report and the packing
analysis, its figures against their own arithmetic, and the page as a browser shows it (headless
Chromium: no console error, no network request, the DOM's rows and bars, filtering, sorting, dark
mode and print)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.rules.throttling_simulated_high import simulate_seeds
from podfit.throttle.sweep import sweep, sweep_limits

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = str(ROOT / "testdata" / "examples")
PF203 = [
    str(ROOT / "testdata" / "PF203" / "fail_study_tomcat.yaml"),
    str(ROOT / "testdata" / "PF203" / "fail_annotated_threads.yaml"),
    "--platform",
    str(ROOT / "testdata" / "PF203" / "platform.yaml"),
]
PF401 = [str(ROOT / "testdata" / "PF401"), "--platform", str(ROOT / "testdata" / "PF401" / "platform.yaml")]
PF501 = [str(ROOT / "testdata" / "PF501" / "fail_two_clusters.yaml")]


def run(args: list[str]) -> str:
    return CliRunner().invoke(main, args, catch_exceptions=False).output


def report_json(args: list[str]) -> dict:
    return json.loads(run(["check", *args, "--format", "json"]))


def pack_json(args: list[str]) -> dict:
    return json.loads(run(["pack", *args, "--format", "json"]))


def html(args: list[str], tmp_path: Path, name: str = "report.html") -> Path:
    out = tmp_path / name
    run(["check", *args, "--format", "html", "--output", str(out)])
    return out


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of <style>, <script> and <title> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: dict[str, list[str]] = {}
        self._open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._open.append(tag)

    def handle_endtag(self, tag):
        while self._open and self._open.pop() != tag:
            pass

    def handle_data(self, data):
        if self._open:
            self.text.setdefault(self._open[-1], []).append(data)

    def having(self, tag: str, cls: str | None = None) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and (cls is None or cls in a.get("class", "").split())]


def parse(path: Path) -> Elements:
    p = Elements()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def github_anchors(markdown: str) -> set[str]:
    """The ids GitHub gives the headings of a Markdown file (lower case, punctuation dropped, spaces → -)."""
    out = set()
    for line in markdown.splitlines():
        m = re.match(r"^#{1,6} (.*)$", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


# ------------------------------------------------------------------------- the page as text ---


def test_rows_bars_and_links_match_the_json_report_and_the_packing(tmp_path):
    page = parse(html([EXAMPLES], tmp_path))
    findings = report_json([EXAMPLES])["findings"]
    rows = page.having("tr", "finding")
    assert len(rows) == len(findings) >= 3
    assert [(r["data-rule"], r["data-severity"], r["data-file"], int(r["data-line"])) for r in rows] == [
        (f["rule"], f["severity"], f["file"], f["line"]) for f in findings
    ]
    packed = pack_json([EXAMPLES])
    bars = page.having("g", "node-bar")
    assert [b["data-node"] for b in bars] == [n["name"] for n in packed["nodes"]]
    assert len(bars) == sum(p["count"] for p in packed["pools"]) == 4
    # each finding links to its rule's section of docs/rules.md, and that section exists
    anchors = github_anchors((ROOT / "docs" / "rules.md").read_text(encoding="utf-8"))
    links = [a["href"] for a in page.having("a") if "#" in a["href"]]
    assert len(links) == len(findings)
    for link, f in zip(links, findings, strict=True):
        base, _, frag = link.partition("#")
        assert base == "https://github.com/podfit/podfit/blob/main/docs/rules.md"
        assert frag == f"{f['rule'].lower()}-{f['slug']}" and frag in anchors


def test_the_page_is_self_contained(tmp_path):
    path = html([EXAMPLES], tmp_path)
    page = parse(path)
    text = path.read_text(encoding="utf-8")
    # nothing is loaded: no element with a source, no stylesheet link, no url() in the CSS
    assert not [t for t, a in page.tags if "src" in a or (t == "link")]
    assert "url(" not in "".join(page.text["style"]) and "@import" not in text
    # the policy forbids everything but the inline style and script whose hashes it names
    csp = next(a["content"] for t, a in page.tags if a.get("http-equiv") == "Content-Security-Policy")
    assert csp.startswith("default-src 'none';")
    for tag, directive in (("style", "style-src"), ("script", "script-src")):
        (body,) = page.text[tag]
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in csp
    assert not page.having("script", None)[0].get("src")


def test_every_picture_has_a_title_a_description_and_a_table(tmp_path):
    for args in ([EXAMPLES], PF203, PF401):
        page = parse(html(args, tmp_path))
        svgs = page.having("svg")
        assert svgs
        ids = {a.get("id") for _, a in page.tags}
        for svg in svgs:
            assert svg["role"] == "img"
            title, desc = svg["aria-labelledby"].split()
            assert title in ids and desc in ids and title.endswith("-t") and desc.endswith("-d")
        # one table of figures per picture, in a <details> beside it
        assert len(page.having("table", "fallback")) == len(svgs)
    css = (ROOT / "analyzer" / "podfit" / "data" / "report.css").read_text(encoding="utf-8")
    assert "@media (prefers-color-scheme: dark)" in css and "@media print" in css


def test_throttling_curves_one_per_pf203_finding(tmp_path):
    page = parse(html(PF203, tmp_path))
    findings = report_json(PF203)["findings"]
    throttle = [i for i, f in enumerate(findings) if f["rule"] == "PF203"]
    figures = page.having("figure", "throttle")
    assert [int(f["data-finding"]) for f in figures] == throttle and len(throttle) == 2


def _analysed(paths: list[str], platform: str | None = None, rules: tuple[str, ...] = ()):
    from podfit.check import analyze
    from podfit.config import Config
    from podfit.facts import build_facts
    from podfit.loader import discover, load, read_files
    from podfit.platform import DEFAULT_PLATFORM, parse_platform

    config = Config(enabled=frozenset(rules)) if rules else Config()
    loaded = load(read_files(discover(paths), config.limits), config.limits)
    profile = parse_platform(Path(platform).read_text(), platform) if platform else DEFAULT_PLATFORM
    facts = build_facts(loaded.objects, profile)
    return facts, analyze(loaded, facts, config, rego_results=())


def test_throttling_curve_is_the_findings_own_simulation():
    """Each curve sweeps the scenario PF203 simulated: its current point is the finding's limit and
    score, and its suggested limit is the finding's, whatever the sweep's own steps would pick."""
    from podfit.visuals import collect

    facts, report = _analysed(PF203[:2], PF203[3])
    found = [f for f in report.findings if f.rule == "PF203"]
    curves = collect(facts, report.findings, report.analyses).throttle
    assert len(curves) == len(found) == 2
    for curve in curves:
        f = report.findings[curve.finding]
        s = curve.sweep
        now = next(p for p in s.points if p.limit_millicores == s.current_millicores)
        assert s.current_millicores == f.details["cpu_limit"]
        assert now.score == f.details["score"]
        assert s.suggested_millicores == f.details["suggested_cpu_limit"]
        assert f.details["suggested_cpu_limit"] in {p.limit_millicores for p in s.points}
        assert (s.cpus, s.threads) == (f.details["node_logical_cpus"], f.details["threads"])


def test_no_packing_picture_without_a_packing_rule():
    """The report draws the packing the rules computed; a run whose rules pack nothing has none."""
    from podfit.visuals import collect

    facts, report = _analysed([EXAMPLES], rules=("PF101",))
    assert "packing" not in report.analyses
    assert collect(facts, report.findings, report.analyses).packing == ()
    facts, report = _analysed([EXAMPLES])
    assert len(collect(facts, report.findings, report.analyses).packing) == 1


def test_crx_rows_and_capacity_for_vsphere_pods(tmp_path):
    text = html(PF401, tmp_path).read_text(encoding="utf-8")
    cap = json.loads(run(["vsphere", "capacity", *PF401, "--format", "json"]))
    # a row a CRX `vsphere capacity` reserves: redis stands in two files and is one workload (PF910)
    crxs = [v["name"] for v in cap["vms"] if v["kind"] == "crx"]
    rows = re.findall(r'<tr class="crx"><th scope="row">([^<]*)</th>', text)
    assert [unescape(r) for r in rows] == crxs and len(crxs) == 3
    assert f"{cap['cpu_total_mhz']:,} MHz in total" in text


def test_crx_reservations_count_a_copied_workload_once(tmp_path):
    # the same Deployment in two folders of one cluster is one workload (PF910): the pages reserve its
    # CRXs once, as `vsphere capacity --format json` and the PF501 rule do
    app = (ROOT / "testdata" / "PF401" / "pass_requests_and_limits.yaml").read_text()
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "app.yaml").write_text(app)
    args = [str(tmp_path / "a"), str(tmp_path / "b"), "--platform", PF401[-1]]
    cap = json.loads(run(["vsphere", "capacity", *args, "--format", "json"]))
    crx = sum(v["cpu_reservation_mhz"] * v["count"] for v in cap["vms"] if v["kind"] == "crx")
    assert crx > 0
    said = f"{crx:,} MHz by CRXs"
    assert said in html(args, tmp_path).read_text(encoding="utf-8")
    assert said in run(["vsphere", "capacity", *args, "--format", "html"])


def test_reservations_over_ha_capacity_are_said_in_words(tmp_path):
    text = html(PF501, tmp_path).read_text(encoding="utf-8")
    cap = json.loads(run(["vsphere", "capacity", *PF501, "--format", "json"]))
    over = cap["cpu_reserved_mhz"] - cap["cpu_available_mhz"]
    assert over > 0
    assert f"CPU reservations exceed the capacity HA leaves by {over:,} MHz" in text


# --------------------------------------------------------------------------------- figures ---


def test_node_bars_add_up(tmp_path):
    from podfit.check import analyze
    from podfit.config import Config
    from podfit.facts import build_facts
    from podfit.loader import discover, load, read_files
    from podfit.platform import DEFAULT_PLATFORM
    from podfit.visuals import collect

    loaded = load(read_files(discover([EXAMPLES]), Config().limits), Config().limits)
    facts = build_facts(loaded.objects, DEFAULT_PLATFORM)
    report = analyze(loaded, facts, Config(), rego_results=())
    assert report.analyses.get("packing-analysed")  # the rules' packing is handed on, not redone
    v = collect(facts, report.findings, report.analyses)
    (pic,) = v.packing
    placed = 0
    for pool in pic.pools:
        for n in pool.nodes:
            assert n.overhead_cpu + n.daemon_cpu + n.allocatable_cpu == n.capacity_cpu
            assert n.overhead_memory + n.daemon_memory + n.allocatable_memory == n.capacity_memory
            assert 0 <= n.used_cpu <= n.allocatable_cpu and 0 <= n.used_memory <= n.allocatable_memory
            placed += sum(k for _, k in n.pods)
    packed = pack_json([EXAMPLES])
    assert placed == sum(p["count"] for p in packed["pods"]) - sum(packed["unplaced"].values())
    assert v.vsphere is not None and v.vsphere.cpu_free_mhz == v.vsphere.cpu_total_mhz - v.vsphere.cpu_ha_reserved_mhz


def test_sweep_starts_at_the_finding_and_suggests_the_least_limit_below_the_threshold():
    s = sweep(1500, 256, 200, 2, 50, demand_millicores=1500, burst_us=2000)
    first = s.points[0]
    assert first.limit_millicores == 1500
    # the same simulation as PF203's seed 0 (its verdict is the median of seeds 0-4)
    assert first.score == simulate_seeds(1500, 256, 200, 2, 1500, 2000)[0].score
    sugg = s.suggested_millicores
    assert sugg is not None and sugg > 1500
    assert all(p.score >= 50 for p in s.points if p.limit_millicores < sugg)
    assert next(p for p in s.points if p.limit_millicores == sugg).score < 50
    assert sweep_limits(1500, 256) == tuple(sorted(set(sweep_limits(1500, 256))))
    assert sweep_limits(1500, 256)[-1] == 6000 and all(x % 100 == 0 for x in sweep_limits(1500, 256))
    assert max(sweep_limits(3000, 4)) == 4000  # never above the node's CPUs


def test_format_without_pictures_still_renders_summary_and_findings():
    from podfit.check import analyze
    from podfit.config import Config
    from podfit.facts import build_facts
    from podfit.formats import render
    from podfit.loader import discover, load, read_files
    from podfit.platform import DEFAULT_PLATFORM

    loaded = load(read_files(discover([EXAMPLES]), Config().limits), Config().limits)
    report = analyze(loaded, build_facts(loaded.objects, DEFAULT_PLATFORM), Config())
    page = render(report, "html")
    assert page.count('<tr class="finding"') == len(report.findings)
    assert 'id="packing"' not in page and "<svg" not in page


# ------------------------------------------------------------------------ in a real browser ---


@pytest.fixture(scope="module")
def browser():
    from headless import Browser, find_chromium

    binary = find_chromium()
    if binary is None:
        pytest.skip("no chromium: `make chromium` installs Debian's package (root and apt-get needed)")
    with Browser(binary) as b:
        yield b


def test_in_chromium_no_errors_no_requests_and_the_dom_counts(browser, tmp_path):
    path = html([EXAMPLES], tmp_path)
    page = browser.open(path.as_uri())
    assert page.problems() == []
    assert page.requests() == []
    findings = report_json([EXAMPLES])["findings"]
    assert page.eval("document.querySelectorAll('#findings-table tbody tr').length") == len(findings)
    assert page.eval("document.querySelectorAll('svg g.node-bar').length") == len(pack_json([EXAMPLES])["nodes"])
    # the script ran: the filters are shown, and filtering by rule leaves that rule's rows
    assert page.eval("document.getElementById('findings-filters').hidden") is False
    rule = findings[-1]["rule"]
    shown = page.eval(
        f"(() => {{ const s = document.getElementById('filter-rule'); s.value = {json.dumps(rule)};"
        " s.dispatchEvent(new Event('change'));"
        " return Array.from(document.querySelectorAll('tr.finding')).filter(r => !r.hidden).map(r => r.dataset.rule); })()"
    )
    assert shown == [f["rule"] for f in findings if f["rule"] == rule]
    assert (
        page.eval("document.getElementById('findings-shown').textContent")
        == f"{len(shown)} of {len(findings)} findings shown"
    )
    # sorting by severity puts the errors first, then warnings, then info
    order = page.eval(
        "(() => { const s = document.getElementById('filter-rule'); s.value = ''; s.dispatchEvent(new Event('change'));"
        " document.querySelector('th[data-sort^=rank] button').click();"
        " document.querySelector('th[data-sort^=rank] button').click();"
        " return Array.from(document.querySelectorAll('tr.finding')).map(r => r.dataset.severity); })()"
    )
    rank = {"error": 0, "warning": 1, "info": 2}
    assert order == sorted((f["severity"] for f in findings), key=rank.__getitem__)
    assert page.eval("document.querySelector('th[data-sort^=rank]').getAttribute('aria-sort')") == "descending"
    # the bars are drawn: every node bar has a visible width
    widths = page.eval("Array.from(document.querySelectorAll('g.node-bar')).map(g => g.getBBox().width)")
    assert len(widths) == 4 and min(widths) > 100
    assert page.problems() == [] and page.requests() == []
    shot = tmp_path / "report.png"
    page.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(shot.read_bytes()[16:20], "big") == 1280  # the IHDR width: the emulated window


def test_in_chromium_dark_mode_and_print(browser, tmp_path):
    path = html(PF203, tmp_path)
    light = browser.open(path.as_uri())
    dark = browser.open(path.as_uri(), dark=True)
    bg = "getComputedStyle(document.body).backgroundColor"
    curve = "getComputedStyle(document.querySelector('polyline.curve')).stroke"
    assert light.eval(bg) == "rgb(255, 255, 255)" and dark.eval(bg) == "rgb(13, 17, 23)"
    assert light.eval(curve) != dark.eval(curve)
    assert dark.problems() == [] and dark.requests() == []
    browser.send("Emulation.setEmulatedMedia", {"media": "print"}, light.session)
    assert light.eval("getComputedStyle(document.getElementById('findings-filters')).display") == "none"
    assert light.pdf()[:5] == b"%PDF-"


def test_in_chromium_the_harness_sees_a_request_and_an_error(browser, tmp_path):
    """The checks above could fail: a copy of the report that loads an image from the network, and a
    page without the policy that logs an error, are both caught."""
    text = html([EXAMPLES], tmp_path).read_text(encoding="utf-8")
    bad = tmp_path / "bad.html"
    bad.write_text(text.replace("<main>", '<main><img src="https://example.com/x.png" alt="">'), encoding="utf-8")
    page = browser.open(bad.as_uri())
    assert page.requests() == ["https://example.com/x.png"]
    assert any("Content Security Policy" in p for p in page.problems())
    loud = tmp_path / "loud.html"
    loud.write_text("<!DOCTYPE html><title>x</title><script>console.error('boom')</script>", encoding="utf-8")
    assert browser.open(loud.as_uri()).problems() == ["console: boom"]


# ---------------------------------------------------------------- pack, vsphere and throttle ---


def test_pack_vsphere_and_throttle_pages(tmp_path):
    pack = tmp_path / "pack.html"
    pack.write_text(run(["pack", EXAMPLES, "--format", "html"]), encoding="utf-8")
    assert [b["data-node"] for b in parse(pack).having("g", "node-bar")] == [
        n["name"] for n in pack_json([EXAMPLES])["nodes"]
    ]
    crx = tmp_path / "crx.html"
    crx.write_text(run(["vsphere", "crx", *PF401, "--format", "html"]), encoding="utf-8")
    pods = json.loads(run(["vsphere", "crx", *PF401, "--format", "json"]))["pods"]
    assert len(parse(crx).having("tr", "crx")) == len(pods) >= 3
    cap = run(["vsphere", "capacity", *PF401, "--format", "html"])
    total = json.loads(run(["vsphere", "capacity", *PF401, "--format", "json"]))["cpu_total_mhz"]
    assert f"{total:,} MHz in total" in cap and 'class="crx"' in cap
    # the curve's first point is the simulation `podfit throttle` reports for the same settings
    args = ["throttle", "--limit", "1500m", "--cpus", "64", "--threads", "100", "--seconds", "2"]
    page = run([*args, "--format", "html"])
    score = json.loads(run([*args, "--format", "json"]))["score"]
    first_row = re.search(
        r'<td class="num">1500m \(current\)</td>(?:<td class="num">[^<]*</td>){2}<td class="num">(\d+)</td>', page
    )
    assert first_row is not None and int(first_row.group(1)) == score
    assert "CPU throttling against the limit" in page and "PF203" not in page
    for name, text in (("pack", pack.read_text()), ("crx", crx.read_text()), ("cap", cap), ("throttle", page)):
        tree = Elements()
        tree.feed(text)
        assert all(s["role"] == "img" for s in tree.having("svg")), name
        assert not [t for t, a in tree.tags if "src" in a], name


def test_action_writes_the_html_report_and_packing_bars_to_the_job_summary(tmp_path):
    from test_integration_action import Runner

    ws = tmp_path / "ws"
    (ws / "k8s").mkdir(parents=True)
    for f in Path(EXAMPLES).iterdir():
        (ws / "k8s" / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    r = Runner(tmp_path, {"paths": "k8s/"}, ws)
    assert r.run() == 1  # the examples have errors: the job fails per fail-on, after the summary
    html_file = Path(r.outputs["html"]["html-file"])
    findings = report_json([str(ws / "k8s")])["findings"]
    assert len(parse(html_file).having("tr", "finding")) == len(findings)
    summary = r.files["summary"].read_text(encoding="utf-8")
    packed = pack_json([str(ws / "k8s")])
    assert "### Packing: fits yes (placement" in summary
    block = summary.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[0] for line in block[1:]] == [n["name"] for n in packed["nodes"]]
    for line, n in zip(block[1:], packed["nodes"], strict=True):
        cpu_bar = line.split()[2]
        filled = -(-n["used"]["cpu"] * 24 // n["allocatable"]["cpu"]) if n["used"]["cpu"] else 0
        assert cpu_bar == "█" * filled + "░" * (24 - filled) and int(line.split()[1]) == n["used"]["pods"]


def test_names_and_messages_are_escaped(tmp_path):
    evil = "x</title><script>alert(1)</script><svg onload=alert(2)>"
    manifest = tmp_path / "evil.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\n"
        f"metadata: {{name: {json.dumps(evil)}, namespace: {json.dumps(evil)}}}\n"
        "spec:\n  replicas: 1\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
        f"    spec:\n      containers:\n        - name: {json.dumps(evil)}\n          image: x\n",
        encoding="utf-8",
    )
    text = html([str(manifest)], tmp_path, "evil.html").read_text(encoding="utf-8")
    assert len(report_json([str(manifest)])["findings"]) >= 1
    assert text.count("<script") == 1 and "<svg onload" not in text
    assert "&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_bars_of_an_imported_profile_use_its_nodes_allocatable():
    """An imported EKS profile: the system share is the kubelet's reservation (capacity less the
    nodes' allocatable), the DaemonSet share the system pods, not the default 250m/100Mi overhead."""
    from podfit.platform import parse_platform
    from podfit.visuals import collect

    eks = ROOT / "testdata" / "platform-import" / "eks" / "platform.yaml"
    profile = parse_platform(eks.read_text(), str(eks))
    facts, report = _analysed([str(ROOT / "testdata" / "platform-import" / "app.yaml")], str(eks))
    (pic,) = collect(facts, report.findings, report.analyses).packing
    pools = {p.name: p for p in profile.node_pools}
    for pool in pic.pools:
        src = pools[pool.name]
        for n in pool.nodes:
            assert n.overhead_cpu == n.capacity_cpu - src.allocatable[0]
            assert n.overhead_memory == n.capacity_memory - src.allocatable[1]
            assert (n.daemon_cpu, n.daemon_memory) == src.system_pods[:2]
            assert n.overhead_cpu + n.daemon_cpu + n.allocatable_cpu == n.capacity_cpu
            assert n.overhead_memory + n.daemon_memory + n.allocatable_memory == n.capacity_memory
    general = pic.pools[0].nodes[0]
    assert (general.overhead_cpu, general.daemon_cpu) == (80, 180)


def test_daemonsets_and_stranded_capacity_in_the_bars():
    """The PF601 fixture whose GPU DaemonSet (3000m, 1Gi) runs only on the tainted GPU pool: its node
    shows the DaemonSet and, holding no pod that may run there, its free capacity as stranded."""
    from podfit.check import analyze
    from podfit.config import Config
    from podfit.facts import build_facts
    from podfit.loader import discover, load, read_files
    from podfit.platform import DEFAULT_PLATFORM
    from podfit.visuals import collect

    path = str(ROOT / "testdata" / "PF601" / "pass_daemonset_on_gpu_pool.yaml")
    loaded = load(read_files(discover([path]), Config().limits), Config().limits)
    facts = build_facts(loaded.objects, DEFAULT_PLATFORM)
    report = analyze(loaded, facts, Config(), rego_results=())
    (pic,) = collect(facts, report.findings, report.analyses).packing
    nodes = {n.name: n for pool in pic.pools for n in pool.nodes}
    assert sorted(nodes) == ["gpu-0", "workers-0", "workers-1"]
    gpu = nodes["gpu-0"]
    assert (gpu.daemon_cpu, gpu.daemon_memory, gpu.used_cpu, gpu.stranded) == (3000, 2**30, 0, True)
    assert all(nodes[w].daemon_cpu == 0 and nodes[w].used_cpu == 3000 for w in ("workers-0", "workers-1"))
    stranded = json.loads(run(["pack", path, "--format", "json"]))["stranded"]
    assert sorted(n.name for n in nodes.values() if n.stranded) == sorted(stranded["nodes"])
    assert sum(n.free_cpu for n in nodes.values() if n.stranded) == stranded["cpu"] == pic.stranded_cpu
