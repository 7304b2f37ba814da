"""One catalogue feeds everything: Python rule modules, docs, README must agree with it."""

import json
import re
from dataclasses import asdict

from podfit.catalogue import CATEGORIES, catalogue_problems, load_catalogue, rule_doc
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
        # the catalogue reads the docstring and CATEGORY from the module's source, without importing
        # it: what it read is what Python makes of the module
        prose, problems = rule_doc(module.__doc__ or "")
        assert problems == [], (rid, problems)
        assert module.CATEGORY == cat[rid].category
        assert prose == {k: getattr(cat[rid], k) for k in prose}, rid
        # what the module declares is checked for being whole and not repeated by test_catalogue_is_consistent


DOC = """## What it does
A pod does one thing
wrapped over two lines.

## Why it matters
It costs.

Twice.

## Example
```yaml
kind: Pod
  spec: {}
```

## How to fix
Do the other thing.

## Source
The study.
"""


def test_a_rule_docstring_gives_its_fields():
    prose, problems = rule_doc(DOC + "\n## Implementation\nHow it is computed.\n")
    assert problems == []
    assert prose == {
        "summary": "A pod does one thing wrapped over two lines.",
        "rationale": "It costs.\n\nTwice.",
        "example": "kind: Pod\n  spec: {}\n",
        "fix": "Do the other thing.",
        "source": "The study.",
    }


def test_a_rule_docstring_with_sections_missing_misplaced_or_unknown_is_a_problem():
    assert rule_doc(DOC.replace("## Source\nThe study.\n", ""))[1] == [
        "sections ['What it does', 'Why it matters', 'Example', 'How to fix'], expected "
        "['What it does', 'Why it matters', 'Example', 'How to fix', 'Source'] (then optionally 'Implementation')"
    ]
    swapped = DOC.replace("## How to fix", "## Fix")
    assert "sections" in rule_doc(swapped)[1][0]
    assert rule_doc("PF999: a rule.\n\n" + DOC)[1] == ["text before its first section"]
    assert rule_doc(DOC.replace("```yaml\n", "```\n"))[1] == ["its Example is not one ```yaml block"]
    assert rule_doc(DOC + "\n## Options\nNone.\n")[1] != []


