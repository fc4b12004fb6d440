"""Reading subscriptions and events into Spark DataFrames, writing results
(spec/07-pipeline.md DEF-PIPE-1, DEF-PIPE-2).

Two input formats, told apart by the path's suffix:
- JSONL (the formats of spec/formats.md). Each line is decoded by the same validating
  reader as the in-process engines (`subsum.core.jsonio`), in Python workers
  (`mapInArrow`). This is ingestion, once per line, not the matching hot path.
- Parquet (`.parquet`, a file or a directory). Events are read natively and
  validated with column expressions; subscriptions carry their filter text,
  parsed in Python workers like JSONL lines.

The frames every later step uses:
- events: `ord` (long, input order), `id`, `attributes`
  (array<struct<name, type, int, float, string, bool>>, one value field set);
- subscriptions: `ord`, `id`, `constraints`
  (array<struct<name, type, op, int, float, string, bool>>, no value for `any`).

Bad input raises `InputError` naming the file, the line (JSONL) or row
(Parquet), and the field, before anything is written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

from subsum.core.errors import InputError
from subsum.impl.spark.inputs import is_uri, is_parquet, spark_path
from subsum.impl.spark.session import describe_failure
from subsum.core.jsonio import RecordError, parse_event_line, parse_subscription_line
from subsum.core.types import Event, Subscription

VALUE_FIELDS = ("int", "float", "string", "bool")
ATTRIBUTE_DDL = "struct<name: string, type: string, int: bigint, float: double, string: string, bool: boolean>"
CONSTRAINT_DDL = ("struct<name: string, type: string, op: string, int: bigint, float: double, string: string, "
                  "bool: boolean>")
EVENTS_DDL = f"ord bigint, id string, attributes array<{ATTRIBUTE_DDL}>"
SUBSCRIPTIONS_DDL = f"ord bigint, id string, constraints array<{CONSTRAINT_DDL}>"
_PARSED_TAIL = "err_field string, err_message string"


# --- Python objects to rows (tests, and the JSONL decoder) ------------------------------

def _value_slots(type_: str, value) -> tuple:
    slots = [None, None, None, None]
    if value is not None:
        slots[VALUE_FIELDS.index(type_)] = value
    return tuple(slots)


def attribute_rows(event: Event) -> list[tuple]:
    return [(a.name, a.type, *_value_slots(a.type, a.value)) for a in event.attributes]


def constraint_rows(subscription: Subscription) -> list[tuple]:
    return [(c.name, c.type, c.op, *_value_slots(c.type, c.value)) for c in subscription.constraints]


def events_frame(spark, events: Sequence[Event], ids: Sequence[str] | None = None):
    """A frame of in-memory events (tests and benchmarks); ids default to e0, e1, ..."""
    ids = ids if ids is not None else [f"e{i}" for i in range(len(events))]
    rows = [(i, ident, attribute_rows(e)) for i, (ident, e) in enumerate(zip(ids, events))]
    return spark.createDataFrame(rows, EVENTS_DDL)


def subscriptions_frame(spark, subscriptions: Iterable[tuple[str, Subscription]]):
    """A frame of in-memory (id, subscription) pairs."""
    rows = [(i, sid, constraint_rows(s)) for i, (sid, s) in enumerate(subscriptions)]
    return spark.createDataFrame(rows, SUBSCRIPTIONS_DDL)


# --- decoding in Python workers --------------------------------------------------------

def _decode_batches(batches, kind: str):
    """mapInArrow body: (ord, value: binary) -> parsed rows or error rows."""
    import pyarrow as pa

    schema = arrow_schema(kind)
    for batch in batches:
        ords = batch.column("ord").to_pylist()
        if "value" in batch.schema.names:
            lines = batch.column("value").to_pylist()
        else:  # Parquet subscriptions: id and filter columns
            lines = [None] * len(ords)
            ids, filters = batch.column("id").to_pylist(), batch.column("filter").to_pylist()
        out = {name: [] for name in schema.names}
        for k, ord_ in enumerate(ords):
            try:
                if lines[k] is not None:
                    parsed = (parse_event_line if kind == "event" else parse_subscription_line)(lines[k])
                    if parsed is None:
                        continue  # a blank line
                else:
                    parsed = _parquet_subscription(ids[k], filters[k])
                ident, value = parsed
                rows = attribute_rows(value) if kind == "event" else constraint_rows(value)
                field = "attributes" if kind == "event" else "constraints"
                keys = ("name", "type", "op", *VALUE_FIELDS) if kind != "event" else ("name", "type", *VALUE_FIELDS)
                out["ord"].append(ord_)
                out["id"].append(ident)
                out[field].append([dict(zip(keys, r)) for r in rows])
                out["err_field"].append(None)
                out["err_message"].append(None)
            except RecordError as exc:
                out["ord"].append(ord_)
                out["id"].append(None)
                out["attributes" if kind == "event" else "constraints"].append(None)
                out["err_field"].append(exc.field)
                out["err_message"].append(exc.message)
        yield pa.RecordBatch.from_pydict(out, schema=schema)


def arrow_schema(kind: str):
    """The Arrow twin of EVENTS_DDL / SUBSCRIPTIONS_DDL plus the error columns
    (built by hand: DDL parsing needs the JVM, which workers do not have)."""
    import pyarrow as pa

    values = [pa.field("int", pa.int64()), pa.field("float", pa.float64()), pa.field("string", pa.string()),
              pa.field("bool", pa.bool_())]
    head = [pa.field("name", pa.string()), pa.field("type", pa.string())]
    if kind == "event":
        items = ("attributes", pa.struct(head + values))
    else:
        items = ("constraints", pa.struct(head + [pa.field("op", pa.string())] + values))
    return pa.schema([pa.field("ord", pa.int64()), pa.field("id", pa.string()), pa.field(items[0], pa.list_(items[1])),
                      pa.field("err_field", pa.string()), pa.field("err_message", pa.string())])


def _parquet_subscription(ident, text) -> tuple[str, Subscription]:
    from subsum.core.jsonio import subscription_from_json, loads_json  # one validator for every format
    import json

    obj = loads_json(json.dumps({"id": ident, "filter": text}))
    if ident is None:
        raise RecordError("id", "missing (null)")
    if text is None:
        raise RecordError("filter", "missing (null)")
    return subscription_from_json(obj)


def _decode_events(batches):
    return _decode_batches(batches, "event")


def _decode_subscriptions(batches):
    return _decode_batches(batches, "subscription")


# --- reading ---------------------------------------------------------------------------

def numbered_text(spark, path: str):
    """The lines of the user's file `path` (read through `spark_path`), numbered in order."""
    from pyspark.sql import functions as F

    readable = spark_path(path)
    try:
        text = spark.read.format("text").option("lineSep", "\n").load(readable)
    except Exception as exc:  # AnalysisException and friends
        raise InputError(path, None, None, f"cannot read: {str(exc).splitlines()[0]}") from None
    # monotonically_increasing_id grows with the line order of one file read in order.
    return text.select(F.monotonically_increasing_id().alias("ord"), F.col("value").cast("binary").alias("value"))


