"""Trace conformance checking on Spark (spec/07-pipeline.md DEF-TRACE-1 ..
DEF-TRACE-4): duplicates, spurious deliveries and missed deliveries of a
simulator trace (DEF-NET-9), with a grace window.

Lines are decoded natively (`jsonl`: Spark's JSON parser and column
checks; the first bad line is described on the driver by the shared trace
parser, `subsum.core.tracefile`, so both checkers read alike); filter texts
are parsed on the driver. Everything after that is native: subscription intervals by
a join of subscribe and unsubscribe records, the publications matched
against the distinct filters by the counting plan (`match`), and the three
checks as joins and anti-joins. Times are the trace's simulated
milliseconds; `grace_ms` and `window_ms` are in the same unit.
"""

from __future__ import annotations

import attrs
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from subsum.core.jsonio import RecordError
from subsum.core.tracefile import FIELDS, duplicate_publication, filter_of, parse_trace_line
from subsum.impl.spark import frames
from subsum.impl.spark import io as sio
from subsum.impl.spark import jsonl
from subsum.impl.spark.match import all_matching_pairs

CAUSES = ("duplicate", "spurious", "missed")
RECORD_DDL = (f"time double, kind string, client bigint, broker bigint, event bigint, filter string, "
              f"constraints array<{frames.CONSTRAINT_DDL}>, attributes array<{frames.ATTRIBUTE_DDL}>, published bigint")
RECORD_COLUMNS = ("time", "kind", "client", "broker", "event", "filter", "constraints", "attributes", "published")
FILTERS_DDL = f"filter_raw string, filter string, constraints array<{frames.CONSTRAINT_DDL}>"


def record_columns(top: Column, dashed: Column) -> tuple[list[Column], Column]:
    """The native decoding of a trace line's object (DEF-NET-9): the columns
    of RECORD_COLUMNS but for the filter's (filter_raw: its text, parsed on
    the driver), and whether the line is plain (see `jsonl`)."""
    kind = jsonl.field(top, "kind", "string")
    keys = F.lit(False)
    for name, fields in FIELDS.items():
        keys = F.when(kind == name, jsonl.keys_are(top, ("time", "kind", *fields))).otherwise(keys)
    time = jsonl.field(top, "time", "float")
    ok = keys & (time >= 0) & (F.abs(time) != float("inf")) & ~((time == 0) & dashed)  # -0.0 stays Python's
    values = {}
    for name in ("client", "broker", "event", "a", "b"):
        values[name] = jsonl.field(top, name, "int")
        ok = ok & (~kind.isin(*[k for k, f in FIELDS.items() if name in f]) | values[name].isNotNull())
    ok = ok & ((kind != "link") | jsonl.field(top, "up", "bool").isNotNull())
    filter_raw = jsonl.field(top, "filter", "string")
    ok = ok & (~kind.isin("subscribe", "unsubscribe") | filter_raw.isNotNull())
    attributes, attributes_ok = jsonl.attributes(F.element_at(top, F.lit("attributes")))
    ok = ok & ((kind != "publish") | attributes_ok)
    columns = [time.alias("time"), kind.alias("kind"), *[values[n].alias(n) for n in ("client", "broker", "event")],
               filter_raw.alias("filter_raw"), F.when(kind == "publish", attributes).alias("attributes"),
               F.when(kind == "publish", values["event"]).alias("published")]
    return columns, F.coalesce(ok, F.lit(False))


def _record_row(line: bytes) -> tuple | None:
    record = parse_trace_line(line)
    if record is None:
        return None
    return (record.time, record.kind, record.client, record.broker, record.event, record.filter_text,
            None if record.filter is None else frames.constraint_rows(record.filter),
            None if record.attributes is None else frames.attribute_rows(record.attributes),
            record.event if record.kind == "publish" else None)


def _filters(spark, texts) -> DataFrame:
    """The filter texts that parse, with their normal form and constraints
    (parsed on the driver: there are few distinct filters)."""
    rows = []
    for text in texts:
        try:
            subscription, normal = filter_of(text)
        except RecordError:
            continue  # its lines are suspects: the driver describes the first
        rows.append((text, normal, frames.constraint_rows(subscription)))
    return frames.local_frame(spark, FILTERS_DDL, rows)


def read_trace(spark, path: str) -> DataFrame:
    """The trace's records as a validated, cached frame; InputError names the file, line and field."""
    path = str(path)
    numbered = sio.numbered_text(spark, path)
    columns, native = record_columns(F.col("top"), F.col("dashed"))
    lines = jsonl.parsed_lines(numbered).select("ord", "value", native.alias("native"), *columns)
    texts = [row[0] for row in lines.where(F.col("native") & F.col("filter_raw").isNotNull())
             .select("filter_raw").distinct().collect()]
    decoded = (lines.join(F.broadcast(_filters(spark, texts)), "filter_raw", "left")
               .withColumn("plain", F.col("native") & (F.col("filter_raw").isNull() | F.col("filter").isNotNull())))
    frame = jsonl.settle(spark, decoded, numbered, path, columns=RECORD_COLUMNS, ddl=RECORD_DDL, parse=_record_row,
                         key="published", duplicate=lambda event, first: ("event", duplicate_publication(event, first)),
                         empty="the file is empty; expected one trace record per line")
    return frame.drop("published").cache()


