"""Siena's covering-based subscription forwarding, the baseline of seed 000
ch. 5 (spec/08-summary-routing.md, DEF-SR-6), registered as protocol
"siena"; "siena-nocover" runs the same steps with covering off, which is
plain subscription forwarding (DEF-NET-6), for comparison on one workload.

For a broker neighbor m, W(m) is the set of filters of the table with a
subscriber other than m: what plain forwarding has sent m. `forwarded[m]`,
F(m), is what this broker has sent m a SUB for and no UNSUB since. The
steps keep, after every handler:

- F(m) ⊆ W(m): a filter leaves F(m) (UNSUB) only when it leaves W(m);
- every filter of W(m) is in F(m) or covered by one of F(m)
  (`covering.filter_covers`, which is sound), so m forwards every event
  some filter of W(m) matches.

Events are routed as by Strawman (`StrawmanBroker.event_received`), and
reconfiguration is Strawman's (removeLinkTo, addLinkTo) with these rules.
Iteration that decides message order walks the table or `forwarded`
(insertion-ordered), never a set of filters (see DEF-NET-2).
"""

from __future__ import annotations

from subsum.core.types import Subscription
from subsum.impl.network.actor import Out
from subsum.impl.network.protocols.covering import covered_by_any, keys_of
from subsum.impl.network.protocols.forwarding import StrawmanBroker
from subsum.impl.network.protocol import handles, register
from subsum.impl.network.transport import CLIENT_BASE


@register("siena")
class SienaBroker(StrawmanBroker):
    """One broker running covering forwarding (DEF-SR-6)."""

    __slots__ = ("forwarded", "forwarded_keys")

    family = "siena"  # covering steps (DEF-SR-6) are not the model's plain handlers

    #: whether a filter covered by one already forwarded is held back
    covering = True

    def __init__(self, bid: int, shared) -> None:
        super().__init__(bid, shared)
        self.forwarded: dict[int, dict[Subscription, None]] = {}  # broker neighbor m -> F(m), insertion-ordered
        #: m -> F(m) grouped by `keys_of` (what `covered_by_any` tries); follows from `forwarded`
        self.forwarded_keys: dict[int, dict[frozenset, dict[Subscription, None]]] = {}

    def explore_view(self) -> tuple:
        """Strawman's view and the filters forwarded to each broker neighbor (F(m))."""
        return super().explore_view(), frozenset((m, frozenset(filters)) for m, filters in self.forwarded.items())

    def covered(self, f: Subscription, m: int) -> bool:
        """Some filter of F(m) covers f (never, with covering off)."""
        return self.covering and covered_by_any(f, self.forwarded_keys[m])

    def note_forwarded(self, m: int, f: Subscription) -> None:
        """f enters F(m)."""
        self.forwarded[m][f] = None
        self.forwarded_keys[m].setdefault(keys_of(f), {})[f] = None

    def forget_forwarded(self, m: int, f: Subscription) -> None:
        """f leaves F(m)."""
        del self.forwarded[m][f]
        keys = keys_of(f)
        group = self.forwarded_keys[m][keys]
        del group[f]
        if not group:
            del self.forwarded_keys[m][keys]

    def broker_neighbors(self) -> list[int]:
        return [m for m in self.neighbors if m < CLIENT_BASE]

    def now_wanting(self, subscribers: set[int] | None, n: int) -> list[int]:
        """The broker neighbors whose W(m) a filter enters when n joins its
        `subscribers`: every one but n if it had none, the first if it had one."""
        if not subscribers:
            return [m for m in self.broker_neighbors() if m != n]
        if len(subscribers) == 1:
            return [m for m in subscribers if m < CLIENT_BASE]
        return []

    def no_longer_wanting(self, remaining: set[int]) -> list[int]:
        """The broker neighbors whose W(m) a filter has left, now that
        `remaining` are its subscribers: all if none, the last if one."""
        if not remaining:
            return self.broker_neighbors()
        if len(remaining) == 1:
            return [m for m in remaining if m < CLIENT_BASE]
        return []

    def cover(self, m: int, out: Out) -> None:
        """SUB to m for each filter of W(m), in table order, that F(m) does not cover yet."""
        sent = self.forwarded[m]
        for f, subscribers in self.table.items():
            if f not in sent and (m not in subscribers or len(subscribers) > 1) and not self.covered(f, m):
                out.send(m, "SUB", f)
                self.note_forwarded(m, f)

    def withdraw(self, m: int, gone: list[Subscription], out: Out) -> None:
        """Filters have left W(m): those in F(m) leave it too. First the
        filters of W(m) they alone covered go to m, then their UNSUBs (FIFO
        links: m is never without a cover)."""
        sent = self.forwarded[m]
        withdrawn = [f for f in gone if f in sent]
        if not withdrawn:
            return
        for f in withdrawn:
            self.forget_forwarded(m, f)
        self.cover(m, out)
        for f in withdrawn:
            out.send(m, "UNSUB", f)

    # --- covering forwarding (DEF-SR-6) -----------------------------------------------------
    @handles("SUB")
    def sub_received(self, n: int, f: Subscription, out: Out) -> None:
        if n not in self.neighbors:
            return  # a SUB from a node that is no longer a neighbor is ignored
        subscribers = self.table.get(f)
        if subscribers is not None and n in subscribers:
            return
        wanting = self.now_wanting(subscribers, n)
        self.insert_entry(n, f, out)
        for m in wanting:
            if not self.covered(f, m):
                out.send(m, "SUB", f)
                self.note_forwarded(m, f)

    def process_unsub_from(self, n: int, f: Subscription, out: Out) -> None:
        for m in self.no_longer_wanting(self.drop_entry(n, f, out)):
            self.withdraw(m, [f], out)

    # --- Strawman reconfiguration with the same rules --------------------------------------
    def remove_link_to(self, n: int, out: Out) -> None:
        """All of n's entries leave at once, then each broker neighbor's
        withdrawals run together (so no filter is re-sent only to be
        unsubscribed by the next of n's entries)."""
        self.neighbors.discard(n)
        self.forwarded.pop(n, None)
        self.forwarded_keys.pop(n, None)
        gone: dict[int, list[Subscription]] = {}
        for f in [f for f, subscribers in self.table.items() if n in subscribers]:  # table order: deterministic
            for m in self.no_longer_wanting(self.drop_entry(n, f, out)):
                gone.setdefault(m, []).append(f)
        for m, filters in gone.items():
            self.withdraw(m, filters, out)

    def add_link_to(self, n: int, out: Out) -> None:
        self.neighbors.add(n)
        if n < CLIENT_BASE:
            self.forwarded[n], self.forwarded_keys[n] = {}, {}
            self.cover(n, out)


@register("siena-nocover")
class PlainSienaBroker(SienaBroker):
    """DEF-SR-6 with covering off: every filter of W(m) is forwarded, which
    is plain subscription forwarding (DEF-NET-6) through Siena's steps."""

    __slots__ = ()

    covering = False
