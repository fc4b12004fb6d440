"""Running a replay again (`subsum replay PATH`): each format's run, and
what it shows now (spec/formats.md "Replays", spec/11-plugins.md DEF-PLUG-4).

A replay never runs a command or imports a module because it names one:
a schedule of a plug-in protocol runs only with `protocol` naming it, a
schedule of an external broker only with `broker_cmd`, a matching replay
only with `engine_cmd` or `engine`. Each option applies to one format;
one given to another is refused (exit 2).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Callable

import attrs

from subsum.conformance.checks.caching import policies as caching
from subsum.conformance.checks.caching import client_server
from subsum.conformance.kit.broker import EXTERNAL, close_processes, proxy_class
from subsum.conformance.kit.engines import engine_for
from subsum.conformance.kit.workloads import expected_lines, first_failure, model_results
from subsum.conformance.replays import formats
from subsum.conformance.replays.documents import CACHE, CACHE_OPERATIONS, CLIENT_SERVER, MATCHING, SCHEDULE, ReplayError, format_of
from subsum.conformance.schedules.runs import Violation, execute, runnable
from subsum.conformance.runner.violations import CannotCheck
from subsum.core.errors import SubsumError
from subsum.core.plugins import looks_like_path
from subsum.impl.caching import cache_class


@attrs.frozen
class RunOptions:
    """What the command line may add to a replay: what to run it with."""

    protocol: str | None = None  # a schedule: the protocol to run (the plug-in it names, or another one)
    broker_cmd: str | None = None  # a schedule of `subsum conform broker`: the broker process to run
    engine_cmd: str | None = None  # a matching replay: the engine as a command
    engine: str | None = None  # a matching replay: a plug-in engine
    persistent: bool = False  # a matching replay: run the command in persistent mode
    timeout: float | None = None  # seconds an external program may take to answer
    policy: str | None = None  # cache operations: the cache policy (a cache replay: the plug-in it names, or another one)
    capacity: int | None = None  # a cache operations file: the capacity


#: option -> its spelling on the command line
OPTIONS = {"protocol": "--protocol", "broker_cmd": "--broker-cmd", "engine_cmd": "--engine-cmd", "engine": "--engine",
           "persistent": "--persistent", "timeout": "--timeout", "policy": "--policy", "capacity": "--capacity"}
#: format -> the options that apply to it
APPLIES = {SCHEDULE: {"protocol", "broker_cmd", "timeout"}, CLIENT_SERVER: set(), CACHE: {"policy"},
           CACHE_OPERATIONS: {"policy", "capacity"}, MATCHING: {"engine_cmd", "engine", "persistent", "timeout"}}


@attrs.frozen
class Outcome:
    """What running a replay showed: whether it `fails` still, the claim
    (or failure kind) it `violated`, one line saying so, what the replay
    had recorded, and notes."""

    path: str
    format: str
    fails: bool
    violated: str | None
    message: str
    recorded: str
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return attrs.asdict(self)


def run(path: str | Path, options: RunOptions = RunOptions()) -> Outcome:
    """Recognise the replay's format, refuse options that do not apply to it, run it."""
    kind = format_of(path)
    given = sorted(name for name in OPTIONS if getattr(options, name) not in (None, False))
    stray = [OPTIONS[name] for name in given if name not in APPLIES[kind]]
    if stray:
        raise ReplayError(path, None, f"{', '.join(stray)} {'does' if len(stray) == 1 else 'do'} not apply to a {kind} replay")
    return RUNNERS[kind](str(path), options)


def run_schedule(path: str, options: RunOptions) -> Outcome:
    replay = formats.load_schedule(path)
    protocol, notes = protocol_to_run(replay, options)
    if replay.not_checked is not None:
        left_out = "; ".join(", ".join(v) for v in replay.not_checked.values() if v) or "nothing"
        notes = (*notes, f"not checked in the run that found it: {left_out}")
    broker_class = proxy_class(options.broker_cmd, options.timeout or 10.0) if options.broker_cmd is not None else None
    try:
        violation = execute(replay.topology, replay.seed, replay.schedule, protocol, replay.defer_timeout, replay.sub_timeout, broker_class,
                            replay.delay)
    except (KeyError, TypeError, IndexError, ValueError, CannotCheck) as exc:
        raise ReplayError(path, "schedule", f"cannot run it: {exc!r}") from None
    finally:
        if broker_class is not None:
            close_processes(broker_class)
    recorded = f"{replay.violation['claim']} at {Violation('', '', replay.violation['step']).where(len(replay.schedule))}"
    if violation is None:
        return Outcome(path, SCHEDULE, False, None, f"{path}: no violation now (recorded: {recorded})", recorded, notes)
    return Outcome(path, SCHEDULE, True, violation.claim,
                   f"{violation.claim} violated at {violation.where(len(replay.schedule))}: {violation.message}", recorded, notes)


