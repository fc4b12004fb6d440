"""Subscription forwarding with Strawman reconfiguration (seed 002 §2.3,
§3.3; spec/05-network.md DEF-NET-2 … 7), registered as protocol
"strawman".

- A broker's table subTab is a set of (neighbor, filter) pairs, kept as
  filter -> subscribers and, the same pairs, subscriber -> filters.
  Filters are subscriptions (`subsum.core.types.Subscription`); filter
  identity is equality of normalized filters.
- All brokers of a network share one `FilterIndex`: an incremental
  `indexed` engine over the distinct filters of all tables, which matches
  each event once (cached per event, refreshed when a new filter
  appears). A broker forwards to neighbor m iff m's filters meet the
  matched set.
- Iteration that decides message order always walks `table`
  (insertion-ordered), never a set of filters: set order of filters
  follows string hashes, which differ between processes (PYTHONHASHSEED).
"""

from __future__ import annotations

from typing import Hashable

from subsum.core.types import Event, Subscription
from subsum.impl.matching.indexed import IndexedEngine
from subsum.impl.network.actor import Out
from subsum.impl.network.messages import Publication
from subsum.impl.network.protocol import Broker, handles, register
from subsum.impl.network.transport import CLIENT_BASE


class FilterCatalog:
    """The filters an index matches events against: an incremental `indexed`
    engine and the names it knows them by. Shared by the indexes of forked
    networks, and from then on it only grows (a filter one network dropped
    may still be held in another)."""

    def __init__(self) -> None:
        self.engine = IndexedEngine(count_distinct=False)
        self.names: dict[Subscription, str] = {}
        self.by_name: dict[str, Subscription] = {}
        self.generation = 0  # bumped when a filter enters the engine
        self.shared = False

    def add(self, f: Subscription) -> None:
        if f not in self.names:
            name = f"f{len(self.by_name)}.{self.generation}"
            self.names[f] = name
            self.by_name[name] = f
            self.engine.add(name, f)
            self.generation += 1

    def remove(self, f: Subscription) -> None:
        if not self.shared:
            name = self.names.pop(f)
            del self.by_name[name]
            self.engine.remove(name)

    def match(self, event: Event) -> frozenset:
        names = self.by_name
        return frozenset(names[name] for name in self.engine.match_batch([event])[0])


class FilterIndex:
    """DEF-NET-2: the distinct filters of all tables, reference-counted,
    and the filters each event matches (a superset, once the catalog is
    shared by a fork: a broker meets them with its own table's filters)."""

    #: The methods through which a handler changes the index (`Broker.local_deliveries`); the rest only read it.
    writes = ("added", "removed")
    #: What it holds (each filter and how many tables hold it) follows from the brokers' tables: a checker that
    #: tells states apart by the brokers' records need not read it (spec/12 DEF-EXP-3)
    derived_from_records = True

    def __init__(self) -> None:
        self.catalog = FilterCatalog()
        self.refs: dict[Subscription, int] = {}  # filter -> tables holding it
        self.matches: dict[int, tuple[int, frozenset]] = {}  # event id -> (catalog generation, matched filters)

    def fork(self) -> FilterIndex:
        """A copy for a forked network (`sim.Network.fork`): its own counts and cache, the catalog shared."""
        forked = type(self).__new__(type(self))
        forked.__dict__.update(self.__dict__)
        self.catalog.shared = True
        forked.refs, forked.matches = dict(self.refs), dict(self.matches)
        return forked

    def added(self, f: Subscription) -> None:
        held = self.refs.get(f)
        if held is None:
            self.refs[f] = 1
            self.catalog.add(f)
        else:
            self.refs[f] = held + 1

    def canonical_state(self) -> Hashable:
        """What the index holds, without its caches and the names it handed out: each filter and how many
        tables hold it (`subsum explore`'s fingerprint, spec/12 DEF-EXP-3)."""
        return frozenset(self.refs.items())

    def removed(self, f: Subscription) -> None:
        held = self.refs[f] - 1
        if held:
            self.refs[f] = held
        else:
            del self.refs[f]
            self.catalog.remove(f)

    def matching(self, eid: int, event: Event) -> frozenset:
        """The filters (of any table) the event matches, computed once per
        event and again only after a new filter appeared."""
        cached = self.matches.get(eid)
        generation = self.catalog.generation
        if cached is not None and cached[0] == generation:
            return cached[1]
        matched = self.catalog.match(event)
        self.matches[eid] = (generation, matched)
        return matched


