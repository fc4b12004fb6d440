"""The breadth-first search of `subsum explore` (spec/12-exploration.md
DEF-EXP-4): every state of a scope reachable by its moves, each checked,
each fingerprinted once; the first violation found is at the least depth,
and is saved as a schedule replay.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import attrs

from subsum.conformance.explore.scope import DELAY, SEED, Scope
from subsum.conformance.explore.state import State, fingerprint, moves, successor
from subsum.conformance.replays.writing import save_schedule
from subsum.conformance.schedules import Violation, violation_of

#: The default bounds: states fingerprinted, and seconds.
MAX_STATES = 1_000_000
BUDGET = 60.0


@attrs.define
class Found:
    """A violation: the claim, the message, the schedule that shows it (the moves' operations) and its replay."""

    violation: Violation
    schedule: list[dict]
    moves: int
    replay: Path | None = None


@attrs.define
class Exploration:
    """What a search did (the JSON report of DEF-EXP-5)."""

    scope: Scope
    states: int = 0
    transitions: int = 0
    depth: int = 0
    complete: bool = False
    seconds: float = 0.0
    found: list[Found] = attrs.field(factory=list)
    cut_by: str | None = None  # "max-states" or "budget" when a bound cut the search

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else 0.0

    def report(self) -> dict:
        return {"protocol": self.scope.protocol, "scope": self.scope.describe(), "states": self.states, "transitions": self.transitions,
                "depth": self.depth, "complete": self.complete, "cut_by": self.cut_by, "seconds": round(self.seconds, 3),
                "states_per_second": round(self.states_per_second, 1),
                "violations": [{"claim": f.violation.claim, "message": f.violation.message, "moves": f.moves,
                                "operations": len(f.schedule), "replay": str(f.replay) if f.replay else None} for f in self.found]}


@attrs.frozen
class Node:
    """A state in the frontier, and the path that reached it (its parent's node and its own move's operations)."""

    state: State
    ops: tuple = ()
    parent: Node | None = None
    depth: int = 0

    def schedule(self) -> list[dict]:
        parts: list[tuple] = []
        node: Node | None = self
        while node is not None:
            parts.append(node.ops)
            node = node.parent
        return [op for ops in reversed(parts) for op in ops]


def explore(scope: Scope, *, max_states: int = MAX_STATES, budget: float = BUDGET, out_dir: Path | None = None,
            progress: Callable[[Exploration], None] | None = None) -> Exploration:
    """Search `scope` breadth first until every state is seen, a violation
    is found, `max_states` states are fingerprinted or `budget` seconds
    pass; save the violation's schedule into `out_dir` (None: do not)."""
    result = Exploration(scope)
    started = time.perf_counter()
    root = Node(State.initial(scope))
    seen = {fingerprint(root.state)}
    frontier = [root]
    result.states = 1
    while frontier and not result.found:
        result.depth = frontier[0].depth
        next_layer: list[Node] = []
        for node in frontier:
            cut = _bound(result, started, max_states, budget)
            if cut:
                result.cut_by = cut
                break
            _expand(node, scope, seen, next_layer, result)
            if result.found:
                break
        if result.cut_by:
            break
        if progress:
            result.seconds = time.perf_counter() - started
            progress(result)
        frontier = next_layer
    result.complete = not frontier and not result.cut_by and not result.found
    result.seconds = time.perf_counter() - started
    for found in result.found:
        if out_dir is not None:
            found.replay = _save(scope, found, out_dir)
    return result


def _bound(result: Exploration, started: float, max_states: int, budget: float) -> str | None:
    if result.states >= max_states:
        return "max-states"
    if time.perf_counter() - started >= budget:
        return "budget"
    return None


def _expand(node: Node, scope: Scope, seen: set[int], next_layer: list[Node], result: Exploration) -> None:
    """Every successor of `node`: checked, and kept when its fingerprint is new."""
    for ops, progress in moves(node.state, scope):
        result.transitions += 1
        try:
            state, done = successor(node.state, ops, progress)
        except Exception as exc:  # a failed check, or the implementation crashing
            schedule = node.schedule()
            failing = schedule + ops
            result.found.append(Found(violation_of(exc, _failing_step(schedule, ops)), failing, node.depth + 1))
            result.depth = node.depth + 1
            return
        key = fingerprint(state)
        if key in seen:
            continue
        seen.add(key)
        result.states += 1
        next_layer.append(Node(state, tuple(done), node, node.depth + 1))


def _failing_step(before: list[dict], ops: list[dict]) -> int:
    """The step a replay reports: the move's last operation (a move is one operation; its quiesce is not applied)."""
    return len(before) + len(ops) - 1


def _save(scope: Scope, found: Found, out_dir: Path) -> Path:
    return save_schedule(out_dir, protocol=scope.protocol, topology=scope.network(), seed=SEED, schedule=found.schedule,
                         violation=attrs.asdict(found.violation), defer_timeout=scope.defer_timeout, sub_timeout=scope.sub_timeout,
                         delay=DELAY, name=f"explore-{scope.protocol}-n{scope.brokers}-s{scope.subscriptions}-e{scope.events}-k{scope.swaps}.json")
