"""subsum conform matching | replay: a user's matching engine, in any
language, against the model (spec/11-plugins.md, conformance/external.py)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from subsum.cli.common import MAX_COUNT, FiniteFloat, err, json_option, out, schedule_options, writable_dir, write_json
from subsum.core.errors import CheckFailed, EngineError, SubsumError

ENGINE_CMD_HELP = ("The engine under test as a command, split like a shell would (no shell runs it). It is run as "
                   "`CMD SUBSCRIPTIONS EVENTS` and prints one result line per event (spec/formats.md); with --persistent it "
                   "is started once and answers request lines on standard input (spec/11-plugins.md DEF-PLUG-3).")
ENGINE_HELP = "The engine under test as a Python plug-in: module:attribute or a subsum.engines entry point (DEF-PLUG-1)."


@click.group()
def conform() -> None:
    """Check your own implementation against the model: generated workloads,
    a shrunk counterexample, a replay directory."""


@conform.command("matching")
@click.option("--engine-cmd", "command", metavar="CMD", help=ENGINE_CMD_HELP)
@click.option("--engine", "plugin", metavar="NAME", help=ENGINE_HELP)
@click.option("--persistent", is_flag=True, help="Start CMD once and send it one request line per workload (DEF-PLUG-3).")
@click.option("--workloads", type=click.IntRange(1, MAX_COUNT), default=1000, show_default=True,
              help="Generated workloads to run (fewer if one fails: then its shrinking follows).")
@click.option("--seed", type=int, default=0, show_default=True, help="Hypothesis seed: the same seed draws the same workloads.")
@click.option("--timeout", type=FiniteFloat(0.001, 3600.0), default=10.0, show_default=True,
              help="Seconds the engine may take for one workload; longer is a failure.")
@click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), callback=writable_dir, default="conform-replays",
              show_default=True, help="Where the replay directory of a failure goes.")
@json_option("Also write the run's summary as JSON to FILE.")
def conform_matching(command, plugin, persistent, workloads, seed, timeout, out_dir, json_path) -> None:
    """Differential testing of a matching engine against the model
    (DEF-MATCH-6): each workload is a subscriptions file and an events file;
    the engine's result lines must be the model's. A time-out, a crash,
    malformed output and a different result are failures: the first is
    shrunk to a minimal workload and saved as a replay directory (exit 1).
    `subsum conform replay DIR` runs it again."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from subsum.conformance import external

    engine = external.engine_for(command, plugin, persistent, timeout)
    name = command if command is not None else plugin
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("workloads", total=workloads)

        def progress(done: int) -> None:
            bar.update(task, completed=done)

        result = external.conform(engine, workloads=workloads, seed=seed, out_dir=Path(out_dir), progress=progress)
    if json_path:
        write_json(json_path, {"engine": engine.describe(), "workloads": result.workloads, "seed": seed,
                               "seconds": round(result.seconds, 3),
                               "failure": None if result.failure is None else {"kind": result.failure.kind,
                                                                                "message": result.failure.message},
                               "replay": None if result.replay is None else str(result.replay)})
    if result.failure is None:
        out.print(f"{escape(name)}: agrees with the model on {result.workloads} workloads (seed {seed}, {result.seconds:.1f} s)",
                  highlight=False, soft_wrap=True)
        return
    out.print(f"{escape(name)}: {escape(str(result.failure))}", highlight=False, soft_wrap=True)
    out.print(f"  shrunk workload in {escape(str(result.replay))} (found at workload {result.workloads}, seed {seed})",
              highlight=False, soft_wrap=True)
    option = f"--engine-cmd {_quote(command)}" if command is not None else f"--engine {plugin}"
    out.print(f"  replay: subsum conform replay {escape(option)}{' --persistent' if persistent else ''} {escape(str(result.replay))}",
              highlight=False, soft_wrap=True)
    raise CheckFailed(f"the engine disagrees with the model ({result.failure.kind})")


def _quote(command: str) -> str:
    import shlex

    return shlex.quote(command)


@conform.command("replay")
@click.option("--engine-cmd", "command", metavar="CMD", help="The command to run (the replay's own, or a new build of it).")
@click.option("--engine", "plugin", metavar="NAME", help=ENGINE_HELP)
@click.option("--persistent", is_flag=True, help="Run CMD in persistent mode (DEF-PLUG-3).")
@click.option("--timeout", type=FiniteFloat(0.001, 3600.0), default=None,
              help="Seconds the engine may take.  [default: the replay's]")
@click.argument("folder", metavar="DIR", type=click.Path())
def conform_replay(command, plugin, persistent, timeout, folder) -> None:
    """Run the engine on a replay directory's workload again and compare
    with the model: exit 1 and the failure, or exit 0 when it agrees now.
    The engine must be named (--engine-cmd or --engine): a replay directory
    never runs a command or imports a module just because it says so; the
    recorded one is printed to copy."""
    from subsum.conformance import external

    case = external.load_case(Path(folder))
    recorded = case["engine"]
    if command is None and plugin is None:
        option = (f"--engine-cmd {_quote(recorded['command'])}" + (" --persistent" if recorded.get("persistent") else "")
                  if "command" in recorded else f"--engine {recorded['engine']}")
        raise SubsumError(f"{folder}: name the engine to run; the recorded one is: subsum conform replay {option} {folder}")
    wait = timeout if timeout is not None else float(recorded.get("timeout", 10.0))
    engine = external.engine_for(command, plugin, persistent, wait)
    failure, notes = external.replay(Path(folder), engine)
    for note in notes:
        err.print(f"note: {escape(note)}", highlight=False)
    recorded_failure = case.get("failure", {})
    if failure is None:
        out.print(f"{escape(folder)}: the engine agrees with the model now (recorded: {escape(str(recorded_failure.get('kind')))})",
                  highlight=False, soft_wrap=True)
        return
    out.print(f"{escape(folder)}: {escape(str(failure))}", highlight=False, soft_wrap=True)
    raise CheckFailed(f"the engine still disagrees with the model ({failure.kind})")



