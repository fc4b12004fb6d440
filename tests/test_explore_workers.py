"""`subsum explore --jobs N` (spec/12 DEF-EXP-11): the breadth-first search
split across forked workers that share one fingerprint table gives one
job's results (the states, the transitions of the same sleep-set-free
search, the verdict and the depth of the shortest violation), on every
family; its violations replay in another process; a table each worker kept
to itself is caught; bounds and Ctrl-C stop every worker."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.conformance.explore import workers
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore
from subsum.conformance.explore.workers import SharedSeen

FORGETFUL = "subsum.bench.planted:ForgetfulStrawman"
HASTY = "subsum.bench.planted:HastyInformed"

#: A scope of each family (and each reconfiguration protocol); the tests lower the fork's threshold so that each forks.
SCOPES = [Scope("strawman", 3, 2, events=1, swaps=1), Scope("informed", 3, 1, swaps=1), Scope("timed", 3, 1, swaps=1),
          Scope("notified", 3, 1, swaps=1), Scope("siena", 3, 2, events=2), Scope("summaries", 2, 1, events=1),
          Scope("caching", 3, 2, events=1, requests=1)]
#: `make test` runs the families' equality on these (one of each family); `make thorough` on every scope above
EVERY_CHANGE = {"strawman", "informed", "siena", "summaries", "caching"}


@pytest.fixture(autouse=True)
def early_fork(monkeypatch):
    monkeypatch.setattr(workers, "SPLIT", 4)


def outcome(result) -> tuple:
    return result.states, result.transitions, result.complete, result.depth, [f.violation.claim for f in result.found]


@pytest.mark.parametrize("scope", [s if s.protocol in EVERY_CHANGE else pytest.param(s, marks=pytest.mark.thorough) for s in SCOPES],
                         ids=lambda s: s.protocol)
def test_two_jobs_give_one_jobs_states_and_verdict(scope, monkeypatch):
    forks = []
    fork = workers.ParallelSearch.fork
    monkeypatch.setattr(workers.ParallelSearch, "fork", lambda self, frontier: (forks.append(len(frontier)), fork(self, frontier)))
    one, unreduced, two = explore(scope, budget=300), explore(scope, budget=300, sleep_sets=False), explore(scope, budget=300, jobs=2)
    assert outcome(two) == outcome(unreduced)  # the same search, sleep sets off, on one process
    assert (two.states, two.complete, two.depth) == (one.states, one.complete, one.depth) and two.complete
    assert forks, "the search never forked: the scope is too small to test the workers"
    assert [p["runs"] > 0 for p in two.properties] == [p["runs"] > 0 for p in one.properties]


@pytest.mark.parametrize("protocol, scope", [(FORGETFUL, dict(brokers=3, subscriptions=2, events=1, swaps=1)),
                                             (HASTY, dict(brokers=3, subscriptions=1, swaps=1))])
def test_two_jobs_find_the_planted_bug_at_the_least_depth_and_its_replay_fails_alike(protocol, scope, tmp_path):
    one = explore(Scope(protocol, **scope), budget=300)
    two = explore(Scope(protocol, **scope), budget=300, jobs=2, out_dir=tmp_path)
    (found,) = two.found
    assert found.violation.claim == one.found[0].violation.claim and found.moves == one.found[0].moves
    again = subprocess.run([sys.executable, "-m", "subsum", "replay", "--protocol", protocol, str(found.replay)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and f"{found.violation.claim} violated" in again.stdout, again.stdout + again.stderr


def test_a_table_each_worker_keeps_to_itself_is_caught(monkeypatch):
    """The plant: each worker's fingerprints in its own memory (a set forked with it), not in the shared table."""
    def private_add(self, key, _mine=set()):
        new = key not in _mine
        _mine.add(key)
        if new:
            self.slots[self.mask + 1] += 1
        return new

    scope = SCOPES[0]
    right = explore(scope, budget=300, sleep_sets=False)
    monkeypatch.setattr(SharedSeen, "add", private_add)
    monkeypatch.setattr(SharedSeen, "__contains__", lambda self, key: False)
    planted = explore(scope, budget=300, jobs=2)
    assert outcome(planted) != outcome(right) and planted.states > right.states


def test_the_shared_table_adds_each_fingerprint_once_and_refuses_to_overflow():
    table = SharedSeen(4)
    assert table.add(0) and not table.add(0) and 0 in table and 1 in table  # 0 is stored as 1 (the empty slot is 0)
    assert table.add(-5) and (-5) in table and 2**64 - 5 in table and table.count == 2
    assert table.add(7 << 40) and (7 << 40) not in [k for k in (3, 4)] and 3 not in table
    with pytest.raises(MemoryError, match="full"):
        for key in range(2, 5000):
            table.add(key)


