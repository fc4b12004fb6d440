"""Covering between filters, for Siena's covering forwarding (spec/08-summary-routing.md,
DEF-SR-6): `filter_covers(general, specific)` says True only when every event
that matches `specific` matches `general` (DEF-COV-3). Sound, not complete:
False means "not shown".

An event holds each name once, so a constraint of `general` on the key
(name, type) can only be satisfied by the attribute a constraint of
`specific` on that same key forces the event to hold. Per key of
`general`'s constraints:

- int and float: the values `specific`'s constraints on the key allow lie
  within the closed interval of its `=`, `<`, `<=`, `>`, `>=` constraints,
  strictness made exact on the type's domain (int `x > 1` is [2, 2^63 - 1];
  float `x > 1.0` starts at the next float up); a general constraint of
  those operators must contain that interval, a general `!= w` needs w
  outside it (or `!= w` in `specific`);
- bool: the set of values `specific`'s constraints on the key allow;
- string: some single constraint of `specific` on the key implies it
  (`string_implies`).

A `specific` whose numeric interval or bool set is empty matches no event
and is covered by every filter. The covering is checked against the
model's exact `subsum.model.covering.covers_subscription` by
`subsum.conformance.checks.routing.siena` (CLM-SR-8).

>>> from subsum.core.filters import parse_filter
>>> filter_covers(parse_filter("x > 5"), parse_filter('x > 7 and s = "a"'))
True
>>> filter_covers(parse_filter("x > 1"), parse_filter("x >= 2")), filter_covers(parse_filter("x > 1.0"), parse_filter("x >= 2.0"))
(True, True)
>>> filter_covers(parse_filter("x >= 2.0"), parse_filter("x > 1.0"))  # 1.5 matches x > 1.0 only
False
>>> filter_covers(parse_filter('s prefix "A"'), parse_filter('s prefix "AB"')), filter_covers(parse_filter("y = 1"), parse_filter("x = 1"))
(True, False)
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence, cast

from subsum.core.types import INT_MAX, INT_MIN, Constraint, Subscription
from subsum.impl.matching.ops import HOLDS

#: The finite values of each numeric type (DEF-DATA-2; NaN and ±inf are not values).
DOMAIN = {"int": (INT_MIN, INT_MAX), "float": (-1.7976931348623157e308, 1.7976931348623157e308)}


def step(type_: str, value, direction: int):
    """The next value of the type above (direction 1) or below (-1) `value`."""
    if type_ == "int":
        return value + direction
    return math.nextafter(value, direction * math.inf)


def interval(c: Constraint) -> tuple:
    """The closed interval [lo, hi] of the domain values satisfying a numeric
    constraint; the whole domain for `any` and `!=`. Empty when lo > hi."""
    low, high = DOMAIN[c.type]
    op, v = c.op, c.value
    if op == "=":
        return (v, v)
    if op == ">=":
        return (v, high)
    if op == ">":
        return (step(c.type, v, 1), high)
    if op == "<=":
        return (low, v)
    if op == "<":
        return (low, step(c.type, v, -1))
    return (low, high)


def numeric_bounds(constraints: Sequence[Constraint]) -> tuple:
    """The interval the constraints on one numeric key confine a value to."""
    low, high = DOMAIN[constraints[0].type]
    for c in constraints:
        lo, hi = interval(c)
        low, high = max(low, lo), min(high, hi)
    return (low, high)


def bool_values(constraints: Sequence[Constraint]) -> set:
    """The bool values the constraints on one bool key allow."""
    allowed = {True, False}
    for c in constraints:
        if c.op == "=":
            allowed &= {c.value}
        elif c.op == "!=":
            allowed.discard(c.value)
    return allowed


def fixed_ends(c: Constraint) -> tuple[str, str]:
    """(start, end): what every string satisfying a prefix, suffix, contains
    or wildcard constraint starts and ends with."""
    value = cast(str, c.value)
    if c.op == "prefix":
        return (value, "")
    if c.op == "suffix":
        return ("", value)
    if c.op == "wildcard":
        left, _, right = value.partition("*")
        return (left, right)
    return ("", "")


def matches_every_string(c: Constraint) -> bool:
    return c.op == "any" or (c.op in ("prefix", "suffix", "contains") and c.value == "") or (c.op == "wildcard" and c.value == "*")


def string_implies(s: Constraint, g: Constraint) -> bool:
    """Every string satisfying `s` satisfies `g` (one key; exact unless `s` is `!=`)."""
    if matches_every_string(g):
        return True
    if s.op == "=":
        return HOLDS[g.op](s.value, g.value)
    if g.op == "!=":
        return not HOLDS[s.op](g.value, s.value)  # the one string g excludes fails s
    if s.op in ("any", "!=") or g.op == "=":
        return False  # s allows infinitely many strings (or all but one); g allows one, or not all
    start, end = fixed_ends(s)
    w = cast(str, g.value)
    if g.op == "prefix":
        return start.startswith(w)
    if g.op == "suffix":
        return end.endswith(w)
    if g.op == "contains":
        return w in start or w in end or (s.op == "contains" and w in cast(str, s.value))
    left, _, right = w.partition("*")  # g is a wildcard: s's strings are at least len(start) + len(end) long
    return start.startswith(left) and end.endswith(right)


def implied(g: Constraint, specific: Sequence[Constraint], bounds: tuple | None = None) -> bool:
    """Every event matching the constraints `specific` (all on g's key) satisfies g (`bounds`: their
    `numeric_bounds`, if already known)."""
    if g.op == "any":
        return True
    if g.type in DOMAIN:
        low, high = bounds if bounds is not None else numeric_bounds(specific)
        if g.op == "!=":
            return not low <= g.value <= high or any(s.op == "!=" and s.value == g.value for s in specific)
        lo, hi = interval(g)
        return lo <= low and high <= hi
    if g.type == "bool":
        return bool_values(specific) <= bool_values([g])
    return any(string_implies(s, g) for s in specific)


def unsatisfiable(by_key: Mapping[tuple[str, str], Sequence[Constraint]]) -> bool:
    """Some numeric or bool key of a filter allows no value, so it matches no event."""
    for (_, type_), constraints in by_key.items():
        if type_ in DOMAIN:
            low, high = numeric_bounds(constraints)
            if low > high:
                return True
        elif type_ == "bool" and not bool_values(constraints):
            return True
    return False


def filter_covers(general: Subscription, specific: Subscription) -> bool:
    """DEF-SR-6's covering test: True only if every event matching `specific` matches `general`."""
    by_key = keyed(specific)
    return unsatisfiable(by_key) or covers_keyed(general, by_key, {})