@register("strawman")
class StrawmanBroker(Broker):
    """One broker running subscription forwarding (seed 002 §2.3) and
    Strawman's removeLinkTo/addLinkTo on overlay changes (§3.3). Each
    handler changes the table and writes what it sends to `out`."""

    __slots__ = ("table", "by_node")

    family = "forwarding"

    local_deliveries = True  # a SUB, UNSUB or EVENT reads the table, the neighbors and the index's matches only
    local_notifications = True  # so does a link's addition or removal (and its successors' deferrals: the clock, settings)

    def __init__(self, bid: int, shared) -> None:
        super().__init__(bid, shared)
        self.table: dict[Subscription, set[int]] = {}  # filter -> subscribers (insertion-ordered)
        self.by_node: dict[int, set[Subscription]] = {}  # subscriber -> filters; never iterate where order matters

    @classmethod
    def shared_state(cls, net) -> FilterIndex:
        return FilterIndex()

    # --- subscription forwarding (seed 002 §2.3) --------------------------------------------
    @handles("SUB")
    def sub_received(self, n: int, f: Subscription, out: Out) -> None:
        if n not in self.neighbors:
            return  # a SUB from a node that is no longer a neighbor is ignored
        subscribers = self.table.get(f)
        if subscribers is None:
            self.table[f] = {n}
            self.by_node.setdefault(n, set()).add(f)
            out.shared.added(f)
            for m in self.neighbors:
                if m != n and m < CLIENT_BASE:
                    out.send(m, "SUB", f)
        elif n not in subscribers:
            if len(subscribers) == 1:
                (first,) = subscribers
                if first < CLIENT_BASE:
                    out.send(first, "SUB", f)
            subscribers.add(n)
            self.by_node.setdefault(n, set()).add(f)

    @handles("UNSUB")
    def unsub_received(self, n: int, f: Subscription, out: Out) -> None:
        subscribers = self.table.get(f)
        if subscribers is not None and n in subscribers:
            self.process_unsub_from(n, f, out)  # an unknown (n, p) is ignored

    def drop_entry(self, n: int, f: Subscription, out: Out) -> set[int]:
        """Remove (n, f) from the table, sending nothing; returns f's remaining subscribers."""
        subscribers = self.table[f]
        subscribers.discard(n)
        mine = self.by_node[n]
        mine.discard(f)
        if not mine:
            del self.by_node[n]
        if not subscribers:
            del self.table[f]
            out.shared.removed(f)
        return subscribers

    def insert_entry(self, n: int, f: Subscription, out: Out) -> None:
        """Put (n, f) into the table, sending nothing."""
        subscribers = self.table.get(f)
        if subscribers is None:
            self.table[f] = {n}
            out.shared.added(f)
        else:
            subscribers.add(n)
        self.by_node.setdefault(n, set()).add(f)

    def process_unsub_from(self, n: int, f: Subscription, out: Out) -> None:
        subscribers = self.drop_entry(n, f, out)
        if not subscribers:
            for m in self.neighbors:
                if m != n and m < CLIENT_BASE:
                    out.send(m, "UNSUB", f)
        elif len(subscribers) == 1:
            (last,) = subscribers
            if last < CLIENT_BASE:
                out.send(last, "UNSUB", f)

    @handles("EVENT")
    def event_received(self, n: int, publication: Publication, out: Out) -> None:
        matched = out.shared.matching(publication.eid, publication.event)
        if not matched:
            return
        targets = [m for m, filters in self.by_node.items() if m != n and not matched.isdisjoint(filters)]
        if targets:
            out.route_event(targets, publication)

    # --- Strawman reconfiguration (seed 002 §3.3) -------------------------------------------
    def remove_link_to(self, n: int, out: Out) -> None:
        if n in self.by_node:
            for f in [f for f, subscribers in self.table.items() if n in subscribers]:  # table order: deterministic
                self.process_unsub_from(n, f, out)
        self.neighbors.discard(n)

    def add_link_to(self, n: int, out: Out) -> None:
        self.neighbors.add(n)
        if n < CLIENT_BASE:
            for f, subs in self.table.items():
                if subs != {n}:
                    out.send(n, "SUB", f)

    # --- the overlay's notifications; Strawman ignores rid and replacement ------------------
    def link_removed(self, n: int, rid: int | None, replacement: tuple | None, out: Out) -> None:
        self.remove_link_to(n, out)

    def link_added(self, n: int, rid: int | None, out: Out) -> None:
        self.add_link_to(n, out)

    def explore_view(self) -> tuple:
        """The id, the neighbors and subTab (by_node is the same pairs; the table's order is not part of it)."""
        return self.id, frozenset(self.neighbors), frozenset((f, frozenset(subscribers)) for f, subscribers in self.table.items())

    def entries(self) -> set[tuple[int, Subscription]]:
        """subTab as a set of (neighbor, filter) pairs."""
        return {(n, f) for f, subs in self.table.items() for n in subs}
