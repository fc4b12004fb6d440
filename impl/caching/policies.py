"""Broker caches: one cache of K message slots per broker, with a pluggable
replacement ("priority") policy (seed 004 §3.4, seed 003 §3.4 and §4.6;
spec/09-caching.md DEF-CACHE-1 … 5).

Every policy has the same interface:

- `insert(m, now)` stores a first-time arrival and returns the evicted
  message, or None; inserting a message already cached changes nothing;
- `hit(ms, now)`: a request hit on the cached messages among `ms`;
- `unsubscribed(ms, now)`: the last local client of a subscription left,
  and `ms` are the messages matching it;
- `advance(now)` moves the cache's clock (`now`, the latest time seen);
- `order()` lists the cached messages head first, the next victim last,
  at the cache's clock.

Every operation takes the current time, which never goes back (the
caller's clock; rate-LFU reads it). Capacity None means unbounded.
The reference is `subsum.model.caching`, a list and a loop per policy;
these are the fast structures, checked against it by
`subsum.conformance.checks.caching.policies`:

- FIFO, regeneration/degradation and LRU keep an OrderedDict whose first
  key is the tail (the next victim) and last key the head: insert, evict
  and a k-entry hit or unsubscribe are O(1), O(1) and O(k log k);
- rate-LFU keeps the entries never requested (rate 0) apart in insertion
  order, so an eviction is O(1) amortized when one of them is older than
  `now`; otherwise it scans the requested entries, O(K). Rates change
  with the clock, so no static heap orders them (spec/09, DEF-CACHE-4).

>>> cache = FIFO(2)
>>> [cache.insert(m, 0.0) for m in ("m1", "m2", "m3")]
[None, None, 'm1']
>>> cache.order()
['m3', 'm2']
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Iterable

from subsum.core import plugins


class CachePolicy:
    """A cache of `capacity` messages (None: unbounded) under one replacement policy."""

    name = ""
    __slots__ = ("capacity", "now", "_entries")

    def __init__(self, capacity: int | None) -> None:
        if capacity is not None and capacity < 1:
            raise ValueError(f"cache capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.now = 0.0
        self._entries: OrderedDict[str, Any] = OrderedDict()  # first key: the tail, last key: the head

    def __contains__(self, m: object) -> bool:
        return m in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def full(self) -> bool:
        return self.capacity is not None and len(self._entries) >= self.capacity

    def advance(self, now: float) -> None:
        """The clock moves to `now`."""
        self.now = now

    def insert(self, m: str, now: float) -> str | None:
        """Store m with fresh metadata, evicting the policy's victim first when
        full; returns the victim. A cached m: no change."""
        self.now = now
        if m in self._entries:
            return None
        victim = self._evict(now) if self.full() else None
        self._admit(m, now)
        return victim

    def _evict(self, now: float) -> str:
        """Remove the victim and return it: the tail."""
        victim, _ = self._entries.popitem(last=False)
        return victim

    def _admit(self, m: str, now: float) -> None:
        """Store a new message at the head."""
        self._entries[m] = None

    def hit(self, messages: Iterable[str], now: float) -> None:
        """A request hit: FIFO changes nothing."""
        self.now = now

    def unsubscribed(self, messages: Iterable[str], now: float) -> None:
        """The last local client of a subscription left: only regeneration/degradation acts."""
        self.now = now

    def order(self) -> list[str]:
        """The cached messages, head first, the next victim last."""
        return list(reversed(self._entries))

    def metadata(self, m: str) -> dict:
        """The policy's bookkeeping for cached message m (spec/09 DEF-CACHE-1)."""
        return {}


class FIFO(CachePolicy):
    """DEF-CACHE-2: first-time arrivals at the head, eviction from the tail, hits change nothing."""

    name = "fifo"
    __slots__ = ()


class RegenerationDegradation(CachePolicy):
    """DEF-CACHE-3: FIFO; a request hit moves the matching messages to the
    head, the last unsubscribe moves its matching messages to the tail,
    each block keeping its relative order."""

    name = "regdeg"
    __slots__ = ("_position", "_head", "_tail")

    def __init__(self, capacity: int | None) -> None:
        super().__init__(capacity)
        self._position: dict[str, int] = {}  # ascending with the OrderedDict's order
        self._head = 0
        self._tail = 0

    def _evict(self, now: float) -> str:
        victim = super()._evict(now)
        del self._position[victim]
        return victim

    def _admit(self, m: str, now: float) -> None:
        self._entries[m] = None
        self._head += 1
        self._position[m] = self._head

    def _cached_in_order(self, messages: Iterable[str]) -> list[str]:
        position = self._position
        return sorted({m for m in messages if m in position}, key=position.__getitem__)

    def hit(self, messages: Iterable[str], now: float) -> None:
        self.now = now
        entries, position = self._entries, self._position
        for m in self._cached_in_order(messages):  # tail-most first: the block keeps its order at the head
            entries.move_to_end(m)
            self._head += 1
            position[m] = self._head

    def unsubscribed(self, messages: Iterable[str], now: float) -> None:
        self.now = now
        entries, position = self._entries, self._position
        for m in reversed(self._cached_in_order(messages)):  # head-most first: the block keeps its order at the tail
            entries.move_to_end(m, last=False)
            self._tail -= 1
            position[m] = self._tail


