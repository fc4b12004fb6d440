"""Reading subscriptions and events into Spark DataFrames, writing results
(spec/07-pipeline.md DEF-PIPE-1, DEF-PIPE-2). No job runs Python on the
executors: a cluster needs nothing but Spark.

Two input formats, told apart by the path's suffix:
- JSONL (the formats of spec/formats.md). Events are parsed and checked by
  Spark itself (`jsonl`); the rare line those checks cannot vouch for goes
  to the driver, to the in-process reader (`subsum.core.jsonio`), which
  also describes the first bad line.
- Parquet (`.parquet`, a file or a directory). Events are read natively and
  validated with column expressions.
Subscriptions, in either format, are read on the driver by the in-process
reader (they are few next to the events, and filter texts need subsum's
parser; a local Parquet file is read by pyarrow, without a Spark job), then sent to the cluster as Arrow data. The frames they give, the
ones every later step uses, are described in `frames`.

Bad input raises `InputError` naming the file, the line (JSONL) or row
(Parquet), and the field, before anything is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from subsum.core.errors import InputError
from subsum.core.jsonio import RecordError, loads_json, parse_event_line, read_subscription_lines, subscription_from_json
from subsum.core.jsonio import read_subscriptions as read_subscriptions_jsonl
from subsum.core.types import Subscription
from subsum.impl.spark import jsonl
from subsum.impl.spark.frames import ATTRIBUTE_DDL, EVENTS_DDL, VALUE_FIELDS, attribute_rows, subscriptions_frame
from subsum.impl.spark.inputs import is_uri, is_parquet, spark_path
from subsum.impl.spark.session import describe_failure


# --- reading ---------------------------------------------------------------------------

def numbered_text(spark, path: str):
    """The lines of the user's file `path` (read through `spark_path`), numbered in order: ord, value."""
    from pyspark.sql import functions as F

    readable = spark_path(path)
    try:
        text = spark.read.format("text").option("lineSep", "\n").load(readable)
    except Exception as exc:  # AnalysisException and friends
        raise InputError(path, None, None, f"cannot read: {str(exc).splitlines()[0]}") from None
    # monotonically_increasing_id grows with the line order of one file read in order.
    return text.select(F.monotonically_increasing_id().alias("ord"), "value")


def _event_row(line: bytes) -> tuple | None:
    parsed = parse_event_line(line)
    return None if parsed is None else (parsed[0], attribute_rows(parsed[1]))


def _duplicate_id(kind: str, unit: str):
    return lambda ident, first: ("id", f"duplicate {kind} id {ident!r} (first on {unit} {first})")


def read_events(spark, path: str):
    """The events of a JSONL or Parquet file as a validated frame (ord, id, attributes)."""
    from pyspark.sql import functions as F

    path = str(path)
    if is_parquet(path):
        return _read_parquet_events(spark, path)
    numbered = numbered_text(spark, path)
    lines = jsonl.parsed_lines(numbered)
    columns, plain = jsonl.event_columns(F.col("top"))
    decoded = lines.select("ord", "value", plain.alias("plain"), *columns)
    return jsonl.settle(spark, decoded, numbered, path, columns=("id", "attributes"),
                        ddl=EVENTS_DDL.removeprefix("ord bigint, "), parse=_event_row, key="id",
                        duplicate=_duplicate_id("event", "line"), empty="the file is empty; expected one event per line")


def read_subscription_pairs(spark, path: str) -> list[tuple[str, Subscription]]:
    """The (id, Subscription) pairs of a JSONL or Parquet file, read and
    validated on the driver by the in-process reader: they are few next to
    the events, and filter texts need subsum's parser."""
    path = str(path)
    if is_parquet(path):
        return _parquet_subscriptions(spark, path)
    if is_uri(path):
        lines = (bytes(row["raw"]) for row in numbered_text(spark, path).orderBy("ord").select(
            _binary("value").alias("raw")).toLocalIterator())
        return [(s.id, s.subscription) for s in read_subscription_lines(path, lines)]
    spark_path(path)  # the checks every engine makes of a local input
    return [(s.id, s.subscription) for s in read_subscriptions_jsonl(path)]


def read_subscriptions(spark, path: str):
    """The subscriptions of a JSONL or Parquet file as a frame (ord, id,
    constraints): `read_subscription_pairs`, sent to the cluster."""
    return subscriptions_frame(spark, read_subscription_pairs(spark, path))


