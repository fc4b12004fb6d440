"""The replacement ("priority") policies of a broker cache, as the seeds word
them: a list of entries and a loop (seed 004 §3.4, seed 003 §3.4 and §4.6;
spec/09-caching.md DEF-CACHE-1 … 5).

A cache is a tuple of entries, the head first. Each entry carries the
metadata every policy might read: its insertion sequence, LFU's count and
start, LRU's last access and access sequence. Each policy reads only its
own. Every function returns a new cache; nothing is changed in place.

>>> cache = empty_cache("fifo", 2)
>>> for m in ("m1", "m2", "m3"):
...     cache, victim = insert(cache, m, 0.0)
>>> victim, order(cache)
('m1', ['m3', 'm2'])
"""

from __future__ import annotations

import math
from typing import Iterable

import attrs

from subsum.core.names import CACHE_POLICIES

POLICIES = CACHE_POLICIES  # DEF-CACHE-2 … 5


@attrs.frozen
class Entry:
    """One cached message and its metadata (DEF-CACHE-1)."""

    message: str
    inserted: int  # insertion sequence: the LFU tie rule
    count: int = 0  # LFU: requests since insertion
    start: float = 0.0  # LFU: insertion time
    last: float = 0.0  # LRU: time of the last access (insertion or hit)
    access: int = 0  # LRU: access sequence, the tie rule among equal `last`


@attrs.frozen
class Cache:
    """A cache of at most `capacity` messages (None: unbounded), head first (DEF-CACHE-1)."""

    policy: str = attrs.field(validator=attrs.validators.in_(POLICIES))
    capacity: int | None
    entries: tuple[Entry, ...] = ()
    now: float = 0.0
    insertions: int = 0
    accesses: int = 0


def empty_cache(policy: str, capacity: int | None) -> Cache:
    """DEF-CACHE-1: an empty cache of `policy` with `capacity` slots.

    >>> empty_cache("lru", 3).entries
    ()
    """
    assert capacity is None or capacity >= 1
    return Cache(policy, capacity)


def messages(cache: Cache) -> list[str]:
    """The cached messages, head first (the list as stored; DEF-CACHE-1).

    >>> messages(insert(empty_cache("fifo", 2), "m1", 0.0)[0])
    ['m1']
    """
    return [entry.message for entry in cache.entries]


def is_full(cache: Cache) -> bool:
    """The cache holds `capacity` messages (DEF-CACHE-1: an insert into a full cache evicts).

    >>> is_full(insert(empty_cache("fifo", 1), "m1", 0.0)[0]), is_full(empty_cache("fifo", None))
    (True, False)
    """
    return cache.capacity is not None and len(cache.entries) >= cache.capacity


def rate(entry: Entry, now: float) -> float:
    """DEF-CACHE-4: LFU's request rate, count / (now − start); zero age is +∞.

    >>> rate(Entry("m", 1, count=3, start=1.0), 4.0), rate(Entry("m", 1, count=0, start=4.0), 4.0)
    (1.0, inf)
    """
    if now == entry.start:
        return math.inf
    return entry.count / (now - entry.start)


def victim(cache: Cache) -> Entry:
    """The entry the policy evicts next (DEF-CACHE-2 … 5).

    - FIFO and regeneration/degradation: the tail;
    - LFU: the smallest rate, and among equal rates the most recently inserted;
    - LRU: the largest now − last, and among equal ones the older access.

    >>> cache = empty_cache("lfu", 2)
    >>> cache, _ = insert(cache, "a", 0.0)
    >>> cache, _ = insert(cache, "b", 1.0)
    >>> cache = hit(cache, ["a"], 2.0)
    >>> victim(cache).message  # a: 1/2, b: 0/1
    'b'
    """
    assert cache.entries
    if cache.policy in ("fifo", "regdeg"):
        return cache.entries[-1]
    chosen = cache.entries[0]
    for entry in cache.entries[1:]:
        if cache.policy == "lfu":
            r, best = rate(entry, cache.now), rate(chosen, cache.now)
            if r < best or (r == best and entry.inserted > chosen.inserted):
                chosen = entry
        elif (entry.last, entry.access) < (chosen.last, chosen.access):
            chosen = entry
    return chosen


def insert(cache: Cache, m: str, now: float) -> tuple[Cache, str | None]:
    """DEF-CACHE-1: a first-time arrival of m at time `now`: when the cache is
    full the victim goes first, then m enters at the head with fresh
    metadata (count 0, start = last = now). Returns the cache and the
    evicted message (or None). A cached m changes nothing.

    >>> cache, _ = insert(empty_cache("lru", 1), "m1", 0.0)
    >>> cache, evicted = insert(cache, "m2", 1.0)
    >>> evicted, messages(cache), cache.entries[0].last
    ('m1', ['m2'], 1.0)
    """
    cache = advance(cache, now)
    if m in messages(cache):
        return cache, None
    evicted = None
    entries = cache.entries
    if is_full(cache):
        gone = victim(cache)
        evicted = gone.message
        entries = tuple(entry for entry in entries if entry is not gone)
    entry = Entry(m, cache.insertions + 1, count=0, start=now, last=now, access=cache.accesses + 1)
    cache = attrs.evolve(cache, entries=(entry, *entries), insertions=cache.insertions + 1, accesses=cache.accesses + 1)
    return cache, evicted


