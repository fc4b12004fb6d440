"""The matching engines (spec/03-matching.md, seed 001).

Every engine has one interface (`Engine`): build it from (id, subscription)
pairs, `add` or `remove` one subscription, and `match_batch(events)`, which
returns, per event, the set of matching subscription IDs. Each engine keeps
`stats` (index lookups, counter increments, attribute occurrences and the
distinct ones).

- `brute`: every subscription against every event (seed 001 BruteForce).
- `counting`: Yan & Garcia-Molina counting; each distinct constraint on an
  attribute's (type, name) is evaluated once per event.
- `indexed`: seed 001 ICCounting; the multi-level index type -> name ->
  operator, with sorted constraint lists and hash probes, once per event.
- `rab`: seed 001 RABasedMatching; the same index, probed once per distinct
  attribute of the whole batch.
- `vectorized`: numpy; the batch as columns, binary searches over rank keys,
  one pivot constraint per subscription, then a vectorized check of the rest.

This package never imports `subsum.model`; only `subsum.conformance` holds
the two side by side.
"""

from __future__ import annotations

from typing import Iterable

from subsum.core.types import Subscription
from subsum.impl.matching.base import Engine, MatchStats
from subsum.impl.matching.brute import BruteForceEngine
from subsum.impl.matching.counting import CountingEngine
from subsum.impl.matching.indexed import IndexedEngine
from subsum.impl.matching.rab import RABEngine
from subsum.impl.matching.vectorized import VectorizedEngine

ENGINES: dict[str, type[Engine]] = {
    "brute": BruteForceEngine,
    "counting": CountingEngine,
    "indexed": IndexedEngine,
    "rab": RABEngine,
    "vectorized": VectorizedEngine,
}


def make_engine(name: str, subscriptions: Iterable[tuple[str, Subscription]] = (), **options) -> Engine:
    """Build the engine called `name` from (id, subscription) pairs.
    `options`: `count_distinct` (default True), see `Engine`."""
    try:
        cls = ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}; expected one of {', '.join(ENGINES)}") from None
    return cls(subscriptions, **options)


__all__ = ["ENGINES", "Engine", "MatchStats", "make_engine"]
