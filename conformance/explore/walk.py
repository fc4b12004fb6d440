"""Random walks over a scope's model (spec/12-exploration.md DEF-EXP-9):
the third checker on `Model`, beside breadth and depth first. Walk i
starts at the initial state and takes, until no action is enabled, an
action drawn by `random.Random(seed + i)`: walk i is the same walk whatever
the number of walks, so a finding names its seed and walk, and replays.

Each step is the model's, checked as the searches check it (the declared
properties, DEF-EXP-8), with the same memo of local steps. A violation's
schedule is shrunk by delta debugging (`shrinking.shrink`, every candidate
run from scratch) and saved as the same kind of schedule replay an
exhaustive search saves. A walk proves nothing about the states it did not
reach: the report counts the distinct states it did (by fingerprint).
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Callable

from subsum.conformance.schedules import declared
from subsum.conformance.explore.fingerprints import Records
from subsum.conformance.explore.memo import LocalSteps
from subsum.conformance.explore.model import Model, ScopeModel
from subsum.conformance.explore.scope import DELAY, SEED, Scope
from subsum.conformance.explore.search import save_all
from subsum.conformance.explore.searches import Exploration, Found, failing_step
from subsum.conformance.schedules.runs import violation_of
from subsum.conformance.schedules.shrinking import Found as Shrinkable
from subsum.conformance.schedules.shrinking import shrink
from subsum.core import collector

#: The default number of walks, and the longest a walk may be (a scope's paths are finite; this bounds a bug's).
WALKS = 1000
MAX_DEPTH = 10_000


def walk_once(model: Model, rng: random.Random, memo: LocalSteps | None, seen: set[int], records: Records,
              result: Exploration) -> Found | None:
    """One walk from the initial state until no action is enabled; each state's fingerprint added to `seen`. A
    violation is returned with the schedule that shows it."""
    state = model.init()
    schedule: list[dict] = []
    for depth in range(MAX_DEPTH):
        actions = list(model.actions(state))
        if not actions:
            break
        action = rng.choice(actions)
        result.transitions += 1
        try:
            state, done, _ = model.step(state, action, memo)
        except Exception as exc:  # a failed check, or the implementation crashing
            return Found(violation_of(exc, failing_step(schedule, action.ops)), schedule + action.ops, depth + 1)
        schedule += done
        seen.add(model.fingerprint(state, records))
        result.depth = max(result.depth, depth + 1)
    return None


def random_walk(scope: Scope, *, seed: int = 0, walks: int = WALKS, budget: float = 60.0, out_dir: Path | None = None,
                shrink_budget: float = 10.0, progress: Callable[[Exploration], None] | None = None) -> Exploration:
    """Walk `scope` `walks` times (walk i drawn with seed + i) or until `budget` seconds pass or a walk breaks a
    property; shrink that walk's schedule and save it into `out_dir` (None: do not). The report's `states` counts
    the distinct states reached, `transitions` the steps taken, `walks` the walks made."""
    model = ScopeModel(scope)
    result = Exploration(scope, strategy="random", seed=seed)
    started = time.perf_counter()
    seen: set[int] = set()
    records = Records()
    try:
        with collector.acyclic(), declared.tallying() as tally:
            memo = LocalSteps.for_run(model.init().run)
            result.local_steps = memo
            for i in range(walks):
                if time.perf_counter() - started >= budget:
                    result.cut_by = "budget"
                    break
                found = walk_once(model, random.Random(seed + i), memo, seen, records, result)
                result.walks, result.states = i + 1, len(seen)
                if found is not None:
                    result.found.append(found)
                    break
                if progress and i % 64 == 0:
                    result.seconds = time.perf_counter() - started
                    progress(result)
            result.properties = declared.Checks(model.properties()).report(tally)
    except KeyboardInterrupt:
        result.cut_by = "interrupt"
    result.seconds = time.perf_counter() - started
    for found in result.found:
        _shrink(scope, found, shrink_budget if result.cut_by != "interrupt" else 0.0)
    save_all(result, out_dir)
    return result


def _shrink(scope: Scope, found: Found, budget: float) -> None:
    """Shorten the walk's schedule to one that fails the same way (`shrinking.shrink`), kept in `found`."""
    if budget <= 0:
        return
    case = Shrinkable(scope.network(), SEED, found.schedule, found.violation, scope.protocol, scope.defer_timeout, scope.sub_timeout,
                      delay=DELAY)
    found.schedule, found.violation = shrink(case, budget)
