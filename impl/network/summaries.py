"""Summary-based routing on the simulator (seed 000 §4.3; spec/08-summary-routing.md
DEF-SR-4), registered as protocol "summaries".

- Every broker owns its clients' subscriptions (`OwnerSummary`, c1 = its
  id) and keeps a history summary of the brokers in its Merged_Brokers list.
- Propagation runs in rounds (`Rounds`, the brokers' shared clock): each
  broker joins its own delta with its plan children's and sends the join to
  its plan target (SUMMARY in round 0, DELTA after), then applies it to its
  history. A deletion that needs a row rebuilt asks the owners
  (DELETE-QUERY / DELETE-ANSWER, method 1) before the next one is applied.
- Events go by BROCLI routing: ROUTE to the next broker, DELIVER to each
  owner of a matched ID not yet checked; the owner re-checks and hands the
  event to its clients. ROUTE, DELIVER and the DELETE messages go out of
  band (any broker can address any broker); SUMMARY and DELTA over links.

Protocol settings (`Network(options=...)`): `period` (ms between rounds),
`schema` (the attribute keys, fixed up front: c3 has one bit per key),
`brokers` and `max_subscriptions` (the ID layout), `virtual`, and `option`
("a" or "b", the next-broker rule).
"""

from __future__ import annotations

from collections import defaultdict
from typing import cast

from subsum.core.types import Event, Subscription
from subsum.impl.network.overlay import NetworkError
from subsum.impl.network.protocol import Broker, handles, register
from subsum.impl.network.summary_plan import Plan, distances, next_broker, plan
from subsum.impl.network.transport import CLIENT_BASE
from subsum.impl.summary import History, IdLayout, OwnerSummary, Summary
from subsum.impl.summary.summary import Delta
from subsum.impl.summary.wire import to_bytes

#: the attribute keys of `subsum simulate`'s workload (x > k, s prefix "L")
DEFAULT_SCHEMA = (("s", "string"), ("x", "int"))
STALL_LIMIT = 1000  # periods a round may overrun before the run stops as stuck
DEFAULTS = {"period": 100.0, "schema": DEFAULT_SCHEMA, "brokers": 1024, "max_subscriptions": 4096, "virtual": "none", "option": "a"}


class Rounds:
    """What the summaries brokers share: the settings, the ID layout, the
    propagation plan (fixed once propagation starts), the round clock, and
    each event's journey (for the checks)."""

    def __init__(self, net) -> None:
        unknown = set(net.options) - set(DEFAULTS)
        if unknown:
            raise NetworkError(f"unknown summaries option(s) {sorted(unknown)}; expected some of {sorted(DEFAULTS)}")
        self.options = {**DEFAULTS, **net.options}
        if not self.options["period"] > 0:
            raise NetworkError(f"the summaries period must be > 0 ms, got {self.options['period']}")
        if self.options["option"] not in ("a", "b"):
            raise NetworkError(f"the next-broker option must be 'a' or 'b', got {self.options['option']!r}")
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
        if self.round >= 0 and self.finished != set(brokers):
            self.deferred += 1  # DEF-SR-4: a round starts only when the last one is finished everywhere
            self.stalled += 1
            if self.stalled > STALL_LIMIT:
                raise NetworkError(f"propagation round {self.round} has not finished after {STALL_LIMIT} periods "
                                   f"(brokers {sorted(set(brokers) - self.finished)} are not done)")
            self.wake()
            return
        if set(brokers) != set(self.current_plan().degree):
            raise NetworkError("the summaries protocol runs on a fixed set of brokers: one joined or left after propagation started")
        self.round += 1
        self.stalled = 0
        self.finished = set()
        for b in sorted(brokers):
            brokers[b].begin_round(self.round)

    def broker_finished(self, b: int) -> None:
        self.finished.add(b)
        if self.finished == set(self.net.brokers) and any(broker.owner_changed() for broker in self.net.brokers.values()):
            self.wake()


