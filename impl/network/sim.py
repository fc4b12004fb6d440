"""A deterministic discrete-event simulator of a broker overlay
(spec/05-network.md): the network that ties the parts together.

- `overlay.Overlay`: which brokers exist and which links join them (a forest);
- `transport.Transport`: FIFO links, timers, the out-of-band channel and
  the event loop;
- `accounting.Ledger`: counters, deliveries, link crossings and the trace;
- `protocol.Broker`: the protocol each broker runs, chosen by name.

Brokers are ints below `CLIENT_BASE`; clients are ints from it up, each
hanging off one access broker. A client's operations (subscribe,
unsubscribe, publish) reach its access broker at once, as messages from
the client. One handler runs at a time (the simulation is sequential).

It never imports `subsum.model`; `subsum.conformance.checks.network.forwarding` checks it
against the model's ideal routing state.
"""

from __future__ import annotations

import copy
import random
from typing import Iterable, Mapping

from subsum.core.types import Event, Subscription
from subsum.impl.network.accounting import Ledger
from subsum.impl.network.host import BrokerHost
from subsum.impl.network.messages import Publication
from subsum.impl.network.overlay import NetworkError, Overlay
from subsum.impl.network.protocol import Broker, broker_class_for, handler_table
from subsum.impl.network.timers import NetworkCall, NetworkTimer
from subsum.impl.network.transport import CLIENT_BASE, Transport


#: The default timeouts, in simulated ms: deferred unsubscriptions (timed,
#: notified, informed; DEF-RCF-2) and held-back subscriptions (informed; DEF-RCF-4).
DEFER_TIMEOUT = 3000.0
SUB_TIMEOUT = 5000.0


