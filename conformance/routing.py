"""Conformance of summary-based routing across brokers (claims CLM-SR-*,
spec/08-summary-routing.md): the model's plan and routes (subsum.model.routing)
against the impl's decisions (subsum.impl.network.protocols.summaries.plan) and the
summaries protocol on the simulator (subsum.impl.network.protocols.summaries.broker)."""

from __future__ import annotations

from collections import defaultdict
from typing import cast

import networkx as nx
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from subsum.conformance import strategies as gen
from subsum.conformance.properties import property_check
from subsum.conformance.summaries.seed000 import PRICE, SYMBOL, equality_row, expected_rows, fig_4_5, range_row, symbol
from subsum.conformance.summaries.views import constraint_sets, impl_rows
from subsum.core.types import Event, Subscription, subscription_sort_key
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
        assert rounds_of(net).current_plan().target == {1: 3, 2: 3, 3: None}
        t1 = {k: set(v) for k, v in impl_rows(history, names()).items()}
        net.subscribe(c1, s3)
        net.run()
        t2 = {k: set(v) for k, v in impl_rows(history, names()).items()}
        queries = net.ledger.sent["DELETE-QUERY"]
        net.unsubscribe(c1, s3)
        net.run()
        t3 = {k: set(v) for k, v in impl_rows(history, names()).items()}
        price_t1 = [(range_row(8.60, 8.70), "S4"), (equality_row(8.50), "S1"), (equality_row(8.55), "S2")]
        price_t2 = [(range_row(8.45, 8.70), "S1 S2 S3 S4")]
        if reading == "prefix":
            assert t1 == expected_rows(symbol=[(("constraint", symbol("=", "OTE")), "S1"), (("constraint", symbol("=", "OTER")), "S2"),
                                       (("constraint", symbol("prefix", "T")), "S4")], price=price_t1), t1
        else:
            assert t1 == expected_rows(symbol=[(("constraint", symbol("contains", "T")), "S1 S2 S4")], price=price_t1), t1
        assert t2[PRICE] == expected_rows(price=price_t2)[PRICE], t2
        assert t3 == t1, (reading, t3, t1)
        assert queries == 0 and net.ledger.sent["DELETE-QUERY"] == net.ledger.handled["DELETE-ANSWER"] == 2, dict(net.ledger.sent)
        assert not net.ledger.violations and not history.retired


# --- CLM-SR-7: colliding broker numbers -------------------------------------------------------

def merge_refuses_colliding_brokers() -> None:
    """CLM-SR-7: two summaries that both hold broker 0 are not merged."""
    from subsum.core.filters import parse_filter
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


# --- CLM-SR-6: the protocol under churn -------------------------------------------------------

SCHEMA = (("b", "bool"), ("s", "string"), ("t", "string"), ("x", "int"), ("y", "float"))


class CheckedSummaryBroker(SummaryBroker):
    """Records, per event, the BROCLI each ROUTE carries, so the machine can
    check that it grows and that no ROUTE goes to a checked broker."""

    __slots__ = ()

    def routed(self, src, message):
        eid, brocli = message.eid, message.brocli
        trail = self.net.routes_seen[eid]
        assert self.id not in brocli, f"CLM-SR-6: ROUTE of event {eid} reached broker {self.id}, already in its BROCLI {sorted(brocli)}"
        assert not trail or trail[-1] < brocli, f"CLM-SR-6: BROCLI of event {eid} did not grow: {sorted(trail[-1])} then {sorted(brocli)}"
        trail.append(brocli)
        super().routed(src, message)


