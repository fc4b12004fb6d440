"""The engine interface and the bookkeeping every engine shares.

Subscriptions get dense integer slots; `match_batch` turns slots back into
IDs. The empty subscription matches every event (DEF-MATCH-2); counting
never creates a counter for it (seed 001 §5.2), so the base class adds it
for every engine.
"""

from __future__ import annotations

from typing import Iterable, Sequence, cast

import attrs

from subsum.core.types import Event, Subscription
from subsum.impl.matching.ops import ConstraintKey


@attrs.define
class MatchStats:
    """Work counters, summed over every `match_batch` call since `reset`."""

    batches: int = 0
    events: int = 0
    #: Attribute occurrences in the batches.
    attributes: int = 0
    #: Distinct (type, name, value) attributes, counted per batch (seed 001 Def 5).
    distinct_attributes: int = 0
    #: Probes of an index: a hash lookup, one binary search, or one scan of a constraint list.
    index_lookups: int = 0
    #: Increments of a (subscription, event) counter; for `brute` and the
    #: vectorized engine's check phase, constraint evaluations.
    counter_increments: int = 0
    #: (event, subscription) pairs matched.
    matches: int = 0

    @property
    def distinct_share(self) -> float:
        """Distinct attributes / attribute occurrences (1.0 means no redundancy)."""
        return self.distinct_attributes / self.attributes if self.attributes else 1.0

    def to_json(self) -> dict:
        data = attrs.asdict(self)
        data["distinct_share"] = round(self.distinct_share, 6)
        return data

    def reset(self) -> None:
        for field in attrs.fields(MatchStats):
            setattr(self, field.name, 0)


def constraint_keys(subscription: Subscription) -> tuple[ConstraintKey, ...]:
    """The distinct constraints of a subscription as (type, name, op, value) keys."""
    return tuple((c.type, c.name, c.op, c.value) for c in subscription.constraints)


def count_distinct_attributes(events: Sequence[Event]) -> tuple[int, int]:
    """(attribute occurrences, distinct (type, name, value) attributes) of a batch."""
    seen: set[ConstraintKey] = set()
    total = 0
    for event in events:
        total += len(event.attributes)
        seen.update((a.type, a.name, a.value) for a in event.attributes)
    return total, len(seen)


class Engine:
    """One interface for every engine (see the package docstring)."""

    name = "engine"

    def __init__(self, subscriptions: Iterable[tuple[str, Subscription]] = (), count_distinct: bool = True):
        self.stats = MatchStats()
        #: Count the batch's distinct attributes into `stats`. This is a property
        #: of the batch, not of the engine's work; benchmarks switch it off so
        #: that no engine pays for it in its timed path.
        self.count_distinct = count_distinct
        self._ids: list[str | None] = []  # slot -> id; None once removed
        self._slot: dict[str, int] = {}  # id -> slot
        self._size: list[int] = []  # slot -> number of distinct constraints (SEList header n_j)
        self._empty: set[int] = set()  # slots of empty subscriptions
        for sid, subscription in subscriptions:
            self.add(sid, subscription)

    @classmethod
    def from_columns(cls, columns, **options) -> "Engine":
        """The engine over a `subscription_columns.SubscriptionColumns`: here
        through its Subscription objects; the vectorized and compiled engines
        build their index from the columns in bulk."""
        columns.check()
        return cls(columns.to_subscriptions(), **options)

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, sid: str) -> bool:
        return sid in self._slot

    def add(self, sid: str, subscription: Subscription) -> None:
        """Add one subscription. Raises ValueError if the ID is already present."""
        if sid in self._slot:
            raise ValueError(f"subscription {sid!r} is already present")
        slot = len(self._ids)
        keys = constraint_keys(subscription)
        self._ids.append(sid)
        self._slot[sid] = slot
        self._size.append(len(keys))
        if keys:
            self._insert(slot, keys)
        else:
            self._empty.add(slot)

    def remove(self, sid: str) -> None:
        """Remove one subscription. Raises KeyError if the ID is unknown."""
        try:
            slot = self._slot.pop(sid)
        except KeyError:
            raise KeyError(f"no subscription {sid!r} to remove") from None
        self._ids[slot] = None
        if slot in self._empty:
            self._empty.discard(slot)
        else:
            self._delete(slot)

    def prepare(self) -> None:
        """Build whatever the engine builds lazily, so that a benchmark can time
        building and matching apart. A no-op for the incremental engines."""

    def match_batch(self, events: Sequence[Event]) -> list[set[str]]:
        """Per event, in input order, the set of IDs of the subscriptions it matches."""
        events = list(events)
        self.stats.batches += 1
        self.stats.events += len(events)
        if self.count_distinct:
            total, distinct = count_distinct_attributes(events)
            self.stats.attributes += total
            self.stats.distinct_attributes += distinct
        ids = cast(list[str], self._ids)  # the slots matched or empty are live: their IDs are set
        empty = [ids[slot] for slot in self._empty]
        results = []
        for slots in self._match_slots(events):
            matched = {ids[slot] for slot in slots}
            matched.update(empty)
            results.append(matched)
        self.stats.matches += sum(len(r) for r in results)
        return results

    # Hooks for the engines. Slots given to `_insert` hold at least one constraint.
    def _insert(self, slot: int, keys: tuple[ConstraintKey, ...]) -> None:
        raise NotImplementedError

    def _delete(self, slot: int) -> None:
        raise NotImplementedError

    def _match_slots(self, events: list[Event]) -> Iterable[Iterable[int]]:
        """Per event, the slots of the non-empty subscriptions it matches."""
        raise NotImplementedError


class ConstraintTable:
    """Seed 001's CSList: each distinct constraint gets an integer ID, with the
    list of subscription slots that hold it. Shared by the counting engines."""

    def __init__(self) -> None:
        self.cid_of: dict[ConstraintKey, int] = {}
        self.key_of: dict[int, ConstraintKey] = {}
        self.subs_of: dict[int, list[int]] = {}
        self.keys_of_slot: dict[int, tuple[ConstraintKey, ...]] = {}
        self._next = 0

    def insert(self, slot: int, keys: tuple[ConstraintKey, ...]) -> list[tuple[int, ConstraintKey]]:
        """Record the slot's constraints; return the (cid, key) pairs that are new."""
        self.keys_of_slot[slot] = keys
        created = []
        for key in keys:
            cid = self.cid_of.get(key)
            if cid is None:
                cid = self._next
                self._next += 1
                self.cid_of[key] = cid
                self.key_of[cid] = key
                self.subs_of[cid] = []
                created.append((cid, key))
            self.subs_of[cid].append(slot)
        return created

    def delete(self, slot: int) -> list[tuple[int, ConstraintKey]]:
        """Forget the slot; return the (cid, key) pairs no subscription holds any more."""
        dropped = []
        for key in self.keys_of_slot.pop(slot):
            cid = self.cid_of[key]
            subs = self.subs_of[cid]
            subs.remove(slot)
            if not subs:
                del self.cid_of[key], self.key_of[cid], self.subs_of[cid]
                dropped.append((cid, key))
        return dropped

    def __len__(self) -> int:
        return len(self.cid_of)
