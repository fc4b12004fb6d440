"""Conformance of summary-based routing across brokers (claims CLM-SR-*,
spec/08-summary-routing.md): the model's plan and routes (subsum.model.routing)
against the impl's decisions (subsum.impl.network.protocols.summaries.plan) on
Example 4-3 and on every graph, Example 4-4 over messages on the simulator,
colliding broker numbers, and the broadcast and flooding baselines (CLM-SR-1
.. 5, 7, 9). The summaries protocol under churn (CLM-SR-6) is
conformance/checks/routing/churn.py; the Siena baseline (CLM-SR-8) is
conformance/checks/routing/siena.py."""

from __future__ import annotations

from collections import defaultdict
from typing import cast

import networkx as nx
from hypothesis import strategies as st

from subsum.conformance import strategies as gen
from subsum.conformance.runner import census
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.runner.violations import require
from subsum.conformance.checks.summaries.seed000 import PRICE, SYMBOL, example_4_4_rows, fig_4_5
from subsum.conformance.checks.summaries.views import as_sets, impl_rows
from subsum.core.filters import parse_filter
from subsum.core.types import Subscription
from subsum.impl.network import Network, build
from subsum.impl.network.protocols.summaries import plan as summary_plan
from subsum.impl.network.protocols.summaries.broker import SummaryBroker
from subsum.impl.network.protocols.summaries.rounds import Rounds
from subsum.impl.summary import IdLayout, OwnerSummary
from subsum.impl.summary.summary import SummaryError
from subsum.model import routing as ref
from subsum.model.semantics import matches

#: Example 4-3's 13-broker tree, reconstructed in the seed note §5.2.
EXAMPLE_4_3 = ((1, 2), (2, 5), (3, 5), (4, 5), (6, 5), (5, 7), (7, 8), (8, 9), (8, 10), (10, 11), (11, 12), (11, 13))


def adjacency(graph: nx.Graph) -> dict[int, set[int]]:
    return {b: set(graph[b]) for b in graph}


def impl_plan_as_model(p: summary_plan.Plan | None) -> ref.PropagationPlan:
    assert p is not None, "no propagation plan yet"
    return ref.PropagationPlan(tuple(p.sends), dict(p.merged), p.sinks)


def summary_brokers(net: Network) -> dict[int, SummaryBroker]:
    return {b: cast(SummaryBroker, broker) for b, broker in net.brokers.items()}


def rounds_of(net: Network) -> Rounds:
    return cast(Rounds, net.shared)


# --- CLM-SR-1, CLM-SR-3: Example 4-3 ---------------------------------------------------------

def seed000_example_4_3_plan() -> None:
    """CLM-SR-1: sinks 5, 8, 11 with {1..6}, {7..10}, {11..13}, after 10 sends; the impl agrees."""
    graph = nx.Graph(EXAMPLE_4_3)
    plan = ref.propagation_plan(graph)
    assert plan.sinks == (5, 8, 11), plan.sinks
    assert {s: sorted(plan.merged_brokers[s]) for s in plan.sinks} == {
        5: [1, 2, 3, 4, 5, 6], 8: [7, 8, 9, 10], 11: [11, 12, 13]}, plan.merged_brokers
    assert len(plan.sends) == 10 < graph.number_of_nodes()
    assert [(s, r) for _, s, r in plan.sends if s in (7, 10)] == [(7, 8), (10, 8)]  # the smallest-degree rule
    got = impl_plan_as_model(summary_plan.plan(adjacency(graph)))
    assert got == plan, f"the impl's plan sends {got.sends}, the model's {plan.sends}"


def seed000_example_4_3_route() -> None:
    """CLM-SR-3: the event at broker 1 matching at 4, 8 and 13: five messages
    under option (a), six under option (b); the impl's next brokers agree."""
    graph = nx.Graph(EXAMPLE_4_3)
    plan = ref.propagation_plan(graph)
    reported = {5: {4}, 8: {8}, 11: {13}}  # what each sink's merged summary reports
    want = {"a": ["ROUTE 1 5", "DELIVER 5 4", "ROUTE 5 8", "ROUTE 8 11", "DELIVER 11 13"],
            "b": ["ROUTE 1 2", "ROUTE 2 5", "DELIVER 5 4", "ROUTE 5 8", "ROUTE 8 11", "DELIVER 11 13"]}
    for option, messages in want.items():
        route = ref.brocli_route(graph, plan, reported, 1, option)
        assert [f"{k} {a} {b}" for k, a, b in route.messages] == messages, (option, route.messages)
        assert route.delivered == {4: 5, 8: 8, 13: 11} and route.brocli == frozenset(graph)
        got = impl_route(graph, reported, 1, option)
        assert got == route.messages, f"option {option}: the impl routes {got}, the model {route.messages}"


