"""What a check's generators actually produce: a census of the cases it runs.

A property that never draws a `contains` match at the end of a value cannot
catch a bug there, however many examples it runs. So a check may name
*floors*: tags, each with the least number of times the `ci` profile must
produce it (`Check.floors` in conformance/claims/records.py). While a check runs,
the strategies' consumers `record` tags here; `conformance.claims.run_check`
fails the check, as `floor`, when a tag falls below its floor.

Tags name the spec's edge cases and the model's rules:

- matching workloads (`matching_tags`): every `op:TYPE:OP` pair, empty
  patterns, `*` alone, wildcard values exactly `len(l) + len(r)` long,
  pattern matches at the start, middle and end of a value, 64-bit and
  float limits, the type puns across events (`bool true` and `int 1`, `int 1`
  and `float 1.0` under one name), and subscriptions of only `!=`/`any`;
- the broker handlers (`sub_rule`, `unsub_rule`, conformance/checks/network/forwarding.py
  and conformance/checks/network/reconfig.py): first, second and later subscriber, the
  single remaining subscriber, stale SUB and UNSUB, the timers, FLUSH and
  ACTIVATE; in every network machine (summary routing's too), the empty
  filter and tables checked on a network of one broker;
- the caches (conformance/checks/caching/policies.py, protocol_caches.py, client_server.py):
  operations at equal times, evictions at capacity 1 and under each policy,
  hits and unsubscriptions at bounded caches, answers from off the
  request's path and SS's interested brokers there;
- summary routing (conformance/checks/routing/routes.py, routing_machine.py): neighbors
  of equal degree, owners handed an event off the route, ROUTE hops,
  deletions that needed a remote owner's answer;
- the trace check's boundaries (conformance/checks/pipeline/trace_boundaries.py): interval
  ends at exactly t_p - grace and t_p + grace, equal times, grace 0, the
  empty filter.

>>> from subsum.core.types import Attribute, Constraint, Event, Subscription
>>> with observe() as seen:
...     record_matching([("s", Subscription({Constraint("s", "string", "contains", "b")}))],
...                     [Event((Attribute("s", "string", "ab"),))])
>>> seen["op:string:contains"], seen["contains:at-end-only"]
(1, 1)
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterable, Iterator

from subsum.core.types import INT_MAX, INT_MIN, Attribute, Constraint, Event, Subscription

#: The counters of the blocks counting now, innermost last (a context variable: a block's counting is its own context's).
_active: ContextVar[tuple[Counter[str], ...]] = ContextVar("subsum_census_active", default=())

FLOAT_LIMITS = frozenset({1.7976931348623157e308, -1.7976931348623157e308, 5e-324, -5e-324})
INT_LIMITS = frozenset({INT_MIN, INT_MAX})


@contextmanager
def observe() -> Iterator[Counter[str]]:
    """Count the tags recorded inside the block (blocks nest; each counts its own)."""
    counts: Counter[str] = Counter()
    token = _active.set((*_active.get(), counts))
    try:
        yield counts
    finally:
        _active.reset(token)


@contextmanager
def paused() -> Iterator[None]:
    """Record nothing inside the block (a pinned example is not a draw)."""
    token = _active.set(())
    try:
        yield
    finally:
        _active.reset(token)


def observing() -> bool:
    """Whether a block is counting tags now (a checker that skips handler runs it knows must not, then)."""
    return bool(_active.get())


def record(*tags: str) -> None:
    for counts in _active.get():
        counts.update(tags)


def record_all(tags: Iterable[str]) -> None:
    if _active.get():
        record(*tags)


# --- matching workloads ----------------------------------------------------------------------

def constraint_tags(c: Constraint) -> list[str]:
    tags = [f"op:{c.type}:{c.op}"]
    if c.op in ("prefix", "suffix", "contains") and c.value == "":
        tags.append(f"empty-{c.op}")
    if c.op == "wildcard" and c.value == "*":
        tags.append("wildcard-star-alone")
    return tags + limit_tags(c.type, c.value)


def limit_tags(type_: str, value: object) -> list[str]:
    """The 64-bit int limits and the float limits (largest, smallest subnormal)."""
    if type_ == "int" and value in INT_LIMITS:
        return ["int-64-limit"]
    if type_ == "float" and value in FLOAT_LIMITS:
        return ["float-limit"]
    return []


def _occurrences(value: str, pattern: str) -> list[int]:
    return [i for i in range(len(value) - len(pattern) + 1) if value.startswith(pattern, i)]


def pair_tags(c: Constraint, a: Attribute) -> list[str]:
    """Tags of one (constraint, attribute) pair that an engine must decide."""
    if (c.name, c.type) != (a.name, a.type) or c.value is None:
        return []
    tags = []
    if isinstance(c.value, str) and isinstance(a.value, str) and c.op in ("prefix", "suffix", "contains") and c.value:
        where = _occurrences(a.value, c.value)
        if where:
            last = len(a.value) - len(c.value)
            if where == [0] and last == 0:
                tags.append(f"{c.op}:whole-value")
            if 0 in where and last > 0:
                tags.append(f"{c.op}:at-start")
            if any(0 < i < last for i in where):
                tags.append(f"{c.op}:in-middle")
            if last in where and last > 0:
                tags.append(f"{c.op}:at-end")
                if where == [last]:
                    tags.append(f"{c.op}:at-end-only")
    if c.op == "wildcard" and isinstance(c.value, str) and isinstance(a.value, str):
        left, right = c.value.split("*")
        if a.value.startswith(left) and a.value.endswith(right):
            if len(a.value) == len(left) + len(right):
                tags.append("wildcard:exact-length")
            elif len(a.value) < len(left) + len(right):
                tags.append("wildcard:parts-overlap")  # starts and ends right, yet too short: no match
    if c.type in ("int", "float") and c.op in ("<", "<=", ">", ">=", "=", "!=") and a.value == c.value:
        tags.append("numeric:at-threshold")
    return tags + limit_tags(c.type, a.value)


def subscription_tags(s: Subscription) -> list[str]:
    if not s.constraints:
        return ["subscription:empty"]
    if all(c.op == "!=" for c in s.constraints):
        return ["subscription:only-not-equal"]
    if all(c.op == "any" for c in s.constraints):
        return ["subscription:only-any"]
    if all(c.op in ("!=", "any") for c in s.constraints):
        return ["subscription:only-not-equal-or-any"]
    return []


def batch_tags(events: list[Event]) -> list[str]:
    """Tags across the events of one batch: one name under several types."""
    types: dict[str, set[tuple[str, object]]] = {}
    for event in events:
        for a in event.attributes:
            types.setdefault(a.name, set()).add((a.type, a.value))
    tags = []
    for seen in types.values():
        kinds = {t for t, _ in seen}
        if len(kinds) > 1:
            tags.append("name:several-types")
        if ("bool", True) in seen and ("int", 1) in seen:
            tags.append("name:bool-true-and-int-1")
        if ("int", 1) in seen and ("float", 1.0) in seen:
            tags.append("name:int-1-and-float-1.0")
    return tags


def matching_tags(subscriptions: list[tuple[str, Subscription]], events: list[Event]) -> Counter[str]:
    tags: Counter[str] = Counter()
    constraints = {c for _, s in subscriptions for c in s.constraints}
    for _, s in subscriptions:
        tags.update(subscription_tags(s))
    for c in constraints:
        tags.update(constraint_tags(c))
    for event in events:
        for a in event.attributes:
            if a.type == "float" and a.value == 0.0:
                tags["float:zero"] += 1
            for c in constraints:
                tags.update(pair_tags(c, a))
    tags.update(batch_tags(events))
    return tags


def record_matching(subscriptions: list[tuple[str, Subscription]], events: list[Event]) -> None:
    if _active.get():
        record_all(matching_tags(subscriptions, events).elements())
