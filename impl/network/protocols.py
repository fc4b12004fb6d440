"""The optimized reconfiguration protocols of seed 002 §3.5 (spec/06-reconfiguration.md):
timed and notified deferred unsubscriptions and informed link activation,
as broker classes on top of `forwarding.StrawmanBroker`, registered as
protocols "timed", "notified" and "informed".

- `TimedBroker` (DEF-RCF-2): a broken link's entries leave the table at
  once, silently, into a waiting table keyed by the reconfiguration id;
  their UNSUBs run when the timer fires (`Network.defer_timeout`). A leaf
  (no other broker neighbour) just drops them. Timeout 0 is Strawman.
- `NotifiedBroker` (DEF-RCF-3): the new link's endpoints send FLUSH(rid)
  after their SUBs; FLUSH floods; an old endpoint holding a task for rid
  runs its deferred UNSUBs at once. The timer stays as the fallback.
- `InformedBroker` (DEF-RCF-4): each old endpoint computes P (the filters
  only the lost neighbour subscribed) and sends ACTIVATE(rid, P, n2) to the
  new link's endpoint on its side, n1; n1 holds back the filters in P over
  the new link until `Network.sub_timeout`, then sends those some other
  neighbour still wants. On a crash, the asymmetric form (DEF-RCF-5).

Iteration that decides message order always walks `table` (insertion
ordered), never a set of filters (see DEF-NET-2).
"""

from __future__ import annotations

from subsum.core.types import Subscription
from subsum.impl.network.forwarding import StrawmanBroker
from subsum.impl.network.protocol import handles, register
from subsum.impl.network.transport import CLIENT_BASE


@register("timed")
class TimedBroker(StrawmanBroker):
    """Timed deferred unsubscriptions (seed 002 §3.5.2, DEF-RCF-2)."""

    __slots__ = ("waiting", "unsub_timers")

    def __init__(self, bid, net) -> None:
        super().__init__(bid, net)
        self.waiting: dict[int, list[tuple[int, Subscription]]] = {}  # rid -> deferred (n', p)
        self.unsub_timers: dict[int, int] = {}  # rid -> timer id

    def link_removed(self, n, rid=None, replacement=None) -> None:
        self.manage_removed_link(n, self.net.new_rid() if rid is None else rid)

    def has_other_broker_neighbour(self, n: int) -> bool:
        return any(m != n and m < CLIENT_BASE for m in self.neighbors)

    def register_task(self, n: int, rid: int) -> bool:
        """Whether a deferral task is kept for this removal (timed: only if there is something to defer)."""
        return bool(self.waiting.get(rid))

    def manage_removed_link(self, n: int, rid: int) -> None:
        """manageRemovedLink(n, rid): n's entries leave the table silently;
        a non-leaf keeps them in waiting[rid] and starts the timer."""
        if self.net.defer_timeout <= 0:
            self.remove_link_to(n)  # REDS: timeout 0 is Strawman
            return
        pairs = [(n, f) for f, subscribers in self.table.items() if n in subscribers]
        for _, f in pairs:
            self.drop_entry(n, f)
        leaf = not self.has_other_broker_neighbour(n)
        self.neighbors.discard(n)
        if leaf:
            return  # nobody to tell: purely local, no waiting table, no timer
        self.waiting.setdefault(rid, []).extend(pairs)
        if rid not in self.unsub_timers and self.register_task(n, rid):
            self.unsub_timers[rid] = self.net.at(self.net.now + self.net.defer_timeout,
                                                 lambda: self.unsub_timer_expired(rid), owner=self.id)
        elif not self.waiting[rid]:
            del self.waiting[rid]

    def unsub_timer_expired(self, rid: int) -> None:
        """unsubTimerExpired(rid) (REDS semantics): each waiting (n', p) is
        re-inserted and then unsubscribed, so the normal rules decide the
        UNSUBs; skipped if (n', p) is back in the table."""
        if self.net.brokers.get(self.id) is not self:
            return  # crashed meanwhile
        timer = self.unsub_timers.pop(rid, None)
        if timer is not None:
            self.net.cancel(timer)
        for n, f in self.waiting.pop(rid, []):
            subscribers = self.table.get(f)
            if subscribers is not None and n in subscribers:
                continue  # n re-subscribed meanwhile
            self.insert_entry(n, f)
            self.process_unsub_from(n, f)


@register("notified")
class NotifiedBroker(TimedBroker):
    """Notified deferred unsubscriptions (seed 002 §3.5.3, DEF-RCF-3)."""

    __slots__ = ()

    def register_task(self, n: int, rid: int) -> bool:
        return True  # REDS: registered even with nothing to defer, so that FLUSH(rid) is recognised

    def link_added(self, n, rid=None) -> None:
        self.add_link_to(n)
        if rid is not None and n < CLIENT_BASE:
            self.net.send(self.id, n, "FLUSH", rid)  # after the SUBs: FIFO

    @handles("FLUSH")
    def flush_received(self, m: int, rid: int) -> None:
        if rid in self.unsub_timers:
            self.unsub_timer_expired(rid)  # an old-link endpoint: cancel the timer, run the UNSUBs now
        else:
            for k in self.neighbors:
                if k != m and k < CLIENT_BASE:
                    self.net.send(self.id, k, "FLUSH", rid)


@register("informed")
class InformedBroker(NotifiedBroker):
    """Informed link activation (seed 002 §3.5.4, DEF-RCF-4, DEF-RCF-5)."""

    __slots__ = ("activations", "awaiting", "tagged", "sub_timers")

    def __init__(self, bid, net) -> None:
        super().__init__(bid, net)
        self.activations: dict[int, tuple[frozenset, int]] = {}  # rid -> (P, n2) received before the link
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
            self.activate_received(self.id, (rid, only_o, n2))
            self.net.send_direct(self.id, n2, "ACTIVATE", (rid, announced, self.id))
        elif n1 == self.id:
            self.activate_received(self.id, (rid, only_o, n2))
        else:
            self.net.send_direct(self.id, n1, "ACTIVATE", (rid, only_o, n2))

    @handles("ACTIVATE")
    def activate_received(self, m: int, payload) -> None:
        rid, held, n2 = payload
        waiting = self.awaiting.pop(rid, None)
        if waiting is not None:
            n, fallback = waiting
            self.net.cancel(fallback)
            if n == n2 and n in self.neighbors:
                self.activate(rid, held, n)
            return
        self.activations[rid] = (held, n2)

    def link_added(self, n, rid=None) -> None:
        if rid is None or n >= CLIENT_BASE:
            self.add_link_to(n)  # an isolated add: Strawman's addLinkTo
            return
        self.neighbors.add(n)  # events and SUBs from n are accepted from now on
        known = self.activations.pop(rid, None)
        if known is not None and known[1] == n:
            self.activate(rid, known[0], n)
            return
        # no ACTIVATE yet: wait for it, up to subTimer; then behave as the notified variant
        fallback = self.net.at(self.net.now + self.net.sub_timeout, lambda: self.activation_missing(rid))
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
            self.sub_timers[rid] = self.net.at(self.net.now + self.net.sub_timeout, lambda: self.sub_timer_expired(rid))

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
