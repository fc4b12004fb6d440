"""Conformance of the broker caches' replacement policies (claims
CLM-CACHE-1 … 4, spec/09-caching.md): each fast policy of
`subsum.impl.caching` against its list-and-loop reference in
`subsum.model.caching`, the references' invariants, FIFO and LRU against
the `cachetools` library, and regeneration without degradation against LRU.

An operation is a dict in the `subsum cache replay` format (spec/formats.md):
`{"op": "insert", "message": m, "time": t}`, `{"op": "hit", "matching": [...],
"time": t}`, `{"op": "unsubscribe", "matching": [...], "time": t}`,
`{"op": "advance", "time": t}`. When the state machine finds a
difference, the operations of the (shrunk) failing run are written as a
cache replay (`subsum.conformance.replays`), and `subsum replay FILE`
reruns them.
"""

from __future__ import annotations

import json
import math
from typing import Iterable

import cachetools
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from subsum.conformance.runner.profiles import pinned
from subsum.conformance.runner import census
from subsum.conformance.runner import under_test
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.replays import documents
from subsum.conformance.replays.writing import cache_replay_name, save_cache
from subsum.conformance.runner.violations import ClaimViolation
from subsum.core.plugins import looks_like_path
from subsum.impl.caching import cache_class, make_cache
from subsum.impl.caching.replay import apply as apply_to_impl
from subsum.model import caching as ref

MESSAGES = tuple(f"m{i}" for i in range(10))
#: clock steps: 0 makes equal times (LRU ties, LFU age 0 and equal rates), the rest small and exact
STEPS = (0.0, 0.0, 0.5, 1.0, 2.0, 3.0)


# --- running one operation on both layers ----------------------------------------------------

def apply_to_reference(cache: ref.Cache, op: dict) -> tuple[ref.Cache, str | None]:
    """One operation on the reference cache; returns it and the evicted message (or None)."""
    t = op.get("time", cache.now)
    kind = op["op"]
    if kind == "insert":
        return ref.insert(cache, op["message"], t)
    if kind == "hit":
        return ref.hit(cache, op["matching"], t), None
    if kind == "unsubscribe":
        return ref.unsubscribed(cache, op["matching"], t), None
    return ref.advance(cache, t), None


def first_difference(policy: str, capacity: int | None, ops: Iterable[dict]) -> str | None:
    """Run `ops` on the impl and the reference cache; describe the first
    operation after which they differ (victim, order or metadata), or None."""
    model, impl = ref.empty_cache(cache_class(policy).name, capacity), make_cache(policy, capacity)
    for i, op in enumerate(ops, 1):
        model, expected = apply_to_reference(model, op)
        try:
            got = apply_to_impl(impl, op)
            want_order, got_order = ref.order(model), impl.order()
        except Exception as exc:  # the implementation (a plug-in, say) raised: a difference, not subsum's failure
            return f"operation {i} {json.dumps(op)}: the impl raised {type(exc).__name__}: {exc}"
        if got != expected:
            return f"operation {i} {json.dumps(op)}: the impl evicted {got!r}, the reference {expected!r}"
        if got_order != want_order:
            return f"operation {i} {json.dumps(op)}: the impl's order is {got_order}, the reference's {want_order}"
        for m in want_order:
            if impl.metadata(m) != ref.metadata(model, m):
                return f"operation {i} {json.dumps(op)}: {m}'s metadata is {impl.metadata(m)} in the impl, {ref.metadata(model, m)} in the reference"
    return None


#: The failing run the machine saw last, (policy, capacity, ops): while Hypothesis shrinks, every
#: failure replaces it, and the last one is the shrunk run it reports. `run_cache_machine` saves it.
_last_failure: list[tuple[str, int | None, list[dict]]] = []


# --- CLM-CACHE-1, CLM-CACHE-2: impl equals reference; the reference's invariants --------------

