"""The abstraction of a subscription, the reference version (spec/04-summaries.md
DEF-SUM-1..3).

Before a subscription enters a summary, its constraints on each attribute key
are normalized to one constraint: an `Interval` for int and float keys, a
canonical `Constraint` for string and bool keys (DEF-SUM-2). This module holds
the attribute keys and schema (DEF-SUM-1), that normalization, and when a
value satisfies and a normalized constraint covers another (DEF-SUM-3). The
summary built from them is `subsum.model.summaries.summary`; the optimized
normalization is `subsum.impl.summary.normalize`.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence, Union, cast

import attrs

from subsum.core.types import Attribute, Constraint, Scalar, Subscription, constraint_sort_key
from subsum.model.covering import covers_by_rules
from subsum.model.semantics import operator_holds

NUMERIC_TYPES = ("int", "float")
INF = math.inf

#: DEF-SUM-1: an attribute key is (name, type).
Key = tuple[str, str]


@attrs.frozen(order=True)
class Interval:
    """DEF-SUM-2: the closed interval [lo, hi]; lo may be -inf, hi +inf."""

    lo: Union[int, float]
    hi: Union[int, float]

    def holds(self, value: Union[int, float]) -> bool:
        return self.lo <= value <= self.hi


#: A normalized constraint: an Interval for int and float, a Constraint for string and bool.
Normalized = Union[Interval, Constraint]


def key_of(c: Union[Constraint, Attribute]) -> Key:
    """DEF-SUM-1: the attribute key of a constraint or an attribute.

    >>> key_of(Constraint("price", "float", "<", 8.70)), key_of(Attribute("price", "float", 8.40))
    (('price', 'float'), ('price', 'float'))
    """
    return (c.name, c.type)


def schema_of(subscriptions: Iterable[Subscription]) -> tuple[Key, ...]:
    """DEF-SUM-1: the sorted attribute keys that the subscriptions constrain.
    The position of a key in the schema is its attribute index (c3 bit).

    >>> from subsum.core.filters import parse_filter
    >>> schema_of([parse_filter('symbol = "OTE" and price = 8.50'), parse_filter("price < 9.0 and volume > 1000")])
    (('price', 'float'), ('symbol', 'string'), ('volume', 'int'))
    """
    return tuple(sorted({key_of(c) for s in subscriptions for c in s.constraints}))


# --- DEF-SUM-2: the abstraction of one subscription -------------------------

def constraint_interval(c: Constraint) -> Interval:
    """DEF-SUM-2 (numeric): the closed interval of one constraint. Strict
    bounds are closed, `!=` and `any` are the whole line: over-approximations.

    >>> constraint_interval(Constraint("price", "float", "<", 8.70)), constraint_interval(Constraint("x", "int", "!=", 3))
    (Interval(lo=-inf, hi=8.7), Interval(lo=-inf, hi=inf))
    """
    v = cast(float, c.value)  # a number, or None under `any` (not read then)
    if c.op == "=":
        return Interval(v, v)
    if c.op in ("<", "<="):
        return Interval(-INF, v)
    if c.op in (">", ">="):
        return Interval(v, INF)
    assert c.op in ("!=", "any"), c.op
    return Interval(-INF, INF)


def normalize_numeric(constraints: Sequence[Constraint]) -> Interval | None:
    """DEF-SUM-2 (numeric): the intersection of the constraints' intervals,
    or None if it is empty.

    >>> normalize_numeric([Constraint("price", "float", ">=", 8.45), Constraint("price", "float", "<=", 8.60)])
    Interval(lo=8.45, hi=8.6)
    >>> normalize_numeric([Constraint("x", "int", ">", 5), Constraint("x", "int", "<", 2)]) is None
    True
    """
    lo = max(constraint_interval(c).lo for c in constraints)
    hi = min(constraint_interval(c).hi for c in constraints)
    if lo > hi:
        return None
    return Interval(lo, hi)


def normalize_bool(constraints: Sequence[Constraint]) -> Constraint | None:
    """DEF-SUM-2 (bool): the set of allowed values, written `= v` or `any`;
    None if no value is allowed. Exact.

    >>> normalize_bool([Constraint("b", "bool", "!=", True)])
    Constraint(name='b', type='bool', op='=', value=False)
    >>> normalize_bool([Constraint("b", "bool", "=", True), Constraint("b", "bool", "=", False)]) is None
    True
    """
    allowed = {True, False}
    for c in constraints:
        if c.op == "=":
            allowed &= {c.value}
        elif c.op == "!=":
            allowed -= {c.value}
    name = constraints[0].name
    if not allowed:
        return None
    if allowed == {True, False}:
        return Constraint(name, "bool", "any")
    return Constraint(name, "bool", "=", allowed.pop())


def canonical_string_constraint(c: Constraint) -> Constraint:
    """DEF-SUM-2 (string): one name for constraints that mean the same:
    `prefix ""`, `suffix ""`, `contains ""`, `wildcard "*"` and `!=` become
    `any` (`!=` over-approximated); `wildcard "l*"` becomes `prefix l` and
    `wildcard "*r"` becomes `suffix r`.

    >>> canonical_string_constraint(Constraint("s", "string", "wildcard", "OT*"))
    Constraint(name='s', type='string', op='prefix', value='OT')
    >>> canonical_string_constraint(Constraint("s", "string", "suffix", "")).op
    'any'
    """
    if c.op == "!=" or (c.op in ("prefix", "suffix", "contains") and c.value == ""):
        return Constraint(c.name, "string", "any")
    if c.op == "wildcard":
        left, _, right = cast(str, c.value).partition("*")
        if left == "" and right == "":
            return Constraint(c.name, "string", "any")
        if right == "":
            return Constraint(c.name, "string", "prefix", left)
        if left == "":
            return Constraint(c.name, "string", "suffix", right)
    return c


#: DEF-SUM-2: which string constraint represents a conjunction (lower is preferred).
SELECTIVITY = {"=": 0, "wildcard": 1, "prefix": 2, "suffix": 2, "contains": 3, "any": 4}


def representative(c: Constraint) -> tuple[Any, ...]:
    """DEF-SUM-2: the order in which a conjunct is chosen to stand for the
    conjunction: most selective operator, then longest value, then the
    canonical constraint order.

    >>> prefix, contains = Constraint("s", "string", "prefix", "OT"), Constraint("s", "string", "contains", "OTER")
    >>> min([contains, prefix], key=representative) == prefix  # the operator first, then the length
    True
    """
    length = 0 if c.value is None else len(cast(str, c.value))
    return (SELECTIVITY[c.op], -length, constraint_sort_key(c))


def normalize_string(constraints: Sequence[Constraint]) -> Constraint | None:
    """DEF-SUM-2 (string): with an `=` conjunct the result is exact (`= s`, or
    None if s fails another conjunct); otherwise the single conjunct that
    `representative` puts first, in canonical form, which contains the
    conjunction.

    >>> from subsum.core.filters import parse_filter
    >>> normalize_string(list(parse_filter('s prefix "OT" and s contains "E"').constraints))
    Constraint(name='s', type='string', op='prefix', value='OT')
    >>> normalize_string(list(parse_filter('s = "OTE" and s prefix "OT"').constraints))
    Constraint(name='s', type='string', op='=', value='OTE')
    >>> normalize_string(list(parse_filter('s = "OTE" and s prefix "X"').constraints)) is None
    True
    """
    equalities = {c.value for c in constraints if c.op == "="}
    if equalities:
        if len(equalities) > 1:
            return None
        value = cast(str, equalities.pop())
        if all(operator_holds(c.op, value, c.value) for c in constraints):
            return Constraint(constraints[0].name, "string", "=", value)
        return None
    candidates = [canonical_string_constraint(c) for c in constraints]
    return min(candidates, key=representative)


def normalize_constraints(constraints: Sequence[Constraint]) -> Normalized | None:
    """DEF-SUM-2: the one normalized constraint of a (subscription, key) pair.

    >>> from subsum.core.filters import parse_filter
    >>> normalize_constraints(list(parse_filter("x > 1 and x <= 5").constraints))
    Interval(lo=1, hi=5)
    """
    type_ = constraints[0].type
    if type_ in NUMERIC_TYPES:
        return normalize_numeric(constraints)
    if type_ == "bool":
        return normalize_bool(constraints)
    return normalize_string(constraints)


def abstraction(subscription: Subscription) -> dict[Key, Normalized] | None:
    """DEF-SUM-2: key -> normalized constraint, one per key the subscription
    constrains; None if some key normalizes to the empty set (the
    subscription can never match and is left out of the summary).

    >>> from subsum.core.filters import parse_filter
    >>> abstraction(parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60'))
    {('price', 'float'): Interval(lo=8.45, hi=8.6), ('symbol', 'string'): Constraint(name='symbol', type='string', op='prefix', value='OTE')}
    >>> abstraction(parse_filter("x > 5 and x < 2")) is None
    True
    """
    by_key: dict[Key, list[Constraint]] = {}
    for c in sorted(subscription.constraints, key=constraint_sort_key):
        by_key.setdefault(key_of(c), []).append(c)
    result = {}
    for key, constraints in sorted(by_key.items()):
        normalized = normalize_constraints(constraints)
        if normalized is None:
            return None
        result[key] = normalized
    return result


def normalized_holds(n: Normalized, value: Scalar) -> bool:
    """DEF-SUM-3: a value satisfies a normalized constraint.

    >>> normalized_holds(Interval(8.45, 8.60), 8.50), normalized_holds(Constraint("s", "string", "prefix", "OT"), "TEL")
    (True, False)
    """
    if isinstance(n, Interval):
        return n.holds(cast(float, value))
    return operator_holds(n.op, value, n.value)


def normalized_covers(general: Normalized, specific: Normalized) -> bool:
    """DEF-SUM-3: interval containment for numeric keys; the proved
    syntactic rules (DEF-COV-4) for string and bool keys.

    >>> normalized_covers(Interval(1, 5), Interval(2, 3)), normalized_covers(Interval(2, 3), Interval(1, 5))
    (True, False)
    >>> normalized_covers(Constraint("s", "string", "prefix", "OT"), Constraint("s", "string", "=", "OTE"))
    True
    """
    if isinstance(general, Interval):
        specific = cast(Interval, specific)  # normalized constraints of one key
        return general.lo <= specific.lo and specific.hi <= general.hi
    return covers_by_rules(general, cast(Constraint, specific))
