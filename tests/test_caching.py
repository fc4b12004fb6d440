"""Broker cache policies (spec/09-caching.md, CLM-CACHE-1 … 4): the checks of
conformance.checks.caching.policies pass on the real policies and fail on planted bugs, and a
failure of the state machine is saved as a replay file that `subsum cache
replay --check` replays in another process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from click.testing import CliRunner
from hypothesis.internal.conjecture import engine as conjecture_engine

from subsum.cli import main
from subsum.conformance.checks.caching import policies as caching
from subsum.conformance.runner import profiles
from subsum.conformance.checks.matching.properties import run_property
from subsum.conformance.replays import documents
from subsum.impl.caching import policies
from subsum.model import caching as ref

# Planted bugs, each a subclass of a real policy. PLANTS is also the source
# of the same bug in a fresh process (see `replays_in_another_process`).
PLANTS = textwrap.dedent('''
    from subsum.impl.caching import policies

    class OldestOfEqualRates(policies.RateLFU):
        """LFU breaking ties the other way: the oldest of the rate-0 entries goes."""
        def _victim(self, now):
            for m in self._unrequested:
                if self._entries[m][0] < now:
                    return m
            return super()._victim(now)

    class RegenerationToTail(policies.RegenerationDegradation):
        """Regeneration moving the hit messages to the tail."""
        def hit(self, messages, now):
            self.unsubscribed(messages, now)

    class LruWithoutRefresh(policies.LRU):
        """LRU forgetting to refresh a hit entry's last access (the order is right)."""
        def hit(self, messages, now):
            kept = {m: self._entries[m] for m in messages if m in self._entries}
            super().hit(messages, now)
            self._entries.update(kept)

    class FifoReorderingOnHit(policies.FIFO):
        """FIFO that moves a hit message to the head (that is LRU, not FIFO)."""
        def hit(self, messages, now):
            for m in messages:
                if m in self._entries:
                    self._entries.move_to_end(m)

    PLANTED = {"lfu": OldestOfEqualRates, "regdeg": RegenerationToTail, "lru": LruWithoutRefresh, "fifo": FifoReorderingOnHit}

    def planted_make_cache(policy, capacity):
        return PLANTED[policy](capacity)

    def plant(module):
        module.make_cache = planted_make_cache
''')
planted: dict = {}
exec(PLANTS, planted)


@pytest.fixture
def plant(monkeypatch):
    """Plant the bugs in conformance.checks.caching.policies for one test."""
    monkeypatch.setattr(caching, "make_cache", planted["planted_make_cache"])


@pytest.fixture
def replays(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(documents, "FUZZ_FOLDER", tmp_path)
    profiles.load("ci")
    # Shrinking bounded at 3 s, not the profile's 20 s (issue 51: the gate's time): the failure still shrinks and its
    # shrunk run is still the replay the failure names; a run shrunk for less replays as well.
    monkeypatch.setattr(conjecture_engine, "MAX_SHRINKING_SECONDS", 3)
    return tmp_path


# The machines on the real policies run in tests/test_claims.py (CLM-CACHE-1, 2).


def subsum_with_plants(*args: str) -> subprocess.CompletedProcess:
    """`subsum ARGS` in a fresh process whose caches carry the planted bugs."""
    code = PLANTS + textwrap.dedent('''
        import sys
        from subsum.conformance.checks.caching import policies as caching
        plant(caching)
        import subsum.impl.caching as package
        plant(package)
        from subsum.cli import main
        main(sys.argv[1:], prog_name="subsum")
    ''')
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("policy, message", [
    ("lfu", "evicted|order"), ("regdeg", "order|head"), ("lru", "metadata"), ("fifo", "order")])
def test_machine_catches_planted_bugs_and_the_failure_replays(policy, message, replays, plant, monkeypatch):
    """Each planted bug fails the machine; its shrunk run is a replay file on
    which `subsum replay` exits 1 with the bug (in another process) and 0 without."""
    with pytest.raises(AssertionError, match=message) as failure:
        caching.run_cache_machine(caching.machine_for(policy))
    files = sorted(replays.glob(f"cache-{policy}-k*.json"))
    assert files, "no replay file was written"
    replay = next(f for f in files if str(f) in str(failure.value))  # the one the failure names: the shrunk run
    with_bug = subsum_with_plants("replay", str(replay))
    assert with_bug.returncode == 1, with_bug.stdout + with_bug.stderr
    assert "Traceback" not in with_bug.stderr
    monkeypatch.undo()  # the bugs unplanted: the replay runs the real policies, in this process (no start-up to pay)
    fixed = CliRunner().invoke(main, ["replay", str(replay)])
    assert fixed.exit_code == 0, fixed.output


def test_lfu_tie_rule_is_seed_003s():
    """Seed 003 §4.6: of equal rates the most recently inserted goes; a bug
    breaking ties toward the oldest (seed note 004's suggestion) is caught."""
    cache = policies.RateLFU(2)
    cache.insert("old", 0.0)
    cache.insert("new", 1.0)
    assert cache.insert("third", 2.0) == "new"
    model = ref.empty_cache("lfu", 2)
    model, _ = ref.insert(model, "old", 0.0)
    model, _ = ref.insert(model, "new", 1.0)
    assert ref.insert(model, "third", 2.0)[1] == "new"
    bug = planted["OldestOfEqualRates"](2)
    bug.insert("old", 0.0)
    bug.insert("new", 1.0)
    assert bug.insert("third", 2.0) == "old"


def test_peer_check_catches_a_fifo_that_reorders(plant):
    profiles.load("ci")
    with pytest.raises(AssertionError, match="cachetools"):
        run_property(caching.agrees_with_cachetools)


def test_equivalence_check_catches_a_regeneration_bug(plant):
    profiles.load("ci")
    with pytest.raises(AssertionError, match="regeneration|differ"):
        run_property(caching.regeneration_without_degradation_is_lru)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 7), st.integers(0, 2)), min_size=1, max_size=40))
def test_rate_lfu_oldest_first_evicts_the_smallest_rate_then_the_oldest(steps):
    """The caching protocol's `lfu_ties` "oldest" (spec/09 DEF-CACHE-4): the victim is the entry of the smallest
    count / age, among equal rates the oldest inserted, a just-inserted entry protected (the oldest of all when
    every entry is); checked against that rule computed directly over the cache's own counts."""
    cache, now, inserted = policies.RateLFUOldestFirst(3), 0.0, {}  # key -> (insertion time, insertion number)
    for number, (is_insert, m, dt) in enumerate(steps):
        now += dt
        key = f"m{m}"
        if not is_insert:
            cache.hit([key], now)
        elif key not in cache:
            expected = None
            if len(cache) == 3:
                aged = [k for k in inserted if inserted[k][0] < now]
                expected = (min(aged, key=lambda k: (cache.count(k) / (now - inserted[k][0]), inserted[k][1])) if aged
                            else min(inserted, key=lambda k: inserted[k][1]))
                del inserted[expected]
            assert cache.insert(key, now) == expected
            inserted[key] = (now, number)
