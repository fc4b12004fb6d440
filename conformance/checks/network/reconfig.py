"""Conformance of the optimized reconfiguration protocols
(subsum.impl.network.protocols) with the model under churn: claims CLM-RCF-1,
4, 5 and 7, spec/06-reconfiguration.md.

`ReconfigUnderChurn` is the churn state machine of CLM-NET-2 with the
protocol's swaps and crashes, timers Hypothesis may fire at any moment (any
timeout), lost FLUSH messages, and re-links of a pair that just broke
(CLM-RCF-1); its brokers check every protocol step against the model
(`checked_class`, conformance/checks/network/checked_brokers.py: CLM-RCF-4, 5, 7). The
isolated swaps and worked examples are in conformance/checks/network/reconfig_scenarios.py.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule, run_state_machine_as_test

from subsum.conformance.runner.profiles import pinned
from subsum.conformance.checks.network.checked_brokers import checked_class
from subsum.conformance.checks.network.forwarding import EDGE_FLOORS, MACHINE_FILTERS, StrawmanUnderChurn
from subsum.impl.network import build

#: Timeouts drawn by the state machine (ms; links take 1-10 ms): 0 is
#: Strawman, 0.5 fires before any message, 5 in the middle of a wave, 3000
#: after everything. Hypothesis can also fire any timer at any moment.
DEFER_TIMEOUTS = (0.0, 0.5, 5.0, 3000.0)
SUB_TIMEOUTS = (0.5, 5.0, 5000.0)


# --- CLM-RCF-1: eventual convergence under churn, every protocol --------------------------------

class ReconfigUnderChurn(StrawmanUnderChurn):
    """CLM-NET-2's machine with a protocol: swaps and crashes carry
    reconfiguration ids, timers fire when Hypothesis says, FLUSH messages
    may be lost, and a pair that just broke may be linked again."""

    protocol = "timed"
    convergence_claim = "CLM-RCF-1"

    @initialize(n=st.integers(1, 7), seed=st.integers(0, 2**16),
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
            for f in data.draw(st.lists(st.sampled_from(MACHINE_FILTERS), max_size=2, unique=True)):
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
        """A pair that broke is linked again (the old neighbor re-subscribes while UNSUBs wait)."""
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
PROTOCOL_FLOORS = {protocol: {**EDGE_FLOORS, **floors} for protocol, floors in {
    "timed": {"TIMED:deferred": 20, "TIMED:leaf-no-timer": 20, "TIMED:timer-expired": 20, "SUB:second-to-broker": 5,
              "UNSUB:single-remaining-broker": 5, "UNSUB:stale": 5},
    "notified": {"TIMED:deferred": 20, "TIMED:leaf-no-timer": 20, "TIMED:timer-expired": 20, "FLUSH:acted-on": 3, "FLUSH:passed-on": 20},
    "informed": {"TIMED:deferred": 20, "TIMED:timer-expired": 20, "TIMED:timeout-zero": 3, "FLUSH:acted-on": 3, "FLUSH:passed-on": 20,
                 "ACTIVATE:received": 20, "ACTIVATE:holds-nothing": 20, "ACTIVATE:holds-back": 1, "INFORMED:sub-timer-expired": 1},
}.items()}


def run_machine(machine: type) -> None:
    run_state_machine_as_test(pinned(machine), settings=settings(stateful_step_count=40))
