"""A state of `subsum explore` (spec/12-exploration.md DEF-EXP-2, 3): the
network under the checked brokers (a `schedules.Run`) and how far the
scope's client operations have gone; its moves; its fingerprint.

A move is a list of schedule operations (spec/formats.md), so that a path
of moves is a schedule `subsum replay` runs again exactly: one delivery
(the head of one link), the earliest timer firing (`timeout`), one client
operation, or one link swap; a move that leaves the network quiescent
ends with `quiesce`, which checks the tables (as the fuzzer's does).
"""

from __future__ import annotations

from collections import deque
from types import MethodType
from typing import Any, Iterator, cast

import attrs

from subsum.conformance.explore.memo import LocalSteps
from subsum.conformance.explore.scope import DELAY, EVENT, SEED, Scope
from subsum.conformance.schedules import Run
from subsum.impl.network import Broker

#: What a subscription of the scope has done so far.
NOT_YET, HELD, DROPPED = 0, 1, 2
QUIESCE = {"op": "quiesce"}


@attrs.frozen
class Progress:
    """How far the scope's client operations have gone: each subscription's
    stage, the publications made and the swaps made."""

    subscriptions: tuple[int, ...]
    published: int = 0
    swapped: int = 0
    overran: int = 0  # timers fired while messages were in flight


@attrs.define
class State:
    run: Run
    progress: Progress

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
    for i, link in enumerate(net.transport.pending_links()):
        yield Move(("deliver", link), link[1], [{"op": "deliver", "choices": [i]}], progress)
    if net.transport.pending_timers():
        if not net.transport.pending_links() or scope.overruns is None:
            yield Move(("timeout",), None, [{"op": "timeout"}], progress)
        elif progress.overran < scope.overruns:  # an overrun: counted only where the scope bounds them
            yield Move(("timeout",), None, [{"op": "timeout"}], attrs.evolve(progress, overran=progress.overran + 1))
    for i, stage in enumerate(progress.subscriptions):
        client, text = scope.subscription(i)
        if stage == NOT_YET or (stage == HELD and scope.unsubscribe):
            op = "subscribe" if stage == NOT_YET else "unsubscribe"
            stages = progress.subscriptions[:i] + (stage + 1,) + progress.subscriptions[i + 1:]
            yield Move((op, i), net.clients[client], [{"op": op, "client": client, "filter": text}],
                       attrs.evolve(progress, subscriptions=stages))
    if progress.published < scope.events:
        yield Move(("publish", progress.published), None, [{"op": "publish", "client": scope.publisher(), "attributes": dict(EVENT)}],
                   attrs.evolve(progress, published=progress.published + 1))
    if progress.swapped < scope.swaps:
        after = attrs.evolve(progress, swapped=progress.swapped + 1)
        for swap in swaps(state.run):
            yield Move(("swap", repr(swap)), None, [swap], after)


def swaps(run: Run) -> Iterator[dict]:
    """Every link swap of the current overlay: an old link, a new one joining its two halves (not the old one
    again), in-flight messages on the old link lost or not (the `pick` shares select the new ends, `Run._churn`)."""
    overlay = run.net.overlay
    for a, b in run.net.broker_links():
        left, right = sorted(overlay.side(a, b)), sorted(overlay.side(b, a))
        for i, c in enumerate(left):
            for j, d in enumerate(right):
                if {c, d} == {a, b}:
                    continue
                pick = [(i + 0.5) / len(left), (j + 0.5) / len(right)]
                for lose in (False, True):
                    yield {"op": "swap", "old": [a, b], "pick": pick, "lose": lose, "gap": 0.0}


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
    else:
        for op in move.ops:
            run.apply(op)
    step = Step(move, set(transport.pending_timers()) != timers, transport.quiescent())
    if step.quiescent:
        done.append(QUIESCE)
        run.apply(QUIESCE)
    run.net.owned.clear()
    return State(run, move.progress), done, step


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
    pending = sum(len(queue) for queue in transport.links.values()) + len(transport.pending_timers())
    return not (a.delivers and pending < 2)  # `asleep` alone would leave the network quiescent


def copy_run(run: Run) -> Run:
    """A copy of `run` whose later steps leave `run` as it is (`Run.fork`: the network forked, its brokers' states
    shared until a step changes one). The two random generators are shared, not copied: no step of a scope reads
    them in a way that matters (the link delays are 0, and no scope crashes a broker, the only use of the
    overlay's). The ledger starts from zero (DEF-EXP-3: history, not state): the checks that read it (an event's
    deliveries and crossings, the violations counted) read what the one move did."""
    return run.fork(share_random=True, fresh_ledger=True)


# --- fingerprints ---------------------------------------------------------------------------------

def fingerprint(state: State, records: Records | None = None) -> int:
    """A 64-bit digest of everything a state's future depends on (DEF-EXP-3):
    the clock, each broker's view (`Broker.explore_view`), the clients'
    filters, the messages in flight per link (in order), the live timers (in
    order, with what each will do), the overlay's links, the protocol's
    shared state (what its `canonical_state()` returns, if it has one),
    whether the topology is static, and the scope's progress. Left out, as
    history that no handler reads: the ledger's counters, the trace, the ids
    handed out. With `records`, each broker's record is first made the
    search's one object of its view (`Records.intern`)."""
    run = state.run
    net = run.net
    transport = net.transport
    flight = tuple((link, tuple((kind, canonical(payload)) for _, _, kind, payload in queue))
                   for link, queue in sorted(transport.links.items()) if queue)
    timers = tuple((tid, transport.timer(tid)[0] - net.now, canonical(transport.timer(tid)[1])) for tid in transport.pending_timers())
    hashed = broker_hash if records is None else records.intern
    brokers = tuple((b, hashed(net, b)) for b in sorted(net.brokers))
    filters = tuple((c, frozenset(fs)) for c, fs in sorted(net.client_filters.items()))
    return hash((state.progress, net.now, run.static, brokers, filters, flight, timers, tuple(net.broker_links()), canonical(net.shared)))


