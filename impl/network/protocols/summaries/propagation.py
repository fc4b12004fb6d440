"""Summary propagation in rounds, one broker's part (seed 000 §4.3,
Algorithm 4-2; spec/08-summary-routing.md DEF-SR-1, DEF-SR-4).

In each round a broker takes its own delta, waits for the deltas of its
plan children (SUMMARY in round 0, DELTA after), joins them, sends the
join to its plan target with the Merged_Brokers list, and applies it to
its history summary. A deletion that needs rows rebuilt first asks the
owners of the IDs involved (DELETE-QUERY) and waits for their answers
(DELETE-ANSWER, method 1) before the next one is applied.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Mapping

from subsum.impl.network.actor import Out
from subsum.impl.network.messages import DeleteAnswer, DeleteQuery, SummaryDelta
from subsum.impl.network.protocols.summaries.ownership import Ownership
from subsum.impl.network.protocols.summaries.rounds import Rounds
from subsum.impl.summary import History, Summary
from subsum.impl.summary.summary import Delta
from subsum.impl.summary.wire import to_bytes


def send_out_of_band(out: Out, rounds: Rounds, src: int, dst: int, kind: str, payload, eid: int | None = None) -> None:
    """Broker src sends to any broker, out of band, counting the overlay links the message would cross and, for an
    event's messages, its journey."""
    out.count("overlay_hops", kind, rounds.distance(src, dst, out))
    if eid is not None and out.setting("record_crossings"):
        rounds.journeys[eid].append((kind, src, dst))
    out.send_direct(dst, kind, payload)


class Propagation:
    """One broker's history summary and its state in the current round."""

    __slots__ = ("bid", "ownership", "history", "round", "waiting_for", "collected", "join",
                 "deletions", "queried", "asked", "answers")

    def __init__(self, bid: int, ownership: Ownership) -> None:
        """The network's `Rounds` (the plan, the clock, the journeys) are read as `out.shared` by each step."""
        self.bid, self.ownership = bid, ownership
        self.history: Summary = History.of(ownership.summary.export())
        self.round = -1
        self.waiting_for: set[int] = set()  # plan children whose delta of this round has not come
        self.collected: list[Delta] = []
        self.join: Delta | None = None  # this round's joined delta, being applied
        self.deletions: list = []  # its deletions not applied yet
        self.queried = False  # the owners have been asked about the first of `deletions`
        self.asked: set[int] = set()  # owners whose DELETE-ANSWER is awaited
        self.answers: dict = defaultdict(list)  # key -> [(id, constraint)] answered so far

    @property
    def merged(self) -> set[int]:
        """Merged_Brokers: the brokers whose subscriptions the history holds."""
        return self.history.merged_brokers

    def begin_round(self, r: int, out: Out) -> None:
        self.round = r
        self.waiting_for = set(out.shared.current_plan(out.overlay).children[self.bid])
        self.collected = [self.ownership.summary.take_delta()]
        out.shared.owner_pending[self.bid] = self.ownership.has_pending()
        if not self.waiting_for:
            self.pass_on(out)

    def delta_received(self, src: int, update: SummaryDelta, out: Out) -> None:
        if update.round != self.round or src not in self.waiting_for:
            out.count("violations", f"{'DELTA' if update.round else 'SUMMARY'} out of round")
            return
        self.waiting_for.discard(src)
        self.collected.append(update.delta)
        self.history.merged_brokers |= update.merged
        if not self.waiting_for:
            self.pass_on(out)

    def pass_on(self, out: Out) -> None:
        """All deltas of the round are in: join them, send the join to the plan target, apply it here."""
        rounds: Rounds = out.shared
        insertions = Summary(rounds.layout, rounds.schema, rounds.options["virtual"])
        deletions = []
        for delta in self.collected:
            insertions.union_rows(delta.insertions)
            deletions += delta.deletions
        self.collected = []
        insertions.merged_brokers = set(self.merged)  # the list travels with the summary (and is sized with it)
        self.join = Delta(self.bid, insertions, deletions)
        target = rounds.current_plan(out.overlay).target[self.bid]
        if target is not None:
            kind = "SUMMARY" if self.round == 0 else "DELTA"
            out.count("payload_bytes", kind, len(to_bytes(insertions)) + len(deletions) * rounds.layout.id_bytes)
            out.send(target, kind, SummaryDelta(self.round, self.join, frozenset(self.merged)))
        self.deletions = list(deletions)
        self.apply_deletions(out)

    def apply_deletions(self, out: Out) -> None:
        """Apply the join's deletions one by one; one that needs rows rebuilt
        first asks the owners (method 1) and waits for their answers."""
        while self.deletions:
            sid, abstract = self.deletions[0]
            if not self.queried:
                self.queried = True
                self.ask_owners(self.history.rebuilds_for(sid, abstract), out)
                if self.asked:
                    return  # answer_received resumes here once every owner has answered
            self.history.remove_member(sid, abstract, self.answered)
            self.deletions.pop(0)
            self.answers.clear()
            self.queried = False
        assert self.join is not None
        self.history.union_rows(self.join.insertions)
        self.join = None
        out.shared.broker_finished(self.bid, out)

    def ask_owners(self, rebuilds: dict, out: Out) -> None:
        layout = out.shared.layout
        per_owner: dict[int, dict] = defaultdict(dict)
        for key, ids in rebuilds.items():
            for sid in ids:
                per_owner[layout.broker_of(sid)].setdefault(key, set()).add(sid)
        for o in sorted(per_owner):
            if o == self.bid:
                self.add_answers(self.ownership.answer(per_owner[o]))
            else:
                self.asked.add(o)
                send_out_of_band(out, out.shared, self.bid, o, "DELETE-QUERY", DeleteQuery(self.round, per_owner[o]))

    def add_answers(self, answer: Mapping) -> None:
        for key, pairs in answer.items():
            self.answers[key] += pairs

    def answered(self, key, ids) -> list:
        """The resolver `remove_member` calls: the owners' answers for these IDs."""
        return [(sid, n) for sid, n in self.answers.get(key, ()) if sid in ids]

    def query_received(self, src: int, query: DeleteQuery, out: Out) -> None:
        if query.round != self.round:  # the owner has moved on: its answer could name a reused slot
            out.count("violations", "DELETE-QUERY out of round")
        send_out_of_band(out, out.shared, self.bid, src, "DELETE-ANSWER", DeleteAnswer(query.round, self.ownership.answer(query.query)))

    def answer_received(self, src: int, answer: DeleteAnswer, out: Out) -> None:
        if answer.round != self.round or src not in self.asked:
            out.count("violations", "DELETE-ANSWER out of round")
            return
        self.asked.discard(src)
        self.add_answers(answer.answer)
        if not self.asked:
            self.apply_deletions(out)
