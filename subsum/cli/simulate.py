"""subsum simulate forwarding | summaries | siena | broadcast | flooding |
caching | client-server: one seeded simulation on the broker simulator
each, with only its own options (spec/05, 06, 08, 09, 10).

The five routing simulations run the same workload (clients subscribe,
then publish, with optional link swaps) and report the message counters
and the simulator's own delivery audit; `caching` runs the churning
visitors of the caching protocol, `client-server` seed 003's driver.
"""

from __future__ import annotations

import time
from typing import Callable

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from subsum.cli.common.console import counter_table, deprecated, emit, err, out, write_json
from subsum.cli.common.options import (MAX_COUNT, FiniteFloat, StepsOrEver, apply_options, deprecated_json_option, distinct_files, format_option,
                                seed_option, writable_path)
from subsum.cli.common.network_options import protocol_option, timeout_options, topology_option
from subsum.core.names import CACHE_POLICIES, LEAF_READINGS, PLACEMENTS, REQUEST_POLICIES, REQUEST_PROCESSES, SINGLE_READINGS
from subsum.impl.network import forwarding_protocols
from subsum.impl.network.protocols.summaries.rounds import DEFAULTS as SUMMARIES
from subsum.impl.network.protocols.summaries.rounds import NEXT_BROKER_OPTIONS
from subsum.impl.network.topology import DisconnectedTopology
from subsum.impl.network.trace import write_trace
from subsum.impl.network.workloads import caching, client_server, routing

OLD_SPELLINGS = ("the old `simulate --routing X` is `simulate X`, `--caching P` is `simulate caching --placement P`, "
                 "`--client-server P` is `simulate client-server --request-policy P`")


class SimulateGroup(click.Group):
    """`subsum simulate` takes a subcommand; the old one-command spelling gets a pointer to it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0].startswith("-") and args[0] not in ("--help", "-h"):
            raise click.UsageError(f"simulate takes a subcommand first: {', '.join(self.commands)} ({OLD_SPELLINGS})", ctx)
        return super().parse_args(ctx, args)


@click.group(cls=SimulateGroup)
def simulate() -> None:
    """Seeded simulations on the broker simulator: one subcommand per
    simulation, each with its own options, each printing its report
    (--format text|json)."""


def common_options(brokers: int) -> Callable:
    """What every simulation takes: the overlay, its size, the seed, the report's format."""
    return apply_options([
        topology_option,
        click.option("--brokers", type=click.IntRange(1, 100_000), default=brokers, show_default=True, help="Brokers (ignored for a FILE)."),
        seed_option(0, "Seeds the topology, the workload and the link delays."),
        format_option,
        deprecated_json_option,
    ])


def routing_options(swaps: bool, forest: bool) -> Callable:
    """The routing simulations' workload, optional link swaps, and whether a forest is allowed."""
    options = [
        click.option("--subscriptions", type=click.IntRange(0, MAX_COUNT), default=100, show_default=True, help="Subscriptions, two per client."),
        click.option("--events", type=click.IntRange(0, MAX_COUNT), default=100, show_default=True, help="Events published."),
        click.option("--trace", "trace_path", type=click.Path(dir_okay=False), callback=writable_path,
                     help="Write the trace (spec/05-network.md DEF-NET-9) as JSONL."),
    ]
    if swaps:
        options += [
            click.option("--swaps", type=click.IntRange(0, MAX_COUNT), default=0, show_default=True, help="Link swaps spread among the publications."),
            click.option("--gap", type=FiniteFloat(0.0), default=5.0, show_default=True, help="Simulated ms between a swap's break and its new link."),
        ]
    if forest:
        options.append(click.option("--forest", is_flag=True, help="Accept an edge-list FILE whose links form several trees; an event is "
                                                                   "then owed only to the clients of its publisher's tree (DEF-NET-4)."))
    return apply_options(options)


def refuse_overwriting(topology: str, json_path: str | None) -> None:
    """Before the work: the report must not replace the topology file it was made from."""
    distinct_files({"topology": topology}, {"json": json_path})


def show(title: str, report: dict, fmt: str, json_path: str | None) -> None:
    """Print a simulation's report (and, spelled the old way, write it to a file)."""
    if json_path:
        deprecated("--json FILE", "--format json > FILE")
        write_json(json_path, report)
    emit(report, fmt, lambda: out.print(counter_table(title, report)))


