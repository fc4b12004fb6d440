"""The thesis's two naive baselines on the simulator (seed 000 ch. 5;
spec/08-summary-routing.md DEF-SR-7), registered as protocols:

- "broadcast", baseline (i): a broker sends every subscription (and
  unsubscription) of its clients to every other broker, SUBSCRIPTION and
  UNSUBSCRIPTION out of band; so each broker knows every broker's filters
  and sends an event straight to each broker with a matching one (EVENT
  out of band);
- "flooding", baseline (ii): subscriptions stay at their broker; every
  event is forwarded over every overlay link (EVENT), and each broker hands
  it to its own matching clients.

Both deliver exactly (a broker re-checks its clients' filters); they are
here for their costs: messages, thesis hops and overlay hops.
"""

from __future__ import annotations

from collections import defaultdict
from typing import cast

from subsum.core.types import Subscription
from subsum.impl.network.actor import Out
from subsum.impl.network.messages import Publication
from subsum.impl.network.protocol import Broker, handles, register
from subsum.impl.network.protocols.summaries.plan import distances
from subsum.impl.network.transport import CLIENT_BASE
from subsum.impl.summary.recheck import recheck


class LocalClients(Broker):
    """A broker that keeps its own clients' filters and hands them matching events."""

    __slots__ = ("filters",)

    def __init__(self, bid: int, shared) -> None:
        super().__init__(bid, shared)
        self.filters: dict[tuple[int, Subscription], Subscription] = {}  # (client, filter) -> filter

    @handles("SUB")
    def subscribed(self, client: int, f: Subscription, out: Out) -> None:
        self.filters[(client, f)] = f

    @handles("UNSUB")
    def unsubscribed(self, client: int, f: Subscription, out: Out) -> None:
        self.filters.pop((client, f), None)

    def hand_to_clients(self, publication: Publication, publisher: int | None, out: Out) -> None:
        clients = {client for client, _ in recheck(self.filters, publication.event, self.filters)} - {publisher}
        if clients:
            out.route_event(sorted(clients), publication)

    def link_added(self, n: int, rid: int | None, out: Out) -> None:
        self.neighbors.add(n)

    def link_removed(self, n: int, rid: int | None, replacement: tuple | None, out: Out) -> None:
        self.neighbors.discard(n)


@register("flooding")
class FloodingBroker(LocalClients):
    """Baseline (ii): every event crosses every overlay link once."""

    __slots__ = ()

    @handles("EVENT")
    def event_received(self, src: int, publication: Publication, out: Out) -> None:
        self.hand_to_clients(publication, src if src >= CLIENT_BASE else None, out)
        targets = [m for m in sorted(self.neighbors) if m < CLIENT_BASE and m != src]
        if targets:
            out.route_event(targets, publication)


@register("broadcast")
class BroadcastBroker(LocalClients):
    """Baseline (i): every broker knows every broker's filters."""

    __slots__ = ("remote",)

    def __init__(self, bid: int, shared) -> None:
        super().__init__(bid, shared)
        self.remote: dict[int, dict[Subscription, int]] = defaultdict(dict)  # broker -> filter -> its clients holding it

    @classmethod
    def shared_state(cls, net) -> dict[int, dict[int, int]]:
        return {}  # broker -> overlay links to each broker, dropped when a link changes

    def send_to(self, b: int, kind: str, payload, out: Out) -> None:
        """Out of band, counting the overlay links the message would cross."""
        cache = cast(dict, out.shared)  # broker -> overlay links to each broker
        if self.id not in cache:
            cache[self.id] = distances(out.overlay.adjacent, self.id)
        out.count("overlay_hops", kind, cache[self.id].get(b, len(out.brokers())))
        out.send_direct(b, kind, payload)

    def to_every_broker(self, kind: str, payload, out: Out) -> None:
        for b in out.brokers():
            if b != self.id:
                self.send_to(b, kind, payload, out)

    def link_added(self, n: int, rid: int | None, out: Out) -> None:
        out.shared.clear()  # the distances change with the overlay
        super().link_added(n, rid, out)

    def link_removed(self, n: int, rid: int | None, replacement: tuple | None, out: Out) -> None:
        out.shared.clear()
        super().link_removed(n, rid, replacement, out)

    @handles("SUB")
    def subscribed(self, client: int, f: Subscription, out: Out) -> None:
        if (client, f) not in self.filters:
            super().subscribed(client, f, out)
            self.to_every_broker("SUBSCRIPTION", f, out)

    @handles("UNSUB")
    def unsubscribed(self, client: int, f: Subscription, out: Out) -> None:
        if (client, f) in self.filters:
            super().unsubscribed(client, f, out)
            self.to_every_broker("UNSUBSCRIPTION", f, out)

    @handles("SUBSCRIPTION")
    def subscription_received(self, src: int, f: Subscription, out: Out) -> None:
        self.remote[src][f] = self.remote[src].get(f, 0) + 1

    @handles("UNSUBSCRIPTION")
    def unsubscription_received(self, src: int, f: Subscription, out: Out) -> None:
        held = self.remote[src]
        held[f] -= 1
        if not held[f]:
            del held[f]

    @handles("EVENT")
    def event_received(self, src: int, publication: Publication, out: Out) -> None:
        self.hand_to_clients(publication, src if src >= CLIENT_BASE else None, out)
        if src < CLIENT_BASE:
            return  # sent here by the publisher's broker: delivered, done
        for b in sorted(self.remote):
            held = self.remote[b]
            if held and recheck({f: f for f in held}, publication.event, held):
                self.send_to(b, "EVENT", publication, out)