def intervals(records: DataFrame) -> DataFrame:
    """DEF-TRACE-1: (client, filter, start, end); end is null when never cancelled."""
    subs = records.where(F.col("kind") == "subscribe").select("ord", "client", "filter", F.col("time").alias("start"))
    unsubs = records.where(F.col("kind") == "unsubscribe").select(
        F.col("ord").alias("u_ord"), "client", "filter", F.col("time").alias("u_time"))
    first_end = (subs.join(unsubs, ["client", "filter"], "left")
                 .where(F.col("u_ord").isNull() | (F.col("u_ord") > F.col("ord")))
                 .groupBy("ord", "client", "filter", "start")
                 .agg(F.min_by("u_time", "u_ord").alias("end")))
    return first_end.select("client", "filter", "start", "end")


@attrs.frozen
class TraceReport:
    violations: DataFrame  # cause, event, client, time, window_start
    counts: dict  # cause -> number
    totals: dict  # records, publications, deliveries, subscribe records


def check(records: DataFrame, grace_ms: float, window_ms: float) -> TraceReport:
    """DEF-TRACE-3 on Spark: the violations of a trace and their counts."""
    assert grace_ms >= 0 and window_ms > 0
    g = F.lit(float(grace_ms))
    pubs = records.where(F.col("kind") == "publish").select(
        "event", F.col("client").alias("publisher"), F.col("time").alias("t_p"), "attributes")
    deliveries = records.where(F.col("kind") == "deliver").select("ord", "event", "client", "time")
    held = intervals(records)
    filters = (records.where(F.col("kind") == "subscribe").groupBy("filter")
               .agg(F.first("constraints").alias("constraints"))
               .select(F.lit(0).cast("bigint").alias("ord"), F.col("filter").alias("id"), "constraints"))
    events = pubs.select(F.col("event").alias("ord"), F.col("event").cast("string").alias("id"), "attributes")
    matched = all_matching_pairs(filters, events).select(F.col("ord").alias("event"), F.col("sid").alias("filter"))
    candidates = (matched.join(held, "filter").join(pubs.select("event", "publisher", "t_p"), "event")
                  .select("event", "client", "publisher", "t_p", "start", "end"))
    end_or_inf = F.coalesce(F.col("end"), F.lit(float("inf")))
    justified = candidates.where((F.col("start") <= F.col("t_p") + g) & (end_or_inf >= F.col("t_p") - g)) \
        .select("event", "client").distinct()
    owed = candidates.where((F.col("client") != F.col("publisher")) & (F.col("start") <= F.col("t_p") - g)
                            & (end_or_inf >= F.col("t_p") + g)).select("event", "client", "t_p").distinct()
    rank = F.row_number().over(Window.partitionBy("event", "client").orderBy("ord"))
    duplicate = deliveries.withColumn("rank", rank).where(F.col("rank") > 1).select(
        F.lit("duplicate").alias("cause"), "event", "client", "time")
    spurious = deliveries.join(justified, ["event", "client"], "left_anti").select(
        F.lit("spurious").alias("cause"), "event", "client", "time")
    missed = owed.join(deliveries.select("event", "client"), ["event", "client"], "left_anti").select(
        F.lit("missed").alias("cause"), "event", "client", F.col("t_p").alias("time"))
    violations = (duplicate.unionByName(spurious).unionByName(missed)
                  .withColumn("window_start", F.floor(F.col("time") / window_ms) * window_ms)
                  .cache())
    counts = dict.fromkeys(CAUSES, 0)
    for row in violations.groupBy("cause").count().collect():  # at most three rows
        counts[row["cause"]] = row["count"]
    kinds = {row["kind"]: row["count"] for row in records.groupBy("kind").count().collect()}  # one row per kind
    totals = {"records": sum(kinds.values()), "publications": kinds.get("publish", 0),
              "deliveries": kinds.get("deliver", 0), "subscribe_records": kinds.get("subscribe", 0),
              "unsubscribe_records": kinds.get("unsubscribe", 0)}
    return TraceReport(violations, counts, totals)


def per_window(violations: DataFrame) -> DataFrame:
    """Violations counted per time window and cause: window_start, duplicate, spurious, missed."""
    return (violations.groupBy("window_start").pivot("cause", list(CAUSES)).count()
            .na.fill(0).orderBy("window_start"))


def summary(report: TraceReport, trace: str, grace_s: float, window_s: float, max_windows: int = 10_000) -> dict:
    """The report of `subsum trace-check` as JSON: totals, counts per cause,
    whether the trace is clean, and per window the counts (at most
    `max_windows` windows, in time order)."""
    windows = [row.asDict() for row in per_window(report.violations).limit(max_windows).collect()]
    return {"trace": trace, "grace_seconds": grace_s, "window_seconds": window_s, **report.totals,
            "violations": report.counts, "ok": not any(report.counts.values()),
            "windows": [{"window_start_ms": w["window_start"], **{c: w.get(c, 0) for c in CAUSES}} for w in windows]}


def write_violations(report: TraceReport, path: str) -> None:
    """The violations as Parquet, sorted by cause, event, client and time."""
    report.violations.orderBy("cause", "event", "client", "time").write.mode("overwrite").parquet(path)
