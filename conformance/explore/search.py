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
from subsum.conformance.explore.state import State, Step, fingerprint, independent, moves, successor
from subsum.conformance.replays.writing import ReplayNotSaved, safe_name, save_schedule
from subsum.conformance.schedules import Violation, violation_of

#: The default bounds: states fingerprinted, and seconds.
MAX_STATES = 1_000_000
BUDGET = 60.0
#: States expanded between two calls of `progress`.
PROGRESS_EVERY = 256


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
    cut_by: str | None = None  # "max-states", "budget" or "interrupt" (Ctrl-C) when one cut the search
    queue: int = 0  # states reached but not yet visited when the search was cut (TLC's "states left on queue")
    unsaved: list = attrs.field(factory=list)  # ReplayNotSaved of each violation whose replay could not be written

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else 0.0

    def report(self) -> dict:
        return {"protocol": self.scope.protocol, "scope": self.scope.describe(), "states": self.states, "transitions": self.transitions,
                "depth": self.depth, "complete": self.complete, "cut_by": self.cut_by, "queue": self.queue, "seconds": round(self.seconds, 3),
                "states_per_second": round(self.states_per_second, 1),
                "violations": [{"claim": f.violation.claim, "message": f.violation.message, "moves": f.moves,
                                "where": f.violation.where(len(f.schedule)),
                                "operations": len(f.schedule), "replay": str(f.replay) if f.replay else None,
                                "saved": f.replay is not None and all(e.path != f.replay for e in self.unsaved)} for f in self.found]}


@attrs.define(eq=False)
class Node:
    """A state in the frontier, the path that reached it (its parent's node and its own move's operations), and its
    sleep set: the moves it need not make, each with what it touched (DEF-EXP-6)."""

    state: State
    ops: tuple = ()
    parent: Node | None = None
    depth: int = 0
    sleep: dict = attrs.field(factory=dict)  # move key -> Step
    visit: Visit | None = None

    def schedule(self) -> list[dict]:
        parts: list[tuple] = []
        node: Node | None = self
        while node is not None:
            parts.append(node.ops)
            node = node.parent
        return [op for ops in reversed(parts) for op in ops]


@attrs.define(eq=False)
class Visit:
    """What the search knows of one fingerprint: the moves not made from it yet because every path to it had them
    asleep, the moves made from it, and its node while that waits in a frontier."""

    asleep: frozenset
    made: set = attrs.field(factory=set)
    waiting: Node | None = None


def explore(scope: Scope, *, max_states: int = MAX_STATES, budget: float = BUDGET, out_dir: Path | None = None,
            progress: Callable[[Exploration], None] | None = None, sleep_sets: bool = True) -> Exploration:
    """Search `scope` breadth first until every state is seen, a violation
    is found, `max_states` states are fingerprinted or `budget` seconds
    pass; save the violation's schedule into `out_dir` (None: do not).
    `sleep_sets` False makes every move from every state (DEF-EXP-6 off)."""
    result = Exploration(scope)
    started = time.perf_counter()
    root = Node(State.initial(scope))
    root.visit = Visit(frozenset(), waiting=root)
    seen = {fingerprint(root.state): root.visit}
    frontier = [root]
    result.states = 1
    try:
        _search(frontier, scope, seen, result, started, max_states, budget, progress, sleep_sets)
    except KeyboardInterrupt:  # Ctrl-C: the report says how far it got, and what was found is saved
        result.cut_by = "interrupt"
    result.seconds = time.perf_counter() - started
    for found in result.found:
        if out_dir is not None:
            try:
                found.replay = _save(scope, found, out_dir)
            except ReplayNotSaved as error:
                result.unsaved.append(error)
                found.replay = error.path
    return result