def line_of(numbered, ord_: int) -> int:
    """The 1-based line (or row) number of the record with `ord` (error path only)."""
    from pyspark.sql import functions as F

    return numbered.where(F.col("ord") < ord_).count() + 1


def raise_first_error(parsed, numbered, path: str, unit: str) -> None:
    from pyspark.sql import functions as F

    bad = parsed.where(F.col("err_message").isNotNull()).orderBy("ord").limit(1).collect()
    if bad:
        row = bad[0]
        line = line_of(numbered, row["ord"])
        raise InputError(path, line if unit == "line" else None, row["err_field"],
                         row["err_message"] if unit == "line" else f"row {line}: {row['err_message']}")


def _raise_duplicate(frame, numbered, path: str, kind: str, unit: str) -> None:
    from pyspark.sql import functions as F

    dups = frame.groupBy("id").count().where(F.col("count") > 1)
    if not dups.limit(1).count():
        return
    first = (frame.join(dups.select("id"), "id").groupBy("id")
             .agg(F.sort_array(F.collect_list("ord")).alias("ords"))
             .orderBy(F.element_at("ords", 2)).limit(1).collect()[0])
    second, original = line_of(numbered, first["ords"][1]), line_of(numbered, first["ords"][0])
    message = f"duplicate {kind} id {first['id']!r} (first on {unit} {original})"
    if unit == "line":
        raise InputError(path, second, "id", message)
    raise InputError(path, None, "id", f"row {second}: {message}")


def _raise_if_empty(frame, path: str, kind: str) -> None:
    if not frame.limit(1).count():
        raise InputError(path, None, None, f"the file is empty; expected one {kind} per line")


