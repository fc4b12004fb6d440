"""`subsum match --engine spark`'s work in a running session
(spec/07-pipeline.md): read and validate the inputs, choose the plan
(DEF-PIPE-3 or DEF-PIPE-4), match, write in input order. `subsum.app.match`
starts the session around it; `subsum bench spark` times it."""

from __future__ import annotations

import time
from typing import Callable

from subsum.impl.spark import io as sio
from subsum.impl.spark.frames import subscriptions_frame
from subsum.impl.spark.kernel import choose_plan, kernel_match
from subsum.impl.spark.match import match as sql_match
from subsum.impl.spark.match import result_counters
from subsum.impl.spark.session import local_cores, spread_file_splits


def match_job(spark, subs_path: str, events_path: str, output_path: str | None, emit_line: Callable[[str], None],
              plan: str = "auto", counters: bool = False) -> dict:
    """Match the files and write the result lines (to `output_path`, or one
    by one to `emit_line`); the plan taken and the timings. `counters`:
    also count the results (extra jobs)."""
    started = time.perf_counter()
    pairs = sio.read_subscription_pairs(spark, subs_path)
    spread_file_splits(spark)
    events = sio.read_events(spark, events_path)
    read = time.perf_counter()
    chosen, probe = choose_plan(spark, plan)  # after the inputs: bad input costs no probe
    probed = time.perf_counter()
    results = kernel_match(spark, pairs, events) if chosen == "kernel" else sql_match(subscriptions_frame(spark, pairs), events)
    in_order = chosen == "kernel" and sio.in_partition_order(results)  # the SQL plan's joins reorder rows
    if counters:
        results = results.cache()
    if output_path:
        sio.write_results(results, output_path, stream_to_driver=local_cores(spark.sparkContext.master) is None,
                          in_order=in_order)
    else:
        lines = sio.result_lines(results)
        for row in (lines if in_order else lines.orderBy("ord")).select("value").toLocalIterator():
            emit_line(row["value"])
    finished = time.perf_counter()
    stats = {"engine": "spark", "master": spark.sparkContext.master, "plan": chosen, "plan_asked": plan,
             "read_seconds": round(read - started, 3), "probe_seconds": round(probed - read, 3),
             "match_seconds": round(finished - probed, 3)}
    if probe is not None:
        stats["plan_reason"] = probe.problem or "the executors run subsum's kernel"
        if probe.warm_seconds is not None:
            stats["executor_warm_seconds"] = round(probe.warm_seconds, 3)
    if counters:
        stats.update(result_counters(subscriptions_frame(spark, pairs), events, results))
    return stats
