"""The caching protocol's requests in explore (spec/12 DEF-EXP-10,
CLM-EXP-7): a request is a move, made in a quiescent state and run alone;
at quiescence it is checked against the model fed the network it was made
in. A planted broker that answers only its own clients' requests is found,
and its replay fails the same way in another process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from subsum.conformance.schedules import declared
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore
from subsum.conformance.explore.state import State, moves, successor
from subsum.conformance.schedules.runs import Run, ScheduleError
from subsum.conformance.runner.violations import ClaimViolation
from subsum.core.errors import SubsumError
from subsum.impl.network import CLIENT_BASE

RELAYING = "subsum.bench.planted:RelayingCache"
#: Broker 1's client subscribes and a publication from broker 2 is stored on its way to it (not at broker 0); then
#: broker 0's client subscribes and asks for the past: the publication is held one hop away, and only there and beyond.
SCHEDULE = [{"op": "subscribe", "client": CLIENT_BASE + 1, "filter": "x > 0"}, {"op": "quiesce"},
            {"op": "publish", "client": CLIENT_BASE + 2, "attributes": {"x": 1}}, {"op": "quiesce"},
            {"op": "subscribe", "client": CLIENT_BASE, "filter": "x > 0"}, {"op": "quiesce"},
            {"op": "request", "client": CLIENT_BASE, "filter": "x > 0"}]


def run_of(protocol: str) -> Run:
    return Run(Scope("caching", 3, 2).network(), 0, protocol, delay=(0.0, 0.0))


def test_a_request_is_checked_at_the_next_quiescence():
    run = run_of("caching")
    for op in SCHEDULE:
        run.apply(op)
    with declared.tallying() as tally:
        run.apply({"op": "quiesce"})
    (record,) = run.net.shared.requests.values()
    assert tally["requests"] == 1 and record.context is not None
    assert set(record.recovered) == {0} and 0 not in {b for b, _ in record.hits}  # held beyond broker 0, brought back


def test_the_planted_relaying_cache_breaks_clm_cache_9_on_the_same_schedule():
    run = run_of(RELAYING)
    for op in SCHEDULE:
        run.apply(op)
    with pytest.raises(ClaimViolation) as caught:
        run.apply({"op": "quiesce"})
    assert caught.value.claim == "CLM-CACHE-9"


def test_a_request_runs_alone_and_only_from_a_quiescent_state():
    scope = Scope("caching", 2, 1, requests=1)
    state = State.initial(scope)
    assert [m.key[0] for m in moves(state, scope)] == ["subscribe"]  # no request before the subscription is held
    state = successor(state, next(iter(moves(state, scope))))[0]
    keys = [m.key for m in moves(state, scope)]
    assert ("request", 0) not in keys  # its SUB is still in flight
    while not state.quiescent():
        state = successor(state, next(m for m in moves(state, scope) if m.delivers))[0]
    request = next(m for m in moves(state, scope) if m.key == ("request", 0))
    after = successor(state, request)[0]
    assert after.quiescent() or all(m.delivers or m.key == ("timeout",) for m in moves(after, scope))


def test_the_search_of_the_claims_scope_completes_and_finds_the_planted_cache(tmp_path):
    clean = explore(Scope("caching", 3, 2, events=1, requests=1), budget=float("inf"))
    assert clean.complete and not clean.found
    runs = {p["name"]: p["runs"] for p in clean.report()["properties"]}
    assert runs["requests"] > 0 and runs["tables"] > 0
    found = explore(Scope(RELAYING, 3, 2, events=1, requests=1), out_dir=tmp_path).found
    assert found and found[0].violation.claim == "CLM-CACHE-9"
    again = subprocess.run([sys.executable, "-m", "subsum", "replay", "--protocol", RELAYING, str(found[0].replay)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "CLM-CACHE-9 violated" in again.stdout, again.stdout + again.stderr


def test_requests_need_the_caching_protocol_and_a_subscription():
    with pytest.raises(SubsumError, match="only the caching protocol"):
        Scope("strawman", 3, 1, requests=1)
    with pytest.raises(SubsumError, match="there is none"):
        Scope("caching", 3, 0, requests=1)
    run = Run(Scope("strawman", 2, 1).network(), 0, "strawman", delay=(0.0, 0.0))
    with pytest.raises(ScheduleError, match="only the caching protocol"):
        run.apply({"op": "request", "client": CLIENT_BASE, "filter": "x > 0"})
