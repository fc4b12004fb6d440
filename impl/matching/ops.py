"""Operator evaluation for the engines: op(v, w), the attribute value on the
left and the constraint value on the right (DEF-DATA-6). A flat table of
functions, so that an engine looks the operator up once per constraint;
and the operators' integer codes, which the columnar engines store."""

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

#: The operators compared by rank key (DEF-MATCH-5 step 1), the string patterns, and `any`.
RANKED_OPS = ("=", "!=", "<", "<=", ">", ">=")
PATTERN_OPS = ("prefix", "suffix", "contains", "wildcard")
#: Each operator's code in the columnar engines' arrays: = != < <= > >= are 0 … 5, the patterns 6 … 9, `any` 10.
OP_CODE = {op: i for i, op in enumerate(RANKED_OPS + PATTERN_OPS + ("any",))}
OP_NAME = tuple(OP_CODE)
ANY = OP_CODE["any"]
