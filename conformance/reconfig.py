"""Conformance of the optimized reconfiguration protocols
(subsum.impl.network.protocols) with the model (subsum.model.network,
subsum.model.reconfiguration): claims CLM-RCF-*, spec/06-reconfiguration.md.

- `checked_class(protocol)`: a broker class that runs every protocol step
  beside the model's plain step (CLM-RCF-7), and checks that leaf brokers
  start no timer (CLM-RCF-4) and that a FLUSH it holds no task for is only
  passed on (CLM-RCF-5). The Strawman handlers underneath are checked by
  `CheckedBroker` (CLM-NET-6).
- `ReconfigUnderChurn`: the churn state machine of CLM-NET-2 with the
  protocol's swaps and crashes, timers Hypothesis may fire at any moment
  (any timeout), lost FLUSH messages, and re-links of a pair that just
  broke (CLM-RCF-1).
- Properties for isolated swaps: the deferral window (CLM-RCF-2), timed
  with timeout 0 against Strawman (CLM-RCF-3), the FLUSH flood (CLM-RCF-5),
  held-back subscriptions (CLM-RCF-6), and Strawman's gap (CLM-RCF-8).
"""

from __future__ import annotations

import functools
from collections import Counter
from contextlib import contextmanager

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule, run_state_machine_as_test

from subsum.conformance import census
from subsum.conformance import strategies as gen
from subsum.conformance.network import (FILTERS, CheckedBroker, StrawmanUnderChurn, check_no_control_message_to_a_client, check_tables,
                                         model_state, model_view,
                                         patched)
from subsum.conformance.properties import property_check
from subsum.conformance.violations import require
from subsum.impl.network import PROTOCOLS, Network, NetworkError, StrawmanBroker, broker_class_for, build, is_forwarding
from subsum.impl.network.protocols.deferred import TimedBroker
from subsum.impl.network.protocols.informed import InformedBroker
from subsum.model import network as ref
from subsum.model import reconfiguration as ref_reconfiguration

#: Timeouts drawn by the state machine (ms; links take 1-10 ms): 0 is
#: Strawman, 0.5 fires before any message, 5 in the middle of a wave, 3000
#: after everything. Hypothesis can also fire any timer at any moment.
DEFER_TIMEOUTS = (0.0, 0.5, 5.0, 3000.0)
SUB_TIMEOUTS = (0.5, 5.0, 5000.0)


@contextmanager
def captured_sends(net: Network, sender: int | None = None):
    """Collect (dst, kind, payload) of every tree message sent inside the
    block; with `sender`, then check that none went to a client (CLM-NET-4)."""
    sent: list = []
    original = net.send
    with patched(net, "send", lambda src, dst, kind, payload: (sent.append((dst, kind, payload)), original(src, dst, kind, payload))):
        yield sent
    if sender is not None:
        check_no_control_message_to_a_client(sender, sent)


def same_messages(got: list, want: list) -> bool:
    return Counter(map(repr, got)) == Counter(map(repr, want))


