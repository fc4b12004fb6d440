"""The bookkeeping the engines over DEF-MATCH-5's index share (vectorized,
compiled): the subscriptions' keys by slot, the index built lazily after a
change or in bulk from subscription columns (`from_columns`), and a
columnar batch matched into (event, slot) pairs (`match_columns`)."""

from __future__ import annotations

from typing import Iterable, cast

import numpy as np

from subsum.core.types import Event
from subsum.impl.matching.base import Engine
from subsum.impl.matching.columnar.batch import ColumnarBatch
from subsum.impl.matching.ops import ConstraintKey
from subsum.impl.matching.columnar.pivots import PivotIndex
from subsum.impl.matching.columnar.subscription_columns import SubscriptionColumns, keyed_columns


class PivotEngine(Engine):
    """An engine over a `pivots.PivotIndex`, rebuilt after a change of the
    subscriptions; subclasses match a columnar batch (`_match_pairs`)."""

    def __init__(self, subscriptions=(), **options):
        self._keys: dict[int, tuple[ConstraintKey, ...]] = {}  # live non-empty slot -> its constraint keys
        self._keys_from_index = False  # built from columns: `_keys` is read back from the index at the first change
        self._compiled: PivotIndex | None = None
        super().__init__(subscriptions, **options)

    @classmethod
    def from_columns(cls, columns: SubscriptionColumns, **options) -> "PivotEngine":
        """The engine over subscription columns, their index built in bulk
        (`pivots.PivotIndex`) without a Python object per constraint.
        Raises ValueError if the columns are not valid subscriptions."""
        columns.check()
        engine = cls((), **options)
        engine._keys_from_index = True
        engine._compiled = PivotIndex.from_columns(columns)
        engine._ids = list(columns.ids)
        engine._slot = {sid: slot for slot, sid in enumerate(columns.ids)}
        engine._size = engine._compiled.size.tolist()
        engine._empty = {slot for slot, size in enumerate(engine._size) if size == 0}
        return engine

    def _materialize(self) -> None:
        """Before a change to an engine built from columns: its subscriptions as keys, read back from its index."""
        if self._keys_from_index:
            self._keys = cast(PivotIndex, self._compiled).slot_keys()
            self._keys_from_index = False

    def _insert(self, slot: int, keys: tuple[ConstraintKey, ...]) -> None:
        self._materialize()
        self._keys[slot] = keys
        self._compiled = None

    def _delete(self, slot: int) -> None:
        self._materialize()
        del self._keys[slot]
        self._compiled = None

    def prepare(self) -> None:
        if self._compiled is None:
            names, strings, columns = keyed_columns(self._keys)
            self._compiled = PivotIndex(names, strings, columns, len(self._ids))

    def _match_slots(self, events: list[Event]) -> Iterable[list[int]]:
        ev, slot = self._match_pairs(ColumnarBatch.from_events(events))
        results: list[list[int]] = [[] for _ in events]
        for e, s in zip(ev.tolist(), slot.tolist()):
            results[e].append(s)
        return results

    def match_columns(self, batch: ColumnarBatch) -> tuple[np.ndarray, np.ndarray]:
        """The matching (event index, subscription slot) pairs of a columnar batch,
        empty subscriptions included. `self.ids(slots)` maps slots to IDs.
        Raises ValueError if the batch is not well formed (`ColumnarBatch.check`)."""
        batch.check()
        self.stats.batches += 1
        self.stats.events += batch.n_events
        self.stats.attributes += batch.n_attributes
        if self.count_distinct:
            self.stats.distinct_attributes += batch.distinct_attributes()
        ev, slot = self._match_pairs(batch)
        if self._empty:
            empty = np.array(sorted(self._empty), np.int64)
            ev = np.concatenate([ev, np.repeat(np.arange(batch.n_events, dtype=np.int64), len(empty))])
            slot = np.concatenate([slot, np.tile(empty, batch.n_events)])
        self.stats.matches += len(ev)
        return ev, slot

    def ids(self, slots: np.ndarray) -> list[str]:
        return [self._ids[s] for s in slots.tolist()]

    def _match_pairs(self, batch: ColumnarBatch) -> tuple[np.ndarray, np.ndarray]:
        """The matching (event index, slot) pairs of the non-empty subscriptions."""
        raise NotImplementedError
