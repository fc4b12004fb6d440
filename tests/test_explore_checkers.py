"""One model, several checkers (spec/12 DEF-EXP-9): the breadth- and
depth-first searches, the random walks and a Hypothesis state machine all
run on `ScopeModel` (init, actions, step, fingerprint, properties). The
walks are the same walk for a seed whatever their number, find the planted
bugs, shrink them, and save a replay that fails the same way in another
process; Hypothesis, drawing from the model's actions, finds them too."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from subsum.conformance.explore.machine import machine_for
from subsum.conformance.explore.model import ScopeModel
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.searches import BreadthFirst
from subsum.conformance.explore.walk import random_walk
from subsum.conformance.runner.violations import ClaimViolation

FORGETFUL = "subsum.bench.planted:ForgetfulStrawman"
HASTY = "subsum.bench.planted:HastyInformed"


def test_the_search_runs_on_the_scope_model():
    scope = Scope("strawman", 2, 1)
    assert BreadthFirst.__attrs_attrs__.model.default.factory  # the search's model is made from its scope
    model = ScopeModel(scope)
    first = model.init()
    (subscribe,) = model.actions(first)
    after, ops, step = model.step(first, subscribe)
    assert ops[0]["op"] == "subscribe" and not step.quiescent
    assert model.fingerprint(after) != model.fingerprint(first)
    assert {p.name for p in model.properties()} >= {"overlay", "tables", "broker-steps"}


def schedules(result) -> list:
    return [found.schedule for found in result.found]


def test_walk_i_is_the_same_walk_whatever_the_number_of_walks():
    scope = Scope("strawman", 3, 2, events=1, swaps=1)
    few, many = random_walk(scope, seed=7, walks=20, budget=60), random_walk(scope, seed=7, walks=40, budget=60)
    also_few = random_walk(scope, seed=7, walks=20, budget=60)
    assert (few.states, few.transitions) == (also_few.states, also_few.transitions)
    assert many.transitions > few.transitions and many.walks == 40 and not few.found and not many.found
    assert random_walk(Scope(FORGETFUL, 3, 2, events=1, swaps=1), seed=3, walks=50).found  # found where it is, too


@pytest.mark.parametrize("protocol, scope, claim", [(FORGETFUL, dict(brokers=3, subscriptions=2, events=1, swaps=1), "CLM-NET-6"),
                                                    (HASTY, dict(brokers=3, subscriptions=1, swaps=1), "CLM-RCF-7")])
def test_random_walks_find_the_planted_bugs_and_the_shrunk_replay_fails_the_same_way(protocol, scope, claim, tmp_path):
    result = random_walk(Scope(protocol, **scope), seed=0, walks=500, out_dir=tmp_path)
    (found,) = result.found
    assert found.violation.claim == claim and found.replay is not None
    assert len(found.schedule) <= found.moves + 1  # shrunk (or as short already)
    doc = json.loads(found.replay.read_text())
    assert doc["schedule"] == found.schedule
    again = subprocess.run([sys.executable, "-m", "subsum", "replay", "--protocol", protocol, str(found.replay)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and f"{claim} violated" in again.stdout, again.stdout + again.stderr


def test_the_random_strategy_reports_its_seed_and_walks():
    report = random_walk(Scope("strawman", 3, 1, events=1), seed=11, walks=5).report()
    assert report["strategy"] == "random" and report["seed"] == 11 and report["walks"] == 5 and not report["complete"]


def hypothesis_run(scope: Scope, examples: int) -> None:
    run_state_machine_as_test(machine_for(scope), settings=settings(max_examples=examples, stateful_step_count=60, deadline=None,
                                                                     database=None, suppress_health_check=list(HealthCheck)))


def test_hypothesis_draws_from_the_models_actions_and_finds_the_planted_bug():
    with pytest.raises(ClaimViolation) as caught:
        hypothesis_run(Scope(FORGETFUL, 3, 2, events=1, swaps=1), 200)
    assert caught.value.claim == "CLM-NET-6"


def test_hypothesis_on_the_real_protocol_finds_nothing():
    hypothesis_run(Scope("strawman", 3, 2, events=1, swaps=1), 30)
    assert machine_for(Scope("strawman", 3, 2, events=1, swaps=1)).model.scope.protocol == "strawman"