class CacheAgainstReference(RuleBasedStateMachine):
    """CLM-CACHE-1 and 2: one impl cache and its reference, driven by the same
    insert, hit, last-unsubscribe and clock-advance operations. After every
    operation both evict the same message and list the same order and
    metadata; the reference keeps seed note 004 §6's invariants. `policy`
    None draws the policy from the caches under test (conformance/runner/under_test.py:
    every built-in one, or a plug-in); a subclass may fix it. `name` is the
    reference policy (a plug-in names the one it implements), `implementation`
    the cache run against it."""

    policy: str | None = None

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[dict] = []
        self.now = 0.0

    @initialize(policy=under_test.cache_names(), capacity=st.integers(1, 8))
    def start(self, policy: str, capacity: int) -> None:
        self.implementation = self.policy or policy
        self.name = cache_class(self.implementation).name
        self.capacity = capacity
        self.model = ref.empty_cache(self.name, capacity)
        self.impl = make_cache(self.implementation, capacity)

    def run(self, op: dict) -> None:
        previous = self.ops[-1] if self.ops else None
        self.ops.append(op)
        before = self.model
        self.model, expected = apply_to_reference(self.model, op)
        got = apply_to_impl(self.impl, op)
        if previous is not None and previous["op"] != "advance" and op["op"] != "advance" and previous["time"] == op["time"]:
            census.record("time:equal")  # two operations at one time: the policies' tie rules decide
        if got is not None and self.capacity == 1:
            census.record("capacity-1:evicted")
        self.check(got == expected, f"the impl evicted {got!r}, the reference {expected!r}")
        want_order, got_order = ref.order(self.model), self.impl.order()
        self.check(got_order == want_order, f"the impl's order is {got_order}, the reference's {want_order}")
        for m in want_order:
            self.check(self.impl.metadata(m) == ref.metadata(self.model, m),
                       f"{m}'s metadata: impl {self.impl.metadata(m)}, reference {ref.metadata(self.model, m)}")
        self.check_reference_step(before, op, expected)

    def check(self, holds: bool, what: str, claim: str = "CLM-CACHE-1") -> None:
        if not holds:
            path = documents.FUZZ_FOLDER / cache_replay_name(self.implementation, self.capacity, self.ops)
            _last_failure[:] = [(self.implementation, self.capacity, list(self.ops))]
            plugin = f"--policy {self.implementation} " if looks_like_path(self.implementation) else ""  # needed to import it
            raise ClaimViolation(claim, f"{self.implementation}, capacity {self.capacity}, after {len(self.ops)} operations: {what}. "
                                        f"Replay: subsum replay {plugin}{path}")

    def check_invariant(self, holds: bool, what: str) -> None:
        """A check of the reference's own step (CLM-CACHE-2)."""
        self.check(holds, what, "CLM-CACHE-2")

    def check_reference_step(self, before: ref.Cache, op: dict, evicted: str | None) -> None:
        """CLM-CACHE-2: the reference's step keeps the invariants of seed note 004 §6."""
        after, now = self.model, self.model.now
        held_before, held = ref.messages(before), ref.messages(after)
        if op["op"] == "insert":
            m = op["message"]
            new = m not in held_before
            self.check_invariant(m in held, f"{m} is not cached after its insert")
            self.check_invariant((evicted is not None) == (new and ref.is_full(before)), f"insert {m}: evicted {evicted!r} from {held_before}")
            if new:
                (entry,) = [e for e in after.entries if e.message == m]
                self.check_invariant((entry.count, entry.start, entry.last) == (0, now, now), f"{m} enters with {entry}")
            else:
                self.check_invariant(after.entries == before.entries, f"inserting the cached {m} changed the cache")
            if evicted is not None:
                self.check_victim(before, now, evicted)
        elif op["op"] == "hit":
            hits = [m for m in held_before if m in op["matching"]]
            if self.name == "regdeg":
                self.check_invariant(held[:len(hits)] == hits, f"after a hit on {hits} the head is {held}")
            if self.name == "lfu":
                counts = {e.message: e.count for e in before.entries}
                self.check_invariant(all(e.count == counts[e.message] + (e.message in hits) for e in after.entries),
                           f"the hit on {hits} did not add one to exactly their counts")
            if self.name == "lru":
                untouched = {e.message: e for e in before.entries if e.message not in hits}
                self.check_invariant(all(e.last == now if e.message in hits else e == untouched[e.message] for e in after.entries),
                           f"a hit on {hits} must set their last access to {now} and leave the others: {after.entries}")
        elif op["op"] == "unsubscribe":
            gone = [m for m in held_before if m in op["matching"]]
            if self.name == "regdeg":
                self.check_invariant(held[len(held) - len(gone):] == gone, f"after degrading {gone} the tail is {held}")
            else:
                self.check_invariant(after.entries == before.entries, f"{self.name} changed on an unsubscribe")
        self.check_invariant(len(held) == len(set(held)), f"duplicates in {held}")
        self.check_invariant(self.capacity is None or len(held) <= self.capacity, f"{len(held)} entries, capacity {self.capacity}")

    def check_victim(self, before: ref.Cache, now: float, evicted: str) -> None:
        """The victim rule, stated on the cache the victim was taken from."""
        entries = before.entries
        (v,) = [e for e in entries if e.message == evicted]
        if self.name in ("fifo", "regdeg"):
            self.check_invariant(v is entries[-1], f"{evicted} evicted, the tail is {entries[-1].message}")
        if self.name == "fifo":
            self.check_invariant(v.inserted == min(e.inserted for e in entries), f"{evicted} is not the earliest inserted")
        if self.name == "lfu":
            rates = {e.message: (e.count / (now - e.start) if now > e.start else math.inf) for e in entries}
            lowest = min(rates.values())
            self.check_invariant(rates[evicted] == lowest, f"{evicted} has rate {rates[evicted]}, the lowest is {lowest}")
            self.check_invariant(v.inserted == max(e.inserted for e in entries if rates[e.message] == lowest),
                       f"{evicted} is not the most recently inserted of rate {lowest}")
        if self.name == "lru":
            self.check_invariant(all((v.last, v.access) <= (e.last, e.access) for e in entries), f"{evicted} is not the least recently used")

    def pool(self, picks: list[int]) -> list[str]:
        """Messages from a pool of capacity + 2, so that hits land and inserts evict."""
        return list(dict.fromkeys(MESSAGES[i % (self.capacity + 2)] for i in picks))

    @rule(i=st.integers(0, len(MESSAGES) - 1))
    def insert(self, i: int) -> None:
        self.run({"op": "insert", "message": self.pool([i])[0], "time": self.now})

    @rule(picks=st.lists(st.integers(0, len(MESSAGES) - 1), min_size=1, max_size=4))
    def hit(self, picks: list[int]) -> None:
        self.run({"op": "hit", "matching": self.pool(picks), "time": self.now})

    @rule(picks=st.lists(st.integers(0, len(MESSAGES) - 1), min_size=1, max_size=4))
    def unsubscribe(self, picks: list[int]) -> None:
        self.run({"op": "unsubscribe", "matching": self.pool(picks), "time": self.now})

    @rule(step=st.sampled_from(STEPS))
    def advance(self, step: float) -> None:
        self.now += step
        self.run({"op": "advance", "time": self.now})

    @invariant()
    def sizes_agree(self) -> None:
        if hasattr(self, "impl"):
            self.check(len(self.impl) == len(self.model.entries), f"impl holds {len(self.impl)}, reference {len(self.model.entries)}")


