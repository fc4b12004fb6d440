"""Shrinking a violating schedule (spec/11-plugins.md DEF-PLUG-2): delta
debugging keeps a shorter schedule only if it fails the same way, so the
replay the fuzzer saves is small and still shows the same violation.
"""

from __future__ import annotations

import time

import attrs

from subsum.conformance.schedules.runs import DELAY, ScheduleError, Violation, execute


@attrs.frozen
class Found:
    """A violating schedule as the fuzzer found it, before shrinking."""

    topology: dict
    seed: int
    schedule: list
    violation: Violation
    protocol: str
    defer_timeout: float
    sub_timeout: float
    broker_class: type | None = None
    delay: tuple[float, float] = DELAY  # the links' delay range (`subsum explore`'s walks: 0, 0)


def same_failure(got: Violation | None, want: Violation) -> bool:
    """Shrinking keeps a smaller schedule only if it fails the same way: the
    same claim, and for a crash the same exception type."""
    if got is None or got.claim != want.claim:
        return False
    return want.claim != "crash" or got.message.split(":")[0] == want.message.split(":")[0]


def shrink(case: Found, budget: float) -> tuple[list[dict], Violation]:
    """A smaller schedule that fails the same way (`same_failure`), found
    within `budget` seconds by delta debugging: drop chunks of operations,
    halving the chunk from half the schedule down to one operation, keeping
    every drop after which the failure remains; then shorten each `deliver`
    to its first choices. The schedule is cut after its failing step.

    Every candidate is run from scratch by `execute`, so the result replays
    exactly; an operation a shorter schedule makes meaningless (an unknown
    client, a link gone) fails differently and is not kept."""
    deadline = time.perf_counter() + budget

    def fails(schedule: list[dict]) -> Violation | None:
        try:
            got = execute(case.topology, case.seed, schedule, case.protocol, case.defer_timeout, case.sub_timeout, case.broker_class,
                          case.delay)
        except ScheduleError:
            return None
        return got if same_failure(got, case.violation) else None

    schedule, violation = list(case.schedule), case.violation
    schedule = schedule[:violation.step + 1]
    chunk = max(1, len(schedule) // 2)
    while chunk >= 1 and time.perf_counter() < deadline:
        i = 0
        while i < len(schedule) and time.perf_counter() < deadline:
            candidate = schedule[:i] + schedule[i + chunk:]
            got = fails(candidate) if candidate else None
            if got is not None:
                schedule, violation = candidate[:got.step + 1], got
            else:
                i += chunk
        chunk //= 2
    for i, op in enumerate(schedule):
        if op["op"] != "deliver" or time.perf_counter() >= deadline:
            continue
        for keep in range(1, len(op["choices"])):
            candidate = schedule[:i] + [{**op, "choices": op["choices"][:keep]}] + schedule[i + 1:]
            got = fails(candidate)
            if got is not None:
                schedule, violation = candidate[:got.step + 1], got
                break
    return schedule, violation