@register("summaries")
class SummaryBroker(Broker):
    """One broker of summary-based routing (DEF-SR-4)."""

    __slots__ = ("owner", "history", "names", "client_of", "round", "waiting_for", "collected", "deletions",
                 "join", "queried", "asked", "answers", "subscribed_count")

    def __init__(self, bid: int, net) -> None:
        super().__init__(bid, net)
        rounds = cast(Rounds, net.shared)
        if not 0 <= bid < rounds.layout.brokers:
            raise NetworkError(f"broker {bid} does not fit the summaries' ID layout, which numbers brokers 0 .. "
                               f"{rounds.layout.brokers - 1} (the 'brokers' option)")
        self.owner = OwnerSummary(bid, rounds.layout, rounds.schema, rounds.options["virtual"])
        self.history: Summary = History.of(self.owner.export())
        self.names: dict[tuple[int, Subscription], str] = {}  # (client, filter) -> subscription name at the owner
        self.client_of: dict[int, int] = {}  # subscription ID -> client
        self.subscribed_count = 0
        self.round = -1
        self.waiting_for: set[int] = set()  # plan children whose delta of this round has not come
        self.collected: list[Delta] = []
        self.join: Delta | None = None  # this round's joined delta, being applied
        self.deletions: list = []  # its deletions not applied yet
        self.queried = False  # the owners have been asked about the first of `deletions`
        self.asked: set[int] = set()  # owners whose DELETE-ANSWER is awaited
        self.answers: dict = defaultdict(list)  # key -> [(id, constraint)] answered so far
        rounds.wake()

    @classmethod
    def shared_state(cls, net) -> Rounds:
        return Rounds(net)

    @property
    def rounds(self) -> Rounds:
        return cast(Rounds, self.net.shared)

    @property
    def merged(self) -> set[int]:
        """Merged_Brokers: the brokers whose subscriptions the history holds."""
        return self.history.merged_brokers

    def owner_changed(self) -> bool:
        return self.owner.has_pending()

    # --- clients ----------------------------------------------------------------------------
    @handles("SUB")
    def subscribed(self, client: int, f: Subscription) -> None:
        if (client, f) in self.names:
            return  # a client holds a filter once (DEF-NET-2): subscribing again changes nothing
        self.subscribed_count += 1
        name = f"{client}:{self.subscribed_count}"
        sid = self.owner.add(name, f)
        self.names[(client, f)] = name
        if sid is not None:
            self.client_of[sid] = client
        self.rounds.wake()

    @handles("UNSUB")
    def unsubscribed(self, client: int, f: Subscription) -> None:
        name = self.names.pop((client, f), None)
        if name is not None:
            sid = self.owner.remove(name)
            if sid is not None:
                self.client_of.pop(sid, None)
            self.rounds.wake()

    # --- propagation (Algorithm 4-2 in rounds) ----------------------------------------------
    def begin_round(self, r: int) -> None:
        self.round = r
        self.waiting_for = set(self.rounds.current_plan().children[self.id])
        self.collected = [self.owner.take_delta()]
        if not self.waiting_for:
            self.pass_on()

    @handles("SUMMARY")
    def summary_received(self, src: int, payload) -> None:
        self.delta_received(src, payload)

    @handles("DELTA")
    def delta_received(self, src: int, payload) -> None:
        r, delta, merged = payload
        if r != self.round or src not in self.waiting_for:
            self.net.ledger.violations[f"{'DELTA' if r else 'SUMMARY'} out of round"] += 1
            return
        self.waiting_for.discard(src)
        self.collected.append(delta)
        self.history.merged_brokers |= merged
        if not self.waiting_for:
            self.pass_on()

    def pass_on(self) -> None:
        """All deltas of the round are in: join them, send the join to the plan target, apply it here."""
        rounds = self.rounds
        insertions = Summary(rounds.layout, rounds.schema, rounds.options["virtual"])
        deletions = []
        for delta in self.collected:
            insertions.union_rows(delta.insertions)
            deletions += delta.deletions
        self.collected = []
        insertions.merged_brokers = set(self.merged)  # the list travels with the summary (and is sized with it)
        self.join = Delta(self.id, insertions, deletions)
        target = rounds.current_plan().target[self.id]
        if target is not None:
            kind = "SUMMARY" if self.round == 0 else "DELTA"
            ledger = self.net.ledger
            ledger.payload_bytes[kind] += len(to_bytes(insertions)) + len(deletions) * rounds.layout.id_bytes
            self.net.send(self.id, target, kind, (self.round, self.join, frozenset(self.merged)))
        self.deletions = list(deletions)
        self.apply_deletions()

    def apply_deletions(self) -> None:
        """Apply the join's deletions one by one; one that needs rows rebuilt
        first asks the owners (method 1) and waits for their answers."""
        while self.deletions:
            sid, abstract = self.deletions[0]
            if not self.queried:
                self.queried = True
                self.ask_owners(self.history.rebuilds_for(sid, abstract))
                if self.asked:
                    return  # delete_answer resumes here once every owner has answered
            self.history.remove_member(sid, abstract, self.answered)
            self.deletions.pop(0)
            self.answers.clear()
            self.queried = False
        assert self.join is not None
        self.history.union_rows(self.join.insertions)
        self.join = None
        self.rounds.broker_finished(self.id)

    def ask_owners(self, rebuilds: dict) -> None:
        layout = self.rounds.layout
        per_owner: dict[int, dict] = defaultdict(dict)
        for key, ids in rebuilds.items():
            for sid in ids:
                per_owner[layout.broker_of(sid)].setdefault(key, set()).add(sid)
        for o in sorted(per_owner):
            if o == self.id:
                self.add_answers(self.owner_answer(per_owner[o]))
            else:
                self.asked.add(o)
                self.send_out_of_band(o, "DELETE-QUERY", (self.round, per_owner[o]))

    def owner_answer(self, query: dict) -> dict:
        return {key: self.owner.members_of(key, ids) for key, ids in sorted(query.items())}

    def add_answers(self, answer: dict) -> None:
        for key, pairs in answer.items():
            self.answers[key] += pairs

    def answered(self, key, ids) -> list:
        """The resolver `remove_member` calls: the owners' answers for these IDs."""
        return [(sid, n) for sid, n in self.answers.get(key, ()) if sid in ids]

    @handles("DELETE-QUERY")
    def delete_query(self, src: int, payload) -> None:
        r, query = payload
        if r != self.round:  # the owner has moved on: its answer could name a reused slot
            self.net.ledger.violations["DELETE-QUERY out of round"] += 1
        self.send_out_of_band(src, "DELETE-ANSWER", (r, self.owner_answer(query)))

    @handles("DELETE-ANSWER")
    def delete_answer(self, src: int, payload) -> None:
        r, answer = payload
        if r != self.round or src not in self.asked:
            self.net.ledger.violations["DELETE-ANSWER out of round"] += 1
            return
        self.asked.discard(src)
        self.add_answers(answer)
        if not self.asked:
            self.apply_deletions()

    # --- routing (Algorithm 4-3) -------------------------------------------------------------
    @handles("EVENT")
    def published(self, client: int, payload: tuple[int, Event]) -> None:
        eid, event = payload
        self.route(eid, event, frozenset(), client)

    @handles("ROUTE")
    def routed(self, src: int, payload) -> None:
        eid, event, brocli, publisher = payload
        if self.id in brocli:
            self.net.ledger.violations["ROUTE to a checked broker"] += 1
        self.route(eid, event, brocli, publisher)

    def route(self, eid: int, event: Event, brocli: frozenset, publisher: int) -> None:
        rounds = self.rounds
        by_owner = self.unchecked_owners(self.history.match(event), brocli)
        for owner in sorted(by_owner):
            if owner == self.id:
                self.hand_to_clients(eid, event, by_owner[owner], publisher)
            else:
                self.send_out_of_band(owner, "DELIVER", (eid, event, frozenset(by_owner[owner]), publisher), eid)
        brocli = brocli | self.merged
        plan_ = rounds.current_plan()
        nxt = next_broker(self.net.overlay.adjacent, plan_.degree, self.id, brocli, rounds.options["option"])
        if nxt is not None:
            self.send_out_of_band(nxt, "ROUTE", (eid, event, brocli, publisher), eid)

    def unchecked_owners(self, matched, brocli: frozenset) -> dict[int, set[int]]:
        """The matched IDs by owner (c1), less the owners already in BROCLI:
        those have had the event from an earlier broker (the c1 filter)."""
        layout = self.rounds.layout
        by_owner: dict[int, set[int]] = defaultdict(set)
        for sid in matched:
            owner = layout.broker_of(sid)
            if owner not in brocli:
                by_owner[owner].add(sid)
        return by_owner

    @handles("DELIVER")
    def delivered(self, src: int, payload) -> None:
        eid, event, ids, publisher = payload
        self.hand_to_clients(eid, event, ids, publisher)

    def hand_to_clients(self, eid: int, event: Event, ids, publisher: int) -> None:
        """DEF-SUM-10: the owner's re-check, then each client holding a surviving subscription, once."""
        clients = {self.client_of[sid] for sid in self.owner.recheck(event, ids)} - {publisher}
        if clients:
            self.net.route_event(self.id, sorted(clients), eid, event)

    def send_out_of_band(self, dst: int, kind: str, payload, eid: int | None = None) -> None:
        self.net.ledger.overlay_hops[kind] += self.rounds.distance(self.id, dst)
        if eid is not None and self.net.ledger.record_crossings:
            self.rounds.journeys[eid].append((kind, self.id, dst))
        self.net.send_direct(self.id, dst, kind, payload)

    # --- the overlay is fixed once propagation has started ---------------------------------
    def link_added(self, n: int, rid: int | None = None) -> None:
        self.overlay_may_change(n)
        self.neighbors.add(n)

    def link_removed(self, n: int, rid: int | None = None, replacement: tuple | None = None) -> None:
        self.overlay_may_change(n)
        self.neighbors.discard(n)

    def overlay_may_change(self, n: int) -> None:
        if n >= CLIENT_BASE:
            return
        self.rounds.forget_distances()
        if self.rounds.plan is not None:
            raise NetworkError("the summaries protocol runs on a fixed overlay: links cannot change once propagation has started")
