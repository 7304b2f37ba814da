"""One catalogue feeds everything: Python rule modules, docs, README must agree with it."""

import re

from podfit.catalogue import CATEGORIES, catalogue_problems, load_catalogue
from podfit.docs import rules_md, rules_table
from podfit.rules import LOADER_RULES, python_rules

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
