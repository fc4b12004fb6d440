"""subsum simulate | fuzz reconfig | replay: the broker simulator
(spec/05-network.md, spec/06-reconfiguration.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from rich.markup import escape

from subsum.core.plugins import looks_like_path
from subsum.cli.common import (MAX_COUNT, FiniteFloat, counter_table, distinct_files, err, json_option, out, protocol_option, schedule_options,
                               timeout_options, topology_option, writable_path, write_json)
from subsum.conformance import fuzz as fz
from subsum.core.errors import CheckFailed, EngineError, SubsumError
from subsum.core.inputs import read_input_text
from subsum.impl.network import forwarding_protocols


#: --routing: the broker protocols `simulate` runs besides forwarding (named as registered)
ROUTINGS = ("forwarding", "summaries", "siena", "siena-nocover", "broadcast", "flooding")


@click.command("simulate")
@click.option("--routing", type=click.Choice(ROUTINGS), default="forwarding", show_default=True,
              help="forwarding: subscription forwarding (seed 002) reconfigured by --protocol; summaries: summary "
                   "propagation and BROCLI routing (seed 000 §4.3, spec/08), on a fixed overlay; siena: forwarding with "
                   "covering (siena-nocover: without); broadcast and flooding: the thesis's baselines (i) and (ii).")
@protocol_option("Reconfiguration protocol of --routing forwarding.", choices=forwarding_protocols())
@timeout_options
@click.option("--period", type=FiniteFloat(0.001), default=100.0, show_default=True, help="--routing summaries: simulated ms between propagation rounds.")
@click.option("--next-broker", "next_broker", type=click.Choice(["a", "b"]), default="a", show_default=True,
              help="--routing summaries: option (a) highest degree not yet checked, or (b) nearest of at least this degree (DEF-SR-2).")
@click.option("--caching", type=click.Choice(["candidate", "leaf", "all", "single"]), default=None,
              help="Run the caching protocol (seeds 003, 004; spec/09) on a churning-subscriber workload instead: visitors subscribe "
                   "to a topic, request its past publications, stay --stay rounds and leave; this chooses which brokers cache a "
                   "publication (DEF-CACHE-6). Reports answered share, survivability, delay, hops and duplicates (DEF-CACHE-8).")
@click.option("--client-server", "client_server", type=click.Choice(["server", "sc", "soha", "ss"]), default=None,
              help="Run seed 003's client-server simulation instead (spec/10): servers advertise messages, clients request them "
                   "under this request policy (Server, Server-Cache, Server-One-Hop-Away, Server-Subscription); prints delay, "
                   "overhead and hit per request (DEF-CS-3).")
@click.option("--slots", type=click.IntRange(1, MAX_COUNT), default=None, help="--client-server: cache slots K per broker.  [default: 10]")
@click.option("--lambda", "lam", type=FiniteFloat(0.0, 100.0), default=None,
              help="--client-server: request rate λ (Poisson(λ·N) requests a step).  [default: 0.05]")
@click.option("--mu", type=FiniteFloat(0.0, 1.0), default=None, help="--client-server: chance a step brings a new server and message.  [default: 0.05]")
@click.option("--steps", type=click.IntRange(1, 10_000_000), default=None, help="--client-server: steps MC.  [default: 5000]")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="--client-server and --caching: print the report as a table or as one JSON object.")
@click.option("--policy", type=click.Choice(["fifo", "regdeg", "lfu", "lru"]), default=None,
              help="--caching and --client-server: each broker's replacement policy (DEF-CACHE-2 … 5).  [default: fifo with --caching, "
                   "lfu with --client-server]")
@click.option("--capacity", type=click.IntRange(1, MAX_COUNT), default=None, help="--caching: cache slots per broker.  [default: 5% of --events]")
@click.option("--leaf-reading", "leaf_reading", type=click.Choice(["i", "ii"]), default=None,
              help="--caching leaf: (ii) a local subscriber and no interested broker downstream, or (i) a local subscriber.  [default: ii]")
@click.option("--zipf", type=FiniteFloat(0.0, 10.0), default=None, help="--caching: Zipf exponent of topic popularity.  [default: 0.8]")
@click.option("--stay", type=click.IntRange(1, MAX_COUNT), default=None, help="--caching: rounds a visitor stays subscribed.  [default: 20]")
@topology_option
@click.option("--brokers", type=click.IntRange(1, 100_000), default=20, show_default=True, help="Brokers (ignored for a FILE).")
@click.option("--subscriptions", type=click.IntRange(0, MAX_COUNT), default=100, show_default=True, help="Subscriptions, two per client.")
@click.option("--events", type=click.IntRange(0, MAX_COUNT), default=100, show_default=True, help="Events published.")
@click.option("--swaps", type=click.IntRange(0, MAX_COUNT), default=0, show_default=True, help="Link swaps spread among the publications (not with summaries).")
@click.option("--gap", type=FiniteFloat(0.0), default=5.0, show_default=True, help="Simulated ms between a swap's break and its new link.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds the topology, the workload and the link delays.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), callback=writable_path, help="Write the trace (spec/05-network.md DEF-NET-9) as JSONL.")
@json_option("Also write the counters as JSON to FILE.")
def simulate(routing, protocol, defer_timeout, sub_timeout, period, next_broker, caching, client_server, slots, lam, mu, steps, fmt, policy,
             capacity, leaf_reading, zipf, stay, topology, brokers, subscriptions, events, swaps, gap, seed, trace_path, json_path):
    """Run a seeded workload on the broker simulator and print the message
    counters and the simulator's own delivery audit: subscription forwarding
    with the chosen reconfiguration protocol, summary-based routing, or
    (--caching) broker caches with request/response."""
    from subsum.impl.network.trace import write_trace
    from subsum.impl.network.workloads.routing import report, simulate as run_workload

    distinct_files({"topology": topology}, {"trace": trace_path, "json": json_path})
    cs_options = {"--slots": slots, "--lambda": lam, "--mu": mu, "--steps": steps}
    if client_server is not None:
        if caching is not None:
            raise SubsumError("--client-server and --caching are two different simulations; choose one")
        simulate_client_server(client_server, policy, slots, lam, mu, steps, fmt, routing, protocol, topology, brokers, swaps, seed,
                               trace_path, json_path)
        return
    given = [name for name, value in cs_options.items() if value is not None]
    if given:
        raise SubsumError(f"{', '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} to --client-server")
    if fmt == "json" and caching is None:
        raise SubsumError("--format json is for --caching and --client-server; the other simulations write JSON with --json FILE")
    cache_options = {"--policy": policy, "--capacity": capacity, "--leaf-reading": leaf_reading, "--zipf": zipf, "--stay": stay}
    if caching is None:
        given = [name for name, value in cache_options.items() if value is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise SubsumError(f"{', '.join(given)} only {verb} to the caching workload; add --caching candidate|leaf|all|single")
        if fmt == "json":
            raise SubsumError("--format json is for --caching and --client-server; the other simulations write JSON with --json FILE")
    else:
        simulate_caching(caching, policy, capacity, leaf_reading, zipf, stay, routing, protocol, topology, brokers, events, swaps,
                         seed, trace_path, json_path, fmt)
        return
    options = {}
    if routing != "forwarding":
        if protocol != "strawman":
            raise SubsumError(f"--protocol chooses the reconfiguration of --routing forwarding; --routing {routing} has none")
        protocol = routing
    if routing == "summaries":
        if swaps:
            raise SubsumError("--routing summaries runs on a fixed overlay: --swaps must be 0")
        options = {"period": period, "option": next_broker}
    started = time.perf_counter()
    run = run_workload(topology, brokers, subscriptions, events, swaps, gap, seed, trace=trace_path is not None,
                       protocol=protocol, defer_timeout=defer_timeout, sub_timeout=sub_timeout, options=options)
    summary = report(run, time.perf_counter() - started)
    if trace_path:
        write_trace(run.net.ledger.trace, trace_path)
        summary["trace"] = trace_path
    if json_path:
        write_json(json_path, summary)
    out.print(counter_table("subsum simulate", summary))


def simulate_caching(placement, policy, capacity, leaf_reading, zipf, stay, routing, protocol, topology, brokers, events, swaps, seed,
                     trace_path, json_path, fmt="text") -> None:
    """`simulate --caching`: the churning-subscriber workload of the caching protocol."""
    from subsum.impl.network.workloads.caching import run_caching

    if routing != "forwarding" or protocol != "strawman":
        raise SubsumError("--caching runs on subscription forwarding with Strawman: leave --routing and --protocol at their defaults")
    if swaps:
        raise SubsumError("--caching runs on a fixed overlay: --swaps must be 0")
    if trace_path:
        raise SubsumError("--caching writes no trace; drop --trace")
    if events < 1:
        raise SubsumError("--caching needs --events >= 1 (one publication and one visitor per round)")
    capacity = capacity or max(1, round(0.05 * events))
    started = time.perf_counter()
    _, summary = run_caching(brokers=brokers, placement=placement, policy=policy or "fifo", capacity=capacity, alpha=0.8 if zipf is None else zipf,
                             messages=events, stay=stay or 20, leaf_reading=leaf_reading or "ii", topology=topology, seed=seed)
    summary["seconds"] = round(time.perf_counter() - started, 3)
    if json_path:
        write_json(json_path, summary)
    print_report("subsum simulate --caching", summary, fmt)


def print_report(title: str, summary: dict, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(summary))
    else:
        out.print(counter_table(title, summary))


def simulate_client_server(policy, cache_policy, slots, lam, mu, steps, fmt, routing, protocol, topology, brokers, swaps, seed,
                           trace_path, json_path) -> None:
    """`simulate --client-server`: seed 003's simulation driver (spec/10 DEF-CS-4)."""
    from subsum.impl.network.workloads.client_server import run_client_server

    if routing != "forwarding" or protocol != "strawman" or swaps or trace_path:
        raise SubsumError("--client-server runs its own protocol on a fixed overlay: leave --routing, --protocol, --swaps and --trace out")
    started = time.perf_counter()
    _, summary = run_client_server(policy=policy, cache_policy=cache_policy or "lfu", brokers=brokers, slots=slots or 10,
                                   lam=0.05 if lam is None else lam, mu=0.05 if mu is None else mu, steps=steps or 5000,
                                   topology=topology, seed=seed)
    summary["seconds"] = round(time.perf_counter() - started, 3)
    if json_path:
        write_json(json_path, summary)
    print_report(f"subsum simulate --client-server {policy}", summary, fmt)


