"""DEF-SUM-2 and DEF-SUM-3, optimized: one normalized constraint per
(subscription, attribute key), and covering between normalized constraints.

Numeric keys normalize to a closed interval (lo, hi) (bounds may be ±inf);
string and bool keys to one constraint (op, value). Conformance checks both
functions against `subsum.model.summaries.abstraction`.
"""

from __future__ import annotations

import math

from subsum.core.types import OPERATORS, Subscription
from subsum.impl.matching.ops import HOLDS

INF = math.inf
NUMERIC = frozenset(("int", "float"))
OP_RANK = {op: i for i, op in enumerate(OPERATORS)}
_SELECTIVITY = {"=": 0, "wildcard": 1, "prefix": 2, "suffix": 2, "contains": 3, "any": 4}

Key = tuple  # (name, type)
Interval = tuple  # (lo, hi)
Pattern = tuple  # (op, value)


def row_order(c: Pattern) -> tuple:
    """The canonical order of string and bool constraints (by operator, then value)."""
    op, value = c
    return (OP_RANK[op], () if value is None else (value,))


def _interval(op: str, value) -> Interval:
    if op == "=":
        return (value, value)
    if op == "<" or op == "<=":
        return (-INF, value)
    if op == ">" or op == ">=":
        return (value, INF)
    return (-INF, INF)


def _numeric(constraints) -> Interval | None:
    lo, hi = -INF, INF
    for _, op, value in constraints:
        a, b = _interval(op, value)
        if a > lo:
            lo = a
        if b < hi:
            hi = b
    return None if lo > hi else (lo, hi)


def _bool(constraints) -> Pattern | None:
    allowed = {True, False}
    for _, op, value in constraints:
        if op == "=":
            allowed &= {value}
        elif op == "!=":
            allowed.discard(value)
    if not allowed:
        return None
    return ("any", None) if len(allowed) == 2 else ("=", allowed.pop())


def canonical_string(op: str, value) -> Pattern:
    """Constraints that mean the same get one name (DEF-SUM-2)."""
    if op == "!=" or (value == "" and op in ("prefix", "suffix", "contains")):
        return ("any", None)
    if op == "wildcard":
        left, _, right = value.partition("*")
        if not left and not right:
            return ("any", None)
        if not right:
            return ("prefix", left)
        if not left:
            return ("suffix", right)
    return (op, value)


def _string(constraints) -> Pattern | None:
    equal = {value for _, op, value in constraints if op == "="}
    if equal:
        if len(equal) > 1:
            return None
        (value,) = equal
        if all(HOLDS[op](value, w) for _, op, w in constraints):
            return ("=", value)
        return None
    best = None
    for _, op, value in constraints:
        c = canonical_string(op, value)
        rank = (_SELECTIVITY[c[0]], -len(c[1] or ""), row_order(c))
        if best is None or rank < best[0]:
            best = (rank, c)
    return best[1]


def abstraction(subscription: Subscription) -> dict[Key, object] | None:
    """DEF-SUM-2: key -> normalized constraint, or None if some key normalizes
    to the empty set (the subscription never matches)."""
    by_key: dict[Key, list] = {}
    for c in subscription.constraints:
        by_key.setdefault((c.name, c.type), []).append((c.type, c.op, c.value))
    result = {}
    for key in sorted(by_key):
        constraints = by_key[key]
        type_ = key[1]
        if type_ in NUMERIC:
            n = _numeric(constraints)
        elif type_ == "bool":
            n = _bool(constraints)
        else:
            n = _string(constraints)
        if n is None:
            return None
        result[key] = n
    return result


def pattern_covers(general: Pattern, specific: Pattern) -> bool:
    """DEF-SUM-3 for string and bool constraints: seed 000's string rules and
    seed 001's identical-constraint and `any` rules (DEF-COV-4), restricted
    to the normalized operators (=, prefix, suffix, contains, wildcard, any)."""
    gop, g = general
    sop, s = specific
    if gop == "any":
        return True
    if gop == sop and g == s:
        return True
    if sop == "any":
        return False
    if gop == "=":
        return False
    if gop == "prefix":
        if sop == "=" or sop == "prefix":
            return s.startswith(g)
        return sop == "wildcard" and s.partition("*")[0].startswith(g)
    if gop == "suffix":
        if sop == "=" or sop == "suffix":
            return s.endswith(g)
        return sop == "wildcard" and s.partition("*")[2].endswith(g)
    if gop == "contains":
        if sop == "wildcard":
            left, _, right = s.partition("*")
            return g in left or g in right
        return g in s
    # gop == "wildcard"
    left, _, right = g.partition("*")
    if sop == "=":
        return len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right)
    if sop == "wildcard":
        l2, _, r2 = s.partition("*")
        return l2.startswith(left) and r2.endswith(right)
    if sop == "prefix":
        return right == "" and s.startswith(left)
    if sop == "suffix":
        return left == "" and s.endswith(right)
    return False


def interval_covers(general: Interval, specific: Interval) -> bool:
    return general[0] <= specific[0] and specific[1] <= general[1]