def read_events(spark, path: str, cache: bool = True):
    """The events of a JSONL or Parquet file as a validated frame (ord, id, attributes)."""
    path = str(path)
    if is_parquet(path):
        frame, numbered = _read_parquet_events(spark, path)
        unit = "row"
    else:
        numbered = numbered_text(spark, path)
        parsed = numbered.mapInArrow(_decode_events, f"{EVENTS_DDL}, {_PARSED_TAIL}")
        if cache:
            parsed = parsed.cache()
        raise_first_error(parsed, numbered, path, "line")
        frame = parsed.select("ord", "id", "attributes")
        unit = "line"
    _raise_if_empty(frame, path, "event")
    _raise_duplicate(frame, numbered, path, "event", unit)
    return frame


def read_subscriptions(spark, path: str, cache: bool = True):
    """The subscriptions of a JSONL or Parquet file as a validated frame (ord, id, constraints)."""
    from pyspark.sql import functions as F

    path = str(path)
    if is_parquet(path):
        source = _read_parquet(spark, path)
        _require_columns(source, path, {"id": "string", "filter": "string"})
        numbered = source.select(F.monotonically_increasing_id().alias("ord"), "id", "filter")
        unit = "row"
    else:
        numbered = numbered_text(spark, path)
        unit = "line"
    parsed = numbered.mapInArrow(_decode_subscriptions, f"{SUBSCRIPTIONS_DDL}, {_PARSED_TAIL}")
    if cache:
        parsed = parsed.cache()
    raise_first_error(parsed, numbered, path, unit)
    frame = parsed.select("ord", "id", "constraints")
    _raise_if_empty(frame, path, "subscription")
    _raise_duplicate(frame, numbered, path, "subscription", unit)
    return frame


def _read_parquet(spark, path: str):
    readable = spark_path(path)
    try:
        return spark.read.parquet(readable)
    except Exception as exc:
        raise InputError(path, None, None, f"cannot read as Parquet: {describe_failure(exc).replace(readable, path)}") from None


def _require_columns(frame, path: str, wanted: dict[str, str]) -> None:
    have = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
    for name, ddl in wanted.items():
        if name not in have:
            raise InputError(path, None, name, f"missing column; expected {ddl}")
        if have[name] != ddl.replace(" ", ""):
            raise InputError(path, None, name, f"column has type {have[name]}; expected {ddl}")


def _read_parquet_events(spark, path: str):
    """Native validation of a Parquet events file: DEF-PIPE-1's rules, as column expressions."""
    from pyspark.sql import functions as F

    source = _read_parquet(spark, path)
    _require_columns(source, path, {"id": "string", "attributes": f"array<{ATTRIBUTE_DDL}>"})
    numbered = source.select(F.monotonically_increasing_id().alias("ord"), "id", "attributes")

    def attribute_problem(a):
        """"part<TAB>message" for the first thing wrong with attribute a, else null."""
        present = [a[v].isNotNull() for v in VALUE_FIELDS]
        set_count = sum(F.when(p, 1).otherwise(0) for p in present)
        right_slot = F.coalesce(*[F.when(a["type"] == t, present[k]) for k, t in enumerate(VALUE_FIELDS)],
                                F.lit(False))
        return (F.when(a["name"].isNull() | (a["name"] == ""), F.lit("name\tmust be a non-empty string"))
                .when(~a["type"].isin(*VALUE_FIELDS) | a["type"].isNull(),
                      F.concat(F.lit("type\tunknown type "), F.coalesce(a["type"], F.lit("null")),
                               F.lit("; expected one of int, float, string, bool")))
                .when((set_count != 1) | ~right_slot,
                      F.concat(F.lit("value\texactly the '"), a["type"], F.lit("' value field must be set")))
                .when(F.isnan(a["float"]), F.lit("value\tfloat value is NaN; NaN is not allowed"))
                .when(F.abs(a["float"]) == float("inf"), F.lit("value\tinfinities are not allowed")))

    def described(a):
        problem = attribute_problem(a)
        return F.when(problem.isNotNull(), F.concat(F.lit("attributes."), F.coalesce(a["name"], F.lit("")),
                                                    F.lit("."), problem))

    problems = F.filter(F.transform("attributes", described), lambda p: p.isNotNull())
    names = F.transform("attributes", lambda a: a["name"])
    checked = numbered.select(
        "ord", "id", "attributes",
        F.when(F.col("id").isNull() | (F.col("id") == ""), F.lit("id\tmust be a non-empty string"))
        .when(F.col("attributes").isNull(), F.lit("attributes\tmissing (null)"))
        .when(F.size(problems) > 0, problems[0])
        .when(F.size(F.array_distinct(names)) != F.size(names),
              F.lit("attributes\tduplicate attribute name; an event holds each name at most once"))
        .alias("problem"))
    bad = checked.where(F.col("problem").isNotNull()).orderBy("ord").limit(1).collect()
    if bad:
        field, _, message = bad[0]["problem"].rpartition("\t")  # messages hold no tab; names might
        raise InputError(path, None, field, f"row {line_of(numbered, bad[0]['ord'])}: {message}")
    # DEF-DATA-2: -0.0 and +0.0 are one float value, stored as +0.0.
    normal = F.transform("attributes", lambda a: a.withField(
        "float", F.when(a["float"] == 0.0, F.lit(0.0)).otherwise(a["float"])))
    return numbered.select("ord", "id", normal.alias("attributes")), numbered


