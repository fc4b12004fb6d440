"""subsum explore: every interleaving of a small scope on the
implementation's brokers, checked (spec/12-exploration.md)."""

from __future__ import annotations

from pathlib import Path

import click

from subsum.cli.common.console import emit, line, show_unsaved
from subsum.cli.common.options import MAX_COUNT, FiniteFloat, format_option, replay_dir_option
from subsum.cli.common.progress import progress, quiet_option
from subsum.cli.common.network_options import protocol_option, timeout_options
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore as run_search
from subsum.conformance.explore.searches import BUDGET, MAX_STATES, Exploration
from subsum.conformance.explore.walk import WALKS, random_walk
from subsum.conformance.replays import documents
from subsum.conformance.schedules.families import family_of, schedule_protocols
from subsum.core.errors import CheckFailed, Interrupted
from subsum.core.plugins import looks_like_path
from subsum.impl.network import TOPOLOGIES


@click.command("explore")
@protocol_option("The protocol whose every interleaving is explored.", choices=schedule_protocols(), load=family_of)
@click.option("--brokers", type=click.IntRange(1, 8), default=3, show_default=True, help="Brokers of the scope, one client on each.")
@click.option("--subscriptions", type=click.IntRange(0, MAX_COUNT), default=2, show_default=True,
              help="Subscriptions S: subscription i by the client of broker i mod N (spec/12 DEF-EXP-1).")
@click.option("--events", type=click.IntRange(0, MAX_COUNT), default=0, show_default=True, help="Publications E, from the last broker's client.")
@click.option("--swaps", type=click.IntRange(0, MAX_COUNT), default=0, show_default=True, help="Link swaps K: any link for any other joining its halves.")
@click.option("--requests", type=click.IntRange(0, MAX_COUNT), default=0, show_default=True,
              help="Requests R (the caching protocol): request k by subscription k mod S's client for its filter, made in a "
                   "quiescent state and answered before anything else happens (spec/12 DEF-EXP-10).")
@click.option("--topology", type=click.Choice(TOPOLOGIES), default="path", show_default=True, help="The brokers' tree.")
@click.option("--unsubscribe/--no-unsubscribe", default=True, show_default=True, help="Each subscription may later be unsubscribed.")
@click.option("--overruns", type=click.IntRange(0, MAX_COUNT), default=None,
              help="How many times along one path a timer may fire while messages are in flight "
                   "[default: unbounded; 1 for summaries, whose round timer re-arms every period].")
@timeout_options
@click.option("--max-states", type=click.IntRange(1, MAX_COUNT), default=MAX_STATES, show_default=True,
              help="Stop after this many distinct states (the report says complete: false).")
@click.option("--budget", type=FiniteFloat(0.001, 86_400.0), default=BUDGET, show_default=True,
              help="Stop after this many seconds (the report says complete: false).")
@click.option("--strategy", type=click.Choice(("bfs", "dfs", "random")), default="bfs", show_default=True,
              help="bfs: breadth first, the first violation a shortest one; dfs: depth first, the same states with a "
                   "frontier of one path and its siblings (light on memory), a violation not always a shortest one; "
                   "random: --walks random walks from the initial state (walk i drawn with --seed + i), a violation "
                   "shrunk; it proves nothing of the states it did not reach (spec/12 DEF-EXP-9).")
@click.option("--walks", type=click.IntRange(1, MAX_COUNT), default=WALKS, show_default=True,
              help="With --strategy random: how many walks (each to the end of its path).")
@click.option("--seed", type=click.IntRange(0, MAX_COUNT), default=0, show_default=True,
              help="With --strategy random: walk i draws its actions with seed + i.")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Processes the breadth-first search runs on, sharing one fingerprint table (TLC's workers); the same "
                   "states, verdict and shortest violation as one job, with sleep sets off (spec/12 DEF-EXP-11).")
@click.option("--memo/--no-memo", default=True, show_default=True,
              help="Run each distinct local step (a delivery or a client operation, where the protocol declares it local) once "
                   "and reuse it "
                   "(spec/12 DEF-EXP-7); --no-memo runs every handler.")