def impl_route(graph: nx.Graph, reported, publisher: int, option: str) -> tuple:
    """The same journey decided by the impl's plan and next_broker."""
    p = summary_plan.plan(adjacency(graph))
    messages: list[tuple[str, int, int]] = []
    brocli: frozenset[int] = frozenset()
    at: int | None = publisher
    while at is not None:
        messages += [("DELIVER", at, o) for o in sorted(set(reported.get(at, ())) - brocli) if o != at]
        brocli = brocli | p.merged[at]
        nxt = summary_plan.next_broker(adjacency(graph), p.degree, at, brocli, option)
        if nxt is not None:
            messages.append(("ROUTE", at, nxt))
        at = nxt
    return tuple(messages)


# --- CLM-SR-2, CLM-SR-4: every graph ----------------------------------------------------------

@st.composite
def graphs(draw) -> nx.Graph:
    """Trees, and graphs with cycles, connected or not, up to 12 brokers."""
    n = draw(st.integers(1, 12))
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    if draw(st.booleans()):
        graph.add_edges_from((draw(st.integers(0, i - 1)), i) for i in range(1, n))
    else:
        pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
        graph.add_edges_from(draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else [])
    return graph


@property_check(graphs())
def plan_is_a_forest_whose_sinks_partition(graph):
    """CLM-SR-2."""
    if any(graph.degree(a) == graph.degree(b) for a, b in graph.edges):
        census.record("plan:equal-degree-neighbors")  # the plan's tie rule (degree, then id) decides who sends
    plan = ref.propagation_plan(graph)
    senders = [s for _, s, _ in plan.sends]
    assert len(senders) == len(set(senders)), "a broker sent twice"
    assert len(plan.sends) == graph.number_of_nodes() - len(plan.sinks)
    received = defaultdict(set)
    for i, s, r in plan.sends:
        assert graph.has_edge(s, r) and i == graph.degree(s), (i, s, r)
        assert (graph.degree(r), r) > (graph.degree(s), s), f"{s} sent to {r}, which acted before it"
        assert r not in received[s], f"{s} sent back to {r}, a sender"
        received[r].add(s)
    for b in graph:
        assert plan.merged_brokers[b] == frozenset({b}).union(*(plan.merged_brokers[s] for s in received[b]))
    lists = [plan.merged_brokers[s] for s in plan.sinks]
    assert sum(map(len, lists)) == graph.number_of_nodes() and frozenset().union(*lists) == frozenset(graph)
    got = impl_plan_as_model(summary_plan.plan(adjacency(graph)))
    assert got == plan, f"the impl's plan sends {got.sends}, the model's {plan.sends}"


@property_check(graphs(), st.data())
def routing_stops_and_hands_each_owner_the_event_once(graph, data):
    """CLM-SR-4."""
    brokers = sorted(graph)
    plan = ref.propagation_plan(graph)
    # what each broker's summary reports: owners inside its list (at least the truly interested), plus noise
    interested = data.draw(st.sets(st.sampled_from(brokers)))
    reported = {b: (interested & plan.merged_brokers[b]) | data.draw(st.sets(st.sampled_from(sorted(plan.merged_brokers[b]))))
                for b in brokers}
    publisher = data.draw(st.sampled_from(brokers))
    for option in ref.OPTIONS:
        route = ref.brocli_route(graph, plan, reported, publisher, option)
        assert route.brocli == frozenset(graph) and route.route_hops <= len(brokers) - 1
        seen: frozenset = frozenset()
        for b in route.checked:
            assert b not in seen, f"{b} checked twice"
            seen |= plan.merged_brokers[b]
        first = {}
        for b in route.checked:
            for o in plan.merged_brokers[b]:
                first.setdefault(o, b)
        want = {o: first[o] for o in brokers if o in reported[first[o]]}
        assert dict(route.delivered) == want, (route.delivered, want)
        if any(o != b for o, b in route.delivered.items()):
            census.record("route:owner-off-path")  # an interested owner handed the event by a broker whose list holds it
        assert interested <= set(route.delivered)
        got = impl_route(graph, reported, publisher, option)
        assert got == route.messages, f"option {option}: the impl routes {got}, the model {route.messages}"


# --- CLM-SR-5: Example 4-4 over messages ------------------------------------------------------

