"""Conformance of the reconfiguration protocols on isolated swaps and fixed
cases (claims CLM-RCF-2 .. 6, 8, spec/06-reconfiguration.md): the deferral
window (CLM-RCF-2), timed with timeout 0 against Strawman on a fuzz schedule
(CLM-RCF-3), the FLUSH flood (CLM-RCF-5), held-back subscriptions
(CLM-RCF-6), Strawman's gap (CLM-RCF-8), and the worked examples of leaf
brokers (CLM-RCF-4) and a late FLUSH (CLM-RCF-5). The checks are named
`conformance.checks.network.reconfig.<function>`, as the churn machine's are.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st

from subsum.conformance import strategies as gen
from subsum.conformance.checks.network.checked_brokers import checked_class, model_view
from subsum.conformance.schedules.runs import Run, draw_schedule
from subsum.conformance.checks.network.forwarding import FILTERS, check_tables, model_state
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.runner.violations import listed, require
from subsum.impl.network import PROTOCOLS, Network, build
from subsum.model import network as ref
from subsum.model import reconfiguration as ref_reconfiguration

# --- isolated swaps: CLM-RCF-2, 3 (schedules), 5, 6, 8 -------------------------------------------



@st.composite
def swap_scenarios(draw, max_brokers: int = 8):
    """A quiescent random tree with subscribed clients, one link swap (the
    new link added right after the break), the scheduler's choices, and a
    few events to publish."""
    n = draw(st.integers(3, max_brokers))
    parents = [draw(st.integers(0, i - 1)) for i in range(1, n)]
    clients = [draw(st.integers(0, 2)) for _ in range(n)]
    subscriptions = [draw(st.lists(st.sampled_from(range(len(FILTERS))), max_size=2, unique=True))
                     for _ in range(sum(clients))]
    return {
        "brokers": n, "parents": parents, "clients": clients, "subscriptions": subscriptions,
        "seed": draw(st.integers(0, 2**16)),
        "old": draw(st.integers(0, n - 2)), "pick": (draw(st.integers(0, 2**16)), draw(st.integers(0, 2**16))),
        "choices": draw(st.lists(st.integers(0, 2**16), min_size=1, max_size=300)),
        "events": [(draw(st.integers(0, 2**16)), draw(gen.summary_event_for(FILTERS[draw(st.integers(0, len(FILTERS) - 2))])))
                   for _ in range(draw(st.integers(0, 3)))],
    }


def quiet_network(sc: dict, protocol: str, broker_class=None) -> Network:
    """The scenario's tree, subscribed and run to quiescence."""
    links = [(p, i) for i, p in enumerate(sc["parents"], start=1)]
    net = build(links, sc["brokers"], seed=sc["seed"], protocol=protocol,
                broker_class=broker_class or checked_class(protocol))
    for b, count in enumerate(sc["clients"]):
        for _ in range(count):
            net.add_client(b)
    for c, chosen in zip(sorted(net.clients), sc["subscriptions"]):
        for i in chosen:
            net.subscribe(c, FILTERS[i])
    net.run()
    return net


def scenario_swap(net: Network, sc: dict) -> tuple[tuple[int, int], tuple[int, int]]:
    """The scenario's old link and a new one reconnecting its halves (c on a's side)."""
    a, b = net.broker_links()[sc["old"] % len(net.broker_links())]
    left, right = sorted(net.overlay.side(a, b)), sorted(net.overlay.side(b, a))
    return (a, b), (left[sc["pick"][0] % len(left)], right[sc["pick"][1] % len(right)])


def in_flight(net: Network, kinds: tuple) -> bool:
    return any(kind in kinds for queue in net.transport.links.values() for _, _, kind, _ in queue)


