"""Conformance of the broker network (subsum.impl.network) with the model's
ideal routing state (subsum.model.network) and plain handlers
(subsum.model.strawman): the checks every simulator run shares (overlay,
tables, delivery), the rules every machine over the simulator shares
(`NetworkMachine`), the Strawman state machine under churn and its
differential twin (whose brokers are conformance/checks/network/checked_brokers.py's), and
model properties (claims CLM-NET-*, spec/05-network.md)."""

from __future__ import annotations

import functools

import networkx as nx
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from subsum.conformance.schedules.declared import ran
from subsum.conformance.runner.profiles import pinned
from subsum.conformance.runner import census
from subsum.conformance import strategies as gen
from subsum.conformance.checks.network.checked_brokers import CheckedBroker
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.runner.violations import ClaimViolation, listed, require
from subsum.core.filters import parse_filter
from subsum.core.types import Subscription, subscription_sort_key
from subsum.impl.network import CLIENT_BASE, StrawmanBroker, Network, build
from subsum.model import network as ref
from subsum.model.semantics import matches

#: A small pool of filters, so that subscribers of one filter meet often (the first-, second- and
#: last-subscriber rules all fire). The fuzzer draws from it with `random.choice` (its order pins the fuzz
#: schedules, tests/test_pinned_runs.py) and fixed cases index it; the empty filter is last.
FILTERS = tuple(parse_filter(t) for t in (
    "x > 0", "x < 2", "x = 1", 's prefix "a"', 's = "ab" and x > 0', 'b = true',
)) + (Subscription(),)
#: The same filters for the state machines, the empty filter first: Hypothesis draws a list's first entry most
#: often, and the floors ask for the empty filter.
MACHINE_FILTERS = FILTERS[-1:] + FILTERS[:-1]


@functools.lru_cache(maxsize=4096)
def _overlay(brokers: tuple[int, ...], links: tuple[tuple[int, int], ...]) -> nx.Graph:
    """The model's overlay (DEF-NET-1, asserting a forest), built once per
    brokers and links: the fuzzer checks it after every operation, and most
    operations leave the links as they were. Frozen, since callers share it."""
    return nx.freeze(ref.overlay(brokers, links))


def overlay_of(net: Network) -> nx.Graph:
    return _overlay(tuple(net.brokers), tuple(net.broker_links()))


@functools.lru_cache(maxsize=65536)
def _side(graph: nx.Graph, u: int, v: int) -> frozenset[int]:
    """The model's `side_of` in one of `_overlay`'s frozen graphs, computed once per graph and link: the
    filters change at most steps, the links at few, and the side depends on the links only."""
    assert nx.is_frozen(graph), "only a frozen graph's sides can be remembered"
    return frozenset(ref.side_of(graph, u, v))


@functools.lru_cache(maxsize=64)
def _ideal_tables(brokers: tuple[int, ...], links: tuple[tuple[int, int], ...], access: frozenset, filters: frozenset) -> dict:
    """The model's ideal tables (DEF-NET-3) of one state of the overlay and the clients, computed once per state."""
    return ref.ideal_tables(_overlay(brokers, links), dict(access), dict(filters), side=_side)


def model_state(net: Network):
    filters = {c: frozenset(fs) for c, fs in net.client_filters.items()}
    return overlay_of(net), dict(net.clients), filters


def ideal_tables_of(net: Network) -> dict:
    """The ideal tables of the network's current overlay, clients and filters (to compare, not to change)."""
    filters = frozenset((c, frozenset(fs)) for c, fs in net.client_filters.items())
    return _ideal_tables(tuple(net.brokers), tuple(net.broker_links()), frozenset(net.clients.items()), filters)


def check_overlay(net: Network) -> None:
    """DEF-NET-1: the broker links form a forest; neighbor sets are symmetric;
    every client's access broker lists it; links and neighbor sets agree.
    Each part is one comparison of sets (the fuzzer runs it after every
    operation); a violation names the smallest pair that breaks it."""
    try:
        graph = overlay_of(net)  # asserts a forest
    except AssertionError as exc:
        raise ClaimViolation("CLM-NET-1", str(exc)) from None
    neighbor_pairs = [(b, m) for b, broker in net.brokers.items() for m in broker.neighbors]
    links = {(b, m) for b, m in neighbor_pairs if m < CLIENT_BASE}
    clients_listed = {(m, b) for b, m in neighbor_pairs if m >= CLIENT_BASE}  # (client, the broker listing it)
    wrong_clients = clients_listed - net.clients.items()
    require(not wrong_clients, "CLM-NET-1", lambda: "broker {1} lists client {0}, attached to {2}".format(
        *min(wrong_clients), net.clients.get(min(wrong_clients)[0])))
    one_way = links - {(m, b) for b, m in links}
    require(not one_way, "CLM-NET-1", lambda: "{0} lists {1} but {1} does not list {0}".format(*min(one_way)))
    unlinked = links - _directed_links(graph)
    require(not unlinked, "CLM-NET-1", lambda: "{0} and {1} are neighbors without a link".format(*min(unlinked)))
    unlisted = net.clients.items() - clients_listed
    require(not unlisted, "CLM-NET-1", lambda: "client {0} is not a neighbor of its broker {1}".format(*min(unlisted)))