def hit(cache: Cache, ms: Iterable[str], now: float) -> Cache:
    """A request hit on the cached messages among `ms` (DEF-CACHE-2 … 5):

    - FIFO: nothing changes;
    - regeneration: the hit messages move to the head, keeping their order;
    - LFU: each hit entry's count goes up by one;
    - LRU: each hit entry's last access becomes now, in their old recency order.

    >>> cache = empty_cache("regdeg", 3)
    >>> for m in ("m1", "m2", "m3"):
    ...     cache, _ = insert(cache, m, 0.0)
    >>> messages(hit(cache, ["m1", "m2"], 1.0))
    ['m2', 'm1', 'm3']
    """
    cache = advance(cache, now)
    wanted = set(ms)
    matching = [entry for entry in cache.entries if entry.message in wanted]
    others = [entry for entry in cache.entries if entry.message not in wanted]
    if cache.policy == "regdeg":
        return attrs.evolve(cache, entries=(*matching, *others))
    if cache.policy == "lfu":
        return attrs.evolve(cache, entries=tuple(attrs.evolve(e, count=e.count + 1) if e.message in wanted else e
                                                 for e in cache.entries))
    if cache.policy == "lru":
        accesses = cache.accesses
        refreshed = {}
        for entry in sorted(matching, key=lambda e: (e.last, e.access)):  # least recent first
            accesses += 1
            refreshed[entry.message] = attrs.evolve(entry, last=now, access=accesses)
        return attrs.evolve(cache, entries=tuple(refreshed.get(e.message, e) for e in cache.entries), accesses=accesses)
    return cache


def unsubscribed(cache: Cache, ms: Iterable[str], now: float) -> Cache:
    """The last local client of a subscription left; `ms` are the messages
    matching it. Degradation moves the cached ones to the tail, keeping
    their order; no other policy changes anything (DEF-CACHE-3).

    >>> cache = empty_cache("regdeg", 3)
    >>> for m in ("m1", "m2", "m3"):
    ...     cache, _ = insert(cache, m, 0.0)
    >>> messages(unsubscribed(cache, ["m3", "m2"], 1.0))
    ['m1', 'm3', 'm2']
    """
    cache = advance(cache, now)
    if cache.policy != "regdeg":
        return cache
    wanted = set(ms)
    matching = [entry for entry in cache.entries if entry.message in wanted]
    others = [entry for entry in cache.entries if entry.message not in wanted]
    return attrs.evolve(cache, entries=(*others, *matching))


def advance(cache: Cache, now: float) -> Cache:
    """The clock moves to `now`; it never goes back (the rates of DEF-CACHE-3 and DEF-CACHE-4 read it).

    >>> advance(empty_cache("lfu", 1), 2.5).now
    2.5
    """
    assert now >= cache.now, f"the clock went back from {cache.now} to {now}"
    return attrs.evolve(cache, now=now)


def order(cache: Cache) -> list[str]:
    """DEF-CACHE-1: the cached messages head first, the next victim last:
    the list itself for FIFO and regeneration/degradation; for LFU and LRU
    the messages taken from the back, victim after victim.

    >>> cache = empty_cache("lru", 3)
    >>> for t, m in enumerate(("m1", "m2", "m3")):
    ...     cache, _ = insert(cache, m, float(t))
    >>> order(hit(cache, ["m1"], 3.0))
    ['m1', 'm3', 'm2']
    """
    keep: list[str] = []
    while cache.entries:
        gone = victim(cache)
        keep.insert(0, gone.message)
        cache = attrs.evolve(cache, entries=tuple(e for e in cache.entries if e is not gone))
    return keep


def metadata(cache: Cache, m: str) -> dict[str, float]:
    """The metadata m's policy keeps for it (DEF-CACHE-2 … 5; the impl's `metadata` says the same):
    LFU count and start, LRU last access, nothing for FIFO and regeneration.

    >>> cache, _ = insert(empty_cache("lfu", 1), "m1", 2.0)
    >>> metadata(cache, "m1")
    {'count': 0, 'start': 2.0}
    """
    (entry,) = [e for e in cache.entries if e.message == m]
    if cache.policy == "lfu":
        return {"count": entry.count, "start": entry.start}
    if cache.policy == "lru":
        return {"last": entry.last}
    return {}
