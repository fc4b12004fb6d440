"""`subsum fuzz reconfig` and `subsum conform broker`: random schedules on
the broker simulator, checked against the model (spec/05-network.md
DEF-NET-8, spec/11-plugins.md DEF-PLUG-2).

Schedule i is drawn with seed + i (`schedules`) and run with every check;
the first violation ends it. When the budget is spent (or enough
schedules ran, or enough violations were found), each violating schedule
is shrunk (`shrinking`) and saved as a replay (`replays`), which `subsum
replay FILE` runs again exactly.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path
from typing import Callable

import attrs

from subsum.conformance.runner.budget import CheckTimeout, time_limit
from subsum.conformance.replays import documents
from subsum.conformance.replays.writing import ReplayNotSaved, ScheduleReplay, save_schedule
from subsum.conformance.schedules.runs import (POOL, Pool, Run, Violation, fuzzable, initial_operations, make_topology, next_operation,
                                         violation_of)
from subsum.conformance.schedules.shrinking import Found, shrink
from subsum.impl.network.sim import DEFER_TIMEOUT, SUB_TIMEOUT


@attrs.define
class FuzzResult:
    """What a fuzzing run did: the schedules and operations it checked, and
    each violation saved (its replay file, the claim, its length as saved
    and as found)."""

    schedules: int = 0
    operations: int = 0
    violations: list = attrs.field(factory=list)  # replay file paths
    claims: list = attrs.field(factory=list)  # the violated claim of each
    lengths: list = attrs.field(factory=list)  # (operations saved, operations found) of each
    seconds: float = 0.0
    first_violation_seconds: float | None = None
    #: Operations of a schedule cut short when the budget ran out (not counted in `schedules`).
    cut_operations: int = 0
    #: The violating schedules as found, before shrinking (the progress line counts them).
    found: list = attrs.field(factory=list)
    #: The violations whose replay could not be written (ReplayNotSaved, each holding its replay).
    unsaved: list = attrs.field(factory=list)
    #: Whether Ctrl-C ended the run (what was found before it is saved as found, unshrunk).
    interrupted: bool = False
    #: Violations like one already kept (`Campaign(distinct=True)`): counted, not saved.
    repeats: int = 0

    @property
    def schedules_per_minute(self) -> float:
        return self.schedules / self.seconds * 60 if self.seconds else 0.0

    def report(self, **parameters) -> dict:
        """The run as JSON (`subsum fuzz reconfig --format json`): its parameters, counts and violations."""
        unsaved = {error.path for error in self.unsaved}
        return {**parameters, "schedules": self.schedules, "operations": self.operations, "seconds": round(self.seconds, 3),
                "schedules_per_minute": round(self.schedules_per_minute, 1),
                "first_violation_seconds": self.first_violation_seconds, "cut_operations": self.cut_operations,
                "interrupted": self.interrupted,
                "repeats": self.repeats,
                "violations": [{"claim": c, "replay": str(p), "operations": saved, "saved": p not in unsaved,
                                **self._found_at(k, parameters.get("seed")), **({"shrunk_from": found} if found != saved else {})}
                               for k, (p, c, (saved, found)) in enumerate(zip(self.violations, self.claims, self.lengths))]}

    def _found_at(self, k: int, seed: int | None) -> dict:
        """Where violation k's schedule was drawn: "seed S, schedule I" (I = S − the run's seed), when known."""
        if k >= len(self.found):
            return {}
        case_seed = self.found[k].seed
        return {"found_at": f"seed {case_seed}" + (f", schedule {case_seed - seed}" if seed is not None else "")}


def violation_kind(violation: Violation) -> tuple[str, str]:
    """What tells violations apart for `Campaign(distinct=True)`: the claim, and the request the broker got wrong,
    the word after "broker N" ("broker 0 SUB from 1000000: …" -> SUB, "broker 2 addLinkTo(3): …" -> addLinkTo,
    "broker 0, LINK-ADDED: crash …" -> LINK-ADDED); "" when the message names none.

    >>> [violation_kind(Violation("CLM-NET-6", m, 3))[1] for m in ("broker 0 SUB from 1000000: sent []", "broker 2 addLinkTo(3): sent []",
    ...                                                              "broker 0, LINK-ADDED: crash", "tables differ")]
    ['SUB', 'addLinkTo', 'LINK-ADDED', '']
    """
    found = re.match(r"broker \d+,? ([A-Za-z-]+)", violation.message)
    return violation.claim, found.group(1) if found else ""


def fuzz(drawing: Drawing | None = None, campaign: Campaign | None = None, *, progress: Callable[[FuzzResult], None] | None = None,
         shrinking: Callable[[Found], None] | None = None) -> FuzzResult:
    """Draw schedules (`drawing`; schedule i uses seed + i) until the
    campaign's budget is spent, its `schedules` ran, or `max_violations`
    were found. Then shrink each violating schedule for up to
    `shrink_budget` seconds (`shrink`; 0: not at all; `shrinking` is told
    before each) and save it as a replay file. Each schedule starts with
    every client subscribing (`initial_operations`). `progress` is told
    after each schedule."""
    drawing, campaign = drawing or Drawing(), campaign or Campaign()
    if drawing.broker_class is None:
        fuzzable(drawing.protocol)
    result = FuzzResult()
    started = time.perf_counter()
    limit = None
    try:
        with time_limit(campaign.budget) as limit:  # a step (a model check on a large network) can outlast the budget
            _fuzz_until_done(result, started, drawing, campaign, progress)
    except CheckTimeout:  # caught outside the block too: the alarm may ring as the block ends
        if limit is None or not limit.fired:
            raise  # an outer budget's, not the fuzzer's
    except KeyboardInterrupt:  # Ctrl-C: what was found is saved as found (not shrunk), then the CLI exits 130
        result.interrupted = True
    result.seconds = time.perf_counter() - started
    save_found(result, campaign, shrinking)
    return result


def save_found(result: FuzzResult, campaign: Campaign, shrinking: Callable[[Found], None] | None = None) -> None:
    """Shrink and save every violating schedule of `result.found` (`_save`), in the order found."""
    for case in result.found:
        _save(result, case, campaign, shrinking)


def _save(result: FuzzResult, case: Found, campaign: Campaign, shrinking: Callable[[Found], None] | None) -> None:
    """Shrink a violating schedule (unless `shrink_budget` is 0) and save it as a replay; a replay that cannot be
    written is kept in `result.unsaved` with its document, so that the finding is printed instead of lost."""
    schedule, violation = case.schedule, case.violation
    if campaign.shrink_budget > 0 and not result.interrupted:
        if shrinking:
            shrinking(case)
        try:
            schedule, violation = shrink(case, campaign.shrink_budget)
        except KeyboardInterrupt:  # Ctrl-C while shrinking: this and the rest are saved as found
            result.interrupted = True
    replay = ScheduleReplay(case.protocol, case.topology, case.seed, schedule, attrs.asdict(violation), case.defer_timeout,
                            case.sub_timeout, shrunk_from=len(case.schedule), command=campaign.command,
                            not_checked=campaign.not_checked)
    try:
        path = save_schedule(campaign.replay_dir, replay)
    except ReplayNotSaved as error:
        result.unsaved.append(error)
        path = error.path
    result.violations.append(path)
    result.claims.append(violation.claim)
    result.lengths.append((len(schedule), len(case.schedule)))


@attrs.frozen
class Drawing:
    """What every schedule of a run is drawn and run with; schedule i uses seed + i."""

    #: A topology family of `subsum fuzz reconfig --topology`, drawn anew per schedule.
    topology: str = "random-tree"
    brokers: int = 6
    subscriptions: int = 8
    #: The chance that a step changes the tree (a swap, a break, a crash...) rather than the subscriptions.
    churn: float = 0.1
    #: Operations per schedule before it quiesces.
    steps: int = 60
    seed: int = 0
    protocol: str = "strawman"
    #: The protocols' timers, in simulated ms: deferred unsubscriptions (DEF-RCF-2), held-back subscriptions (DEF-RCF-4).
    defer_timeout: float = DEFER_TIMEOUT
    sub_timeout: float = SUB_TIMEOUT
    #: The filters and event attributes drawn from.
    pool: Pool = POOL
    #: Replaces the protocol's checked class: an external broker (`subsum conform broker`).
    broker_class: type | None = None


@attrs.frozen
class Campaign:
    """How a fuzz campaign runs, beside what it draws (`Drawing`): until
    `budget` seconds are spent, `schedules` ran or `max_violations` were
    found; each violation shrunk for up to `shrink_budget` seconds and saved
    in `replay_dir`. `only`: run schedule `only` alone (seed + only);
    `distinct`: a violation like one already found (the same
    `violation_kind`) is counted in `repeats`, not kept, and
    `max_violations` counts distinct ones. Each replay records `command` (an
    external broker's) and `not_checked` (what the run cannot check,
    `conform broker`, DEF-PLUG-7)."""

    budget: float = 30.0
    schedules: int | None = None
    max_violations: int = 10
    shrink_budget: float = 10.0
    replay_dir: Path = documents.FUZZ_FOLDER
    only: int | None = None
    distinct: bool = False
    command: str | None = None
    not_checked: dict | None = attrs.field(default=None, eq=False)


@attrs.frozen
class Outcome:
    """Schedule i's run: its violation (as found), the operations it ran, and
    whether it ran to its end (False: cut by the budget, not a checked schedule)."""

    found: Found | None
    operations: int
    finished: bool = True


def run_schedule(drawing: Drawing, i: int, deadline: float | None = None) -> Outcome:
    """Draw schedule i (seed + i) and run it until its first violation or its
    end; stop early, unfinished, when `deadline` (a perf_counter time) passes."""
    d = drawing
    run_seed = d.seed + i
    rng = random.Random(run_seed)
    topo = make_topology(d.topology, d.brokers, run_seed, rng, d.subscriptions)
    schedule: list[dict] = []

    def found(violation: Violation) -> Found:
        return Found(topo, run_seed, schedule, violation, d.protocol, d.defer_timeout, d.sub_timeout, d.broker_class)

    try:
        run = Run(topo, run_seed, d.protocol, d.defer_timeout, d.sub_timeout, broker_class=d.broker_class)
    except Exception as exc:  # the brokers failed while the network was built: a violation with no schedule
        return Outcome(found(violation_of(exc, 0)), 0)
    opening = initial_operations(rng, run.net, d.pool)
    for step in range(len(opening) + d.steps + 1):
        if deadline is not None and time.perf_counter() >= deadline:  # the budget holds inside a schedule too
            return Outcome(None, len(schedule), finished=False)
        if step < len(opening):
            op = opening[step]
        else:
            op = next_operation(rng, run.net, d.churn, run.broken, d.pool) if step < len(opening) + d.steps else {"op": "quiesce"}
        schedule.append(op)
        try:
            run.apply(op)
        except Exception as exc:  # a failed check, or the implementation crashing
            return Outcome(found(violation_of(exc, step)), len(schedule))
    return Outcome(None, len(schedule))


def keep_found(result: FuzzResult, case: Found, distinct: bool) -> None:
    """Keep a violating schedule, or with `distinct` count it as a repeat of one like it already kept."""
    if distinct and any(violation_kind(f.violation) == violation_kind(case.violation) for f in result.found):
        result.repeats += 1
    else:
        result.found.append(case)


def _fuzz_until_done(result: FuzzResult, started: float, drawing: Drawing, campaign: Campaign,
                     progress: Callable[[FuzzResult], None] | None) -> None:
    found, budget, only, schedules = result.found, campaign.budget, campaign.only, campaign.schedules
    i = 0 if only is None else only
    end = schedules if only is None else only + 1
    while ((end is None or i < end) and time.perf_counter() - started < budget
           and len(found) < campaign.max_violations):
        outcome = run_schedule(drawing, i, started + budget)
        if not outcome.finished:
            result.cut_operations += outcome.operations  # cut by the budget: not a checked schedule
            break
        result.schedules += 1
        result.operations += outcome.operations
        if outcome.found is not None:
            keep_found(result, outcome.found, campaign.distinct)
            if result.first_violation_seconds is None:
                result.first_violation_seconds = time.perf_counter() - started
        i += 1
        if progress:
            result.seconds = time.perf_counter() - started
            progress(result)
