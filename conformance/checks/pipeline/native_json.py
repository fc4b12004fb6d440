"""CLM-PIPE-3's foundation (spec/07-pipeline.md, "Reading JSONL natively"):
the Spark readers' native line check (`subsum.impl.spark.jsonl`) is sound.

Every line it calls *plain*, the in-process reader accepts, with the same
values; every line it drops as blank, the in-process reader skips as blank,
and the other way round. Lines it is unsure of go to the in-process reader
on the driver, so soundness is all the readers' agreement needs. Its
completeness (ordinary lines are plain) is what makes it fast, and is
checked by `ordinary_lines_are_plain`.

Lines are drawn from events and trace records with hostile parts (values of
every JSON kind, 19-digit and 20-digit integers, infinities, lone
surrogates, duplicate and unknown keys), written in several styles (ASCII
escapes or not, spaces or not, exponent floats) and then damaged (trailing
text, raw bytes that are not UTF-8, Unicode spaces).
"""

from __future__ import annotations

import json
import re
import struct
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from subsum.core.jsonio import RecordError, parse_event_line
from subsum.core.tracefile import FIELDS, filter_of, parse_trace_line
from subsum.impl.spark.frames import attribute_rows
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.checks.pipeline.spark import session

TYPES = ("int", "float", "string", "bool")
_GOOD_INTS = st.one_of(st.integers(-1000, 1000), st.integers(-2 ** 63, 2 ** 63 - 1),
                       st.sampled_from([2 ** 53, 2 ** 53 + 1, 2 ** 63 - 1, -2 ** 63, 10 ** 18, -0]))
_BAD_INTS = st.one_of(st.sampled_from([2 ** 63, -2 ** 63 - 1, 10 ** 19, 2 ** 64, 10 ** 38, 10 ** 40, -10 ** 45]),
                      st.integers(2 ** 63, 10 ** 45))
_INTS = st.one_of(_GOOD_INTS, _GOOD_INTS, _GOOD_INTS, _BAD_INTS)
_FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from([-0.0, 0.0, 1.0, 1e300, 5e-324, 0.1, 1e16, 2.0 ** 63]),
                    st.sampled_from([float("inf"), float("-inf")]))
_GOOD_TEXTS = st.one_of(st.text(min_size=1, max_size=4), st.sampled_from(["é", "\u2028", "*", '"', "\\", "a\x00"]))
_TEXTS = st.one_of(_GOOD_TEXTS, _GOOD_TEXTS, _GOOD_TEXTS, st.sampled_from(["", "\ud800", "x\udfff"]))
_GOOD_SCALARS = st.one_of(_INTS, _FLOATS, _TEXTS, st.booleans())
_SCALARS = st.one_of(_GOOD_SCALARS, _GOOD_SCALARS, _GOOD_SCALARS,
                     st.sampled_from([None, [], {}, [1], {"a": 1}]))
_TYPED = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(TYPES), "value": _SCALARS}),
    st.fixed_dictionaries({"type": st.one_of(st.sampled_from(TYPES), st.sampled_from(["decimal", ""]), _INTS),
                           "value": _SCALARS}, optional={"extra": st.just(1)}))
_ATTRIBUTES = st.one_of(st.dictionaries(_TEXTS, st.one_of(_SCALARS, _TYPED), max_size=4), _SCALARS)
_EVENTS = st.one_of(
    st.fixed_dictionaries({"id": _TEXTS, "attributes": st.dictionaries(_TEXTS, st.one_of(_SCALARS, _TYPED), max_size=4)}),
    st.fixed_dictionaries({"id": st.one_of(_TEXTS, _INTS), "attributes": _ATTRIBUTES}, optional={"other": st.just(1)}))
_FILTERS = st.sampled_from(["", " ", "x > 1", "x:int = 3 && y prefix \"ab\"", "x >", "z != 1.5", "x ~ 1"])


@st.composite
def _trace_records(draw) -> dict:
    kind = draw(st.one_of(st.sampled_from(sorted(FIELDS)), _TEXTS))
    record = {"time": draw(st.one_of(_INTS, _FLOATS, _TEXTS)), "kind": kind}
    for name in FIELDS.get(kind, ("client",)):
        value = {"filter": _FILTERS, "attributes": _ATTRIBUTES, "up": st.booleans()}.get(name, _INTS)
        if not draw(st.integers(0, 20)) == 0:  # now and then a field is missing
            record[name] = draw(st.one_of(value, _SCALARS) if draw(st.integers(0, 8)) == 0 else value)
    return record


