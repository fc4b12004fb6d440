"""A state of `subsum explore` (spec/12-exploration.md DEF-EXP-2, 3): the
network under the checked brokers (a `schedules.Run`) and how far the
scope's client operations have gone; its moves (its fingerprint:
conformance/explore/fingerprints.py).

A move is a list of schedule operations (spec/formats.md), so that a path
of moves is a schedule `subsum replay` runs again exactly: one delivery
(the head of one link), the earliest timer firing (`timeout`), one client
operation, or one link swap; a move that leaves the network quiescent
ends with `quiesce`, which checks the tables (as the fuzzer's does).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Iterator

import attrs

from subsum.conformance.explore.memo import LocalSteps
from subsum.conformance.explore.scope import DELAY, EVENT, SEED, Scope
from subsum.conformance.schedules.runs import Run

if TYPE_CHECKING:
    from subsum.conformance.explore.fingerprints import Parts

#: What a subscription of the scope has done so far.
NOT_YET, HELD, DROPPED = 0, 1, 2
QUIESCE = {"op": "quiesce"}


@attrs.frozen(cache_hash=True)
class Progress:
    """How far the scope's client operations have gone: each subscription's
    stage, the publications made and the swaps made."""

    subscriptions: tuple[int, ...]
    published: int = 0
    swapped: int = 0
    overran: int = 0  # timers fired while messages were in flight
    requested: int = 0
    asking: bool = False  # a request is in flight: nothing else happens until the network is quiescent (DEF-EXP-10)


@attrs.define
class State:
    run: Run
    progress: Progress
    #: What its fingerprint hashed, once it was taken with the search's records (`fingerprints.Parts`)
    parts: Parts | None = None

    @classmethod
    def initial(cls, scope: Scope) -> State:
        run = Run(scope.network(), SEED, scope.protocol, scope.defer_timeout, scope.sub_timeout, delay=DELAY)
        return cls(run, Progress((NOT_YET,) * scope.subscriptions))

    def quiescent(self) -> bool:
        return self.run.net.transport.quiescent()


@attrs.frozen
class Move:
    """One enabled move: `key` names it across states (a delivery by its link, whose head it delivers), `local` the one
    broker whose state it reads and writes (a delivery's receiver, a subscription's access broker; None for a
    publication, a timeout or a swap, which may touch more), `ops` its schedule operations, `progress` the scope's
    progress after it."""

    key: tuple
    local: int | None
    ops: list[dict] = attrs.field(eq=False)
    progress: Progress = attrs.field(eq=False)

    @property
    def delivers(self) -> bool:
        return self.key[0] == "deliver"


def moves(state: State, scope: Scope) -> Iterator[Move]:
    """Every move enabled in `state`, in a fixed order (DEF-EXP-2)."""
    net, progress = state.run.net, state.progress
    pending = net.transport.pending_links()
    for i, link in enumerate(pending):
        yield delivery(i, link, progress)
    if net.transport.pending_timers():
        if not pending or scope.overruns is None:
            yield Move(("timeout",), None, [{"op": "timeout"}], progress)
        elif progress.overran < scope.overruns:  # an overrun: counted only where the scope bounds them
            yield Move(("timeout",), None, [{"op": "timeout"}], advanced(progress, "overran"))
    if progress.asking:
        return  # a request runs alone, to quiescence (DEF-EXP-10)
    if progress.requested < scope.requests and not pending and not net.transport.pending_timers():
        i = progress.requested % scope.subscriptions
        if progress.subscriptions[i] == HELD:
            client, text = scope.subscription(i)
            yield Move(("request", progress.requested), net.clients[client], [{"op": "request", "client": client, "filter": text}],
                       advanced(progress, "requested"))
    for i, stage in enumerate(progress.subscriptions):
        client, text = scope.subscription(i)
        if stage == NOT_YET or (stage == HELD and scope.unsubscribe):
            yield client_move(i, client, text, "subscribe" if stage == NOT_YET else "unsubscribe", net.clients[client], progress)
    if progress.published < scope.events:
        yield Move(("publish", progress.published), None, [{"op": "publish", "client": scope.publisher(), "attributes": dict(EVENT)}],
                   advanced(progress, "published"))
    if progress.swapped < scope.swaps:
        after = advanced(progress, "swapped")
        for key, swap in swaps(state.run):
            yield Move(key, None, [swap], after)


@functools.cache
def delivery(i: int, link: tuple, progress: Progress) -> Move:
    """The move that delivers the head of `link`, the i-th link with messages in flight (remembered, as `advanced`:
    a move is a value no step changes)."""
    return Move(("deliver", link), link[1], [{"op": "deliver", "choices": [i]}], progress)


@functools.cache
def client_move(i: int, client: int, text: str, op: str, access: int, progress: Progress) -> Move:
    """Subscription i's subscribe or unsubscribe (`op`), by `client` at its access broker `access` (remembered)."""
    return Move((op, i), access, [{"op": op, "client": client, "filter": text}], advanced(progress, "subscription", i))


