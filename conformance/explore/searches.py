"""The searches of `subsum explore` (spec/12-exploration.md DEF-EXP-4):
breadth first and depth first over a scope's model, every state reachable
by its moves checked and fingerprinted once, and what a search reports
(`Exploration`). `search.explore` runs one; `workers` splits the
breadth-first one across processes (DEF-EXP-11).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, cast

import attrs

from subsum.conformance.schedules import declared
from subsum.conformance.explore.memo import LocalSteps
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.fingerprints import Parts, Records, client_parts, delivered_parts, published_parts
from subsum.conformance.explore.model import ScopeModel
from subsum.conformance.explore.state import State, Step, independent
from subsum.conformance.schedules.runs import Violation, violation_of

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
    strategy: str = "bfs"
    seed: int | None = None  # the random walks' (DEF-EXP-9); None for a search
    walks: int = 0  # random walks made
    jobs: int = 1  # processes the search ran on (DEF-EXP-11)
    states: int = 0
    transitions: int = 0
    depth: int = 0
    complete: bool = False
    seconds: float = 0.0
    found: list[Found] = attrs.field(factory=list)
    cut_by: str | None = None  # "max-states", "budget" or "interrupt" (Ctrl-C) when one cut the search
    queue: int = 0  # states reached but not yet visited when the search was cut (TLC's "states left on queue")
    unsaved: list = attrs.field(factory=list)  # ReplayNotSaved of each violation whose replay could not be written
    local_steps: LocalSteps | None = None  # the memo of local steps (DEF-EXP-7), None when the search keeps none
    properties: list[dict] = attrs.field(factory=list)  # each declared property and how often it ran (DEF-EXP-8)

    def raise_if_interrupted(self) -> None:
        """Raise KeyboardInterrupt again if Ctrl-C cut the search (which keeps it to report on): for a caller that runs
        several searches, such as a bench, which must stop there as the user asked."""
        if self.cut_by == "interrupt":
            raise KeyboardInterrupt

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else 0.0

    @property
    def collision_bound(self) -> float:
        """A bound on the probability that two different states were taken as one because their 64-bit fingerprints
        met (DEF-EXP-3): each of the states made (one per transition, and the first) was looked up among at most
        `states` fingerprints, each a match by chance with probability 2^-64 if fingerprints behave as uniform
        64-bit values (which Python's tuple hash approximates; it does not guarantee it)."""
        return (self.transitions + 1) * self.states / 2.0**64

    def report(self) -> dict:
        walking = {"seed": self.seed, "walks": self.walks} if self.strategy == "random" else {}
        return {"protocol": self.scope.protocol, "scope": self.scope.describe(), "strategy": self.strategy, "jobs": self.jobs, **walking,
                "states": self.states, "transitions": self.transitions,
                "depth": self.depth, "complete": self.complete, "cut_by": self.cut_by, "queue": self.queue, "seconds": round(self.seconds, 3),
                "states_per_second": round(self.states_per_second, 1),
                "fingerprint_collision_bound": float(f"{self.collision_bound:.3g}"),
                "violations": [{"claim": f.violation.claim, "message": f.violation.message, "moves": f.moves,
                                "where": f.violation.where(len(f.schedule)),
                                "operations": len(f.schedule), "replay": str(f.replay) if f.replay else None,
                                "saved": f.replay is not None and all(e.path != f.replay for e in self.unsaved)} for f in self.found],
                "local_steps": self.local_steps.report() if self.local_steps else None, "properties": self.properties}


@attrs.define(eq=False)
class Node:
    """A state in the frontier, the path that reached it (its parent's node and its own move's operations), and its
    sleep set: the moves it need not make, each with what it touched (DEF-EXP-6)."""

    state: State | None  # None once the node is expanded
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


@attrs.define
class BreadthFirst:
    """One breadth-first search (DEF-EXP-4): what it found so far (`result`), the fingerprints it has seen, the
    search's one record of each broker view (`records`), and its bounds."""

    scope: Scope
    result: Exploration
    started: float
    max_states: int
    budget: float
    progress: Callable[[Exploration], None] | None
    sleep_sets: bool
    seen: dict[int, Visit] = attrs.field(factory=dict)
    records: Records = attrs.field(factory=Records)
    #: If a set, the fingerprint of every quiescent state reached is added to it (what two searches of one scope,
    #: reduced and not, must agree on: tests/test_explore_reductions.py)
    quiescent: set[int] | None = None
    #: Make the successor of every delivery `seen_already` takes as seen, and require its fingerprint to be the one
    #: taken from the parts (a test of `delivered_fingerprint`)
    check_shortcut: bool = False
    #: The scope's declared properties (DEF-EXP-8), from its initial state's run
    checks: declared.Checks | None = None
    #: What the search runs on (DEF-EXP-9): the scope's model
    model: ScopeModel = attrs.field(default=attrs.Factory(lambda self: ScopeModel(self.scope), takes_self=True))

    def start(self, memo: bool) -> Node:
        """The initial state's node, seen; the memo of local steps made (DEF-EXP-7) unless `memo` is False."""
        result = self.result
        initial = self.model.init()
        self.checks = initial.run.checks
        root = Node(initial)
        result.local_steps = LocalSteps.for_run(initial.run) if memo else None
        key = self.model.fingerprint(initial, self.records)
        root.visit = self.seen[key] = Visit(frozenset(), waiting=root)
        if self.quiescent is not None and initial.quiescent():
            self.quiescent.add(key)
        result.states = 1
        return root

    def tick(self, expanded: int) -> None:
        """Every PROGRESS_EVERY expansions: tell `progress`."""
        if self.progress and expanded % PROGRESS_EVERY == 0:
            self.result.seconds = time.perf_counter() - self.started
            self.progress(self.result)

    def run(self, memo: bool) -> None:
        """The layers of the search, until none is left, a violation is found or a bound cuts it; `result.queue`
        counts the states reached and not yet visited, kept up to date so that Ctrl-C leaves it right."""
        result = self.result
        frontier = [self.start(memo)]
        while frontier and not result.found:
            result.depth = frontier[0].depth
            next_layer: list[Node] = []
            for i, node in enumerate(frontier):
                result.queue = len(frontier) - i + len(next_layer)
                cut = self.bound()
                if cut:
                    result.cut_by = cut
                    return
                self.expand(node, next_layer)
                if result.found:
                    break
                self.tick(i)
            frontier = next_layer
            result.queue = len(frontier)
        result.queue = 0 if result.found else result.queue
        result.complete = not frontier and not result.found

    def release_frontier(self) -> None:
        """Release the states still waiting to be expanded (a search cut by a bound or a violation), so that reference
        counting frees them at once: the cyclic collector, off through the search (`collector.acyclic`), would
        find them only on a later full pass."""
        for visit in self.seen.values():
            node = visit.waiting
            if node is not None and node.state is not None:
                node.state.run.net.release()
                node.state = None

    def states_seen(self) -> int:
        """The fingerprints seen so far (what --max-states bounds)."""
        return self.result.states

    def bound(self) -> str | None:
        if self.states_seen() >= self.max_states:
            return "max-states"
        if time.perf_counter() - self.started >= self.budget:
            return "budget"
        return None

    def expand(self, node: Node, next_layer: list[Node]) -> None:
        """Every move of `node` neither asleep nor made before from its fingerprint: checked, and its successor kept
        (with its sleep set) when the fingerprint is new or was reached before with moves asleep that now are not.
        The node then lets its state go (its path is its moves, from its parent's), released (`Network.release`)."""
        visit, state, result = node.visit, node.state, self.result
        assert visit is not None and state is not None
        visit.waiting = None
        made: list[Step] = []
        for move in self.model.actions(state):
            if move.key in node.sleep or move.key in visit.made:
                continue
            result.transitions += 1
            parts = self.delivered(state, move)
            if parts is not None and self.seen_already(node, move, made, parts.digest()):
                continue
            try:
                after, done, step = self.model.step(state, move, result.local_steps)
            except Exception as exc:  # a failed check, or the implementation crashing
                schedule = node.schedule()
                result.found.append(Found(violation_of(exc, failing_step(schedule, move.ops)), schedule + move.ops, node.depth + 1))
                result.depth = node.depth + 1
                return
            visit.made.add(move.key)
            sleep = self.sleep_after(node, made, step)
            made.append(step)
            self.reach(Node(after, tuple(done), node, node.depth + 1, sleep), next_layer, parts)
        node.state = None
        state.run.net.release()

    def sleep_after(self, node: Node, made: list[Step], step: Step) -> dict:
        """The sleep set of `step`'s successor: the moves asleep at `node` or made before from it that are
        independent of it (DEF-EXP-6)."""
        state = node.state
        if not self.sleep_sets or state is None:
            return {}
        return {x.move.key: x for x in [*node.sleep.values(), *made] if independent(x, step, state)}

    def delivered(self, state: State, move) -> Parts | None:
        """The parts of `move`'s successor, if it is a local step the memo knows (a delivery, a client's operation)
        and they describe its successor (`delivered_parts`, `client_parts`, DEF-EXP-7)."""
        memo = self.result.local_steps
        if memo is None:
            return None
        if move.delivers:
            known = memo.known(state.run.net, move.key[1])
            return None if known is None else delivered_parts(state, move.key[1], known, self.records)
        if move.key[0] in ("subscribe", "unsubscribe"):
            op = move.ops[0]
            known = memo.known_client(state.run.net, op)
            return None if known is None else client_parts(state, op["client"], memo.filter(op["filter"]), op["op"] == "subscribe",
                                                           move.progress, known, self.records)
        if move.key[0] == "publish":
            op = move.ops[0]
            known = memo.known_publish(state.run, op)
            return None if known is None else published_parts(state, op["client"], move.progress, known, self.records)
        return None

    def seen_already(self, node: Node, move, made: list[Step], key: int) -> bool:
        """Whether the successor of the delivery `move`, whose fingerprint is `key`, was seen with no move asleep
        there that this path has awake: then the move is made without making its successor, as `reach` would leave
        it (DEF-EXP-7)."""
        visit = self.seen.get(key)
        if visit is None:
            return False
        step = Step(move, False, False)  # a step `delivered_parts` takes sets no timer and leaves messages in flight
        if visit.asleep - self.sleep_after(node, made, step).keys():
            return False
        memo = cast(LocalSteps, self.result.local_steps)
        if self.check_shortcut:
            after = self.model.step(cast(State, node.state), move, memo)[0]
            assert self.model.fingerprint(after, self.records) == key, f"{move.key}: the parts' fingerprint differs"
        memo.hits += 1
        cast(Visit, node.visit).made.add(move.key)
        made.append(step)
        return True

    def reach(self, child: Node, next_layer: list[Node], parts: Parts | None = None) -> None:
        """`child` reached: a new fingerprint joins the next layer; a known one whose asleep moves this path does not
        have asleep is expanded again for them (Godefroid's sleep sets with state matching). `parts`: the child's,
        if known already (`delivered`)."""
        assert child.state is not None
        if parts is None:
            key = self.model.fingerprint(child.state, self.records)
        else:
            key = parts.digest()
            if self.check_shortcut:
                assert self.model.fingerprint(child.state, self.records) == key, f"{child.ops}: the parts' fingerprint differs"
            child.state.parts = parts
        visit = self.seen.get(key)
        if visit is None:
            child.visit = self.seen[key] = Visit(frozenset(child.sleep), waiting=child)
            self.result.states += 1
            if self.quiescent is not None and child.state.quiescent():
                self.quiescent.add(key)
            next_layer.append(child)
            return
        woken = visit.asleep - child.sleep.keys()
        if not woken:
            child.state.run.net.release()  # a state seen: dropped
            return
        visit.asleep = visit.asleep & child.sleep.keys()
        if visit.waiting is not None:
            visit.waiting.sleep = {k: x for k, x in visit.waiting.sleep.items() if k in visit.asleep}
            child.state.run.net.release()
            return
        child.visit = visit
        visit.waiting = child
        next_layer.append(child)


class DepthFirst(BreadthFirst):
    """The same search depth first (`--strategy dfs`): the same moves, checks, fingerprints, memo and sleep sets
    (with state matching), so the same states; but the frontier is a stack, which holds the states along one path
    and their siblings, not a whole layer: light on memory, for larger scopes. Its first violation need not be a
    shortest one; `depth` is the deepest it went."""

    def run(self, memo: bool) -> None:
        result = self.result
        stack = [self.start(memo)]
        expanded = 0
        while stack and not result.found:
            result.queue = len(stack)
            cut = self.bound()
            if cut:
                result.cut_by = cut
                return
            node = stack.pop()
            result.depth = max(result.depth, node.depth)
            children: list[Node] = []
            self.expand(node, children)
            stack.extend(reversed(children))  # the first move's successor is expanded next
            expanded += 1
            self.tick(expanded)
        result.queue = 0 if result.found else len(stack)
        result.complete = not stack and not result.found


STRATEGIES = {"bfs": BreadthFirst, "dfs": DepthFirst}


def failing_step(before: list[dict], ops: list[dict]) -> int:
    """The step a replay reports: the move's last operation (a move is one operation; its quiesce is not applied)."""
    return len(before) + len(ops) - 1
