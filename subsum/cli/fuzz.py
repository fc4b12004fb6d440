"""subsum fuzz reconfig: random schedules on the broker simulator, checked
against the model (spec/05-network.md DEF-NET-8, spec/06)."""

from __future__ import annotations

from pathlib import Path

import click

from subsum.cli.common.console import deprecated, emit, line, show_unsaved, write_json
from subsum.cli.common.options import deprecated_json_option, format_option, schedule_options, spark_options
from subsum.cli.common.progress import Ticker, progress, quiet_option
from subsum.cli.common.network_options import protocol_option, timeout_options, topology_option
from subsum.conformance.schedules import fuzz as fz
from subsum.conformance.schedules.fuzz_cluster import fuzz_on_cluster
from subsum.impl.spark.kernel import SHIP_ARCHIVE, executors_can_run_kernel
from subsum.impl.spark.session import job_frame, session_for
from subsum.conformance.replays import documents
from subsum.conformance.schedules.runs import PROTOCOLS, fuzzable
from subsum.core.errors import CheckFailed, EngineError, Interrupted, SubsumError
from subsum.core.plugins import looks_like_path


@click.group()
def fuzz() -> None:
    """Fuzzers: random schedules checked against the model; violations are saved as replay files."""


@fuzz.command("reconfig")
@protocol_option("Reconfiguration protocol (spec/05 Strawman, spec/06 the optimized ones).", choices=PROTOCOLS, load=fuzzable)
@timeout_options
@topology_option
@schedule_options("Brokers per schedule (ignored for a FILE).", max_violations=10, out_dir=documents.FUZZ_FOLDER,
                  shrink_help="Seconds to shrink each violating schedule before it is saved (0: save it as found).", shrink_budget=10.0)
@format_option
@spark_options
@quiet_option
@deprecated_json_option
@click.pass_context
def fuzz_reconfig(ctx, protocol, defer_timeout, sub_timeout, topology, brokers, subscriptions, churn, steps, seed, budget, schedules,
                  max_violations, out_dir, shrink_budget, fmt, master, spark_conf, spark_timeout, json_path):
    """Random subscribe/unsubscribe/publish/deliver/timer/churn schedules on
    the broker simulator. Every handler is checked against the model's
    (CLM-NET-6, and CLM-RCF-4, 5, 7 for the optimized protocols), the
    overlay after every operation (CLM-NET-1, 4), the tables after every
    quiesce (CLM-NET-2, CLM-RCF-1), and delivery in quiescent static states
    (CLM-NET-3). Exits 1 if any violation was found.

    With --master, the schedules run on a Spark cluster's executors (they
    must import subsum, as for `match --plan kernel`); --schedules says how
    many, and the driver shrinks and saves the violations as a local run of
    the same schedules would."""
    drawing = fz.Drawing(topology, brokers, subscriptions, churn, steps, seed, protocol, defer_timeout, sub_timeout)
    campaign = fz.Campaign(budget, schedules, max_violations, shrink_budget, Path(out_dir))
    if master is not None or spark_conf:
        result = fuzz_on_spark(ctx, drawing, schedules, max_violations, master, spark_conf, spark_timeout)
        with progress("shrinking", None) as ticker:
            fz.save_found(result, campaign, shrink_progress(ticker))
    else:
        with progress("fuzzing", budget) as ticker:
            result = fz.fuzz(drawing, campaign, progress=fuzz_progress(ticker, budget), shrinking=shrink_progress(ticker))
    report = result.report(protocol=protocol, defer_timeout=defer_timeout, sub_timeout=sub_timeout, topology=topology, brokers=brokers,
                           subscriptions=subscriptions, churn=churn, steps=steps, seed=seed, budget=budget, schedules_limit=schedules,
                           max_violations=max_violations)
    if json_path:
        deprecated("--json FILE", "--format json > FILE")
        write_json(json_path, report)
    replay_option = f"--protocol {protocol} " if looks_like_path(protocol) else ""
    emit(report, fmt, lambda: print_result(protocol, report, replay_option))
    finish(result, out_dir, budget, "the protocol is too slow for it (raise --budget)")


