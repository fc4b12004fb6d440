"""CLM-SR-6: the summaries protocol on the simulator under churn (the
`SummaryRoutingUnderChurn` state machine, spec/08-summary-routing.md):
clients subscribe, unsubscribe and publish while rounds propagate summaries;
in every settled state the plan, each broker's merged brokers and history,
and every event's journey are the model's (subsum.model.routing)."""

from __future__ import annotations


import networkx as nx
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, precondition, rule, run_state_machine_as_test

from subsum.conformance.runner.profiles import pinned
from subsum.conformance.runner import census
from subsum.conformance.schedules.declared import ran
from subsum.conformance import strategies as gen
from subsum.conformance.checks.network.forwarding import NetworkMachine
from subsum.conformance.checks.routing.routes import impl_plan_as_model, rounds_of, summary_brokers
from subsum.conformance.checks.summaries.views import constraint_sets, impl_rows
from subsum.conformance.runner.violations import require
from subsum.core.filters import parse_filter
from subsum.core.types import Attribute, Event, Subscription, subscription_sort_key
from subsum.impl.network import Network, build
from subsum.impl.network.protocols.summaries.broker import SummaryBroker
from subsum.model import routing as ref
from subsum.model.semantics import matches

SCHEMA = (("b", "bool"), ("s", "string"), ("t", "string"), ("x", "int"), ("y", "float"))


class CheckedSummaryBroker(SummaryBroker):
    """Checks each event's BROCLI where a broker hands it on (CLM-SR-6), off the
    broker's out-buffer: a ROUTE never reaches a broker already in its BROCLI,
    and each ROUTE a broker writes carries a BROCLI strictly larger than the
    one it came with (the empty one, at the publisher's broker)."""

    __slots__ = ()
    reads_out_buffer = True

    def published(self, client, publication, out):
        mark = len(out.effects)
        super().published(client, publication, out)
        self._check_routes_written(publication.eid, frozenset(), out, mark)

    def routed(self, src, message, out):
        eid, brocli = message.eid, message.brocli
        require(self.id not in brocli, "CLM-SR-6", lambda: f"ROUTE of event {eid} reached broker {self.id}, already in its BROCLI {sorted(brocli)}")
        mark = len(out.effects)
        super().routed(src, message, out)
        self._check_routes_written(eid, brocli, out, mark)

    def _check_routes_written(self, eid: int, came_with: frozenset, out, mark: int) -> None:
        for _, dst, kind, route in (e for e in out.effects[mark:] if e[0] == "direct" and e[2] == "ROUTE"):
            ran("routes")
            require(came_with < route.brocli, "CLM-SR-6",
                    lambda: f"BROCLI of event {eid} did not grow at broker {self.id}: {sorted(came_with)} then {sorted(route.brocli)}")
            require(dst not in route.brocli, "CLM-SR-6",
                    lambda: f"broker {self.id} sent the ROUTE of event {eid} to broker {dst}, already in its BROCLI {sorted(route.brocli)}")


class SummaryRoutingUnderChurn(NetworkMachine):
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
        self.option = option
        for b in range(n):
            for _ in range(data.draw(st.integers(0, 2))):
                self.net.add_client(b)

    def settled(self) -> bool:
        net = self.net
        return net.transport.quiescent() and rounds_of(net).round >= 0 and not any(b.owner_changed() for b in summary_brokers(net).values())

    @precondition(lambda self: self.net.clients)
    @rule(data=st.data(), f=gen.summary_subscriptions())
    def subscribe(self, data, f):
        if f == Subscription():
            census.record("filter:empty")  # the filter every event matches
        self.net.subscribe(data.draw(st.sampled_from(self._clients())), f)

    @precondition(lambda self: len(set(self.net.clients.values())) > 1)
    @rule(data=st.data(), f=gen.summary_subscriptions().filter(lambda f: f != Subscription()))
    def share_a_row_then_delete(self, data, f):
        """Two clients at different brokers take one filter; once the summaries have
        settled, one of them drops it. Its rows held the IDs of two owners, so the
        deletion asks the other owner (DELETE-QUERY): a case random steps reach rarely."""
        net = self.net
        first = data.draw(st.sampled_from(self._clients()))
        second = data.draw(st.sampled_from([c for c in self._clients() if net.clients[c] != net.clients[first]]))
        net.subscribe(first, f)
        net.subscribe(second, f)
        net.run()
        check_settled(net, self.compare_histories)
        net.unsubscribe(data.draw(st.sampled_from((first, second))), f)

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
            require(hops <= len(net.brokers) - 1, "CLM-SR-6", lambda: f"event {eid} took {hops} ROUTE hops among {len(net.brokers)} brokers")

    def teardown(self):
        if hasattr(self, "net"):
            self.net.run()
            check_settled(self.net, self.compare_histories)
            record_cases(self.net)