class LRU(CachePolicy):
    """DEF-CACHE-5: evict the entry with the largest now − last access, ties
    by the older access; a hit sets last access = now, several matching
    entries in their old recency order."""

    name = "lru"
    __slots__ = ()

    def _admit(self, m: str, now: float) -> None:
        self._entries[m] = now  # the last access

    def hit(self, messages: Iterable[str], now: float) -> None:
        self.now = now
        entries = self._entries
        wanted = {m for m in messages if m in entries}
        if len(wanted) == 1:
            (m,) = wanted
            entries.move_to_end(m)
            entries[m] = now
        elif wanted:
            for m in [m for m in entries if m in wanted]:  # old recency order, least recent first
                entries.move_to_end(m)
                entries[m] = now

    def metadata(self, m: str) -> dict:
        return {"last": self._entries[m]}


class RateLFU(CachePolicy):
    """DEF-CACHE-4: evict the entry with the smallest count / (now − start);
    a new entry has count 0 and start = now; a hit increments every
    matching entry. Zero age is rate +∞ (a just-inserted entry is
    protected); among equal rates the most recently inserted goes (seed
    003 §4.6)."""

    name = "lfu"
    __slots__ = ("_unrequested", "_requested", "_seq")
    #: the tie rule among equal rates: the most recently inserted goes (seed 003 §4.6); False: the oldest
    newest_first = True

    def __init__(self, capacity: int | None) -> None:
        super().__init__(capacity)
        self._unrequested: OrderedDict[str, None] = OrderedDict()  # count 0, in insertion order
        self._requested: dict[str, list] = {}  # count > 0: m -> [count, start, seq]
        self._seq = 0

    def _evict(self, now: float) -> str:
        victim = self._victim(now)
        self._forget(victim)
        return victim

    def _admit(self, m: str, now: float) -> None:
        self._seq += 1
        self._entries[m] = (now, self._seq)  # start, insertion sequence
        self._unrequested[m] = None

    def _forget(self, m: str) -> None:
        del self._entries[m]
        if self._requested.pop(m, None) is None:
            del self._unrequested[m]

    def _victim(self, now: float) -> str:
        entries, newest = self._entries, self.newest_first
        for m in reversed(self._unrequested) if newest else self._unrequested:  # rate 0 unless inserted at `now` (+inf)
            if entries[m][0] < now:
                return m
        best: str | None = None
        best_key = (math.inf, 0)
        for m, (count, start, seq) in self._requested.items():
            if now > start:
                key = (count / (now - start), -seq if newest else seq)
                if key < best_key:
                    best, best_key = m, key
        if best is not None:
            return best
        # every entry has age 0 (+inf): the tie rule picks among all, the last key of
        # `entries` or its first (admitted in sequence order, never reordered here)
        return next(reversed(entries)) if newest else next(iter(entries))

    def hit(self, messages: Iterable[str], now: float) -> None:
        self.now = now
        entries, requested = self._entries, self._requested
        for m in set(messages):
            if m not in entries:
                continue
            record = requested.get(m)
            if record is None:
                start, seq = entries[m]
                del self._unrequested[m]
                requested[m] = [1, start, seq]
            else:
                record[0] += 1

    def count(self, m: str) -> int:
        record = self._requested.get(m)
        return 0 if record is None else record[0]

    def rate(self, m: str, now: float) -> float:
        start = self._entries[m][0]
        return self.count(m) / (now - start) if now > start else math.inf

    def order(self) -> list[str]:
        """Highest rate first at the cache's clock, the next victim last (rates move with the clock)."""
        entries, now, sign = self._entries, self.now, -1 if self.newest_first else 1
        return sorted(entries, key=lambda m: (self.rate(m, now), sign * entries[m][1]), reverse=True)

    def metadata(self, m: str) -> dict:
        start, seq = self._entries[m]
        return {"count": self.count(m), "start": start}


class RateLFUOldestFirst(RateLFU):
    """Rate-LFU with the other rule among equal rates: the oldest inserted
    goes first (not a policy of its own: the caching protocol's option
    `lfu_ties` "oldest", measured beside seed 003's newest-first rule)."""

    __slots__ = ()
    newest_first = False


POLICIES: dict[str, type[CachePolicy]] = {cls.name: cls for cls in (FIFO, RegenerationDegradation, RateLFU, LRU)}


#: what `cache_class` asks of a plug-in cache (spec/11-plugins.md DEF-PLUG-1)
CACHE_METHODS = ("insert", "hit", "unsubscribed", "advance", "order", "metadata", "__contains__", "__len__")


def _cache_problem(cls: type) -> str | None:
    missing = plugins.missing_methods(cls, CACHE_METHODS)
    if missing:
        return missing
    if getattr(cls, "name", None) not in POLICIES:
        return (f"its `name` ({getattr(cls, 'name', None)!r}) must be the policy it implements, one of "
                f"{', '.join(POLICIES)}: the reference it is checked against")
    return None


def cache_class(policy: str) -> type[CachePolicy]:
    """The cache class `policy` stands for: a built-in policy (fifo, regdeg,
    lfu, lru), an installed `subsum.caches` entry point, or
    `module:attribute` (subsum.core.plugins). A plug-in has the
    `CachePolicy` methods, a constructor taking the capacity, and `name`,
    the built-in policy whose reference it must agree with."""
    return plugins.resolve("cache", policy, POLICIES, _cache_problem)


def make_cache(policy: str, capacity: int | None, lfu_ties: str = "newest") -> CachePolicy:
    """A new, empty cache of `policy` (see `cache_class`); rate-LFU with `lfu_ties` "oldest" evicts the oldest
    among equal rates (`RateLFUOldestFirst`, `names.LFU_TIES`)."""
    if policy == "lfu" and lfu_ties == "oldest":
        return RateLFUOldestFirst(capacity)
    return cache_class(policy)(capacity)
