"""Broker caches with request/response on the simulator (seed 004 §3.2–§3.5,
seed 003 §3.2–§3.5; spec/09-caching.md DEF-CACHE-6 … 8), registered as
protocol "caching".

Subscription forwarding as Strawman runs it (`StrawmanBroker`), plus:

- every broker has one cache (`subsum.impl.caching`), of the policy and
  capacity in `net.options`;
- **placement** (DEF-CACHE-6): as a publication passes, the brokers the
  `placement` option names store it: `candidate` a broker with a table
  entry it matches; `leaf` one with a local end client it matches and, in
  reading (ii), no broker neighbor but the sender with a matching entry;
  `single` one broker, the publisher's access broker (`single_reading`
  publisher) or the overlay's centre (centre); `all` every broker, the
  publication being also flooded (STORE) to the brokers off its delivery
  tree;
- **requests** (DEF-CACHE-7): a client's REQUEST (`messages.CacheRequest`:
  rid, f, path) follows the table like a publication: each broker pushes
  its id onto the path, answers with one RESPONSE per cached message f
  matches (a hit), and forwards the request to every broker neighbor but
  the sender with an entry whose filter may overlap f; with no such
  neighbor the request is dropped. A hit does not stop it. Option `ask`
  "one" forwards it to the lowest-id such neighbor only (the seed's
  alternative, measured beside the default "all");
- **responses**: RESPONSE (`messages.CacheResponse`: rid, message id,
  stack, index) is source-routed back, each broker popping its own id. A
  broker that holds the message drops the response (duplicate
  suppression, unless option `suppress_duplicates` is off); otherwise it
  stores it if the placement makes it a holder, and passes it on. The requester's access broker hands it to the
  client;
- the last local client of a filter leaving tells the cache
  (`unsubscribed`), which only regeneration/degradation acts on.

`CacheNetwork` (the brokers' shared state, `net.shared`) keeps the filter
index, every publication, each request's record and the counters of
DEF-CACHE-8.
"""

from __future__ import annotations

import copy
import struct
from collections import Counter
from typing import Hashable, cast

import attrs
import networkx as nx

from subsum.core.names import LEAF_READINGS, LFU_TIES, PLACEMENTS, REQUEST_SPREADS, SINGLE_READINGS
from subsum.core.types import Constraint, Event, Subscription
from subsum.impl.caching import make_cache
from subsum.impl.caching.policies import POLICIES
from subsum.impl.matching.ops import HOLDS
from subsum.impl.network.actor import Out
from subsum.impl.network.messages import CacheRequest, CacheResponse, Publication
from subsum.impl.network.protocols.covering import DOMAIN, bool_values, numeric_bounds
from subsum.impl.network.protocols.forwarding import FilterIndex, StrawmanBroker
from subsum.impl.network.overlay import NetworkError
from subsum.impl.network.protocol import handles, protocol_settings, register
from subsum.impl.network.transport import CLIENT_BASE

MISSING = object()
#: the protocol's settings when `Network(options=...)` names none: placement, leaf reading, cache policy, capacity (None: unbounded)
PLACEMENT = "candidate"
LEAF_READING = "ii"
SINGLE_READING = "publisher"
POLICY = "fifo"
DEFAULTS = {"placement": PLACEMENT, "leaf_reading": LEAF_READING, "single_reading": SINGLE_READING, "policy": POLICY, "capacity": None,
            "suppress_duplicates": True, "ask": REQUEST_SPREADS[0], "lfu_ties": LFU_TIES[0]}


def centre(brokers: set[int], links: list[tuple[int, int]]) -> int:
    """The broker of least eccentricity in a tree of brokers (the least id among equals): single placement's `centre` reading."""
    graph = nx.Graph()
    graph.add_nodes_from(brokers)
    graph.add_edges_from((a, b) for a, b in links if a in brokers and b in brokers)
    return min(nx.center(graph))


def float_ordinal(x: float) -> int:
    """The position of a finite float in float order (−0.0 and +0.0 share one)."""
    bits = struct.unpack("<q", struct.pack("<d", x))[0]
    return bits if bits >= 0 else -(bits & 0x7FFFFFFFFFFFFFFF)