def view(broker: Broker) -> Any:
    """What of a broker's record tells states apart: its protocol's `explore_view`, or, for a plug-in that declares
    none, its fields read by reflection (`canonical_fields`)."""
    declared = broker.explore_view()
    return canonical_fields(broker) if declared is None else declared


def broker_hash(net, b: int) -> int:
    """The hash of broker b's view, cached in the broker (`Broker.cached_hash`) once `net` no longer owns it: a
    broker shared with forks is never changed in place (a handler copies it first, `BrokerHost.own`), so its hash is
    computed once, however many states share it; one this network owns is hashed afresh."""
    broker = net.brokers[b]
    cached = broker.cached_hash
    if cached is not None:
        return cached
    digest = hash(view(broker))
    if b not in net.owned:
        broker.cached_hash = digest
    return digest


class Records:
    """The broker records of one search, one object per view (hash-consing, DEF-EXP-7): a state's new record whose
    view the search has met before is replaced by the record met first. States then share records, which the memo of
    local steps knows by identity, and each record's view is hashed once. With `verify`, a record is replaced only
    if every field of it equals the first one's (`canonical_fields`), else the search fails naming the field the view
    leaves out (a test that each declared view tells apart all that matters)."""

    def __init__(self, verify: bool = False) -> None:
        self.by_view: dict[Any, Broker] = {}
        self.verify = verify

    def intern(self, net, b: int) -> int:
        """Make broker b's record in `net` the search's one record of its view (unless `net` owns it, and may
        still change it: then its view is only hashed); returns the view's hash."""
        broker = net.brokers[b]
        cached = broker.cached_hash
        if cached is not None:
            return cached
        its_view = view(broker)
        if b in net.owned:
            return hash(its_view)
        seen = self.by_view.setdefault(its_view, broker)
        if seen is broker:
            broker.cached_hash = hash(its_view)
            return broker.cached_hash
        if self.verify:
            left_out = [name for (name, mine), (_, first) in zip(canonical_fields(broker), canonical_fields(seen)) if mine != first]
            assert not left_out and len(canonical_fields(broker)) == len(canonical_fields(seen)), \
                f"{type(broker).__qualname__}.explore_view leaves out {left_out or 'a field'}: two records of one view differ"
        net.brokers[b] = seen
        return cast(int, seen.cached_hash)  # set when it was first met


#: The types `canonical` found hashed by value (not containers, brokers, objects naming their state or methods): an
#: instance is itself, or, if it holds something mutable after all, its fields.
_VALUE_TYPES: set[type] = {type(None), bool, int, float, str, bytes}


def canonical(value: Any) -> Any:
    """A hashable value equal for equal contents: sets and dicts become
    frozensets, sequences tuples, a broker its id (a reference, not its
    contents), a timer's callback what it will do, any other mutable object
    its fields; immutable values (filters, messages) stay as they are. The
    types found to be values are remembered (`_VALUE_TYPES`): a message's
    payload is one, and a fingerprint reads every payload in flight."""
    kind = type(value)
    if kind in _VALUE_TYPES:
        try:
            hash(value)
            return value
        except TypeError:
            return (kind.__qualname__, canonical_fields(value))
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    if isinstance(value, (set, frozenset)):
        return frozenset(canonical(v) for v in value)
    if isinstance(value, dict):
        return frozenset((canonical(k), canonical(v)) for k, v in value.items())
    if isinstance(value, (list, tuple, deque)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, Broker):
        return ("broker", value.id)
    if hasattr(value, "canonical_state"):
        return (type(value).__qualname__, value.canonical_state())  # the object says what of it matters
    if isinstance(value, MethodType):
        return ("method", canonical(value.__self__), value.__func__.__name__)
    if type(value).__hash__ is not object.__hash__ and type(value).__hash__ is not None:
        try:
            hash(value)
            _VALUE_TYPES.add(kind)
            return value  # a value type: its own equality
        except TypeError:
            pass  # a frozen record holding a mutable field (a summary's delta): compared by its fields
    return (type(value).__qualname__, canonical_fields(value))


#: Fields that point at what all brokers share (`Network.shared`, in the fingerprint once), not at a broker's own
#: state, and the hash a broker caches of its own state (`Broker.cached_hash`).
SHARED_FIELDS = frozenset({"rounds", "cached_hash"})


def canonical_fields(obj: Any) -> tuple:
    """An object's fields but those pointing at the shared state, canonical, in name order."""
    names = sorted({name for cls in type(obj).__mro__ for name in getattr(cls, "__slots__", ())} | set(getattr(obj, "__dict__", {})))
    return tuple((name, canonical(getattr(obj, name))) for name in names if name not in SHARED_FIELDS and hasattr(obj, name))