def seed000_example_4_4_messages() -> None:
    """CLM-SR-5: t1 -> t2 -> t3 on the simulator gives t1 again at broker 3;
    S3's deletion makes broker 3 ask brokers 1 and 2 (DELETE-QUERY)."""
    for reading in ("prefix", "contains"):
        subscriptions = fig_4_5(reading)
        s1, s2, s3, s4 = (s for _, s in subscriptions)
        label_of = {s: name for name, s in subscriptions}
        net = Network(seed=1, protocol="summaries", options={"schema": (PRICE, SYMBOL), "brokers": 4, "max_subscriptions": 8})
        for b in (1, 2, 3):
            net.add_broker(b)
        net.connect(1, 3)
        net.connect(2, 3)
        c1, c2, c3 = (net.add_client(b) for b in (1, 2, 3))
        for client, s in ((c1, s1), (c2, s2), (c3, s4)):
            net.subscribe(client, s)
        net.run()
        label: dict[int, str] = {}  # subscription ID -> S1 .. S4, kept after a deletion

        def names() -> dict[int, str]:
            for broker in summary_brokers(net).values():
                for (_, f), name in broker.ownership.names.items():
                    label[broker.ownership.summary.by_name[name]] = label_of[f]
            return label

        history = summary_brokers(net)[3].propagation.history
        assert rounds_of(net).current_plan(net.overlay).target == {1: 3, 2: 3, 3: None}
        t1 = as_sets(impl_rows(history, names()))
        net.subscribe(c1, s3)
        net.run()
        t2 = as_sets(impl_rows(history, names()))
        queries = net.ledger.sent["DELETE-QUERY"]
        net.unsubscribe(c1, s3)
        net.run()
        t3 = as_sets(impl_rows(history, names()))
        want_t1, want_t2 = example_4_4_rows(reading)
        assert t1 == want_t1, t1
        assert t2[PRICE] == want_t2[PRICE], t2
        assert t3 == t1, (reading, t3, t1)
        assert queries == 0 and net.ledger.sent["DELETE-QUERY"] == net.ledger.handled["DELETE-ANSWER"] == 2, dict(net.ledger.sent)
        assert not net.ledger.violations and not history.retired


# --- CLM-SR-7: colliding broker numbers -------------------------------------------------------

def merge_refuses_colliding_brokers() -> None:
    """CLM-SR-7: two summaries that both hold broker 0 are not merged."""
    layout = IdLayout(2, 4, 1)
    a, b = OwnerSummary(0, layout, (("x", "int"),)), OwnerSummary(0, layout, (("x", "int"),))
    a.add("p", parse_filter("x > 5"))
    b.add("q", parse_filter("x < 1"))
    try:
        a.export().merge_in(b.export())
    except SummaryError as exc:
        assert "collide" in str(exc), exc
    else:
        raise AssertionError("two summaries of broker 0 were merged")


# --- CLM-SR-9: the baselines deliver exactly -------------------------------------------------

@st.composite
def static_workloads(draw):
    """A random tree of brokers, clients with filters, and events planted from the filters."""
    n = draw(st.integers(1, 8))
    links = [(draw(st.integers(0, i - 1)), i) for i in range(1, n)]
    clients = draw(st.lists(st.tuples(st.integers(0, n - 1), st.lists(gen.summary_subscriptions(), max_size=3)), max_size=8))
    filters = [f for _, fs in clients for f in fs] or [Subscription()]
    events = draw(st.lists(st.tuples(st.integers(0, max(0, len(clients) - 1)), st.sampled_from(filters).flatmap(gen.summary_event_for)),
                           max_size=6))
    return n, links, clients, events


@property_check(static_workloads())
def baselines_deliver_exactly(workload):
    """CLM-SR-9: broadcast and flooding hand each event to exactly the
    clients owed it, once; flooding sends N − 1 EVENTs per event, broadcast
    (N − 1) SUBSCRIPTIONs per subscription."""
    n, links, clients, events = workload
    for protocol in ("broadcast", "flooding"):
        net = build(links, n, seed=0, protocol=protocol)
        ids = [net.add_client(b) for b, _ in clients]
        for c, (_, fs) in zip(ids, clients):
            for f in fs:
                net.subscribe(c, f)
        net.run()
        held = sum(len(net.client_filters[c]) for c in ids)
        assert net.ledger.sent["SUBSCRIPTION"] == (held * (n - 1) if protocol == "broadcast" else 0), dict(net.ledger.sent)
        for k, event in events:
            if not ids:
                break
            publisher = ids[k % len(ids)]
            before = net.ledger.sent["EVENT"]
            eid = net.publish(publisher, event)
            net.run()
            owed = {c for c in ids if c != publisher and any(matches(f, event) for f in net.client_filters[c])}
            got = net.ledger.deliveries[eid]
            require(set(got) == owed and all(v == 1 for v in got.values()), "CLM-SR-9", lambda: f"{protocol} delivered {dict(got)}, owed {sorted(owed)}")
            if protocol == "flooding":
                require(net.ledger.sent["EVENT"] - before == n - 1, "CLM-SR-9",
                        lambda: f"flooding sent {net.ledger.sent['EVENT'] - before} EVENTs among {n} brokers")