def filters_overlap(f: Subscription, g: Subscription) -> bool:
    """Some event may match both f and g (DEF-CACHE-7). False when their
    constraints together put one name at two types (an event holds a name
    once), or leave an int, float or bool attribute no value: the interval
    of the range constraints, less the `!=` values in it, is empty (exact
    on those types). String patterns are not compared: sound, not complete."""
    by_key: dict[tuple[str, str], list[Constraint]] = {}
    for c in (*f.constraints, *g.constraints):
        by_key.setdefault((c.name, c.type), []).append(c)
    names = [name for name, _ in by_key]
    if len(names) != len(set(names)):
        return False
    for (_, type_), constraints in by_key.items():
        if type_ in DOMAIN:
            low, high = numeric_bounds(constraints)
            if low > high:
                return False
            excluded = {c.value for c in constraints if c.op == "!=" and low <= c.value <= high}
            size = high - low + 1 if type_ == "int" else float_ordinal(high) - float_ordinal(low) + 1
            if size <= len(excluded):
                return False
        elif type_ == "bool" and not bool_values(constraints):
            return False
    return True


@attrs.define
class RequestRecord:
    """One client request and what came of it (DEF-CACHE-8)."""

    rid: int
    client: int
    broker: int
    filter: Subscription
    time: float
    past: frozenset[int]  # the publications before it that its filter matches
    reached: list[int] = attrs.Factory(list)  # brokers the request reached, in order
    paths: dict[int, tuple[int, ...]] = attrs.Factory(dict)  # broker -> its stack (itself first)
    dropped_at: list[int] = attrs.Factory(list)  # brokers with nowhere to forward it
    hits: list[tuple[int, int]] = attrs.Factory(list)  # (broker, message) answered
    request_hops: int = 0
    response_hops: int = 0
    recovered: Counter = attrs.Factory(Counter)  # message -> copies the client got
    delay: dict[int, int] = attrs.Factory(dict)  # message -> broker hops of the response that brought it first
    responses: list[tuple[int, int, list[int]]] = attrs.Factory(list)  # (responder, message, brokers it visited)
    #: When the caller asked for it (`request(..., note_context=True)`: `subsum explore`'s checks): the broker links,
    #: each client's access broker and filters, and the brokers holding each of `past`, all as at the request
    context: tuple | None = None


class CacheNetwork(FilterIndex):
    """What the caching brokers share: the filter index, the settings, the
    publications, the requests and the counters."""

    derived_from_records = False  # the publications, requests and counters are its own

    def __init__(self, net) -> None:
        super().__init__()
        self.options = protocol_settings("caching", net.options, DEFAULTS,
                                         {"placement": PLACEMENTS, "leaf_reading": LEAF_READINGS, "single_reading": SINGLE_READINGS,
                                          "policy": tuple(POLICIES), "ask": REQUEST_SPREADS, "lfu_ties": LFU_TIES})
        capacity = self.options["capacity"]
        if capacity is not None and (type(capacity) is not int or capacity < 1):
            raise NetworkError(f"the cache capacity must be an int >= 1 or None (unbounded), got {capacity!r}")
        self.placement: str = self.options["placement"]
        self.events: dict[int, Event] = {}  # every publication, by event id
        self.values: dict[int, dict[tuple[str, str], object]] = {}  # event id -> (name, type) -> value
        self.publisher_broker: dict[int, int] = {}
        self.single_holder: dict[int, int] = {}  # event id -> the one broker single placement stores it at
        self.requests: dict[int, RequestRecord] = {}
        self.counters: Counter = Counter()
        self.next_rid = 0

    def fork(self) -> CacheNetwork:
        """A copy for a forked network: all of it (the requests' records and counters are the caching protocol's)."""
        return copy.deepcopy(self)

    def canonical_state(self) -> Hashable:
        """What of it a later step reads (`subsum explore`'s fingerprint, spec/12 DEF-EXP-3): the filter index, the
        publications and where single placement put them, the requests' records and the next request id; not the
        counters (history) nor the derived values and caches."""
        requests = tuple(sorted((rid, repr(record)) for rid, record in self.requests.items()))
        return (frozenset(self.refs.items()), tuple(sorted(self.events.items())), tuple(sorted(self.publisher_broker.items())),
                tuple(sorted(self.single_holder.items())), requests, self.next_rid)

    def published(self, eid: int, event: Event, broker: int, overlay) -> None:
        self.events[eid] = event
        self.values[eid] = {(a.name, a.type): a.value for a in event.attributes}
        self.publisher_broker[eid] = broker
        if self.placement == "single":
            self.single_holder[eid] = broker if self.options["single_reading"] == "publisher" else centre(overlay.component(broker), overlay.links())

    def event_matches(self, f: Subscription, m: int) -> bool:
        """Publication m matches filter f (DEF-MATCH-1), whether or not f is in a table."""
        values = self.values[m]
        for c in f.constraints:
            v = values.get((c.name, c.type), MISSING)
            if v is MISSING or not HOLDS[c.op](v, c.value):
                return False
        return True


