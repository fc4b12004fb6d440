"""Decoding JSONL lines natively (spec/07-pipeline.md DEF-PIPE-1, CLM-PIPE-3).

Executors run no Python. Each line is parsed by Spark's own JSON parser
(`try_parse_json`, into a VARIANT) and checked with column expressions.
The check is one-sided by design: a line it calls *plain* is one the
in-process reader (`subsum.core.jsonio`) accepts, with the same values.
Every other non-blank line is a *suspect*, and the driver hands suspects,
in line order, to the in-process reader itself (`settle`):
- the first one it refuses is the error, with the same file, line, field
  and message, by construction;
- the rare one it accepts (a lone-surrogate escape, an integer of 19
  digits, an object nested deeper than the formats allow...) is decoded
  there and joins the plain rows.

A line is plain when all of these hold:
1. it is valid UTF-8 (Python decodes it first);
2. Spark parses it, and nothing but JSON whitespace follows the value
   (Spark's parser stops after the first value): the line's *skeleton*
   (strings as "", numbers as 0, whitespace dropped) is as long as the
   skeleton of the value written back;
3. no integer literal of 20 digits or more: it is out of the 64-bit range,
   an error to Python, while Spark reads it as a decimal or a double (a
   19-digit one out of range is a decimal of scale 0, left to the driver
   by `_kind`);
4. its fields have the types and values of spec/formats.md, checked below.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from subsum.core.errors import InputError
from subsum.core.jsonio import RecordError
from subsum.impl.spark.frames import local_frame

TYPES = ("int", "float", "string", "bool")

#: Python's str.isspace() characters: a line of only these is blank (core.jsonio.decode_line).
PYTHON_WHITESPACE = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
BLANK_LINE = "^[" + "".join(f"\\x{{{ord(c):x}}}" for c in PYTHON_WHITESPACE) + "]*$"
STRING_TOKEN = r'(?s)"[^"\\]*+(?:\\.[^"\\]*+)*+"'
NUMBER_TOKEN = r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
#: An integer literal (no fraction, no exponent) of 20 digits or more, in a line whose strings are "".
LONG_INTEGER = "(?<![0-9.eE+-])-?[0-9]{20,}(?![0-9.eE])"
#: A decimal of scale 0 and 19+ digits: a float literal like 1.0 or a 19-digit integer (perhaps out of range).
AMBIGUOUS_DECIMAL = r"DECIMAL\((19|[2-9][0-9]),0\)"
#: Integers a float holds exactly whatever their value (Python checks int(float(v)) == v).
EXACT_IN_FLOAT = 2 ** 53


def _skeleton(without_strings: Column) -> Column:
    return F.regexp_replace(F.regexp_replace(without_strings, "[ \t\n\r]+", ""), NUMBER_TOKEN, "0")


def _as(x: Column, ddl: str) -> Column:
    return F.try_variant_get(x, "$", ddl)


def _object(x: Column) -> Column:
    """The JSON object x as map<string, variant>; null when x is not an object."""
    return _as(x, "map<string,variant>")


def keys_are(obj: Column, keys: Sequence[str]) -> Column:
    return F.array_sort(F.map_keys(obj)) == F.array(*[F.lit(k) for k in sorted(keys)])


def _kind_of(schema: Column) -> Column:
    """The type a JSON scalar gets in an event (DEF-DATA-2), from its variant
    schema: int for an integer literal, float for one with a fraction or
    exponent; null for anything else (and for a decimal that may have been
    an integer literal out of range)."""
    return (F.when(schema == "BIGINT", "int")
            .when((schema.startswith("DECIMAL") & ~schema.rlike(AMBIGUOUS_DECIMAL)) | (schema == "DOUBLE"), "float")
            .when(schema == "STRING", "string")
            .when(schema == "BOOLEAN", "bool"))


def _kind(x: Column) -> Column:
    return _kind_of(F.schema_of_variant(x))


def field(obj: Column, name: str, kind: str) -> Column:
    """obj's `name` value when it is a JSON value of `kind` (int, float,
    string, bool), else null."""
    x = F.element_at(obj, F.lit(name))
    ddl = {"int": "bigint", "float": "double", "string": "string", "bool": "boolean"}[kind]
    return F.when(_kind(x) == kind, _as(x, ddl)) if kind != "float" else F.when(
        _kind(x).isin("int", "float"), _as(x, ddl))


def _staged(items: Column, *stages: Callable[[Column], dict[str, Column]]) -> Column:
    """items transformed stage by stage, each stage a struct of named parts
    computed from the previous one's: every part is computed once (Spark does
    not share subexpressions inside lambdas), and the plan stays small."""
    def as_struct(stage: Callable[[Column], dict[str, Column]]) -> Callable[[Column], Column]:
        return lambda a: F.struct(*[c.alias(n) for n, c in stage(a).items()])  # one argument: no index

    for stage in stages:
        items = F.transform(items, as_struct(stage))
    return items


def attributes(x: Column) -> tuple[Column, Column]:
    """(the attribute structs, whether all are accepted) of an event's
    "attributes" value: struct(name, type, int, float, string, bool) per
    attribute, each accepted when core.jsonio accepts it with these values.
    An attribute's value x is a scalar or {"type": t, "value": v}."""
    obj = _object(x)
    checked = _staged(
        F.map_entries(obj),
        lambda e: {"name": e["key"], "x": e["value"], "typed": _object(e["value"])},
        lambda a: {"name": a["name"], "typed": a["typed"].isNotNull(),
                   "keys_ok": a["typed"].isNull() | keys_are(a["typed"], ("type", "value")),
                   "declared": F.element_at(a["typed"], F.lit("type")),
                   "value": F.when(a["typed"].isNotNull(), F.element_at(a["typed"], F.lit("value"))).otherwise(a["x"])},
        lambda a: {"name": a["name"], "typed": a["typed"], "keys_ok": a["keys_ok"], "value": a["value"],
                   "declared": F.when(F.schema_of_variant(a["declared"]) == "STRING", _as(a["declared"], "string")),
                   "kind": _kind(a["value"])},
        lambda a: {"name": a["name"], "kind": a["kind"], "keys_ok": a["keys_ok"], "value": a["value"],
                   "type": F.when(a["typed"], a["declared"]).otherwise(a["kind"]),
                   "int": _as(a["value"], "bigint"), "float": _as(a["value"], "double")},
        lambda a: {"name": a["name"], "type": a["type"],
                   "int": F.when(a["type"] == "int", a["int"]),
                   "float": F.when(a["type"] == "float", F.when(a["float"] == 0.0, F.lit(0.0)).otherwise(a["float"])),
                   "string": F.when(a["type"] == "string", _as(a["value"], "string")),
                   "bool": F.when(a["type"] == "bool", _as(a["value"], "boolean")),
                   "ok": F.coalesce((a["name"] != "") & a["kind"].isNotNull() & a["keys_ok"] & a["type"].isin(*TYPES)
                                    & ((a["kind"] == a["type"]) | ((a["type"] == "float") & (a["kind"] == "int")
                                                                   & (F.abs(a["int"]) <= EXACT_IN_FLOAT)))
                                    & ~((a["type"] == "float") & (F.abs(a["float"]) == float("inf"))), F.lit(False))})
    ok = obj.isNotNull() & F.forall(checked, lambda a: a["ok"])
    return F.transform(checked, lambda a: a.dropFields("ok")), F.coalesce(ok, F.lit(False))


