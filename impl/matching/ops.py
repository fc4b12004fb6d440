"""Operator evaluation for the engines: op(v, w), the attribute value on the
left and the constraint value on the right (DEF-DATA-6). A flat table of
functions, so that an engine looks the operator up once per constraint."""

from __future__ import annotations

import operator
from typing import Any, Callable


def _wildcard(v: str, pattern: str) -> bool:
    left, _, right = pattern.partition("*")
    return len(v) >= len(left) + len(right) and v.startswith(left) and v.endswith(right)


HOLDS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "prefix": lambda v, w: v.startswith(w),
    "suffix": lambda v, w: v.endswith(w),
    "contains": lambda v, w: w in v,
    "wildcard": _wildcard,
    "any": lambda v, w: True,
}

#: Type, name, operator, value: how every engine keys a distinct constraint
#: (seed 001 Theorem 2: syntactically equal constraints are equal).
ConstraintKey = tuple  # (type, name, op, value)
