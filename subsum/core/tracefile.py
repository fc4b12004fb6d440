"""Reading the simulator's trace file (spec/05-network.md DEF-NET-9).

Shared by the reference trace checker (`subsum.model.trace`) and the Spark
one (`subsum.impl.spark.trace`), as the value types are: one parser, so the
two checkers can only differ in what they conclude, never in what they read.

`parse_trace_line(line)` returns a `TraceRecord`, or None for a blank line,
and raises `RecordError` naming the field.
"""

from __future__ import annotations

import math
from os import PathLike
from typing import Any

import attrs

from subsum.core.filters import FilterError, format_filter, parse_filter
from subsum.core.errors import InputError
from subsum.core.inputs import read_input
from subsum.core.jsonio import RecordError, check_keys, event_from_json, json_kind, JsonObject, decode_line, file_lines
from subsum.core.types import Event, Subscription

#: The fields of each kind of record, after "time" and "kind" (DEF-NET-9).
FIELDS: dict[str, tuple[str, ...]] = {
    "subscribe": ("client", "broker", "filter"),
    "unsubscribe": ("client", "broker", "filter"),
    "publish": ("event", "client", "broker", "attributes"),
    "deliver": ("event", "client", "broker"),
    "link": ("a", "b", "up"),
    "crash": ("broker",),
    "leave": ("broker",),
    "join": ("broker",),
}


@attrs.frozen
class TraceRecord:
    time: float
    kind: str
    client: int | None = None
    broker: int | None = None
    event: int | None = None
    filter: Subscription | None = None  # subscribe / unsubscribe
    filter_text: str | None = None  # its normal form ("" for the empty filter): the filter's identity
    attributes: Event | None = None  # publish


def _int(obj: JsonObject, field: str) -> int:
    value = obj[field]
    if type(value) is not int:
        raise RecordError(field, f"must be an integer, got {json_kind(value)}")
    if not -(2**63) <= value < 2**63:
        raise RecordError(field, f"{value} is outside the 64-bit range")
    return value


def filter_of(text: object) -> tuple[Subscription, str]:
    """A trace's filter text: (the subscription, its normal form, "" for the empty filter)."""
    if type(text) is not str:
        raise RecordError("filter", f"must be a string, got {json_kind(text)}")
    if text.strip() == "":
        return Subscription(), ""
    try:
        subscription = parse_filter(text)
    except FilterError as exc:
        raise RecordError("filter", str(exc)) from None
    return subscription, format_filter(subscription)


def parse_trace_line(line: bytes) -> TraceRecord | None:
    """DEF-NET-9: one line of a trace file, validated."""
    obj = decode_line(line)
    if obj is None:
        return None
    if "kind" not in obj:
        raise RecordError("kind", "missing")
    kind = obj["kind"]
    if type(kind) is not str:
        raise RecordError("kind", f"must be a string, got {json_kind(kind)}")
    if kind not in FIELDS:
        raise RecordError("kind", f"unknown kind {kind!r}; expected one of {', '.join(FIELDS)}")
    check_keys(obj, None, ("time", "kind", *FIELDS[kind]))
    time = obj["time"]
    if type(time) not in (int, float) or not math.isfinite(time) or time < 0:
        raise RecordError("time", f"must be a finite number >= 0, got {json_kind(time) if type(time) not in (int, float) else time}")
    fields: dict[str, Any] = {"time": float(time), "kind": kind}
    for name in ("client", "broker", "event"):
        if name in FIELDS[kind]:
            fields[name] = _int(obj, name)
    if kind in ("subscribe", "unsubscribe"):
        fields["filter"], fields["filter_text"] = filter_of(obj["filter"])
    elif kind == "publish":
        if not isinstance(obj["attributes"], dict):
            raise RecordError("attributes", f"must be an object, got {json_kind(obj['attributes'])}")
        wrapper = JsonObject(id="-", attributes=obj["attributes"])
        fields["attributes"] = event_from_json(wrapper)[1]
    elif kind == "link":
        _int(obj, "a"), _int(obj, "b")
        if type(obj["up"]) is not bool:
            raise RecordError("up", f"must be true or false, got {json_kind(obj['up'])}")
    return TraceRecord(**fields)


def duplicate_publication(event: int, first_line: int) -> str:
    """The message for an event id published twice (the Spark reader says the same)."""
    return f"event {event} is published twice (first on line {first_line}); an event id names one publication"


def read_trace(path: str | PathLike[str]) -> list[TraceRecord]:
    """A whole trace file, in file order; InputError names the file, line and field."""
    from pathlib import Path

    path = Path(path)
    raw = read_input(path)
    records = []
    published: dict[int, int] = {}  # event id -> the line that published it
    for number, line in enumerate(file_lines(raw), start=1):
        try:
            record = parse_trace_line(line)
        except RecordError as exc:
            raise InputError(str(path), number, exc.field, exc.message) from None
        if record is not None and record.kind == "publish":
            assert record.event is not None
            if record.event in published:  # spec/07: a trace publishes each event id once
                raise InputError(str(path), number, "event", duplicate_publication(record.event, published[record.event]))
            published[record.event] = number
        if record is not None:
            records.append(record)
    if not records:
        raise InputError(str(path), None, None, "the file is empty; expected one trace record per line")
    return records