@replay_dir_option(documents.FUZZ_FOLDER, "Where the replay of a violation goes.")
@format_option
@quiet_option
def explore(protocol, brokers, subscriptions, events, swaps, requests, topology, unsubscribe, overruns, defer_timeout, sub_timeout, max_states,
            budget, strategy, walks, seed, jobs, memo, out_dir, fmt) -> None:
    """Search every state of a small scope breadth first: each delivery (the
    head of any link), timer (in timer order), client operation and swap is
    a choice; states are fingerprinted once. Each step runs the fuzzer's
    checks (CLM-NET-1, 4, 6, CLM-RCF-4, 5, 7), each quiescent state the
    tables' (CLM-NET-2, CLM-RCF-1) and delivery (CLM-NET-3); Siena's tables
    under covering (CLM-SR-8); summaries' routes, plan and histories
    (CLM-SR-6). The first
    violation is a shortest one; it is saved as a replay `subsum replay`
    runs (exit 1). Exit 0 when the search completes, or a bound cuts it
    (complete: false), with no violation."""
    if jobs > 1 and strategy != "bfs":
        raise click.BadParameter(f"--jobs {jobs} runs the breadth-first search only (not --strategy {strategy})", param_hint="--jobs")
    bounds = {} if overruns is None else {"overruns": overruns}
    scope = Scope(protocol, brokers, subscriptions, events, swaps, topology, unsubscribe, defer_timeout, sub_timeout, requests=requests,
                  **bounds)
    with progress("exploring", budget) as ticker:
        def told(r: Exploration) -> None:
            ticker.update(min(r.seconds, budget), f"depth {r.depth}: {r.states:,} states, {r.transitions:,} transitions, {r.queue:,} to visit")

        if strategy == "random":
            result = random_walk(scope, seed=seed, walks=walks, budget=budget, out_dir=Path(out_dir), progress=told)
        else:
            result = run_search(scope, max_states=max_states, budget=budget, out_dir=Path(out_dir), progress=told, memo=memo,
                                strategy=strategy, jobs=jobs)
    report = result.report()
    replay_option = f"--protocol {protocol} " if looks_like_path(protocol) else ""
    emit(report, fmt, lambda: print_result(report, replay_option))
    show_unsaved(result.unsaved)
    found = f"; {result.found[0].violation.claim} violated, replay: {result.found[0].replay}" if result.found else ""
    if result.cut_by == "interrupt":
        left = f"{result.walks:,} walks made" if strategy == "random" else f"{result.queue:,} left to visit"
        raise Interrupted(f"interrupted (Ctrl-C) at depth {result.depth}: {result.states:,} states, {left}{found}")
    if result.unsaved:
        raise CheckFailed(f"{result.found[0].violation.claim} violated; its replay could not be written (printed above)")
    if result.found:
        raise CheckFailed(f"{result.found[0].violation.claim} violated; replay: {result.found[0].replay}")


def print_result(report: dict, replay_option: str) -> None:
    scope = report["scope"]
    cut = ""
    if report["cut_by"] == "interrupt":
        cut = f", interrupted (Ctrl-C): not complete, {report['queue']:,} states left to visit"
    elif report["strategy"] == "random":
        cut = f", {report['walks']:,} random walks from seed {report['seed']}{', cut by --budget' if report['cut_by'] else ''}"
    elif not report["complete"] and not report["violations"]:
        cut = f", cut by --{report['cut_by']}: not complete, {report['queue']:,} states left to visit"
    line(f"{report['protocol']}: {scope['brokers']} brokers, {scope['subscriptions']} subscriptions, {scope['events']} events, "
         f"{scope['swaps']} swaps ({scope['topology']}): {report['states']:,} states, {report['transitions']:,} transitions, "
         f"depth {report['depth']}, {report['seconds']:.1f} s ({report['states_per_second']:,.0f} states/s"
         f"{', ' + str(report['jobs']) + ' processes' if report['jobs'] > 1 else ''}){cut}")
    steps = report["local_steps"]
    if steps and steps["memoized"]:
        line(f"  local steps: {steps['steps']:,} made, {steps['distinct']:,} distinct, "
             f"{steps['hit_rate']:.1%} from the memo")
    if report["properties"]:
        line("  properties checked: " + ", ".join(f"{p['name']} ({p['claim']}) {p['runs']:,}" for p in report["properties"]))
    for v in report["violations"]:
        line(f"  {v['claim']} at {v['where']} ({v['moves']} moves): {v['message']}")
        if v["saved"]:
            line(f"  replay: subsum replay {replay_option}{v['replay']}")
        elif v["replay"]:
            line(f"  replay: NOT SAVED to {v['replay']} (it is printed on standard error)")
    if report["complete"]:
        line("  complete: every interleaving of the scope was checked; no violation")
    elif report["strategy"] == "random" and not report["violations"]:
        line("  no violation on these walks (a random walk proves nothing of the states it did not reach)")


COMMANDS = (explore,)