def run_routing(title: str, protocol: str, *, topology: str, brokers: int, seed: int, fmt: str, json_path: str | None, subscriptions: int,
                events: int, trace_path: str | None, swaps: int = 0, gap: float = 5.0, forest: bool | None = None,
                options: dict | None = None, **timeouts: float) -> None:
    """Run one routing simulation and print its report. `forest` None: the
    simulation has no --forest (it needs a connected overlay)."""
    distinct_files({"topology": topology}, {"trace": trace_path, "json": json_path})
    started = time.perf_counter()
    try:
        run = routing.simulate(topology, brokers, subscriptions, events, swaps, gap, seed, trace=trace_path is not None, protocol=protocol,
                               options=options, forest=bool(forest), **timeouts)
    except DisconnectedTopology as exc:
        remedy = ("the overlay must be connected, or run as a forest with --forest" if forest is False
                  else f"`{title}` needs a connected overlay")
        raise exc.with_remedy(remedy) from None
    report = routing.report(run, time.perf_counter() - started)
    if trace_path and run.net.ledger.trace is not None:
        write_trace(run.net.ledger.trace, trace_path)
        report["trace"] = trace_path
    show(title, report, fmt, json_path)


@simulate.command("forwarding")
@protocol_option("Reconfiguration protocol (spec/05 Strawman, spec/06 the optimized ones).", choices=forwarding_protocols())
@timeout_options
@routing_options(swaps=True, forest=True)
@common_options(brokers=20)
def simulate_forwarding(protocol, **settings) -> None:
    """Subscription forwarding (seed 002) under churn-free publishing with
    link swaps, reconfigured by Strawman, one of its optimized successors,
    or a plug-in broker: the message counters and the delivery audit
    (owed, lost, duplicates, unjustified)."""
    run_routing("subsum simulate forwarding", protocol, **settings)


@simulate.command("summaries")
@click.option("--period", type=FiniteFloat(0.001), default=SUMMARIES["period"], show_default=True, help="Simulated ms between propagation rounds.")
@click.option("--next-broker", "next_broker", type=click.Choice(NEXT_BROKER_OPTIONS), default=SUMMARIES["option"], show_default=True,
              help="(a) the highest degree not yet checked, or (b) the nearest of at least this degree (DEF-SR-2).")
@routing_options(swaps=False, forest=False)
@common_options(brokers=20)
def simulate_summaries(period, next_broker, **settings) -> None:
    """Summary propagation and BROCLI routing (seed 000 §4.3, spec/08) on a
    fixed overlay: messages, payload bytes, overlay hops and the audit."""
    run_routing("subsum simulate summaries", "summaries", options={"period": period, "option": next_broker}, **settings)


@simulate.command("siena")
@click.option("--covering/--no-covering", default=True, show_default=True,
              help="Hold back a filter covered by one already forwarded (DEF-SR-6); without, plain forwarding through Siena's steps.")
@routing_options(swaps=True, forest=True)
@common_options(brokers=20)
def simulate_siena(covering, **settings) -> None:
    """Siena's covering-based subscription forwarding (spec/08 DEF-SR-6), the
    baseline of seed 000 ch. 5, with Strawman reconfiguration."""
    run_routing(f"subsum simulate siena{'' if covering else ' --no-covering'}", "siena" if covering else "siena-nocover", **settings)


@simulate.command("broadcast")
@routing_options(swaps=True, forest=False)
@common_options(brokers=20)
def simulate_broadcast(**settings) -> None:
    """The thesis's baseline (i) (spec/08 DEF-SR-7): every subscription goes
    to every broker, and an event straight to each broker that wants it."""
    run_routing("subsum simulate broadcast", "broadcast", **settings)


@simulate.command("flooding")
@routing_options(swaps=True, forest=True)
@common_options(brokers=20)
def simulate_flooding(**settings) -> None:
    """The thesis's baseline (ii) (spec/08 DEF-SR-7): subscriptions stay at
    their broker, every event crosses every overlay link."""
    run_routing("subsum simulate flooding", "flooding", **settings)


@simulate.command("caching")
@click.option("--placement", type=click.Choice(PLACEMENTS), default=caching.PLACEMENT, show_default=True,
              help="Which brokers store a passing publication (DEF-CACHE-6).")
@click.option("--cache-policy", type=click.Choice(CACHE_POLICIES), default=caching.POLICY, show_default=True,
              help="Each broker's replacement policy (DEF-CACHE-2 … 5).")
@click.option("--capacity", type=click.IntRange(1, MAX_COUNT), default=None,
              help=f"Cache slots per broker.  [default: {caching.CAPACITY_SHARE:.0%} of --events]")
@click.option("--leaf-reading", type=click.Choice(LEAF_READINGS), default=caching.LEAF_READING, show_default=True,
              help="Leaf placement: (ii) a local subscriber and no interested broker downstream, or (i) a local subscriber.")
