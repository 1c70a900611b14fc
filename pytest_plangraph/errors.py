"""The one error hierarchy of pytest-plangraph.

::

    PlangraphError              anything a person can act on; the CLI prints it and exits 2
     ├── PlanError              a plan file that cannot be read or does not fit the format
     ├── StoreError             the evidence store cannot be opened, read or appended to
     │    ├── ConflictError     a write refused by optimistic concurrency (exit 1, not 2)
     │    └── StoreTamperedError  an event the gate would use does not match its id or chain
     ├── PlanMoveError          a patch was recorded but its plan could not replace the file
     ├── GitError               a git operation failed (not a repository, unknown revision …)
     │    └── GitTimeoutError   a git process did not finish within PLANGRAPH_GIT_TIMEOUT
     │                          (defined in vcs/spawn.py: only a command that runs git makes it)
     ├── VerifierError          a verifier is misconfigured or unknown
     ├── SignatureError         an event handed over without a signature the gate trusts
     └── UsageError             a command line or API call that names something that is not there,
                                or gives a value of the wrong type or form

Third-party errors are wrapped once, at the boundary that meets them, with ``raise … from exc``.
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


QUOTE_LIMIT = 80
"""The most characters of an offending value a message quotes (a 5,000-character id is shown
by its start, not whole)."""


TOO_LONG_NUMBER = "a number too long to read (a whole number of more than 4,300 digits)"
"""Why a file holding a whole number Python will not convert from text is refused."""


def field_problem(error: Any, whole: str = "") -> str:
    """One problem of a pydantic ``ValidationError`` (an item of its ``errors()``) as
    ``where: what``: the dotted path of the field, or *whole* for the value itself."""
    where = ".".join(str(part) for part in error["loc"]) or whole
    return f"{where}: {error['msg']}"


def quoted(value: Any) -> str:
    """*value* as a message quotes it (``repr``): at most :data:`QUOTE_LIMIT` characters, a
    longer one cut, with ``…`` and its full length."""
    return cut(repr(value))


def cut(text: str) -> str:
    """*text* (a path, a key) as a message shows it: at most :data:`QUOTE_LIMIT` characters, a
    longer one by its start, ``…`` and its full length."""
    if len(text) <= QUOTE_LIMIT:
        return text
    tail = f"… ({len(text):,} characters)"
    return text[: QUOTE_LIMIT - len(tail)] + tail


class PlangraphError(Exception):
    """Root of every error pytest-plangraph raises on purpose."""

    exit_code = 2


class Problem:
    """One problem in a plan file, with where it is and what was expected (a frozen value,
    written by hand: this module is imported by every command, and a dataclass would import
    :mod:`dataclasses` and compile its methods in each of them)."""

    __slots__ = ("column", "file", "line", "message", "path")
    _FIELDS = ("file", "line", "column", "path", "message")

    file: str
    line: int
    column: int
    path: str
    message: str

    def __init__(self, file: str, line: int, column: int, path: str, message: str) -> None:
        for name, value in zip(self._FIELDS, (file, line, column, path, message), strict=True):
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a Problem is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a Problem is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Problem:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self._FIELDS, self._values(), strict=True))
        return f"Problem({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Problem, self._values())

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        field = f" {self.path}:" if self.path else ""
        return f"{where}:{field} {self.message}"


class PlanError(PlangraphError):
    """A plan file that cannot be read; carries one :class:`Problem` per defect."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class StoreError(PlangraphError):
    """The evidence store cannot be opened, read or appended to."""


class ConflictError(StoreError):
    """A write was refused because the store moved on (``PLAN_VERSION_CONFLICT``)."""

    exit_code = 1

    def __init__(self, message: str, reason: str = "PLAN_VERSION_CONFLICT") -> None:
        self.reason = reason
        super().__init__(message)


class StoreTamperedError(StoreError):
    """An event the gate would use does not match its content id or the hash chain
    (``STORE_TAMPERED``): no status is derived from the store. ``seq`` and ``event_id`` name
    the first such event."""

    reason = "STORE_TAMPERED"

    def __init__(self, message: str, seq: int, event_id: str) -> None:
        self.seq = seq
        self.event_id = event_id
        super().__init__(f"STORE_TAMPERED: {message}")


class PlanMoveError(PlangraphError):
    """A patch's events were recorded but the system refused to move its staged plan over the
    plan file; the message names the plan version recorded and the staged file that finishes
    the patch when moved over the plan (:mod:`pytest_plangraph.planwrite`)."""


class GitError(PlangraphError):
    """A git operation failed."""


GIT_TIMEOUT_SETTING = "PLANGRAPH_GIT_TIMEOUT"
"""The setting that bounds the seconds each git process may take
(:class:`pytest_plangraph.vcs.spawn.GitTimeoutError`)."""


class VerifierError(PlangraphError):
    """A verifier is unknown or its settings are wrong."""


class SignatureError(PlangraphError):
    """An event handed over to be stored (``POST /plans/{id}/evidence``) without a signature the
    gate would count: ``reason`` is ``UNSIGNED_EVENT``, ``BAD_SIGNATURE``, ``UNTRUSTED_KEY``,
    ``ROLE_NOT_TRUSTED`` or ``NO_TRUSTED_KEYS`` (no key is configured, so none can be checked).
    Nothing is stored."""

    def __init__(self, message: str, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{reason}: {message}")


class UsageError(PlangraphError):
    """A request names a node, criterion or option that does not exist, or gives a value of
    the wrong type or form."""
