"""What a fix may show without bringing it, for the tests of `podfit fix` (tests/test_fix*.py)."""

from __future__ import annotations

from collections.abc import Iterable


def brought(after: Iterable[tuple[str, ...]], before: Iterable[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """The finding keys of ``after`` that ``before`` lacks, less those a fix shows without bringing:
    a rule's finding on a container (or pod) that a finding of its rule's ``MASKED_BY`` kept
    unreported (PF111 behind PF102 or PF105). Keys are (rule, ..., object, container), with ""
    for a finding on the whole object."""
    from podfit.registry import python_rules

    rules = python_rules()
    before = set(before)

    def shown(k: tuple[str, ...]) -> bool:
        masks = getattr(rules[k[0]], "MASKED_BY", ()) if k[0] in rules else ()
        return any(b[0] in masks and b[1:-1] == k[1:-1] and b[-1] in ("", k[-1]) for b in before)

    return {k for k in set(after) - before if not shown(k)}
