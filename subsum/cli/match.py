"""subsum match | check-filter: matching events against subscriptions
(spec/03-matching.md, spec/07-pipeline.md) and the filter syntax (spec/01)."""

from __future__ import annotations

import time

import click
from rich.markup import escape

from subsum.cli.common import (ComponentName, counter_table, distinct_files, err, json_option, output_option, spark_options, spark_session,
                               spark_work, write_json)
from subsum.core.errors import EngineError, SubsumError
from subsum.core.filters import FilterError, format_filter, parse_filter
from subsum.core.jsonio import match_result_lines, read_events, read_subscriptions, write_lines_atomically
from subsum.impl.matching import ENGINES

ENGINE_NAMES = (*ENGINES, "model", "spark")


@click.command()
@click.option("--subscriptions", "subs_path", required=True, type=click.Path(),
              help="Subscriptions: JSONL (.parquet with --engine spark).")
@click.option("--events", "events_path", required=True, type=click.Path(),
              help="Events: JSONL (.parquet with --engine spark).")
@click.option("--engine", type=ComponentName("engine", ENGINE_NAMES), default="vectorized", show_default=True,
              help="Matching engine (spec/03-matching.md, spec/07-pipeline.md). All give the same lines; "
                   "'model' is the slow reference; 'spark' runs on PySpark. Or a plug-in engine, named as module:attribute "
                   "or by a subsum.engines entry point (spec/11-plugins.md).")
@output_option("Write the result lines here (default: standard output). With --engine spark, a .parquet path writes Parquet.")
@click.option("--stats", "show_stats", is_flag=True, help="Print the engine's work counters and timings to standard error.")
@json_option("Write the engine's work counters and timings as JSON to FILE.")
@spark_options
def match(subs_path: str, events_path: str, engine: str, output_path: str | None, show_stats: bool, json_path: str | None,
          master: str | None, spark_conf: tuple[str, ...], spark_timeout: float) -> None:
    """Match events against subscriptions: one result line per event.

    Each line is {"event": ID, "subscriptions": [IDs, sorted]}, in input order.
    """
    distinct_files({"subscriptions": subs_path, "events": events_path}, {"output": output_path, "json": json_path})
    if engine == "spark":
        stats = match_on_spark(subs_path, events_path, output_path, master, spark_conf,
                               counters=show_stats or json_path is not None, timeout=spark_timeout)
    else:
        if master or spark_conf:
            raise SubsumError("--master and --conf apply only to --engine spark")
        if output_path and output_path.rstrip("/").endswith(".parquet"):
            raise SubsumError(f"--output {output_path}: Parquet output needs --engine spark; the in-process engines write JSONL")
        stats = match_in_process(subs_path, events_path, output_path, engine)
    if json_path:
        write_json(json_path, stats)
    if show_stats:
        err.print(counter_table(f"subsum match --engine {engine}", stats))


def match_in_process(subs_path: str, events_path: str, output_path: str | None, engine: str) -> dict:
    """Read, match with one in-process engine (or the model), write; the counters and timings."""
    subscriptions = read_subscriptions(subs_path)
    events = read_events(events_path)
    pairs = [(s.id, s.subscription) for s in subscriptions]
    batch = [e.event for e in events]
    started = time.perf_counter()
    if engine == "model":
        from subsum.model.semantics import match_batch

        built = time.perf_counter()
        matched = match_batch(pairs, batch)
        counters: dict = {"events": len(batch), "matches": sum(map(len, matched))}
    elif engine in ENGINES:
        from subsum.impl.matching import make_engine

        matcher = make_engine(engine, pairs)
        matcher.prepare()
        built = time.perf_counter()
        matched = matcher.match_batch(batch)
        counters = matcher.stats.to_json()
    else:
        matched, counters = match_with_plugin(engine, pairs, batch)
        built = started
    finished = time.perf_counter()
    lines = list(match_result_lines((e.id, sorted(ids)) for e, ids in zip(events, matched)))
    if output_path:
        write_lines_atomically(output_path, lines)
        err.print(f"{len(events)} events x {len(subscriptions)} subscriptions -> {escape(output_path)}")
    else:
        for line in lines:
            click.echo(line)
    return {"engine": engine, "subscriptions": len(pairs), "build_seconds": round(built - started, 6),
            "match_seconds": round(finished - built, 6), **counters}


