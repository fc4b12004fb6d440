"""Deferred unsubscriptions, the first two optimized reconfiguration
protocols of seed 002 §3.5 (spec/06-reconfiguration.md): timed and
notified, as broker classes on top of `forwarding.StrawmanBroker`,
registered as protocols "timed" and "notified". Informed link activation,
which builds on notified, is in `informed`.

- `TimedBroker` (DEF-RCF-2): a broken link's entries leave the table at
  once, silently, into a waiting table keyed by the reconfiguration id;
  their UNSUBs run when the timer fires (`Network.defer_timeout`). A leaf
  (no other broker neighbor) just drops them. Timeout 0 is Strawman.
- `NotifiedBroker` (DEF-RCF-3): the new link's endpoints send FLUSH(rid)
  after their SUBs; FLUSH floods; an old endpoint holding a task for rid
  runs its deferred UNSUBs at once. The timer stays as the fallback.
Iteration that decides message order always walks `table` (insertion
ordered), never a set of filters (see DEF-NET-2).
"""

from __future__ import annotations

from subsum.core.types import Subscription
from subsum.impl.network.actor import Out
from subsum.impl.network.protocols.forwarding import StrawmanBroker
from subsum.impl.network.protocol import handles, register
from subsum.impl.network.transport import CLIENT_BASE


@register("timed")
class TimedBroker(StrawmanBroker):
    """Timed deferred unsubscriptions (seed 002 §3.5.2, DEF-RCF-2)."""

    __slots__ = ("waiting", "unsub_timers")

    def __init__(self, bid, shared) -> None:
        super().__init__(bid, shared)
        self.waiting: dict[int, list[tuple[int, Subscription]]] = {}  # rid -> deferred (n', p)
        self.unsub_timers: set[int] = set()  # the rids whose unsubTimer runs

    def explore_view(self) -> tuple:
        """Strawman's view, the deferred pairs of each removal and the removals whose timer runs."""
        return (super().explore_view(), frozenset((rid, tuple(pairs)) for rid, pairs in self.waiting.items()),
                frozenset(self.unsub_timers))

    def link_removed(self, n, rid, replacement, out: Out) -> None:
        self.manage_removed_link(n, out.new_rid() if rid is None else rid, out)

    def has_other_broker_neighbor(self, n: int) -> bool:
        return any(m != n and m < CLIENT_BASE for m in self.neighbors)

    def register_task(self, n: int, rid: int) -> bool:
        """Whether a deferral task is kept for this removal (timed: only if there is something to defer)."""
        return bool(self.waiting.get(rid))

    def manage_removed_link(self, n: int, rid: int, out: Out) -> None:
        """manageRemovedLink(n, rid): n's entries leave the table silently;
        a non-leaf keeps them in waiting[rid] and starts the timer."""
        defer_timeout = out.setting("defer_timeout")
        if defer_timeout <= 0:
            self.remove_link_to(n, out)  # REDS: timeout 0 is Strawman
            return
        pairs = [(n, f) for f, subscribers in self.table.items() if n in subscribers]
        for _, f in pairs:
            self.drop_entry(n, f, out)
        leaf = not self.has_other_broker_neighbor(n)
        self.neighbors.discard(n)
        if leaf:
            return  # nobody to tell: purely local, no waiting table, no timer
        self.waiting.setdefault(rid, []).extend(pairs)
        if rid not in self.unsub_timers and self.register_task(n, rid):
            self.unsub_timers.add(rid)
            out.timer(out.now + defer_timeout, "unsub_timer_expired", rid, defers=True)
        elif not self.waiting[rid]:
            del self.waiting[rid]

    def unsub_timer_expired(self, rid: int, out: Out) -> None:
        """unsubTimerExpired(rid) (REDS semantics): each waiting (n', p) is
        re-inserted and then unsubscribed, so the normal rules decide the
        UNSUBs; skipped if (n', p) is back in the table."""
        if rid in self.unsub_timers:
            self.unsub_timers.discard(rid)
            out.cancel("unsub_timer_expired", rid)  # run early (a FLUSH): the timer is not needed any more
        for n, f in self.waiting.pop(rid, []):
            subscribers = self.table.get(f)
            if subscribers is not None and n in subscribers:
                continue  # n re-subscribed meanwhile
            self.insert_entry(n, f, out)
            self.process_unsub_from(n, f, out)


@register("notified")
class NotifiedBroker(TimedBroker):
    """Notified deferred unsubscriptions (seed 002 §3.5.3, DEF-RCF-3)."""

    __slots__ = ()

    def register_task(self, n: int, rid: int) -> bool:
        return True  # REDS: registered even with nothing to defer, so that FLUSH(rid) is recognised

    def link_added(self, n, rid, out: Out) -> None:
        self.add_link_to(n, out)
        if rid is not None and n < CLIENT_BASE:
            out.send(n, "FLUSH", rid)  # after the SUBs: FIFO

    @handles("FLUSH")
    def flush_received(self, m: int, rid: int, out: Out) -> None:
        if rid in self.unsub_timers:
            self.unsub_timer_expired(rid, out)  # an old-link endpoint: cancel the timer, run the UNSUBs now
        else:
            for k in self.neighbors:
                if k != m and k < CLIENT_BASE:
                    out.send(k, "FLUSH", rid)