@functools.cache
def advanced(progress: Progress, what: str, i: int = 0) -> Progress:
    """The progress after a move: subscription i's next stage, one more publication, swap or overrun (remembered:
    a scope has few progresses, and every state of one shares its moves').

    >>> advanced(Progress((0, 1)), "subscription", 1).subscriptions
    (0, 2)
    """
    if what == "subscription":
        stages = progress.subscriptions
        return attrs.evolve(progress, subscriptions=stages[:i] + (stages[i] + 1,) + stages[i + 1:])
    if what == "requested":
        return attrs.evolve(progress, requested=progress.requested + 1, asking=True)
    if what == "answered":
        return attrs.evolve(progress, asking=False)
    return attrs.evolve(progress, **{what: getattr(progress, what) + 1})


def swaps(run: Run) -> tuple[tuple[tuple, dict], ...]:
    """Every link swap of the current overlay, with its move's key: an old link, a new one joining its two halves
    (not the old one again), in-flight messages on the old link lost or not (the `pick` shares select the new ends,
    `Run._churn`). Remembered per overlay (its links): the operations are values no step changes."""
    links = tuple(run.net.broker_links())
    known = _SWAPS.get(links)
    if known is None:
        overlay, found = run.net.overlay, []
        for a, b in links:
            left, right = sorted(overlay.side(a, b)), sorted(overlay.side(b, a))
            for i, c in enumerate(left):
                for j, d in enumerate(right):
                    if {c, d} == {a, b}:
                        continue
                    pick = [(i + 0.5) / len(left), (j + 0.5) / len(right)]
                    for lose in (False, True):
                        swap = {"op": "swap", "old": [a, b], "pick": pick, "lose": lose, "gap": 0.0}
                        found.append((("swap", repr(swap)), swap))
        known = _SWAPS[links] = tuple(found)
    return known


#: The swaps of each overlay met (`swaps`), by its links.
_SWAPS: dict[tuple, tuple[tuple[tuple, dict], ...]] = {}


@attrs.frozen
class Step:
    """A move made from a state: what it touched that independence needs (spec/12 DEF-EXP-6)."""

    move: Move
    timers: bool  # it set or cancelled a timer (timers with one deadline fire in the order they were set)
    quiescent: bool  # it left the network quiescent (so it ran the quiescence checks, and a publication there is checked)


def successor(state: State, move: Move, memo: LocalSteps | None = None) -> tuple[State, list[dict], Step]:
    """The state after a move, the move's operations (a closing quiesce
    added when it leaves the network quiescent), and what it touched. A
    delivery goes through `memo` when given (DEF-EXP-7). A failed check
    raises (as `Run.apply` does), the state left half-changed. The new
    state's records are never changed in place again (a later move forks
    it first), so the network owns none of them: each caches its hash."""
    run = copy_run(state.run)
    transport = run.net.transport
    timers = set(transport.pending_timers())
    done = list(move.ops)
    if memo is not None and move.delivers:
        memo.deliver(run, move.key[1], move.ops[0])
    elif memo is not None and move.key[0] in ("subscribe", "unsubscribe"):
        memo.client_op(run, move.ops[0])
    elif memo is not None and move.key[0] == "publish":
        memo.publish(run, move.ops[0])
    else:
        for op in move.ops:
            run.apply(op)
    step = Step(move, set(transport.pending_timers()) != timers, transport.quiescent())
    progress = move.progress
    if step.quiescent:
        done.append(QUIESCE)
        run.apply(QUIESCE)
        if progress.asking:
            progress = advanced(progress, "answered")
    run.net.owned.clear()
    return State(run, progress), done, step


def independent(asleep: Step, step: Step, state: State) -> bool:
    """Whether `asleep` (a move enabled in `state`, made from it or from an ancestor) and `step` (made from `state`)
    commute from `state` and neither disables the other (DEF-EXP-6): one of them a delivery, each touching one
    broker and a different one, neither touching a timer, and neither leaving the network quiescent."""
    a, b = asleep.move, step.move
    if a.local is None or b.local is None or a.local == b.local or not (a.delivers or b.delivers):
        return False
    if asleep.timers or step.timers or step.quiescent:
        return False
    transport = state.run.net.transport
    messages = state.parts.pending if state.parts is not None else sum(len(queue) for queue in transport.links.values())
    return not (a.delivers and messages + len(transport._timers) < 2)  # `asleep` alone would leave the network quiescent


def copy_run(run: Run) -> Run:
    """A copy of `run` whose later steps leave `run` as it is (`Run.fork`: the network forked, its brokers' states
    shared until a step changes one). The two random generators are shared, not copied: no step of a scope reads
    them in a way that matters (the link delays are 0, and no scope crashes a broker, the only use of the
    overlay's). The ledger starts from zero (DEF-EXP-3: history, not state): the checks that read it (an event's
    deliveries and crossings, the violations counted) read what the one move did."""
    return run.fork(share_random=True, fresh_ledger=True)
