"""A deterministic discrete-event simulator of a broker overlay running
subscription forwarding with Strawman reconfiguration (seed 002 §2.3, §3.3;
spec/05-network.md).

- Brokers are ints, clients are ints too (from `CLIENT_BASE` up); a client
  hangs off one access broker. Neighbour sets are symmetric.
- Every directed link is a FIFO queue. A message sent at time t arrives at
  max(t + delay, the previous arrival on that link), the delay drawn from a
  seeded generator. When a link breaks, the messages in
  flight on it are dropped (counted in `dropped`).
- One handler runs at a time (the simulation is sequential). `step()`
  delivers the earliest message or fires the earliest timer;
  `deliver_from(link)` delivers the head of one chosen link instead (a
  test's scheduler picks the order).
- Filters are subscriptions (`subsum.core.types.Subscription`); filter
  identity is equality of normalized filters. The network keeps one
  incremental `indexed` engine over the distinct filters of all tables and
  matches each event against it once (cached per event, refreshed when a
  new filter appears); a broker forwards to neighbour m iff m's filters
  meet the matched set.
- `trace` (optional) records subscriptions, publications and deliveries
  with their times (DEF-NET-7).

It never imports `subsum.model`; `subsum.conformance.network` checks it
against the model's ideal routing state.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter, deque
from typing import Callable, Iterable

from subsum.core.types import Event, Subscription
from subsum.impl.matching.indexed import IndexedEngine

CLIENT_BASE = 1_000_000
CONTROL = ("SUB", "UNSUB", "FLUSH", "ACTIVATE")


class NetworkError(ValueError):
    """An overlay operation that would break the forest or names no node."""


class Broker:
    """One broker: its neighbours and its subscription table subTab, a set of
    (neighbour, filter) pairs kept as filter -> subscribers."""

    __slots__ = ("id", "net", "neighbors", "table", "by_node")

    def __init__(self, bid: int, net: "Network") -> None:
        self.id = bid
        self.net = net
        self.neighbors: set[int] = set()
        self.table: dict[Subscription, set[int]] = {}  # filter -> subscribers
        # subscriber -> filters (the same pairs). Never iterate these sets where order matters:
        # set order of filters follows string hashes, which differ between processes
        # (PYTHONHASHSEED); iterate `table` (insertion-ordered) instead.
        self.by_node: dict[int, set[Subscription]] = {}

    # --- subscription forwarding (seed 002 §2.3) ------------------------------------
    def sub_received(self, n: int, f: Subscription) -> None:
        if n not in self.neighbors:
            return  # a SUB from a node that is no longer a neighbour is ignored
        subscribers = self.table.get(f)
        if subscribers is None:
            self.table[f] = {n}
            self.by_node.setdefault(n, set()).add(f)
            self.net.filter_added(f)
            send = self.net.send
            for m in self.neighbors:
                if m != n and m < CLIENT_BASE:
                    send(self.id, m, "SUB", f)
        elif n not in subscribers:
            if len(subscribers) == 1:
                (first,) = subscribers
                if first < CLIENT_BASE:
                    self.net.send(self.id, first, "SUB", f)
            subscribers.add(n)
            self.by_node.setdefault(n, set()).add(f)

    def unsub_received(self, n: int, f: Subscription) -> None:
        subscribers = self.table.get(f)
        if subscribers is not None and n in subscribers:
            self.process_unsub_from(n, f)  # an unknown (n, p) is ignored

    def drop_entry(self, n: int, f: Subscription) -> set[int]:
        """Remove (n, f) from the table, sending nothing; returns f's remaining subscribers."""
        subscribers = self.table[f]
        subscribers.discard(n)
        mine = self.by_node[n]
        mine.discard(f)
        if not mine:
            del self.by_node[n]
        if not subscribers:
            del self.table[f]
            self.net.filter_removed(f)
        return subscribers

    def process_unsub_from(self, n: int, f: Subscription) -> None:
        subscribers = self.drop_entry(n, f)
        if not subscribers:
            send = self.net.send
            for m in self.neighbors:
                if m != n and m < CLIENT_BASE:
                    send(self.id, m, "UNSUB", f)
        elif len(subscribers) == 1:
            (last,) = subscribers
            if last < CLIENT_BASE:
                self.net.send(self.id, last, "UNSUB", f)

    def event_received(self, n: int, eid: int, event: Event) -> None:
        matched = self.net.matching_filters(eid, event)
        if not matched:
            return
        targets = [m for m, filters in self.by_node.items() if m != n and not matched.isdisjoint(filters)]
        if targets:
            self.net.route_event(self.id, targets, eid, event)

    # --- Strawman reconfiguration (seed 002 §3.3) --------------------------------------
    def remove_link_to(self, n: int) -> None:
        if n in self.by_node:
            for f in [f for f, subscribers in self.table.items() if n in subscribers]:  # table order: deterministic
                self.process_unsub_from(n, f)
        self.neighbors.discard(n)

    def add_link_to(self, n: int) -> None:
        self.neighbors.add(n)
        if n < CLIENT_BASE:
            for f, subs in self.table.items():
                if subs != {n}:
                    self.net.send(self.id, n, "SUB", f)

    # --- the overlay's notifications (seed 002 §3.2); Strawman ignores rid and replacement ---
    def link_removed(self, n: int, rid: int | None = None, replacement: tuple | None = None) -> None:
        """The link to n is gone. `rid` names the reconfiguration it belongs
        to (None: an isolated break); `replacement` = (n1, n2, asymmetric)
        is the new link that replaces it, n1 on this broker's side, with
        `asymmetric` True when n is dead (a crash: n tells nobody)."""
        self.remove_link_to(n)

    def link_added(self, n: int, rid: int | None = None) -> None:
        """A link to n is up; `rid` as in `link_removed` (None: an isolated add)."""
        self.add_link_to(n)

    def flush_received(self, m: int, rid: int) -> None:
        raise NetworkError(f"broker {self.id} runs Strawman and got FLUSH({rid}) from {m}")

    def activate_received(self, m: int, payload) -> None:
        raise NetworkError(f"broker {self.id} runs Strawman and got ACTIVATE from {m}")

    def entries(self) -> set[tuple[int, Subscription]]:
        """subTab as a set of (neighbour, filter) pairs."""
        return {(n, f) for f, subs in self.table.items() for n in subs}


