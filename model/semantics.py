"""Matching semantics (spec/01-data-model.md DEF-DATA-6, spec/03-matching.md).

Constructed for ease of understanding rather than for speed: every function
is a direct transcription of the definition it cites.
"""

from __future__ import annotations

from typing import Iterable, Sequence, cast

from subsum.core.types import Attribute, Constraint, Event, Scalar, Subscription, split_wildcard


def operator_holds(op: str, v: Scalar, w: Scalar | None) -> bool:
    """DEF-DATA-6: op(v, w), the attribute value `v` on the left and the
    constraint value `w` on the right (seed 001 Def 6 argument order).

    >>> operator_holds("<", 8.40, 8.70), operator_holds("wildcard", "NYSE", "N*SE")
    (True, True)
    >>> operator_holds("prefix", "OTE", "OTEX"), operator_holds("any", 3, None)
    (False, True)
    """
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
    are equal, and op(v_a, v_c) holds.

    >>> price = Attribute("price", "float", 8.40)
    >>> satisfies(price, Constraint("price", "float", "<", 8.70))
    True
    >>> satisfies(price, Constraint("price", "int", "<", 9))  # int and float are distinct types
    False
    """
    return (
        attribute.name == constraint.name
        and attribute.type == constraint.type
        and operator_holds(constraint.op, attribute.value, constraint.value)
    )


def matches(subscription: Subscription, event: Event) -> bool:
    """DEF-MATCH-2 (seed 001 Def 9): E ∝ S iff every constraint of S is
    satisfied by some attribute of E. The empty subscription matches every
    event (vacuous truth).

    Seed 000 Fig. 2-2: the event matches S1.

    >>> from subsum.core.filters import parse_filter
    >>> s1 = parse_filter('exchange wildcard "N*SE" and symbol = "OTE" and price < 8.70 and price > 8.30')
    >>> event = Event((Attribute("exchange", "string", "NYSE"), Attribute("symbol", "string", "OTE"),
    ...                Attribute("price", "float", 8.40), Attribute("volume", "int", 132700)))
    >>> matches(s1, event), matches(Subscription(), event)
    (True, True)
    """
    return all(
        any(satisfies(attribute, constraint) for attribute in event.attributes)
        for constraint in subscription.constraints
    )


def satisfied_pair_count(subscription: Subscription, attributes: Sequence[Attribute]) -> int:
    """DEF-MATCH-3: the counter of the counting algorithm: the number of
    (attribute, constraint) pairs with a ∝ c. Takes a plain sequence of
    attributes so that CLM-MATCH-3 can show what goes wrong without the Map
    property.

    >>> from subsum.core.filters import parse_filter
    >>> s = parse_filter("x > 1 and x < 5")
    >>> satisfied_pair_count(s, [Attribute("x", "int", 3)])
    2
    >>> satisfied_pair_count(s, [Attribute("x", "int", 3), Attribute("x", "int", 4)])  # no Map property
    4
    """
    return sum(
        1
        for attribute in attributes
        for constraint in subscription.constraints
        if satisfies(attribute, constraint)
    )


def counting_match(subscription: Subscription, event: Event) -> bool:
    """DEF-MATCH-3: E matches S by counting iff the counter equals the number
    of distinct constraints of S. For the empty subscription both are 0.

    >>> from subsum.core.filters import parse_filter
    >>> event = Event((Attribute("x", "int", 3),))
    >>> counting_match(parse_filter("x > 1 and x < 5"), event), counting_match(parse_filter("x > 1 and y = 2"), event)
    (True, False)
    """
    return satisfied_pair_count(subscription, event.attributes) == len(subscription.constraints)


def matching_ids(subscriptions: Iterable[tuple[str, Subscription]], event: Event) -> list[str]:
    """The sorted IDs of the subscriptions that `event` matches (DEF-MATCH-2).

    >>> from subsum.core.filters import parse_filter
    >>> subs = [("S2", parse_filter("x > 1")), ("S1", parse_filter("x > 0")), ("S3", parse_filter("x > 5"))]
    >>> matching_ids(subs, Event((Attribute("x", "int", 3),)))
    ['S1', 'S2']
    """
    return sorted(sid for sid, subscription in subscriptions if matches(subscription, event))


def match_batch(subscriptions: Iterable[tuple[str, Subscription]], events: Sequence[Event]) -> list[set[str]]:
    """DEF-MATCH-6: the batch semantics. Per event, in input order, the set of
    IDs of the subscriptions it matches (DEF-MATCH-2). Each event is matched
    on its own, so splitting, reordering or repeating events changes nothing
    but the order and repetition of the result lines.

    >>> from subsum.core.filters import parse_filter
    >>> subs = [("S1", parse_filter("x > 0")), ("S2", parse_filter("x > 5"))]
    >>> [sorted(ids) for ids in match_batch(subs, [Event((Attribute("x", "int", 9),)), Event((Attribute("x", "int", 3),)), Event()])]
    [['S1', 'S2'], ['S1'], []]
    """
    subscriptions = list(subscriptions)
    return [set(matching_ids(subscriptions, event)) for event in events]
