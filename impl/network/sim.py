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
        # subscriber -> filters (the same pairs), as an insertion-ordered dict: iterating a set of
        # filters would follow string hashes, which differ between processes (PYTHONHASHSEED)
        self.by_node: dict[int, dict[Subscription, None]] = {}

    # --- subscription forwarding (seed 002 §2.3) ------------------------------------
    def sub_received(self, n: int, f: Subscription) -> None:
        if n not in self.neighbors:
            return  # a SUB from a node that is no longer a neighbour is ignored
        subscribers = self.table.get(f)
        if subscribers is None:
            self.table[f] = {n}
            self.by_node.setdefault(n, {})[f] = None
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
            self.by_node.setdefault(n, {})[f] = None

    def unsub_received(self, n: int, f: Subscription) -> None:
        subscribers = self.table.get(f)
        if subscribers is not None and n in subscribers:
            self.process_unsub_from(n, f)  # an unknown (n, p) is ignored

    def process_unsub_from(self, n: int, f: Subscription) -> None:
        subscribers = self.table[f]
        subscribers.discard(n)
        mine = self.by_node[n]
        del mine[f]
        if not mine:
            del self.by_node[n]
        if not subscribers:
            del self.table[f]
            self.net.filter_removed(f)
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
        targets = [m for m, filters in self.by_node.items() if m != n and not matched.isdisjoint(filters.keys())]
        if targets:
            self.net.route_event(self.id, targets, eid, event)

    # --- Strawman reconfiguration (seed 002 §3.3) --------------------------------------
    def remove_link_to(self, n: int) -> None:
        for f in list(self.by_node.get(n, ())):
            self.process_unsub_from(n, f)
        self.neighbors.discard(n)

    def add_link_to(self, n: int) -> None:
        self.neighbors.add(n)
        if n < CLIENT_BASE:
            for f, subs in self.table.items():
                if subs != {n}:
                    self.net.send(self.id, n, "SUB", f)

    def entries(self) -> set[tuple[int, Subscription]]:
        """subTab as a set of (neighbour, filter) pairs."""
        return {(n, f) for f, subs in self.table.items() for n in subs}


class Network:
    """The overlay, the brokers, the clients, the links in flight, and the counters."""

    def __init__(self, seed: int = 0, delay: tuple[float, float] = (1.0, 10.0), trace: bool = False,
                 broker_class: type[Broker] = Broker, record_crossings: bool = True) -> None:
        if not 0 <= delay[0] <= delay[1]:
            raise NetworkError(f"link delay range {delay} must satisfy 0 <= low <= high")
        self.rng = random.Random(seed)
        self._random = self.rng.random
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
        self._heap: list = []  # (time, seq, link or None, timer callback or None)
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

    def connect(self, a: int, b: int) -> None:
        """Add the link (a, b) between two trees; both ends run addLinkTo."""
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
        self.brokers[a].add_link_to(b)
        self.brokers[b].add_link_to(a)

    def _drop(self, direction: tuple[int, int]) -> None:
        for _, _, _, kind, _ in self.links.pop(direction, ()):
            self.dropped[kind] += 1

    def disconnect(self, a: int, b: int, lose_in_flight: bool = True) -> None:
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
        self.brokers[a].remove_link_to(b)
        self.brokers[b].remove_link_to(a)

    def swap(self, old: tuple[int, int], new: tuple[int, int], gap: float = 0.0, lose_in_flight: bool = True) -> None:
        """Break `old`, then add `new` after `gap` (a link swap reconnecting the two halves)."""
        self.disconnect(*old, lose_in_flight=lose_in_flight)
        c, d = new
        if (c in self.component(old[0])) == (d in self.component(old[0])):
            raise NetworkError(f"the new link {new} does not reconnect the two halves of {old}")
        if gap > 0:
            self.at(self.now + gap, lambda: self.connect(c, d))
        else:
            self.connect(c, d)

    def remove_broker(self, b: int, reattach: Callable[[int, list[int]], list[tuple[int, int]]] | None = None,
                      lose_in_flight: bool = True) -> list[tuple[int, int]]:
        """A broker crashes or leaves: all its links break and its clients go
        with it. `reattach(b, neighbours)` returns the new links that repair the
        tree (LSTree: every orphaned child finds a new parent); by default
        none. Returns the links added."""
        if b not in self.brokers:
            raise NetworkError(f"no broker {b}")
        broker = self.brokers[b]
        neighbours = sorted(m for m in broker.neighbors if m < CLIENT_BASE)
        for m in neighbours:
            self.disconnect(b, m, lose_in_flight)
        for link in [link for link in self.links if link[1] == b]:
            self._drop(link)  # b is gone and handles nothing more
        for c in sorted(m for m in broker.neighbors if m >= CLIENT_BASE):
            del self.clients[c], self.client_filters[c]
        del self.brokers[b]
        added = reattach(b, neighbours) if reattach else []
        for c, d in added:
            self.connect(c, d)
        return added

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
        tree (or, if b was the root, of the first child's tree). Returns the
        association of old links to new links: ((b, child), (child, new parent))."""
        parent = self.parent_of(b) if b in self.brokers else None
        self._record("leave" if graceful else "crash", broker=b)

        def reattach(_b: int, neighbours: list[int]) -> list[tuple[int, int]]:
            children = [m for m in neighbours if m != parent]
            anchor = parent if parent is not None else (children.pop(0) if children else None)
            links = []
            for child in children:
                target = self.rng.choice(sorted(self.component(anchor)))
                links.append((child, target))
            return links

        added = self.remove_broker(b, reattach, lose_in_flight)
        return [((b, child), (child, target)) for child, target in added]

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

    def at(self, t: float, callback: Callable[[], None]) -> None:
        """Run `callback` at simulated time t (a timer)."""
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, None, callback))

    def _handle(self, src: int, dst: int, kind: str, payload) -> None:
        self.handled[kind] += 1
        broker = self.brokers[dst]
        if kind == "EVENT":
            broker.event_received(src, *payload)
        elif kind == "SUB":
            broker.sub_received(src, payload)
        elif kind == "UNSUB":
            broker.unsub_received(src, payload)
        else:  # pragma: no cover - later protocols
            raise NetworkError(f"unknown message type {kind}")

    def step(self) -> bool:
        """Deliver the earliest message or fire the earliest timer; False when nothing is left."""
        heap = self._heap
        while heap:
            t, seq, link, callback = heapq.heappop(heap)
            if callback is not None:
                self.now = max(self.now, t)
                callback()
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
        heap, links, pop, handle = self._heap, self.links, heapq.heappop, self._handle
        steps = 0
        while heap:
            t, seq, link, callback = pop(heap)
            if callback is not None:
                if t > self.now:
                    self.now = t
                callback()
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
        return not any(self.links.values()) and not any(cb is not None for _, _, _, cb in self._heap)

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
