"""Conformance of the caching protocol (claims CLM-CACHE-5 … 10,
spec/09-caching.md): placement and request/response on the simulator
(`subsum.impl.network.protocols.caching`) against the reference
(`subsum.model.placement`) on quiescent networks with unbounded caches.

A workload: a random tree, standing clients with filters, publications
planted from those filters, then one more client that subscribes to a
filter and requests the past publications it matches.
"""

from __future__ import annotations

from typing import cast

from hypothesis import strategies as st

from subsum.conformance.runner import census
from subsum.conformance import strategies as gen
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.runner.violations import require
from subsum.core.filters import parse_filter
from subsum.core.names import SINGLE_READINGS
from subsum.core.types import Attribute, Event, Subscription
from subsum.impl.network import build
from subsum.impl.network.protocols.caching import CacheNetwork, CachingBroker, filters_overlap, request
from subsum.model import placement as ref
from subsum.model.semantics import matches

PLACEMENTS = ("candidate", "leaf", "all", "single")


@st.composite
def caching_workloads(draw):
    """(n, links, clients [(broker, filters)], events [(client index, event)], request (broker, filter))."""
    # Hypothesis draws small integers most, which makes small networks and stars; half the workloads are
    # larger trees that hang each broker near the last one, so requests and responses also cross three
    # brokers and more (the census's response:long).
    deep = draw(st.booleans())
    n = 7 - draw(st.integers(0, 3)) if deep else draw(st.integers(1, 7))
    links = [((i - 1 - k) if deep else k, i) for i in range(1, n) for k in [draw(st.integers(0, i - 1))]]
    clients = draw(st.lists(st.tuples(st.integers(0, n - 1), st.lists(gen.summary_subscriptions(), max_size=2)), min_size=1, max_size=6))
    filters = [f for _, fs in clients for f in fs] or [Subscription()]
    events = draw(st.lists(st.tuples(st.integers(0, len(clients) - 1), st.sampled_from(filters).flatmap(gen.summary_event_for)),
                           max_size=6))
    asked = draw(st.sampled_from(filters) if draw(st.integers(0, 3)) else gen.summary_subscriptions())  # mostly a filter in use
    return n, links, clients, events, (draw(st.integers(0, n - 1)), asked)


#: Steps a workload's run may take before it counts as a message loop (the longest run of the ci draws takes 44
#: steps): a relay bug that bounces a message forever is reported, not run forever.
SETTLE_STEPS = 100_000


def settle(net) -> None:
    """Run the network to quiescence, or report a message loop (CLM-CACHE-6) after `SETTLE_STEPS` steps."""
    net.run(max_steps=SETTLE_STEPS)
    require(net.transport.quiescent(), "CLM-CACHE-6", lambda: f"the network did not quiesce within {SETTLE_STEPS} steps (a message loop?)")


def run_workload(workload, placement: str, reading: str = "ii", prepare=None, **options):
    """Build the network, subscribe, publish (each to quiescence); returns
    the network, the client ids and the published (event id, client, event).
    `prepare(net)` runs on the network before anything happens in it."""
    n, links, clients, events, _ = workload
    which = "single_reading" if reading in SINGLE_READINGS else "leaf_reading"
    net = build(links, n, seed=0, protocol="caching", options={"placement": placement, which: reading, "capacity": None, **options})
    if prepare is not None:
        prepare(net)
    ids = [net.add_client(b) for b, _ in clients]
    for c, (_, fs) in zip(ids, clients):
        for f in fs:
            net.subscribe(c, f)
    settle(net)
    published = []
    for k, event in events:
        published.append((net.publish(ids[k], event), ids[k], event))
        settle(net)
    return net, ids, published


def holdings(net) -> dict[int, set[int]]:
    """Event id -> the brokers whose cache holds it."""
    held: dict[int, set[int]] = {}
    for b, broker in net.brokers.items():
        for m in cast(CachingBroker, broker).cache.order():
            held.setdefault(int(m), set()).add(b)
    return held


def model_view(net):
    """The overlay, client access and client filters the model reads."""
    graph = ref.overlay(sorted(net.brokers), net.broker_links())
    filters = {c: frozenset(fs) for c, fs in net.client_filters.items()}
    return graph, dict(net.clients), filters


# --- CLM-CACHE-5: placement -------------------------------------------------------------------

