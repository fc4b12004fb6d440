"""Subscriptions, events and match results as JSON (spec/formats.md): the
readers, and beside them the writers of the same forms.

Every error is an InputError naming the file, the line and the field.
Readers validate a whole file before returning anything; files are
written by `subsum.core.outputs`, atomically.

>>> from subsum.core.filters import parse_filter
>>> subscription_to_json("s1", parse_filter("x > 1"))
{'id': 's1', 'constraints': [{'name': 'x', 'type': 'int', 'op': '>', 'value': 1}]}
>>> subscription_from_json(loads_json('{"id": "s1", "filter": "x > 1"}')) == ("s1", parse_filter("x > 1"))
True
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar, cast

import attrs

from subsum.core.errors import InputError
from subsum.core.filters import FilterError, format_filter, parse_filter
from subsum.core.inputs import read_input
from subsum.core.types import (
    Attribute,
    Constraint,
    Event,
    InvalidValue,
    Scalar,
    Subscription,
    TYPES,
    sorted_constraints,
    type_of_python_value,
)


@attrs.frozen
class NamedSubscription:
    id: str
    subscription: Subscription


@attrs.frozen
class NamedEvent:
    id: str
    event: Event


class JsonObject(dict[str, Any]):
    """A JSON object that remembers keys given more than once."""

    duplicates: tuple[str, ...] = ()


def _object_pairs(pairs: list[tuple[str, object]]) -> JsonObject:
    obj = JsonObject()
    dups = []
    for key, value in pairs:
        if key in obj:
            dups.append(key)
        obj[key] = value
    obj.duplicates = tuple(dups)
    return obj


@attrs.frozen
class _NonFinite:
    token: str


@attrs.frozen
class _HugeInt:
    """An integer literal longer than Python converts (4,300 digits): out of every range."""

    digits: int


def _parse_int(text: str) -> int | _HugeInt:
    try:
        return int(text)
    except ValueError:
        return _HugeInt(len(text.lstrip("-")))


def loads_json(text: str) -> object:
    return json.loads(text, object_pairs_hook=_object_pairs, parse_constant=_NonFinite, parse_int=_parse_int)


UTF8_BOM = b"\xef\xbb\xbf"


def file_lines(raw: bytes) -> list[bytes]:
    """The lines of a JSONL file, split on \\n. A UTF-8 byte order mark at the
    very start is dropped, as Hadoop's line reader (and so Spark) drops it;
    anywhere else it is not whitespace and the line is malformed JSON."""
    return (raw[len(UTF8_BOM):] if raw.startswith(UTF8_BOM) else raw).split(b"\n")


class RecordError(Exception):
    """One bad record: the field at fault (None: the whole line) and why.
    The reader adds the file and line to make an InputError."""

    def __init__(self, field: str | None, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


RecordError = RecordError


def check_keys(obj: JsonObject, where: str | None, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    def sub(key: str) -> str:
        return f"{where}.{key}" if where else key

    for key in obj.duplicates:
        raise RecordError(sub(key), "given more than once")
    for key in required:
        if key not in obj:
            raise RecordError(sub(key), "missing")
    for key in obj:
        if key not in required and key not in optional:
            expected = ", ".join(required + optional)
            raise RecordError(sub(key), f"unknown field; expected {expected}")


def _scalar(value: object, field: str) -> object:
    if isinstance(value, _NonFinite):
        raise RecordError(field, f"{value.token} is not allowed; values must be finite numbers")
    if isinstance(value, _HugeInt):
        raise RecordError(field, f"an integer of {value.digits} digits is out of range; ints are 64-bit, floats finite")
    if isinstance(value, float) and math.isinf(value):
        raise RecordError(field, f"{value} is out of the float range; infinities are not allowed")
    if isinstance(value, (dict, list)) or value is None:
        raise RecordError(field, f"expected an int, float, string or bool, got {json_kind(value)}")
    return value


def json_scalar(value: object, field: str) -> object:
    """A JSON value that must be a scalar: NaN, Infinity, out-of-range numbers,
    objects, arrays and null raise RecordError naming `field`."""
    return _scalar(value, field)


def json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, (_NonFinite, _HugeInt)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type_of_python_value(value)


def _typed(type_: object, value: object, field: str, type_field: str) -> object:
    """A value under an explicit type: int given for float becomes float."""
    if type_ not in TYPES:
        raise RecordError(type_field, f"unknown type {type_!r}; expected one of {', '.join(TYPES)}")
    if type_ == "float" and type(value) is int:
        try:
            as_float = float(value)
        except OverflowError:
            raise RecordError(field, f"an integer of {len(str(abs(value)))} digits is out of the float range") from None
        if int(as_float) != value:
            raise RecordError(field, f"{value} is not exactly representable as a float")
        return as_float
    return value


def _id(obj: JsonObject, field: str = "id") -> str:
    value = obj[field]
    if type(value) is not str or value == "":
        raise RecordError(field, f"must be a non-empty string, got {json_kind(value) if not isinstance(value, str) else 'an empty string'}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no writer could put it out
        raise RecordError(field, f"is not valid Unicode (lone surrogate at index {exc.start})") from None
    return value


def _constraint(obj: object, field: str) -> Constraint:
    if not isinstance(obj, dict):
        raise RecordError(field, f"a constraint must be an object, got {json_kind(obj)}")
    obj = cast(JsonObject, obj)  # every object a reader decodes is one
    check_keys(obj, field, ("name", "type", "op"), ("value",))
    op = obj["op"]
    value = obj.get("value")
    if op != "any":
        if "value" not in obj or value is None:
            raise RecordError(f"{field}.value", f"missing; operator {op!r} needs a value")
        value = _typed(obj["type"], _scalar(value, f"{field}.value"), f"{field}.value", f"{field}.type")
    try:
        return Constraint(name=obj["name"], type=obj["type"], op=op, value=value)
    except InvalidValue as exc:
        raise RecordError(f"{field}.{exc.part}", str(exc)) from None


def subscription_from_json(obj: JsonObject) -> tuple[str, Subscription]:
    check_keys(obj, None, ("id",), ("filter", "constraints"))
    sid = _id(obj)
    if ("filter" in obj) == ("constraints" in obj):
        raise RecordError(None, "give exactly one of 'filter' or 'constraints'")
    if "filter" in obj:
        text = obj["filter"]
        if type(text) is not str:
            raise RecordError("filter", f"must be a string, got {json_kind(text)}")
        try:
            return sid, parse_filter(text)
        except FilterError as exc:
            raise RecordError("filter", str(exc)) from None
    items = obj["constraints"]
    if not isinstance(items, list):
        raise RecordError("constraints", f"must be an array, got {json_kind(items)}")
    return sid, Subscription(frozenset(_constraint(c, f"constraints[{i}]") for i, c in enumerate(items)))


def event_from_json(obj: JsonObject) -> tuple[str, Event]:
    check_keys(obj, None, ("id", "attributes"))
    eid = _id(obj)
    attrs_obj = obj["attributes"]
    if not isinstance(attrs_obj, dict):
        raise RecordError("attributes", f"must be an object, got {json_kind(attrs_obj)}")
    attrs_obj = cast(JsonObject, attrs_obj)
    for name in attrs_obj.duplicates:
        raise RecordError(f"attributes.{name}", "duplicate attribute name; an event holds each name at most once")
    attributes = []
    for name, raw in attrs_obj.items():
        field = f"attributes.{name}"
        if isinstance(raw, dict):
            check_keys(cast(JsonObject, raw), field, ("type", "value"))
            value = _typed(raw["type"], _scalar(raw["value"], f"{field}.value"), f"{field}.value", f"{field}.type")
            type_ = raw["type"]
            value_field = f"{field}.value"
        else:
            value = _scalar(raw, field)
            type_ = type_of_python_value(value)
            value_field = field
        try:
            attributes.append(Attribute(name=name, type=type_, value=cast(Scalar, value)))
        except InvalidValue as exc:
            raise RecordError(field if exc.part == "name" else value_field, str(exc)) from None
    return eid, Event(tuple(attributes))


def decode_line(line: bytes) -> JsonObject | None:
    """One line of a JSONL file as a JSON object, or None for a blank line.
    Raises RecordError (field None) for bytes that are not UTF-8, malformed
    JSON, or JSON that is not an object."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(None, f"not UTF-8 (byte {exc.start + 1} of the line)") from None
    if not text.strip():
        return None
    try:
        obj = loads_json(text)
    except json.JSONDecodeError as exc:
        raise RecordError(None, f"malformed JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise RecordError(None, "malformed JSON: nested too deeply") from None
    if not isinstance(obj, dict):
        raise RecordError(None, f"expected a JSON object, got {json_kind(obj)}")
    return cast(JsonObject, obj)


def parse_subscription_line(line: bytes) -> tuple[str, Subscription] | None:
    """One JSONL line of a subscriptions file: (id, subscription), or None
    for a blank line. Raises RecordError naming the field."""
    obj = decode_line(line)
    return None if obj is None else subscription_from_json(obj)


def parse_event_line(line: bytes) -> tuple[str, Event] | None:
    """One JSONL line of an events file: (id, event), or None for a blank
    line. Raises RecordError naming the field."""
    obj = decode_line(line)
    return None if obj is None else event_from_json(obj)


def _records(path: Path, kind: str) -> Iterator[tuple[int, JsonObject]]:
    if path.suffix == ".parquet":
        raise InputError(str(path), None, None, "Parquet input is read by the Spark engine; use --engine spark, or .jsonl")
    return _records_of(str(path), file_lines(read_input(path)), kind)


def _records_of(name: str, lines: Iterable[bytes], kind: str) -> Iterator[tuple[int, JsonObject]]:
    found = False
    for number, line in enumerate(lines, start=1):
        try:
            obj = decode_line(line)
        except RecordError as exc:
            raise InputError(name, number, None, exc.message) from None
        if obj is None:
            continue
        found = True
        yield number, obj
    if not found:
        raise InputError(name, None, None, f"the file is empty; expected one {kind} per line")


T = TypeVar("T")


def _read_records(name: str, records: Iterator[tuple[int, JsonObject]], kind: str,
                  parse: Callable[[JsonObject], tuple[str, T]]) -> list[tuple[str, T]]:
    out = []
    first_line: dict[str, int] = {}
    for number, obj in records:
        try:
            ident, value = parse(obj)
        except RecordError as exc:
            raise InputError(name, number, exc.field, exc.message) from None
        if ident in first_line:
            raise InputError(name, number, "id", f"duplicate {kind} id {ident!r} (first on line {first_line[ident]})")
        first_line[ident] = number
        out.append((ident, value))
    return out


def _read(path: Path | str, kind: str, parse: Callable[[JsonObject], tuple[str, T]]) -> list[tuple[str, T]]:
    return _read_records(str(path), _records(Path(path), kind), kind, parse)


def read_subscriptions(path: Path | str) -> list[NamedSubscription]:
    """Read a JSONL file of subscriptions; raise InputError on any bad line."""
    return [NamedSubscription(i, s) for i, s in _read(path, "subscription", subscription_from_json)]


def read_subscription_lines(name: str, lines: Iterable[bytes]) -> list[NamedSubscription]:
    """The subscriptions of a file read elsewhere (the Spark engine's URIs),
    given as its lines; InputError names `name`."""
    records = _records_of(name, lines, "subscription")
    return [NamedSubscription(i, s) for i, s in _read_records(name, records, "subscription", subscription_from_json)]


def read_events(path: Path | str) -> list[NamedEvent]:
    """Read a JSONL file of events; raise InputError on any bad line."""
    return [NamedEvent(i, e) for i, e in _read(path, "event", event_from_json)]


# --- writers of the same forms -----------------------------------------------------------

def constraint_to_json(c: Constraint) -> dict[str, Any]:
    """A constraint's object form; `any` has no value."""
    return {"name": c.name, "type": c.type, "op": c.op, **({} if c.op == "any" else {"value": c.value})}


def filter_to_json(s: Subscription) -> list[dict[str, Any]]:
    """A filter as its constraints, in the normal form's order (DEF-DATA-8)."""
    return [constraint_to_json(c) for c in sorted_constraints(s)]


def subscription_to_json(sid: str, s: Subscription, as_filter_text: bool = False) -> dict[str, Any]:
    """A subscriptions line's object: `constraints`, or with `as_filter_text`
    the `filter` text (the empty subscription has only the constraints form)."""
    if as_filter_text and s.constraints:
        return {"id": sid, "filter": format_filter(s)}
    return {"id": sid, "constraints": filter_to_json(s)}


def filter_from_json(constraints: object) -> Subscription:
    """`filter_to_json`'s form read back by the subscriptions reader (its
    checks, its errors: a RecordError naming the item at fault).

    >>> filter_from_json([{"name": "x", "type": "int", "op": ">", "value": 1}]) == parse_filter("x > 1")
    True
    """
    items = loads_json(json.dumps(constraints))  # objects that remember repeated keys, as the reader's do
    return subscription_from_json(JsonObject(id="f", constraints=items))[1]


def event_to_json(eid: str, e: Event) -> dict[str, Any]:
    """An events line's object; a float keeps its fraction or exponent, so it reads back as a float."""
    return {"id": eid, "attributes": {a.name: a.value for a in e.attributes}}


def match_result_lines(results: Iterable[tuple[str, Iterable[str]]]) -> Iterator[str]:
    """One line per event: {"event": id, "subscriptions": [sorted ids]}."""
    for event_id, sub_ids in results:
        yield json.dumps({"event": event_id, "subscriptions": sorted(sub_ids)}, ensure_ascii=False)
