"""Counting (Yan & Garcia-Molina; seed 001 §3.1).

Distinct constraints are shared between subscriptions (the CSList). The
constraints are grouped by the (type, name) they constrain; for each
attribute of an event, every distinct constraint of its group is evaluated
once, with no sorting and no containment pruning, and each satisfied one
increments the counter of every subscription that holds it. A subscription
matches when its counter equals its number of distinct constraints. Events
are Maps (DEF-DATA-4), so each constraint is satisfied at most once per event.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import Iterable

from subsum.core.types import Event
from subsum.impl.matching.base import ConstraintTable, Engine
from subsum.impl.matching.ops import HOLDS, ConstraintKey


class CountingEngine(Engine):
    name = "counting"

    def __init__(self, subscriptions=(), **options):
        self._table = ConstraintTable()
        # (type, name) -> {cid: (holds, value, subscription slots)}
        self._groups: dict[tuple[str, str], dict[int, tuple]] = {}
        super().__init__(subscriptions, **options)

    def _insert(self, slot: int, keys: tuple[ConstraintKey, ...]) -> None:
        for cid, (type_, name, op, value) in self._table.insert(slot, keys):
            group = self._groups.setdefault((type_, name), {})
            group[cid] = (HOLDS[op], value, self._table.subs_of[cid])

    def _delete(self, slot: int) -> None:
        for cid, (type_, name, _op, _value) in self._table.delete(slot):
            group = self._groups[(type_, name)]
            del group[cid]
            if not group:
                del self._groups[(type_, name)]

    def _match_slots(self, events: list[Event]) -> Iterable[list[int]]:
        groups = self._groups
        size = self._size
        lookups = increments = 0
        results = []
        for event in events:
            satisfied = []
            for a in event.attributes:
                lookups += 1
                group = groups.get((a.type, a.name))
                if group is None:
                    continue
                v = a.value
                for holds, w, subs in group.values():
                    if holds(v, w):
                        satisfied.append(subs)
            counts = Counter(chain.from_iterable(satisfied))
            increments += sum(map(len, satisfied))
            results.append([slot for slot, n in counts.items() if n == size[slot]])
        self.stats.index_lookups += lookups
        self.stats.counter_increments += increments
        return results
