"""subsum replay PATH: run any replay again (spec/formats.md "Replays"; the
formats and their runs are `subsum.conformance.replays`)."""

from __future__ import annotations

import click

from subsum.cli.common.console import emit, err, line
from subsum.cli.common.options import ComponentName, FiniteFloat, format_option
from subsum.conformance.schedules.families import family_of
from subsum.conformance.replays.documents import MATCHING
from subsum.conformance.replays.running import Outcome, RunOptions, run
from subsum.core.errors import CheckFailed
from subsum.core.names import CACHE_POLICIES
from subsum.impl.caching import cache_class
from subsum.impl.matching import ENGINES, engine_class
from subsum.impl.network import PROTOCOLS

ENGINE_HELP = "The engine under test as a Python plug-in: module:attribute or a subsum.engines entry point (DEF-PLUG-1)."


@click.command("replay")
@click.argument("path", metavar="FILE|DIR", type=click.Path())
@click.option("--protocol", type=ComponentName("protocol", tuple(PROTOCOLS), family_of),
              help="A schedule replay: run this protocol, the plug-in it names (a replay never imports a module because it "
                   "names one) or another one, e.g. a fixed version (spec/11-plugins.md).")
@click.option("--broker-cmd", metavar="CMD", help="A schedule replay of `subsum conform broker`: the broker process to run "
                                                  "(a replay never runs the command it records).")
@click.option("--engine-cmd", metavar="CMD", help="A replay directory of `subsum conform matching`: the engine command to run "
                                                  "(the recorded one, or a new build of it).")
@click.option("--engine", type=ComponentName("engine", tuple(ENGINES), engine_class),
              help="A replay directory: a plug-in engine to run instead. " + ENGINE_HELP)
@click.option("--persistent", is_flag=True, help="A replay directory: run --engine-cmd in persistent mode (DEF-PLUG-3).")
@click.option("--timeout", type=FiniteFloat(0.001, 3600.0), default=None,
              help="Seconds an external broker or engine may take to answer.  [default: the replay's, or 10]")
@click.option("--policy", type=ComponentName("cache", CACHE_POLICIES, cache_class), default=None,
              help="A cache operations file (JSONL): the cache policy to run it under, beside its reference; a cache replay: "
                   "the plug-in it names (needed to import it), or another policy.")
@click.option("--capacity", type=click.IntRange(1), default=None, help="A cache operations file: the cache's slots.")
@format_option
def replay(path, protocol, broker_cmd, engine_cmd, engine, persistent, timeout, policy, capacity, fmt) -> None:
    """Run a replay again and say what it shows now: exit 1 when it still
    fails, 0 when it no longer does. PATH is any replay subsum writes,
    recognised by its format: a schedule (`subsum fuzz reconfig`, `subsum
    conform broker`), a client-server or cache replay (the checks of
    CLM-CS-5 and CLM-CACHE-1), a replay directory (`subsum conform
    matching`), or a cache operations file with --policy and --capacity."""
    outcome = run(path, RunOptions(protocol=protocol, broker_cmd=broker_cmd, engine_cmd=engine_cmd, engine=engine, persistent=persistent,
                                   timeout=timeout, policy=policy, capacity=capacity))
    show_outcome(outcome, fmt)


def show_outcome(outcome: Outcome, fmt: str) -> None:
    """Print what a replay showed; exit 1 when it still fails."""
    for note in outcome.notes:
        err.print(f"note: {note}", highlight=False, soft_wrap=True, markup=False)
    emit(outcome.to_json(), fmt, lambda: line(outcome.message))
    if outcome.fails:
        raise CheckFailed(f"the engine still disagrees with the model ({outcome.violated})" if outcome.format == MATCHING
                          else f"{outcome.violated} still fails")


COMMANDS = (replay,)
