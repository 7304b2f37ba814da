"""What a fix may show without bringing it, for the tests of `podfit fix` (tests/test_fix*.py)."""

from __future__ import annotations

from collections.abc import Iterable


def brought(after: Iterable[tuple[str, ...]], before: Iterable[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """The finding keys of ``after`` that ``before`` lacks, less those a fix shows without bringing:
    a rule's finding on a container (or pod) that a finding of its rule's ``masked_by`` kept
    unreported (PF111 behind PF102 or PF105). Keys are (rule, ..., object, container), with ""
    for a finding on the whole object."""
    from podfit.catalogue import load_catalogue

    rules = load_catalogue()
    before = set(before)

    def shown(k: tuple[str, ...]) -> bool:
        masks = rules[k[0]].masked_by if k[0] in rules else ()
        return any(b[0] in masks and b[1:-1] == k[1:-1] and b[-1] in ("", k[-1]) for b in before)

    return {k for k in set(after) - before if not shown(k)}
