"""The fingerprint of a state of `subsum explore` (spec/12-exploration.md
DEF-EXP-3, 7): a 64-bit digest of everything its future depends on, each
broker read through its protocol's declared view, and the search's one
record per view.

A fingerprint hashes a state's `Parts`, which the state keeps: the
successor of a delivery whose local step the memo knows changes only the
receiver's record and some links' messages, so its parts are the parent's
with those replaced (`delivered_parts`), and the search need not make the
successor at all when its fingerprint was seen before.
"""

from __future__ import annotations

from collections import deque
from types import MethodType
from typing import TYPE_CHECKING, Any, cast

import attrs

from subsum.impl.network import CLIENT_BASE, Broker

if TYPE_CHECKING:
    from subsum.conformance.explore.memo import Known
    from subsum.conformance.explore.state import State


@attrs.frozen
class Parts:
    """What a state's fingerprint hashes (DEF-EXP-3): the scope's progress, the clock and whether the topology is
    static; each broker's view's hash, by id; the clients' filters; the messages in flight on each link, in order
    (a link with none left out); the live timers, in order, with what each will do; the overlay's links; the
    protocol's shared state."""

    head: tuple
    brokers: tuple
    filters: tuple
    flight: dict
    timers: tuple
    links: tuple
    shared: Any
    pending: int  # messages in flight, all links

    def digest(self) -> int:
        return hash((*self.head, self.brokers, self.filters, tuple(sorted(self.flight.items())), self.timers, self.links,
                     self.shared))


#: The parts' shared state when the protocol's shared state follows from the brokers' records (its class says
#: `derived_from_records`, as the filter index does): then the records tell the states apart already.
DERIVED = "derived from the brokers' records"


def parts(state: State, records: Records | None = None) -> Parts:
    """A state's parts. With `records`, each broker's record is first made the search's one object of its view
    (`Records.intern`). Left out, as history that no handler reads: the ledger's counters, the trace, the ids handed
    out."""
    run = state.run
    net = run.net
    transport = net.transport
    flight = {link: tuple((kind, canonical(payload)) for _, _, kind, payload in queue) for link, queue in transport.links.items() if queue}
    timers = tuple((tid, transport.timer(tid)[0] - net.now, canonical(transport.timer(tid)[1])) for tid in transport.pending_timers())
    hashed = broker_hash if records is None else records.intern
    brokers = tuple((b, hashed(net, b)) for b in sorted(net.brokers))
    filters = tuple((c, frozenset(fs)) for c, fs in sorted(net.client_filters.items()))
    shared = DERIVED if getattr(type(net.shared), "derived_from_records", False) else canonical(net.shared)
    return Parts((state.progress, net.now, run.static), brokers, filters, flight, timers, tuple(net.broker_links()),
                 shared, sum(map(len, flight.values())))


def fingerprint(state: State, records: Records | None = None) -> int:
    """A 64-bit digest of everything a state's future depends on (DEF-EXP-3): the hash of its `Parts`. With
    `records`, the parts are kept in the state (for its deliveries' successors, `delivered_fingerprint`)."""
    its_parts = parts(state, records)
    if records is not None:
        state.parts = its_parts
    return its_parts.digest()


def delivered_parts(state: State, link: tuple, known: Known, records: Records) -> Parts | None:
    """The parts of the state after delivering the head of `link`, whose local step is `known` (DEF-EXP-7), from
    the state's parts: the head taken off the link, then what `stepped` does. None where those parts would not
    describe the successor (`stepped`)."""
    before = state.parts
    if before is None:
        return None
    flight = dict(before.flight)
    rest = flight[link][1:]
    if rest:
        flight[link] = rest
    else:
        del flight[link]
    return stepped(state, before, link[1], known, records, flight, before.pending - 1, before.head, before.filters)


def client_parts(state: State, client: int, f: Any, held: bool, progress: Any, known: Known, records: Records) -> Parts | None:
    """The parts of the state after `client` subscribes to f (`held`) or unsubscribes, its access broker's local step
    being `known`, and the scope's progress then `progress`; None as for `delivered_parts`."""
    before = state.parts
    if before is None:
        return None
    filters = tuple((c, (fs | {f}) if held else (fs - {f})) if c == client else (c, fs) for c, fs in before.filters)
    return stepped(state, before, state.run.net.clients[client], known, records, dict(before.flight), before.pending,
                   (progress, *before.head[1:]), filters)


def published_parts(state: State, client: int, progress: Any, known: Known, records: Records) -> Parts | None:
    """The parts of the state after `client` publishes, its access broker's local step being `known`, and the
    scope's progress then `progress`; None as for `delivered_parts`."""
    before = state.parts
    if before is None:
        return None
    return stepped(state, before, state.run.net.clients[client], known, records, dict(before.flight), before.pending,
                   (progress, *before.head[1:]), before.filters)


def stepped(state: State, before: Parts, receiver: int, known: Known, records: Records, flight: dict, pending: int,
            head: tuple, filters: tuple) -> Parts | None:
    """`before` with the receiver's record replaced by the step's and the messages the step sends put on their
    links (on top of the `flight`, `pending`, `head` and `filters` given). None where that is not all the step
    changes, or the successor would need more than its fingerprint: a step that sets or cancels a timer, changes a
    shared state that is not derived from the records, sends other than over a tree link to a broker, or leaves the
    network quiescent (its successor runs the quiescence checks)."""
    if known.writes and before.shared != DERIVED:
        return None
    links = state.run.net.transport.links
    for effect in known.effects:
        if effect[0] == "send" and effect[1] < CLIENT_BASE:
            targets, kind, payload = (effect[1],), effect[2], effect[3]
        elif effect[0] == "route":
            targets, kind, payload = tuple(t for t in effect[1] if t < CLIENT_BASE), "EVENT", effect[2]
        else:
            return None
        for dst in targets:
            out = (receiver, dst)
            if out not in links:
                return None  # no such link: the step itself would fail
            flight[out] = flight.get(out, ()) + ((kind, canonical(payload)),)
            pending += 1
    if pending == 0 and not before.timers:
        return None
    brokers = tuple((b, records.hash_of(known.after) if b == receiver else h) for b, h in before.brokers)
    return Parts(head, brokers, filters, flight, before.timers, before.links, before.shared, pending)


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
        self.check_fields(broker, seen)
        net.brokers[b] = seen
        return cast(int, seen.cached_hash)  # set when it was first met

    def hash_of(self, broker: Broker) -> int:
        """The hash of the view of a record no network owns (one the memo of local steps keeps), cached in it: its
        own view's, which is the first record's of that view if it is not that record."""
        if broker.cached_hash is not None:
            return broker.cached_hash
        its_view = view(broker)
        seen = self.by_view.setdefault(its_view, broker)
        if seen is broker:
            broker.cached_hash = hash(its_view)
        else:
            self.check_fields(broker, seen)
            broker.cached_hash = seen.cached_hash
        return cast(int, broker.cached_hash)

    def check_fields(self, broker: Broker, seen: Broker) -> None:
        """With `verify`: fail unless every field of `broker` equals that of `seen`, the first record of its view."""
        if self.verify:
            left_out = [name for (name, mine), (_, first) in zip(canonical_fields(broker), canonical_fields(seen)) if mine != first]
            assert not left_out and len(canonical_fields(broker)) == len(canonical_fields(seen)), \
                f"{type(broker).__qualname__}.explore_view leaves out {left_out or 'a field'}: two records of one view differ"


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
