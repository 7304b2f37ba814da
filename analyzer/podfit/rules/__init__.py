"""Python rules: one module per rule, discovered automatically (:mod:`podfit.registry`).

A rule module declares its identity and needs as constants, as yamllint's rule modules do::

    ID = "PF601"                       # the rule id (its prose is the module docstring)
    SLUG = "workload-does-not-fit"
    TITLE = "Workloads do not fit the node pools"
    SEVERITY = "error"                 # error | warning | info (see docs/rules.md)
    CATEGORY = "packing"               # one of podfit.catalogue.CATEGORIES
    REQUIRES = ("node-pools",)         # facts (podfit.facts.REQUIREMENTS) without which it is skipped
    OPTIONS = (Option("time-budget", "duration", 10, "..."),)
    SUPERSEDES = ("PF202",)            # optional: when this rule runs, these rules' findings are dropped
    REPLACES = ("PF302",)              # optional: these rules' findings on an object this rule reports are dropped

and ``check(ctx)`` (ctx: a :class:`~podfit.rule_context.RuleContext`) yielding
:class:`~podfit.findings.Finding`; optionally ``skip_reason(ctx)`` returning why it cannot run (a
string) beyond its REQUIRES, or None. Options are read with
``ctx.option(name)``: the configured value, checked against the declaration, or its default.
"""
