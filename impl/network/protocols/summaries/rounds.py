"""What the brokers of summary-based routing share (spec/08-summary-routing.md
DEF-SR-4): the settings, the ID layout, the propagation plan, the round
clock, and each event's journey (for the checks).

Propagation runs in rounds, started on period boundaries: a round starts
only when the last one has finished at every broker, and only when some
owner has something new to propagate.
"""

from __future__ import annotations

from collections import Counter, defaultdict

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
    """The summaries brokers' shared state (`net.shared`): the settings, the
    ID layout, the propagation plan (fixed once propagation starts), the
    round clock, and each event's journey."""

    def __init__(self, net) -> None:
        self.options = protocol_settings("summaries", net.options, DEFAULTS, {"option": NEXT_BROKER_OPTIONS})
        if not self.options["period"] > 0:
            raise NetworkError(f"the summaries period must be > 0 ms, got {self.options['period']}")
        self.net = net
        self.schema = tuple(tuple(k) for k in self.options["schema"])
        self.layout = IdLayout(self.options["brokers"], self.options["max_subscriptions"], len(self.schema))
        self.plan: Plan | None = None
        self.round = -1  # the last round started
        self.finished: set[int] = set()  # brokers done with the current round
        self.timer: int | None = None
        self.deferred = 0  # round starts put off because the previous round was not finished
        self.stalled = 0  # consecutive put-off starts
        self.journeys: dict[int, list[tuple[str, int, int]]] = defaultdict(list)  # event id -> messages
        self._distance: dict[int, dict[int, int]] = {}

    def canonical_state(self) -> tuple:
        """What the brokers' future depends on, without the counters only reports read (`deferred`) and the
        distance cache (`subsum explore`'s fingerprint, spec/12 DEF-EXP-3). The plan is fixed once made, so
        whether it was made stands for it. Each journey is kept as a multiset: brokers append to it as they
        send, so two deliveries at two brokers append in either order, and after its own publication's move
        only its messages' counts are read (the ROUTE hops)."""
        journeys = frozenset((eid, frozenset(Counter(messages).items())) for eid, messages in self.journeys.items())
        return (self.plan is not None, self.round, frozenset(self.finished), self.timer, self.stalled, journeys)

    def current_plan(self) -> Plan:
        """The plan, computed from the overlay the first time it is needed and then fixed."""
        if self.plan is None:
            self.plan = plan(self.net.overlay.adjacent)
        return self.plan

    def forget_distances(self) -> None:
        self._distance.clear()

    def distance(self, a: int, b: int) -> int:
        """Overlay links between brokers a and b (the brokers' count if unreachable)."""
        if a not in self._distance:
            self._distance[a] = distances(self.net.overlay.adjacent, a)
        return self._distance[a].get(b, len(self.net.brokers))

    # --- the round clock ------------------------------------------------------------------
    def wake(self) -> None:
        """Something changed: make sure a round starts at the next period boundary."""
        if self.timer is None:
            period = self.options["period"]
            self.timer = self.net.at((self.net.now // period + 1) * period, self.start_round)

    def start_round(self) -> None:
        self.timer = None
        brokers = self.net.brokers
        if set(brokers) != set(self.current_plan().degree):  # before the deferral: a newcomer would never finish a round
            raise NetworkError("the summaries protocol runs on a fixed set of brokers: one joined or left after propagation started")
        if self.round >= 0 and self.finished != set(brokers):
            self.deferred += 1  # DEF-SR-4: a round starts only when the last one is finished everywhere
            self.stalled += 1
            if self.stalled > STALL_LIMIT:
                raise NetworkError(f"propagation round {self.round} has not finished after {STALL_LIMIT} periods "
                                   f"(brokers {sorted(set(brokers) - self.finished)} are not done)")
            self.wake()
            return
        self.round += 1
        self.stalled = 0
        self.finished = set()
        for b in sorted(brokers):
            brokers[b].begin_round(self.round)

    def broker_finished(self, b: int) -> None:
        self.finished.add(b)
        if self.finished == set(self.net.brokers) and any(broker.owner_changed() for broker in self.net.brokers.values()):
            self.wake()