_EXPONENT = re.compile(r"(?<=[:\[,] )(-?\d+)\.(\d+)(?=[,}\]])")


@st.composite
def lines(draw) -> bytes:
    """One line of a JSONL file: an event or a trace record, written in some style, perhaps damaged."""
    obj = draw(st.one_of(_EVENTS, _trace_records()))
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()),
                      separators=draw(st.sampled_from([(", ", ": "), (",", ":")])))
    style = draw(st.sampled_from(["plain"] * 6 + ["exponent", "exponent", "trailing", "leading", "duplicate", "bytes",
                                                   "blank"]))
    if style == "exponent":  # 1.25 as 125e-2: the same float
        text = _EXPONENT.sub(lambda m: f"{m[1]}{m[2]}e-{len(m[2])}", text)
    elif style == "trailing":
        text += draw(st.sampled_from([" x", "{}", ",", "]", " 5", ' "s"', "\u00a0", "\t", "\r", " ", "}", "]}"]))
    elif style == "leading":
        text = draw(st.sampled_from([" ", "\t", "\u00a0", "\ufeff", "\x1c"])) + text
    elif style == "duplicate":
        text = text.replace("{", '{"id": "d", ', 1)
    elif style == "blank":
        text = draw(st.sampled_from(["", " ", "\u00a0", "\x1c\u2029", "\r", "\t \u3000"]))
    raw = text.encode("utf-8", "surrogatepass")  # a lone surrogate escape stays an escape unless ensure_ascii is off
    if style == "bytes":
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\xc0\x80", b"\xe9"])) + raw[at:]
    return raw


def _python_reading(parse, line: bytes, view):
    """What the in-process reader makes of a line: "refused", "blank", or `view` of what it read."""
    try:
        parsed = parse(line)
    except RecordError:
        return "refused"
    return "blank" if parsed is None else view(parsed)


def _python_event(line: bytes):
    return _python_reading(parse_event_line, line, lambda parsed: (parsed[0], _attribute_set(attribute_rows(parsed[1]))))


def _python_record(line: bytes):
    def view(record):
        attributes = None if record.attributes is None else _attribute_set(attribute_rows(record.attributes))
        return (_bits(record.time), record.kind, record.client, record.broker, record.event, record.filter_text, attributes)

    return _python_reading(parse_trace_line, line, view)


def _bits(x):
    return struct.pack(">d", x) if isinstance(x, float) else x


def _attribute_set(rows) -> tuple:
    return tuple(sorted(tuple(_bits(v) for v in (r["name"], r["type"], r["int"], r["float"], r["string"], r["bool"]))
                        for r in rows))


def _native(batch: list[bytes]) -> tuple[dict, dict, set]:
    """Per line index: the native event decoding and the native trace decoding
    of the lines it calls plain, and the indices it drops as blank."""
    from pyspark.sql import functions as F

    from subsum.impl.spark import io as sio
    from subsum.impl.spark import jsonl
    from subsum.impl.spark.trace import record_columns

    spark = session()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lines.jsonl"
        path.write_bytes(b"\n".join(batch) + b"\n")
        numbered = sio.numbered_text(spark, str(path))
        order = {row["ord"]: k for k, row in enumerate(numbered.orderBy("ord").select("ord").collect())}
        event, event_plain = jsonl.event_columns(F.col("top"))
        record, record_plain = record_columns(F.col("top"), F.col("dashed"))
        rows = jsonl.parsed_lines(numbered).select(
            "ord", event_plain.alias("event_plain"), F.struct(*event).alias("event"),
            record_plain.alias("record_plain"), F.struct(*record).alias("record")).collect()
    events, records, seen = {}, {}, set()
    for row in rows:
        k = order[row["ord"]]
        seen.add(k)
        if row["event_plain"]:
            e = row["event"]
            events[k] = (e["id"], _attribute_set([a.asDict() for a in e["attributes"]]))
        if row["record_plain"]:
            r = row["record"]
            attributes = None if r["attributes"] is None else _attribute_set([a.asDict() for a in r["attributes"]])
            records[k] = (_bits(r["time"]), r["kind"], r["client"], r["broker"], r["event"], r["filter_raw"], attributes)
    blank = set(range(len(batch))) - seen - {len(batch)}  # the file's last newline ends the last line
    return events, records, blank


