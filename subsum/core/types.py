"""The value types of the data model (spec/01-data-model.md).

These frozen attrs classes are shared by `subsum.model` and `subsum.impl`
(`subsum.core` is the one layer both may import; tests/test_layers.py checks
the layering). Their validators enforce DEF-DATA-1 .. DEF-DATA-7, so an
invalid attribute, constraint, event or subscription cannot be built. They carry no matching semantics: those are in
`subsum.model.semantics` (reference) and `subsum.impl` (optimized).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Union

import attrs

from subsum.core.errors import SubsumError

Scalar = Union[int, float, str, bool]

#: DEF-DATA-1: the four types. int and float are distinct types.
TYPES: tuple[str, ...] = ("int", "float", "string", "bool")

#: DEF-DATA-2: int is a signed 64-bit integer.
INT_MIN: int = -(2**63)
INT_MAX: int = 2**63 - 1

#: DEF-DATA-5: the operators allowed on each type.
OPS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "int": ("=", "!=", "<", "<=", ">", ">=", "any"),
    "float": ("=", "!=", "<", "<=", ">", ">=", "any"),
    "string": ("=", "!=", "prefix", "suffix", "contains", "wildcard", "any"),
    "bool": ("=", "!=", "any"),
}

#: Every operator, in the canonical order used when normalizing.
OPERATORS: tuple[str, ...] = (
    "=", "!=", "<", "<=", ">", ">=", "prefix", "suffix", "contains", "wildcard", "any",
)


class InvalidValue(SubsumError, ValueError):
    """Raised when a value, attribute, constraint, event or subscription
    would violate the data model. The message names what is wrong; the I/O
    layer adds the file, line and field. `part` says which component of the
    value is at fault: "name", "type", "op" or "value"."""

    def __init__(self, message: str, part: str = "value"):
        super().__init__(message)
        self.part = part


def type_of_python_value(value: object) -> str:
    """The data-model type that a Python (JSON-decoded) value denotes."""
    if type(value) is bool:
        return "bool"
    if type(value) is int:
        return "int"
    if type(value) is float:
        return "float"
    if type(value) is str:
        return "string"
    raise InvalidValue(f"unsupported value {value!r} of Python type {type(value).__name__}")


def _check_text(what: str, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidValue(
            f"{what} is not valid Unicode (lone surrogate at index {exc.start})",
            "name" if what == "name" else "value",
        ) from None


def check_value(type_: str, value: object) -> None:
    """DEF-DATA-2: raise InvalidValue unless `value` lies in the domain of `type_`."""
    if type_ not in TYPES:
        raise InvalidValue(f"unknown type {type_!r}; expected one of {', '.join(TYPES)}", "type")
    if type_ == "int":
        if type(value) is not int:
            raise InvalidValue(f"int value must be an integer, got {_describe(value)}")
        if not INT_MIN <= value <= INT_MAX:
            raise InvalidValue(
                f"int value {value} is outside the 64-bit range [{INT_MIN}, {INT_MAX}]"
            )
    elif type_ == "float":
        if type(value) is not float:
            raise InvalidValue(f"float value must be a float, got {_describe(value)}")
        if math.isnan(value):
            raise InvalidValue("float value is NaN; NaN is not allowed")
        if math.isinf(value):
            raise InvalidValue(f"float value is {value}; infinities are not allowed")
    elif type_ == "string":
        if type(value) is not str:
            raise InvalidValue(f"string value must be a string, got {_describe(value)}")
        _check_text("string value", value)
    else:
        if type(value) is not bool:
            raise InvalidValue(f"bool value must be true or false, got {_describe(value)}")


def _describe(value: object) -> str:
    if type(value) is bool:
        return "a bool"
    if type(value) is int:
        return f"the integer {value}"
    if type(value) is float:
        return f"the float {value!r}"
    if type(value) is str:
        return f"the string {value!r}"
    if value is None:
        return "null"
    return f"{type(value).__name__} {value!r}"


def normalize_scalar(type_: str, value: Scalar) -> Scalar:
    """DEF-DATA-2: -0.0 and +0.0 are one float value, stored as +0.0."""
    if type_ == "float" and value == 0.0:
        return 0.0
    return value


def check_name(name: object) -> None:
    """DEF-DATA-3: a name is a non-empty string of valid Unicode."""
    if type(name) is not str:
        raise InvalidValue(f"name must be a string, got {_describe(name)}", "name")
    if name == "":
        raise InvalidValue("name must not be empty", "name")
    _check_text("name", name)


def split_wildcard(pattern: str) -> tuple[str, str]:
    """The (left, right) parts of a wildcard pattern `l*r` (DEF-DATA-6)."""
    left, star, right = pattern.partition("*")
    assert star == "*" and "*" not in right, f"not a wildcard pattern: {pattern!r}"
    return left, right


def _validate_attribute(instance: "Attribute", _attr: object, _value: Scalar) -> None:
    check_name(instance.name)
    check_value(instance.type, instance.value)


@attrs.frozen
class Attribute:
    """DEF-DATA-3: a typed, named value ⟨type, name, value⟩ (seed 001 Def 1)."""

    name: str
    type: str
    value: Scalar = attrs.field(validator=_validate_attribute)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "value", normalize_scalar(self.type, self.value))


def _validate_constraint(instance: "Constraint", _attr: object, _value: Scalar | None) -> None:
    check_name(instance.name)
    if instance.type not in TYPES:
        raise InvalidValue(f"unknown type {instance.type!r}; expected one of {', '.join(TYPES)}", "type")
    if instance.op not in OPERATORS:
        raise InvalidValue(f"unknown operator {instance.op!r}; expected one of {', '.join(OPERATORS)}", "op")
    if instance.op not in OPS_BY_TYPE[instance.type]:
        raise InvalidValue(
            f"operator {instance.op!r} does not apply to type {instance.type}; "
            f"{instance.type} allows {', '.join(OPS_BY_TYPE[instance.type])}",
            "op",
        )
    if instance.op == "any":
        if instance.value is not None:
            raise InvalidValue(f"operator 'any' takes no value, got {_describe(instance.value)}")
        return
    check_value(instance.type, instance.value)
    if instance.op == "wildcard" and isinstance(instance.value, str) and instance.value.count("*") != 1:
        raise InvalidValue(
            f"wildcard pattern {instance.value!r} must hold exactly one '*', "
            f"it holds {instance.value.count('*')}"
        )


@attrs.frozen
class Constraint:
    """DEF-DATA-5: ⟨type, name, op, value⟩ (seed 001 Def 2). `value` is None for `any`."""

    name: str
    type: str
    op: str
    value: Scalar | None = attrs.field(default=None, validator=_validate_constraint)

    def __attrs_post_init__(self) -> None:
        if self.value is not None:
            object.__setattr__(self, "value", normalize_scalar(self.type, self.value))


def _sorted_attributes(attributes: Iterable[Attribute]) -> tuple[Attribute, ...]:
    return tuple(sorted(attributes, key=lambda a: a.name))


def _validate_event(instance: "Event", _attr: object, attributes: tuple[Attribute, ...]) -> None:
    seen: set[str] = set()
    for attribute in attributes:
        if not isinstance(attribute, Attribute):
            raise InvalidValue(f"an event holds Attribute values, got {attribute!r}")
        if attribute.name in seen:
            raise InvalidValue(f"duplicate attribute name {attribute.name!r} in one event", "name")
        seen.add(attribute.name)


@attrs.frozen
class Event:
    """DEF-DATA-4: a Map from names to typed values; each name at most once."""

    attributes: tuple[Attribute, ...] = attrs.field(
        default=(), converter=_sorted_attributes, validator=_validate_event
    )

    def get(self, name: str) -> Attribute | None:
        for attribute in self.attributes:
            if attribute.name == name:
                return attribute
        return None


def _validate_subscription(instance: "Subscription", _attr: object, constraints: frozenset[Constraint]) -> None:
    for constraint in constraints:
        if not isinstance(constraint, Constraint):
            raise InvalidValue(f"a subscription holds Constraint values, got {constraint!r}")


def _frozenset(constraints: Iterable[Constraint]) -> frozenset[Constraint]:
    return frozenset(constraints)


@attrs.frozen(cache_hash=True)  # hashed at every table lookup; the hash is dropped on pickle and copy
class Subscription:
    """DEF-DATA-7: a conjunction of constraints, held as a set so duplicates
    collapse. Several constraints on one name are allowed. The empty
    subscription is allowed and matches every event (DEF-MATCH-2)."""

    constraints: frozenset[Constraint] = attrs.field(
        default=frozenset(), converter=_frozenset, validator=_validate_subscription
    )


_TYPE_RANK = {t: i for i, t in enumerate(TYPES)}
_OP_RANK = {op: i for i, op in enumerate(OPERATORS)}


def constraint_sort_key(c: Constraint) -> tuple[Any, ...]:
    """The canonical order of constraints: by name, type, operator, value."""
    value_key = () if c.value is None else (c.value,)
    return (c.name, _TYPE_RANK[c.type], _OP_RANK[c.op], value_key)


def sorted_constraints(subscription: Subscription) -> list[Constraint]:
    return sorted(subscription.constraints, key=constraint_sort_key)


def subscription_sort_key(subscription: Subscription) -> tuple[Any, ...]:
    """A canonical order of subscriptions: by their constraints in canonical
    order. Unlike `repr`, which lists a frozenset in hash order, it is the
    same in every process (PYTHONHASHSEED)."""
    return tuple(constraint_sort_key(c) for c in sorted_constraints(subscription))