def record_cases(net: Network) -> None:
    """The census of one run (conformance/runner/census.py): deletions that needed a remote owner's answer
    (DELETE-QUERY sent), networks of one broker, trees with neighbors of equal degree, and events routed past their owners."""
    if net.ledger.sent["DELETE-QUERY"]:
        census.record("delete:owners-answered")
    if len(net.brokers) == 1:
        census.record("net:single-broker")
    graph = model_graph(net)
    if any(graph.degree(a) == graph.degree(b) for a, b in graph.edges):
        census.record("tree:equal-degree-neighbors")
    if net.ledger.sent["ROUTE"]:
        census.record("route:hops")


def subscribing_twice_then_once_unsubscribing() -> None:
    """CLM-SR-6 regression (found by the thorough profile): a client that
    subscribes to a filter twice and unsubscribes once holds nothing; the
    second SUB must not leave a second subscription behind at the owner."""
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
    require(impl_plan_as_model(rounds_of(net).plan) == plan, "CLM-SR-6", "the impl's plan is not the model's")
    for b, broker in summary_brokers(net).items():
        require(broker.merged == plan.merged_brokers[b], "CLM-SR-6",
                lambda: f"broker {b} lists {sorted(broker.merged)}, the model {sorted(plan.merged_brokers[b])}")
        if not compare_histories:
            continue
        reference = summary_brokers(net)[min(broker.merged)].ownership.summary.export()
        for o in sorted(broker.merged - {min(broker.merged)}):
            reference.merge_in(summary_brokers(net)[o].ownership.summary.export())
        history = broker.propagation.history
        got, want = impl_rows(history, _ids(history)), impl_rows(reference, _ids(reference))
        numeric = ("int", "float")
        require({k: v for k, v in got.items() if k[1] in numeric} == {k: v for k, v in want.items() if k[1] in numeric}, "CLM-SR-6",
                lambda: f"broker {b}'s numeric history rows differ from its brokers' summaries")
        require(constraint_sets(got) == constraint_sets(want), "CLM-SR-6", lambda: f"broker {b}'s history row constraints differ")
        require(history.member_ids() == reference.member_ids(), "CLM-SR-6", lambda: f"broker {b}'s history holds other IDs")
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
    ran("publication")
    require(set(got) == owed, "CLM-SR-6", lambda: f"event {eid} reached {sorted(got)}, owed to {sorted(owed)} (missing {sorted(owed - set(got))})")
    require(all(k == 1 for k in got.values()), "CLM-SR-6", lambda: f"event {eid} delivered more than once: {dict(got)}")
    route = ref.brocli_route(model_graph(net), ref.propagation_plan(model_graph(net)), reported, publisher, option)
    require(tuple(rounds_of(net).journeys[eid]) == route.messages, "CLM-SR-6",
            lambda: f"event {eid} went {rounds_of(net).journeys[eid]}, the model sends {list(route.messages)}")


def run_summary_routing_machine(machine: type[SummaryRoutingUnderChurn] = SummaryRoutingUnderChurn, steps: int = 40,
                                shrink: bool = True) -> None:
    """Run the machine under the active profile; shrink only the first
    failure found (or none: a test that plants a bug wants it fast)."""
    phases = settings().phases if shrink else (Phase.explicit, Phase.reuse, Phase.generate)  # the profile's: no `explain`
    run_state_machine_as_test(pinned(machine), settings=settings(stateful_step_count=steps, report_multiple_bugs=False, phases=phases))