def _filter_normal(text):
    """A plain trace line's filter as the driver settles it: its normal form, or None when it does not parse."""
    if text is None:
        return None
    try:
        return filter_of(text)[1]
    except RecordError:
        return "unparsable"


#: Lines each unsound shortcut would call plain (each was planted and seen to fail the property).
PINNED = [
    b'{"id": "a", "attributes": {"x": 9223372036854775808}}',  # 19 digits, out of range: a decimal to Spark
    b'{"id": "a", "attributes": {"x": 10000000000000000000000000000000000000000}}',  # 41 digits: a double
    b'{"id": "a", "attributes": {"x": 1}} x',  # text after the object
    b'{"id": "a", "attributes": {"x": 1}}{"y": 2}',
    b'{"time": -0.0, "kind": "crash", "broker": 1}',  # -0.0: Python keeps the sign
    b'{"id": "a", "attributes": {"x": {"type": "float", "value": 9007199254740993}}}',  # not exact as a float
    b'{"id": "\\ud800", "attributes": {}}', b'{"id": "a", "attributes": {"\\udfff": 1}}',  # lone surrogates
    b'{"id": "a", "attributes": {"x": 1e999}}', b'\xc2\xa0', b'\x1c', b'{"id": "\xed\xa0\x80", "attributes": {}}',
]


@property_check(st.lists(lines(), min_size=1, max_size=300), examples=((PINNED,),), scale=0.1)  # a Spark job each
def native_lines_are_sound(batch):
    """Every line the native check calls plain, the in-process reader accepts
    with the same values; blank means blank to both."""
    events, records, blank = _native(batch)
    for k, line in enumerate(batch):
        python_event, python_record = _python_event(line), _python_record(line)
        assert (k in blank) == (python_event == "blank"), f"blank disagrees on {line!r}: python {python_event!r}"
        if k in events:
            assert events[k] == python_event, f"plain event {line!r}: native {events[k]!r}, python {python_event!r}"
        if k in records:
            native = records[k]
            normal = _filter_normal(native[5])
            if normal == "unparsable":
                continue  # the driver's filter parse makes the line a suspect
            native = (*native[:5], normal, native[6])
            assert native == python_record, f"plain record {line!r}: native {native!r}, python {python_record!r}"


ORDINARY = [
    {"id": "e1", "attributes": {"price": 10, "symbol": "ACME", "ratio": 0.30000000000000004, "open": True}},
    {"id": "é\u4e2d", "attributes": {"x": {"type": "float", "value": 3}, "y": {"type": "string", "value": "s"}}},
    {"id": "e3", "attributes": {}},
    {"id": "e4", "attributes": {"big": 9223372036854775807, "small": -9223372036854775808, "tiny": 5e-324,
                                "neg": -1.5e300, "z": 0.0}},
]
ORDINARY_RECORDS = [
    {"time": 0, "kind": "subscribe", "client": 1, "broker": 2, "filter": "x > 1"},
    {"time": 1.5, "kind": "publish", "event": 7, "client": 1, "broker": 2, "attributes": {"x": 3}},
    {"time": 2.25, "kind": "deliver", "event": 7, "client": 1, "broker": 2},
    {"time": 3, "kind": "link", "a": 1, "b": 2, "up": False},
    {"time": 4, "kind": "crash", "broker": 2},
]


def ordinary_lines_are_plain() -> str:
    """What subsum and json.dumps write (either escaping, either spacing) is
    plain: the fast path covers ordinary files, and the driver sees none of them."""
    batch = [json.dumps(o, ensure_ascii=a, separators=s).encode("utf-8")
             for o in ORDINARY + ORDINARY_RECORDS for a in (True, False) for s in ((", ", ": "), (",", ":"))]
    events, records, blank = _native(batch)
    n_events = 4 * len(ORDINARY)
    assert not blank and sorted(events) == list(range(n_events)), f"not plain events: {set(range(n_events)) - set(events)}"
    assert sorted(records) == list(range(n_events, len(batch))), \
        f"not plain records: {set(range(n_events, len(batch))) - set(records)}"
    for k, line in enumerate(batch[:n_events]):
        assert events[k] == _python_event(line), line
    return f"{len(batch)} ordinary lines, all plain, all as the in-process reader reads them"
