"""subsum explore (spec/12-exploration.md): the breadth-first search visits
every state of a scope, its first counterexample is a shortest one, the
replay it writes runs the same way in another process, and bad scopes are
refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore
from subsum.conformance.explore.fingerprints import canonical, fingerprint
from subsum.conformance.explore.state import State, moves, successor
from subsum.core.errors import SubsumError
from subsum.conformance.schedules.runs import ScheduleError, execute
from subsum.impl.network import CLIENT_BASE, SienaBroker, StrawmanBroker
from subsum.impl.network.protocols.summaries.broker import SummaryBroker

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "examples" / "plugins"


def subsum(*args, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "subsum", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)


def all_paths(scope: Scope, depth: int):
    """Every sequence of at most `depth` moves, with no fingerprint and no
    deduplication: (the state or the exception it raised, the moves' count)."""
    stack = [(State.initial(scope), 0)]
    while stack:
        state, n = stack.pop()
        yield state, n
        if n == depth:
            continue
        for move in moves(state, scope):
            try:
                nxt, _, _ = successor(state, move)
            except Exception as exc:
                yield exc, n + 1
                continue
            stack.append((nxt, n + 1))


def full_key(state: State) -> tuple:
    """A state's whole content, compared by equality rather than by a 64-bit digest."""
    net = state.run.net
    return (state.progress, net.now, state.run.static, canonical({b: canonical(vars(x)) if hasattr(x, "__dict__") else
                                                                  tuple(canonical(getattr(x, s)) for s in ("table", "neighbors"))
                                                                  for b, x in net.brokers.items()}),
            canonical(net.client_filters), canonical({k: [(kind, p) for _, _, kind, p in q] for k, q in net.transport.links.items() if q}),
            tuple(net.broker_links()))


@pytest.mark.parametrize("sleep_sets", [False, True])
def test_a_scope_is_explored_completely_and_the_same_way_twice(sleep_sets):
    scope = Scope("strawman", 2, 2, events=1)
    first, again = explore(scope, sleep_sets=sleep_sets), explore(scope, sleep_sets=sleep_sets)
    assert first.complete and not first.found and first.cut_by is None
    assert (first.states, first.transitions, first.depth) == (again.states, again.transitions, again.depth)
    # every distinct state reachable in any order of moves (no fingerprints, no deduplication) is one the search counted
    reachable = {full_key(state) for state, _ in all_paths(scope, first.depth) if isinstance(state, State)}
    assert len(reachable) == first.states


@pytest.mark.parametrize("scope", [Scope("strawman", 4, 2, topology="star"), Scope("timed", 3, 1, swaps=1),
                                   Scope("notified", 3, 1, swaps=1, unsubscribe=False), Scope("siena", 2, 3),
                                   Scope("summaries", 3, 1, events=1)], ids=str)
def test_sleep_sets_make_fewer_moves_and_reach_every_state(scope):
    """DEF-EXP-6: the moves a sleep set skips lead to states reached another way; the search without them (every
    move of every state, checked against all paths in the test above) reaches the same states."""
    plain, reduced = explore(scope, sleep_sets=False), explore(scope, sleep_sets=True)
    assert plain.complete and reduced.complete
    assert reduced.states == plain.states and reduced.depth == plain.depth
    assert reduced.transitions < plain.transitions


def test_a_bound_cuts_the_search_and_says_so():
    cut = explore(Scope("strawman", 3, 2, events=1), max_states=50)
    assert not cut.complete and cut.cut_by == "max-states" and cut.states == 50


def test_the_fingerprint_ignores_the_order_of_independent_deliveries_but_not_a_table():
    scope = Scope("strawman", 3, 2)
    state = State.initial(scope)
    for i in (0, 1):  # the clients of brokers 0 and 1 subscribe: each access broker sends SUBs
        state, _, _ = successor(state, next(m for m in moves(state, scope) if m.key[0] == "subscribe"))
    first, second = [m for m in moves(state, scope) if m.delivers][:2]
    assert first.local != second.local  # deliveries to two brokers: they commute

    def then(state, key):  # a move named by its key, as the state enables it (a delivery's link index differs by state)
        return successor(state, next(m for m in moves(state, scope) if m.key == key))[0]

    one_then_other = then(then(state, first.key), second.key)
    other_then_one = then(then(state, second.key), first.key)
    assert fingerprint(one_then_other) == fingerprint(other_then_one) != fingerprint(state)
    net = one_then_other.run.net
    before = fingerprint(one_then_other)
    net.ledger.sent["SUB"] += 5  # history: not part of a state
    assert fingerprint(one_then_other) == before
    broker = net.own(2)  # as a handler does: broker 2's hash is cached (no network owned it), so change a copy
    broker.table.setdefault(next(iter(net._canonical.values())), set()).add(CLIENT_BASE + 2)  # a table changed
    assert fingerprint(one_then_other) != before


def test_a_broker_caches_its_hash_only_while_nobody_can_change_it(monkeypatch):
    """DEF-EXP-3: the fingerprint reads each broker's cached hash (`Broker.cached_hash`), kept only for a broker no
    network owns; a handler changes a copy, which starts without it. Planted: a copy that keeps the cached hash
    makes a changed table invisible to the fingerprint."""
    from subsum.impl.network.protocol import Broker

    def run(copy_keeps_the_hash: bool) -> tuple[int, int]:
        scope = Scope("strawman", 3, 1)
        state = State.initial(scope)
        state, _, _ = successor(state, next(m for m in moves(state, scope) if m.key[0] == "subscribe"))
        net = state.run.net
        net.owned.clear()  # as after a fork: every broker shared
        before = fingerprint(state)
        assert all(broker.cached_hash is not None for broker in net.brokers.values())
        if copy_keeps_the_hash:
            real = Broker.copy
            monkeypatch.setattr(Broker, "copy", lambda self: _keeping(real(self), self.cached_hash))
        net.own(0).table.clear()  # broker 0 forgets its table
        return before, fingerprint(state)

    before, after = run(False)
    assert before != after
    before, after = run(True)
    assert before == after  # the plant: the fingerprint misses the change


def _keeping(clone, cached):
    clone.cached_hash = cached
    return clone


def forget_the_last_remaining_subscriber(self, n, f, out):
    """A planted Strawman bug: when one subscriber of f remains, it is not sent the UNSUB (DEF-NET-6's last rule)."""
    subscribers = self.drop_entry(n, f, out)
    if not subscribers:
        for m in self.neighbors:
            if m != n and m < CLIENT_BASE:
                out.send(m, "UNSUB", f)


def test_a_planted_strawman_bug_is_found_with_a_shortest_counterexample(monkeypatch, tmp_path):
    monkeypatch.setattr(StrawmanBroker, "process_unsub_from", forget_the_last_remaining_subscriber)
    scope = Scope("strawman", 3, 2, events=1, swaps=1)
    result = explore(scope, out_dir=tmp_path)
    assert len(result.found) == 1 and not result.complete
    found = result.found[0]
    assert found.violation.claim == "CLM-NET-6" and found.moves == 4
    # no sequence of fewer moves shows a violation (every path, no deduplication)
    assert not [n for state, n in all_paths(scope, found.moves - 1) if not isinstance(state, State)]
    doc = json.loads(found.replay.read_text())
    assert doc["delay"] == [0.0, 0.0] and doc["violation"]["claim"] == "CLM-NET-6" and doc["schedule"] == found.schedule


def test_the_replay_of_a_buggy_plugin_fails_the_same_way_in_another_process(tmp_path):
    plugin = "myplugins.brokers:ForgetfulBroker"
    result = subsum("explore", "--protocol", plugin, "--brokers", "3", "--subscriptions", "2", "--out-dir", tmp_path,
                    "--format", "json", cwd=PLUGINS)
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    (violation,) = report["violations"]
    assert violation["claim"] == "CLM-NET-6" and not report["complete"]
    again = subsum("replay", "--protocol", plugin, violation["replay"], cwd=PLUGINS)
    assert again.returncode == 1 and "CLM-NET-6 violated" in again.stdout, again.stdout + again.stderr
    fixed = subsum("replay", "--protocol", "myplugins.brokers:TidyBroker", violation["replay"], cwd=PLUGINS)
    assert fixed.returncode == 0 and "no violation now" in fixed.stdout, fixed.stdout + fixed.stderr


def test_the_command_reports_a_complete_search_and_exits_0(tmp_path):
    result = CliRunner().invoke(main, ["explore", "--brokers", "2", "--subscriptions", "1", "--out-dir", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) >= {"protocol", "scope", "states", "transitions", "depth", "complete", "seconds", "states_per_second", "violations"}
    assert report["complete"] and report["violations"] == [] and report["states"] > 1
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args, message", [
    (("--subscriptions", "7", "--brokers", "2"), "--subscriptions 7: 2 brokers hold 0 to 6 distinct (client, filter) pairs"),
    (("--swaps", "1", "--brokers", "2"), "--swaps 1: a swap needs 3 brokers or more"),
    (("--protocol", "flooding"), "'flooding' is not one of strawman, timed, notified, informed, caching, siena, siena-nocover, summaries"),
    (("--requests", "1"), "--requests 1: only the caching protocol answers requests (protocol 'strawman')"),
    (("--protocol", "summaries", "--swaps", "1"), "--swaps 1: the summaries family runs on a fixed overlay"),
    (("--overruns", "-1"), "--overruns"),
])
def test_a_bad_scope_is_refused_with_one_line_and_exit_2(args, message, tmp_path):
    result = CliRunner().invoke(main, ["explore", *args, "--out-dir", str(tmp_path)])  # in this process: no start-up to pay
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert message in result.stderr and result.stdout == ""