def deferral_window_violation(protocol: str, sc: dict) -> str | None:
    """Run the scenario's swap (a, b) -> (c, d) under `protocol`, messages in
    the order the scenario's choices pick, timers only once the window is
    open (the new link's SUBs have all arrived: no SUB or ACTIVATE in
    flight). Checks, returning the first failure or None:
    (i) at every step, every table holds every route that is ideal both
        before and after the swap, over a link other than the old and the
        new one;
    (ii) once the window is open, every table holds the ideal table of the
        new tree;
    (iii) an event published in the window reaches every ideal subscriber;
    (iv) an event published before it reaches every ideal subscriber in the
        publisher's own half (of the old link)."""
    net = quiet_network(sc, protocol, broker_class=PROTOCOLS[protocol])
    old, new = scenario_swap(net, sc)
    graph, access, filters = model_state(net)
    after = ref.swapped(graph, old, new)
    ideal_after = ref.ideal_tables(after, access, filters)
    cut = {frozenset(old), frozenset(new)}  # routes over these links go down with the old link
    kept = {u: {(v, p) for v, p in routes & ideal_after[u] if frozenset((u, v)) not in cut}
            for u, routes in ref.ideal_tables(graph, access, filters).items()}
    halves = (ref.side_of(graph, old[1], old[0]), ref.side_of(graph, old[0], old[1]))
    net.swap(old, new, gap=0.0)
    clients, events, published = sorted(net.clients), list(sc["events"]), []
    window, choices = False, iter(sc["choices"])
    while True:
        if not window and not in_flight(net, ("SUB", "ACTIVATE")):
            window = True
        for u, broker in net.brokers.items():
            missing = (ideal_after[u] if window else kept[u]) - broker.entries()
            if missing:
                what = "of the new tree, in the window" if window else "kept by the swap"
                return f"broker {u}: routes {what} missing: {listed(missing, 2)} (t={net.now:.1f})"
        if events and clients:
            pick, event = events.pop(0)
            client = clients[pick % len(clients)]
            want = ref.ideal_delivery(after, access, filters, client, event)
            if not window:
                half = next(h for h in halves if access[client] in h)
                want = {c for c in want if access[c] in half}
            published.append((net.publish(client, event), want, window))
        pending = net.transport.pending_links()
        if pending:
            net.transport.deliver_from(pending[next(choices, 0) % len(pending)])
        elif window and net.transport.pending_timers():
            net.transport.fire(net.transport.pending_timers()[0])
        else:
            break
    for eid, want, in_window in published:
        lost = want - set(net.ledger.deliveries[eid])
        if lost:
            return f"event {eid}, published {'in' if in_window else 'before'} the window, never reached {sorted(lost)}"
    return None


@property_check(st.sampled_from(("timed", "notified", "informed")), swap_scenarios())
def deferral_window_keeps_every_route(protocol, sc):
    """CLM-RCF-2: with deferred UNSUBs, no route the swap keeps is ever
    missing, no ideal route is missing once the new link's SUBs have
    arrived, and events are lost only across the cut before that."""
    problem = deferral_window_violation(protocol, sc)
    require(problem is None, "CLM-RCF-2", lambda: f"({protocol}) {problem}")


def strawman_has_a_routing_gap() -> None:
    """CLM-RCF-8: Strawman does not keep CLM-RCF-2: Hypothesis finds an
    isolated swap where its UNSUB wave deletes a route that is ideal both
    before and after the swap (to be re-added by the SUB wave), and the
    deferred protocols keep every route on that same schedule."""
    example = find(swap_scenarios(), lambda sc: deferral_window_violation("strawman", sc) is not None,
                   settings=settings(max_examples=3000, database=None, derandomize=True,
                                     suppress_health_check=list(HealthCheck)))
    problem = deferral_window_violation("strawman", example)
    assert problem is not None
    # the same schedule under each deferred protocol keeps every route
    for protocol in ("timed", "notified", "informed"):
        problem = deferral_window_violation(protocol, example)
        require(problem is None, "CLM-RCF-2", lambda: f"({protocol}) on Strawman's gap: {problem}")


@property_check(st.sampled_from(("notified", "informed")), swap_scenarios(), st.integers(0, 2**16))
def unknown_flush_floods_once_and_dies(protocol, sc, pick):
    """CLM-RCF-5: a FLUSH whose rid no broker knows, sent from m to u, is
    handled exactly once by every broker on u's side of (m, u), changes no
    table, and the network is quiescent again."""
    net = quiet_network(sc, protocol)
    links = net.broker_links()
    m, u = links[pick % len(links)][::1 if pick % 2 else -1]
    before = net.tables()
    journal = net.keep_journal()
    net.send(m, u, "FLUSH", 10**9)
    net.run()
    handled = Counter(entry[2] for entry in journal if entry[0] == "handled" and entry[3] == "FLUSH")
    side = net.overlay.side(u, m)
    require(set(handled) == side and set(handled.values()) == {1}, "CLM-RCF-5",
            lambda: f"FLUSH from {m} to {u} handled {dict(handled)}, expected once at each of {sorted(side)}")
    require(net.tables() == before, "CLM-RCF-5", "an unknown FLUSH changed a table")
    require(net.transport.quiescent(), "CLM-RCF-5", "the FLUSH flood did not die out")