class ProtocolChecks:
    """Mixin over a protocol broker class (with `CheckedBroker` in between):
    every protocol step is compared with the model's (CLM-RCF-7)."""

    def manage_removed_link(self, n, rid):
        if self.net.defer_timeout <= 0:
            census.record("TIMED:timeout-zero")
            super().manage_removed_link(n, rid)  # Strawman's removeLinkTo, checked by CheckedBroker
            return
        state = model_view(self)
        census.record("TIMED:leaf-no-timer" if ref_reconfiguration.is_leaf_without(state, n) else "TIMED:deferred")
        want_state, want_deferred = ref_reconfiguration.deferred_removal(state, n)
        waiting_before = set(self.waiting.get(rid, ()))
        timers_before = self.net.ledger.timers_started[self.id]
        with captured_sends(self.net, self.id) as sent:
            super().manage_removed_link(n, rid)
        got = model_view(self)
        require(not sent, "CLM-RCF-7", lambda: f"broker {self.id} sent {sent} while deferring the link to {n}")
        require(got.table == want_state.table and got.neighbors == want_state.neighbors, "CLM-RCF-7",
                lambda: f"broker {self.id} deferring the link to {n}: table differs from the model")
        deferred = set(self.waiting.get(rid, ())) - waiting_before
        require(deferred == set(want_deferred), "CLM-RCF-7",
                lambda: f"broker {self.id} deferred {sorted(map(repr, deferred))}, the model {sorted(map(repr, want_deferred))}")
        if ref_reconfiguration.is_leaf_without(state, n):
            require(self.net.ledger.timers_started[self.id] == timers_before, "CLM-RCF-4",
                    lambda: f"leaf broker {self.id} started a timer when its link to {n} broke")

    def unsub_timer_expired(self, rid):
        if self.net.brokers.get(self.id) is not self:
            super().unsub_timer_expired(rid)
            return
        census.record("TIMED:timer-expired")
        state, want = model_view(self), []
        for n, p in self.waiting.get(rid, ()):
            state, sent = ref_reconfiguration.deferred_unsubscribe(state, n, p)
            want += sent
        with captured_sends(self.net, self.id) as sent:
            super().unsub_timer_expired(rid)
        got = model_view(self)
        require(got.table == state.table, "CLM-RCF-7", lambda: f"broker {self.id} deferred UNSUBs of {rid}: table differs from the model")
        require(same_messages(sent, want), "CLM-RCF-7",
                lambda: f"broker {self.id} deferred UNSUBs of {rid}: sent {sorted(map(repr, sent))}, the model sends {sorted(map(repr, want))}")

    def flush_received(self, m, rid):
        if rid in self.unsub_timers:
            census.record("FLUSH:acted-on")
            super().flush_received(m, rid)  # acted on: the deferred UNSUBs, checked above
            return
        census.record("FLUSH:passed-on")
        state = model_view(self)
        with captured_sends(self.net, self.id) as sent:
            super().flush_received(m, rid)
        require(model_view(self).table == state.table, "CLM-RCF-5",
                lambda: f"broker {self.id} changed its table on FLUSH({rid}) it holds no task for")
        want = [(k, "FLUSH", rid) for k in ref_reconfiguration.flush_forward(state, m)]
        require(same_messages(sent, want), "CLM-RCF-5", lambda: f"broker {self.id} passed FLUSH({rid}) from {m} on as {sent}, expected {want}")


class InformedChecks(ProtocolChecks):
    """The informed steps against the model: P, the activation, the release."""

    def link_removed(self, o, rid=None, replacement=None):
        if rid is not None and replacement is not None:
            state = model_view(self)
            self._expect = (ref_reconfiguration.only_subscribed_by(state, o), ref_reconfiguration.announced_to(state, o))
        super().link_removed(o, rid, replacement)

    def activate_received(self, m, activation):
        held = activation.held
        census.record("ACTIVATE:received")
        expected = getattr(self, "_expect", None)
        if m == self.id and expected is not None:
            require(held == expected[0], "CLM-RCF-7",
                    lambda: f"broker {self.id} computed P = {sorted(map(repr, held))}, the model {sorted(map(repr, expected[0]))}")
        super().activate_received(m, activation)

    def activate(self, rid, held, n):
        want, want_held = ref_reconfiguration.activation(model_view(self), n, held)
        census.record("ACTIVATE:holds-back" if want_held else "ACTIVATE:holds-nothing")
        with captured_sends(self.net, self.id) as sent:
            super().activate(rid, held, n)
        require(same_messages(sent, want + [(n, "FLUSH", rid)]), "CLM-RCF-7",
                lambda: f"broker {self.id} activating the link to {n}: sent {sorted(map(repr, sent))}, the model {sorted(map(repr, want))} and FLUSH")
        got_held = frozenset(self.tagged[rid][1]) if rid in self.tagged else frozenset()
        require(got_held == want_held, "CLM-RCF-7",
                lambda: f"broker {self.id} held back {sorted(map(repr, got_held))}, the model {sorted(map(repr, want_held))}")

    def sub_timer_expired(self, rid):
        if self.net.brokers.get(self.id) is not self:
            super().sub_timer_expired(rid)
            return
        n, tagged = self.tagged[rid]
        census.record("INFORMED:sub-timer-expired")
        want = ref_reconfiguration.released(model_view(self), n, frozenset(tagged))
        with captured_sends(self.net, self.id) as sent:
            super().sub_timer_expired(rid)
        require(same_messages(sent, want), "CLM-RCF-7",
                lambda: f"broker {self.id} released {sorted(map(repr, sent))} to {n}, the model {sorted(map(repr, want))}")