def test_a_scope_names_what_it_holds():
    scope = Scope("timed", 3, 4)
    assert [scope.subscription(i) for i in range(4)] == [(CLIENT_BASE, "x > 0"), (CLIENT_BASE + 1, "x > 0"),
                                                        (CLIENT_BASE + 2, "x > 0"), (CLIENT_BASE, "x = 1")]
    with pytest.raises(SubsumError, match="1 to 8 brokers"):
        Scope("strawman", 9, 1)


def test_an_exhaustive_claim_check_fails_on_a_planted_bug_and_names_its_replay(monkeypatch, tmp_path):
    from subsum.conformance.explore import checks

    monkeypatch.chdir(tmp_path)  # the check saves its replay into ./fuzz-replays, as the other checks do
    monkeypatch.setattr(StrawmanBroker, "process_unsub_from", forget_the_last_remaining_subscriber)
    with pytest.raises(AssertionError, match=r"CLM-NET-6 violated at operation \d+ of \d+ \(4 moves; strawman, 3 brokers, 2 subscriptions") as failed:
        checks.search_completely(Scope("strawman", 3, 2))
    replay = str(failed.value).rsplit("replay: subsum replay ", 1)[1]
    assert (tmp_path / replay).is_file()


def test_an_exhaustive_claim_check_fails_when_a_bound_cuts_the_search(monkeypatch):
    from subsum.conformance.explore import checks

    monkeypatch.setattr(checks, "MAX_STATES", 10)
    with pytest.raises(AssertionError, match="the search was cut by --max-states .* not searched completely"):
        checks.search_completely(Scope("strawman", 3, 2))