@property_check(caching_workloads())
def placements_nest(workload) -> None:
    """CLM-CACHE-5: with unbounded caches, each publication's holders are the
    model's under every placement (leaf in both readings), and leaf ⊆
    candidate ⊆ all, single holding one copy (the publisher's broker, or the
    tree's centre in the `centre` reading)."""
    held = {}
    for placement, reading in (("candidate", "ii"), ("leaf", "ii"), ("leaf", "i"), ("all", "ii"), ("single", "ii"),
                               ("single", "centre")):
        net, _, published = run_workload(workload, placement, reading)
        graph, access, filters = model_view(net)
        got = holdings(net)
        for eid, publisher, event in published:
            want = ref.holders(graph, access, filters, publisher, event, placement, reading)
            require(got.get(eid, set()) == want, "CLM-CACHE-5",
                    lambda: f"{placement} ({reading}): event {eid} is held by {sorted(got.get(eid, set()))}, the model says {sorted(want)}")
        held[placement, reading] = got
    for eid in held["all", "ii"]:
        leaf, leaf_i = held["leaf", "ii"].get(eid, set()), held["leaf", "i"].get(eid, set())
        candidate, every = held["candidate", "ii"].get(eid, set()), held["all", "ii"][eid]
        require(leaf <= leaf_i <= candidate <= every, "CLM-CACHE-5",
                lambda: f"event {eid}: leaf {leaf}, leaf (i) {leaf_i}, candidate {candidate}, all {every}")
        for reading in ("ii", "centre"):
            require(len(held["single", reading].get(eid, set())) == 1, "CLM-CACHE-5",
                    lambda: f"single ({reading}) holds event {eid} at {held['single', reading].get(eid)}")


# --- CLM-CACHE-6 … 9: requests and responses ----------------------------------------------

@property_check(st.sampled_from(PLACEMENTS), caching_workloads(), scale=3)
def requests_and_responses(placement: str, workload) -> None:
    """CLM-CACHE-6 … 9, on a quiescent network with unbounded caches:

    - 6: every response retraces its request's path, one id popped per hop;
    - 7: the request reaches exactly the brokers of the model's reach (with
      the impl's overlap test), with the same paths, dropped at the same
      brokers; and every broker of the exact reach;
    - 8: under candidate, all and single placement, no message reaches the
      client twice (leaf caching stores responses only at leaves, so
      relays do not suppress duplicates);
    - 9: the client gets exactly the past publications its filter matches
      that a reached broker held, under every placement.
    """
    net, ids, published = run_workload(workload, placement)
    broker, f = workload[4]
    before = holdings(net)
    client = net.add_client(broker)
    net.subscribe(client, f)
    rid = request(net, client, f)
    settle(net)
    record = cast(CacheNetwork, net.shared).requests[rid]
    past = {eid for eid, _, event in published if matches(f, event)}
    assert record.past == frozenset(past), f"the record's past publications {sorted(record.past)} are not {sorted(past)}"
    graph, access, filters = model_view(net)
    check_request(net, record, graph, access, filters, before, placement)


