"""One catalogue feeds everything: Python rule modules, docs, README must agree with it."""

import re

from podfit.catalogue import CATEGORIES, catalogue_problems, load_catalogue
from podfit.docs import rules_md, rules_table
from podfit.registry import LOADER_RULES, python_rules

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_catalogue_entries_are_complete_and_well_formed():
    cat = load_catalogue()
    for rid, r in cat.items():
        assert re.fullmatch(r"PF[1-9][0-9]{2}", rid)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.slug)
        assert r.severity in ("error", "warning", "info")
        assert r.engine in ("rego", "python")
        assert r.category in CATEGORIES
        for field in ("title", "summary", "rationale", "source", "fix"):
            assert getattr(r, field).strip(), (rid, field)
    slugs = [r.slug for r in cat.values()]
    assert len(slugs) == len(set(slugs))


def test_every_python_module_is_a_catalogued_python_rule():
    cat = load_catalogue()
    for rid, module in python_rules().items():
        assert rid in cat, f"{module.__name__} defines unknown rule {rid}"
        assert cat[rid].engine == "python", f"{rid} is a {cat[rid].engine} rule in the catalogue"
        assert module.__name__.rsplit(".", 1)[1] == cat[rid].slug.replace("-", "_")
        # what the module declares is checked for being whole and not repeated by test_catalogue_is_consistent


def test_catalogue_is_consistent():
    """No field written twice (catalogue.yaml and a rule's declaration) or missing anywhere."""
    assert catalogue_problems() == ()


def test_loader_rules_are_python_rules():
    cat = load_catalogue()
    assert all(cat[r].engine == "python" for r in LOADER_RULES)


def test_generated_docs_match_catalogue():
    assert (ROOT / "docs" / "rules.md").read_text() == rules_md()
    assert rules_table() in (ROOT / "README.md").read_text()


def test_help_uri_anchors_exist_in_rule_docs():
    import re as _re

    text = (ROOT / "docs" / "rules.md").read_text()
    anchors = {_re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in _re.findall(r"^## (.+)$", text, _re.M)}
    for rule in load_catalogue().values():
        assert rule.help_uri.split("#", 1)[1] in anchors, rule.id


def _declarations_read(monkeypatch, cache_home):
    from podfit import registry

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    registry.declarations.cache_clear()
    try:
        return registry.declarations()
    finally:
        registry.declarations.cache_clear()


def test_cached_rule_declarations_are_what_the_modules_declare(monkeypatch, tmp_path):
    """The first run imports every rule module and caches their declarations; later runs read the
    cache instead. Both give exactly what the modules declare (types included: tuples, numbers)."""
    from podfit.registry import _import_all

    imported = _declarations_read(monkeypatch, tmp_path)
    (cache,) = (tmp_path / "podfit").glob("rules-*.json")
    cached = _declarations_read(monkeypatch, tmp_path)
    assert cached == imported
    modules = _import_all()
    assert sorted(cached) == sorted(modules)
    for rule_id, module in modules.items():
        decl = cached[rule_id]
        assert decl["module"] == module.__name__.rsplit(".", 1)[1]
        assert (decl["slug"], decl["title"], decl["severity"]) == (module.SLUG, module.TITLE, module.SEVERITY)
        assert decl["requires"] == tuple(getattr(module, "REQUIRES", ()))
        assert decl["options"] == tuple(getattr(module, "OPTIONS", ()))
        for declared, read in zip(getattr(module, "OPTIONS", ()), decl["options"], strict=True):
            assert type(read.default) is type(declared.default), (rule_id, read.name)
            assert type(read.choices) is type(declared.choices), (rule_id, read.name)
    # an unreadable cache is rebuilt from the modules
    cache.write_text("{not json", encoding="utf-8")
    assert _declarations_read(monkeypatch, tmp_path) == imported
    assert cache.read_text(encoding="utf-8").startswith("{")


def test_a_check_imports_only_the_rules_it_runs(tmp_path):
    """Rule modules whose required facts are absent are not imported (nor the analyzers they use)."""
    import subprocess
    import sys

    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n"
    )
    code = (
        "import sys; from podfit.cli import main\n"
        "try: main(['check', '--engine', 'embedded', sys.argv[1]])\n"
        "except SystemExit: pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('podfit.'))))\n"
    )
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for _ in range(2):  # the first run writes the declarations' cache, the second reads it
        out = subprocess.run([sys.executable, "-c", code, str(manifest)], capture_output=True, text=True, env=env)
    loaded = set(out.stdout.split("\n")[-2].split())
    assert "podfit.rules.cpu_overcommit_high" in loaded  # needs no facts: runs
    assert "podfit.rules.workload_does_not_fit" not in loaded  # needs node pools
    assert "podfit.rules.throttling_simulated_high" not in loaded
    assert "podfit.throttle" not in loaded