def fuzz_on_spark(ctx, drawing: fz.Drawing, schedules: int | None, max_violations: int, master: str | None,
                  spark_conf: tuple[str, ...], spark_timeout: float) -> fz.FuzzResult:
    """The schedules run on the cluster (`conformance.schedules.fuzz_cluster`), after
    the options are checked and the executors are asked whether they import subsum."""
    if schedules is None:
        raise SubsumError("--master needs --schedules N: a campaign on a cluster runs schedules seed .. seed + N - 1")
    if ctx.get_parameter_source("budget") is not click.core.ParameterSource.DEFAULT:
        raise SubsumError("--budget does not apply with --master: a campaign on a cluster runs its --schedules")
    spark = session_for(master, spark_conf)
    with job_frame(spark, spark_timeout):
        probe = executors_can_run_kernel(spark)
        if probe.problem is not None:
            raise SubsumError(f"the executors cannot run subsum's fuzzer: {probe.problem}. Ship subsum to them: install it in "
                              f"the workers' Python, or pass a packed environment ({SHIP_ARCHIVE}; README, 'Running on a "
                              "Spark cluster')")
        with progress(f"fuzzing {schedules:,} schedules on {spark.sparkContext.master}", None):
            return fuzz_on_cluster(spark, drawing, schedules, max_violations)


def fuzz_progress(ticker: Ticker, budget: float):
    """What a fuzzer tells its progress line after each schedule."""
    def told(r: fz.FuzzResult) -> None:
        ticker.update(min(r.seconds, budget), f"{r.schedules:,} schedules, {r.operations:,} operations, {len(r.found)} violations")
    return told


def shrink_progress(ticker: Ticker):
    """What a fuzzer tells its progress line before it shrinks a violation."""
    def told(case) -> None:
        ticker.update(None, f"shrinking the {len(case.schedule)} operations of seed {case.seed} ({case.violation.claim})")
    return told


def print_result(name: str, report: dict, replay_option: str) -> None:
    """The text report of a fuzzing run: the counts, then each violation and how to replay it."""
    cut = " (interrupted: Ctrl-C)" if report.get("interrupted") else ""
    line(f"{name}: {report['schedules']} schedules, {report['operations']} operations in {report['seconds']:.1f} s "
         f"({report['schedules_per_minute']:,.0f} schedules/min); {len(report['violations'])} violations{cut}")
    for v in report["violations"]:
        size = f"{v['operations']} operations" + (f", shrunk from {v['shrunk_from']}" if v.get("shrunk_from") else "")
        if v.get("saved", True):
            found = f", found at {v['found_at']}" if v.get("found_at") else ""
            line(f"  {v['claim']} ({size}{found}): {v['replay']}   (subsum replay {replay_option}{v['replay']})")
        else:
            line(f"  {v['claim']} ({size}): NOT SAVED to {v['replay']} (the replay is printed on standard error)")


def finish(result: fz.FuzzResult, out_dir: str, budget: float, too_slow: str) -> None:
    """A fuzzing run's verdict: each replay that could not be written printed in full, then exit 130 on Ctrl-C,
    1 on a violation, 3 when nothing was checked."""
    show_unsaved(result.unsaved)
    saved = len(result.violations) - len(result.unsaved)
    if result.interrupted:
        raise Interrupted(f"interrupted (Ctrl-C) after {result.schedules:,} schedules: {len(result.violations)} violations, "
                          f"{saved} saved in {out_dir}")
    if result.unsaved:
        raise CheckFailed(f"{len(result.violations)} violations; {len(result.unsaved)} replays could not be written (printed above)")
    if result.violations:
        raise CheckFailed(f"{len(result.violations)} violations; replay files in {out_dir}")
    if not result.schedules:
        raise EngineError(f"no schedule finished within the budget of {budget:g} s, so nothing was checked: {too_slow}")


COMMANDS = (fuzz,)