@functools.lru_cache(maxsize=4096)
def _directed_links(graph: nx.Graph) -> frozenset[tuple[int, int]]:
    """Both directions of every link of one of `_overlay`'s frozen graphs."""
    return frozenset(graph.edges) | frozenset((v, u) for u, v in graph.edges)


def check_tables(net: Network, claim: str = "CLM-NET-2") -> None:
    """CLM-NET-2: every table equals the ideal oracle (after churn under a
    reconfiguration protocol, that is CLM-RCF-1: name it as `claim`)."""
    ideal = ideal_tables_of(net)
    got = net.tables()
    for b in sorted(ideal):
        require(got[b] == ideal[b], claim,
                lambda: f"broker {b}: missing {listed(ideal[b] - got[b], 3)}, extra {listed(got[b] - ideal[b], 3)}")


def publish_and_check(net: Network, client: int, event, static: bool) -> None:
    """Publish; in a quiescent static state also run to quiescence and check
    CLM-NET-3: exactly the ideal set, once each, over needed links only.
    (Losses and duplicates are allowed during reconfiguration.)"""
    if not (net.transport.quiescent() and static):
        net.publish(client, event)
        return
    graph, access, filters = model_state(net)
    eid = net.publish(client, event)
    net.run()
    want = ref.ideal_delivery(graph, access, filters, client, event)
    got = net.ledger.deliveries[eid]
    ran("publication")
    require(set(got) == want, "CLM-NET-3", lambda: f"event {eid} delivered to {sorted(got)}, ideal {sorted(want)}")
    require(all(n == 1 for n in got.values()), "CLM-NET-3", lambda: f"event {eid} delivered more than once: {dict(got)}")
    for u, v in net.ledger.crossings[eid]:
        beyond = ref.filters_at(_side(graph, u, v), access, filters)
        require(any(matches(f, event) for f in beyond), "CLM-NET-3", lambda: f"event {eid} crossed {u}->{v} with no matching subscriber beyond")


class NetworkMachine(RuleBasedStateMachine):
    """The rules every state machine over the simulator shares: a client
    unsubscribes from a filter it holds, and Hypothesis picks which links
    deliver next, up to 8 messages at a time. A subclass builds `self.net`
    in its `initialize` rule and adds its own subscribe and publish rules."""

    net: Network

    def _clients(self):
        return sorted(self.net.clients)

    @precondition(lambda self: any(self.net.client_filters.values()))
    @rule(data=st.data())
    def unsubscribe(self, data):
        client = data.draw(st.sampled_from([c for c in self._clients() if self.net.client_filters[c]]))
        f = data.draw(st.sampled_from(sorted(self.net.client_filters[client], key=subscription_sort_key)))
        self.net.unsubscribe(client, f)

    @precondition(lambda self: self.net.transport.pending_links())
    @rule(data=st.data(), k=st.integers(1, 8))
    def deliver(self, data, k):
        for _ in range(k):
            links = self.net.transport.pending_links()
            if not links:
                return
            self.net.transport.deliver_from(data.draw(st.sampled_from(links)))


