"""CLM-CACHE-1 inside the caching protocol (spec/09-caching.md): at bounded
capacity, every broker's cache equals the reference policy
(`subsum.model.caching`) fed the operations that broker made on it, in
its order and at its times: inserts (with the victim each returned), hits
and unsubscriptions.

CLM-CACHE-1's state machines drive a cache alone; this check watches the
caches the brokers use while the protocol runs (placement, requests that
hit, clients that leave), so a broker that calls its cache wrongly, or a
cache that behaves differently under the protocol's calls, fails here.
"""

from __future__ import annotations

from typing import Iterable, cast

import attrs
from hypothesis import strategies as st

from subsum.conformance.runner import census
from subsum.conformance.checks.caching.policies import apply_to_reference
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.checks.caching.request_response import PLACEMENTS, caching_workloads, model_view, run_workload
from subsum.conformance.runner.violations import require
from subsum.core.names import CACHE_POLICIES
from subsum.impl.caching import cache_class
from subsum.core.types import Event, Subscription
from subsum.impl.network.protocols.caching import CacheNetwork, CachingBroker, filters_overlap, request
from subsum.model import caching as caching_model
from subsum.model import placement as placement_model
from subsum.model.network import ideal_table
from subsum.model.semantics import matches


class RecordedCache:
    """A broker's cache, watched: each operation the broker makes on it, in
    the cache replay format (spec/formats.md), and the victim of each insert."""

    def __init__(self, cache, where: str, clock) -> None:
        self.cache = cache
        self.where = where
        self.clock = clock  # the simulator's: an operation must happen at the time it says
        self.ops: list[dict] = []
        self.victims: list[str | None] = []  # one per insert, in order

    def _at(self, op: dict) -> None:
        now = self.clock()
        require(op["time"] == now, "CLM-CACHE-1", lambda: f"{self.where} made {op} at time {now}")
        self.ops.append(op)

    def insert(self, m: str, now: float) -> str | None:
        victim = self.cache.insert(m, now)
        self._at({"op": "insert", "message": m, "time": now})
        self.victims.append(victim)
        return victim

    def hit(self, matching: Iterable[str], now: float) -> None:
        matching = list(matching)
        self.cache.hit(matching, now)
        self._at({"op": "hit", "matching": matching, "time": now})

    def unsubscribed(self, matching: Iterable[str], now: float) -> None:
        matching = list(matching)
        self.cache.unsubscribed(matching, now)
        self._at({"op": "unsubscribe", "matching": matching, "time": now})

    def advance(self, now: float) -> None:
        self.cache.advance(now)
        self._at({"op": "advance", "time": now})

    def __contains__(self, m: object) -> bool:
        return m in self.cache

    def __len__(self) -> int:
        return len(self.cache)

    def __getattr__(self, name: str):
        return getattr(self.cache, name)


def watch_caches(net) -> None:
    """Put a `RecordedCache` around every broker's cache."""
    for b, broker in net.brokers.items():
        broker = cast(CachingBroker, broker)
        broker.cache = RecordedCache(broker.cache, f"broker {b}", lambda: net.now)  # type: ignore[assignment]


@property_check(st.integers(1, 3), st.sampled_from(PLACEMENTS), caching_workloads(), st.booleans(), scale=2)  # milliseconds a run
def protocol_caches_equal_the_reference(capacity: int, placement: str, workload, leave: bool) -> None:
    """CLM-CACHE-1: a caching-protocol run at bounded capacity under each
    policy (subscribe, publish, a request, then, with `leave`, every
    standing client unsubscribes); each broker's cache is the reference's
    for the operations the broker made, and those operations are the ones
    the model says it must make (`Expected`)."""
    for policy in CACHE_POLICIES:
        run_and_compare(policy, capacity, placement, workload, leave)


@attrs.define
class Expected:
    """What the model says the brokers must tell their caches, phase by phase (spec/09):

    - publishing: each publication's holders (`placement.holders`) insert it, once each, and nothing else happens;
    - the request: each broker the request reaches (`placement.request_reach`) hits, first and once, exactly the
      held messages its filter matches, and no other broker hits; a broker may insert a response's message only
      on that response's path, not holding it, where its placement would store it coming from the previous hop;
    - leaving: a client's unsubscription of f at its access broker, when no local client is left with f, tells the
      cache `unsubscribed` with exactly the held messages f matches; no other operation happens."""

    placement: str
    events: dict[int, Event]
    holders: dict[int, set[int]] = attrs.field(factory=dict)  # event id -> the brokers that store it when published
    reach: dict[int, tuple[int, ...]] = attrs.field(factory=dict)  # broker -> the request's path to it (itself first)
    filter: Subscription | None = None  # the request's
    stores: dict[int, set[tuple[int, int]]] = attrs.field(factory=dict)  # broker -> (message, previous hop) it may store
    unsubscriptions: dict[int, list[Subscription]] = attrs.field(factory=dict)  # broker -> the filters its last local client left