class Network(BrokerHost):
    """The overlay, the brokers and their protocol, the clients, the transport and the ledger."""

    def __init__(self, seed: int = 0, delay: tuple[float, float] = (1.0, 10.0), trace: bool = False,
                 broker_class: type[Broker] | None = None, record_crossings: bool = True, protocol: str = "strawman",
                 defer_timeout: float = DEFER_TIMEOUT, sub_timeout: float = SUB_TIMEOUT, options: Mapping | None = None) -> None:
        if not 0 <= delay[0] <= delay[1]:
            raise NetworkError(f"link delay range {delay} must satisfy 0 <= low <= high")
        if not (defer_timeout >= 0 and sub_timeout >= 0):  # also refuses NaN
            raise NetworkError(f"timeouts must be >= 0 ms, got defer {defer_timeout}, sub {sub_timeout}")
        self.protocol = protocol
        self.broker_class = broker_class_for(protocol) if broker_class is None else broker_class
        self.defer_timeout = float(defer_timeout)  # deferred unsubscriptions (timed, notified, informed)
        self.sub_timeout = float(sub_timeout)  # held-back subscriptions (informed)
        super().__init__()
        self.dispatch = handler_table(self.broker_class)
        self.clients: dict[int, int] = {}  # client -> access broker
        self.client_filters: dict[int, set[Subscription]] = {}
        #: The clients whose filter set this network alone holds; a fork shares the others' until one changes them
        self.own_filters: set[int] = set()
        self.ledger = Ledger(trace, record_crossings)
        self.transport = Transport(seed, delay, self.ledger, self.deliver, self.to_client, self.is_broker, self.run_timer)
        # the same churn gives the same overlay whatever the protocol sends
        self.overlay = Overlay(random.Random(f"overlay-{seed}"))
        self.options = dict(options or {})  # the protocol's own settings (e.g. the summaries' period)
        self.shared = self.broker_class.shared_state(self)  # what the protocol's brokers share
        self.buffered = self.broker_class.reads_out_buffer
        self.start_buffers()
        self.refused = 0  # delayed swap links that churn made impossible
        self._next_client = CLIENT_BASE
        self._next_event = 0
        self._canonical: dict[Subscription, Subscription] = {}  # filter -> the one object used for it

    def fork(self, share_random: bool = False, fresh_ledger: bool = False) -> Network:
        """A network that goes on from this one's state independently (what `subsum explore` does at every move):
        its own counts, queues, timers and overlay; the brokers' states shared until a handler changes one (each
        network copies a shared one first, `BrokerHost.own`). `share_random`: both draw link delays and LSTree's
        choices from the same generators (for a caller to whom they do not matter). A network with a timer it did
        not set itself (a workload's closure) cannot be forked: the closure would act on this one. `fresh_ledger`:
        the fork counts from zero (`Ledger.fresh`), for a caller that reads no history across its steps."""
        foreign = [callback for _, callback in self.transport._timers.values() if not isinstance(callback, NetworkTimer)]
        if foreign:
            raise NetworkError(f"cannot fork a network with a timer it did not set: {foreign[0]!r}")
        forked = Network.__new__(Network)
        forked.__dict__.update(self.__dict__)
        self.owned, forked.owned = set(), set()
        forked.brokers, forked.clients = dict(self.brokers), dict(self.clients)
        forked.client_filters = dict(self.client_filters)
        self.own_filters, forked.own_filters = set(), set()
        forked.ledger = self.ledger.fresh() if fresh_ledger else self.ledger.fork()
        forked.transport = self.transport.fork(forked.ledger, forked.deliver, forked.to_client, forked.is_broker, forked.run_timer,
                                               share_random)
        forked.overlay = self.overlay.fork(share_random)
        forked.shared = self.shared.fork() if hasattr(self.shared, "fork") else copy.deepcopy(self.shared)
        forked.incarnation, forked.broker_timers = dict(self.incarnation), dict(self.broker_timers)
        forked.journal = None if self.journal is None else list(self.journal)
        forked.start_buffers()
        return forked

    def release(self) -> None:
        """This network will not run again (a checker's state, once expanded): its transport's and its out-buffer's
        references back to it are dropped, so that reference counting frees it at once rather than the cyclic
        collector, later (`subsum explore` drops thousands a second)."""
        transport = self.transport
        transport.deliver = transport.to_client = transport.alive = transport.run_timer = None  # type: ignore[assignment]
        self.message_out = None  # type: ignore[assignment]

    # --- overlay changes -------------------------------------------------------------------
    def add_broker(self, bid: int | None = None) -> int:
        bid = max(self.brokers, default=-1) + 1 if bid is None else bid
        if bid in self.brokers or not 0 <= bid < CLIENT_BASE:
            raise NetworkError(f"broker {bid} exists already or is out of range")
        self.host(bid, self.broker_class(bid, self.shared))
        self.overlay.add_broker(bid)
        self.notify(bid, "started")
        return bid

    def connect(self, a: int, b: int, rid: int | None = None) -> None:
        """Add the link (a, b) between two trees; both ends learn of it
        (`link_added`, with the reconfiguration id if it replaces a link)."""
        self.overlay.link(a, b)
        self.transport.open(a, b)
        self.ledger.record(self.now, "link", a=a, b=b, up=True)
        self.notify(a, "link_added", b, rid)
        self.notify(b, "link_added", a, rid)

    def disconnect(self, a: int, b: int, lose_in_flight: bool = True, rid: int | None = None,
                   replacement: dict[int, tuple] | None = None) -> None:
        """Break the link (a, b); each live end learns of it (`link_removed`,
        with `replacement[end]` if given). Messages in flight on it are lost,
        or, with `lose_in_flight=False`, still delivered: they were already
        in the receiver's inbound queue, and now come from a node that is no
        longer a neighbor."""
        self.overlay.unlink(a, b)
        for direction in ((a, b), (b, a)):
            if lose_in_flight or not self.transport.links.get(direction):
                self.transport.close(direction)
        self.ledger.record(self.now, "link", a=a, b=b, up=False)
        replacement = replacement or {}
        for x, y in ((a, b), (b, a)):
            if x in self.brokers:
                self.notify(x, "link_removed", y, rid, replacement.get(x))

    def swap(self, old: tuple[int, int], new: tuple[int, int], gap: float = 0.0, lose_in_flight: bool = True) -> int:
        """Break `old`, then add `new` after `gap` (a link swap reconnecting
        the two halves), both under one fresh reconfiguration id, which is
        returned. Each old endpoint learns the new link as (its side's end,
        the other end)."""
        a, b = old
        if not self.overlay.has_link(a, b):
            raise NetworkError(f"there is no link {old} to swap")
        c, d = new
        if {c, d} - set(self.brokers):
            raise NetworkError(f"cannot link {c} and {d}: no such broker")
        side = self.overlay.side(a, b)
        if (c in side) == (d in side):
            raise NetworkError(f"the new link {new} does not reconnect the two halves of {old}")
        if d in side:
            c, d = d, c  # c on a's side, d on b's
        rid = self.new_rid()
        self.disconnect(a, b, lose_in_flight=lose_in_flight, rid=rid, replacement={a: (c, d, False), b: (d, c, False)})
        if gap > 0:
            self.at(self.now + gap, NetworkCall("connect_if_possible", (c, d, rid)))
        else:
            self.connect(c, d, rid)
        return rid

    def connect_if_possible(self, c: int, d: int, rid: int) -> None:
        """The second half of a swap with a gap. Churn in the gap may have
        made the link impossible (an end crashed, or the halves were joined
        another way): then, as an LSTree candidate would refuse it, it is
        not added, and counted in `refused`."""
        if c in self.brokers and d in self.brokers and d not in self.overlay.component(c):
            self.connect(c, d, rid)
        else:
            self.refused += 1

    def remove_broker(self, b: int, lose_in_flight: bool = True,
                      notices: Mapping[int, tuple[int | None, tuple | None]] | None = None) -> list[int]:
        """A broker crashes or leaves: it is gone at once (it runs no handler
        any more), all its links break and its clients go with it. Each
        broker neighbor m learns `link_removed(b, *notices[m])` (by default
        an isolated break). Returns the former broker neighbors."""
        if b not in self.brokers:
            raise NetworkError(f"no broker {b}")
        broker = self.unhost(b)
        neighbors = sorted(self.overlay.adjacent[b])
        notices = notices or {}
        for m in neighbors:
            rid, replacement = notices.get(m, (None, None))
            self.disconnect(b, m, lose_in_flight, rid=rid, replacement={m: replacement} if replacement else None)
        self.overlay.remove_broker(b)
        for link in [link for link in self.transport.links if link[1] == b]:
            self.transport.close(link)  # b is gone and handles nothing more
        for c in sorted(m for m in broker.neighbors if m >= CLIENT_BASE):
            del self.clients[c], self.client_filters[c]
        return neighbors

    def crash(self, b: int, graceful: bool = False, lose_in_flight: bool = True) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """Broker b crashes (or leaves, `graceful`): all its links break and
        its clients go, and LSTree repairs the tree (`Overlay.lstree_repairs`).
        Each child's old link and new link share a fresh reconfiguration id,
        and the child learns its replacement (child, new parent) as an
        asymmetric one (the other old endpoint is dead). Returns the
        association of old links to new links: ((b, child), (child, new parent))."""
        if b not in self.brokers:
            raise NetworkError(f"no broker {b}")
        self.ledger.record(self.now, "leave" if graceful else "crash", broker=b)
        repairs = [(child, target, self.new_rid()) for child, target in self.overlay.lstree_repairs(b)]
        notices = {child: (rid, (child, target, True)) for child, target, rid in repairs}
        self.remove_broker(b, lose_in_flight, notices)
        for child, target, rid in repairs:
            self.connect(child, target, rid)
        return [((b, child), (child, target)) for child, target, _ in repairs]

    def join(self, attach_to: int | None) -> int:
        """A new broker joins, linked to `attach_to` (or alone if None)."""
        b = self.add_broker()
        self.ledger.record(self.now, "join", broker=b)
        if attach_to is not None:
            self.connect(b, attach_to)
        return b

    # --- clients ---------------------------------------------------------------------------
    def add_client(self, broker: int) -> int:
        if broker not in self.brokers:
            raise NetworkError(f"no broker {broker} to attach a client to")
        cid = self._next_client
        self._next_client += 1
        self.clients[cid] = broker
        self.client_filters[cid] = set()
        self.own_filters.add(cid)
        self.notify(broker, "link_added", cid, None)
        return cid

    def subscribe(self, client: int, f: Subscription) -> None:
        self.deliver_from_client(client, "SUB", self.note_subscription(client, f, held=True))

    def unsubscribe(self, client: int, f: Subscription) -> None:
        self.deliver_from_client(client, "UNSUB", self.note_subscription(client, f, held=False))

    def note_subscription(self, client: int, f: Subscription, held: bool) -> Subscription:
        """A client now holds f (`held`) or no longer does: noted (and traced) before its access broker hears of it
        (`subscribe`, `unsubscribe`, or a checker that knows what the broker's handler will do: spec/12 DEF-EXP-7).
        Returns the one object the network uses for f (set lookups then compare by identity)."""
        if held:
            f = self._canonical.setdefault(f, f)
            self._own_filters_of(client).add(f)
        else:
            self._own_filters_of(client).discard(f)
        self.ledger.record(self.now, "subscribe" if held else "unsubscribe", client=client, broker=self.clients[client], filter=f)
        return f

    def _own_filters_of(self, client: int) -> set[Subscription]:
        """The client's filter set, copied first if a fork shares it (`fork`)."""
        if client not in self.own_filters:
            self.client_filters[client] = set(self.client_filters[client])
            self.own_filters.add(client)
        return self.client_filters[client]

    def publish(self, client: int, event: Event) -> int:
        eid = self._next_event
        self._next_event += 1
        self.ledger.published(eid)
        self.ledger.record(self.now, "publish", client=client, broker=self.clients[client], event=eid, attributes=event)
        self.deliver_from_client(client, "EVENT", Publication(eid, event))
        return eid

    # --- views -----------------------------------------------------------------------------
    def broker_links(self) -> list[tuple[int, int]]:
        return self.overlay.links()

    def tables(self) -> dict[int, set[tuple[int, Subscription]]]:
        """Each broker's routing table as (neighbor, filter) pairs (subscription forwarding)."""
        return {b: broker.entries() for b, broker in self.brokers.items()}  # type: ignore[attr-defined]


def build(edges: Iterable[tuple[int, int]], brokers: int, seed: int = 0, **options) -> Network:
    """A network of `brokers` brokers linked by `edges` (a forest)."""
    net = Network(seed, **options)
    for b in range(brokers):
        net.add_broker(b)
    for a, b in edges:
        net.connect(a, b)
    return net

