"""Trace conformance checking on Spark (spec/07-pipeline.md DEF-TRACE-1 ..
DEF-TRACE-4): duplicates, spurious deliveries and missed deliveries of a
simulator trace (DEF-NET-9), with a grace window.

Lines are decoded by the shared trace parser (`subsum.core.tracefile`) in
Python workers; everything after that is native: subscription intervals by
a join of subscribe and unsubscribe records, the publications matched
against the distinct filters by the counting plan (`match`), and the three
checks as joins and anti-joins. Times are the trace's simulated
milliseconds; `grace_ms` and `window_ms` are in the same unit.
"""

from __future__ import annotations

import attrs
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from subsum.core.errors import InputError
from subsum.core.jsonio import RecordError
from subsum.core.tracefile import duplicate_publication
from subsum.impl.spark import io as sio
from subsum.impl.spark.match import all_matching_pairs

CAUSES = ("duplicate", "spurious", "missed")
TRACE_DDL = (f"ord bigint, time double, kind string, client bigint, broker bigint, event bigint, filter string, "
             f"constraints array<{sio.CONSTRAINT_DDL}>, attributes array<{sio.ATTRIBUTE_DDL}>, "
             "err_field string, err_message string")


def arrow_schema():
    import pyarrow as pa

    base = sio.arrow_schema("event")
    constraint = sio.arrow_schema("subscription").field("constraints")
    return pa.schema([pa.field("ord", pa.int64()), pa.field("time", pa.float64()), pa.field("kind", pa.string()),
                      pa.field("client", pa.int64()), pa.field("broker", pa.int64()), pa.field("event", pa.int64()),
                      pa.field("filter", pa.string()), constraint, base.field("attributes"),
                      base.field("err_field"), base.field("err_message")])


def _decode_trace(batches):
    """mapInArrow body: (ord, value) lines -> trace rows or error rows."""
    import pyarrow as pa

    from subsum.core.tracefile import parse_trace_line

    schema = arrow_schema()
    attribute_keys = ("name", "type", *sio.VALUE_FIELDS)
    constraint_keys = ("name", "type", "op", *sio.VALUE_FIELDS)
    for batch in batches:
        out = {name: [] for name in schema.names}
        for ord_, line in zip(batch.column("ord").to_pylist(), batch.column("value").to_pylist()):
            row = dict.fromkeys(schema.names)
            row["ord"] = ord_
            try:
                record = parse_trace_line(line)
                if record is None:
                    continue
                row.update(time=record.time, kind=record.kind, client=record.client, broker=record.broker,
                           event=record.event, filter=record.filter_text)
                if record.filter is not None:
                    row["constraints"] = [dict(zip(constraint_keys, r)) for r in sio.constraint_rows(record.filter)]
                if record.attributes is not None:
                    row["attributes"] = [dict(zip(attribute_keys, r)) for r in sio.attribute_rows(record.attributes)]
            except RecordError as exc:
                row["err_field"], row["err_message"] = exc.field, exc.message
            for name in schema.names:
                out[name].append(row[name])
        yield pa.RecordBatch.from_pydict(out, schema=schema)


def read_trace(spark, path: str) -> DataFrame:
    """The trace's records as a validated, cached frame; InputError names the file, line and field."""
    path = str(path)
    numbered = sio.numbered_text(spark, path)
    parsed = numbered.mapInArrow(_decode_trace, TRACE_DDL).cache()
    sio.raise_first_error(parsed, numbered, path, "line")
    if not parsed.limit(1).count():
        raise InputError(path, None, None, "the file is empty; expected one trace record per line")
    _raise_duplicate_publication(parsed, numbered, path)
    return parsed.drop("err_field", "err_message")


def _raise_duplicate_publication(parsed: DataFrame, numbered: DataFrame, path: str) -> None:
    """spec/07 (one publication per event id), natively: the first line that publishes an event id already published."""
    publishes = parsed.where(F.col("kind") == "publish").select("ord", "event")
    repeated = (publishes.groupBy("event").agg(F.sort_array(F.collect_list("ord")).alias("ords"))
                .where(F.size("ords") > 1).orderBy(F.element_at("ords", 2)).limit(1).collect())
    if repeated:
        first, second = repeated[0]["ords"][0], repeated[0]["ords"][1]
        raise InputError(path, sio.line_of(numbered, second), "event",
                         duplicate_publication(repeated[0]["event"], sio.line_of(numbered, first)))


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
