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

from subsum.conformance import budget
from subsum.core.errors import SubsumError

CLAIM_ID = re.compile(r"CLM-[A-Z0-9]+(?:-[A-Z0-9]+)*-[0-9]+")


class CannotCheck(SubsumError):
    """The check could not run at all: a schedule no network can hold, a
    command under test that cannot start. Bad input or usage (exit 2),
    never a violation of a claim."""


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
