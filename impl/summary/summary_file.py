"""The summary file, JSON (DEF-SUM-16, spec/04-summaries.md).

`to_json` / `from_json` and `write_json` / `read_json`: the file that
`subsum summary build` writes and `subsum summary match` reads. It also
carries the subscription names, so match results can name subscriptions.

A file that is malformed, or whose rows are not in canonical form
(overlapping or touching ranges, an equality inside a range, a string row
covering another, an empty ID list), is rejected with a `SummaryFileError`
naming the file and the field; nothing is half-loaded. Reading checks the
structure first (`schema.check`), then field by field what a schema cannot
state (`from_json`, with `file_reader.FieldReader`).

The compact binary encoding of the same summary is `wire`.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from subsum.core.inputs import read_input_text
from subsum.core.outputs import write_lines_atomically
from subsum.core.types import OPS_BY_TYPE, TYPES, Constraint, InvalidValue
from subsum.impl.summary import schema as file_schema
from subsum.impl.summary.file_reader import FieldReader, SummaryFileError
from subsum.impl.summary.ids import IdLayout
from subsum.impl.summary.normalize import NUMERIC
from subsum.impl.summary.summary import VIRTUAL_POLICIES, Summary, SummaryError

FORMAT = "subsum-summary"
#: The version of the summary formats, JSON and binary (`wire`).
VERSION = 1
DECIMAL_ID = re.compile(r"0|[1-9][0-9]{0,19}")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # not valid Unicode: no writer can put it out


# --- writing -----------------------------------------------------------------------

def _bound(x):
    """A range bound as JSON writes it: an infinite bound is null."""
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


def write_json(summary: Summary, path) -> None:
    """Write the summary file atomically (a temporary file renamed into place)."""
    write_lines_atomically(path, [json.dumps(to_json(summary), indent=1, ensure_ascii=False)])


# --- reading -----------------------------------------------------------------------

def from_json(doc, path: str = "<summary>") -> Summary:
    """Load and validate a summary from its JSON dict. The fields are read in
    order (the header, the layout and schema, the brokers and unconditional
    IDs, the rows of every attribute, the names) and the first one that
    fails names the error; last, the rows must be in canonical form."""
    r = FieldReader(path)
    _check_header(r, doc)
    layout = _layout(r, doc["layout"])
    schema = _schema(r, doc["schema"])
    summary = _empty_summary(r, doc, layout, schema)
    names = doc.get("names", {})
    if not isinstance(names, dict):
        r.fail("names", "expected a JSON object mapping IDs to subscription names")
    expected = _insert_attributes(r, doc["attributes"], summary)
    _add_names(r, names, summary, expected)
    _check_canonical(r, summary, expected)
    return summary


def _check_header(r: FieldReader, doc) -> None:
    """The document is an object with the known top-level fields, of this format and version."""
    r.obj(doc, None, ("format", "version", "layout", "schema", "virtual", "attributes"),
          ("merged_brokers", "unconditional", "names"))
    if doc["format"] != FORMAT:
        r.fail("format", f"expected {FORMAT!r}, got {doc['format']!r}")
    if type(doc["version"]) is not int or doc["version"] != VERSION:
        r.fail("version", f"this subsum reads version {VERSION}, got {doc['version']!r}")


def _layout(r: FieldReader, value) -> IdLayout:
    """The ID layout (DEF-SUM-11), each field bounded."""
    lay = r.obj(value, "layout", ("brokers", "max_subscriptions", "attributes"))
    return IdLayout(r.int_(lay["brokers"], "layout.brokers", 1, 2**32 - 1),
                    r.int_(lay["max_subscriptions"], "layout.max_subscriptions", 1, 2**32 - 1),
                    r.int_(lay["attributes"], "layout.attributes", 0, file_schema.MAX_ATTRIBUTES))


def _schema(r: FieldReader, value) -> list[tuple[str, str]]:
    """The attribute keys (DEF-SUM-1): named, typed, sorted and distinct."""
    schema = []
    for i, entry in enumerate(r.list_(value, "schema")):
        r.obj(entry, f"schema[{i}]", ("name", "type"))
        if type(entry["name"]) is not str or not entry["name"]:
            r.fail(f"schema[{i}].name", "expected a non-empty string")
        if entry["type"] not in TYPES:
            r.fail(f"schema[{i}].type", f"unknown type {entry['type']!r}; expected one of {', '.join(TYPES)}")
        schema.append((entry["name"], entry["type"]))
    if schema != sorted(set(schema)):
        r.fail("schema", "attributes must be sorted by (name, type) and distinct")
    return schema


def _empty_summary(r: FieldReader, doc, layout: IdLayout, schema: list[tuple[str, str]]) -> Summary:
    """The summary the header describes, before any row: its policy, the
    Merged_Brokers list and the unconditional IDs."""
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
    return summary


def _insert_attributes(r: FieldReader, value, summary: Summary) -> dict[tuple, list]:
    """Read every attribute's rows and insert them into the summary; return
    the rows as the file gives them, per key (for `_check_canonical`)."""
    expected: dict[tuple, list] = {}
    for i, entry in enumerate(r.list_(value, "attributes")):
        field = f"attributes[{i}]"
        key = _attribute_key(r, entry, field, summary, expected)
        if key[1] in NUMERIC:
            rows = _numeric_rows(r, entry, field, key, summary)
        else:
            rows = _constraint_rows(r, entry, field, key, summary)
        expected[key] = rows
        for _, c, ids in rows:
            summary.insert(key, c, ids)
    return expected


def _attribute_key(r: FieldReader, entry, field: str, summary: Summary, seen: dict[tuple, list]) -> tuple[str, str]:
    """The key of one attribute entry: in the schema, not given before, with
    the row fields of its type (ranges and equalities, or rows)."""
    if not isinstance(entry, dict) or type(entry.get("type")) is not str or type(entry.get("name")) is not str:
        r.fail(field, "expected an object with a string name, a string type, and rows")
    numeric = entry["type"] in NUMERIC
    r.obj(entry, field, ("name", "type") + (("ranges", "equalities") if numeric else ("rows",)))
    key = (entry["name"], entry["type"])
    if key not in summary.index:
        r.fail(field, f"attribute {key[0]}:{key[1]} is not in the schema")
    if key in seen:
        r.fail(field, f"attribute {key[0]}:{key[1]} is given twice")
    return key


def _numeric_rows(r: FieldReader, entry: dict, field: str, key: tuple[str, str], summary: Summary) -> list:
    """The AACS rows of a numeric key (DEF-SUM-4): ranges with lo < hi (a
    null bound is infinite), then equalities."""
    rows = []
    for j, row in enumerate(r.list_(entry["ranges"], f"{field}.ranges")):
        f = f"{field}.ranges[{j}]"
        r.obj(row, f, ("lo", "hi", "ids"))
        lo = r.scalar(row["lo"], key[1], f"{f}.lo", nullable=True)
        hi = r.scalar(row["hi"], key[1], f"{f}.hi", nullable=True)
        lo = -math.inf if lo is None else lo
        hi = math.inf if hi is None else hi
        if not lo < hi:
            r.fail(f, f"a range needs lo < hi, got {lo} .. {hi}")
        rows.append(("range", (lo, hi), frozenset(r.ids(row["ids"], f"{f}.ids", summary.layout, summary.merged_brokers))))
    for j, row in enumerate(r.list_(entry["equalities"], f"{field}.equalities")):
        f = f"{field}.equalities[{j}]"
        r.obj(row, f, ("value", "ids"))
        v = r.scalar(row["value"], key[1], f"{f}.value")
        rows.append(("equality", (v, v), frozenset(r.ids(row["ids"], f"{f}.ids", summary.layout, summary.merged_brokers))))
    return rows


def _constraint_rows(r: FieldReader, entry: dict, field: str, key: tuple[str, str], summary: Summary) -> list:
    """The SACS rows of a string or bool key (DEF-SUM-5): an operator that
    may stand in a row of the type (never `!=`) and a valid value."""
    rows = []
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
        rows.append(("constraint", (op, value), frozenset(r.ids(row["ids"], f"{f}.ids", summary.layout, summary.merged_brokers))))
    return rows


def _add_names(r: FieldReader, names: dict, summary: Summary, expected: dict[tuple, list]) -> None:
    """The subscription names: keyed by an ID in decimal that stands in some
    row (or is unconditional), each a non-empty name of valid Unicode."""
    listed = set(summary.unconditional).union(*(ids for rows in expected.values() for _, _, ids in rows))
    for key, name in names.items():
        if not DECIMAL_ID.fullmatch(key):
            r.fail("names", f"key {ascii(key)[:40]} is not an ID written in decimal digits 0-9 without a leading zero")
        if int(key) not in listed:
            r.fail(f"names.{key}", f"ID {key} stands in no row of the summary")
        if type(name) is not str or not name or LONE_SURROGATE.search(name):
            r.fail(f"names.{key}", "expected a non-empty name of valid Unicode")
        summary.names[int(key)] = name


def _check_canonical(r: FieldReader, summary: Summary, expected: dict[tuple, list]) -> None:
    """The rows the file gives are the rows inserting them built: no range
    overlaps or touches another, no equality lies inside a range, no value
    repeats and no row covers another."""
    got = summary.rows()
    for key, rows in expected.items():
        if sorted(rows, key=repr) != sorted(got.get(key, []), key=repr):
            r.fail(f"attributes ({key[0]}:{key[1]})", "rows are not in canonical form: ranges overlap or touch, an equality "
                   "lies inside a range, a value repeats, or a row covers another")


def read_json(path) -> Summary:
    """Read and validate a summary file: strict JSON (no NaN or Infinity, no
    repeated key, no integer too long to convert), then its structure
    (`schema.check`), then `from_json`."""
    p = Path(path)
    text = read_input_text(p)  # a byte order mark at the start is dropped, as in JSONL

    def no_constants(token):
        raise SummaryFileError(str(p), None, f"{token} is not allowed in a summary file")

    def no_repeated_keys(pairs):
        obj = {}
        for key, value in pairs:
            if key in obj:
                raise SummaryFileError(str(p), key, "given more than once")
            obj[key] = value
        return obj

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