def _binary(name: str):
    from pyspark.sql import functions as F

    return F.col(name).cast("binary")


def _subscription_table(spark, path: str):
    """The (id, filter) columns of a Parquet subscriptions file as an Arrow
    table, in row order. A local file is read on the driver by pyarrow (no
    Spark job: the subscriptions are few, and the executors may still be
    starting); a URI by Spark, with one collect."""
    if is_uri(path):
        source = _read_parquet(spark, path)
        _require_columns(source, path, {"id": "string", "filter": "string"})
        # The scan is narrow, so partitions come back in file order.
        return source.select("id", "filter").toArrow()
    import pyarrow as pa
    import pyarrow.dataset as ds
    from pyspark.sql.pandas.types import from_arrow_type

    readable = spark_path(path)
    try:
        dataset = ds.dataset(readable, format="parquet")
        if not dataset.files:
            raise InputError(path, None, None, "the folder holds no Parquet file; expected one subscription per row")
        have = {f.name: from_arrow_type(f.type).simpleString() for f in dataset.schema}
        _require_types(have, path, {"id": "string", "filter": "string"})
        return dataset.to_table(columns=["id", "filter"])
    except (pa.ArrowException, OSError, TypeError) as exc:  # TypeError: an Arrow type Spark has no name for
        raise InputError(path, None, None, f"cannot read as Parquet: {str(exc).replace(readable, path)}") from None


def _parquet_subscriptions(spark, path: str) -> list[tuple[str, Subscription]]:
    table = _subscription_table(spark, path)
    named: list[tuple[str, Subscription]] = []
    first_row: dict[str, int] = {}
    for number, (ident, text) in enumerate(zip(table.column("id").to_pylist(), table.column("filter").to_pylist()), start=1):
        try:
            sid, subscription = _parquet_subscription(ident, text)
        except RecordError as exc:
            raise InputError(path, None, exc.field, f"row {number}: {exc.message}") from None
        if sid in first_row:
            raise InputError(path, None, "id", f"row {number}: duplicate subscription id {sid!r} "
                             f"(first on row {first_row[sid]})")
        first_row[sid] = number
        named.append((sid, subscription))
    if not named:
        raise InputError(path, None, None, "the file is empty; expected one subscription per line")
    return named


def _parquet_subscription(ident, text) -> tuple[str, Subscription]:
    """One Parquet row (id, filter) through the JSONL validator: one set of rules for every format."""
    if ident is None:
        raise RecordError("id", "missing (null)")
    if text is None:
        raise RecordError("filter", "missing (null)")
    return subscription_from_json(loads_json(json.dumps({"id": ident, "filter": text})))


def _read_parquet(spark, path: str):
    readable = spark_path(path)
    try:
        return spark.read.parquet(readable)
    except Exception as exc:
        raise InputError(path, None, None, f"cannot read as Parquet: {describe_failure(exc).replace(readable, path)}") from None


def _require_columns(frame, path: str, wanted: dict[str, str]) -> None:
    _require_types({f.name: f.dataType.simpleString() for f in frame.schema.fields}, path, wanted)


def _require_types(have: dict[str, str], path: str, wanted: dict[str, str]) -> None:
    """InputError for the first column of `wanted` (name: Spark DDL type) missing from, or typed otherwise in, `have`."""
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
    def attribute_ok(a):
        present = [a[v].isNotNull() for v in VALUE_FIELDS]
        one_slot = sum(F.when(p, 1).otherwise(0) for p in present) == 1
        right_slot = F.coalesce(*[F.when(a["type"] == t, present[k]) for k, t in enumerate(VALUE_FIELDS)], F.lit(False))
        return F.coalesce((a["name"] != "") & a["type"].isin(*VALUE_FIELDS) & one_slot & right_slot
                          & ~F.isnan(F.coalesce(a["float"], F.lit(0.0))) & (F.abs(F.coalesce(a["float"], F.lit(0.0))) != float("inf")),
                          F.lit(False))

    # One cheap test per row in the scan; the message is built for the first failing row only.
    plain = F.coalesce((F.col("id") != "") & F.forall("attributes", attribute_ok)
                       & (F.size(F.array_distinct(names)) == F.size("attributes")), F.lit(False))
    stats = jsonl.scan(numbered.select("ord", "id", plain.alias("plain")), "id")
    bad = None
    if stats["suspect"] is not None:
        problem = checked.where(F.col("ord") == stats["suspect"]).first()["problem"]
        field, _, message = problem.rpartition("\t")  # messages hold no tab; names might
        bad = (stats["suspect"], field, message)
    if stats["repeat"]:
        repeat = jsonl.first_repeat(numbered.where(plain), "id")
        if repeat is not None and (bad is None or repeat[1] < bad[0]):
            field, message = _duplicate_id("event", "row")(repeat[2], jsonl.line_of(numbered, repeat[0]))
            bad = (repeat[1], field, message)
    if bad is not None:
        raise InputError(path, None, bad[1], f"row {jsonl.line_of(numbered, bad[0])}: {bad[2]}")
    if not stats["rows"]:
        raise InputError(path, None, None, "the file is empty; expected one event per line")
    # DEF-DATA-2: -0.0 and +0.0 are one float value, stored as +0.0.
    normal = F.transform("attributes", lambda a: a.withField(
        "float", F.when(a["float"] == 0.0, F.lit(0.0)).otherwise(a["float"])))
    return numbered.select("ord", "id", normal.alias("attributes"))


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