def checked_class(protocol: str) -> type:
    """The protocol's broker class with every step checked against the model.
    `protocol` is a registered name or a plug-in (`broker_class_for`); it must
    be of the subscription-forwarding family (`is_forwarding`). A Strawman
    subclass gets the Strawman handler checks (CLM-NET-6); a subclass of the
    timed, notified or informed broker also gets that protocol's checks."""
    base = broker_class_for(protocol)
    if not is_forwarding(base):
        raise NetworkError(f"protocol {protocol!r} ({base.__qualname__}) is not of the subscription-forwarding family whose "
                           "steps the model describes: subclass subsum.impl.network.StrawmanBroker (or TimedBroker, NotifiedBroker, "
                           "InformedBroker) and keep its `table`")
    return _checked(base)


@functools.cache
def _checked(base: type) -> type:
    if base is StrawmanBroker:
        return CheckedBroker
    if issubclass(base, InformedBroker):
        return type(f"Checked{base.__name__}", (InformedChecks, CheckedBroker, base), {})
    if issubclass(base, TimedBroker):
        return type(f"Checked{base.__name__}", (ProtocolChecks, CheckedBroker, base), {})
    return type(f"Checked{base.__name__}", (CheckedBroker, base), {})


# --- CLM-RCF-1: eventual convergence under churn, every protocol --------------------------------