@property_check(swap_scenarios())
def held_back_subscriptions_wait_for_the_timer(sc):
    """CLM-RCF-6: in an isolated swap (a, b) -> (c, d) with informed link
    activation, no SUB(p) for p in P_a (the filters only b subscribed at a)
    crosses c -> d, nor p in P_b crosses d -> c, before subTimer fires; and
    the tables end ideal."""
    net = quiet_network(sc, "informed")
    (a, b), (c, d) = scenario_swap(net, sc)
    held = {(c, d): ref_reconfiguration.only_subscribed_by(model_view(net.brokers[a]), b),
            (d, c): ref_reconfiguration.only_subscribed_by(model_view(net.brokers[b]), a)}
    journal = net.keep_journal()
    net.swap((a, b), (c, d), gap=0.0)
    choices = iter(sc["choices"])
    while net.transport.pending_links():  # every message, no timer
        pending = net.transport.pending_links()
        net.transport.deliver_from(pending[next(choices, 0) % len(pending)])
    early = [(src, effect[1], effect[3]) for what, src, effect in (e for e in journal if e[0] == "wrote")
             if effect[0] == "send" and effect[2] == "SUB" and effect[3] in held.get((src, effect[1]), ())]
    require(not early, "CLM-RCF-6", lambda: f"held-back SUBs crossed the new link before subTimer: {early[:2]}")
    net.run()
    check_tables(net)


def _run_schedule(protocol: str, defer: float, topo: dict, seed: int, schedule: list[dict]):
    run = Run(topo, seed, protocol=protocol, defer_timeout=defer, checked=False)
    journal = run.net.keep_journal()
    for op in schedule + [{"op": "quiesce"}]:
        run.apply(op)
    net = run.net
    sent = [(src, effect[1], effect[2], repr(effect[3])) for what, src, effect in (e for e in journal if e[0] == "wrote") if effect[0] == "send"]
    return net.tables(), dict(net.ledger.sent), dict(net.ledger.handled), {e: dict(c) for e, c in net.ledger.deliveries.items()}, sent


@property_check(st.integers(0, 2**16), st.integers(3, 7), st.sampled_from((0.1, 0.3)))
def timed_with_timeout_zero_is_strawman(seed, brokers, churn):
    """CLM-RCF-3: the same schedule (a fuzz schedule: client operations,
    deliveries in a chosen order, swaps, breaks, adds, crashes, joins)
    under Strawman and under timed deferral with timeout 0 gives the same
    tables, the same message counts, the same deliveries and the same
    sequence of messages sent."""
    topo, schedule = draw_schedule(seed, brokers=brokers, churn=churn, steps=40)
    straw = _run_schedule("strawman", 3000.0, topo, seed, schedule)
    timed = _run_schedule("timed", 0.0, topo, seed, schedule)
    for name, x, y in zip(("tables", "messages sent", "messages handled", "deliveries", "message sequence"), straw, timed):
        require(x == y, "CLM-RCF-3", f"timed deferral with timeout 0 differs from Strawman in {name}")


# --- worked examples -------------------------------------------------------------------------------

def leaf_brokers_start_no_timer() -> None:
    """CLM-RCF-4, on the path 0 - 1 - 2 with a subscriber at 2: when (1, 2)
    breaks, broker 2 (a leaf now) drops broker 1's filters with no timer,
    while broker 1 (still linked to 0) defers its UNSUB under a timer; after
    the timer, every table is ideal."""
    for protocol in ("timed", "notified", "informed"):
        net = build([(0, 1), (1, 2)], 3, protocol=protocol, broker_class=checked_class(protocol))
        subscriber, other = net.add_client(2), net.add_client(0)
        net.subscribe(subscriber, FILTERS[0])
        net.subscribe(other, FILTERS[1])
        net.run()
        net.disconnect(1, 2)
        assert net.ledger.timers_started[2] == 0, f"{protocol}: leaf broker 2 started a timer"
        assert net.ledger.timers_started[1] == 1, f"{protocol}: broker 1 should defer under one timer, started {net.ledger.timers_started[1]}"
        assert (1, FILTERS[1]) not in net.brokers[2].entries(), f"{protocol}: the leaf kept its entry for the broken link"
        assert (1, FILTERS[0]) in net.brokers[0].entries(), f"{protocol}: broker 0 lost its route before the timer"
        net.run()
        check_tables(net)


def late_flush_is_passed_on() -> None:
    """CLM-RCF-5, on the path 0 - 1 - 2 - 3: the link (1, 2) is swapped for
    (0, 3); broker 1's timer fires before the FLUSH from 0 reaches it, so
    that FLUSH is unknown at 1 and goes on to nobody but 1's other broker
    neighbors (none): it changes nothing and dies. The tables end ideal."""
    for protocol in ("notified", "informed"):
        net = build([(0, 1), (1, 2), (2, 3)], 4, protocol=protocol, broker_class=checked_class(protocol), defer_timeout=3000.0)
        subscriber = net.add_client(3)
        net.subscribe(subscriber, FILTERS[0])
        net.run()
        net.swap((1, 2), (0, 3))
        for timer in list(net.transport.pending_timers()):
            net.transport.fire(timer)  # every timer fires first: the FLUSHes all come late
        before = net.ledger.handled["FLUSH"]
        net.run()
        assert net.ledger.handled["FLUSH"] > before, f"{protocol}: no FLUSH was handled"
        assert not any(b.unsub_timers for b in net.brokers.values()), f"{protocol}: a task survived"
        check_tables(net)
