"""Summary-based routing on the simulator (seed 000 §4.3;
spec/08-summary-routing.md DEF-SR-4), registered as protocol "summaries".

A broker plays three roles, each in its own module:

- `ownership`: it owns its clients' subscriptions (an `OwnerSummary`,
  c1 = its id), answers questions about them, and re-checks events for
  them (DEF-SUM-10);
- `propagation`: it keeps a history summary of the brokers in its
  Merged_Brokers list, updated in rounds along the plan (Algorithm 4-2);
- `routing`: it routes events by BROCLI (Algorithm 4-3).

The brokers share `rounds.Rounds` (settings, ID layout, plan, round
clock). SUMMARY and DELTA travel over links; ROUTE, DELIVER and the
DELETE messages out of band. The overlay is fixed once propagation has
started.

Protocol settings (`Network(options=...)`): `period` (ms between rounds),
`schema` (the attribute keys, fixed up front: c3 has one bit per key),
`brokers` and `max_subscriptions` (the ID layout), `virtual`, and `option`
("a" or "b", the next-broker rule).
"""

from __future__ import annotations

from subsum.core.types import Event, Subscription
from subsum.impl.network.actor import Out
from subsum.impl.network.messages import DeleteAnswer, DeleteQuery, DeliverEvent, Publication, RouteEvent, SummaryDelta
from subsum.impl.network.overlay import NetworkError
from subsum.impl.network.protocol import Broker, handles, register
from subsum.impl.network.protocols.summaries.ownership import Ownership
from subsum.impl.network.protocols.summaries.propagation import Propagation
from subsum.impl.network.protocols.summaries.rounds import Rounds
from subsum.impl.network.protocols.summaries.routing import Routing
from subsum.impl.network.transport import CLIENT_BASE
from subsum.impl.summary import OwnerSummary


@register("summaries")
class SummaryBroker(Broker):
    """One broker of summary-based routing (DEF-SR-4): its handlers hand
    each message to the role it concerns."""

    __slots__ = ("ownership", "propagation", "routing")

    family = "summaries"

    #: the classes of the three roles (a subclass may swap one, e.g. a check's planted bug)
    ownership_role: type[Ownership] = Ownership
    propagation_role: type[Propagation] = Propagation
    routing_role: type[Routing] = Routing

    def __init__(self, bid: int, rounds: Rounds) -> None:
        super().__init__(bid, rounds)
        if not 0 <= bid < rounds.layout.brokers:
            raise NetworkError(f"broker {bid} does not fit the summaries' ID layout, which numbers brokers 0 .. "
                               f"{rounds.layout.brokers - 1} (the 'brokers' option)")
        self.ownership = self.ownership_role(OwnerSummary(bid, rounds.layout, rounds.schema, rounds.options["virtual"]))
        self.propagation = self.propagation_role(bid, self.ownership)
        self.routing = self.routing_role(bid, rounds, self.propagation)

    @classmethod
    def shared_state(cls, net) -> Rounds:
        return Rounds(net.options)

    def started(self, out: Out) -> None:
        out.shared.wake(out)

    @property
    def merged(self) -> set[int]:
        """Merged_Brokers: the brokers whose subscriptions the history holds."""
        return self.propagation.merged

    def owner_changed(self) -> bool:
        return self.ownership.has_pending()

    # --- ownership --------------------------------------------------------------------------
    @handles("SUB")
    def subscribed(self, client: int, f: Subscription, out: Out) -> None:
        if self.ownership.subscribe(client, f):
            out.shared.owner_pending[self.id] = self.ownership.has_pending()
            out.shared.wake(out)

    @handles("UNSUB")
    def unsubscribed(self, client: int, f: Subscription, out: Out) -> None:
        if self.ownership.unsubscribe(client, f):
            out.shared.owner_pending[self.id] = self.ownership.has_pending()
            out.shared.wake(out)

    def hand_to_clients(self, eid: int, event: Event, ids, publisher: int, out: Out) -> None:
        clients = self.ownership.clients_for(event, ids, publisher)
        if clients:
            out.route_event(sorted(clients), Publication(eid, event))

    # --- propagation ------------------------------------------------------------------------
    def begin_round(self, r: int, out: Out) -> None:
        self.propagation.begin_round(r, out)

    @handles("SUMMARY", "DELTA")
    def delta_received(self, src: int, update: SummaryDelta, out: Out) -> None:
        self.propagation.delta_received(src, update, out)

    @handles("DELETE-QUERY")
    def delete_query(self, src: int, query: DeleteQuery, out: Out) -> None:
        self.propagation.query_received(src, query, out)

    @handles("DELETE-ANSWER")
    def delete_answer(self, src: int, answer: DeleteAnswer, out: Out) -> None:
        self.propagation.answer_received(src, answer, out)

    # --- routing ----------------------------------------------------------------------------
    @handles("EVENT")
    def published(self, client: int, publication: Publication, out: Out) -> None:
        self.route(publication.eid, publication.event, frozenset(), client, out)

    @handles("ROUTE")
    def routed(self, src: int, message: RouteEvent, out: Out) -> None:
        if self.id in message.brocli:
            out.count("violations", "ROUTE to a checked broker")
        self.route(message.eid, message.event, message.brocli, message.publisher, out)

    @handles("DELIVER")
    def delivered(self, src: int, message: DeliverEvent, out: Out) -> None:
        self.hand_to_clients(message.eid, message.event, message.ids, message.publisher, out)

    def route(self, eid: int, event: Event, brocli: frozenset, publisher: int, out: Out) -> None:
        mine = self.routing.route(eid, event, brocli, publisher, out)
        if mine:
            self.hand_to_clients(eid, event, mine, publisher, out)

    # --- the overlay is fixed once propagation has started ---------------------------------
    def link_added(self, n: int, rid: int | None, out: Out) -> None:
        self.overlay_may_change(n, out.shared)
        self.neighbors.add(n)

    def link_removed(self, n: int, rid: int | None, replacement: tuple | None, out: Out) -> None:
        self.overlay_may_change(n, out.shared)
        self.neighbors.discard(n)

    def overlay_may_change(self, n: int, rounds: Rounds) -> None:
        if n >= CLIENT_BASE:
            return
        rounds.forget_distances()
        if rounds.plan is not None:
            raise NetworkError("the summaries protocol runs on a fixed overlay: links cannot change once propagation has started")