def _search(frontier: list[Node], scope: Scope, seen: dict[int, Visit], result: Exploration, started: float, max_states: int,
            budget: float, progress: Callable[[Exploration], None] | None, sleep_sets: bool) -> None:
    """The layers of the breadth-first search, until none is left, a violation is found or a bound cuts it; `result.queue`
    counts the states reached and not yet visited, kept up to date so that Ctrl-C leaves it right."""
    while frontier and not result.found:
        result.depth = frontier[0].depth
        next_layer: list[Node] = []
        for i, node in enumerate(frontier):
            result.queue = len(frontier) - i + len(next_layer)
            cut = _bound(result, started, max_states, budget)
            if cut:
                result.cut_by = cut
                return
            _expand(node, scope, seen, next_layer, result, sleep_sets)
            if result.found:
                break
            if progress and i % PROGRESS_EVERY == 0:
                result.seconds = time.perf_counter() - started
                progress(result)
        frontier = next_layer
        result.queue = len(frontier)
    result.queue = 0 if result.found else result.queue
    result.complete = not frontier and not result.found


def _bound(result: Exploration, started: float, max_states: int, budget: float) -> str | None:
    if result.states >= max_states:
        return "max-states"
    if time.perf_counter() - started >= budget:
        return "budget"
    return None


def _expand(node: Node, scope: Scope, seen: dict[int, Visit], next_layer: list[Node], result: Exploration, sleep_sets: bool) -> None:
    """Every move of `node` neither asleep nor made before from its fingerprint: checked, and its successor kept
    (with its sleep set) when the fingerprint is new or was reached before with moves asleep that now are not."""
    visit = node.visit
    assert visit is not None
    visit.waiting = None
    made: list[Step] = []
    for move in moves(node.state, scope):
        if move.key in node.sleep or move.key in visit.made:
            continue
        result.transitions += 1
        try:
            state, done, step = successor(node.state, move)
        except Exception as exc:  # a failed check, or the implementation crashing
            schedule = node.schedule()
            result.found.append(Found(violation_of(exc, _failing_step(schedule, move.ops)), schedule + move.ops, node.depth + 1))
            result.depth = node.depth + 1
            return
        visit.made.add(move.key)
        sleep = {}
        if sleep_sets:
            sleep = {x.move.key: x for x in [*node.sleep.values(), *made] if independent(x, step, node.state)}
        made.append(step)
        _reach(Node(state, tuple(done), node, node.depth + 1, sleep), seen, next_layer, result)


def _reach(child: Node, seen: dict[int, Visit], next_layer: list[Node], result: Exploration) -> None:
    """`child` reached: a new fingerprint joins the next layer; a known one whose asleep moves this path does not
    have asleep is expanded again for them (Godefroid's sleep sets with state matching)."""
    key = fingerprint(child.state)
    visit = seen.get(key)
    if visit is None:
        child.visit = seen[key] = Visit(frozenset(child.sleep), waiting=child)
        result.states += 1
        next_layer.append(child)
        return
    woken = visit.asleep - child.sleep.keys()
    if not woken:
        return
    visit.asleep = visit.asleep & child.sleep.keys()
    if visit.waiting is not None:
        visit.waiting.sleep = {k: x for k, x in visit.waiting.sleep.items() if k in visit.asleep}
        return
    child.visit = visit
    visit.waiting = child
    next_layer.append(child)


def _failing_step(before: list[dict], ops: list[dict]) -> int:
    """The step a replay reports: the move's last operation (a move is one operation; its quiesce is not applied)."""
    return len(before) + len(ops) - 1


def _save(scope: Scope, found: Found, out_dir: Path) -> Path:
    return save_schedule(out_dir, protocol=scope.protocol, topology=scope.network(), seed=SEED, schedule=found.schedule,
                         violation=attrs.asdict(found.violation), defer_timeout=scope.defer_timeout, sub_timeout=scope.sub_timeout,
                         delay=DELAY, name=f"explore-{safe_name(scope.protocol)}-n{scope.brokers}-s{scope.subscriptions}-e{scope.events}-k{scope.swaps}.json")
