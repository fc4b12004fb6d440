"""What the brokers of summary-based routing share (spec/08-summary-routing.md
DEF-SR-4): the settings, the ID layout, the propagation plan, the round
clock, and each event's journey (for the checks).

Propagation runs in rounds, started on period boundaries: a round starts
only when the last one has finished at every broker, and only when some
owner has something new to propagate.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Mapping

from subsum.impl.network.overlay import NetworkError
from subsum.impl.network.protocol import protocol_settings
from subsum.impl.network.protocols.summaries.plan import Plan, distances, plan
from subsum.impl.summary import IdLayout

#: the attribute keys of `subsum simulate`'s workload (x > k, s prefix "L")
DEFAULT_SCHEMA = (("s", "string"), ("x", "int"))
STALL_LIMIT = 1000  # periods a round may overrun before the run stops as stuck
DEFAULTS = {"period": 100.0, "schema": DEFAULT_SCHEMA, "brokers": 1024, "max_subscriptions": 4096, "virtual": "none", "option": "a"}
#: the next-broker rules of DEF-SR-2: (a) highest degree not checked, (b) nearest of at least this degree
NEXT_BROKER_OPTIONS = ("a", "b")


class Rounds:
    """The summaries brokers' shared state (`Network.shared`): the settings,
    the ID layout, the propagation plan (fixed once propagation starts), the
    round clock, and each event's journey. The clock is the network's, not a
    broker's: its timer (`out.shared_timer`) starts a round at every broker
    (`out.tell_every_broker`)."""

    def __init__(self, options: Mapping) -> None:
        self.options = protocol_settings("summaries", options, DEFAULTS, {"option": NEXT_BROKER_OPTIONS})
        if not self.options["period"] > 0:
            raise NetworkError(f"the summaries period must be > 0 ms, got {self.options['period']}")
        self.schema = tuple(tuple(k) for k in self.options["schema"])
        self.layout = IdLayout(self.options["brokers"], self.options["max_subscriptions"], len(self.schema))
        self.plan: Plan | None = None
        self.round = -1  # the last round started
        self.finished: set[int] = set()  # brokers done with the current round
        self.timer: float | None = None  # when the next round start is due, if one is set
        self.deferred = 0  # round starts put off because the previous round was not finished
        self.stalled = 0  # consecutive put-off starts
        self.journeys: dict[int, list[tuple[str, int, int]]] = defaultdict(list)  # event id -> messages
        self.owner_pending: dict[int, bool] = {}  # broker -> its own subscriptions changed since its last delta
        self._distance: dict[int, dict[int, int]] = {}

    def fork(self) -> Rounds:
        """A copy for a forked network (`sim.Network.fork`); the plan, once made, is never changed and is shared."""
        forked = Rounds.__new__(Rounds)
        forked.__dict__.update(self.__dict__)
        forked.finished, forked.owner_pending, forked._distance = set(self.finished), dict(self.owner_pending), dict(self._distance)
        forked.journeys = defaultdict(list, {eid: list(messages) for eid, messages in self.journeys.items()})
        return forked

    def canonical_state(self) -> tuple:
        """What the brokers' future depends on, without the counters only reports read (`deferred`), the distance
        cache and what the brokers' own states say already (`owner_pending`) (`subsum explore`'s fingerprint,
        spec/12 DEF-EXP-3). The plan is fixed once made, so whether it was made stands for it. Each journey is kept
        as a multiset: brokers append to it as they send, so two deliveries at two brokers append in either order,
        and after its own publication's move only its messages' counts are read (the ROUTE hops)."""
        journeys = frozenset((eid, frozenset(Counter(messages).items())) for eid, messages in self.journeys.items())
        return (self.plan is not None, self.round, frozenset(self.finished), self.timer, self.stalled, journeys)

    def current_plan(self, overlay) -> Plan:
        """The plan, computed from the overlay the first time it is needed and then fixed."""
        if self.plan is None:
            self.plan = plan(overlay.adjacent)
        return self.plan

    def forget_distances(self) -> None:
        self._distance.clear()

    def distance(self, a: int, b: int, out) -> int:
        """Overlay links between brokers a and b (the brokers' count if unreachable)."""
        if a not in self._distance:
            self._distance[a] = distances(out.overlay.adjacent, a)
        return self._distance[a].get(b, len(out.brokers()))

    # --- the round clock ------------------------------------------------------------------
    def wake(self, out) -> None:
        """Something changed: make sure a round starts at the next period boundary."""
        if self.timer is None:
            period = self.options["period"]
            self.timer = (out.now // period + 1) * period
            out.shared_timer(self.timer, "start_round")

    def start_round(self, out) -> None:
        self.timer = None
        brokers = set(out.brokers())
        if brokers != set(self.current_plan(out.overlay).degree):  # before the deferral: a newcomer would never finish a round
            raise NetworkError("the summaries protocol runs on a fixed set of brokers: one joined or left after propagation started")
        if self.round >= 0 and self.finished != brokers:
            self.deferred += 1  # DEF-SR-4: a round starts only when the last one is finished everywhere
            self.stalled += 1
            if self.stalled > STALL_LIMIT:
                raise NetworkError(f"propagation round {self.round} has not finished after {STALL_LIMIT} periods "
                                   f"(brokers {sorted(brokers - self.finished)} are not done)")
            self.wake(out)
            return
        self.round += 1
        self.stalled = 0
        self.finished = set()
        out.tell_every_broker("begin_round", self.round)

    def broker_finished(self, b: int, out) -> None:
        self.finished.add(b)
        brokers = out.brokers()
        if self.finished == set(brokers) and any(self.owner_pending.get(x, False) for x in brokers):
            self.wake(out)