def test_each_protocol_of_the_family_has_an_exhaustive_claim_with_a_larger_scope_under_thorough():
    from subsum.conformance.explore import checks
    from subsum.conformance.schedules.families import schedule_protocols

    # siena-nocover is Siena's covering off: plain forwarding, which CLM-EXP-1 covers
    assert set(checks.CI_SCOPES) == set(checks.THOROUGH_SCOPES) == set(schedule_protocols()) - {"siena-nocover"}
    for protocol, small in checks.CI_SCOPES.items():
        large = checks.THOROUGH_SCOPES[protocol]
        assert small.protocol == large.protocol == protocol
        assert (large.brokers, large.subscriptions, large.events, large.swaps) != (small.brokers, small.subscriptions, small.events, small.swaps)


def withdraw_without_covering_first(self, m, gone, out):
    """A Siena bug: filters leave F(m) without the filters they alone covered going to m first."""
    sent = self.forwarded[m]
    withdrawn = [f for f in gone if f in sent]
    for f in withdrawn:
        del sent[f]
        out.send(m, "UNSUB", f)


def unsubscribe_without_waking_the_rounds(self, client, f, out):
    """A summaries bug: an unsubscription changes the owner's summary but starts no round to propagate it."""
    self.ownership.unsubscribe(client, f)