def parsed_lines(numbered: DataFrame) -> DataFrame:
    """The non-blank lines of `numbered` (ord, value) with `top` (the line's
    object as map<string, variant>, null if the line is not plain JSON) and
    `dashed` (a minus sign outside strings)."""
    line = F.col("value")
    utf8 = F.is_valid_utf8(line)
    blank = utf8 & line.rlike(BLANK_LINE)
    v = F.when(utf8, F.try_parse_json(line))
    without_strings = F.regexp_replace(line, STRING_TOKEN, '""')
    whole = (F.length(_skeleton(without_strings)) == F.length(_skeleton(F.regexp_replace(F.to_json(v), STRING_TOKEN, '""'))))
    plain_json = v.isNotNull() & whole & ~without_strings.rlike(LONG_INTEGER)
    return (numbered.where(~F.coalesce(blank, F.lit(False)))
            .select("ord", "value", F.when(plain_json, _object(v)).alias("top"),
                    without_strings.contains("-").alias("dashed")))


def event_columns(top: Column) -> tuple[list[Column], Column]:
    """([id, attributes], plain) of an events-file line (spec/formats.md)."""
    ident = field(top, "id", "string")
    attrs, attrs_ok = attributes(F.element_at(top, F.lit("attributes")))
    ok = keys_are(top, ("id", "attributes")) & (ident != "") & attrs_ok
    return [ident.alias("id"), attrs.alias("attributes")], F.coalesce(ok, F.lit(False))


