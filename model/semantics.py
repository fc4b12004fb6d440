"""Matching semantics (spec/01-data-model.md DEF-DATA-6, spec/03-matching.md).

Constructed for ease of understanding rather than for speed: every function
is a direct transcription of the definition it cites.
"""

from __future__ import annotations

from typing import Iterable, Sequence, cast

from subsum.core.types import Attribute, Constraint, Event, Scalar, Subscription, split_wildcard


def operator_holds(op: str, v: Scalar, w: Scalar | None) -> bool:
    """DEF-DATA-6: op(v, w), the attribute value `v` on the left and the
    constraint value `w` on the right (seed 001 Def 6 argument order)."""
    # DEF-DATA-5 fits the operator to the type, which mypy cannot see: the
    # ordering operators compare numbers, the string operators strings.
    x, y = cast(float, v), cast(float, w)
    s, t = cast(str, v), cast(str, w)
    if op == "any":
        return True
    if op == "=":
        return v == w
    if op == "!=":
        return v != w
    if op == "<":
        return x < y
    if op == "<=":
        return x <= y
    if op == ">":
        return x > y
    if op == ">=":
        return x >= y
    if op == "prefix":
        return s.startswith(t)
    if op == "suffix":
        return s.endswith(t)
    if op == "contains":
        return t in s
    if op == "wildcard":
        left, right = split_wildcard(t)
        return s.startswith(left) and s.endswith(right) and len(s) >= len(left) + len(right)
    raise AssertionError(f"unknown operator {op!r}")


def satisfies(attribute: Attribute, constraint: Constraint) -> bool:
    """DEF-MATCH-1 (seed 001 Def 6): a ∝ c iff the names are equal, the types
    are equal, and op(v_a, v_c) holds."""
    return (
        attribute.name == constraint.name
        and attribute.type == constraint.type
        and operator_holds(constraint.op, attribute.value, constraint.value)
    )


def matches(subscription: Subscription, event: Event) -> bool:
    """DEF-MATCH-2 (seed 001 Def 9): E ∝ S iff every constraint of S is
    satisfied by some attribute of E. The empty subscription matches every
    event (vacuous truth)."""
    return all(
        any(satisfies(attribute, constraint) for attribute in event.attributes)
        for constraint in subscription.constraints
    )


def satisfied_pair_count(subscription: Subscription, attributes: Sequence[Attribute]) -> int:
    """DEF-MATCH-3: the counter of the counting algorithm: the number of
    (attribute, constraint) pairs with a ∝ c. Takes a plain sequence of
    attributes so that CLM-MATCH-3 can show what goes wrong without the Map
    property."""
    return sum(
        1
        for attribute in attributes
        for constraint in subscription.constraints
        if satisfies(attribute, constraint)
    )


def counting_match(subscription: Subscription, event: Event) -> bool:
    """DEF-MATCH-3: E matches S by counting iff the counter equals the number
    of distinct constraints of S. For the empty subscription both are 0."""
    return satisfied_pair_count(subscription, event.attributes) == len(subscription.constraints)


def matching_ids(subscriptions: Iterable[tuple[str, Subscription]], event: Event) -> list[str]:
    """The sorted IDs of the subscriptions that `event` matches (DEF-MATCH-2)."""
    return sorted(sid for sid, subscription in subscriptions if matches(subscription, event))


def match_batch(subscriptions: Iterable[tuple[str, Subscription]], events: Sequence[Event]) -> list[set[str]]:
    """DEF-MATCH-6: the batch semantics. Per event, in input order, the set of
    IDs of the subscriptions it matches (DEF-MATCH-2). Each event is matched
    on its own, so splitting, reordering or repeating events changes nothing
    but the order and repetition of the result lines."""
    subscriptions = list(subscriptions)
    return [set(matching_ids(subscriptions, event)) for event in events]
