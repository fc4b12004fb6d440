"""Summaries on disk and on the wire (DEF-SUM-15, DEF-SUM-16, spec/04-summaries.md).

- JSON (`to_json` / `from_json`, `write_json` / `read_json`): the file that
  `subsum summary build` writes and `subsum summary match` reads. It also
  carries the subscription names, so match results can name subscriptions.
- Binary (`to_bytes` / `from_bytes`): the compact encoding whose length is
  the *measured* size of a summary, set beside the thesis's size formula
  (`stats.formula_size`). Names are not part of it: the thesis's summary carries
  only packed IDs.

A file that is malformed, or whose rows are not in canonical form
(overlapping or touching ranges, an equality inside a range, a string row
covering another, an empty ID list), is rejected with a `SummaryFileError`
naming the file and the field; nothing is half-loaded.
"""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path

from subsum.core.errors import InputError
from subsum.core.inputs import read_input_text
from subsum.core.types import OPS_BY_TYPE, TYPES, Constraint, InvalidValue
from subsum.impl.summary import schema as file_schema
from subsum.impl.summary.ids import IdLayout
from subsum.impl.summary.normalize import NUMERIC
from subsum.impl.summary.summary import VIRTUAL_POLICIES, Summary, SummaryError

FORMAT = "subsum-summary"
DECIMAL_ID = re.compile(r"0|[1-9][0-9]{0,19}")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # not valid Unicode: no writer can put it out


def _shown(value) -> str:
    return repr(value) if len(repr(value)) <= 40 else f"a value of {len(repr(value))} characters"

VERSION = 1
MAGIC = b"SSUM"


class SummaryFileError(InputError):
    """A summary file that cannot be loaded: `path: field 'f': message`."""

    def __init__(self, path: str, field: str | None, message: str) -> None:
        super().__init__(path, None, field, message)


# --- JSON --------------------------------------------------------------------------

def _bound(x):
    return None if math.isinf(x) else x


def to_json(summary: Summary) -> dict:
    """The summary as a JSON-ready dict (IDs as ints, ±inf bounds as null)."""
    attributes = []
    for key, rows in summary.rows().items():
        entry: dict = {"name": key[0], "type": key[1]}
        if key[1] in NUMERIC:
            entry["ranges"] = [{"lo": _bound(c[0]), "hi": _bound(c[1]), "ids": sorted(ids)} for kind, c, ids in rows if kind == "range"]
            entry["equalities"] = [{"value": c[0], "ids": sorted(ids)} for kind, c, ids in rows if kind == "equality"]
        else:
            entry["rows"] = [{"op": c[0], **({} if c[1] is None else {"value": c[1]}), "ids": sorted(ids)} for _, c, ids in rows]
        attributes.append(entry)
    return {
        "format": FORMAT,
        "version": VERSION,
        "layout": summary.layout.to_json(),
        "schema": [{"name": n, "type": t} for n, t in summary.schema],
        "virtual": summary.virtual,
        "merged_brokers": sorted(summary.merged_brokers),
        "unconditional": sorted(summary.unconditional),
        "names": {str(sid): name for sid, name in sorted(summary.names.items())},
        "attributes": attributes,
    }