def keyed(specific: Subscription) -> dict[tuple[str, str], list[Constraint]]:
    """`specific`'s constraints by key (name, type)."""
    by_key: dict[tuple[str, str], list[Constraint]] = {}
    for c in specific.constraints:
        by_key.setdefault((c.name, c.type), []).append(c)
    return by_key


def covers_keyed(general: Subscription, by_key: Mapping[tuple[str, str], Sequence[Constraint]], bounds: Mapping[tuple, tuple]) -> bool:
    """`filter_covers(general, specific)` for a satisfiable `specific` given as `keyed(specific)`, with the
    `numeric_bounds` of those of its keys that are known."""
    for g in general.constraints:
        key = (g.name, g.type)
        if key not in by_key or not implied(g, by_key[key], bounds.get(key)):
            return False
    return True


def keys_of(f: Subscription) -> frozenset[tuple[str, str]]:
    """The keys (name, type) `f` constrains: a filter covers a satisfiable one only if its keys are among the other's."""
    return frozenset((c.name, c.type) for c in f.constraints)


def covered_by_any(specific: Subscription, by_keys: dict[frozenset, dict[Subscription, None]]) -> bool:
    """Some filter of a set, grouped by `keys_of`, covers `specific` (`filter_covers`): only the groups whose keys
    are among `specific`'s are tried, and `specific`'s constraints are grouped once."""
    if not by_keys:
        return False
    by_key = keyed(specific)
    if unsatisfiable(by_key):
        return True
    mine = frozenset(by_key)
    bounds = {key: numeric_bounds(constraints) for key, constraints in by_key.items() if key[1] in DOMAIN}
    return any(keys <= mine and any(covers_keyed(g, by_key, bounds) for g in group) for keys, group in by_keys.items())