def protocol_to_run(replay: formats.ScheduleReplay, options: RunOptions) -> tuple[str, tuple[str, ...]]:
    """The protocol a schedule runs under, and a note when it is not the one
    recorded. A plug-in runs only when `--protocol` names it; an external
    broker's schedule only with `--broker-cmd` (never its recorded command)."""
    path = replay.path
    if replay.protocol == EXTERNAL or options.broker_cmd is not None:
        if options.broker_cmd is None:
            raise ReplayError(path, "protocol", f"this replay ran the external broker {replay.command!r}; to run a command, "
                                                "pass --broker-cmd CMD")
        if replay.protocol != EXTERNAL:
            raise ReplayError(path, "protocol", f"--broker-cmd replays a schedule of `subsum conform broker`; this one ran "
                                                f"protocol {replay.protocol!r}")
        return EXTERNAL, ()
    if options.protocol is None and looks_like_path(replay.protocol):
        raise ReplayError(path, "protocol", f"this replay runs the plug-in {replay.protocol}; to import it, pass "
                                            f"--protocol {replay.protocol}")
    protocol = options.protocol or replay.protocol
    try:
        runnable(protocol)
    except SubsumError as exc:
        raise ReplayError(path, "protocol", str(exc)) from None
    notes = (f"running {protocol} on a schedule recorded with {replay.protocol}",) if protocol != replay.protocol else ()
    return protocol, notes


def run_client_server(path: str, options: RunOptions) -> Outcome:
    replay = formats.load_client_server(path)
    difference = client_server.first_difference(replay.case())
    recorded = f"a difference under {replay.policy}/{replay.cache_policy}"
    if difference is None:
        return Outcome(path, CLIENT_SERVER, False, None, f"{path}: the simulator and the reference agree on every request now", recorded)
    return Outcome(path, CLIENT_SERVER, True, "CLM-CS-5", difference, recorded)


def run_cache(path: str, options: RunOptions) -> Outcome:
    kind = format_of(path)
    notes: tuple[str, ...] = ()
    if kind == CACHE:
        replay = formats.load_cache(path)
        if options.policy is None and looks_like_path(replay.policy):
            raise ReplayError(path, "policy", f"this replay runs the plug-in {replay.policy}; to import it, pass --policy {replay.policy}")
        if options.policy is not None and options.policy != replay.policy:
            notes = (f"running {options.policy} on operations recorded with {replay.policy}",)
        replay = attrs.evolve(replay, policy=options.policy or replay.policy)
    elif options.policy is None or options.capacity is None:
        raise ReplayError(path, None, "a cache operations file runs under a policy and a capacity: give --policy and --capacity")
    else:
        replay = formats.load_cache_operations(path, options.policy, options.capacity)
    cache_class(replay.policy)  # a plug-in that cannot be loaded is bad input (exit 2)
    where = f"{replay.policy}, capacity {replay.capacity}"
    difference = caching.first_difference(replay.policy, replay.capacity, replay.operations)
    if difference is None:
        return Outcome(path, kind, False, None,
                       f"{path}: the impl and the reference agree on all {len(replay.operations)} operations ({where})", "a difference", notes)
    return Outcome(path, kind, True, "CLM-CACHE-1", f"{path}: {where}: {difference}", "a difference", notes)


def run_matching(path: str, options: RunOptions) -> Outcome:
    replay = formats.load_matching(path)
    recorded = replay.engine
    if options.engine_cmd is None and options.engine is None:
        option = (f"--engine-cmd {shlex.quote(recorded['command'])}" + (" --persistent" if recorded.get("persistent") else "")
                  if "command" in recorded else f"--engine {recorded['engine']}")
        raise ReplayError(path, None, f"name the engine to run; the recorded one is: subsum replay {option} {path}")
    wait = options.timeout if options.timeout is not None else float(recorded.get("timeout", 10.0))
    engine = engine_for(options.engine_cmd, options.engine, options.persistent, wait)
    folder = Path(path)
    expected = model_results(folder)
    stored = folder / "expected.jsonl"
    notes: tuple[str, ...] = ()
    if stored.is_file() and stored.read_bytes() != b"".join(line + b"\n" for line in expected_lines(expected)):
        notes = (f"{stored} differs from the model's lines now; compared with the model's",)
    left_out = "; ".join(", ".join(v) for v in (replay.not_checked or {}).values() if v)
    if replay.found_at or left_out:
        notes += (f"found at {replay.found_at or 'an unrecorded workload'}; not checked in that run: {left_out or 'nothing'}",)
    try:
        failure = first_failure(expected, engine.run(folder))
    finally:
        engine.close()
    was = replay.failure.get("kind", "a failure")
    if failure is None:
        return Outcome(path, MATCHING, False, None, f"{path}: the engine agrees with the model now (recorded: {was})", was, notes)
    return Outcome(path, MATCHING, True, failure.kind, f"{path}: {failure}", was, notes)


RUNNERS: dict[str, Callable[[str, RunOptions], Outcome]] = {
    SCHEDULE: run_schedule, CLIENT_SERVER: run_client_server, CACHE: run_cache, CACHE_OPERATIONS: run_cache, MATCHING: run_matching}
