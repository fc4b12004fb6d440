"""BROCLI routing, one broker's part (seed 000 §4.3, Algorithm 4-3;
spec/08-summary-routing.md DEF-SR-2).

An event enters at the publisher's broker with an empty BROCLI (the
brokers checked so far). Each broker it reaches matches it against its
history summary, hands it (DELIVER) to each owner of a matched ID not in
BROCLI, adds its Merged_Brokers list to BROCLI and sends it on (ROUTE) to
the next broker, until BROCLI holds every broker. ROUTE and DELIVER go out
of band: any broker can address any broker.
"""

from __future__ import annotations

from collections import defaultdict

from subsum.core.types import Event
from subsum.impl.network.actor import Out
from subsum.impl.network.messages import DeliverEvent, RouteEvent
from subsum.impl.network.protocols.summaries.plan import next_broker
from subsum.impl.network.protocols.summaries.propagation import Propagation, send_out_of_band
from subsum.impl.network.protocols.summaries.rounds import Rounds


class Routing:
    """One broker's routing decisions: which owners get an event, and where it goes next."""

    __slots__ = ("bid", "layout", "propagation")

    def __init__(self, bid: int, rounds: Rounds, propagation: Propagation) -> None:
        """`rounds` for its ID layout, fixed; the plan and the journeys are read as `out.shared` by each step."""
        self.bid, self.layout, self.propagation = bid, rounds.layout, propagation

    def route(self, eid: int, event: Event, brocli: frozenset, publisher: int, out: Out) -> set[int]:
        """Send DELIVER to every other unchecked owner and ROUTE to the next
        broker; returns this broker's own matched IDs if it is unchecked
        (the broker hands the event to those clients)."""
        by_owner = self.unchecked_owners(self.propagation.history.match(event), brocli)
        for owner in sorted(by_owner):
            if owner != self.bid:
                send_out_of_band(out, out.shared, self.bid, owner, "DELIVER", DeliverEvent(eid, event, frozenset(by_owner[owner]), publisher), eid)
        brocli = brocli | self.propagation.merged
        plan = out.shared.current_plan(out.overlay)
        nxt = next_broker(out.overlay.adjacent, plan.degree, self.bid, brocli, out.shared.options["option"])
        if nxt is not None:
            send_out_of_band(out, out.shared, self.bid, nxt, "ROUTE", RouteEvent(eid, event, brocli, publisher), eid)
        return by_owner.get(self.bid, set())

    def unchecked_owners(self, matched, brocli: frozenset) -> dict[int, set[int]]:
        """The matched IDs by owner (c1), less the owners already in BROCLI:
        those have had the event from an earlier broker (the c1 filter)."""
        layout = self.layout
        by_owner: dict[int, set[int]] = defaultdict(set)
        for sid in matched:
            owner = layout.broker_of(sid)
            if owner not in brocli:
                by_owner[owner].add(sid)
        return by_owner