@register("caching")
class CachingBroker(StrawmanBroker):
    """One broker of the caching protocol (DEF-CACHE-6, 7)."""

    __slots__ = ("cache",)

    family = "caching"  # Strawman's steps plus requests and caches

    local_deliveries = False  # its handlers read the overlay and count in the shared request records

    def __init__(self, bid: int, shared) -> None:
        super().__init__(bid, shared)
        options = shared.options
        self.cache = make_cache(options["policy"], options["capacity"], options["lfu_ties"])

    @classmethod
    def shared_state(cls, net) -> CacheNetwork:
        return CacheNetwork(net)

    def explore_view(self) -> tuple:
        """Strawman's view and the cache: each message held, in the policy's order, with its bookkeeping."""
        return super().explore_view(), tuple((m, repr(self.cache.metadata(m))) for m in self.cache.order())

    # --- placement (DEF-CACHE-6) -----------------------------------------------------------
    def holds(self, m: int) -> bool:
        return str(m) in self.cache

    def is_holder(self, matched: frozenset, came_from: int, shared: CacheNetwork) -> bool:
        """This broker stores a publication whose matched filters are `matched`,
        arriving from `came_from`, under candidate or leaf placement."""
        if shared.placement == "candidate":
            return any(f in matched for f in self.table)
        local = any(s >= CLIENT_BASE for f in self.table if f in matched for s in self.table[f])
        if not local or shared.options["leaf_reading"] == "i":
            return local
        return not any(m != came_from and m < CLIENT_BASE and not matched.isdisjoint(filters) for m, filters in self.by_node.items())

    def store(self, m: int, why: str, out: Out) -> None:
        counters = out.shared.counters
        if self.cache.insert(str(m), out.now) is not None:
            counters["evictions"] += 1
        counters[f"stored at {why}"] += 1

    @handles("EVENT")
    def event_received(self, n: int, publication: Publication, out: Out) -> None:
        eid, event = publication.eid, publication.event
        shared = out.shared
        if n >= CLIENT_BASE and eid not in shared.events:  # published here
            shared.published(eid, event, self.id, out.overlay)
        matched = shared.matching(eid, event)
        placement = shared.placement
        if placement == "all" or (placement == "single" and shared.single_holder[eid] == self.id):
            self.store(eid, "publish", out)
        elif placement in ("candidate", "leaf") and matched and self.is_holder(matched, n, shared):
            self.store(eid, "publish", out)
        targets = [m for m, filters in self.by_node.items() if m != n and not matched.isdisjoint(filters)] if matched else []
        if targets:
            out.route_event(targets, publication)
        if placement == "all":
            rest = [m for m in sorted(self.neighbors) if m < CLIENT_BASE and m != n and m not in targets]
            for m in rest:
                out.send(m, "STORE", eid)
        if placement == "single" and n >= CLIENT_BASE and shared.single_holder[eid] != self.id:
            self.place_received(self.id, (eid, tuple(out.overlay.path(self.id, shared.single_holder[eid])[1:])), out)

    @handles("PLACE")
    def place_received(self, n: int, placing: tuple[int, tuple[int, ...]], out: Out) -> None:
        """Single placement, centre reading: a copy on its way along the tree path to the one broker that stores it."""
        eid, route = placing
        if not route:
            self.store(eid, "publish", out)
        else:
            out.send(route[0], "PLACE", (eid, route[1:]))

    @handles("STORE")
    def store_received(self, n: int, eid: int, out: Out) -> None:
        """Placement `all`: a copy for a broker off the delivery tree, flooded on."""
        self.store(eid, "publish", out)
        for m in sorted(self.neighbors):
            if m < CLIENT_BASE and m != n:
                out.send(m, "STORE", eid)

    # --- requests and responses (DEF-CACHE-7) ----------------------------------------------
    @handles("REQUEST")
    def request_received(self, x: int, request: CacheRequest, out: Out) -> None:
        rid, f = request.rid, request.filter
        shared = out.shared
        record = shared.requests[rid]
        stack = (self.id, *request.path)
        record.reached.append(self.id)
        record.paths[self.id] = stack
        hits = [int(m) for m in self.cache.order() if shared.event_matches(f, int(m))]
        if hits:
            self.cache.hit([str(m) for m in hits], out.now)
            for m in hits:
                record.hits.append((self.id, m))
                record.responses.append((self.id, m, [self.id]))
                self.pass_response(rid, m, stack, len(record.responses) - 1, out)
        targets = [b for b, filters in self.by_node.items()
                   if b != x and b < CLIENT_BASE and any(filters_overlap(f, g) for g in self.table_filters(filters))]
        if shared.options["ask"] == "one":
            targets = sorted(targets)[:1]
        if not targets:
            record.dropped_at.append(self.id)
            shared.counters["requests dropped"] += 1
        for b in targets:
            record.request_hops += 1
            out.send(b, "REQUEST", CacheRequest(rid, f, stack))

    def table_filters(self, filters: set[Subscription]) -> list[Subscription]:
        """A neighbor's filters in table order (deterministic)."""
        return [f for f in self.table if f in filters]

    def pass_response(self, rid: int, m: int, stack: tuple[int, ...], index: int, out: Out) -> None:
        """Pop this broker's id and pass the response to the next id."""
        assert stack[0] == self.id, f"broker {self.id} got a response addressed to {stack[0]}"
        rest = stack[1:]
        nxt = rest[0]
        record = out.shared.requests[rid]
        if nxt >= CLIENT_BASE:
            if nxt == record.client:
                record.recovered[m] += 1
                record.delay.setdefault(m, len(record.responses[index][2]) - 1)
            return
        if nxt not in self.neighbors:
            out.shared.counters["responses lost"] += 1
            return
        record.response_hops += 1
        out.send(nxt, "RESPONSE", CacheResponse(rid, m, rest, index))

    @handles("RESPONSE")
    def response_received(self, src: int, response: CacheResponse, out: Out) -> None:
        rid, m = response.rid, response.message
        shared = out.shared
        record = shared.requests[rid]
        record.responses[response.index][2].append(self.id)
        if self.holds(m) and shared.options["suppress_duplicates"]:
            shared.counters["duplicates suppressed"] += 1
            return
        placement = shared.placement
        if not self.holds(m):
            if placement == "all":
                self.store(m, "response", out)
            elif placement in ("candidate", "leaf"):
                matched = shared.matching(m, shared.events[m])
                if matched and self.is_holder(matched, src, shared):
                    self.store(m, "response", out)
        self.pass_response(rid, m, response.stack, response.index, out)

    # --- the last local client of a filter leaves ------------------------------------------
    @handles("UNSUB")
    def unsub_received(self, n: int, f: Subscription, out: Out) -> None:
        super().unsub_received(n, f, out)
        if n >= CLIENT_BASE and not any(s >= CLIENT_BASE for s in self.table.get(f, ())):
            shared = out.shared
            gone = [m for m in self.cache.order() if shared.event_matches(f, int(m))]
            self.cache.unsubscribed(gone, out.now)


def request(net, client: int, f: Subscription, note_context: bool = False) -> int:
    """Client `client` asks its access broker for the past publications f
    matches (after subscribing f); returns the request's id. `note_context`:
    the record keeps the overlay, the clients and who holds each of those
    publications now (`RequestRecord.context`)."""
    shared = cast(CacheNetwork, net.shared)
    rid = shared.next_rid
    shared.next_rid += 1
    past = frozenset(m for m in shared.events if shared.event_matches(f, m))
    broker = net.clients[client]
    context = None
    if note_context:
        held = {m: frozenset(b for b, other in net.brokers.items() if other.holds(m)) for m in past}
        context = (tuple(net.broker_links()), dict(net.clients), {c: frozenset(fs) for c, fs in net.client_filters.items()}, held)
    shared.requests[rid] = RequestRecord(rid, client, broker, f, net.now, past, context=context)
    shared.counters["requests"] += 1
    net.deliver_from_client(client, "REQUEST", CacheRequest(rid, f, (client,)))
    return rid
