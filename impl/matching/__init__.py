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
- `columnar.vectorized`: numpy; the batch as columns, binary searches over
  rank keys, one pivot constraint per subscription, then a vectorized check
  of the rest.
- `columnar.compiled`: vectorized's index and rank keys, then the probe,
  candidates and check as one numba kernel over the attribute occurrences.
  The two share `columnar/`: the batch as columns, the subscriptions'
  columnar index and the pivot choice.

This package never imports `subsum.model`; only `subsum.conformance` holds
the two side by side.
"""

from __future__ import annotations

from typing import Iterable

from subsum.core import plugins
from subsum.core.types import Subscription
from subsum.impl.matching.base import Engine, MatchStats
from subsum.impl.matching.brute import BruteForceEngine
from subsum.impl.matching.columnar.compiled import CompiledEngine
from subsum.impl.matching.counting import CountingEngine
from subsum.impl.matching.indexed import IndexedEngine
from subsum.impl.matching.rab import RABEngine
from subsum.impl.matching.columnar.vectorized import VectorizedEngine

ENGINES: dict[str, type[Engine]] = {
    "brute": BruteForceEngine,
    "compiled": CompiledEngine,
    "counting": CountingEngine,
    "indexed": IndexedEngine,
    "rab": RABEngine,
    "vectorized": VectorizedEngine,
}


#: what `engine_class` asks of a plug-in engine (spec/11-plugins.md DEF-PLUG-1)
ENGINE_METHODS = ("add", "remove", "match_batch")


def engine_class(name: str) -> type[Engine]:
    """The engine class `name` stands for: a built-in name, an installed
    `subsum.engines` entry point, or `module:attribute` (subsum.core.plugins).
    A plug-in needs `add(id, subscription)`, `remove(id)` and
    `match_batch(events) -> [set of ids]`, and a constructor taking the
    (id, subscription) pairs; subclassing `Engine` gives all but the hooks."""
    return plugins.resolve("engine", name, ENGINES, lambda cls: plugins.missing_methods(cls, ENGINE_METHODS))


def make_engine(name: str, subscriptions: Iterable[tuple[str, Subscription]] = (), **options) -> Engine:
    """Build the engine called `name` (see `engine_class`) from (id, subscription) pairs.
    `options`: `count_distinct` (default True), see `Engine`."""
    return engine_class(name)(subscriptions, **options)


__all__ = ["ENGINES", "ENGINE_METHODS", "Engine", "MatchStats", "engine_class", "make_engine"]
