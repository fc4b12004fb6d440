"""subsum cache replay: one broker cache under an operation file
(spec/09-caching.md, spec/formats.md "Cache operations")."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from subsum.cli.common import ComponentName, format_option, out, say
from subsum.core.errors import CheckFailed, EngineError, SubsumError


@click.group()
def cache() -> None:
    """Broker caches (seeds 003, 004): replay operations against one cache."""


@cache.command("replay")
@click.option("--policy", type=ComponentName("cache", ("fifo", "regdeg", "lfu", "lru")), required=True,
              help="Replacement policy: fifo, regdeg (regeneration/degradation), lfu (rate-LFU), lru (DEF-CACHE-2 … 5); "
                   "or a plug-in cache, named as module:attribute or by a subsum.caches entry point (spec/11-plugins.md), "
                   "checked against the reference of the policy it names.")
@click.option("--capacity", type=click.IntRange(1), required=True, help="Cache slots K (messages).")
@click.option("--check", is_flag=True,
              help="Also run the reference policy (subsum.model.caching) and exit 1 at the first operation where they differ "
                   "(how a failure of the cache state machine, CLM-CACHE-1, is replayed).")
@format_option
@click.argument("ops_path", metavar="OPS.jsonl", type=click.Path(dir_okay=False))
def cache_replay(policy, capacity, check, fmt, ops_path) -> None:
    """Replay the operations of OPS.jsonl (insert, hit, unsubscribe, advance;
    one JSON object per line, spec/formats.md) against one cache of
    `--capacity` slots, and print each eviction and the final contents, head
    first and the next victim last. With --format json: one object,
    {"evictions": [...], "final": [...]}."""
    from subsum.impl.caching import make_cache
    from subsum.impl.caching.replay import read_operations, replay

    from subsum.impl.caching import cache_class

    cache_class(policy)  # a plug-in that cannot be loaded is bad input, before the file is read
    ops = read_operations(ops_path)
    if check:
        from subsum.conformance.caching import first_difference

        difference = first_difference(policy, capacity, [op for _, op in ops])
        if difference is not None:
            raise CheckFailed(f"{ops_path}: {policy}, capacity {capacity}: {difference}")
        say(f"{ops_path}: the impl and the reference agree on all {len(ops)} operations ({policy}, capacity {capacity})")
    try:
        cache_ = make_cache(policy, capacity)
        evictions = replay(cache_, ops)
        final = cache_.order()
    except SubsumError:
        raise
    except Exception as exc:  # a plug-in cache failing is an engine failure; a built-in one failing is a bug (the CLI's handler)
        if policy in ("fifo", "regdeg", "lfu", "lru"):
            raise
        raise EngineError(f"cache {policy} failed: {type(exc).__name__}: {exc}") from exc
    if fmt == "json":
        click.echo(json.dumps({"policy": policy, "capacity": capacity, "evictions": [
            {"line": e.line, "inserted": e.inserted, "evicted": e.evicted, "time": e.time} for e in evictions], "final": final},
            ensure_ascii=False))
        return
    table = Table(title=f"{policy}, capacity {capacity}: {len(evictions)} evictions")
    for column in ("line", "time", "inserted", "evicted"):
        table.add_column(column, justify="right" if column in ("line", "time") else "left")
    for e in evictions:
        table.add_row(str(e.line), f"{e.time:g}", escape(e.inserted), escape(e.evicted))
    out.print(table)
    out.print(f"final (head first, next victim last): {escape(' '.join(final)) if final else '(empty)'}", highlight=False)


COMMANDS = (cache,)