@click.option("--single-reading", type=click.Choice(SINGLE_READINGS), default=caching.SINGLE_READING, show_default=True,
              help="Single placement: the publisher's access broker stores each publication, or the overlay's centre.")
@click.option("--zipf", type=FiniteFloat(0.0, 10.0), default=caching.ALPHA, show_default=True, help="Zipf exponent of topic popularity.")
@click.option("--stay", type=click.IntRange(1, MAX_COUNT), default=caching.STAY, show_default=True, help="Rounds a visitor stays subscribed.")
@click.option("--events", type=click.IntRange(1, MAX_COUNT), default=100, show_default=True,
              help="Publications, one a round, each followed by one visitor.")
@common_options(brokers=20)
def simulate_caching(placement, cache_policy, capacity, leaf_reading, single_reading, zipf, stay, events, topology, brokers, seed, fmt, json_path) -> None:
    """Broker caches with request/response (seeds 003, 004; spec/09) on a
    churning-subscriber workload: visitors subscribe to a topic, request
    its past publications, stay and leave. Reports answered share,
    survivability, delay, hops and duplicates (DEF-CACHE-8)."""
    refuse_overwriting(topology, json_path)
    started = time.perf_counter()
    _, report = caching.run_caching(brokers=brokers, placement=placement, policy=cache_policy, capacity=capacity or caching.default_capacity(events),
                                    alpha=zipf, messages=events, stay=stay, leaf_reading=leaf_reading,
                                    single_reading=single_reading, topology=topology, seed=seed)
    report["seconds"] = round(time.perf_counter() - started, 3)
    show("subsum simulate caching", report, fmt, json_path)


@simulate.command("client-server")
@click.option("--request-policy", type=click.Choice(REQUEST_POLICIES), default=client_server.POLICY, show_default=True,
              help="Server, Server-Cache, Server-One-Hop-Away or Server-Subscription (DEF-CS-2).")
@click.option("--cache-policy", type=click.Choice(CACHE_POLICIES), default=client_server.CACHE_POLICY, show_default=True,
              help="Each broker's replacement policy (DEF-CACHE-2 … 5).")
@click.option("--slots", type=click.IntRange(1, MAX_COUNT), default=client_server.SLOTS, show_default=True, help="Cache slots K per broker.")
@click.option("--lambda", "lam", type=FiniteFloat(0.0, 100.0), default=client_server.LAMBDA, show_default=True,
              help="Request rate λ: Poisson(λ·N·M(t)) requests a step, M(t) the messages so far (per-broker: Poisson(λ·N)).")
@click.option("--request-process", type=click.Choice(REQUEST_PROCESSES), default=client_server.REQUEST_PROCESS, show_default=True,
              help="per-message: the count grows with the messages served (seed 003 §5.2, about 3×10^5 requests at N = K = 10); "
                   "per-broker: Poisson(λ·N), the reading before issue 33 (DEF-CS-4).")
@click.option("--ss-memory", type=StepsOrEver(), default=str(client_server.SS_MEMORY), show_default=True,
              help="SS's interested brokers: those with a client that requested the message within this many steps (0: in the same "
                   "step, the seed's 'is looking for'), or 'ever' (spec/10).")
@click.option("--mu", type=FiniteFloat(0.0, 1.0), default=client_server.MU, show_default=True, help="Chance a step brings a new server and message.")
@click.option("--steps", type=click.IntRange(1, 10_000_000), default=client_server.STEPS, show_default=True, help="Steps MC.")
@common_options(brokers=20)
def simulate_client_server(request_policy, cache_policy, slots, lam, request_process, ss_memory, mu, steps, topology, brokers, seed, fmt,
                           json_path) -> None:
    """Seed 003's client-server simulation (spec/10): servers advertise
    messages, clients request them under the request policy; reports
    delay, overhead and hit per request (DEF-CS-3)."""
    refuse_overwriting(topology, json_path)
    started = time.perf_counter()
    with Progress(TextColumn("steps"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True,
                  disable=not err.is_terminal) as bar:  # about 3×10^5 requests at the defaults: tens of seconds
        task = bar.add_task("steps", total=steps)
        _, report = client_server.run_client_server(policy=request_policy, cache_policy=cache_policy, brokers=brokers, slots=slots, lam=lam,
                                                    mu=mu, steps=steps, topology=topology, seed=seed, request_process=request_process,
                                                    ss_memory=ss_memory, progress=lambda step: bar.update(task, completed=step))
    report["seconds"] = round(time.perf_counter() - started, 3)
    show(f"subsum simulate client-server {request_policy}", report, fmt, json_path)


COMMANDS = (simulate,)
