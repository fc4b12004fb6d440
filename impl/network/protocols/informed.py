"""Informed link activation, the third optimized reconfiguration protocol of
seed 002 §3.5.4 (spec/06-reconfiguration.md DEF-RCF-4, DEF-RCF-5), on top
of notified deferred unsubscriptions; registered as protocol "informed".

Each old endpoint of a replaced link computes P (the filters only the lost
neighbour subscribed) and sends ACTIVATE(rid, P, n2) out of band to the new
link's endpoint on its side, n1; n1 holds back the filters in P over the
new link until `Network.sub_timeout`, then sends those some other
neighbour still wants. On a crash, the asymmetric form (DEF-RCF-5).

Iteration that decides message order always walks `table` (insertion
ordered), never a set of filters (see DEF-NET-2).
"""

from __future__ import annotations

from subsum.core.types import Subscription
from subsum.impl.network.messages import Activate
from subsum.impl.network.protocol import Call, handles, register
from subsum.impl.network.protocols.deferred import NotifiedBroker
from subsum.impl.network.transport import CLIENT_BASE


@register("informed")
class InformedBroker(NotifiedBroker):
    """Informed link activation (seed 002 §3.5.4, DEF-RCF-4, DEF-RCF-5)."""

    __slots__ = ("activations", "awaiting", "tagged", "sub_timers")

    def __init__(self, bid, net) -> None:
        super().__init__(bid, net)
        self.activations: dict[int, Activate] = {}  # rid -> the ACTIVATE received before the link
        self.awaiting: dict[int, tuple[int, int]] = {}  # rid -> (new neighbour, fallback timer) link up, no ACTIVATE yet
        self.tagged: dict[int, tuple[int, list[Subscription]]] = {}  # rid -> (new neighbour, held-back filters)
        self.sub_timers: dict[int, int] = {}

    def link_removed(self, o, rid=None, replacement=None) -> None:
        """replaceLink(o, n1, n2, rid), or a plain deferred removal when the
        link is not replaced."""
        if rid is None or replacement is None:
            super().link_removed(o, rid)
            return
        n1, n2, asymmetric = replacement
        only_o = frozenset(f for f, subscribers in self.table.items() if subscribers == {o})
        announced = frozenset(f for f, subscribers in self.table.items() if subscribers - {o})
        self.manage_removed_link(o, rid)
        if asymmetric:
            # DEF-RCF-5: o crashed; self is the new link's end on its side. P1 (the filters only o
            # had) is used here; P2, what o would have sent, is approximated by what self had
            # announced to o, and goes to the other end in one ACTIVATE.
            self.activate_received(self.id, Activate(rid, only_o, n2))
            self.net.send_direct(self.id, n2, "ACTIVATE", Activate(rid, announced, self.id))
        elif n1 == self.id:
            self.activate_received(self.id, Activate(rid, only_o, n2))
        else:
            self.net.send_direct(self.id, n1, "ACTIVATE", Activate(rid, only_o, n2))

    @handles("ACTIVATE")
    def activate_received(self, m: int, activation: Activate) -> None:
        waiting = self.awaiting.pop(activation.rid, None)
        if waiting is not None:
            n, fallback = waiting
            self.net.cancel(fallback)
            if n == activation.far_end and n in self.neighbors:
                self.activate(activation.rid, activation.held, n)
            return
        self.activations[activation.rid] = activation

    def link_added(self, n, rid=None) -> None:
        if rid is None or n >= CLIENT_BASE:
            self.add_link_to(n)  # an isolated add: Strawman's addLinkTo
            return
        self.neighbors.add(n)  # events and SUBs from n are accepted from now on
        known = self.activations.pop(rid, None)
        if known is not None and known.far_end == n:
            self.activate(rid, known.held, n)
            return
        # no ACTIVATE yet: wait for it, up to subTimer; then behave as the notified variant
        fallback = self.net.at(self.net.now + self.net.sub_timeout, Call(self, "activation_missing", (rid,)))
        self.awaiting[rid] = (n, fallback)

    def activation_missing(self, rid: int) -> None:
        if self.net.brokers.get(self.id) is not self:
            return
        n, _ = self.awaiting.pop(rid)
        if n in self.neighbors:
            self.activate(rid, frozenset(), n)

    def activate(self, rid: int, held: frozenset, n: int) -> None:
        """activateReceived: SUB(p) to n for every distinct p not in P, P held
        back (taggedSubs) until subTimer, then FLUSH(rid)."""
        send, tagged = self.net.send, []
        for f, subscribers in self.table.items():
            if subscribers != {n}:
                if f in held:
                    tagged.append(f)
                else:
                    send(self.id, n, "SUB", f)
        send(self.id, n, "FLUSH", rid)
        if tagged:
            self.tagged[rid] = (n, tagged)
            self.sub_timers[rid] = self.net.at(self.net.now + self.net.sub_timeout, Call(self, "sub_timer_expired", (rid,)))

    def sub_timer_expired(self, rid: int) -> None:
        """subTimerExpired: a held-back p goes to n only if another neighbour still subscribes it."""
        if self.net.brokers.get(self.id) is not self:
            return
        self.sub_timers.pop(rid, None)
        n, tagged = self.tagged.pop(rid)
        if n not in self.neighbors:
            return
        for f in tagged:
            subscribers = self.table.get(f)
            if subscribers and subscribers - {n}:
                self.net.send(self.id, n, "SUB", f)