class StrawmanUnderChurn(NetworkMachine):
    """Clients subscribe, unsubscribe and publish; Hypothesis picks which link
    delivers next; the overlay swaps, breaks and adds links, and brokers
    crash, join and leave."""

    broker_class = StrawmanBroker
    convergence_claim = "CLM-NET-2"  # what check_tables speaks for after quiescence

    @initialize(n=st.integers(1, 7), seed=st.integers(0, 2**16), data=st.data())
    def start(self, n, seed, data):
        parents = [data.draw(st.integers(0, i - 1)) for i in range(1, n)]
        self.net = build([(p, i) for i, p in enumerate(parents, start=1)], n, seed=seed, broker_class=self.broker_class)
        for b in range(n):
            for _ in range(data.draw(st.integers(0, 2))):
                self.net.add_client(b)
        self.static = True  # no churn since the last quiescence

    @precondition(lambda self: self.net.clients)
    @rule(data=st.data(), f=st.sampled_from(MACHINE_FILTERS))
    def subscribe(self, data, f):
        if f == Subscription():
            census.record("filter:empty")  # the filter every event matches
        self.net.subscribe(data.draw(st.sampled_from(self._clients())), f)

    @precondition(lambda self: len(self.net.clients) >= 3)
    @rule(f=st.sampled_from(MACHINE_FILTERS))
    def everyone_subscribes(self, f):
        """Every client takes one filter: brokers then hold it for several neighbors (DEF-NET-6's later
        subscriptions, and unsubscriptions that leave several), which single subscriptions reach rarely."""
        if f == Subscription():
            census.record("filter:empty")
        for client in self._clients():
            self.net.subscribe(client, f)

    @precondition(lambda self: self.net.clients)
    @rule(data=st.data())
    def publish(self, data):
        net = self.net
        client = data.draw(st.sampled_from(self._clients()))
        source = data.draw(st.sampled_from(MACHINE_FILTERS))
        event = data.draw(gen.summary_event_for(source))
        publish_and_check(net, client, event, self.static)

    def _churn(self):
        self.static = False

    @precondition(lambda self: self.net.broker_links())
    @rule(data=st.data(), lose=st.booleans())
    def swap(self, data, lose):
        net = self.net
        a, b = data.draw(st.sampled_from(net.broker_links()))
        net.disconnect(a, b, lose_in_flight=lose)
        c = data.draw(st.sampled_from(sorted(net.overlay.component(a))))
        d = data.draw(st.sampled_from(sorted(net.overlay.component(b))))
        net.connect(c, d)
        self._churn()

    @precondition(lambda self: self.net.broker_links())
    @rule(data=st.data(), lose=st.booleans())
    def break_link(self, data, lose):
        self.net.disconnect(*data.draw(st.sampled_from(self.net.broker_links())), lose_in_flight=lose)
        self._churn()

    @precondition(lambda self: len({min(self.net.overlay.component(b)) for b in self.net.brokers}) > 1)
    @rule(data=st.data())
    def add_link(self, data):
        net = self.net
        a = data.draw(st.sampled_from(sorted(net.brokers)))
        others = sorted(set(net.brokers) - net.overlay.component(a))
        net.connect(a, data.draw(st.sampled_from(others)))
        self._churn()

    @precondition(lambda self: len(self.net.brokers) > 1)
    @rule(data=st.data(), graceful=st.booleans(), lose=st.booleans())
    def crash_or_leave(self, data, graceful, lose):
        self.net.crash(data.draw(st.sampled_from(sorted(self.net.brokers))), graceful=graceful, lose_in_flight=lose)
        self._churn()

    @precondition(lambda self: len(self.net.brokers) < 9)
    @rule(data=st.data(), clients=st.integers(0, 2))
    def join(self, data, clients):
        b = self.net.join(data.draw(st.sampled_from(sorted(self.net.brokers))))
        for _ in range(clients):
            self.net.add_client(b)
        self._churn()

    @rule()
    def quiesce(self):
        self.net.run()
        check_tables(self.net, self.convergence_claim)
        if len(self.net.brokers) == 1:
            census.record("net:single-broker")  # the tables checked on a network of one broker
        self.static = True

    @invariant()
    def overlay_is_a_forest_with_symmetric_neighbors(self):
        check_overlay(self.net)

    @invariant()
    def no_control_message_reaches_a_client(self):
        # The simulator's own counter; StrawmanDifferential also reads every message sent (CLM-NET-4).
        require(not self.net.ledger.violations, "CLM-NET-4", lambda: f"the simulator counted {dict(self.net.ledger.violations)}")

    def teardown(self):
        if hasattr(self, "net"):
            self.net.run()
            check_tables(self.net, self.convergence_claim)


#: The edges every network machine must reach under `ci` (census tags): a network of one broker, the empty filter.
EDGE_FLOORS = {"net:single-broker": 5, "filter:empty": 5}


def run_strawman_state_machine() -> None:
    run_state_machine_as_test(pinned(StrawmanUnderChurn), settings=settings(stateful_step_count=40))


# --- CLM-NET-6: every impl handler equals the model's plain handler (conformance/checks/network/checked_brokers.py) ---

