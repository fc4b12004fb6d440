"""BruteForce (seed 001 §3.1): every subscription against every event,
Definition 9 read directly, with a name -> attribute hash per event."""

from __future__ import annotations

from typing import Any, Iterable

from subsum.core.types import Event
from subsum.impl.matching.base import Engine
from subsum.impl.matching.ops import HOLDS, ConstraintKey


class BruteForceEngine(Engine):
    name = "brute"

    def __init__(self, subscriptions=(), **options):
        self._subs: dict[int, tuple[tuple[str, str, Any, object], ...]] = {}
        super().__init__(subscriptions, **options)

    def _insert(self, slot: int, keys: tuple[ConstraintKey, ...]) -> None:
        self._subs[slot] = tuple((type_, name, HOLDS[op], value) for type_, name, op, value in keys)

    def _delete(self, slot: int) -> None:
        del self._subs[slot]

    def _match_slots(self, events: list[Event]) -> Iterable[list[int]]:
        subs = list(self._subs.items())
        evaluations = 0
        results = []
        for event in events:
            by_name = {a.name: a for a in event.attributes}
            matched = []
            for slot, constraints in subs:
                for type_, name, holds, value in constraints:
                    evaluations += 1
                    a = by_name.get(name)
                    if a is None or a.type != type_ or not holds(a.value, value):
                        break
                else:
                    matched.append(slot)
            results.append(matched)
        self.stats.counter_increments += evaluations
        return results
