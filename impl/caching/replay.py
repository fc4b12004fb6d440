"""Operation files for one cache, `subsum cache replay` (spec/formats.md,
"Cache operations"): read and validate a JSONL file of operations, and run
them against one cache, recording each eviction.

One operation per line:

    {"op": "insert", "message": "m1", "time": 3.0}
    {"op": "hit", "matching": ["m1", "m4"], "time": 4.0}
    {"op": "unsubscribe", "matching": ["m1"], "time": 5.0}
    {"op": "advance", "time": 6.0}

`time` is optional except for advance (it defaults to the clock so far) and
never goes back. A whole file is validated before any operation runs;
every error names the file, the line and the field.
"""

from __future__ import annotations

import math
from pathlib import Path

import attrs

from subsum.core.errors import InputError
from subsum.core.inputs import read_input
from subsum.core.jsonio import JsonObject, RecordError, check_keys, decode_line, file_lines, json_kind, json_scalar
from subsum.impl.caching.policies import CachePolicy

OPS = ("insert", "hit", "unsubscribe", "advance")
FIELDS = {"insert": ("message",), "hit": ("matching",), "unsubscribe": ("matching",), "advance": ("time",)}


@attrs.frozen
class Eviction:
    line: int
    inserted: str
    evicted: str
    time: float


def _message(value: object, field: str) -> str:
    if type(value) is not str or value == "":
        raise RecordError(field, f"must be a non-empty string (a message id), got {json_kind(value) if type(value) is not str else 'an empty string'}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordError(field, "holds a lone surrogate, which no output can encode") from None
    return value


def _time(value: object, clock: float) -> float:
    json_scalar(value, "time")  # refuses NaN, Infinity and integers too long to convert, by name
    if type(value) not in (int, float):
        raise RecordError("time", f"must be a number, got {json_kind(value)}")
    try:
        t = float(value)  # type: ignore[arg-type]
    except OverflowError:  # an integer beyond the largest float
        t = math.inf
    if not math.isfinite(t) or t < 0:
        raise RecordError("time", f"must be a finite number >= 0, got {value}")
    if t < clock:
        raise RecordError("time", f"{value} is earlier than the time before it, {clock}; the clock never goes back")
    return t


def parse_operation(obj: JsonObject, clock: float) -> dict:
    """One operation, validated, with its time filled in (the clock if absent)."""
    if "op" not in obj:
        raise RecordError("op", f"missing; expected one of {', '.join(OPS)}")
    kind = obj["op"]
    if kind not in OPS:
        raise RecordError("op", f"unknown operation {kind!r}; expected one of {', '.join(OPS)}")
    required = ("op",) + FIELDS[kind]
    check_keys(obj, None, required, () if kind == "advance" else ("time",))
    op: dict = {"op": kind, "time": _time(obj["time"], clock) if "time" in obj else clock}
    if kind == "insert":
        op["message"] = _message(obj["message"], "message")
    elif kind in ("hit", "unsubscribe"):
        matching = obj["matching"]
        if not isinstance(matching, list):
            raise RecordError("matching", f"must be a list of message ids, got {json_kind(matching)}")
        op["matching"] = [_message(m, f"matching[{i}]") for i, m in enumerate(matching)]
    return op


def read_operations(path: Path | str) -> list[tuple[int, dict]]:
    """Every operation of the file with its line number; InputError on the first bad line."""
    path = Path(path)
    raw = read_input(path)
    ops, clock = [], 0.0
    for number, line in enumerate(file_lines(raw), start=1):
        try:
            obj = decode_line(line)
            if obj is None:
                continue
            op = parse_operation(obj, clock)
        except RecordError as exc:
            raise InputError(str(path), number, exc.field, exc.message) from None
        clock = op["time"]
        ops.append((number, op))
    if not ops:
        raise InputError(str(path), None, None, "the file is empty; expected one operation per line")
    return ops


def apply(cache: CachePolicy, op: dict) -> str | None:
    """One operation on `cache` (its time defaults to the cache's clock); the evicted message, or None."""
    kind, t = op["op"], op.get("time", cache.now)
    if kind == "insert":
        return cache.insert(op["message"], t)
    if kind == "hit":
        cache.hit(op["matching"], t)
    elif kind == "unsubscribe":
        cache.unsubscribed(op["matching"], t)
    else:
        cache.advance(t)
    return None


def replay(cache: CachePolicy, ops: list[tuple[int, dict]]) -> list[Eviction]:
    """Run the operations on `cache`; the evictions, in order."""
    evictions = []
    for number, op in ops:
        victim = apply(cache, op)
        if victim is not None:
            evictions.append(Eviction(number, op["message"], victim, op["time"]))
    return evictions
