"""ICCounting (seed 001 §3.1; Carzaniga & Wolf 2003): counting over the
multi-level constraint index (`cindex`), run once per event."""

from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import Iterable

from subsum.core.types import Event
from subsum.impl.matching.base import ConstraintTable, Engine
from subsum.impl.matching.cindex import ConstraintIndex
from subsum.impl.matching.ops import ConstraintKey


class IndexedEngine(Engine):
    name = "indexed"

    def __init__(self, subscriptions=(), **options):
        self._table = ConstraintTable()
        self._index = ConstraintIndex()
        super().__init__(subscriptions, **options)

    def _insert(self, slot: int, keys: tuple[ConstraintKey, ...]) -> None:
        created = self._table.insert(slot, keys)
        for cid, key in created:
            self._index.add(key, self._table.subs_of[cid])
        new = {key for _cid, key in created}
        for key in keys:
            if key not in new:  # an existing constraint gained a subscription
                self._index.touched(key)

    def _delete(self, slot: int) -> None:
        keys = self._table.keys_of_slot[slot]
        dropped = {key for _cid, key in self._table.delete(slot)}
        for key in keys:
            if key in dropped:
                self._index.discard(key)
            else:  # an existing constraint lost a subscription
                self._index.touched(key)

    def _match_slots(self, events: list[Event]) -> Iterable[list[int]]:
        probe = self._index.probe
        size = self._size
        lookups = increments = 0
        results = []
        for event in events:
            satisfied: list[list[int]] = []
            for a in event.attributes:
                lookups += probe(a.type, a.name, a.value, satisfied)
            increments += sum(map(len, satisfied))
            counts = Counter(chain.from_iterable(satisfied))
            results.append([slot for slot, n in counts.items() if n == size[slot]])
        self.stats.index_lookups += lookups
        self.stats.counter_increments += increments
        return results