@conform.command("broker")
@click.option("--broker-cmd", "command", metavar="CMD", required=True,
              help="The broker process, split like a shell would (no shell runs it); one process hosts every broker of a "
                   "schedule and speaks the line protocol of spec/11-plugins.md DEF-PLUG-6.")
@schedule_options("Brokers per schedule.", max_violations=1, shrink_budget=30.0,
                  shrink_help="Seconds to shrink each violating schedule (each candidate runs a fresh process).")
@click.option("--timeout", type=FiniteFloat(0.001, 3600.0), default=10.0, show_default=True,
              help="Seconds the process may take to answer one request.")
def conform_broker(command, brokers, subscriptions, churn, steps, seed, budget, schedules, max_violations, timeout, shrink_budget,
                   out_dir) -> None:
    """Fuzz a broker process in any language on the simulator, as `subsum
    fuzz reconfig` fuzzes subsum's brokers: Strawman's subscription
    forwarding under churn. Every answer is compared with the model's
    handler on the broker's state (CLM-NET-6), the tables after every
    quiesce (CLM-NET-2) and delivery in quiescent static states (CLM-NET-3).
    A violation is shrunk and saved as a replay file; `subsum replay
    --broker-cmd CMD FILE` runs it again. Exits 1 on a violation."""
    from subsum.conformance import fuzz as fz
    from subsum.conformance.external_broker import EXTERNAL, close_processes, proxy_class

    broker_class = proxy_class(command, timeout)  # a command that cannot run is bad usage (exit 2)
    with err.status("fuzzing") as status:
        def progress(r) -> None:
            status.update(f"{r.schedules} schedules, {r.operations} operations, {len(r.violations)} violations")

        def shrinking(case) -> None:
            status.update(f"shrinking the {len(case.schedule)} operations of seed {case.seed} ({case.violation.claim})")

        try:
            result = fz.fuzz(brokers=brokers, subscriptions=subscriptions, churn=churn, steps=steps, seed=seed, budget=budget,
                             schedules=schedules, replay_dir=Path(out_dir), protocol=EXTERNAL, max_violations=max_violations,
                             progress=progress, shrink_budget=shrink_budget, shrinking=shrinking,
                             broker_class=broker_class, command=command)
        finally:
            close_processes(broker_class)
    out.print(f"{escape(command)}: {result.schedules} schedules, {result.operations} operations in {result.seconds:.1f} s; "
              f"{len(result.violations)} violations", highlight=False, soft_wrap=True)
    for path, claim in zip(result.violations, result.claims):
        out.print(f"  {claim}: {escape(str(path))}   (subsum replay --broker-cmd {escape(_quote(command))} {escape(str(path))})",
                  highlight=False, soft_wrap=True)
    if result.violations:
        raise CheckFailed(f"{len(result.violations)} violations; replay files in {out_dir}")
    if not result.schedules:
        raise EngineError(f"no schedule finished within the budget of {budget:g} s, so nothing was checked: the broker answers too "
                          "slowly for it (raise --budget, or lower --timeout to fail slow answers)")


@click.command("vectors")
@click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), callback=writable_dir,
              help="Write the test vectors here: one JSON file per kind (spec/11-plugins.md DEF-PLUG-5).")
@click.option("--seed", type=int, default=0, show_default=True, help="The cases' seed; the same seed and spec version give the same bytes.")
@click.option("--check", "check_dir", type=click.Path(file_okay=False),
              help="Instead, run subsum's own implementation against the vectors in this folder (exit 1 on a case it gets wrong).")
def vectors(out_dir, seed, check_dir) -> None:
    """Portable conformance vectors from the model: filter parsing and normal
    forms (with errors), matching, constraint and subscription covering,
    summary matching, Strawman handler steps, and each cache policy's
    operation sequences. Each case has an id, the claim it exercises, an
    input and the expected output; any implementation can run them in its
    own CI (README, "Bring your own implementation")."""
    from subsum.conformance import vectors as vec

    if (out_dir is None) == (check_dir is None):
        raise SubsumError("give --out-dir DIR (write vectors) or --check DIR (run subsum against them)")
    if out_dir is not None:
        counts = vec.write_vectors(Path(out_dir), seed)
        out.print(f"spec version {vec.SPEC_VERSION}, seed {seed}: {sum(counts.values())} cases in {escape(out_dir)}: "
                  + ", ".join(f"{kind} {n}" for kind, n in counts.items()), highlight=False, soft_wrap=True)
        return
    wrong = list(vec.check_vectors(Path(check_dir)))
    counts = vec.count_cases(Path(check_dir))
    for line in wrong[:20]:
        out.print(escape(line), highlight=False, soft_wrap=True)
    if wrong:
        raise CheckFailed(f"subsum gets {len(wrong)} of {sum(counts.values())} cases wrong")
    out.print(f"subsum passes all {sum(counts.values())} cases in {escape(check_dir)}", highlight=False, soft_wrap=True)


COMMANDS = (conform, vectors)