#: The rules of DEF-NET-6 and DEF-NET-7 the differential machine must fire under `ci` (census tags).
HANDLER_FLOORS = {
    **EDGE_FLOORS, "SUB:first": 20, "SUB:second-to-broker": 5, "SUB:second-to-client": 5, "SUB:later": 1, "SUB:repeat": 5, "SUB:stale": 3,
    "UNSUB:last": 20, "UNSUB:single-remaining-broker": 3, "UNSUB:single-remaining-client": 3, "UNSUB:several-remaining": 1,
    "UNSUB:stale": 1, "REMOVE-LINK:with-entries": 5, "REMOVE-LINK:no-entries": 5, "ADD-LINK:broker": 5, "ADD-LINK:client": 5,
    "EVENT:forwarded": 1, "EVENT:dropped": 5,
}


class StrawmanDifferential(StrawmanUnderChurn):
    """CLM-NET-6: the same churn, every handler checked against the model's."""

    broker_class = CheckedBroker


def run_differential_state_machine() -> None:
    run_state_machine_as_test(pinned(StrawmanDifferential), settings=settings(stateful_step_count=40))


# --- model claims ----------------------------------------------------------------------------

@st.composite
def swap_cases(draw):
    """A random tree with clients and filters, a link to break and a link that reconnects the halves."""
    n = draw(st.integers(2, 12))
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((draw(st.integers(0, i - 1)), i) for i in range(1, n))
    access, filters = {}, {}
    for c in range(CLIENT_BASE, CLIENT_BASE + draw(st.integers(0, 2 * n))):
        access[c] = draw(st.integers(0, n - 1))
        filters[c] = frozenset(draw(st.sets(st.sampled_from(MACHINE_FILTERS), max_size=2)))
    old = draw(st.sampled_from(sorted(graph.edges)))
    cut = graph.copy()
    cut.remove_edge(*old)
    left, right = nx.node_connected_component(cut, old[0]), nx.node_connected_component(cut, old[1])
    new = (draw(st.sampled_from(sorted(left))), draw(st.sampled_from(sorted(right))))
    return graph, access, filters, old, new


@property_check(swap_cases())
def ideal_changes_only_on_the_reconfiguration_path(case):
    """CLM-NET-5: the ideal tables before and after a link swap differ only
    in entries (u, v, p) where (u, v) is the old link or a link of the
    reconfiguration path (seed 002 §3.4, Observation 3)."""
    graph, access, filters, old, new = case
    before = ref.ideal_tables(graph, access, filters)
    after_graph = ref.swapped(graph, old, new)
    after = ref.ideal_tables(after_graph, access, filters)
    path = ref.reconfiguration_path(graph, old, new)
    assert path[0] == min(old) and path[-1] == max(old) and set(new) <= set(path), (path, old, new)
    allowed = {frozenset(old)} | {frozenset(pair) for pair in zip(path, path[1:])}
    for u in graph.nodes:
        for v, p in before[u] ^ after[u]:
            if v < CLIENT_BASE:
                assert frozenset((u, v)) in allowed, f"entry ({u}, {v}, {p}) changed off the path {path}"


def stale_messages_from_former_neighbors_are_ignored() -> None:
    """CLM-NET-7: a queued UNSUB for an (n, p) that removeLinkTo already
    dropped changes nothing and sends nothing; a queued SUB from a former
    neighbor adds nothing. Every handler is also checked against the model."""
    p = FILTERS[0]
    net = build([(0, 1), (1, 2)], 3, seed=0, broker_class=CheckedBroker)
    c0, c2 = net.add_client(0), net.add_client(2)
    net.subscribe(c0, p)
    net.subscribe(c2, p)
    net.run()
    unsubs_before = net.ledger.sent["UNSUB"]
    net.unsubscribe(c0, p)  # broker 0's last other subscriber is broker 1: UNSUB(p) to 1
    assert net.transport.pending_links() == [(0, 1)]
    net.disconnect(0, 1, lose_in_flight=False)  # ... already in broker 1's inbound queue
    net.run()  # broker 1 handles UNSUB(p) from 0, no longer a neighbor
    assert net.ledger.sent["UNSUB"] - unsubs_before == 2, dict(net.ledger.sent)  # 0 -> 1, and 1 -> 2 on removeLinkTo(0)
    assert net.ledger.handled["UNSUB"] - unsubs_before == 2
    check_tables(net)
    assert net.tables()[1] == {(2, p)} and net.tables()[2] == {(c2, p)}  # c2 still subscribes, on 1's side
    # A SUB still queued when its link breaks adds nothing at the receiver.
    net = build([(0, 1)], 2, seed=0, broker_class=CheckedBroker)
    c0 = net.add_client(0)
    net.subscribe(c0, p)
    assert net.transport.pending_links() == [(0, 1)]
    net.disconnect(0, 1, lose_in_flight=False)
    net.run()
    assert net.ledger.handled["SUB"] == 1 and net.tables()[1] == set()
    check_tables(net)