class _Reader:
    """Validates one JSON document field by field; every error names the field."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, field: str | None, message: str):
        raise SummaryFileError(self.path, field, message)

    def obj(self, value, field: str | None, required: tuple, optional: tuple = ()) -> dict:
        if not isinstance(value, dict):
            self.fail(field, f"expected a JSON object, got {type(value).__name__}")
        for key in required:
            if key not in value:
                self.fail(f"{field}.{key}" if field else key, "missing")
        for key in value:
            if key not in required and key not in optional:
                self.fail(f"{field}.{key}" if field else key, f"unknown field; expected {', '.join(required + optional)}")
        return value

    def list_(self, value, field: str) -> list:
        if not isinstance(value, list):
            self.fail(field, f"expected an array, got {type(value).__name__}")
        return value

    def int_(self, value, field: str, lo: int = 0, hi: int = 2**64 - 1) -> int:
        if type(value) is not int or not lo <= value <= hi:
            self.fail(field, f"expected an integer from {lo} to {hi}, got {_shown(value)}")
        return value

    def scalar(self, value, type_: str, field: str, nullable: bool = False):
        if value is None and nullable:
            return None
        ok = {"int": lambda v: type(v) is int and -(2**63) <= v < 2**63,
              "float": lambda v: (type(v) is int and abs(v) <= 2**1023) or (type(v) is float and math.isfinite(v)),
              "string": lambda v: type(v) is str,
              "bool": lambda v: type(v) is bool}[type_]
        if not ok(value):
            self.fail(field, f"expected a finite {type_} value, got {_shown(value)}")
        return float(value) if type_ == "float" else value

    def ids(self, value, field: str, layout: IdLayout, brokers: set[int]) -> set[int]:
        out = set()
        for i, sid in enumerate(self.list_(value, field)):
            self.int_(sid, f"{field}[{i}]")
            if sid >> layout.bits:
                self.fail(f"{field}[{i}]", f"ID {sid} does not fit in the layout's {layout.bits} bits")
            broker = layout.decode(sid)[0]
            if broker not in brokers:
                self.fail(f"{field}[{i}]", f"ID {sid} belongs to broker {broker}, which merged_brokers does not list (a summary "
                          "lists the brokers whose IDs it holds, so that merging two never mixes their IDs)")
            if sid in out:
                self.fail(f"{field}[{i}]", f"ID {sid} is listed twice")
            out.add(sid)
        if not out:
            self.fail(field, "an ID list must not be empty")
        return out


def from_json(doc, path: str = "<summary>") -> Summary:
    """Load and validate a summary from its JSON dict."""
    r = _Reader(path)
    r.obj(doc, None, ("format", "version", "layout", "schema", "virtual", "attributes"),
          ("merged_brokers", "unconditional", "names"))
    if doc["format"] != FORMAT:
        r.fail("format", f"expected {FORMAT!r}, got {doc['format']!r}")
    if type(doc["version"]) is not int or doc["version"] != VERSION:
        r.fail("version", f"this subsum reads version {VERSION}, got {doc['version']!r}")
    lay = r.obj(doc["layout"], "layout", ("brokers", "max_subscriptions", "attributes"))
    layout = IdLayout(r.int_(lay["brokers"], "layout.brokers", 1, 2**32 - 1),
                      r.int_(lay["max_subscriptions"], "layout.max_subscriptions", 1, 2**32 - 1),
                      r.int_(lay["attributes"], "layout.attributes", 0, file_schema.MAX_ATTRIBUTES))
    schema = []
    for i, entry in enumerate(r.list_(doc["schema"], "schema")):
        r.obj(entry, f"schema[{i}]", ("name", "type"))
        if type(entry["name"]) is not str or not entry["name"]:
            r.fail(f"schema[{i}].name", "expected a non-empty string")
        if entry["type"] not in TYPES:
            r.fail(f"schema[{i}].type", f"unknown type {entry['type']!r}; expected one of {', '.join(TYPES)}")
        schema.append((entry["name"], entry["type"]))
    if schema != sorted(set(schema)):
        r.fail("schema", "attributes must be sorted by (name, type) and distinct")
    if doc["virtual"] not in VIRTUAL_POLICIES:
        r.fail("virtual", f"unknown policy {doc['virtual']!r}; expected one of {', '.join(VIRTUAL_POLICIES)}")
    try:
        summary = Summary(layout, schema, doc["virtual"])
    except SummaryError as exc:
        r.fail("layout.attributes", str(exc))
    for i, b in enumerate(r.list_(doc.get("merged_brokers", []), "merged_brokers")):
        if r.int_(b, f"merged_brokers[{i}]") >= layout.brokers:
            r.fail(f"merged_brokers[{i}]", f"broker {b} is outside 0 .. {layout.brokers - 1}")
        summary.merged_brokers.add(b)
    if r.list_(doc.get("unconditional", []), "unconditional"):
        summary.unconditional = r.ids(doc["unconditional"], "unconditional", layout, summary.merged_brokers)
    names = doc.get("names", {})
    if not isinstance(names, dict):
        r.fail("names", "expected a JSON object mapping IDs to subscription names")
    expected: dict[tuple, list] = {}
    for i, entry in enumerate(r.list_(doc["attributes"], "attributes")):
        field = f"attributes[{i}]"
        if not isinstance(entry, dict) or type(entry.get("type")) is not str or type(entry.get("name")) is not str:
            r.fail(field, "expected an object with a string name, a string type, and rows")
        numeric = entry["type"] in NUMERIC
        r.obj(entry, field, ("name", "type") + (("ranges", "equalities") if numeric else ("rows",)))
        key = (entry["name"], entry["type"])
        if key not in summary.index:
            r.fail(field, f"attribute {key[0]}:{key[1]} is not in the schema")
        if key in expected:
            r.fail(field, f"attribute {key[0]}:{key[1]} is given twice")
        rows = expected[key] = []
        if numeric:
            for j, row in enumerate(r.list_(entry["ranges"], f"{field}.ranges")):
                f = f"{field}.ranges[{j}]"
                r.obj(row, f, ("lo", "hi", "ids"))
                lo = r.scalar(row["lo"], key[1], f"{f}.lo", nullable=True)
                hi = r.scalar(row["hi"], key[1], f"{f}.hi", nullable=True)
                lo, hi = (-math.inf if lo is None else lo), (math.inf if hi is None else hi)
                if not lo < hi:
                    r.fail(f, f"a range needs lo < hi, got {lo} .. {hi}")
                rows.append(("range", (lo, hi), frozenset(r.ids(row["ids"], f"{f}.ids", layout, summary.merged_brokers))))
            for j, row in enumerate(r.list_(entry["equalities"], f"{field}.equalities")):
                f = f"{field}.equalities[{j}]"
                r.obj(row, f, ("value", "ids"))
                v = r.scalar(row["value"], key[1], f"{f}.value")
                rows.append(("equality", (v, v), frozenset(r.ids(row["ids"], f"{f}.ids", layout, summary.merged_brokers))))
        else:
            for j, row in enumerate(r.list_(entry["rows"], f"{field}.rows")):
                f = f"{field}.rows[{j}]"
                r.obj(row, f, ("op", "ids"), ("value",))
                op = row["op"]
                if op not in OPS_BY_TYPE[key[1]] or op == "!=":
                    r.fail(f"{f}.op", f"operator {op!r} cannot stand in a {key[1]} summary row")
                value = None if op == "any" else r.scalar(row.get("value"), key[1], f"{f}.value")
                try:
                    Constraint(key[0], key[1], op, value)
                except InvalidValue as exc:
                    r.fail(f"{f}.value", str(exc))
                rows.append(("constraint", (op, value), frozenset(r.ids(row["ids"], f"{f}.ids", layout, summary.merged_brokers))))
        for _, c, ids in rows:
            summary.insert(key, c, ids)
    listed = set(summary.unconditional).union(*(ids for rows in expected.values() for _, _, ids in rows))
    for key, name in names.items():
        if not DECIMAL_ID.fullmatch(key):
            r.fail("names", f"key {ascii(key)[:40]} is not an ID written in decimal digits 0-9 without a leading zero")
        if int(key) not in listed:
            r.fail(f"names.{key}", f"ID {key} stands in no row of the summary")
        if type(name) is not str or not name or LONE_SURROGATE.search(name):
            r.fail(f"names.{key}", "expected a non-empty name of valid Unicode")
        summary.names[int(key)] = name
    got = summary.rows()
    for key, rows in expected.items():
        if sorted(rows, key=repr) != sorted(got.get(key, []), key=repr):
            r.fail(f"attributes ({key[0]}:{key[1]})", "rows are not in canonical form: ranges overlap or touch, an equality "
                   "lies inside a range, a value repeats, or a row covers another")
    return summary


def write_json(summary: Summary, path) -> None:
    """Write the summary file atomically (a temporary file renamed into place)."""
    from subsum.core.jsonio import write_lines_atomically

    write_lines_atomically(path, [json.dumps(to_json(summary), indent=1, ensure_ascii=False)])


def read_json(path) -> Summary:
    p = Path(path)
    text = read_input_text(p)  # a byte order mark at the start is dropped, as in JSONL

    def no_constants(token):
        raise SummaryFileError(str(p), None, f"{token} is not allowed in a summary file")

    def no_repeated_keys(pairs):
        keys = [key for key, _ in pairs]
        if len(set(keys)) < len(keys):
            raise SummaryFileError(str(p), next(k for i, k in enumerate(keys) if k in keys[:i]), "given more than once")
        return dict(pairs)

    def bounded_int(digits):
        try:
            return int(digits)
        except ValueError:  # more digits than Python converts: no ID or count is that long
            raise SummaryFileError(str(p), None, f"an integer of {len(digits.lstrip('-'))} digits is out of range") from None

    try:
        doc = json.loads(text, parse_constant=no_constants, object_pairs_hook=no_repeated_keys, parse_int=bounded_int)
    except json.JSONDecodeError as exc:
        raise SummaryFileError(str(p), None, f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise SummaryFileError(str(p), None, "malformed JSON: nested too deeply") from None
    file_schema.check(doc, str(p))  # the structure first (types, keys, bounds), then what a schema cannot state
    return from_json(doc, str(p))


# --- binary ------------------------------------------------------------------------

_TYPE_CODE = {t: i for i, t in enumerate(TYPES)}
#: A string's length takes 2 bytes; this value in them means 4 more bytes hold it.
LONG_STRING = 0xFFFF
_OP_CODE = {op: i for i, op in enumerate(("=", "prefix", "suffix", "contains", "wildcard", "any"))}
_OPS = {i: op for op, i in _OP_CODE.items()}


def _value_bytes(type_: str, v) -> bytes:
    if type_ == "int":
        return struct.pack(">q", v)
    if type_ == "float":
        return struct.pack(">d", v)
    if type_ == "bool":
        return b"\x01" if v else b"\x00"
    raw = v.encode("utf-8")
    if len(raw) < LONG_STRING:
        return struct.pack(">H", len(raw)) + raw
    return struct.pack(">HI", LONG_STRING, len(raw)) + raw  # a string of 64 KiB or more: the escape, then 4 bytes


def to_bytes(summary: Summary) -> bytes:
    """The compact binary encoding (DEF-SUM-16). Layout: magic, version,
    the ID layout, the schema, then per attribute its rows, each row its
    value(s) and its ID list as a count plus `layout.id_bytes` bytes per ID;
    numbers take 8 bytes, strings a 2-byte length plus UTF-8."""
    layout = summary.layout
    width = layout.id_bytes

    def id_list(ids) -> bytes:
        return struct.pack(">I", len(ids)) + b"".join(sid.to_bytes(width, "big") for sid in sorted(ids))

    out = [MAGIC, struct.pack(">BIIH", VERSION, layout.brokers, layout.max_subscriptions, layout.attributes)]
    for name, type_ in summary.schema:
        out += [_value_bytes("string", name), bytes([_TYPE_CODE[type_]])]
    out.append(bytes([list(VIRTUAL_POLICIES).index(summary.virtual)]))
    out.append(struct.pack(">I", len(summary.merged_brokers)) + b"".join(struct.pack(">I", b) for b in sorted(summary.merged_brokers)))
    out.append(id_list(summary.unconditional))
    rows_by_key = summary.rows()
    out.append(struct.pack(">H", len(rows_by_key)))
    for key, rows in rows_by_key.items():
        out += [struct.pack(">HI", summary.index[key], len(rows))]
        for kind, c, ids in rows:
            if key[1] in NUMERIC:
                lo, hi = c
                flags = (kind == "equality") | (math.isinf(lo) << 1) | (math.isinf(hi) << 2)
                out.append(bytes([flags]))
                if kind == "equality":
                    out.append(_value_bytes(key[1], lo))
                else:
                    out += [b"" if math.isinf(lo) else _value_bytes(key[1], lo), b"" if math.isinf(hi) else _value_bytes(key[1], hi)]
            else:
                op, value = c
                out.append(bytes([_OP_CODE[op]]) + (b"" if op == "any" else _value_bytes(key[1], value)))
            out.append(id_list(ids))
    return b"".join(out)


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise SummaryError(f"truncated summary: {len(self.data)} bytes, needed more at offset {self.at}")
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return values[0] if len(values) == 1 else values

    def raw(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise SummaryError(f"truncated summary at offset {self.at}")
        self.at += n
        return self.data[self.at - n:self.at]

    def value(self, type_: str):
        if type_ == "int":
            return self.take(">q")
        if type_ == "float":
            return self.take(">d")
        if type_ == "bool":
            return self.take(">B") == 1
        length = self.take(">H")
        return self.raw(self.take(">I") if length == LONG_STRING else length).decode("utf-8")


def from_bytes(data: bytes) -> Summary:
    """Decode `to_bytes` (names are not on the wire and come back empty)."""
    cur = _Cursor(data)
    if cur.raw(4) != MAGIC:
        raise SummaryError("not a subsum binary summary (bad magic)")
    version, brokers, max_subs, attributes = cur.take(">BIIH")
    if version != VERSION:
        raise SummaryError(f"binary summary version {version}; this subsum reads {VERSION}")
    layout = IdLayout(brokers, max_subs, attributes)
    schema = [(cur.value("string"), TYPES[cur.take(">B")]) for _ in range(attributes)]
    summary = Summary(layout, schema, VIRTUAL_POLICIES[cur.take(">B")])
    width = layout.id_bytes

    def id_list() -> set[int]:
        return {int.from_bytes(cur.raw(width), "big") for _ in range(cur.take(">I"))}

    summary.merged_brokers = {cur.take(">I") for _ in range(cur.take(">I"))}
    summary.unconditional = id_list()
    for _ in range(cur.take(">H")):
        index, count = cur.take(">HI")
        key = schema[index]
        for _ in range(count):
            if key[1] in NUMERIC:
                flags = cur.take(">B")
                if flags & 1:
                    v = cur.value(key[1])
                    c = (v, v)
                else:
                    lo = -math.inf if flags & 2 else cur.value(key[1])
                    hi = math.inf if flags & 4 else cur.value(key[1])
                    c = (lo, hi)
            else:
                op = _OPS[cur.take(">B")]
                c = (op, None if op == "any" else cur.value(key[1]))
            summary.insert(key, c, id_list())
    if cur.at != len(data):
        raise SummaryError(f"{len(data) - cur.at} trailing bytes after the summary")
    return summary