# --- writing ---------------------------------------------------------------------------

#: How Python's json.dumps (ensure_ascii=False) escapes a string: the backslash,
#: the quote, and every control character below U+0020, in lowercase hex. Spark's
#: to_json writes the hex in capitals (\u001B), so the lines are built here.
JSON_ESCAPES = [("\\", "\\\\"), ('"', '\\"'), ("\b", "\\b"), ("\f", "\\f"), ("\n", "\\n"), ("\r", "\\r"),
                ("\t", "\\t")] + [(chr(c), f"\\u{c:04x}") for c in range(0x20) if chr(c) not in "\b\f\n\r\t"]


def json_string(column):
    """A string column as a JSON string literal, byte for byte as Python writes it."""
    from pyspark.sql import functions as F

    for raw, escaped in JSON_ESCAPES:  # the backslash first, so no escape is escaped twice
        column = F.replace(column, F.lit(raw), F.lit(escaped))
    return F.concat(F.lit('"'), column, F.lit('"'))


def result_lines(results):
    """The match-result lines of spec/formats.md, as Python's json.dumps writes them:
    {"event": "e1", "subscriptions": ["s1", "s7"]}."""
    from pyspark.sql import functions as F

    subs = F.concat(F.lit("["), F.array_join(F.transform("subscriptions", json_string), ", "), F.lit("]"))
    return results.select("ord", F.concat(F.lit('{"event": '), json_string(F.col("event")), F.lit(', "subscriptions": '), subs,
                                          F.lit("}")).alias("value"))


def write_results(results, path: str, stream_to_driver: bool = False) -> None:
    """Write match results (ord, event, subscriptions) in input order: Parquet
    for a `.parquet` path, else one JSONL file. A local target appears only
    when complete (written beside it, then renamed).

    `stream_to_driver` (a cluster, whose executors cannot see the driver's
    disk): a local JSONL target is filled from `toLocalIterator`, one
    partition at a time, so the driver never holds more than one partition."""
    path = str(path)
    ordered = results.orderBy("ord")
    lines = result_lines(results).orderBy("ord").select("value")
    if is_uri(path):  # shared storage: the executors write it
        if is_parquet(path):
            ordered.select("event", "subscriptions").write.mode("overwrite").parquet(path)
        else:
            lines.write.mode("overwrite").text(path)
        return
    target = Path(path)
    with _staging(target) as tmp:
        if is_parquet(path):
            ordered.select("event", "subscriptions").write.mode("overwrite").parquet(str(tmp / "out"))
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        elif stream_to_driver:
            with open(tmp / "out", "w", encoding="utf-8") as handle:
                for row in lines.toLocalIterator():
                    handle.write(row["value"] + "\n")
        else:
            lines.write.mode("overwrite").text(str(tmp / "parts"))
            with open(tmp / "out", "wb") as joined:
                for part in sorted((tmp / "parts").glob("part-*")):
                    with open(part, "rb") as handle:
                        shutil.copyfileobj(handle, joined)
        os.replace(tmp / "out", target)


@contextlib.contextmanager
def _staging(target: Path):
    """A temporary directory beside `target` (same filesystem, so the final
    os.replace is atomic), removed afterwards whatever happens."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent if str(target.parent) else "."))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