#: Logical plan nodes that keep each row in its partition and in its place there.
ORDER_KEEPING = frozenset({"Project", "Filter", "LogicalRelation", "LocalRelation", "LogicalRDD", "MapInArrow"})


def in_partition_order(frame) -> bool:
    """Whether `frame`'s rows come out in `ord` order, partition after
    partition: its optimized plan holds only nodes that keep a row in its
    partition and in its place (`ORDER_KEEPING`) above the scan that
    numbered the rows (ord is Spark's monotonically_increasing_id, which
    grows with the partition index, or the ord of rows the driver sent in
    order). A union, join, aggregate or sort answers False."""
    def names(node) -> list[str]:
        children = node.children()
        return [node.nodeName(), *(n for i in range(children.size()) for n in names(children.apply(i)))]

    return set(names(frame._jdf.queryExecution().optimizedPlan())) <= ORDER_KEEPING


def result_lines(results):
    """The match-result lines of spec/formats.md, as Python's json.dumps writes them:
    {"event": "e1", "subscriptions": ["s1", "s7"]}."""
    from pyspark.sql import functions as F

    subs = F.concat(F.lit("["), F.array_join(F.transform("subscriptions", json_string), ", "), F.lit("]"))
    return results.select("ord", F.concat(F.lit('{"event": '), json_string(F.col("event")), F.lit(', "subscriptions": '), subs,
                                          F.lit("}")).alias("value"))


def write_results(results, path: str, stream_to_driver: bool = False, in_order: bool = False) -> None:
    """Write match results (ord, event, subscriptions) in input order: Parquet
    for a `.parquet` path, else one JSONL file. A local target appears only
    when complete (written beside it, then renamed).

    `stream_to_driver` (a cluster, whose executors cannot see the driver's
    disk): a local target is filled from `toLocalIterator`, one partition
    at a time, so the driver never holds more than one partition (Parquet:
    one file, written by pyarrow). `in_order`: the rows are in input order
    partition by partition already (`in_partition_order`), and are not sorted."""
    path = str(path)
    ordered = results if in_order else results.orderBy("ord")
    lines = (result_lines(results) if in_order else result_lines(results).orderBy("ord")).select("value")
    if is_uri(path):  # shared storage: the executors write it
        if is_parquet(path):
            ordered.select("event", "subscriptions").write.mode("overwrite").parquet(path)
        else:
            lines.write.mode("overwrite").text(path)
        return
    target = Path(path)
    with _staging(target) as tmp:
        if is_parquet(path) and stream_to_driver:
            _stream_parquet(ordered.select("event", "subscriptions"), tmp / "out")
            if target.is_dir():
                shutil.rmtree(target)
        elif is_parquet(path):
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


def _stream_parquet(results, target: Path, batch: int = 65_536) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field("event", pa.string()), pa.field("subscriptions", pa.list_(pa.string()))])
    with pq.ParquetWriter(str(target), schema) as writer:
        rows: list[dict] = []
        for row in results.toLocalIterator():
            rows.append({"event": row["event"], "subscriptions": row["subscriptions"]})
            if len(rows) == batch:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                rows = []
        writer.write_table(pa.Table.from_pylist(rows, schema=schema))


@contextlib.contextmanager
def _staging(target: Path):
    """A temporary directory beside `target` (same filesystem, so the final
    os.replace is atomic), removed afterwards whatever happens."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent if str(target.parent) else "."))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
