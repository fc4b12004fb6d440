"""RABasedMatching (seed 001 §2): ICCounting's index, probed once per
distinct attribute of the whole batch.

1. Merge the batch into distinct attributes (Def 5: equal type, name and
   value), each with the list of events that hold it (the AEList).
2. Probe the index once per distinct attribute; the satisfied constraints'
   subscription lists (the CSList entries) are concatenated once.
3. For every event holding the attribute, count those subscriptions. The
   counters are the SEList: the paper keeps, per subscription, a list of
   (event, count) nodes; here each event gets a hash of (subscription,
   count), filled from the satisfied lists of its attributes. That is the
   same count matrix read the other way, with O(1) updates instead of the
   paper's linear node search.
4. E matches S iff count(S, E) = n_S, the number of distinct constraints of S.

The counter increments equal per-event ICCounting's exactly; only the index
probes shrink, from attribute occurrences to distinct attributes.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import Iterable

from subsum.core.types import Event
from subsum.impl.matching.indexed import IndexedEngine


class RABEngine(IndexedEngine):
    name = "rab"

    def _match_slots(self, events: list[Event]) -> Iterable[list[int]]:
        # 1. AEList: distinct (type, name, value) -> indices of the events holding it.
        ae: dict[tuple, list[int]] = {}
        for i, event in enumerate(events):
            for a in event.attributes:
                key = (a.type, a.name, a.value)
                held = ae.get(key)
                if held is None:
                    ae[key] = [i]
                else:
                    held.append(i)
        probe = self._index.probe
        per_event: list[list[list[int]]] = [[] for _ in events]
        lookups = increments = 0
        for (type_, name, value), held in ae.items():
            # 2. One probe per distinct attribute.
            satisfied: list[list[int]] = []
            lookups += probe(type_, name, value, satisfied)
            if not satisfied:
                continue
            slots = satisfied[0] if len(satisfied) == 1 else list(chain.from_iterable(satisfied))
            increments += len(slots) * len(held)
            # 3. Hand the satisfied subscriptions to every event that holds the attribute.
            for i in held:
                per_event[i].append(slots)
        self.stats.index_lookups += lookups
        self.stats.counter_increments += increments
        size = self._size
        # 4. Count, per event, and keep the subscriptions with n_ij = n_i.
        results = []
        for lists in per_event:
            counts = Counter(chain.from_iterable(lists))
            results.append([slot for slot, n in counts.items() if n == size[slot]])
        return results
