"""subsum explore's memo of local steps and its one record per view (spec/12
DEF-EXP-7): with them a search reaches the same states by the same moves and
finds the same violations as without; each protocol's declared view
(`Broker.explore_view`) leaves out nothing that tells two records apart; and
the checks bite (a memo key without the sender, a view without a check's own
field)."""

from __future__ import annotations

import time

import pytest

from subsum.conformance.checks.network.checked_brokers import InformedChecks
from subsum.conformance.explore.checks import CI_SCOPES
from subsum.conformance.explore.memo import LocalSteps
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore
from subsum.conformance.explore.searches import BreadthFirst, Exploration
from subsum.conformance.explore.fingerprints import Records
from subsum.core import collector

FORWARDING = ("strawman", "timed", "notified", "informed", "siena")


def every(values, fast, ids=str) -> list:
    """`values` as parameters, those not in `fast` under the `thorough` mark (`make thorough`; `make test` keeps
    within its time)."""
    return [pytest.param(v, id=ids(v), marks=() if v in fast else pytest.mark.thorough) for v in values]


def outcome(result: Exploration) -> tuple:
    return (result.states, result.transitions, result.depth, result.complete,
            [(f.violation.claim, f.moves) for f in result.found])


@pytest.mark.parametrize("protocol", every(sorted(CI_SCOPES), ("strawman", "informed", "summaries")))
def test_the_memo_changes_nothing_but_the_time(protocol):
    """Every claim scope searched with and without the memo: the same states, moves, depth and verdict; the
    forwarding family's local steps (deliveries, client operations, publications) come from the memo almost always,
    the summaries' never (not declared local)."""
    scope = CI_SCOPES[protocol]
    with_memo, without = explore(scope, budget=float("inf")), explore(scope, budget=float("inf"), memo=False)
    assert outcome(with_memo) == outcome(without)
    steps = with_memo.report()["local_steps"]
    assert without.report()["local_steps"] is None
    if protocol in FORWARDING:
        assert steps["memoized"] and steps["hit_rate"] > 0.85 and steps["distinct"] < steps["steps"] / 8, steps
    else:
        assert not steps["memoized"] and steps["applied_from_memo"] == 0, steps


def test_a_memo_key_without_the_sender_is_caught(monkeypatch):
    """Planted: the key forgets who sent the message, so a SUB from one neighbor replays one from another. The
    search then differs from the one without the memo (the comparison above fails)."""
    scope = CI_SCOPES["strawman"]  # on smaller scopes the wrong key happens to give the same states
    without = outcome(explore(scope, memo=False))
    monkeypatch.setattr(LocalSteps, "key", staticmethod(lambda net, link, kind, payload: (id(net.brokers[link[1]]), kind, payload, net.now)))
    assert outcome(explore(scope)) != without


def search_verifying_views(scope: Scope) -> Exploration:
    """A search whose records are replaced only when every field equals (`Records(verify=True)`)."""
    search = BreadthFirst(scope, Exploration(scope), time.perf_counter(), 10**6, float("inf"), None, True,
                          records=Records(verify=True))
    with collector.acyclic():
        search.run(True)
    return search.result


@pytest.mark.parametrize("scope", every([*CI_SCOPES.values(), Scope("informed", 3, 2, swaps=1, unsubscribe=False), Scope("siena", 3, 3)],
                                         (CI_SCOPES["informed"], CI_SCOPES["strawman"], CI_SCOPES["siena"])))
def test_every_declared_view_keeps_what_tells_two_records_apart(scope):
    result = search_verifying_views(scope)
    assert result.complete and not result.found, result.report()


@pytest.mark.parametrize("protocol", every(sorted(CI_SCOPES), ("strawman", "timed")))
def test_a_successor_fingerprinted_from_its_parents_parts_is_fingerprinted_right(protocol):
    """DEF-EXP-7: a delivery whose local step the memo knows has its successor's fingerprint taken from the parent's
    parts, and its successor is not made when that was seen. Checked: each such successor is made anyway and
    fingerprinted in full, and the two must agree (`check_shortcut`); the search is the one without the memo."""
    scope = CI_SCOPES[protocol]
    search = BreadthFirst(scope, Exploration(scope), time.perf_counter(), 10**6, float("inf"), None, True, check_shortcut=True)
    with collector.acyclic():
        search.run(True)
    assert outcome(search.result) == outcome(explore(scope, memo=False))


def test_a_wrong_shortcut_is_caught(monkeypatch):
    """Planted: the parts of a delivery's successor keep the parent's record for the receiver."""
    import subsum.conformance.explore.fingerprints as fingerprints

    real = fingerprints.delivered_parts

    def stale_receiver(state, link, known, records):
        parts = real(state, link, known, records)
        return None if parts is None else fingerprints.Parts(parts.head, state.parts.brokers, parts.filters, parts.flight,
                                                            parts.timers, parts.links, parts.shared, parts.pending)

    monkeypatch.setattr("subsum.conformance.explore.searches.delivered_parts", stale_receiver)
    scope = Scope("strawman", 3, 2)
    search = BreadthFirst(scope, Exploration(scope), time.perf_counter(), 10**6, float("inf"), None, True, check_shortcut=True)
    with pytest.raises(AssertionError, match="the parts' fingerprint differs"), collector.acyclic():
        search.run(True)
    assert outcome(explore(scope)) != outcome(explore(scope, memo=False))


def test_a_view_that_leaves_out_a_checks_own_field_is_caught(monkeypatch):
    """Planted: the informed check's view without what it expects of the next ACTIVATE (`_expect`). Two records
    that differ there share a view, and the verifying search names the field."""
    monkeypatch.setattr(InformedChecks, "explore_view", lambda self: super(InformedChecks, self).explore_view())
    with pytest.raises(AssertionError, match=r"CheckedInformedBroker.explore_view leaves out \['_expect'\]"):
        search_verifying_views(CI_SCOPES["informed"])


def test_the_report_bounds_the_chance_of_a_fingerprint_collision():
    """DEF-EXP-3: (transitions + 1) x states / 2^64, TLC's kind of estimate; tiny at the claim scopes."""
    result = explore(CI_SCOPES["strawman"])
    bound = result.report()["fingerprint_collision_bound"]
    assert bound == pytest.approx(27_940 * 8_633 / 2**64, rel=1e-3) and bound < 1e-10


def test_the_report_counts_local_steps():
    report = explore(Scope("strawman", 3, 2)).report()
    steps = report["local_steps"]
    assert set(steps) == {"memoized", "steps", "distinct", "applied_from_memo", "hit_rate"}
    assert steps["steps"] == steps["applied_from_memo"] + steps["distinct"] > 0