def run_cache_machine(machine: type[CacheAgainstReference] = CacheAgainstReference, steps: int = 60, shrink: bool = True) -> None:
    """Run the machine under the active profile (shrinking, unless a test wants it fast)."""
    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate)
    _last_failure.clear()
    try:
        run_state_machine_as_test(pinned(machine), settings=settings(stateful_step_count=steps, report_multiple_bugs=False, phases=phases,
                                                             max_examples=3 * examples()))
    finally:
        if _last_failure:  # one replay file, of the run reported
            save_cache(*_last_failure.pop())


def machine_for(policy: str) -> type[CacheAgainstReference]:
    """The machine with its policy fixed (one check per policy in the registry)."""
    return type(f"CacheAgainstReference_{policy}", (CacheAgainstReference,), {"policy": policy})


# --- operation sequences for the properties --------------------------------------------------

@st.composite
def capacity_and_operations(draw, kinds: tuple[str, ...] = ("insert", "hit", "unsubscribe", "advance"), single_hits: bool = False,
                            max_size: int = 60) -> tuple[int, list[dict]]:
    """A capacity (1 … 6) and a list of operations, with a clock that never
    goes back, on a pool of capacity + 2 messages: small enough that hits
    land on cached messages and inserts evict."""
    capacity = draw(st.integers(1, 6))
    pool = st.sampled_from(MESSAGES[:capacity + 2])
    now, ops = 0.0, []
    for kind in draw(st.lists(st.sampled_from(kinds), min_size=capacity + 2, max_size=max_size)):
        if kind == "advance":
            now += draw(st.sampled_from(STEPS))
            ops.append({"op": "advance", "time": now})
        elif kind == "insert":
            ops.append({"op": "insert", "message": draw(pool), "time": now})
        else:
            size = 1 if single_hits else draw(st.integers(1, min(4, capacity + 2)))
            ops.append({"op": kind, "matching": draw(st.lists(pool, min_size=size, max_size=size, unique=True)), "time": now})
    return capacity, ops


