"""subsum conform matching | broker | vectors: the kit for users' own
implementations, in any language, against the model (spec/11-plugins.md,
subsum.conformance.kit). Their failures are replays that `subsum replay`
runs again."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from subsum.cli.conform_report import (broker_kit_options, check_only, kit_options, matching_report, open_log, print_conformance,
                                      write_junit)
from subsum.cli.common.console import deprecated, emit, line, write_json
from subsum.cli.fuzz import finish, fuzz_progress, print_result, shrink_progress
from subsum.cli.common.options import (MAX_COUNT, ComponentName, FiniteFloat, deprecated_json_option, distinct_files, format_option,
                                replay_dir_option, schedule_options, seed_option, writable_dir)
from subsum.cli.common.progress import progress, quiet_option
from subsum.cli.replay import ENGINE_HELP, show_outcome
from subsum.conformance.schedules import fuzz as fz
from subsum.conformance.kit import engines, matching, vector_cases, vectors
from subsum.conformance.kit.broker import EXTERNAL, close_processes, exercised, pool_for, proxy_class
from subsum.conformance.replays import documents
from subsum.conformance.replays.running import RunOptions, run
from subsum.conformance.kit.matching import is_number
from subsum.conformance.kit.pinned import pinned_workloads
from subsum.core.errors import CheckFailed, Interrupted, SubsumError
from subsum.impl.matching import ENGINES, engine_class

ENGINE_CMD_HELP = ("The engine under test as a command, split like a shell would (no shell runs it). It is run as "
                   "`CMD SUBSCRIPTIONS EVENTS` and prints one result line per event (spec/formats.md); with --persistent it "
                   "is started once and answers request lines on standard input (spec/11-plugins.md DEF-PLUG-3).")


@click.group()
def conform() -> None:
    """The kit for your own implementation: check it against the model on
    generated workloads (matching engines, brokers), or run the portable
    test vectors. A failure is shrunk and saved as a replay."""


@conform.command("matching")
@click.option("--engine-cmd", "command", metavar="CMD", help=ENGINE_CMD_HELP)
@click.option("--engine", "plugin", type=ComponentName("engine", tuple(ENGINES), engine_class), help=ENGINE_HELP)
@click.option("--persistent", is_flag=True, help="Start CMD once and send it one request line per workload (DEF-PLUG-3).")
@click.option("--workloads", type=click.IntRange(1, MAX_COUNT), default=1000, show_default=True,
              help="Generated workloads to run (0 … N − 1), after the pinned ones (each operator's edge cases, the hostile "
                   "characters).")
@seed_option(0, "The seed of the generated workloads: workload i depends on the seed and i alone, so a longer run extends "
                "a shorter one.")
@kit_options
@click.option("--timeout", type=FiniteFloat(0.001, 3600.0), default=10.0, show_default=True,
              help="Seconds the engine may take for one workload; longer is a failure.")
@replay_dir_option(documents.CONFORM_FOLDER, "Where the replay directory of a failure goes.")
@format_option
@quiet_option
@deprecated_json_option
def conform_matching(command, plugin, persistent, workloads, seed, unsupported, keep_going, only, stderr_log, shrink_budget, junit_path,
                     timeout, out_dir, fmt, json_path) -> None:
    """Differential testing of a matching engine against the model
    (DEF-MATCH-6): each workload is a subscriptions file and an events file;
    the engine's result lines must be the model's. A time-out, a crash,
    malformed output and a different result are failures: each is shrunk to
    a minimal workload and saved as a replay directory (exit 1); with
    --keep-going N the run goes on until N failures that differ in kind,
    direction and what they use. `subsum replay DIR` runs one again.
    What --unsupported leaves out is never sent, and every report says so."""
    check_only(only, unsupported)
    distinct_files({"unsupported": unsupported.source}, {"junit": junit_path, "stderr_log": stderr_log})
    engine = engines.engine_for(command, plugin, persistent, timeout)
    name = command if command is not None else plugin
    total = 1 if only is not None else workloads + len(pinned_workloads(unsupported))
    with progress("conform matching", total) as ticker, open_log(stderr_log) as log:
        engine.stderr_log = log
        result = matching.conform(engine, workloads=workloads, seed=seed, out_dir=Path(out_dir), keep_going=keep_going, only=only,
                                  profile=unsupported, shrink_budget=shrink_budget, stderr_log=log,
                                  progress=lambda done: ticker.update(done, f"{done:,} of {total:,} workloads run"))
    option = f"--engine-cmd {shlex.quote(command)}" if command is not None else f"--engine {plugin}"
    report = matching_report(result, engine.describe(), seed, f"{option}{' --persistent' if persistent else ''}", stderr_log)
    if json_path:
        deprecated("--json FILE", "--format json > FILE")
        write_json(json_path, report)
    write_junit(junit_path, report, "subsum conform matching")
    emit(report, fmt, lambda: print_conformance(name, report))
    if result.interrupted:
        raise Interrupted(f"interrupted (Ctrl-C) after {result.workloads:,} workloads: {len(result.findings)} distinct failures, "
                          f"saved in {out_dir}")
    if result.findings:
        kinds = ", ".join(dict.fromkeys(f.signature.kind for f in result.findings))
        raise CheckFailed(f"the engine disagrees with the model ({len(result.findings)} distinct: {kinds})")


@conform.command("broker")
@click.option("--broker-cmd", "command", metavar="CMD", required=True,
              help="The broker process, split like a shell would (no shell runs it); one process hosts every broker of a "
                   "schedule and speaks the line protocol of spec/11-plugins.md DEF-PLUG-6.")
@schedule_options("Brokers per schedule.", max_violations=1, shrink_budget=30.0, out_dir=documents.FUZZ_FOLDER,
                  shrink_help="Seconds to shrink each violating schedule (each candidate runs a fresh process).", keep_going=True)
@broker_kit_options
@click.option("--timeout", type=FiniteFloat(0.001, 3600.0), default=10.0, show_default=True,
              help="Seconds the process may take to answer one request.")
@format_option
@quiet_option
def conform_broker(command, brokers, subscriptions, churn, steps, seed, budget, schedules, max_violations, out_dir, shrink_budget,
                   unsupported, only, stderr_log, junit_path, timeout, fmt) -> None:
    """Fuzz a broker process in any language on the simulator, as `subsum
    fuzz reconfig` fuzzes subsum's brokers: Strawman's subscription
    forwarding under churn. Every answer is compared with the model's
    handler on the broker's state (CLM-NET-6), the tables after every
    quiesce (CLM-NET-2) and delivery in quiescent static states (CLM-NET-3).
    A violation is shrunk and saved as a replay file; `subsum replay
    --broker-cmd CMD FILE` runs it again. Exits 1 on a violation. Filters
    and events that --unsupported leaves out are never sent."""
    pool = pool_for(unsupported)
    if only is not None and not (is_number(only) and seed + int(only) < 2**63):
        raise SubsumError(f"--only {only!r}: a schedule number, with --seed + it below 2^63 (conform broker has no pinned schedules)")
    distinct_files({"unsupported": unsupported.source}, {"junit": junit_path, "stderr_log": stderr_log})
    broker_class = proxy_class(command, timeout)  # a command that cannot run is bad usage (exit 2), before any output
    with open_log(stderr_log) as log:
        broker_class.stderr_log = log
        with progress("conform broker", budget) as ticker:
            try:
                drawing = fz.Drawing(brokers=brokers, subscriptions=subscriptions, churn=churn, steps=steps, seed=seed,
                                     protocol=EXTERNAL, pool=pool, broker_class=broker_class)
                campaign = fz.Campaign(budget, schedules, max_violations, shrink_budget, Path(out_dir),
                                       only=None if only is None else int(only), distinct=True, command=command,
                                       not_checked=unsupported.to_json(exercised(pool))["not_checked"])
                result = fz.fuzz(drawing, campaign, progress=fuzz_progress(ticker, budget), shrinking=shrink_progress(ticker))
            finally:
                close_processes(broker_class)
    replay_option = f"--broker-cmd {shlex.quote(command)}"
    report = result.report(command=command, brokers=brokers, subscriptions=subscriptions, churn=churn, steps=steps, seed=seed, budget=budget,
                           schedules_limit=schedules, keep_going=max_violations, timeout=timeout, stderr_log=stderr_log,
                           **unsupported.to_json(exercised(pool)), headline=unsupported.headline(exercised(pool)))

    def text() -> None:
        line(report["headline"])
        print_result(command, report, f"--broker-cmd {shlex.quote(command)} ")
        if result.repeats:
            line(f"  {result.repeats} more violations like one above were counted, not saved")

    for v in report["violations"]:
        v["replay_command"] = f"subsum replay {replay_option} {v['replay']}"
    write_junit(junit_path, report, "subsum conform broker")
    emit(report, fmt, text)
    finish(result, out_dir, budget, "the broker answers too slowly for it (raise --budget, or lower --timeout to fail slow answers)")


@conform.group("vectors")
def conform_vectors() -> None:
    """Portable conformance vectors from the model (spec/11-plugins.md
    DEF-PLUG-5): filter parsing and normal forms (with errors), matching,
    constraint and subscription covering, summary matching, Strawman handler
    steps, and each cache policy's operation sequences. Each case has an id,
    the claim it exercises, an input and the expected output; any
    implementation can run them in its own CI."""


@conform_vectors.command("write")
@click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), callback=writable_dir, required=True,
              help="Write the vectors here: one JSON file per kind.")
@seed_option(0, "The cases' seed; the same seed and spec version give the same bytes.")
@format_option
def vectors_write(out_dir, seed, fmt) -> None:
    """Write the vectors into DIR."""
    counts = vector_cases.write_vectors(Path(out_dir), seed)
    report = {"spec_version": vector_cases.SPEC_VERSION, "seed": seed, "out_dir": out_dir, "cases": counts}
    emit(report, fmt, lambda: line(f"spec version {vector_cases.SPEC_VERSION}, seed {seed}: {sum(counts.values())} cases in {out_dir}: "
                                   + ", ".join(f"{kind} {n}" for kind, n in counts.items())))


@conform_vectors.command("check")
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False))
@format_option
def vectors_check(folder, fmt) -> None:
    """Run subsum's own implementation against the vectors in DIR (exit 1 on a case it gets wrong)."""
    wrong = list(vectors.check_vectors(Path(folder)))
    total = sum(vectors.count_cases(Path(folder)).values())
    cases = len(dict.fromkeys(problem.split(": ", 1)[0] for problem in wrong))  # a case is counted once, however many engines miss it
    report = {"folder": folder, "cases": total, "wrong_cases": cases, "wrong": wrong}

    def text() -> None:
        for problem in wrong[:20]:
            line(problem)
        if not wrong:
            line(f"subsum passes all {total} cases in {folder}")

    emit(report, fmt, text)
    if wrong:
        raise CheckFailed(f"subsum gets {cases} of {total} cases wrong")


