"""`subsum match`: match a subscriptions file against an events file with
any engine and write one result line per event (spec/03-matching.md,
spec/07-pipeline.md, spec/11-plugins.md).

`match_files` is the one place that chooses how: the reference model, an
in-process engine, a plug-in engine, or Spark. Every way reads the same
files, writes the same lines, and returns the engine's counters and
timings.
"""

from __future__ import annotations

import time
from typing import Callable

import attrs

from subsum.core.errors import EngineError, SubsumError
from subsum.core.jsonio import match_result_lines, read_events, read_subscriptions
from subsum.core.outputs import write_lines_atomically
from subsum.core.plugins import running
from subsum.impl.matching import ENGINES, engine_class, make_engine
from subsum.impl.spark import PLANS  # noqa: F401 - the CLI's --plan choices
from subsum.impl.spark.session import job_frame, session_for
from subsum.model.semantics import match_batch

#: every name `--engine` takes besides a plug-in: the in-process engines, the reference model, Spark
ENGINE_NAMES = (*ENGINES, "model", "spark")


def match_files(subs_path: str, events_path: str, engine: str, output_path: str | None, emit_line: Callable[[str], None], *,
                master: str | None = None, spark_conf: tuple[str, ...] = (), spark_timeout: float = 120, counters: bool = False,
                progress: bool = False, plan: str | None = None) -> dict:
    """Match and write the result lines (to `output_path`, or one by one to
    `emit_line`); the engine's counters and timings. `counters`: Spark also
    counts its results (extra jobs). `plan`: Spark's plan, sql, kernel or
    auto (the default; spec/07-pipeline.md DEF-PIPE-4)."""
    if engine == "spark":
        return match_on_spark(subs_path, events_path, output_path, emit_line, SparkRun(
            master, spark_conf, spark_timeout, plan or "auto", counters, progress))
    if master or spark_conf or plan:
        raise SubsumError("--master, --conf and --plan apply only to --engine spark")
    if output_path and output_path.rstrip("/").endswith(".parquet"):
        raise SubsumError(f"--output {output_path}: Parquet output needs --engine spark; the in-process engines write JSONL")
    reading = time.perf_counter()
    subscriptions = read_subscriptions(subs_path)
    events = read_events(events_path)
    pairs = [(s.id, s.subscription) for s in subscriptions]
    batch = [e.event for e in events]
    started = time.perf_counter()
    if engine == "model":
        built = time.perf_counter()
        matched = match_batch(pairs, batch)
        stats: dict = {"events": len(batch), "matches": sum(map(len, matched))}
    elif engine in ENGINES:
        matcher = make_engine(engine, pairs)
        matcher.prepare()
        built = time.perf_counter()
        matched = matcher.match_batch(batch)
        stats = matcher.stats.to_json()
    else:
        built = started
        matched, stats = match_with_plugin(engine, pairs, batch)
    finished = time.perf_counter()
    lines = list(match_result_lines((e.id, sorted(ids)) for e, ids in zip(events, matched)))
    if output_path:
        write_lines_atomically(output_path, lines)
    else:
        for line in lines:
            emit_line(line)
    return {"engine": engine, "subscriptions": len(pairs), "read_seconds": round(started - reading, 6),
            "build_seconds": round(built - started, 6), "match_seconds": round(finished - built, 6),
            "write_seconds": round(time.perf_counter() - finished, 6), **stats}


def match_with_plugin(engine: str, pairs: list, batch: list) -> tuple[list[set[str]], dict]:
    """Match with a plug-in engine (spec/11-plugins.md): its failure is an
    engine failure (exit 3), and so is a result of the wrong shape."""
    cls = engine_class(engine)
    with running("engine", engine):
        matcher = cls(pairs)
        results = list(matcher.match_batch(batch))
    if len(results) != len(batch):
        raise EngineError(f"engine {engine} returned {len(results)} results for {len(batch)} events")
    known = {sid for sid, _ in pairs}
    for i, ids in enumerate(results):
        if not isinstance(ids, (set, frozenset)) or not ids <= known:
            raise EngineError(f"engine {engine}: result {i + 1} is {ids!r:.80}; expected a set of the subscriptions' ids")
    matched = [set(ids) for ids in results]
    to_json = getattr(getattr(matcher, "stats", None), "to_json", None)
    counters = to_json() if callable(to_json) else {"events": len(batch), "matches": sum(map(len, matched))}
    return matched, counters


@attrs.frozen
class SparkRun:
    """How `subsum match --engine spark` runs: the master, the settings, the
    job timeout, the plan (sql, kernel or auto), whether it counts its
    results, whether it shows Spark's progress bar."""

    master: str | None = None
    conf: tuple[str, ...] = ()
    timeout: float = 120
    plan: str = "auto"
    counters: bool = False
    progress: bool = False


def match_on_spark(subs_path: str, events_path: str, output_path: str | None, emit_line: Callable[[str], None],
                   run: SparkRun) -> dict:
    """`subsum match --engine spark`: the session, then its work
    (`impl.spark.job.match_job`: read, validate, choose the plan, match,
    write; spec/07-pipeline.md)."""
    from subsum.impl.spark.job import match_job  # it loads pyspark: only for Spark

    started = time.perf_counter()
    spark = session_for(run.master, run.conf, inputs=(subs_path, events_path), progress=run.progress)
    ready = time.perf_counter()
    with job_frame(spark, run.timeout):
        stats = match_job(spark, subs_path, events_path, output_path, emit_line, run.plan, run.counters)
    return {"engine": stats.pop("engine"), "master": stats.pop("master"), "session_seconds": round(ready - started, 3), **stats}