class ReconfigUnderChurn(StrawmanUnderChurn):
    """CLM-NET-2's machine with a protocol: swaps and crashes carry
    reconfiguration ids, timers fire when Hypothesis says, FLUSH messages
    may be lost, and a pair that just broke may be linked again."""

    protocol = "timed"
    convergence_claim = "CLM-RCF-1"

    @initialize(n=st.integers(2, 7), seed=st.integers(0, 2**16),
                defer=st.one_of(st.just(3000.0), st.sampled_from(DEFER_TIMEOUTS)),
                sub=st.sampled_from(SUB_TIMEOUTS), data=st.data())
    def start(self, n, seed, defer, sub, data):
        """A random tree, 0-2 clients per broker, each subscribed to 0-2
        filters of the pool, run to quiescence: reconfigurations then have
        routes to defer. Half the runs use the default timeout (3000 ms,
        after every message), so FLUSH usually arrives before the timer."""
        parents = [data.draw(st.integers(0, i - 1)) for i in range(1, n)]
        self.net = build([(p, i) for i, p in enumerate(parents, start=1)], n, seed=seed, protocol=self.protocol,
                         broker_class=checked_class(self.protocol), defer_timeout=defer, sub_timeout=sub)
        for b in range(n):
            for _ in range(data.draw(st.integers(0, 2))):
                self.net.add_client(b)
        for c in self._clients():
            for f in data.draw(st.lists(st.sampled_from(FILTERS), max_size=2, unique=True)):
                self.net.subscribe(c, f)
        self.net.run()
        self.static = True
        self.broken: list[tuple[int, int]] = []

    @precondition(lambda self: self.net.broker_links())
    @rule(data=st.data(), lose=st.booleans(), gap=st.sampled_from((0.0, 3.0)))
    def swap(self, data, lose, gap):
        net = self.net
        a, b = data.draw(st.sampled_from(net.broker_links()))
        c = data.draw(st.sampled_from(sorted(net.overlay.side(a, b))))
        d = data.draw(st.sampled_from(sorted(net.overlay.side(b, a))))
        net.swap((a, b), (c, d), gap=gap, lose_in_flight=lose)
        self.broken.append((a, b))
        self._churn()

    @precondition(lambda self: self.net.broker_links())
    @rule(data=st.data(), lose=st.booleans())
    def break_link(self, data, lose):
        a, b = data.draw(st.sampled_from(self.net.broker_links()))
        self.net.disconnect(a, b, lose_in_flight=lose)
        self.broken.append((a, b))
        self._churn()

    @precondition(lambda self: any(a in self.net.brokers and b in self.net.brokers and b not in self.net.overlay.component(a)
                                   for a, b in self.broken))
    @rule(data=st.data())
    def relink_broken_pair(self, data):
        """A pair that broke is linked again (the old neighbour re-subscribes while UNSUBs wait)."""
        net = self.net
        pairs = [(a, b) for a, b in self.broken if a in net.brokers and b in net.brokers and b not in net.overlay.component(a)]
        net.connect(*data.draw(st.sampled_from(pairs)))
        self._churn()

    @precondition(lambda self: self.net.transport.pending_timers())
    @rule(data=st.data())
    def fire_timer(self, data):
        """A timer fires now, whatever its timeout: every timeout is covered."""
        self.net.transport.fire(data.draw(st.sampled_from(self.net.transport.pending_timers())))

    @precondition(lambda self: any(self.net.transport.head(link)[0] == "FLUSH" for link in self.net.transport.pending_links()))
    @rule(data=st.data())
    def lose_flush(self, data):
        """A FLUSH is lost (the timer is the fallback)."""
        flushes = [link for link in self.net.transport.pending_links() if self.net.transport.head(link)[0] == "FLUSH"]
        self.net.transport.drop_head(data.draw(st.sampled_from(flushes)))
        self._churn()


def machine_for(protocol: str) -> type:
    return type(f"{protocol.capitalize()}UnderChurn", (ReconfigUnderChurn,), {"protocol": protocol})


TimedUnderChurn = machine_for("timed")
NotifiedUnderChurn = machine_for("notified")
InformedUnderChurn = machine_for("informed")


#: The protocol steps each machine must take under `ci` (census tags), beside the Strawman rules.
PROTOCOL_FLOORS = {
    "timed": {"TIMED:deferred": 20, "TIMED:leaf-no-timer": 20, "TIMED:timer-expired": 20, "SUB:second-to-broker": 5,
              "UNSUB:single-remaining-broker": 5, "UNSUB:stale": 5},
    "notified": {"TIMED:deferred": 20, "TIMED:leaf-no-timer": 20, "TIMED:timer-expired": 20, "FLUSH:acted-on": 3, "FLUSH:passed-on": 20},
    "informed": {"TIMED:deferred": 20, "TIMED:timer-expired": 20, "TIMED:timeout-zero": 3, "FLUSH:acted-on": 3, "FLUSH:passed-on": 20,
                 "ACTIVATE:received": 20, "ACTIVATE:holds-nothing": 20, "ACTIVATE:holds-back": 1, "INFORMED:sub-timer-expired": 1},
}


def run_machine(machine: type) -> None:
    run_state_machine_as_test(machine, settings=settings(stateful_step_count=40))


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
                return f"broker {u}: routes {what} missing: {sorted(map(repr, missing))[:2]} (t={net.now:.1f})"
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
    assert problem is None, f"CLM-RCF-2 ({protocol}): {problem}"


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
        assert deferral_window_violation(protocol, example) is None, f"CLM-RCF-2 ({protocol}) on Strawman's gap: {deferral_window_violation(protocol, example)}"


