"""Conformance of the optimized reconfiguration protocols
(subsum.impl.network.protocols) with the model (subsum.model.network):
claims CLM-RCF-*, spec/06-reconfiguration.md.

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

from collections import Counter
from contextlib import contextmanager

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule, run_state_machine_as_test

from subsum.conformance.network import FILTERS, CheckedBroker, StrawmanUnderChurn, check_tables, model_state, model_view
from subsum.conformance.properties import property_check
from subsum.impl.network import CLIENT_BASE, Network, build
from subsum.impl.network.protocols import PROTOCOLS, InformedBroker
from subsum.model import network as ref

#: Timeouts drawn by the state machine (ms; links take 1-10 ms): 0 is
#: Strawman, 0.5 fires before any message, 5 in the middle of a wave, 3000
#: after everything. Hypothesis can also fire any timer at any moment.
DEFER_TIMEOUTS = (0.0, 0.5, 5.0, 3000.0)
SUB_TIMEOUTS = (0.5, 5.0, 5000.0)


@contextmanager
def captured_sends(net: Network):
    """Collect (dst, kind, payload) of every tree message sent inside the block."""
    sent: list = []
    original = net.send
    net.send = lambda src, dst, kind, payload: (sent.append((dst, kind, payload)), original(src, dst, kind, payload))
    try:
        yield sent
    finally:
        del net.send


def same_messages(got: list, want: list) -> bool:
    return Counter(map(repr, got)) == Counter(map(repr, want))


class ProtocolChecks:
    """Mixin over a protocol broker class (with `CheckedBroker` in between):
    every protocol step is compared with the model's (CLM-RCF-7)."""

    def manage_removed_link(self, n, rid):
        if self.net.defer_timeout <= 0:
            super().manage_removed_link(n, rid)  # Strawman's removeLinkTo, checked by CheckedBroker
            return
        state = model_view(self)
        want_state, want_deferred = ref.deferred_removal(state, n)
        waiting_before = set(self.waiting.get(rid, ()))
        timers_before = self.net.timers_started[self.id]
        with captured_sends(self.net) as sent:
            super().manage_removed_link(n, rid)
        got = model_view(self)
        assert not sent, f"CLM-RCF-7: broker {self.id} sent {sent} while deferring the link to {n}"
        assert got.table == want_state.table and got.neighbors == want_state.neighbors, \
            f"CLM-RCF-7: broker {self.id} deferring the link to {n}: table differs from the model"
        deferred = set(self.waiting.get(rid, ())) - waiting_before
        assert deferred == set(want_deferred), \
            f"CLM-RCF-7: broker {self.id} deferred {sorted(map(repr, deferred))}, the model {sorted(map(repr, want_deferred))}"
        if ref.is_leaf_without(state, n):
            assert self.net.timers_started[self.id] == timers_before, \
                f"CLM-RCF-4: leaf broker {self.id} started a timer when its link to {n} broke"

    def unsub_timer_expired(self, rid):
        if self.net.brokers.get(self.id) is not self:
            super().unsub_timer_expired(rid)
            return
        state, want = model_view(self), []
        for n, p in self.waiting.get(rid, ()):
            state, sent = ref.deferred_unsubscribe(state, n, p)
            want += sent
        with captured_sends(self.net) as sent:
            super().unsub_timer_expired(rid)
        got = model_view(self)
        assert got.table == state.table, f"CLM-RCF-7: broker {self.id} deferred UNSUBs of {rid}: table differs from the model"
        assert same_messages(sent, want), \
            f"CLM-RCF-7: broker {self.id} deferred UNSUBs of {rid}: sent {sorted(map(repr, sent))}, the model sends {sorted(map(repr, want))}"

    def flush_received(self, m, rid):
        if rid in self.unsub_timers:
            super().flush_received(m, rid)  # acted on: the deferred UNSUBs, checked above
            return
        state = model_view(self)
        with captured_sends(self.net) as sent:
            super().flush_received(m, rid)
        assert model_view(self).table == state.table, f"CLM-RCF-5: broker {self.id} changed its table on FLUSH({rid}) it holds no task for"
        want = [(k, "FLUSH", rid) for k in ref.flush_forward(state, m)]
        assert same_messages(sent, want), f"CLM-RCF-5: broker {self.id} passed FLUSH({rid}) from {m} on as {sent}, expected {want}"