def match_with_plugin(engine: str, pairs: list, batch: list) -> tuple[list[set[str]], dict]:
    """Match with a plug-in engine (spec/11-plugins.md): its failure is an engine failure (exit 3),
    and so is a result of the wrong shape."""
    from subsum.impl.matching import engine_class

    cls = engine_class(engine)
    try:
        matcher = cls(pairs)
        results = list(matcher.match_batch(batch))
    except Exception as exc:
        raise EngineError(f"engine {engine} failed: {type(exc).__name__}: {exc}") from exc
    if len(results) != len(batch):
        raise EngineError(f"engine {engine} returned {len(results)} results for {len(batch)} events")
    known = {sid for sid, _ in pairs}
    for i, ids in enumerate(results):
        if not isinstance(ids, (set, frozenset)) or not ids <= known:
            raise EngineError(f"engine {engine}: result {i + 1} is {ids!r:.80}; expected a set of the subscriptions' ids")
    matched = [set(ids) for ids in results]
    stats = getattr(matcher, "stats", None)
    to_json = getattr(stats, "to_json", None)
    counters = to_json() if callable(to_json) else {"events": len(batch), "matches": sum(map(len, matched))}
    return matched, counters


def match_on_spark(subs_path, events_path, output_path, master, spark_conf, counters: bool = False,
                   timeout: float = 120) -> dict:
    """`subsum match --engine spark`: read, validate, match, write (spec/07-pipeline.md).
    With `counters`, the results are cached and counted after writing (extra jobs)."""
    from subsum.impl.spark import io as sio
    from subsum.impl.spark.match import match as spark_match
    from subsum.impl.spark.match import result_counters
    from subsum.impl.spark.session import local_cores

    started = time.perf_counter()
    spark = spark_session(master, spark_conf, inputs=(subs_path, events_path))
    ready = time.perf_counter()
    with spark_work(spark, timeout):
        subscriptions = sio.read_subscriptions(spark, subs_path)
        events = sio.read_events(spark, events_path)
        read = time.perf_counter()
        results = spark_match(subscriptions, events)
        if counters:
            results = results.cache()
        if output_path:
            sio.write_results(results, output_path, stream_to_driver=local_cores(spark.sparkContext.master) is None)
            err.print(f"results -> {escape(output_path)}")
        else:
            for row in sio.result_lines(results).orderBy("ord").select("value").toLocalIterator():
                click.echo(row["value"])
        finished = time.perf_counter()
        stats = {"engine": "spark", "master": spark.sparkContext.master, "session_seconds": round(ready - started, 3),
                 "read_seconds": round(read - ready, 3), "match_seconds": round(finished - read, 3)}
        if counters:
            stats.update(result_counters(subscriptions, events, results))
    return stats


@click.command("check-filter")
@click.argument("text")
def check_filter(text: str) -> None:
    """Parse a filter and print its normal form, or explain the error (exit 2)."""
    try:
        subscription = parse_filter(text)
    except FilterError as exc:
        raise FilterSyntaxError(text, exc) from None
    click.echo(format_filter(subscription))


class FilterSyntaxError(SubsumError):
    """A filter given on the command line that does not parse: the message
    points at the column below the text."""

    def __init__(self, text: str, exc: FilterError) -> None:
        before = text[:exc.column - 1]
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        where = f"line {line}, column {column}" if "\n" in text else f"column {column}"
        super().__init__(f"{where}: {exc.message}")
        shown = text.split("\n")[line - 1]
        if shown.isprintable() and len(shown) <= 200:  # the text with a caret under the column
            self.context = (f"  {shown}", f"  {' ' * (column - 1)}^")


COMMANDS = (match, check_filter)