# --- the driver's part ------------------------------------------------------------------

def line_of(numbered: DataFrame, ord_: int) -> int:
    """The 1-based line (or row) number of the record with `ord` (error path only)."""
    return numbered.where(F.col("ord") < ord_).count() + 1


def settle(spark, decoded: DataFrame, numbered: DataFrame, path: str, *, columns: Sequence[str], ddl: str,
           parse: Callable[[bytes], tuple | None], key: str, duplicate: Callable[[Any, int], tuple[str, str]],
           empty: str) -> DataFrame:
    """The validated frame (`columns`) of a decoded JSONL file, or InputError
    for the first bad line, as the in-process reader reports it.

    `decoded`: ord, value, plain, and `columns`. `parse`: the in-process
    reader's decision for one line (a row of `columns` without ord, None for
    a line to skip, or RecordError). `key`: the column no two rows may share
    (null: not keyed), `duplicate(key, first_line)`: the (field, message)
    for a repeat. One job when every line is plain."""
    stats = scan(decoded, key)
    plain = decoded.where(F.col("plain")).select("ord", *columns)
    bad = None
    recovered: list[tuple] = []
    if stats["suspect"] is not None:
        suspects = decoded.where(~F.col("plain")).select("ord", F.col("value").cast("binary").alias("raw"))
        for row in suspects.orderBy("ord").toLocalIterator():
            try:
                decided = parse(bytes(row["raw"]))
            except RecordError as exc:
                bad = (row["ord"], exc.field, exc.message)
                break
            if decided is not None:
                recovered.append((row["ord"], *decided))
    frame = plain
    if recovered:  # as Arrow data: a list of tuples would be unpickled by Python workers
        frame = plain.unionByName(local_frame(spark, f"ord bigint, {ddl}", recovered))
    if recovered or stats["repeat"]:
        repeat = first_repeat(frame, key)
        if repeat is not None and (bad is None or repeat[1] < bad[0]):
            first_ord, second_ord, value = repeat
            field_name, message = duplicate(value, line_of(numbered, first_ord))
            bad = (second_ord, field_name, message)
    if bad is not None:
        raise InputError(path, line_of(numbered, bad[0]), bad[1], bad[2])
    if not stats["rows"]:
        raise InputError(path, None, None, empty)
    return frame


def scan(decoded: DataFrame, key: str):
    """One job over a decoded frame (ord, plain, key): rows (how many),
    suspect (the first ord not plain, or null) and repeat (1 when two plain
    rows share a key)."""
    keyed = F.when(F.col("plain"), F.col(key))
    per_key = decoded.groupBy(keyed.alias("k")).agg(
        F.count(F.lit(1)).alias("n"), F.min(F.when(~F.col("plain"), F.col("ord"))).alias("suspect"))
    return per_key.agg(F.sum("n").alias("rows"), F.min("suspect").alias("suspect"),
                       F.max(F.when(F.col("k").isNotNull() & (F.col("n") > 1), 1)).alias("repeat")).first()


def first_repeat(frame: DataFrame, key: str) -> tuple[int, int, object] | None:
    """(first ord, second ord, key) of the key whose second row comes first, or None."""
    firsts = frame.where(F.col(key).isNotNull()).groupBy(key).agg(F.min("ord").alias("first"))
    seconds = (frame.join(firsts, key).where(F.col("ord") > F.col("first"))
               .groupBy(key, "first").agg(F.min("ord").alias("second")))
    row = seconds.orderBy("second").limit(1).collect()
    return (row[0]["first"], row[0]["second"], row[0][key]) if row else None
