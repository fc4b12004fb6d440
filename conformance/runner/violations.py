"""A failed check names the claim it speaks for in its type, not in its wording.

`ClaimViolation` is an `AssertionError` (so pytest and Hypothesis treat it
as any failed assertion, and shrink it) that carries the claim's ID as a
field. The fuzzer files a violation under `exc.claim`, and `subsum verify`
reports it beside the check: rewording a message moves nothing.

>>> try:
...     require(1 + 1 == 3, "CLM-DEMO-1", lambda: "1 + 1 is not 3")
... except ClaimViolation as exc:
...     (exc.claim, exc.message, str(exc))
('CLM-DEMO-1', '1 + 1 is not 3', 'CLM-DEMO-1: 1 + 1 is not 3')
"""

from __future__ import annotations

import re
from typing import Callable

from subsum.conformance.runner import budget
from subsum.core.errors import SubsumError
from subsum.core.filters import format_filter
from subsum.core.types import Subscription

CLAIM_ID = re.compile(r"CLM-[A-Z0-9]+(?:-[A-Z0-9]+)*-[0-9]+")


class CannotCheck(SubsumError):
    """The check could not run at all: a schedule no network can hold, a
    command under test that cannot start. Bad input or usage (exit 2),
    never a violation of a claim."""


class ProcessFailure(Exception):
    """A process under test failed to answer as the protocol says: `kind` is
    timeout, crash or malformed, the words `subsum conform matching` uses
    too. The fuzzer files it under its kind (never as a claim)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ClaimViolation(AssertionError):
    """A check found that the implementation (or the model) breaks `claim`."""

    def __init__(self, claim: str, message: str) -> None:
        if not CLAIM_ID.fullmatch(claim):
            raise ValueError(f"not a claim ID: {claim!r}")
        super().__init__(f"{claim}: {message}")
        self.claim, self.message = claim, message
        budget.last_failure.record(str(self), claim)  # a check cut while Hypothesis shrinks still shows it

    def __reduce__(self):  # pickles (multiprocessing, Hypothesis's database) with its fields
        return (type(self), (self.claim, self.message))


def shown(value: object) -> str:
    """A value as a check's message shows it, the same text in every process:
    a filter in its normal form (`format_filter`, in brackets), a tuple or
    list part by part, a set's parts sorted, anything else by `repr`. (A
    filter's repr lists a frozenset, whose order follows PYTHONHASHSEED.)

    >>> from subsum.core.filters import parse_filter
    >>> print(shown((3, "UNSUB", parse_filter('x > 0 and s = "ab"'))))
    (3, 'UNSUB', [s = "ab" and x > 0])
    """
    if isinstance(value, Subscription):
        return f"[{format_filter(value)}]"
    if isinstance(value, tuple):
        return "(" + ", ".join(map(shown, value)) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(map(shown, value)) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(shown, value))) + "}"
    return repr(value)


def listed(values, limit: int | None = None) -> str:
    """Values as a message lists them: each `shown`, sorted, at most `limit` of them.

    >>> listed([(2, "SUB"), (1, "SUB"), (3, "SUB")], limit=2)
    "[(1, 'SUB'), (2, 'SUB'), …]"
    """
    texts = sorted(map(shown, values))
    more = limit is not None and len(texts) > limit
    return "[" + ", ".join(texts[:limit] if more else texts) + (", …]" if more else "]")


def require(condition: object, claim: str, message: str | Callable[[], str]) -> None:
    """Raise `ClaimViolation(claim, message)` unless `condition` holds. A
    callable message is built only on failure (some are expensive)."""
    if not condition:
        raise ClaimViolation(claim, message() if callable(message) else message)


def claim_of(exc: BaseException) -> str | None:
    """The claim a failure speaks for: a `ClaimViolation`'s own, the one it
    was raised from (a check that re-raises), or the first one in a group
    (Hypothesis reports distinct failures as an ExceptionGroup); else None."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ClaimViolation):
            return current.claim
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None