def check_request(net, record, graph, access: dict, filters: dict, before: dict[int, set[int]] | dict[int, frozenset[int]],
                  placement: str) -> None:
    """CLM-CACHE-6 … 9 for one answered request, against the model fed the overlay, the clients' access and filters
    as they were when it was made, and `before`: the brokers that then held each publication."""
    f = record.filter
    # CLM-CACHE-7
    reach, dropped = ref.request_reach(graph, access, filters, record.client, f, overlap=filters_overlap)
    require(record.paths == reach, "CLM-CACHE-7", lambda: f"the request recorded paths {record.paths}, the model {reach}")
    require(set(record.dropped_at) == dropped and len(record.dropped_at) == len(dropped), "CLM-CACHE-7",
            lambda: f"dropped at {record.dropped_at}, the model says {sorted(dropped)}")
    exact, _ = ref.request_reach(graph, access, filters, record.client, f)
    require(set(exact) <= set(reach), "CLM-CACHE-7", lambda: f"the exact reach {sorted(exact)} is not within the request's {sorted(reach)}")

    # CLM-CACHE-6
    for responder, m, visited in record.responses:
        census.record("response:long" if len(visited) >= 3 else "response:short")  # brokers the response crossed
        stack = record.paths[responder]
        brokers_on_path = [b for b in stack if b in net.brokers]
        require(visited == brokers_on_path[:len(visited)], "CLM-CACHE-6",
                lambda: f"the response of {m} from {responder} visited {visited}; its request came by {stack}")
        for a, b in zip(visited, visited[1:]):
            require(graph.has_edge(a, b), "CLM-CACHE-6", lambda: f"the response of {m} jumped from {a} to {b}")

    # CLM-CACHE-8
    if placement != "leaf":
        twice = {m: c for m, c in record.recovered.items() if c > 1}
        require(not twice, "CLM-CACHE-8", lambda: f"under {placement} placement the client got {twice} more than once")

    # CLM-CACHE-9
    findable = {m for m in record.past if before.get(m, set()) & set(record.reached)}
    if any(len(before.get(m, set()) & set(record.reached)) > 1 for m in findable):
        census.record("request:held-twice")  # two reached brokers hold one message: duplicates to suppress (CLM-CACHE-8)
    require(set(record.recovered) == findable, "CLM-CACHE-9",
            lambda: f"the client recovered {sorted(record.recovered)}; held at reached brokers: {sorted(findable)}")


def check_answered_requests(net) -> None:
    """CLM-CACHE-6 … 9 at quiescence, for every request whose record kept its context (`request(...,
    note_context=True)`, `subsum explore`'s): each is answered by now (spec/12 DEF-EXP-10)."""
    shared = cast(CacheNetwork, net.shared)
    for record in shared.requests.values():
        if record.context is not None:
            links, access, filters, before = record.context
            check_request(net, record, ref.overlay(sorted(net.brokers), list(links)), access, filters, before, shared.placement)


@property_check(gen.summary_subscriptions(), gen.summary_subscriptions())
def overlap_is_sound(f: Subscription, g: Subscription) -> None:
    """CLM-CACHE-7: the impl's overlap test never says disjoint of two filters
    some event matches (z3 decides); on filters without string
    constraints it is exact."""
    exact = ref.filters_overlap(f, g)
    fast = filters_overlap(f, g)
    require(fast or not exact, "CLM-CACHE-7", lambda: f"{f} and {g} overlap, but the impl says they do not")
    if all(c.type != "string" for c in f.constraints | g.constraints):
        require(fast == exact, "CLM-CACHE-7", lambda: f"{f} and {g}: impl {fast}, exact {exact}")


# --- CLM-CACHE-10: seed 003 §2.6's request -----------------------------------------------

def seed003_request_path() -> None:
    """CLM-CACHE-10: on the chain s1 – ni – n1 – n2 (brokers 0, 1, 2), a
    client at n2 subscribed to f2 has had a publication cached at n2; s1
    subscribes f1, which overlaps f2, and requests. After three hops the
    request reads Request(f1, n2 → n1 → ni → s1); n2's response pops its way
    back n1, ni, s1, and n1 and ni store the message (candidates)."""
    ni, n1, n2 = 0, 1, 2
    net = build([(ni, n1), (n1, n2)], 3, seed=0, protocol="caching", options={"placement": "candidate", "capacity": None})
    f1, f2 = parse_filter("price > 10"), parse_filter("price > 5 and price < 20")
    c2 = net.add_client(n2)
    net.subscribe(c2, f2)
    settle(net)
    publisher = net.add_client(n2)
    eid = net.publish(publisher, Event((Attribute("price", "int", 15),)))
    settle(net)
    assert holdings(net) == {eid: {n2}}, holdings(net)
    s1 = net.add_client(ni)
    net.subscribe(s1, f1)
    rid = request(net, s1, f1)
    settle(net)
    record = cast(CacheNetwork, net.shared).requests[rid]
    assert record.paths[n2] == (n2, n1, ni, s1), f"after three hops the request reads {record.paths[n2]}"
    assert record.paths[ni] == (ni, s1) and record.paths[n1] == (n1, ni, s1)
    assert record.responses == [(n2, eid, [n2, n1, ni])], record.responses
    assert dict(record.recovered) == {eid: 1} and record.delay == {eid: 2}
    assert holdings(net) == {eid: {ni, n1, n2}}, holdings(net)
    assert (record.request_hops, record.response_hops) == (2, 2)
