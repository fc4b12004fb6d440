"""DEF-EXP-6's sleep sets, tested against the search without them: over
generated small scopes of every protocol the explorer takes (and two planted
bugs, so that verdicts are compared where there is a violation), the reduced
and the plain search reach the same quiescent states, by fingerprint, and
give the same verdict at the same depth. A planted error in the sleep-set
bookkeeping (two deliveries to one broker taken as independent, so one of
them falls asleep where it must not) makes scopes differ. `make test` runs
21 scopes; `make thorough` 210. The depth-first search reaches the
states the breadth-first one does.

Tried and not caught: a search that never expands a state again when a
path meets it with a move awake that was asleep when it was first met. It
happens (15 times over the first 42 scopes), but on none of the 210 scopes
does it lose a quiescent state: the move's successors are reached another
way there. The search keeps the re-expansion (spec/12 DEF-EXP-6), as the
argument for sleep sets with state matching requires."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from typing import Iterator

import pytest


from subsum.conformance.explore import searches as search_module
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore
from subsum.conformance.explore.searches import BreadthFirst, DepthFirst, Exploration
from subsum.conformance.explore.state import Step, State
from subsum.conformance.schedules.families import family_of
from subsum.core import collector

PROTOCOLS = ("strawman", "timed", "notified", "informed", "siena", "siena-nocover", "summaries",
             "subsum.bench.planted:ForgetfulStrawman", "subsum.bench.planted:HastyInformed")


def small_scopes(count: int, seed: int = 53) -> list[Scope]:
    """`count` distinct scopes, the protocols in turn: 1 to 3 brokers on a path or a star, up to 2 subscriptions,
    up to 1 publication and (where the overlay may change, on 3 brokers) up to 1 swap, unsubscriptions or not."""
    rng = random.Random(seed)
    scopes: list[Scope] = []
    while len(scopes) < count:
        protocol = PROTOCOLS[len(scopes) % len(PROTOCOLS)]
        brokers = rng.choice((1, 2, 3, 3))
        swaps = rng.choice((0, 1)) if family_of(protocol).churn and brokers == 3 else 0
        subscriptions = rng.randint(0, 1 if swaps else 2)
        scope = Scope(protocol, brokers, subscriptions, events=rng.choice((0, 1)), swaps=swaps,
                      topology=rng.choice(("path", "star")), unsubscribe=rng.random() < 0.7)
        if scope not in scopes:
            scopes.append(scope)
    return scopes


def search(scope: Scope, sleep_sets: bool) -> tuple[tuple, frozenset]:
    """(the verdict: violated claims, depth, completeness; the fingerprints of the quiescent states reached)."""
    quiescent: set[int] = set()
    run = BreadthFirst(scope, Exploration(scope), time.perf_counter(), 10**6, float("inf"), None, sleep_sets, quiescent=quiescent)
    with collector.acyclic():
        run.run(True)
    result = run.result
    verdict = ([f.violation.claim for f in result.found], result.depth, result.complete)
    return verdict, frozenset(quiescent) if not result.found else frozenset()  # a search that stops early: its verdict


def differing(scopes: list[Scope]) -> Iterator[str]:
    """Each scope whose reduced search differs from its plain one, said."""
    for scope in scopes:
        plain, reduced = search(scope, False), search(scope, True)
        if plain != reduced:
            yield f"{scope}: plain {plain[0]}, {len(plain[1])} quiescent; reduced {reduced[0]}, {len(reduced[1])} quiescent"


def test_the_scopes_cover_every_protocol_and_both_verdicts():
    scopes = small_scopes(21)
    assert {s.protocol for s in scopes} == set(PROTOCOLS) and len(set(scopes)) == 21
    assert len(small_scopes(210)) == 210 and small_scopes(210)[:21] == scopes


@pytest.mark.parametrize("count", [21, pytest.param(210, marks=pytest.mark.thorough)])
def test_sleep_sets_reach_the_same_quiescent_states_with_the_same_verdicts(count):
    scopes = small_scopes(count)
    assert not list(differing(scopes))
    verdicts = [search(scope, True)[0] for scope in scopes]
    assert any(claims for claims, _, _ in verdicts) and any(not claims and complete for claims, _, complete in verdicts)


def independent_even_at_one_broker(asleep: Step, step: Step, state: State) -> bool:
    """Planted: DEF-EXP-6's independence without "each touching a different broker": two deliveries to one broker
    are taken to commute, so the second is put to sleep after the first although their order matters."""
    a, b = asleep.move, step.move
    if a.local is None or b.local is None or not (a.delivers or b.delivers):
        return False
    if asleep.timers or step.timers or step.quiescent:
        return False
    transport = state.run.net.transport
    pending = sum(len(queue) for queue in transport.links.values()) + len(transport.pending_timers())
    return not (a.delivers and pending < 2)


def test_a_planted_error_in_the_sleep_set_bookkeeping_is_caught(monkeypatch):
    monkeypatch.setattr(search_module, "independent", independent_even_at_one_broker)
    assert next(differing(small_scopes(21)), None)


# --- depth first (--strategy dfs) -----------------------------------------------------------------

def searched_with(scope: Scope, strategy: type[BreadthFirst]) -> tuple[int, frozenset]:
    quiescent: set[int] = set()
    run = strategy(scope, Exploration(scope), time.perf_counter(), 10**6, float("inf"), None, True, quiescent=quiescent)
    with collector.acyclic():
        run.run(True)
    assert run.result.complete and not run.result.found
    return run.result.states, frozenset(quiescent)


@pytest.mark.parametrize("scope", [Scope("strawman", 3, 2, events=1, swaps=1),
                                   pytest.param(Scope("informed", 3, 1, swaps=1), marks=pytest.mark.thorough),
                                   pytest.param(Scope("siena", 3, 3), marks=pytest.mark.thorough), Scope("summaries", 3, 1, events=1)],
                         ids=str)
def test_depth_first_reaches_the_states_breadth_first_reaches(scope):
    assert searched_with(scope, DepthFirst) == searched_with(scope, BreadthFirst)


def test_depth_first_finds_a_planted_bug_and_its_replay_fails_the_same_way(tmp_path):
    """Not a shortest counterexample, but one the replay file shows in another process (`subsum replay`)."""
    planted = "subsum.bench.planted:ForgetfulStrawman"
    result = explore(Scope(planted, 3, 2, events=1, swaps=1), strategy="dfs", out_dir=tmp_path)
    (found,) = result.found
    assert found.violation.claim == "CLM-NET-6" and result.report()["strategy"] == "dfs"
    again = subprocess.run([sys.executable, "-m", "subsum", "replay", "--protocol", planted, str(found.replay)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "CLM-NET-6 violated" in again.stdout, again.stdout + again.stderr
