"""Lint of the test verifiers' policy: ``min_passed`` and ``exclude:`` (pure).

* ``MIN_PASSED_BELOW_ONE`` (error): a ``min_passed`` under 1, in a verifier or in the plan's
  ``defaults.test``. A criterion must rest on at least one test that ran and passed; an
  allowed skip or xfail is never a pass.
* ``EXCLUDES_EVERY_TEST`` (warning): every ``tests:`` pattern of a criterion is taken out by
  one of its ``exclude:`` patterns, so only ``criterion`` markers could still give it tests.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..plan.model import TestVerifier
from ..plan.patterns import covers
from .findings import Finding, LintContext


def min_passed(ctx: LintContext) -> Iterator[Finding]:
    """``MIN_PASSED_BELOW_ONE`` for every ``min_passed`` under 1."""
    plan = ctx.loaded.plan
    if plan.defaults.test.min_passed < 1:
        hint = (
            f"defaults.test.min_passed is {plan.defaults.test.min_passed}: a criterion needs at "
            "least one test that ran and passed; write 1 or more"
        )
        yield ctx.finding("MIN_PASSED_BELOW_ONE", None, hint, ("defaults", "test", "min_passed"))
    for i, node in enumerate(plan.nodes):
        for k, criterion in enumerate(node.acceptance):
            verifier = criterion.verifier
            if not isinstance(verifier, TestVerifier) or verifier.min_passed is None:
                continue
            if verifier.min_passed < 1:
                hint = (
                    f"{node.id}/{criterion.id}: min_passed is {verifier.min_passed}: a criterion "
                    "needs at least one test that ran and passed; write 1 or more"
                )
                path = ("nodes", i, "acceptance", k, "verifier", "min_passed")
                yield ctx.finding("MIN_PASSED_BELOW_ONE", node.id, hint, path)


def excludes_every_test(ctx: LintContext) -> Iterator[Finding]:
    """``EXCLUDES_EVERY_TEST`` for a criterion whose ``exclude:`` covers all its patterns."""
    for i, node in enumerate(ctx.loaded.plan.nodes):
        for k, criterion in enumerate(node.acceptance):
            verifier = criterion.verifier
            if not isinstance(verifier, TestVerifier) or not verifier.exclude:
                continue
            if verifier.tests and all(
                any(covers(e, t) for e in verifier.exclude) for t in verifier.tests
            ):
                hint = (
                    f"{node.id}/{criterion.id}: its exclude: patterns take out every test its "
                    f"tests: patterns match ({', '.join(verifier.tests)}); narrow the exclude "
                    "patterns or drop the criterion"
                )
                path = ("nodes", i, "acceptance", k, "verifier", "exclude")
                yield ctx.finding("EXCLUDES_EVERY_TEST", node.id, hint, path)
