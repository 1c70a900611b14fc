"""The skip and xfail policy of test verifiers (pure): plan-wide defaults and the effective
policy of one verifier.

A test verifier may set ``skips``, ``xfail`` and ``min_passed``; what it leaves unset comes from
the plan's ``defaults.test``, and from :data:`TEST_POLICY_DEFAULTS` when that is unset too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Protocol

from ..values import dataclass
from .frozen import Frozen

Policy = Literal["fail", "allow"]
"""What a skipped (``skips``) or expected-to-fail (``xfail``) test does to its criterion."""
TEST_POLICY_DEFAULTS: dict[str, Any] = {"skips": "fail", "xfail": "fail", "min_passed": 1}
"""The built-in test policy: today's behaviour. A criterion whose effective policy is this one
has the digest it had before the policy fields existed."""


class TestDefaults(Frozen):
    """Plan-wide defaults of every test verifier that does not set its own."""

    __slots__ = ("skips", "xfail", "min_passed")  # noqa: RUF023 (field order)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"skips": "fail", "xfail": "fail", "min_passed": 1}

    __test__ = False
    skips: Policy
    xfail: Policy
    min_passed: int


class PlanDefaults(Frozen):
    """The plan's ``defaults:`` block."""

    __slots__ = ("test",)
    DEFAULTS: ClassVar[Mapping[str, Any]] = {"test": TestDefaults}
    CONVERT: ClassVar[Mapping[str, Any]] = {"test": TestDefaults}

    test: TestDefaults


class PolicySettings(Protocol):
    """What :func:`effective_policy` reads of a test verifier."""

    @property
    def skips(self) -> str | None: ...
    @property
    def xfail(self) -> str | None: ...
    @property
    def min_passed(self) -> int | None: ...
    @property
    def exclude(self) -> list[str]: ...


@dataclass(frozen=True)
class TestPolicy:
    """A test verifier's effective policy: its own settings over the plan's defaults."""

    __test__ = False
    skips: str = "fail"
    xfail: str = "fail"
    min_passed: int = 1
    exclude: tuple[str, ...] = ()

    def __init__(  # its own: one a test criterion, made twice a run (values.dataclass keeps it)
        self,
        skips: str = "fail",
        xfail: str = "fail",
        min_passed: int = 1,
        exclude: tuple[str, ...] = (),
    ) -> None:
        fields = self.__dict__
        fields["skips"] = skips
        fields["xfail"] = xfail
        fields["min_passed"] = min_passed
        fields["exclude"] = exclude


def effective_policy(verifier: PolicySettings, defaults: PlanDefaults | None = None) -> TestPolicy:
    """The effective policy of *verifier* under the plan's *defaults*."""
    base = (defaults or _NO_DEFAULTS).test
    return TestPolicy(
        skips=verifier.skips or base.skips,
        xfail=verifier.xfail or base.xfail,
        min_passed=base.min_passed if verifier.min_passed is None else verifier.min_passed,
        exclude=tuple(verifier.exclude),
    )


_NO_DEFAULTS = PlanDefaults()