class SummaryRoutingUnderChurn(RuleBasedStateMachine):
    """Clients subscribe, unsubscribe and publish; round timers fire and
    messages are delivered in an order Hypothesis picks; `quiesce` runs
    everything and checks the settled state."""

    broker_class: type[SummaryBroker] = CheckedSummaryBroker
    compare_histories = True  # False: only deliveries and routes are checked (to see them bite alone)

    @initialize(n=st.integers(1, 6), seed=st.integers(0, 2**16), option=st.sampled_from(ref.OPTIONS), data=st.data())
    def start(self, n, seed, option, data):
        parents = [data.draw(st.integers(0, i - 1)) for i in range(1, n)]
        self.net = build([(p, i) for i, p in enumerate(parents, start=1)], n, seed=seed, protocol="summaries",
                         broker_class=self.broker_class,
                         options={"schema": SCHEMA, "brokers": 8, "max_subscriptions": 64, "option": option, "period": 50.0})
        self.net.routes_seen = defaultdict(list)
        self.option = option
        for b in range(n):
            for _ in range(data.draw(st.integers(0, 2))):
                self.net.add_client(b)

    def _clients(self):
        return sorted(self.net.clients)

    def settled(self) -> bool:
        net = self.net
        return net.transport.quiescent() and rounds_of(net).round >= 0 and not any(b.owner_changed() for b in summary_brokers(net).values())

    @precondition(lambda self: self.net.clients)
    @rule(data=st.data(), f=gen.summary_subscriptions())
    def subscribe(self, data, f):
        self.net.subscribe(data.draw(st.sampled_from(self._clients())), f)

    @precondition(lambda self: any(self.net.client_filters.values()))
    @rule(data=st.data())
    def unsubscribe(self, data):
        client = data.draw(st.sampled_from([c for c in self._clients() if self.net.client_filters[c]]))
        f = data.draw(st.sampled_from(sorted(self.net.client_filters[client], key=subscription_sort_key)))
        self.net.unsubscribe(client, f)

    def _draw_publication(self, data) -> tuple[int, Event]:
        """A client and an event, half of the events planted from a filter some client holds."""
        filters = sorted({f for fs in self.net.client_filters.values() for f in fs}, key=subscription_sort_key) or [Subscription()]
        client = data.draw(st.sampled_from(self._clients()))
        return client, data.draw(gen.summary_event_for(data.draw(st.sampled_from(filters))))

    @precondition(lambda self: self.net.clients)
    @rule(data=st.data())
    def publish(self, data):
        client, event = self._draw_publication(data)
        if self.settled():
            publish_and_check(self.net, client, event, self.option)
        else:
            self.net.publish(client, event)  # during propagation: only the invariants are checked

    @precondition(lambda self: self.net.transport.pending_links())
    @rule(data=st.data(), k=st.integers(1, 8))
    def deliver(self, data, k):
        for _ in range(k):
            links = self.net.transport.pending_links()
            if not links:
                return
            self.net.transport.deliver_from(data.draw(st.sampled_from(links)))

    @precondition(lambda self: self.net.transport.pending_timers())
    @rule()
    def round_timer(self):
        self.net.transport.fire(self.net.transport.pending_timers()[0])

    @rule(data=st.data(), events=st.integers(0, 3))
    def quiesce(self, data, events):
        """Run everything, check the settled state, and publish a few events there."""
        self.net.run()
        check_settled(self.net, self.compare_histories)
        for _ in range(events if self.net.clients else 0):
            publish_and_check(self.net, *self._draw_publication(data), self.option)

    @invariant()
    def no_violations_and_short_routes(self):
        net = self.net
        assert not net.ledger.violations, dict(net.ledger.violations)
        for eid, messages in rounds_of(net).journeys.items():
            hops = sum(1 for kind, _, _ in messages if kind == "ROUTE")
            assert hops <= len(net.brokers) - 1, f"CLM-SR-6: event {eid} took {hops} ROUTE hops among {len(net.brokers)} brokers"

    def teardown(self):
        if hasattr(self, "net"):
            self.net.run()
            check_settled(self.net, self.compare_histories)


def subscribing_twice_then_once_unsubscribing() -> None:
    """CLM-SR-6 regression (found by the thorough profile): a client that
    subscribes to a filter twice and unsubscribes once holds nothing; the
    second SUB must not leave a second subscription behind at the owner."""
    from subsum.core.filters import parse_filter
    from subsum.core.types import Attribute
    net = build([(0, 1)], 2, seed=0, protocol="summaries", options={"schema": SCHEMA})
    subscriber, publisher = net.add_client(0), net.add_client(1)
    f = parse_filter("x > 1")
    net.subscribe(subscriber, f)
    net.subscribe(subscriber, f)
    net.unsubscribe(subscriber, f)
    net.run()
    eid = net.publish(publisher, Event((Attribute("x", "int", 5),)))
    net.run()
    assert not net.ledger.deliveries[eid], f"an unsubscribed client got the event: {dict(net.ledger.deliveries[eid])}"


