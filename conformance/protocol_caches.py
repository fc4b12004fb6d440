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

from hypothesis import strategies as st

from subsum.conformance import census
from subsum.conformance.caching import apply_to_reference
from subsum.conformance.properties import property_check
from subsum.conformance.requests import PLACEMENTS, caching_workloads, run_workload
from subsum.conformance.violations import require
from subsum.core.names import CACHE_POLICIES
from subsum.impl.caching import cache_class
from subsum.core.types import Event, Subscription
from subsum.impl.network.protocols.caching import CacheNetwork, CachingBroker, request
from subsum.model import caching as ref
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


def same_as_reference(where: str, policy: str, capacity: int, cache: RecordedCache) -> None:
    """The reference, fed `cache.ops`, evicts what the cache evicted and ends in its order and metadata."""
    model = ref.empty_cache(cache_class(policy).name, capacity)
    victims = iter(cache.victims)
    for k, op in enumerate(cache.ops, 1):
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
    want, got_order = ref.order(model), cache.order()
    require(got_order == want, "CLM-CACHE-1",
            lambda: f"{where} ({policy}, capacity {capacity}): order {got_order}, the reference's {want}; operations {cache.ops}")
    for m in want:
        require(cache.metadata(m) == ref.metadata(model, m), "CLM-CACHE-1",
                lambda: f"{where} ({policy}, capacity {capacity}): {m}'s metadata {cache.metadata(m)}, "
                        f"the reference's {ref.metadata(model, m)}; operations {cache.ops}")


@property_check(st.integers(1, 3), st.sampled_from(PLACEMENTS), caching_workloads(), st.booleans(), scale=2)  # milliseconds a run
def protocol_caches_equal_the_reference(capacity: int, placement: str, workload, leave: bool) -> None:
    """CLM-CACHE-1: a caching-protocol run at bounded capacity under each
    policy (subscribe, publish, a request, then, with `leave`, every
    standing client unsubscribes); each broker's cache is the reference's
    for the operations the broker made, and the request's hits are what
    each broker held (`hits_the_request_made`)."""
    for policy in CACHE_POLICIES:
        run_and_compare(policy, capacity, placement, workload, leave)


def run_and_compare(policy: str, capacity: int, placement: str, workload, leave: bool) -> None:
    net, ids, _ = run_workload(workload, placement, prepare=watch_caches, policy=policy, capacity=capacity)
    broker, f = workload[4]
    client = net.add_client(broker)
    net.subscribe(client, f)
    net.run()
    caches = {b: cast(RecordedCache, cast(CachingBroker, broker_).cache) for b, broker_ in net.brokers.items()}
    before = {b: len(cache.ops) for b, cache in caches.items()}
    rid = request(net, client, f)
    net.run()
    reached = set(cast(CacheNetwork, net.shared).requests[rid].reached)
    for b, cache in sorted(caches.items()):
        hits_the_request_made(b, b in reached, policy, capacity, cache, before[b], f, cast(CacheNetwork, net.shared).events)
    if leave:
        for c, (_, filters) in zip(ids, workload[2]):
            for g in filters:
                net.unsubscribe(c, g)
        net.run()
    for b, cache in sorted(caches.items()):
        same_as_reference(f"broker {b}", policy, capacity, cache)


def hits_the_request_made(b: int, reached: bool, policy: str, capacity: int, cache: RecordedCache, before: int, f: Subscription,
                          events: dict[int, Event]) -> None:
    """The operations a request caused at broker b, against what b saw: a
    broker the request reached hits, first, exactly the messages it held
    (by the reference, fed b's operations before the request) that match
    the request's filter; a broker it did not reach, or that held none, hits nothing."""
    model = ref.empty_cache(cache_class(policy).name, capacity)
    for op in cache.ops[:before]:
        model, _ = apply_to_reference(model, op)
    want = sorted(m for m in ref.order(model) if matches(f, events[int(m)]))
    after = cache.ops[before:]
    hits = [op for op in after if op["op"] == "hit"]
    if reached and want:
        require(bool(after) and after[0]["op"] == "hit" and sorted(after[0]["matching"]) == want and len(hits) == 1, "CLM-CACHE-1",
                lambda: f"broker {b} ({policy}, capacity {capacity}) held {want} matching the request's filter; "
                        f"its operations on the request: {after}")
        census.record("request-hit:bounded")
    else:
        require(not hits, "CLM-CACHE-1", lambda: f"broker {b} ({policy}, capacity {capacity}) hit {hits}, yet "
                                                 + ("it held nothing the request matches" if reached else "the request did not reach it"))
