"""subsum bench matching | summaries | summary-routing | caching | client-server | network | reconfig | spark | explore: the
benchmarks (benchmarks/README.md). Each writes a CSV, PNG plots and a
summary.json into `--out-dir`/NAME/, a scratch folder by default;
`--out-dir benchmarks/results` refreshes the committed results."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

import click
from rich.markup import escape
from rich.table import Table

from subsum.bench.caching import bench as bc
from subsum.bench.client_server import bench as bcs
from subsum.bench.client_server import variants as bcs_variants
from subsum.bench.explore import jobs as bej
from subsum.bench.explore import bench as bef
from subsum.bench.matching import bench as bm
from subsum.bench import network as bn
from subsum.bench import reconfig as br
from subsum.bench.spark import bench as bsp
from subsum.bench.summaries import bench as bs
from subsum.bench.summary_routing import bench as sr
from subsum.bench.summary_routing import report as summary_routing_report
from subsum.bench.summaries.report import markdown_table as summaries_table
from subsum.cli.common.console import emit, out, say
from subsum.cli.common.options import MAX_COUNT, FiniteFloat, apply_options, bench_out_dir_option, format_option, seed_option
from subsum.cli.common.network_options import timeout_options
from subsum.cli.common.progress import heartbeat, quiet_option
from subsum.core.errors import CheckFailed
from subsum.core.names import REQUEST_PROCESSES
from subsum.impl.network import forwarding_protocols
from subsum.impl.spark.session import check_java


@click.group()
def bench() -> None:
    """Benchmarks: CSV, PNG plots and summary.json under --out-dir (default bench-out/, ignored by git)."""


def bench_command(name: str, files: str, quick: str, seed: str) -> Callable:
    """A benchmark command: what every one takes (--out-dir, --quick, --seed,
    --format, --quiet), then its own options, in the order `--help` shows them;
    its run says it is alive (`heartbeat`) beside the lines it prints."""
    def alive(command: Callable) -> Callable:
        @functools.wraps(command)
        def run(*args, **kwargs):
            with heartbeat(f"bench {name}"):
                return command(*args, **kwargs)
        return run

    return apply_options([bench.command(name), bench_out_dir_option(name, files), click.option("--quick", is_flag=True, help=quick),
                          seed_option(1, seed), format_option, quiet_option, alive])


def _parse_groups(_ctx, _param, value: str) -> list[int]:
    try:
        groups = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise click.BadParameter(f"expected a comma-separated list of 1..5, got {value!r}") from None
    if not groups or not all(1 <= g <= 5 for g in groups):
        raise click.BadParameter(f"expected a comma-separated list of 1..5, got {value!r}")
    return groups


@bench_command("matching", "matching.csv, one PNG per group, scaling.png and summary.json",
               quick="Three points per group, a small scaling run, one repeat.",
               seed="Seed of the workload generator.")
@click.option("--groups", default="1,2,3,4,5", show_default=True, callback=_parse_groups,
              help="Seed 001 experiment groups to run (1 a, 2 E, 3 A_n, 4 c, 5 S).")
@click.option("--repeat", type=click.IntRange(1, 100), default=3, show_default=True, help="Timed runs per measurement (mean and min reported).")
@click.option("--planted-rate", type=FiniteFloat(0.0, 1.0), default=0.1, show_default=True,
              help="Share of events built to match a subscription, in the 'planted' variant (the 'literal' variant uses 0).")
@click.option("--model-events", type=click.IntRange(0, MAX_COUNT), default=100, show_default=True,
              help="Run the reference model on this many events of the default point (0: skip).")
@click.option("--scaling/--no-scaling", default=True, show_default=True, help="Run the scaling points up to S=E=100,000.")
@click.option("--budget", type=FiniteFloat(1.0), default=120.0, show_default=True,
              help="Skip a scaling measurement projected to take longer than this many seconds.")
@click.option("--point-planted-rate", type=FiniteFloat(0.0, 1.0), default=0.3, show_default=True,
              help="Share of planted events at the default point.")
@click.option("--files/--no-files", default=True, show_default=True,
              help="At the default point, also time each engine file to file in a fresh process "
                   "(and the compiled engine once with an empty kernel cache).")
@click.option("--million", is_flag=True,
              help="Also match S = E = 1,000,000 with the compiled engine, once, cross-checked by vectorized on its first "
                   "10,000 events (about 2 minutes and 3.5 GiB here, most of it generating the workload).")
@click.option("--over-seeds", type=click.IntRange(1, 30), default=1, show_default=True,
              help="Also run the groups under this many seeds (SEED and the ones after it), BruteForce, Counting, "
                   "ICCounting and RABasedMatching only, into seeds.csv and over_seeds.csv (means with 95% intervals); "
                   "about 6 minutes a seed here.")
def bench_matching(out_dir, fmt, groups, quick, repeat, planted_rate, seed, model_events, scaling, budget,
                   point_planted_rate, files, million, over_seeds) -> None:
    """Seed 001's default point (steady state, first call, file to file),
    its five experiment groups and a scaling run, every engine and DuckDB
    side by side, cross-checked. Exits 1 if the engines disagree."""
    summary = bm.run(Path(out_dir) / "matching", groups=groups, quick=quick, repeat=repeat, planted_rate=planted_rate,
                     seed=seed, model_events=model_events, scaling=scaling, budget=budget,
                     point_planted_rate=point_planted_rate, files=files, million=million, over_seeds=over_seeds, log=say)
    emit(summary, fmt, lambda: print_findings(summary))
    if summary["disagreements"]:
        raise CheckFailed("engines disagree: " + "; ".join(summary["disagreements"]))


@bench_command("summaries", "summaries.csv, sizes.png, false_positives.png, throughput.png and summary.json",
               quick="S = 200, E = 200, one timed run (a few seconds).",
               seed="Seed of the workload generator.")
@click.option("--subscriptions", type=click.IntRange(1, MAX_COUNT), default=1000, show_default=True, help="Subscriptions at the broker (Table 5-2's S).")
@click.option("--events", type=click.IntRange(1, MAX_COUNT), default=2000, show_default=True, help="Events matched per covering probability.")
@click.option("--repeat", type=click.IntRange(1, 100), default=3, show_default=True, help="Timed runs per measurement (best reported).")
def bench_summaries(out_dir, fmt, quick, subscriptions, events, repeat, seed) -> None:
    """Seed 000 Table 5-2: summary size (formula and measured) against the raw
    subscriptions, the false-positive rate before the owner's re-check, and
    summary-match throughput against the indexed engine, per covering
    probability. Every candidate set is cross-checked against the engine;
    exits 1 if a cross-check fails."""
    result = bs.run(Path(out_dir) / "summaries", subscriptions=subscriptions, events=events, repeat=repeat, seed=seed,
                    quick=quick, log=say)
    show(result, fmt, summaries_table(result["rows"]), "cross-checks failed")


@bench_command("summary-routing", "propagation.csv, hops.csv, routing.csv, storage.csv, storage_small.csv, false_positives.csv, simulated.csv, "
               "simulated_storage.csv, simulated_routing.csv, fig5-2 … fig5-5 PNGs and summary.json",
               quick="2 seeds, S = 60, σ = 10, 30, 60, one random tree, the simulator at p = 0.1, 0.5, 0.9 (about 30 s).",
               seed="The first seed (the full run takes seeds SEED … SEED + 4): workloads, trees, coins, interested brokers.")
def bench_summary_routing(out_dir, fmt, quick, seed) -> None:
    """Seed 000 Figs 5-2 to 5-5 on 24 brokers (the CWIX backbone and random
    trees), means over five seeds with 95% intervals: summary propagation
    bandwidth and hops (Algorithm 4-2), BROCLI routing hops (Algorithm 4-3)
    and storage, against Siena (SienaBroker), baseline (i) (BroadcastBroker)
    and baseline (ii) (FloodingBroker) run on the simulator, and the
    thesis's own covering model of Siena as a cross-check; the thesis's
    numbers beside ours; the false-positive DELIVERs of real summaries.
    About 30 minutes on two cores. Exits 1 if a routing cross-check fails."""
    run_and_show(sr.run, summary_routing_report.markdown_table, Path(out_dir) / "summary-routing", fmt, quick, seed,
                 "routing cross-checks failed")


@bench_command("caching", "caching.csv, cache_ops.csv, tradeoff.png, policies.png, cache_ops.png and summary.json",
               quick="20 brokers, α 0.8, caches of 5%, 300 messages, a short cache-operation trace (about 15 s).",
               seed="Seed of the trees, the workloads and the cache-operation trace.")
def bench_caching(out_dir, fmt, quick, seed) -> None:
    """Broker caches (seeds 003, 004; spec/09): survivability, answered share
    and delay against overhead for candidate, leaf, all and single placement
    on random trees of 20, 50 and 100 brokers and Zipf α 0.6 … 1.2; the
    four replacement policies at caches of 1%, 5% and 10%; and each cache
    policy's operations per second beside its reference and cachetools.
    Says where the hypothesis all >= candidate > leaf > single holds. Exits
    1 if a cache and its reference (or cachetools) evict differently."""
    run_and_show(bc.run, bc.markdown_table, Path(out_dir) / "caching", fmt, quick, seed, "cache cross-checks failed")


@bench_command("client-server", "client_server.csv, series1.png, series2.png and summary.json",
               quick="Two points per parameter, one seed, 300 steps (a few seconds).",
               seed="Seed of each point's first run; the full run's other four use the next four seeds.")
@click.option("--request-process", type=click.Choice(REQUEST_PROCESSES), default=REQUEST_PROCESSES[0], show_default=True,
              help="per-message: Poisson(λ·N·M(t)) requests a step, the thesis's magnitude (hours for the full run on the simulator); "
                   "per-broker: Poisson(λ·N) (DEF-CS-4).")
@click.option("--resume", is_flag=True, help="Go on from an interrupted run: reuse the runs it kept in OUT_DIR/client-server/runs.jsonl "
                                            "(with --variants, variants-runs.jsonl; the full run takes hours on two cores).")
@click.option("--report-only", is_flag=True, help="Run nothing: redo the verdicts, plots and summary.json of the finished run in "
                                                 "OUT_DIR/client-server/ from its client_server.csv.")
@click.option("--variants", is_flag=True, help="Run only the variants instead (SOHA probing the client's broker's neighbors only, "
                                               "the hits split by where they were answered, λ at K = 50, K up to 250 at μ = 0.5, "
                                               "uniform popularity, LFU's other tie rule): OUT_DIR/client-server/variants.csv, "
                                               "about 35 minutes on 2 cores.")
def bench_client_server(out_dir, fmt, quick, seed, request_process, resume, report_only, variants) -> None:
    """Seed 003's two experiment series on the client-server driver (spec/10):
    series 1 (LFU; Server, SC, SOHA, SS) against brokers, cache slots, λ
    and μ; series 2 (SC; FIFO, Regenerate, LFU, LRU) against brokers and
    slots. Means over five seeds with 95% intervals, the thesis's quoted
    numbers beside ours, and a verdict on each."""
    folder = Path(out_dir) / "client-server"
    if variants:
        result = bcs_variants.run(folder, quick=quick, seed=seed, request_process=request_process, resume=resume, log=say)
        show(result, fmt, bcs_variants.markdown_table(result))
        return
    if report_only:
        try:
            result = bcs.report_again(folder)
        except ValueError as error:
            raise click.UsageError(str(error)) from None
    else:
        result = bcs.run(folder, quick=quick, seed=seed, request_process=request_process, resume=resume, log=say)
    show(result, fmt, bcs.markdown_table(result))


@bench_command("network", "network.csv, throughput.png, swaps.png and summary.json",
               quick="200 brokers, 2,000 subscriptions, 500 events, 100 swaps, 5 s of fuzzing per size.",
               seed="Seed of every workload.")
@click.option("--brokers", type=click.IntRange(2, 100_000), default=1000, show_default=True, help="Brokers in the throughput tree.")
@click.option("--subscriptions", type=click.IntRange(1, MAX_COUNT), default=10_000, show_default=True, help="Subscriptions in the throughput tree.")
@click.option("--events", type=click.IntRange(1, MAX_COUNT), default=5000, show_default=True, help="Events routed in the throughput tree.")
@click.option("--swaps", type=click.IntRange(1, MAX_COUNT), default=1000, show_default=True,
              help="Strawman link swaps, one at a time, on a 200-broker random tree with 1,000 subscriptions.")
@click.option("--fuzz-budget", type=FiniteFloat(1.0), default=30.0, show_default=True,
              help="Seconds of `subsum fuzz reconfig` per schedule size (6 and 20 brokers).")
def bench_network(out_dir, fmt, quick, brokers, subscriptions, events, swaps, fuzz_budget, seed) -> None:
    """The broker simulator (seed 002): handled messages per second beside a
    bare heapq loop, SUB/UNSUB traffic and lost events of Strawman link
    swaps, and fuzz throughput in schedules per minute. Exits 1 if the
    fuzzer finds a violation."""
    result = bn.run(Path(out_dir) / "network", quick=quick, brokers=brokers, subscriptions=subscriptions, events=events,
                    swaps=swaps, fuzz_budget=fuzz_budget, seed=seed, log=say)
    show(result, fmt, bn.markdown_table(result))
    if any(f["violations"] for f in result["fuzz"]):
        raise CheckFailed("the fuzzer found violations while benchmarking")


@bench_command("reconfig", "reconfig.csv, control.png, lost.png, stale.png and summary.json",
               quick="Trees of 20 and 100 brokers, two densities, 5 reconfigurations each (about a minute).",
               seed="Seed of the trees, workloads and overlay choices.")
@click.option("--protocol", "protocols", type=click.Choice(forwarding_protocols()[1:]), multiple=True,
              help="Run only these optimized protocols (repeatable); Strawman always runs, as the baseline.")
@timeout_options
def bench_reconfig(out_dir, fmt, quick, seed, protocols, defer_timeout, sub_timeout) -> None:
    """Strawman, timed, notified and informed side by side on the same
    schedules: random and balanced trees of 20, 100 and 500 brokers, sparse
    to dense subscriptions, link swaps with a shared or disjoint endpoints,
    broker crashes, concurrent swaps. Reports control messages per
    reconfiguration and the reduction against Strawman, deliveries lost,
    and stale-route event traffic."""
    chosen = (br.PROTOCOLS[0], *[p for p in br.PROTOCOLS[1:] if not protocols or p in protocols])
    result = br.run(Path(out_dir) / "reconfig", quick=quick, seed=seed, protocols=chosen, defer_timeout=defer_timeout,
                    sub_timeout=sub_timeout, log=say)
    show(result, fmt, br.markdown_table(result))


@bench_command("spark", "spark.csv, spark.png and summary.json",
               quick="E up to 10^4 and S up to 10^4 at 10^4 events (a few minutes).",
               seed="Seed of the workload generator.")
@click.option("--max-events", type=click.IntRange(10_000, MAX_COUNT), default=10_000_000, show_default=True,
              help="Largest point of the events series.")
@click.option("--in-process-max-events", type=click.IntRange(0, MAX_COUNT), default=10_000_000, show_default=True,
              help="Skip the in-process engines above this many events.")
def bench_spark(out_dir, fmt, quick, max_events, in_process_max_events, seed) -> None:
    """Spark's two plans, kernel and sql (local[*], and local[1] at one point),
    beside the compiled engine in process read to write, and the vectorized
    engine and DuckDB in memory: E from 10^5 to 10^7 and S from 10^3 to 10^5.
    Every plan's output is compared with the compiled engine's; the session's
    start is timed apart; summary.json holds the verdicts and their rules
    (benchmarks/README.md)."""

    check_java()
    folder = Path(out_dir) / "spark"
    summary = bsp.run(folder, quick=quick, seed=seed, max_events=max_events, in_process_max_events=in_process_max_events,
                      log=say)
    emit(summary, fmt, lambda: markdown(bsp.markdown_table(summary["rows"]) + f"\n{summary['crossover']}; {summary['seconds']} s; "
                                                                            f"results in {folder}"))


@bench_command("explore", "explore.csv, explore.png, ladder.csv, ladder.png and summary.json",
               quick="The Strawman bug only, 3 fuzz seeds, one search; scopes of strawman and summaries grown within 2 s.",
               seed="The first fuzz seed (the fuzzer runs seeds SEED .. SEED + --seeds - 1).")
@click.option("--seeds", type=click.IntRange(2, 100), default=5, show_default=True, help="Fuzz runs per planted bug and network.")
@click.option("--repeat", type=click.IntRange(1, 20), default=3, show_default=True, help="Timed searches per planted bug (explore is deterministic).")
@click.option("--ladder-budget", type=FiniteFloat(0.1, 3600.0), default=60.0, show_default=True,
              help="Seconds a search may take while growing each protocol's scope (the largest that completes is reported).")
def bench_explore(out_dir, fmt, quick, seeds, repeat, ladder_budget, seed) -> None:
    """`subsum explore` beside `subsum fuzz reconfig` on planted handler bugs
    (subsum.bench.planted): seconds to the first counterexample and its
    length, with 95% intervals over fuzz seeds, the ratios, and verdicts by
    the rules summary.json states; then, per protocol, the largest scope
    whose search completes within --ladder-budget seconds, grown greedily.
    Exits 1 if explore misses a planted bug."""
    summary = bef.run(Path(out_dir) / "explore", quick=quick, seed=seed, seeds=seeds, repeat=repeat, ladder_budget=ladder_budget,
                      log=say)
    emit(summary, fmt, lambda: markdown(bef.markdown_table(summary) + f"\n{summary['seconds']} s; results in {Path(out_dir) / 'explore'}"))
    missed = [b["bug"] for b in summary["bugs"] if b["verdicts"]["explore finds it"] != "holds"]
    if missed:
        raise CheckFailed(f"explore missed planted bugs: {', '.join(missed)}")


@bench_command("explore-jobs", "jobs.csv, jobs.png and summary.json",
               quick="The 3-broker scope (8,633 states), two rounds.",
               seed="Which search goes first in the first round (the order rotates each round).")
@click.option("--repeat", type=click.IntRange(2, 20), default=5, show_default=True, help="Rounds; each runs the three searches once.")
def bench_explore_jobs(out_dir, fmt, quick, repeat, seed) -> None:
    """`subsum explore --jobs 2` beside one job on strawman 4/2/1/1 (140,453
    states): one job as by default (sleep sets on), one job without sleep
    sets (the search the workers make), and 2 jobs, each --repeat times;
    the speed-ups with 95% intervals and verdicts by the rules summary.json
    states. Exits 1 if the results are not identical."""
    folder = Path(out_dir) / "explore-jobs"
    summary = bej.run(folder, quick=quick, seed=seed, repeat=repeat, log=say)
    emit(summary, fmt, lambda: markdown(bej.markdown_table(summary) + f"\n\n{summary['seconds']} s; results in {folder}"))
    if summary["identical_results"] != "holds":
        raise CheckFailed("--jobs 2 and one job found different results (jobs.csv)")


def markdown(text: str) -> None:
    """A benchmark's text report: its markdown table, as is."""
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def run_and_show(run: Callable[..., dict], table: Callable[[dict], str], folder: Path, fmt: str, quick: bool, seed: int,
                 failed: str = "cross-checks failed") -> None:
    """Run a benchmark that takes only --quick and --seed, and print its report."""
    result = run(folder, quick=quick, seed=seed, log=say)
    show(result, fmt, table(result), failed)