def run_and_compare(policy: str, capacity: int, placement: str, workload, leave: bool) -> None:
    net, ids, published = run_workload(workload, placement, prepare=watch_caches, policy=policy, capacity=capacity)
    shared = cast(CacheNetwork, net.shared)
    expected = Expected(placement, shared.events)
    graph, access, filters = model_view(net)
    expected.holders = {eid: placement_model.holders(graph, access, filters, client, event, placement) for eid, client, event in published}
    caches = {b: cast(RecordedCache, cast(CachingBroker, broker_).cache) for b, broker_ in net.brokers.items()}
    published_ops = {b: len(cache.ops) for b, cache in caches.items()}
    broker, f = workload[4]
    client = net.add_client(broker)
    net.subscribe(client, f)
    net.run()
    graph, access, filters = model_view(net)
    expected.reach, _ = placement_model.request_reach(graph, access, filters, client, f, overlap=filters_overlap)
    expected.filter = f
    expected.stores = response_stores(graph, access, filters, expected)
    request(net, client, f)
    net.run()
    requested_ops = {b: len(cache.ops) for b, cache in caches.items()}
    if leave:
        expected.unsubscriptions = leave_all(net, ids, workload[2])
    for b, cache in sorted(caches.items()):
        same_as_reference(f"broker {b}", policy, capacity, cache, PhaseCheck(b, expected, published_ops[b], requested_ops[b]))


def response_stores(graph, access, filters, expected: Expected) -> dict[int, set[tuple[int, int]]]:
    """Broker -> the (message, previous hop) a response may bring it that its placement would store (DEF-CACHE-6, 7):
    any past publication the request's filter matches, on the path back from any reached broker."""
    brokers, stores = set(graph.nodes), cast(dict[int, set[tuple[int, int]]], {})
    wanted = [m for m, event in expected.events.items() if matches(cast(Subscription, expected.filter), event)]
    for path in expected.reach.values():
        for previous, b in zip(path, path[1:]):
            if b not in brokers:
                continue  # the client
            table = ideal_table(graph, b, access, filters)
            for m in wanted:
                event = expected.events[m]
                if (expected.placement == "all" or (expected.placement == "candidate" and placement_model.has_matching_entry(table, event))
                        or (expected.placement == "leaf" and placement_model.is_leaf(table, event, previous, brokers, "ii"))):
                    stores.setdefault(b, set()).add((m, previous))
    return stores


def leave_all(net, ids: list[int], clients) -> dict[int, list[Subscription]]:
    """Every standing client unsubscribes each of its filters, in order; returns, per broker, the filters whose last
    local client left with that unsubscription (each one the cache must be told of)."""
    told: dict[int, list[Subscription]] = {}
    for c, (_, filters) in zip(ids, clients):
        for g in filters:
            net.unsubscribe(c, g)
            b = net.clients[c]
            if not any(g in net.client_filters[d] for d, at in net.clients.items() if at == b):
                told.setdefault(b, []).append(g)
    net.run()
    return told


