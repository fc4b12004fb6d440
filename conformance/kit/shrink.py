"""Shrinking a failing workload of `subsum conform matching` (spec/11-plugins.md
DEF-PLUG-4): greedy passes that keep a smaller workload only while the
engine still fails the same way (the same kind and, for a difference, the
same direction), until a pass changes nothing or the budget is spent.

1. drop subscriptions, then events, in halves, quarters, … then one at a
   time (one line stays in each file);
2. drop constraints, then attributes;
3. simplify each value toward 0, 1, -1, False, the empty string and
   short strings, so that a replay shows INT64_MIN only when it matters.

Every candidate is one engine run.

>>> [v for v in simpler_values("int", 7)], [v for v in simpler_values("int", 1)]
([0, 1, -1, 6], [0])
>>> [v for v in simpler_values("string", "abc")]
['', 'a', 'b', 'bc', 'ac', 'ab']
"""

from __future__ import annotations

import time
from typing import Callable, Iterator

from subsum.core.types import Attribute, Constraint, Event, Subscription

Workload = tuple[list, list, list[bool]]
#: a candidate -> whether the engine still fails the same way on it (and keeps what it answered)
Check = Callable[[Workload], bool]


def shrink_workload(workload: Workload, still_fails: Check, budget: float) -> Workload:
    """The smallest workload the passes reach within `budget` seconds."""
    deadline = time.monotonic() + budget
    current = workload
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for candidate_pass in (drop_lines, drop_parts, simplify_values):
            for candidate in candidate_pass(current):
                if time.monotonic() >= deadline:
                    return current
                if still_fails(candidate):
                    current, changed = candidate, True
                    break
            if changed:
                break
    return current


def drop_lines(w: Workload) -> Iterator[Workload]:
    """Halves, then quarters, … then single lines of each file, so that a pinned workload of 70 lines shrinks in
    a few dozen engine runs, not hundreds."""
    subscriptions, events, forms = w
    for start, end in chunks(len(subscriptions)):
        yield subscriptions[:start] + subscriptions[end:], events, forms[:start] + forms[end:]
    for start, end in chunks(len(events)):
        yield subscriptions, events[:start] + events[end:], forms


def chunks(n: int) -> Iterator[tuple[int, int]]:
    """(start, end) of the runs of lines to drop from n, largest first, always leaving one line.

    >>> list(chunks(4))
    [(0, 2), (2, 4), (0, 1), (1, 2), (2, 3), (3, 4)]
    """
    size = n // 2
    while size >= 1:
        for start in range(0, n, size):
            if n - min(n, start + size) + start >= 1:
                yield start, min(n, start + size)
        size //= 2


def drop_parts(w: Workload) -> Iterator[Workload]:
    subscriptions, events, forms = w
    for k, (sid, s) in enumerate(subscriptions):
        for c in ordered(s.constraints):
            smaller = (sid, Subscription(s.constraints - {c}))
            yield subscriptions[:k] + [smaller] + subscriptions[k + 1:], events, forms
    for k, e in enumerate(events):
        for a in e.attributes:
            yield subscriptions, events[:k] + [Event(tuple(x for x in e.attributes if x is not a))] + events[k + 1:], forms
    for k, form in enumerate(forms):
        if not form:  # the constraints array is the plainer form
            yield subscriptions, events, forms[:k] + [True] + forms[k + 1:]


def simplify_values(w: Workload) -> Iterator[Workload]:
    subscriptions, events, forms = w
    for k, (sid, s) in enumerate(subscriptions):
        for c in ordered(s.constraints):
            if c.value is None:
                continue
            for value in simpler_values(c.type, c.value, c.op):
                replaced = Constraint(c.name, c.type, c.op, value)
                if replaced not in s.constraints:
                    yield subscriptions[:k] + [(sid, Subscription((s.constraints - {c}) | {replaced}))] + subscriptions[k + 1:], events, forms
    for k, e in enumerate(events):
        for a in e.attributes:
            for value in simpler_values(a.type, a.value):
                attributes = tuple(Attribute(a.name, a.type, value) if x is a else x for x in e.attributes)
                yield subscriptions, events[:k] + [Event(attributes)] + events[k + 1:], forms


def simpler_values(type_: str, value, op: str | None = None) -> Iterator:
    """Values simpler than `value` (`rank` smaller: so shrinking cannot cycle), simplest first."""
    if type_ == "bool":
        candidates: list = [False]
    elif type_ == "int":
        candidates = [0, 1, -1, value - 1 if value > 0 else value + 1]
    elif type_ == "float":
        candidates = [0.0, 1.0, -1.0] + ([float(int(value))] if abs(value) < 2**63 else [])
    elif op == "wildcard":
        left, _, right = value.partition("*")
        candidates = [f"{l}*{r}" for l, r in (("", ""), *((p, right) for p in shorter(left)), *((left, p) for p in shorter(right)))]
    else:
        candidates = ["", "a", "b", *shorter(value)]
    seen = set()
    for v in candidates:
        if v not in seen and rank(v) < rank(value):
            seen.add(v)
            yield v


def rank(value) -> tuple:
    """How complex a value is: a shorter string, a smaller magnitude, an integral float, a positive number and
    False are simpler."""
    if isinstance(value, str):
        return (len(value), tuple(map(ord, value)))
    if isinstance(value, bool):
        return (int(value),)
    if isinstance(value, float):
        return (value != int(value) if abs(value) < 2**63 else True, abs(value), value < 0)
    return (abs(value), value < 0)


def shorter(text: str) -> list[str]:
    """`text` with one character left out, each way."""
    return [text[:k] + text[k + 1:] for k in range(len(text))]


def ordered(constraints) -> list[Constraint]:
    """A set's constraints in a fixed order (a set's own order changes with the process's hash seed)."""
    return sorted(constraints, key=lambda c: (c.name, c.type, c.op, repr(c.value)))