@click.group()
def fuzz() -> None:
    """Fuzzers: random schedules checked against the model; violations are saved as replay files."""


@fuzz.command("reconfig")
@protocol_option("Reconfiguration protocol (spec/05 Strawman, spec/06 the optimized ones).", choices=fz.PROTOCOLS)
@timeout_options
@topology_option
@schedule_options("Brokers per schedule (ignored for a FILE).", max_violations=10,
                  shrink_help="Seconds to shrink each violating schedule before it is saved (0: save it as found).", shrink_budget=10.0)
@json_option("Also write the run's summary as JSON to FILE.")
def fuzz_reconfig(protocol, defer_timeout, sub_timeout, topology, brokers, subscriptions, churn, steps, seed, budget, schedules,
                  max_violations, out_dir, shrink_budget, json_path):
    """Random subscribe/unsubscribe/publish/deliver/timer/churn schedules on
    the broker simulator. Every handler is checked against the model's
    (CLM-NET-6, and CLM-RCF-4, 5, 7 for the optimized protocols), the
    overlay after every operation (CLM-NET-1, 4), the tables after every
    quiesce (CLM-NET-2, CLM-RCF-1), and delivery in quiescent static states
    (CLM-NET-3). Exits 1 if any violation was found."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("fuzzing", total=budget)

        def progress(r):
            bar.update(task, completed=min(r.seconds, budget),
                       description=f"{r.schedules} schedules, {r.operations} operations, {len(r.violations)} violations")

        def shrinking(case):
            bar.update(task, description=f"shrinking the {len(case.schedule)} operations of seed {case.seed} ({case.violation.claim})")

        result = fz.fuzz(topology=topology, brokers=brokers, subscriptions=subscriptions, churn=churn, steps=steps, seed=seed,
                         budget=budget, schedules=schedules, replay_dir=Path(out_dir), protocol=protocol,
                         defer_timeout=defer_timeout, sub_timeout=sub_timeout, max_violations=max_violations,
                         progress=progress, shrink_budget=shrink_budget, shrinking=shrinking)
    out.print(f"{escape(protocol)}: {result.schedules} schedules, {result.operations} operations in {result.seconds:.1f} s "
              f"({result.schedules_per_minute:,.0f} schedules/min); {len(result.violations)} violations",
              highlight=False, soft_wrap=True)
    confirm = f"--protocol {protocol} " if looks_like_path(protocol) else ""
    for path, claim in zip(result.violations, result.claims):
        doc = json.loads(Path(path).read_text())
        size = f"{len(doc['schedule'])} operations" + (f", shrunk from {doc['shrunk_from']}" if "shrunk_from" in doc else "")
        out.print(f"  {claim} ({size}): {escape(str(path))}   (subsum replay {escape(confirm)}{escape(str(path))})",
                  highlight=False, soft_wrap=True)
    if json_path:
        write_json(json_path, result.report(protocol=protocol, defer_timeout=defer_timeout, sub_timeout=sub_timeout,
                                            topology=topology, brokers=brokers, subscriptions=subscriptions, churn=churn, steps=steps,
                                            seed=seed, budget=budget, schedules_limit=schedules, max_violations=max_violations))
    if result.violations:
        raise CheckFailed(f"{len(result.violations)} violations; replay files in {out_dir}")
    if not result.schedules:
        raise EngineError(f"no schedule finished within the budget of {budget:g} s, so nothing was checked: the protocol is "
                          "too slow for it (raise --budget)")


@click.command("replay")
@click.option("--protocol", "plugin", metavar="MODULE:ATTRIBUTE",
              help="Run this protocol on a fuzz replay's schedule: the plug-in it names, repeated to allow importing it "
                   "(spec/11-plugins.md), or another one (a fixed version).")
@click.option("--broker-cmd", "command", metavar="CMD",
              help="Run this broker process on a replay of `subsum conform broker` (a replay never runs the command it records).")
@click.argument("path", type=click.Path())
def replay(plugin, command, path):
    """Re-run a replay file exactly: a fuzz replay (`subsum fuzz reconfig`)
    prints the violated claim (exit 1) or says it no longer fails (exit 0);
    a client-server replay (CLM-CS-5) reruns the requests on the simulator
    and the reference and prints the first difference (exit 1), or none (exit 0).
    A fuzz replay of a plug-in runs only with --protocol, which names the
    protocol to run."""
    from subsum.conformance import client_server as cs

    text = read_input_text(path)
    try:
        peek = json.loads(text)
    except (ValueError, RecursionError):
        peek = None  # fz.load_replay says what is wrong
    if cs.is_replay(peek):
        difference = cs.first_difference(cs.load_replay(path, peek))
        if difference is None:
            out.print(f"{escape(path)}: the simulator and the reference agree on every request now", highlight=False, soft_wrap=True)
            return
        out.print(escape(difference), highlight=False, soft_wrap=True)
        raise CheckFailed("CLM-CS-5 still fails")
    doc = fz.load_replay(path, plugin, command)
    if doc.get("recorded_protocol", plugin) != plugin:
        err.print(f"note: running {escape(plugin)} on a schedule recorded with {escape(doc['recorded_protocol'])}", highlight=False,
                  soft_wrap=True)
    try:
        violation = fz.replay(path, plugin, command)
    finally:
        if command is not None:
            from subsum.conformance.external_broker import close_processes

            close_processes()
    recorded = doc.get("violation", {})
    if violation is None:
        out.print(f"{escape(path)}: no violation now (recorded: {escape(str(recorded.get('claim')))} at step {recorded.get('step')})",
                  highlight=False, soft_wrap=True)
        return
    out.print(f"{violation.claim} violated at step {violation.step} of {len(doc['schedule'])}: {escape(violation.message)}",
              highlight=False, soft_wrap=True)
    raise CheckFailed(f"{violation.claim} still fails")


COMMANDS = (simulate, fuzz, replay)
