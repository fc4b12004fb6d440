"""subsum cache replay: one broker cache under an operation file
(spec/09-caching.md, spec/formats.md "Cache operations")."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from subsum.cli.common.console import deprecated, emit, out, say
from subsum.cli.common.options import ComponentName, format_option
from subsum.conformance.replays.running import RunOptions, run
from subsum.core.errors import CheckFailed
from subsum.core.names import CACHE_POLICIES
from subsum.core.plugins import running
from subsum.impl.caching import cache_class, make_cache
from subsum.impl.caching.replay import read_operations, replay


@click.group()
def cache() -> None:
    """Broker caches (seeds 003, 004): run operations against one cache."""


@cache.command("replay")
@click.option("--policy", type=ComponentName("cache", CACHE_POLICIES, cache_class), required=True,
              help="Replacement policy: fifo, regdeg (regeneration/degradation), lfu (rate-LFU), lru (DEF-CACHE-2 … 5); "
                   "or a plug-in cache, named as module:attribute or by a subsum.caches entry point (spec/11-plugins.md).")
@click.option("--capacity", type=click.IntRange(1), required=True, help="Cache slots K (messages).")
@click.option("--check", is_flag=True, hidden=True,
              help="Deprecated: `subsum replay OPS.jsonl --policy P --capacity K` runs the reference beside the cache.")
@format_option
@click.argument("ops_path", metavar="OPS.jsonl", type=click.Path(dir_okay=False))
def cache_replay(policy, capacity, check, fmt, ops_path) -> None:
    """Run the operations of OPS.jsonl (insert, hit, unsubscribe, advance;
    one JSON object per line, spec/formats.md) on one cache of `--capacity`
    slots, and print each eviction and the final contents, head first and
    the next victim last. To compare the cache with its reference, run
    `subsum replay OPS.jsonl --policy P --capacity K`."""
    cache_class(policy)  # a plug-in that cannot be loaded is bad input, before the file is read
    ops = read_operations(ops_path)
    if check:
        deprecated("subsum cache replay --check", f"subsum replay {ops_path} --policy {policy} --capacity {capacity}")
        outcome = run(ops_path, RunOptions(policy=policy, capacity=capacity))
        if outcome.fails:
            raise CheckFailed(outcome.message)
        say(outcome.message)
    with running("cache", policy):
        cache_ = make_cache(policy, capacity)
        evictions = replay(cache_, ops)
        final = cache_.order()
    report = {"policy": policy, "capacity": capacity,
              "evictions": [{"line": e.line, "inserted": e.inserted, "evicted": e.evicted, "time": e.time} for e in evictions], "final": final}
    emit(report, fmt, lambda: print_evictions(report))


def print_evictions(report: dict) -> None:
    table = Table(title=f"{report['policy']}, capacity {report['capacity']}: {len(report['evictions'])} evictions")
    for column in ("line", "time", "inserted", "evicted"):
        table.add_column(column, justify="right" if column in ("line", "time") else "left")
    for e in report["evictions"]:
        table.add_row(str(e["line"]), f"{e['time']:g}", escape(e["inserted"]), escape(e["evicted"]))
    out.print(table)
    final = report["final"]
    out.print(f"final (head first, next victim last): {escape(' '.join(final)) if final else '(empty)'}", highlight=False)


COMMANDS = (cache,)
