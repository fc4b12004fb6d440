"""The matching engines' internal alternatives against the model (CLM-ENG-1
and CLM-ENG-8, spec/03-matching.md): each built-in engine's other ways of
doing one step must give the lines and counters of the usual way. A plug-in
engine's verification skips them (`claims.matching.BUILT_IN_ONLY`).

- vectorized: step 5 in chunks of 1 to 3 candidate pairs;
- compiled: the pattern memo forced on; the batch cut into chunks of 1 to
  3 occurrences on two threads, with room for 1 to 3 survivors;
- both: built in bulk from subscription columns (`from_columns`).
"""

from __future__ import annotations

from contextlib import contextmanager

from hypothesis import strategies as st

from subsum.conformance.checks.matching.engines import ANY_WORKLOAD
from subsum.conformance.checks.matching.properties import property_check
from subsum.impl.matching import make_engine
from subsum.impl.matching.columnar import vectorized
from subsum.impl.matching.columnar.compiled import CompiledEngine, MatchPlan
from subsum.impl.matching.columnar.subscription_columns import SubscriptionColumns
from subsum.impl.matching.columnar.vectorized import VectorizedEngine
from subsum.model import semantics


@contextmanager
def patched_module(module, name: str, value):
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


@property_check(ANY_WORKLOAD, st.integers(1, 3))
def vectorized_in_small_chunks(workload, chunk):
    """CLM-ENG-1 and CLM-ENG-8 across the vectorized engine's chunking of
    step 5 (CHUNK candidate pairs at a time, to bound memory): with chunks
    of 1 to 3 pairs, its matches and counters equal those of one chunk."""
    subscriptions, events = workload
    whole = make_engine("vectorized", subscriptions)
    want = whole.match_batch(events)
    chunked = make_engine("vectorized", subscriptions)
    with patched_module(vectorized, "CHUNK", chunk):
        got = chunked.match_batch(events)
    assert got == want == semantics.match_batch(subscriptions, events), (chunk, got, want)
    assert chunked.stats == whole.stats, (chunk, chunked.stats, whole.stats)


@property_check(ANY_WORKLOAD, scale=5)
def compiled_with_pattern_memo(workload):
    """CLM-ENG-1 across the compiled engine's two ways of finding pattern
    pivots: with the memo forced (memo_threshold -1: each distinct (group,
    string) pair tested once per batch), its lines equal the model's, as
    they do with the memo off (the default on workloads this small)."""
    subscriptions, events = workload
    memo = make_engine("compiled", subscriptions)
    memo.memo_threshold = -1.0
    assert memo.match_batch(events) == semantics.match_batch(subscriptions, events)


@property_check(ANY_WORKLOAD, st.integers(1, 3), st.integers(1, 3), st.booleans(), scale=5)
def compiled_in_small_chunks(workload, chunk, room, memo):
    """CLM-ENG-1 and CLM-ENG-8 across the compiled engine's cutting of a
    batch (DEF-MATCH-7): chunks of about 1 to 3 occurrences each, run on two
    threads, with room for 1 to 3 survivors between checks (so most checks
    come early), with the pattern memo on or off. Its lines are the
    model's, and its counters those of one chunk."""
    subscriptions, events = workload
    whole = make_engine("compiled", subscriptions)
    whole.memo_threshold = -1.0 if memo else whole.memo_threshold
    want = whole.match_batch(events)
    chunked = make_engine("compiled", subscriptions)
    chunked.memo_threshold = whole.memo_threshold
    chunked.plan = MatchPlan(threads=2, chunk_occurrences=chunk, parallel_occurrences=0, room=room)
    got = chunked.match_batch(events)
    assert got == want == semantics.match_batch(subscriptions, events), (chunk, room, got, want)
    assert chunked.stats == whole.stats, (chunk, room, chunked.stats, whole.stats)


@property_check(ANY_WORKLOAD, st.sampled_from([VectorizedEngine, CompiledEngine]), scale=5)
def built_from_columns(workload, engine):
    """CLM-ENG-1 for an engine built in bulk from subscription columns
    (`from_columns`, DEF-MATCH-5 steps 1 and 2 in numpy): its lines are the
    model's, before and after a subscription is removed and one added."""
    subscriptions, events = workload
    built = engine.from_columns(SubscriptionColumns.from_subscriptions(subscriptions))
    assert built.match_batch(events) == semantics.match_batch(subscriptions, events)
    if subscriptions:
        changed = subscriptions[1:] + [("again", subscriptions[0][1])]
        built.remove(subscriptions[0][0])
        built.add("again", subscriptions[0][1])
        assert built.match_batch(events) == semantics.match_batch(changed, events)
