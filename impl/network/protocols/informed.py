"""Informed link activation, the third optimized reconfiguration protocol of
seed 002 §3.5.4 (spec/06-reconfiguration.md DEF-RCF-4, DEF-RCF-5), on top
of notified deferred unsubscriptions; registered as protocol "informed".

Each old endpoint of a replaced link computes P (the filters only the lost
neighbor subscribed) and sends ACTIVATE(rid, P, n2) out of band to the new
link's endpoint on its side, n1; n1 holds back the filters in P over the
new link until `Network.sub_timeout`, then sends those some other
neighbor still wants. On a crash, the asymmetric form (DEF-RCF-5).

Iteration that decides message order always walks `table` (insertion
ordered), never a set of filters (see DEF-NET-2).
"""

from __future__ import annotations

from subsum.core.types import Subscription
from subsum.impl.network.messages import Activate
from subsum.impl.network.actor import Out
from subsum.impl.network.protocol import handles, register
from subsum.impl.network.protocols.deferred import NotifiedBroker
from subsum.impl.network.transport import CLIENT_BASE


@register("informed")
class InformedBroker(NotifiedBroker):
    """Informed link activation (seed 002 §3.5.4, DEF-RCF-4, DEF-RCF-5)."""

    __slots__ = ("activations", "awaiting", "tagged")

    def __init__(self, bid, shared) -> None:
        super().__init__(bid, shared)
        self.activations: dict[int, Activate] = {}  # rid -> the ACTIVATE received before the link
        self.awaiting: dict[int, int] = {}  # rid -> the new neighbor: link up, no ACTIVATE yet (a fallback timer runs)
        self.tagged: dict[int, tuple[int, list[Subscription]]] = {}  # rid -> (new neighbor, held-back filters)

    def explore_view(self) -> tuple:
        """The deferred protocols' view, the ACTIVATEs held, the links awaiting one and the held-back filters."""
        return (super().explore_view(), frozenset(self.activations.items()), frozenset(self.awaiting.items()),
                frozenset((rid, (n, tuple(filters))) for rid, (n, filters) in self.tagged.items()))

    def link_removed(self, o, rid, replacement, out: Out) -> None:
        """replaceLink(o, n1, n2, rid), or a plain deferred removal when the
        link is not replaced."""
        if rid is None or replacement is None:
            super().link_removed(o, rid, None, out)
            return
        n1, n2, asymmetric = replacement
        only_o = frozenset(f for f, subscribers in self.table.items() if subscribers == {o})
        announced = frozenset(f for f, subscribers in self.table.items() if subscribers - {o})
        self.manage_removed_link(o, rid, out)
        if asymmetric:
            # DEF-RCF-5: o crashed; self is the new link's end on its side. P1 (the filters only o
            # had) is used here; P2, what o would have sent, is approximated by what self had
            # announced to o, and goes to the other end in one ACTIVATE.
            self.activate_received(self.id, Activate(rid, only_o, n2), out)
            out.send_direct(n2, "ACTIVATE", Activate(rid, announced, self.id))
        elif n1 == self.id:
            self.activate_received(self.id, Activate(rid, only_o, n2), out)
        else:
            out.send_direct(n1, "ACTIVATE", Activate(rid, only_o, n2))

    @handles("ACTIVATE")
    def activate_received(self, m: int, activation: Activate, out: Out) -> None:
        n = self.awaiting.pop(activation.rid, None)
        if n is not None:
            out.cancel("activation_missing", activation.rid)
            if n == activation.far_end and n in self.neighbors:
                self.activate(activation.rid, activation.held, n, out)
            return
        self.activations[activation.rid] = activation

    def link_added(self, n, rid, out: Out) -> None:
        if rid is None or n >= CLIENT_BASE:
            self.add_link_to(n, out)  # an isolated add: Strawman's addLinkTo
            return
        self.neighbors.add(n)  # events and SUBs from n are accepted from now on
        known = self.activations.pop(rid, None)
        if known is not None and known.far_end == n:
            self.activate(rid, known.held, n, out)
            return
        # no ACTIVATE yet: wait for it, up to subTimer; then behave as the notified variant
        out.timer(out.now + out.setting("sub_timeout"), "activation_missing", rid)
        self.awaiting[rid] = n

    def activation_missing(self, rid: int, out: Out) -> None:
        n = self.awaiting.pop(rid)
        if n in self.neighbors:
            self.activate(rid, frozenset(), n, out)

    def activate(self, rid: int, held: frozenset, n: int, out: Out) -> None:
        """activateReceived: SUB(p) to n for every distinct p not in P, P held
        back (taggedSubs) until subTimer, then FLUSH(rid)."""
        tagged = []
        for f, subscribers in self.table.items():
            if subscribers != {n}:
                if f in held:
                    tagged.append(f)
                else:
                    out.send(n, "SUB", f)
        out.send(n, "FLUSH", rid)
        if tagged:
            self.tagged[rid] = (n, tagged)
            out.timer(out.now + out.setting("sub_timeout"), "sub_timer_expired", rid)

    def sub_timer_expired(self, rid: int, out: Out) -> None:
        """subTimerExpired: a held-back p goes to n only if another neighbor still subscribes it."""
        n, tagged = self.tagged.pop(rid)
        if n not in self.neighbors:
            return
        for f in tagged:
            subscribers = self.table.get(f)
            if subscribers and subscribers - {n}:
                out.send(n, "SUB", f)
