"""`explore()`: one search of a scope (spec/12-exploration.md DEF-EXP-4),
breadth first, depth first (`searches`) or breadth first on several
processes (`workers`, DEF-EXP-11), under the checks it declares, with the
cyclic collector off; each violation found is saved as a schedule replay.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import attrs

from subsum.conformance.schedules import declared
from subsum.conformance.explore.scope import DELAY, SEED, Scope
from subsum.conformance.explore.searches import BUDGET, MAX_STATES, STRATEGIES, Exploration, Found
from subsum.conformance.explore.workers import ParallelSearch
from subsum.conformance.replays.writing import ReplayNotSaved, ScheduleReplay, safe_name, save_schedule
from subsum.core import collector


def explore(scope: Scope, *, max_states: int = MAX_STATES, budget: float = BUDGET, out_dir: Path | None = None,
            progress: Callable[[Exploration], None] | None = None, sleep_sets: bool = True, memo: bool = True,
            strategy: str = "bfs", jobs: int = 1) -> Exploration:
    """Search `scope` breadth first (`strategy` "dfs": depth first) until
    every state is seen, a violation is found, `max_states` states are
    fingerprinted or `budget` seconds pass; save the violation's schedule
    into `out_dir` (None: do not). `sleep_sets` False makes every move from
    every state (DEF-EXP-6 off); `memo` False runs every delivery's handler
    (DEF-EXP-7 off). `jobs` > 1: bfs on that many processes (DEF-EXP-11)."""
    result = Exploration(scope, strategy=strategy, jobs=jobs)
    search = STRATEGIES[strategy](scope, result, time.perf_counter(), max_states, budget, progress, sleep_sets)
    if jobs > 1:
        assert strategy == "bfs", f"jobs={jobs}: only the breadth-first search runs on several processes"
        search = ParallelSearch.across(jobs, scope, result, search.started, max_states, budget, progress)
    try:
        with collector.acyclic(), declared.tallying() as tally:
            try:
                search.run(memo)
            finally:
                result.seconds = time.perf_counter() - search.started
                search.release_frontier()
                result.properties = search.checks.report(tally) if search.checks else []
    except KeyboardInterrupt:  # Ctrl-C: the report says how far it got, and what was found is saved
        result.cut_by = "interrupt"
    save_all(result, out_dir)
    return result


def save_all(result: Exploration, out_dir: Path | None) -> None:
    """Save each violation found as a replay into `out_dir` (None: do not); one that cannot be written is kept in
    `result.unsaved`, to be printed in full instead of lost."""
    for found in result.found:
        if out_dir is not None:
            try:
                found.replay = save_found(result.scope, found, out_dir)
            except ReplayNotSaved as error:
                result.unsaved.append(error)
                found.replay = error.path


def save_found(scope: Scope, found: Found, out_dir: Path) -> Path:
    """Save a violation's schedule as a schedule replay of the scope's network (`subsum replay` runs it)."""
    replay = ScheduleReplay(scope.protocol, scope.network(), SEED, found.schedule, attrs.asdict(found.violation), scope.defer_timeout,
                            scope.sub_timeout, delay=DELAY)
    return save_schedule(out_dir, replay, f"explore-{safe_name(scope.protocol)}-n{scope.brokers}-s{scope.subscriptions}"
                                          f"-e{scope.events}-k{scope.swaps}.json")