@attrs.define
class PhaseCheck:
    """Broker b's operations on its cache against `Expected`, read one by one with the reference's state before each:
    `published` and `requested` are how many it had made when publishing, then the request, was over."""

    b: int
    expected: Expected
    published: int
    requested: int
    unsubscriptions: list[Subscription] = attrs.field(factory=list)  # those still to come, in order
    held_before: dict[int, list[str]] = attrs.field(factory=dict)  # operation k -> what the reference held before it

    def __attrs_post_init__(self) -> None:
        self.unsubscriptions = list(self.expected.unsubscriptions.get(self.b, []))

    def op(self, k: int, op: dict, held: list[str], ops: list[dict]) -> None:
        """Operation k (from 1) of `ops`, made when the reference held `held`, in its order."""
        b, expected, kind = self.b, self.expected, op["op"]
        self.held_before[k] = held

        def where() -> str:
            return f"broker {b}'s operation {k} of {len(ops)} {op}, holding {held}; its operations {ops[:k]}"

        if k <= self.published:
            require(kind == "insert" and b in expected.holders.get(int(op["message"]), ()), "CLM-CACHE-1",
                    lambda: f"{where()}: publishing, the model stores each publication at {expected.holders} only")
        elif k <= self.requested:
            self._requested(k, op, held, where)
        else:
            require(kind == "unsubscribe" and bool(self.unsubscriptions), "CLM-CACHE-1",
                    lambda: f"{where()}: when clients leave, the model tells a cache only of its last local client of a "
                            f"filter leaving, here of {self.unsubscriptions}")
            g = self.unsubscriptions.pop(0)
            want = [m for m in held if matches(g, expected.events[int(m)])]
            require(op["matching"] == want, "CLM-CACHE-1",
                    lambda: f"{where()}: the last local client of {g} left; the model tells the cache {want}")

    def _requested(self, k: int, op: dict, held: list[str], where) -> None:
        b, expected, kind = self.b, self.expected, op["op"]
        f = cast(Subscription, expected.filter)
        if k == self.published + 1 and b in expected.reach and any(matches(f, expected.events[int(m)]) for m in held):
            want = sorted(m for m in held if matches(f, expected.events[int(m)]))
            require(kind == "hit" and sorted(op["matching"]) == want, "CLM-CACHE-1",
                    lambda: f"{where()}: the request reached it holding {want}, which it must hit first")
            census.record("request-hit:bounded")
            return
        m = int(op.get("message", -1))
        require(kind == "insert" and op["message"] not in held and any(m == s for s, _ in expected.stores.get(b, ())), "CLM-CACHE-1",
                lambda: f"{where()}: after the request's hit, the model lets it only store a response's message it does "
                        f"not hold, one of {sorted(expected.stores.get(b, ()))} (message, previous hop)")

    def done(self, ops: list[dict], held: list[str]) -> None:
        """Whatever the model says must happen happened (`held`: what the reference holds after the last operation):
        every publication stored at each of its holders, every reached broker holding a match hit, every last
        local client's leaving told."""
        b, expected, f = self.b, self.expected, cast(Subscription, self.expected.filter)
        at_request = self.held_before.get(self.published + 1, held) if len(ops) > self.published else held
        if b in expected.reach and any(matches(f, expected.events[int(m)]) for m in at_request):
            require(self.requested > self.published, "CLM-CACHE-1",
                    lambda: f"broker {b} held {at_request} when the request reached it, some matching {f}, and told its "
                            f"cache nothing: the model hits them")
        inserted = [int(op["message"]) for op in ops[:self.published]]
        want = sorted(eid for eid, at in expected.holders.items() if b in at)
        require(sorted(inserted) == want, "CLM-CACHE-1",
                lambda: f"broker {b} stored {sorted(inserted)} when they were published; the model stores {want} there")
        require(not self.unsubscriptions, "CLM-CACHE-1",
                lambda: f"broker {b} never told its cache that its last local client of {self.unsubscriptions} left")


def same_as_reference(where: str, policy: str, capacity: int, cache: RecordedCache, phases: PhaseCheck | None = None) -> None:
    """The reference, fed `cache.ops`, evicts what the cache evicted and ends in its order and metadata; with
    `phases`, each operation is also one the model says the broker must make, and every one it must make was made."""
    model = caching_model.empty_cache(cache_class(policy).name, capacity)
    victims = iter(cache.victims)
    for k, op in enumerate(cache.ops, 1):
        if phases is not None:
            phases.op(k, op, caching_model.order(model), cache.ops)
        model, expected = apply_to_reference(model, op)
        if op["op"] == "insert":
            got = next(victims)
            require(got == expected, "CLM-CACHE-1",
                    lambda: f"{where} ({policy}, capacity {capacity}), operation {k} of {len(cache.ops)} {op}: the cache evicted "
                            f"{got!r}, the reference {expected!r}; operations {cache.ops[:k]}")
            if got is not None:
                census.record(f"evicted:{policy}")
        elif op["matching"]:
            census.record(f"{op['op']}:bounded")
    if phases is not None:
        phases.done(cache.ops, caching_model.order(model))
    want, got_order = caching_model.order(model), cache.order()
    require(got_order == want, "CLM-CACHE-1",
            lambda: f"{where} ({policy}, capacity {capacity}): order {got_order}, the reference's {want}; operations {cache.ops}")
    for m in want:
        require(cache.metadata(m) == caching_model.metadata(model, m), "CLM-CACHE-1",
                lambda: f"{where} ({policy}, capacity {capacity}): {m}'s metadata {cache.metadata(m)}, "
                        f"the reference's {caching_model.metadata(model, m)}; operations {cache.ops}")