def examples() -> int:
    """The active profile's max_examples."""
    current = settings.default
    return 100 if current is None else current.max_examples


# --- CLM-CACHE-3: FIFO and LRU against cachetools --------------------------------------------

def recording(cls: type) -> type:
    """A cachetools cache class that records what it evicts (popitem is the
    library's documented eviction hook)."""

    class Recording(cls):
        def __init__(self, maxsize: int) -> None:
            super().__init__(maxsize)
            self.evicted: list = []

        def popitem(self):
            key, value = super().popitem()
            self.evicted.append(key)
            return key, value

    return Recording


PEERS = {"fifo": recording(cachetools.FIFOCache), "lru": recording(cachetools.LRUCache)}


def run_on_peer(policy: str, capacity: int, ops: list[dict]) -> tuple[list, list[set]]:
    """The evictions and the cached keys after each operation, by cachetools.
    An insert sets a key only if absent (setting a present key would
    re-order it); a hit reads the key if present; advance and unsubscribe
    do nothing (no TTL)."""
    peer = PEERS[policy](capacity)
    states = []
    for op in ops:
        if op["op"] == "insert" and op["message"] not in peer:
            peer[op["message"]] = 1
        elif op["op"] == "hit":
            for m in op["matching"]:
                if m in peer:
                    peer[m]
        states.append(set(peer))
    return peer.evicted, states


@property_check(st.sampled_from(("fifo", "lru")),
                capacity_and_operations(kinds=("insert", "insert", "hit", "advance", "unsubscribe"), single_hits=True),
                scale=5)  # cheap: milliseconds an example
def agrees_with_cachetools(policy: str, case: tuple[int, list[dict]]) -> None:
    """CLM-CACHE-3: FIFO and LRU evict what cachetools' FIFOCache and LRUCache
    evict, and hold the same messages after every operation."""
    capacity, ops = case
    impl = make_cache(policy, capacity)
    evicted, states = [], []
    for op in ops:
        victim = apply_to_impl(impl, op)
        if victim is not None:
            evicted.append(victim)
        states.append(set(impl.order()))
    peer_evicted, peer_states = run_on_peer(policy, capacity, ops)
    assert evicted == peer_evicted, f"{policy}: we evict {evicted}, cachetools {peer_evicted} ({ops})"
    assert states == peer_states, f"{policy}: contents differ from cachetools ({ops})"




# --- CLM-CACHE-4: regeneration without degradation is LRU ------------------------------------

@property_check(capacity_and_operations(kinds=("insert", "insert", "hit", "advance")), scale=5)
def regeneration_without_degradation_is_lru(case: tuple[int, list[dict]]) -> None:
    """CLM-CACHE-4 (seed note 003 §6): without unsubscribes, regeneration/degradation
    and LRU evict the same messages and list the same order, in the impl and in the reference."""
    capacity, ops = case
    regdeg, lru = make_cache("regdeg", capacity), make_cache("lru", capacity)
    model_regdeg, model_lru = ref.empty_cache("regdeg", capacity), ref.empty_cache("lru", capacity)
    for i, op in enumerate(ops):
        a, b = apply_to_impl(regdeg, op), apply_to_impl(lru, op)
        assert a == b, f"operation {i}: regeneration evicts {a}, LRU {b} ({ops[:i + 1]})"
        assert regdeg.order() == lru.order(), f"operation {i}: {regdeg.order()} against {lru.order()} ({ops[:i + 1]})"
        model_regdeg, c = apply_to_reference(model_regdeg, op)
        model_lru, d = apply_to_reference(model_lru, op)
        assert c == d and ref.order(model_regdeg) == ref.order(model_lru), f"the references differ after operation {i} ({ops[:i + 1]})"