@pytest.mark.parametrize("cls, method, bug, scope, claim, length", [
    (SienaBroker, "withdraw", withdraw_without_covering_first, Scope("siena", 2, 3), "CLM-SR-8", 5),
    (SummaryBroker, "unsubscribed", unsubscribe_without_waking_the_rounds, Scope("summaries", 3, 2), "CLM-SR-6", 5),
])
def test_a_planted_siena_or_summaries_bug_is_found_shortest_and_its_replay_runs(monkeypatch, tmp_path, cls, method, bug, scope, claim, length):
    clean = explore(scope)
    assert clean.complete and not clean.found  # the scope holds the case, and the correct brokers pass it
    monkeypatch.setattr(cls, method, bug)
    result = explore(scope, out_dir=tmp_path)
    (found,) = result.found
    assert found.violation.claim == claim and found.moves == length
    assert not [n for state, n in all_paths(scope, found.moves - 1) if not isinstance(state, State)]
    doc = json.loads(found.replay.read_text())
    again = execute(doc["topology"], doc["seed"], doc["schedule"], doc["protocol"], delay=tuple(doc["delay"]))
    assert again is not None and again.claim == claim
    fixed = subsum("replay", found.replay)  # another process, the correct brokers: the replay runs and passes
    assert fixed.returncode == 0 and "no violation now" in fixed.stdout, fixed.stdout + fixed.stderr


def test_a_schedule_of_a_fixed_overlay_family_refuses_churn():
    with pytest.raises(ScheduleError, match="the summaries family runs on a fixed overlay"):
        execute({"kind": "path", "brokers": 3, "links": [[0, 1], [1, 2]], "clients": [1, 1, 1]}, 0,
                [{"op": "swap", "old": [0, 1], "pick": [0.5, 0.5], "lose": False, "gap": 0.0}], "summaries")


def test_overruns_bound_how_often_a_timer_fires_while_messages_are_in_flight():
    assert Scope("summaries", 3, 1).overruns == 1 and Scope("timed", 3, 1).overruns is None
    searched = {k: explore(Scope("summaries", 3, 1, overruns=k)) for k in (0, 1)}
    assert all(r.complete and not r.found for r in searched.values())
    assert searched[0].states < searched[1].states  # an overrun reaches states no in-order firing does
    for state, _ in all_paths(Scope("summaries", 3, 1, overruns=0), 8):
        if isinstance(state, State) and state.run.net.transport.pending_links():
            assert not [m for m in moves(state, Scope("summaries", 3, 1, overruns=0)) if m.key == ("timeout",)]


def test_no_claim_scope_has_a_symmetry_and_a_star_of_leaves_alike_has_some():
    """spec/12 "Symmetry over broker ids": the reduction would save nothing on the claims' scopes."""
    from subsum.conformance.explore import checks

    for scope in [*checks.CI_SCOPES.values(), *checks.THOROUGH_SCOPES.values()]:
        assert scope.symmetries() == [], scope
    assert len(Scope("strawman", 4, 1, topology="star").symmetries()) == 5  # the 3 leaves, alike: 3! - 1
    assert Scope("strawman", 3, 3).symmetries() == [{0: 2, 1: 1, 2: 0}]  # the path reversed: both ends hold x > 0
    assert Scope("strawman", 3, 3, events=1).symmetries() == []  # the publisher, broker 2, is fixed
    assert Scope("strawman", 3, 3).describe()["symmetries"] == 1