class Network:
    """The overlay, the brokers, the clients, the links in flight, and the counters."""

    def __init__(self, seed: int = 0, delay: tuple[float, float] = (1.0, 10.0), trace: bool = False,
                 broker_class: type[Broker] | None = None, record_crossings: bool = True, protocol: str = "strawman",
                 defer_timeout: float = 3000.0, sub_timeout: float = 5000.0) -> None:
        if not 0 <= delay[0] <= delay[1]:
            raise NetworkError(f"link delay range {delay} must satisfy 0 <= low <= high")
        if not (defer_timeout >= 0 and sub_timeout >= 0):  # also refuses NaN
            raise NetworkError(f"timeouts must be >= 0 ms, got defer {defer_timeout}, sub {sub_timeout}")
        if broker_class is None:
            from subsum.impl.network.protocols import broker_class_for

            broker_class = broker_class_for(protocol)
        self.protocol = protocol
        self.defer_timeout = float(defer_timeout)  # deferred unsubscriptions (timed, notified, informed)
        self.sub_timeout = float(sub_timeout)  # held-back subscriptions (informed)
        self._rids = 0
        self._timers: dict[int, tuple[float, Callable[[], None]]] = {}  # live timer id -> (time, callback)
        self.refused = 0  # delayed swap links that churn made impossible
        self.timers_started: Counter = Counter()  # broker -> deferred-unsubscription timers it started
        self.rng = random.Random(seed)  # link delays
        self._random = self.rng.random
        # the overlay's own choices (LSTree's new parents), apart from the delays: the same
        # churn gives the same overlay whatever the protocol sends
        self.overlay_rng = random.Random(f"overlay-{seed}")
        self.delay = delay
        self.broker_class = broker_class
        self.record_crossings = record_crossings  # per event, the broker links it crossed (for checks)
        self.now = 0.0
        self.brokers: dict[int, Broker] = {}
        self.clients: dict[int, int] = {}  # client -> access broker
        self.client_filters: dict[int, set[Subscription]] = {}
        self.links: dict[tuple[int, int], deque] = {}  # directed broker link -> FIFO of (time, seq, unused, kind, payload)
        self.epoch: dict[frozenset, int] = {}  # live undirected link -> epoch
        self._epochs = 0
        self._heap: list = []  # (time, seq, link or None, timer id or None)
        self._seq = 0
        self._next_client = CLIENT_BASE
        self._next_event = 0
        self.sent: Counter = Counter()  # messages sent, by type
        self.handled: Counter = Counter()  # messages delivered and handled, by type
        self.dropped: Counter = Counter()  # messages lost in flight on a broken link, by type
        self.violations: Counter = Counter()  # never expected: control message to a client
        self.deliveries: dict[int, Counter] = {}  # event id -> client -> count
        self.crossings: dict[int, list[tuple[int, int]]] = {}  # event id -> broker links crossed
        self.trace: list[dict] | None = [] if trace else None
        # one engine over the distinct filters of all tables (DEF-NET-2)
        self._engine = IndexedEngine(count_distinct=False)
        self._filter_refs: dict[Subscription, list] = {}  # filter -> [tables holding it, engine id]
        self._filter_ids: dict[str, Subscription] = {}
        self._generation = 0  # bumped when a filter enters the engine
        self._matches: dict[int, tuple[int, frozenset]] = {}  # event id -> (generation, matched filters)
        self._canonical: dict[Subscription, Subscription] = {}  # filter -> the one object used for it

    # --- filters -----------------------------------------------------------------------
    def filter_added(self, f: Subscription) -> None:
        entry = self._filter_refs.get(f)
        if entry is None:
            name = f"f{len(self._filter_ids)}.{self._generation}"
            self._filter_refs[f] = [1, name]
            self._filter_ids[name] = f
            self._engine.add(name, f)
            self._generation += 1
        else:
            entry[0] += 1

    def filter_removed(self, f: Subscription) -> None:
        entry = self._filter_refs[f]
        entry[0] -= 1
        if not entry[0]:
            del self._filter_refs[f]
            del self._filter_ids[entry[1]]
            self._engine.remove(entry[1])

    def matching_filters(self, eid: int, event: Event) -> frozenset:
        """The filters (of any table) the event matches, computed once per
        event and again only after a new filter appeared."""
        cached = self._matches.get(eid)
        if cached is not None and cached[0] == self._generation:
            return cached[1]
        ids = self._filter_ids
        matched = frozenset(ids[name] for name in self._engine.match_batch([event])[0])
        self._matches[eid] = (self._generation, matched)
        return matched

    # --- nodes and links ------------------------------------------------------------
    def add_broker(self, bid: int | None = None) -> int:
        bid = max(self.brokers, default=-1) + 1 if bid is None else bid
        if bid in self.brokers or not 0 <= bid < CLIENT_BASE:
            raise NetworkError(f"broker {bid} exists already or is out of range")
        self.brokers[bid] = self.broker_class(bid, self)
        return bid

    def add_client(self, broker: int) -> int:
        if broker not in self.brokers:
            raise NetworkError(f"no broker {broker} to attach a client to")
        cid = self._next_client
        self._next_client += 1
        self.clients[cid] = broker
        self.client_filters[cid] = set()
        self.brokers[broker].add_link_to(cid)
        return cid

    def component(self, b: int) -> set[int]:
        """The brokers of b's tree."""
        seen, stack = {b}, [b]
        while stack:
            for m in self.brokers[stack.pop()].neighbors:
                if m < CLIENT_BASE and m not in seen:
                    seen.add(m)
                    stack.append(m)
        return seen

    def broker_links(self) -> list[tuple[int, int]]:
        return sorted(tuple(sorted(e)) for e in self.epoch)

    def new_rid(self) -> int:
        """A fresh reconfiguration id."""
        self._rids += 1
        return self._rids

    def connect(self, a: int, b: int, rid: int | None = None) -> None:
        """Add the link (a, b) between two trees; both ends run addLinkTo
        (`link_added`, with the reconfiguration id if it replaces a link)."""
        if a not in self.brokers or b not in self.brokers:
            raise NetworkError(f"cannot link {a} and {b}: no such broker")
        if b in self.component(a):
            raise NetworkError(f"link ({a}, {b}) would close a cycle")
        self._epochs += 1
        self.epoch[frozenset((a, b))] = self._epochs
        for direction in ((a, b), (b, a)):
            self._drop(direction)  # leftovers of an earlier, broken link between the pair
            self.links[direction] = deque()
        self._record("link", a=a, b=b, up=True)
        self.brokers[a].link_added(b, rid)
        self.brokers[b].link_added(a, rid)

    def _drop(self, direction: tuple[int, int]) -> None:
        for _, _, _, kind, _ in self.links.pop(direction, ()):
            self.dropped[kind] += 1

    def disconnect(self, a: int, b: int, lose_in_flight: bool = True, rid: int | None = None,
                   replacement: dict[int, tuple] | None = None) -> None:
        """Break the link (a, b); both ends run removeLinkTo. Messages in
        flight on it are lost, or, with `lose_in_flight=False`, still
        delivered: they were already in the receiver's inbound queue, and
        now come from a node that is no longer a neighbour."""
        key = frozenset((a, b))
        if key not in self.epoch:
            raise NetworkError(f"there is no link ({a}, {b}) to break")
        del self.epoch[key]
        for direction in ((a, b), (b, a)):
            if lose_in_flight or not self.links.get(direction):
                self._drop(direction)
        self._record("link", a=a, b=b, up=False)
        replacement = replacement or {}
        for x, y in ((a, b), (b, a)):
            if x in self.brokers:
                self.brokers[x].link_removed(y, rid, replacement.get(x))

    def swap(self, old: tuple[int, int], new: tuple[int, int], gap: float = 0.0, lose_in_flight: bool = True) -> int:
        """Break `old`, then add `new` after `gap` (a link swap reconnecting
        the two halves), both under one fresh reconfiguration id, which is
        returned. Each old endpoint learns the new link as (its side's end,
        the other end)."""
        a, b = old
        if frozenset(old) not in self.epoch:
            raise NetworkError(f"there is no link {old} to swap")
        c, d = new
        if {c, d} - set(self.brokers):
            raise NetworkError(f"cannot link {c} and {d}: no such broker")
        side = self.side(a, b)
        if (c in side) == (d in side):
            raise NetworkError(f"the new link {new} does not reconnect the two halves of {old}")
        if d in side:
            c, d = d, c  # c on a's side, d on b's
        rid = self.new_rid()
        self.disconnect(a, b, lose_in_flight=lose_in_flight, rid=rid, replacement={a: (c, d, False), b: (d, c, False)})
        if gap > 0:
            self.at(self.now + gap, lambda: self._late_connect(c, d, rid))
        else:
            self.connect(c, d, rid)
        return rid

    def _late_connect(self, c: int, d: int, rid: int) -> None:
        """The second half of a swap with a gap. Churn in the gap may have
        made the link impossible (an end crashed, or the halves were joined
        another way): then, as an LSTree candidate would refuse it, it is
        not added, and counted in `refused`."""
        if c in self.brokers and d in self.brokers and d not in self.component(c):
            self.connect(c, d, rid)
        else:
            self.refused += 1

    def side(self, a: int, b: int) -> set[int]:
        """The brokers on a's side of the link (a, b): reachable from a without crossing it."""
        seen, stack = {a}, [a]
        while stack:
            u = stack.pop()
            for m in self.brokers[u].neighbors:
                if m < CLIENT_BASE and m not in seen and not (u == a and m == b):
                    seen.add(m)
                    stack.append(m)
        return seen

    def remove_broker(self, b: int, lose_in_flight: bool = True,
                      notices: dict[int, tuple[int | None, tuple | None]] | None = None) -> list[int]:
        """A broker crashes or leaves: it is gone at once (it runs no handler
        any more), all its links break and its clients go with it. Each
        broker neighbour m runs `link_removed(b, *notices[m])` (by default an
        isolated break). Returns the former broker neighbours."""
        if b not in self.brokers:
            raise NetworkError(f"no broker {b}")
        broker = self.brokers.pop(b)
        neighbours = sorted(m for m in broker.neighbors if m < CLIENT_BASE)
        notices = notices or {}
        for m in neighbours:
            rid, replacement = notices.get(m, (None, None))
            self.disconnect(b, m, lose_in_flight, rid=rid, replacement={m: replacement} if replacement else None)
        for link in [link for link in self.links if link[1] == b]:
            self._drop(link)  # b is gone and handles nothing more
        for c in sorted(m for m in broker.neighbors if m >= CLIENT_BASE):
            del self.clients[c], self.client_filters[c]
        return neighbours

    def parent_of(self, b: int) -> int | None:
        """b's parent in its tree, the tree rooted at its smallest broker (LSTree's rooted view)."""
        root = min(self.component(b))
        if root == b:
            return None
        previous, stack = {root: None}, [root]
        while stack:
            u = stack.pop()
            for m in self.brokers[u].neighbors:
                if m < CLIENT_BASE and m not in previous:
                    previous[m] = u
                    stack.append(m)
        return previous[b]

    def crash(self, b: int, graceful: bool = False, lose_in_flight: bool = True) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """Broker b crashes (or leaves, `graceful`): all its links break and its
        clients go. LSTree repair (seed 002 §3.5.5): the link to b's parent is
        lost; each orphaned child attaches to a random broker of the parent's
        tree (or, if b was the root, of the first child's tree). Each child's
        old link and new link share a fresh reconfiguration id, and the child
        learns its replacement (child, new parent) as an asymmetric one (the
        other old endpoint is dead). Returns the association of old links to
        new links: ((b, child), (child, new parent))."""
        if b not in self.brokers:
            raise NetworkError(f"no broker {b}")
        parent = self.parent_of(b)
        self._record("leave" if graceful else "crash", broker=b)
        neighbours = sorted(m for m in self.brokers[b].neighbors if m < CLIENT_BASE)
        children = [m for m in neighbours if m != parent]
        anchor = parent if parent is not None else (children.pop(0) if children else None)
        targets = sorted(self.side(anchor, b)) if anchor is not None else []
        repairs = [(child, self.overlay_rng.choice(targets), self.new_rid()) for child in children]
        notices = {child: (rid, (child, target, True)) for child, target, rid in repairs}
        self.remove_broker(b, lose_in_flight, notices)
        for child, target, rid in repairs:
            self.connect(child, target, rid)
        return [((b, child), (child, target)) for child, target, _ in repairs]

    def join(self, attach_to: int | None) -> int:
        """A new broker joins, linked to `attach_to` (or alone if None)."""
        b = self.add_broker()
        self._record("join", broker=b)
        if attach_to is not None:
            self.connect(b, attach_to)
        return b

    # --- clients ------------------------------------------------------------------------
    def subscribe(self, client: int, f: Subscription) -> None:
        f = self._canonical.setdefault(f, f)  # one object per distinct filter: set lookups compare by identity
        self.client_filters[client].add(f)
        self._record("subscribe", client=client, broker=self.clients[client], filter=f)
        self.brokers[self.clients[client]].sub_received(client, f)

    def unsubscribe(self, client: int, f: Subscription) -> None:
        self.client_filters[client].discard(f)
        self._record("unsubscribe", client=client, broker=self.clients[client], filter=f)
        self.brokers[self.clients[client]].unsub_received(client, f)

    def publish(self, client: int, event: Event) -> int:
        eid = self._next_event
        self._next_event += 1
        self.deliveries[eid] = Counter()
        self.crossings[eid] = []
        self._record("publish", client=client, broker=self.clients[client], event=eid, attributes=event)
        self.brokers[self.clients[client]].event_received(client, eid, event)
        return eid

    # --- messages ----------------------------------------------------------------------------
    def send(self, src: int, dst: int, kind: str, payload) -> None:
        if dst >= CLIENT_BASE:
            self.violations[f"{kind} to a client"] += 1
            return
        self.sent[kind] += 1
        queue = self.links[(src, dst)]
        low, high = self.delay
        t = self.now + (low + (high - low) * self._random())  # rng.uniform(low, high), the same floats
        if queue and queue[-1][0] > t:
            t = queue[-1][0]  # FIFO: never overtake the previous message on this link
        self._seq += 1
        queue.append((t, self._seq, None, kind, payload))
        heapq.heappush(self._heap, (t, self._seq, (src, dst), None))

    def route_event(self, src: int, targets: list[int], eid: int, event: Event) -> None:
        """Broker `src` forwards event `eid` to each target: a client gets it
        (a delivery), a broker gets an EVENT message. `send`, inlined: this
        is the simulator's hottest path."""
        deliveries = self.deliveries[eid]
        crossings = self.crossings[eid] if self.record_crossings else None
        payload = (eid, event)
        links, heap, push, rnd = self.links, self._heap, heapq.heappush, self._random
        low, span = self.delay[0], self.delay[1] - self.delay[0]
        now = self.now
        sent = 0
        for dst in targets:
            if dst >= CLIENT_BASE:
                deliveries[dst] += 1
                if self.trace is not None:
                    self._record("deliver", client=dst, broker=src, event=eid)
                continue
            if crossings is not None:
                crossings.append((src, dst))
            queue = links[(src, dst)]
            t = now + (low + span * rnd())
            if queue and queue[-1][0] > t:
                t = queue[-1][0]
            self._seq += 1
            queue.append((t, self._seq, None, "EVENT", payload))
            push(heap, (t, self._seq, (src, dst), None))
            sent += 1
        if sent:
            self.sent["EVENT"] += sent

    def forward_event(self, src: int, dst: int, eid: int, event: Event) -> None:
        self.route_event(src, [dst], eid, event)

    def send_direct(self, src: int, dst: int, kind: str, payload) -> None:
        """An out-of-band message (ACTIVATE: REDS sends it over UDP, not over
        the tree): its own FIFO channel (src, dst, "oob"), the same delays.
        Lost if dst is gone when it arrives."""
        if dst >= CLIENT_BASE:
            self.violations[f"{kind} to a client"] += 1
            return
        self.sent[kind] += 1
        if dst not in self.brokers:
            self.dropped[kind] += 1
            return
        queue = self.links.setdefault((src, dst, "oob"), deque())
        low, high = self.delay
        t = self.now + (low + (high - low) * self._random())
        if queue and queue[-1][0] > t:
            t = queue[-1][0]
        self._seq += 1
        queue.append((t, self._seq, None, kind, payload))
        heapq.heappush(self._heap, (t, self._seq, (src, dst, "oob"), None))

    def at(self, t: float, callback: Callable[[], None], owner: int | None = None) -> int:
        """Run `callback` at simulated time t (a timer); returns its id.
        `owner`, a broker starting a deferred-unsubscription timer, is counted
        in `timers_started`."""
        self._seq += 1
        self._timers[self._seq] = (t, callback)
        heapq.heappush(self._heap, (t, self._seq, None, self._seq))
        if owner is not None:
            self.timers_started[owner] += 1
        return self._seq

    def cancel(self, timer: int) -> None:
        """Cancel a timer (nothing if it already fired or was cancelled)."""
        self._timers.pop(timer, None)

    def pending_timers(self) -> list[int]:
        """The live timers' ids, in firing order."""
        return sorted(self._timers, key=lambda tid: (self._timers[tid][0], tid))

    def fire(self, timer: int) -> None:
        """Fire one timer now, whatever its time (a test's scheduler: any timeout)."""
        _, callback = self._timers.pop(timer)
        callback()

    def drop_head(self, link: tuple) -> tuple[str, object]:
        """Lose the head message of a link (a test's scheduler: a lost FLUSH); returns (kind, payload)."""
        _, _, _, kind, payload = self.links[link].popleft()
        self.dropped[kind] += 1
        return kind, payload

    def head(self, link: tuple) -> tuple[str, object]:
        """The head message of a link, (kind, payload)."""
        _, _, _, kind, payload = self.links[link][0]
        return kind, payload

    def _handle(self, src: int, dst: int, kind: str, payload) -> None:
        self.handled[kind] += 1
        broker = self.brokers[dst]
        if kind == "EVENT":
            broker.event_received(src, *payload)
        elif kind == "SUB":
            broker.sub_received(src, payload)
        elif kind == "UNSUB":
            broker.unsub_received(src, payload)
        elif kind == "FLUSH":
            broker.flush_received(src, payload)
        elif kind == "ACTIVATE":
            broker.activate_received(src, payload)
        else:
            raise NetworkError(f"unknown message type {kind}")

    def step(self) -> bool:
        """Deliver the earliest message or fire the earliest timer; False when nothing is left."""
        heap = self._heap
        while heap:
            t, seq, link, timer = heapq.heappop(heap)
            if timer is not None:
                entry = self._timers.pop(timer, None)
                if entry is None:
                    continue  # cancelled, or already fired by `fire`
                self.now = max(self.now, t)
                entry[1]()
                return True
            queue = self.links.get(link)
            if not queue or queue[0][1] != seq:
                continue  # dropped with its link, or already delivered by deliver_from
            self.now = max(self.now, t)
            _, _, _, kind, payload = queue.popleft()
            self._handle(link[0], link[1], kind, payload)
            return True
        return False

    def run(self, max_steps: int | None = None) -> int:
        """Step until nothing is left (or `max_steps`); returns the steps taken."""
        if max_steps is not None:
            steps = 0
            while steps < max_steps and self.step():
                steps += 1
            return steps
        # `step()` inlined: the loop that runs a whole simulation
        heap, links, pop, handle, timers = self._heap, self.links, heapq.heappop, self._handle, self._timers
        steps = 0
        while heap:
            t, seq, link, timer = pop(heap)
            if timer is not None:
                entry = timers.pop(timer, None)
                if entry is None:
                    continue
                if t > self.now:
                    self.now = t
                entry[1]()
                steps += 1
                continue
            queue = links.get(link)
            if not queue or queue[0][1] != seq:
                continue
            if t > self.now:
                self.now = t
            _, _, _, kind, payload = queue.popleft()
            handle(link[0], link[1], kind, payload)
            steps += 1
        return steps

    def pending_links(self) -> list[tuple[int, int]]:
        """The directed links with messages in flight, sorted."""
        return sorted(link for link, queue in self.links.items() if queue)

    def deliver_from(self, link: tuple[int, int]) -> None:
        """Deliver the head message of one link now, whatever its time."""
        queue = self.links[link]
        t, _, _, kind, payload = queue.popleft()
        self.now = max(self.now, t)
        self._handle(link[0], link[1], kind, payload)

    def quiescent(self) -> bool:
        return not self._timers and not any(self.links.values())

    # --- views --------------------------------------------------------------------------------
    def tables(self) -> dict[int, set[tuple[int, Subscription]]]:
        return {b: broker.entries() for b, broker in self.brokers.items()}

    def _record(self, kind: str, **fields) -> None:
        if self.trace is not None:
            self.trace.append({"time": self.now, "kind": kind, **fields})


def build(edges: Iterable[tuple[int, int]], brokers: int, seed: int = 0, **options) -> Network:
    """A network of `brokers` brokers linked by `edges` (a forest)."""
    net = Network(seed, **options)
    for b in range(brokers):
        net.add_broker(b)
    for a, b in edges:
        net.connect(a, b)
    return net