# --- the old spellings, for one release ------------------------------------------------------

@conform.command("replay", hidden=True)
@click.option("--engine-cmd", "command", metavar="CMD")
@click.option("--engine", "plugin", metavar="NAME")
@click.option("--persistent", is_flag=True)
@click.option("--timeout", type=FiniteFloat(0.001, 3600.0), default=None)
@format_option
@click.argument("folder", metavar="DIR", type=click.Path())
def conform_replay(command, plugin, persistent, timeout, fmt, folder) -> None:
    """Deprecated: `subsum replay DIR`."""
    deprecated("subsum conform replay DIR", "subsum replay DIR")
    show_outcome(run(folder, RunOptions(engine_cmd=command, engine=plugin, persistent=persistent, timeout=timeout)), fmt)


@click.command("vectors", hidden=True)
@click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), callback=writable_dir)
@click.option("--seed", type=int, default=0)
@click.option("--check", "check_dir", type=click.Path(file_okay=False), hidden=True)
@click.pass_context
def vectors_alias(ctx, out_dir, seed, check_dir) -> None:
    """Deprecated: `subsum conform vectors write|check`."""
    if (out_dir is None) == (check_dir is None):
        raise SubsumError("give --out-dir DIR (write vectors) or --check DIR (run subsum against them)")
    if out_dir is not None:
        deprecated("subsum vectors --out-dir DIR", "subsum conform vectors write --out-dir DIR")
        ctx.invoke(vectors_write, out_dir=out_dir, seed=seed, fmt="text")
    else:
        deprecated("subsum vectors --check DIR", "subsum conform vectors check DIR")
        ctx.invoke(vectors_check, folder=check_dir, fmt="text")


COMMANDS = (conform, vectors_alias)