def show(result: dict, fmt: str, table: str, failed: str = "cross-checks failed") -> None:
    """Print a benchmark's report (its table, or its summary as JSON); exit 1
    when its cross-checks found disagreements."""
    emit(result, fmt, lambda: markdown(table))
    if result.get("disagreements"):
        raise CheckFailed(f"{failed}: " + "; ".join(result["disagreements"][:10]))


POINT_COLUMNS = (("engine", "engine"), ("steady_ms_mean", "steady ms (mean)"), ("steady_ms_min", "steady ms (best)"),
                 ("first_call_ms", "first call ms"), ("build_s", "build s"), ("file_to_file_s", "file to file s"),
                 ("file_start_s", "of which start s"), ("file_read_s", "read s"), ("file_to_file_s_cold", "file to file, no cache s"))


def print_findings(summary: dict) -> None:
    point = Table(title=f"the default point, {summary['point_planted_rate']:.0%} planted")
    for _key, title in POINT_COLUMNS:
        point.add_column(title, justify="left" if _key == "engine" else "right")
    for entry in summary["default_point"]:
        point.add_row(*(escape(str(entry.get(key, ""))) for key, _title in POINT_COLUMNS))
    out.print(point)
    table = Table(title="seed 001 claims and targets")
    for column in ("claim", "holds", "figures"):
        table.add_column(column, overflow="fold")
    for f in summary["findings"]:
        table.add_row(escape(f["claim"]), "[green]yes[/]" if f["holds"] else "[red]no[/]", escape(f["detail"]))
    out.print(table)
    out.print("wrote " + ", ".join(escape(p) for p in summary["files"]))


COMMANDS = (bench,)