class InformedChecks(ProtocolChecks):
    """The informed steps against the model: P, the activation, the release."""

    def link_removed(self, o, rid=None, replacement=None):
        if rid is not None and replacement is not None:
            state = model_view(self)
            self._expect = (ref.only_subscribed_by(state, o), ref.announced_to(state, o))
        super().link_removed(o, rid, replacement)

    def activate_received(self, m, payload):
        rid, held, n2 = payload
        expected = getattr(self, "_expect", None)
        if m == self.id and expected is not None:
            assert held == expected[0], f"CLM-RCF-7: broker {self.id} computed P = {sorted(map(repr, held))}, the model {sorted(map(repr, expected[0]))}"
        super().activate_received(m, payload)

    def activate(self, rid, held, n):
        want, want_held = ref.activation(model_view(self), n, held)
        with captured_sends(self.net) as sent:
            super().activate(rid, held, n)
        assert same_messages(sent, want + [(n, "FLUSH", rid)]), \
            f"CLM-RCF-7: broker {self.id} activating the link to {n}: sent {sorted(map(repr, sent))}, the model {sorted(map(repr, want))} and FLUSH"
        got_held = frozenset(self.tagged[rid][1]) if rid in self.tagged else frozenset()
        assert got_held == want_held, f"CLM-RCF-7: broker {self.id} held back {sorted(map(repr, got_held))}, the model {sorted(map(repr, want_held))}"

    def sub_timer_expired(self, rid):
        if self.net.brokers.get(self.id) is not self:
            super().sub_timer_expired(rid)
            return
        n, tagged = self.tagged[rid]
        want = ref.released(model_view(self), n, frozenset(tagged))
        with captured_sends(self.net) as sent:
            super().sub_timer_expired(rid)
        assert same_messages(sent, want), f"CLM-RCF-7: broker {self.id} released {sorted(map(repr, sent))} to {n}, the model {sorted(map(repr, want))}"


def checked_class(protocol: str) -> type:
    """The protocol's broker class with every step checked against the model."""
    base = PROTOCOLS[protocol]
    if protocol == "strawman":
        return CheckedBroker
    mixin = InformedChecks if issubclass(base, InformedBroker) else ProtocolChecks
    return type(f"Checked{base.__name__}", (mixin, CheckedBroker, base), {})


# --- CLM-RCF-1: eventual convergence under churn, every protocol --------------------------------

class ReconfigUnderChurn(StrawmanUnderChurn):
    """CLM-NET-2's machine with a protocol: swaps and crashes carry
    reconfiguration ids, timers fire when Hypothesis says, FLUSH messages
    may be lost, and a pair that just broke may be linked again."""

    protocol = "timed"

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
        c = data.draw(st.sampled_from(sorted(net.side(a, b))))
        d = data.draw(st.sampled_from(sorted(net.side(b, a))))
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

    @precondition(lambda self: any(a in self.net.brokers and b in self.net.brokers and b not in self.net.component(a)
                                   for a, b in self.broken))
    @rule(data=st.data())
    def relink_broken_pair(self, data):
        """A pair that broke is linked again (the old neighbour re-subscribes while UNSUBs wait)."""
        net = self.net
        pairs = [(a, b) for a, b in self.broken if a in net.brokers and b in net.brokers and b not in net.component(a)]
        net.connect(*data.draw(st.sampled_from(pairs)))
        self._churn()

    @precondition(lambda self: self.net.pending_timers())
    @rule(data=st.data())
    def fire_timer(self, data):
        """A timer fires now, whatever its timeout: every timeout is covered."""
        self.net.fire(data.draw(st.sampled_from(self.net.pending_timers())))

    @precondition(lambda self: any(self.net.head(link)[0] == "FLUSH" for link in self.net.pending_links()))
    @rule(data=st.data())
    def lose_flush(self, data):
        """A FLUSH is lost (the timer is the fallback)."""
        flushes = [link for link in self.net.pending_links() if self.net.head(link)[0] == "FLUSH"]
        self.net.drop_head(data.draw(st.sampled_from(flushes)))
        self._churn()


def machine_for(protocol: str) -> type:
    return type(f"{protocol.capitalize()}UnderChurn", (ReconfigUnderChurn,), {"protocol": protocol})


TimedUnderChurn = machine_for("timed")
NotifiedUnderChurn = machine_for("notified")
InformedUnderChurn = machine_for("informed")


def run_machine(machine: type) -> None:
    run_state_machine_as_test(machine, settings=settings(stateful_step_count=40))