def test_the_max_states_bound_stops_every_worker():
    result = explore(Scope("strawman", 4, 2, events=1, swaps=1), max_states=20_000, budget=300, jobs=2)
    assert result.cut_by == "max-states" and not result.complete and result.queue > 0
    assert 20_000 <= result.states < 21_000 and result.report()["jobs"] == 2


def test_jobs_run_the_breadth_first_search_only():
    run = CliRunner().invoke(main, ["explore", "--jobs", "2", "--strategy", "dfs"])
    assert run.exit_code == 2 and "--jobs 2 runs the breadth-first search only" in run.output
    run = CliRunner().invoke(main, ["explore", "--brokers", "3", "--events", "1", "--swaps", "1", "--jobs", "2", "--format", "json"])
    report = json.loads(run.output)
    assert run.exit_code == 0 and report["jobs"] == 2 and report["states"] == 8633 and report["complete"]


def test_the_bench_judges_speed_ups_by_its_stated_rule(tmp_path):
    from subsum.bench.explore import jobs as bench

    def rows(one: list[float], two: list[float]) -> list[dict]:
        return ([{"round": i, "search": "one job", "seconds": s} for i, s in enumerate(one)]
                + [{"round": i, "search": "2 jobs", "seconds": s} for i, s in enumerate(two)])

    assert bench.speedup(rows([17, 17, 17.2], [10, 10, 10]), "one job")["verdict"] == "holds"
    assert bench.speedup(rows([22, 12, 17], [10, 10, 10]), "one job")["verdict"] == "holds at the mean"
    assert bench.speedup(rows([15, 15, 15], [10, 10, 10]), "one job")["verdict"] == "differs"


@pytest.mark.thorough  # 11 s: the quick bench itself
def test_the_quick_bench_writes_its_files_and_finds_identical_results(tmp_path):
    from subsum.bench.explore import jobs as bench

    summary = bench.run(tmp_path, quick=True, log=lambda _: None)
    assert summary["identical_results"] == "holds" and summary["states"] == 8633
    assert {p.name for p in tmp_path.iterdir()} == {"jobs.csv", "jobs.png", "summary.json"}


@pytest.mark.thorough  # 10 s; explore's own Ctrl-C test (tests/test_findings_kept.py) runs on every change
def test_ctrl_c_stops_every_worker_and_exits_130_with_the_partial_report(tmp_path):
    from tests.test_findings_kept import interrupt_when

    def forked(text: str) -> bool:  # past the fork (a layer of 64 states), the progress lines come from the workers' counts
        return text.startswith("exploring: depth ") and int(text.split()[2].rstrip(":")) >= 8

    status, out, err = interrupt_when(["explore", "--brokers", "4", "--subscriptions", "3", "--events", "1", "--swaps", "1",
                                       "--jobs", "2", "--budget", "300", "--format", "json"], tmp_path, forked)
    assert status == 130, err
    report = json.loads(out)
    assert report["cut_by"] == "interrupt" and report["jobs"] == 2 and not report["complete"]
    assert report["states"] > 1000 and report["queue"] > 0 and report["depth"] >= 8
    assert "interrupted (Ctrl-C) at depth" in err and "Traceback" not in err


def test_a_worker_that_dies_fails_the_search_at_once(monkeypatch):
    import os

    work = workers.ParallelSearch.work

    def dying(self, worker, frontier, pipe):
        if worker == 0:
            os._exit(5)
        work(self, worker, frontier, pipe)

    monkeypatch.setattr(workers.ParallelSearch, "work", dying)
    with pytest.raises(workers.WorkerFailed, match="worker 0 ended without its results .exit code 5."):
        explore(SCOPES[0], budget=60, jobs=2)


def test_ctrl_c_in_a_search_stops_the_bench_that_runs_it(monkeypatch):
    """explore() keeps Ctrl-C to report on (cut_by "interrupt"); a bench running searches must stop, not go on."""
    from subsum.bench.explore import jobs as bench
    from subsum.conformance.explore.searches import Exploration

    monkeypatch.setattr(bench, "explore", lambda scope, **_: Exploration(scope, cut_by="interrupt"))
    with pytest.raises(KeyboardInterrupt):
        bench.one_run("2 jobs", bench.QUICK_SCOPE, 0)