@property_check(st.sampled_from(("notified", "informed")), swap_scenarios(), st.integers(0, 2**16))
def unknown_flush_floods_once_and_dies(protocol, sc, pick):
    """CLM-RCF-5: a FLUSH whose rid no broker knows, sent from m to u, is
    handled exactly once by every broker on u's side of (m, u), changes no
    table, and the network is quiescent again."""
    net = quiet_network(sc, protocol)
    links = net.broker_links()
    m, u = links[pick % len(links)][::1 if pick % 2 else -1]
    before = net.tables()
    handled = Counter()
    original = net.transport.deliver
    count = lambda src, dst, kind, payload: (handled.update([dst] if kind == "FLUSH" else []), original(src, dst, kind, payload))  # noqa: E731
    with patched(net.transport, "deliver", count):
        net.send(m, u, "FLUSH", 10**9)
        net.run()
    side = net.overlay.side(u, m)
    assert set(handled) == side and set(handled.values()) == {1}, \
        f"CLM-RCF-5: FLUSH from {m} to {u} handled {dict(handled)}, expected once at each of {sorted(side)}"
    assert net.tables() == before, "CLM-RCF-5: an unknown FLUSH changed a table"
    assert net.transport.quiescent(), "CLM-RCF-5: the FLUSH flood did not die out"


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
    early = []
    original = net.send
    watch = lambda src, dst, kind, payload: (  # noqa: E731
        early.append((src, dst, payload)) if kind == "SUB" and payload in held.get((src, dst), ()) else None,
        original(src, dst, kind, payload))
    with patched(net, "send", watch):
        net.swap((a, b), (c, d), gap=0.0)
        choices = iter(sc["choices"])
        while net.transport.pending_links():  # every message, no timer
            pending = net.transport.pending_links()
            net.transport.deliver_from(pending[next(choices, 0) % len(pending)])
    assert not early, f"CLM-RCF-6: held-back SUBs crossed the new link before subTimer: {early[:2]}"
    net.run()
    check_tables(net)


def _run_schedule(protocol: str, defer: float, topo: dict, seed: int, schedule: list[dict]):
    from subsum.conformance.fuzz import Run

    run = Run(topo, seed, protocol=protocol, defer_timeout=defer, checked=False)
    sent: list = []
    original = run.net.send
    record = lambda src, dst, kind, payload: (sent.append((src, dst, kind, repr(payload))), original(src, dst, kind, payload))  # noqa: E731
    with patched(run.net, "send", record):
        for op in schedule + [{"op": "quiesce"}]:
            run.apply(op)
    net = run.net
    return net.tables(), dict(net.ledger.sent), dict(net.ledger.handled), {e: dict(c) for e, c in net.ledger.deliveries.items()}, sent


@property_check(st.integers(0, 2**16), st.integers(3, 7), st.sampled_from((0.1, 0.3)))
def timed_with_timeout_zero_is_strawman(seed, brokers, churn):
    """CLM-RCF-3: the same schedule (a fuzz schedule: client operations,
    deliveries in a chosen order, swaps, breaks, adds, crashes, joins)
    under Strawman and under timed deferral with timeout 0 gives the same
    tables, the same message counts, the same deliveries and the same
    sequence of messages sent."""
    from subsum.conformance.fuzz import draw_schedule

    topo, schedule = draw_schedule(seed, brokers=brokers, churn=churn, steps=40)
    straw = _run_schedule("strawman", 3000.0, topo, seed, schedule)
    timed = _run_schedule("timed", 0.0, topo, seed, schedule)
    for name, x, y in zip(("tables", "messages sent", "messages handled", "deliveries", "message sequence"), straw, timed):
        assert x == y, f"CLM-RCF-3: timed deferral with timeout 0 differs from Strawman in {name}"


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
    neighbours (none): it changes nothing and dies. The tables end ideal."""
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