def test_rego_metadata_with_a_field_missing_or_unknown_is_a_problem(tmp_path, monkeypatch):
    """A Rego rule's METADATA is checked as a docstring is: every prose field present, no field
    catalogue.py would not read, and catalogue.yaml never repeating a rule that has a file."""
    import podfit.paths
    from podfit import catalogue

    policies = tmp_path / "policies"
    (policies / "resources").mkdir(parents=True)
    (policies / "resources" / "scratch_rule.rego").write_text(
        "# METADATA\n# title: Scratch\n# description: A scratch rule.\n# custom:\n#   id: PF199\n"
        "#   severity: info\n#   slug: scratch-rule\n#   source: The study.\n#   fix: Do it.\n"
        "#   rationales: misspelt\npackage podfit.resources.scratch_rule\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(podfit.paths, "policies_dir", lambda: policies)
    rules, problems = catalogue._merge()
    assert rules["PF199"].category == "resources" and rules["PF199"].fix == "Do it."
    assert [p for p in problems if p.startswith("PF199")] == [
        "PF199: unknown METADATA custom field 'rationales' (policies/resources/scratch_rule.rego)",
        "PF199: no rationale (policies/resources/scratch_rule.rego)",
    ]


def test_catalogue_is_consistent():
    """No field written twice (catalogue.yaml and a rule's declaration) or missing anywhere."""
    assert catalogue_problems() == ()


def test_loader_rules_are_python_rules():
    cat = load_catalogue()
    assert all(cat[r].engine == "python" for r in LOADER_RULES)


def test_catalogue_yaml_holds_only_the_findings_without_a_rule_file():
    """Every other rule's prose is in its own file; catalogue.yaml has the loader's and pipeline's."""
    import yaml

    text = (ROOT / "analyzer" / "podfit" / "catalogue.yaml").read_text(encoding="utf-8")
    assert {e["id"] for e in yaml.safe_load(text)["rules"]} == set(LOADER_RULES)
    assert {r.id for r in load_catalogue().values() if r.defined_in == "catalogue.yaml"} == set(LOADER_RULES)


def test_every_rule_file_has_pass_and_fail_fixtures():
    """A rule is its file and its testdata/<ID>/ folder: fail_ fixtures that raise it, pass_ ones that do not."""
    for rule in load_catalogue().values():
        if rule.defined_in == "catalogue.yaml":
            continue
        names = (
            [p.name for p in (ROOT / "testdata" / rule.id).iterdir()] if (ROOT / "testdata" / rule.id).is_dir() else []
        )
        assert any(n.startswith("fail_") for n in names), f"{rule.id}: no testdata/{rule.id}/fail_*"
        assert any(n.startswith("pass_") for n in names), f"{rule.id}: no testdata/{rule.id}/pass_*"


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


def test_rule_prose_is_the_same_read_from_source_or_imported(tmp_path):
    """Without a module's source (bytecode only) its prose comes from importing it, the same."""
    from podfit import catalogue

    rules_dir = ROOT / "analyzer" / "podfit" / "rules"
    for module in python_rules().values():
        name = module.__name__.rsplit(".", 1)[1]
        assert (
            catalogue._module_prose(tmp_path, name)
            == catalogue._module_prose(rules_dir, name)
            == (
                module.__doc__,
                module.CATEGORY,
            )
        )


def test_cached_catalogue_is_the_merged_one(monkeypatch, tmp_path):
    """A run reads the merged catalogue from the private cache once it is written; what it reads is
    the catalogue merged from the sources (options, tuples and problems alike), and a cache file of
    another shape or not JSON is merged afresh."""
    from podfit import catalogue

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    merged, problems = catalogue._merge()
    damages = (
        None,
        "{not json",
        '{"rules": 7}',
        '{"rules": [{"id": "PF101"}], "problems": []}',
        '{"rules": [], "problems": []}',  # no rule would run: every check a pass
        "[" * 100_000 + "]" * 100_000,  # past the recursion limit of json.loads
        json.dumps({"rules": [{**asdict(merged["PF101"]), "title": 5}], "problems": []}),
        json.dumps({"rules": [asdict(r) for r in merged.values() if r.engine != "python"], "problems": []}),
    )
    for damage in damages:
        if damage is not None:
            (cache,) = (tmp_path / "podfit").glob("catalogue-*.json")
            cache.write_text(damage, encoding="utf-8")
        catalogue._catalogue.cache_clear()
        try:
            rules, read_problems = catalogue._catalogue()
        finally:
            catalogue._catalogue.cache_clear()
        assert dict(rules) == merged, damage
        assert list(rules) == list(merged)
        assert read_problems == tuple(problems)
        if damage is None:  # the first run wrote every rule there
            (cache,) = (tmp_path / "podfit").glob("catalogue-*.json")
            written = json.loads(cache.read_text(encoding="utf-8"))
            assert [r["id"] for r in written["rules"]] == list(merged)
            # the next run reads that file and merges nothing: the catalogue read back from JSON
            # (lists where the merge has tuples) is the merged one
            with monkeypatch.context() as m:
                m.setattr(catalogue, "_merge", _no_merge)
                catalogue._catalogue.cache_clear()
                try:
                    rules, read_problems = catalogue._catalogue()
                finally:
                    catalogue._catalogue.cache_clear()
            assert dict(rules) == merged and list(rules) == list(merged)
            assert read_problems == tuple(problems)


def _no_merge():
    raise AssertionError("merged although the cache file holds the catalogue")


def test_cached_declarations_of_another_shape_are_read_afresh(monkeypatch, tmp_path):
    """The rule modules' declarations, read back from a cache file of another shape (not a map,
    a rule that is not a map or lacks a field, a module the package does not have), are built
    from the modules again: never an internal error, never a rule lost."""
    from podfit import registry

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    registry.declarations.cache_clear()
    try:
        built = dict(registry.declarations())
        (cache,) = (tmp_path / "podfit").glob("rules-*.json")
        some = json.loads(cache.read_text(encoding="utf-8"))
        first = next(iter(some))
        for damage in (
            {first: 5},
            {first: {}},
            {first: {**some[first], "requires": 5}},
            {first: {**some[first], "options": [{"name": "x"}]}},
            {"PF000": {**some[first], "module": "os"}},
            [],
            None,
        ):
            cache.write_text(json.dumps(damage), encoding="utf-8")
            registry.declarations.cache_clear()
            assert dict(registry.declarations()) == built, damage
    finally:
        registry.declarations.cache_clear()