def model_graph(net: Network) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(net.brokers)
    graph.add_edges_from(net.broker_links())
    return graph


def check_settled(net: Network, compare_histories: bool = True) -> None:
    """CLM-SR-6 after quiescence: the plan is the model's, every broker's
    Merged_Brokers is the model's, and its history has the rows of the merge
    of its brokers' own summaries (numeric rows exactly, string row constraints)."""
    if rounds_of(net).round < 0:
        return
    plan = ref.propagation_plan(model_graph(net))
    assert impl_plan_as_model(rounds_of(net).plan) == plan, "CLM-SR-6: the impl's plan is not the model's"
    for b, broker in summary_brokers(net).items():
        assert broker.merged == plan.merged_brokers[b], f"CLM-SR-6: broker {b} lists {sorted(broker.merged)}, the model {sorted(plan.merged_brokers[b])}"
        if not compare_histories:
            continue
        reference = summary_brokers(net)[min(broker.merged)].ownership.summary.export()
        for o in sorted(broker.merged - {min(broker.merged)}):
            reference.merge_in(summary_brokers(net)[o].ownership.summary.export())
        history = broker.propagation.history
        got, want = impl_rows(history, _ids(history)), impl_rows(reference, _ids(reference))
        numeric = ("int", "float")
        assert {k: v for k, v in got.items() if k[1] in numeric} == {k: v for k, v in want.items() if k[1] in numeric}, \
            f"CLM-SR-6: broker {b}'s numeric history rows differ from its brokers' summaries"
        assert constraint_sets(got) == constraint_sets(want), f"CLM-SR-6: broker {b}'s history row constraints differ"
        assert history.member_ids() == reference.member_ids(), f"CLM-SR-6: broker {b}'s history holds other IDs"
        assert not history.retired, f"broker {b} still has retired pairs {history.retired}"


def _ids(summary) -> dict:
    return {i: i for i in summary.member_ids()}


def publish_and_check(net: Network, client: int, event: Event, option: str) -> None:
    """CLM-SR-6 in a settled state: the event reaches exactly the clients owed
    it, once each, by exactly the model's messages."""
    layout = rounds_of(net).layout
    reported = {b: {layout.broker_of(i) for i in broker.propagation.history.match(event)} for b, broker in summary_brokers(net).items()}
    owed = {c for c, fs in net.client_filters.items() if c != client and any(matches(f, event) for f in fs)}
    publisher = net.clients[client]
    eid = net.publish(client, event)
    net.run()
    got = net.ledger.deliveries[eid]
    assert set(got) == owed, f"CLM-SR-6: event {eid} reached {sorted(got)}, owed to {sorted(owed)} (missing {sorted(owed - set(got))})"
    assert all(k == 1 for k in got.values()), f"CLM-SR-6: event {eid} delivered more than once: {dict(got)}"
    route = ref.brocli_route(model_graph(net), ref.propagation_plan(model_graph(net)), reported, publisher, option)
    assert tuple(rounds_of(net).journeys[eid]) == route.messages, \
        f"CLM-SR-6: event {eid} went {rounds_of(net).journeys[eid]}, the model sends {list(route.messages)}"


def run_summary_routing_machine(machine: type[SummaryRoutingUnderChurn] = SummaryRoutingUnderChurn, steps: int = 40,
                                shrink: bool = True) -> None:
    """Run the machine under the active profile; shrink only the first
    failure found (or none: a test that plants a bug wants it fast)."""
    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate)
    run_state_machine_as_test(machine, settings=settings(stateful_step_count=steps, report_multiple_bugs=False, phases=phases))


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
            assert set(got) == owed and all(v == 1 for v in got.values()), f"CLM-SR-9: {protocol} delivered {dict(got)}, owed {sorted(owed)}"
            if protocol == "flooding":
                assert net.ledger.sent["EVENT"] - before == n - 1, f"CLM-SR-9: flooding sent {net.ledger.sent['EVENT'] - before} EVENTs among {n} brokers"
