"""Pieces of subsum.conformance called directly: the registry's records and
the reports of a run, the fuzzer's report and shrinking, the checks'
fixed cases and what their failures say. Several are reached otherwise
only from `subsum verify` in a worker process, or at import time."""

from __future__ import annotations

import queue
import random
import re
from collections import Counter
from types import SimpleNamespace

import pytest
import z3

from subsum.conformance.runner import census
from subsum.conformance.checks.matching import engines
from subsum.conformance.runner import verify
from subsum.conformance.runner import pool as verify_workers
from subsum.conformance.claims import Check, CheckResult, claim_by_id, run_check
from subsum.conformance.claims.records import property_of
from subsum.conformance.schedules.fuzz import FuzzResult
from subsum.conformance.kit.vector_cases import GENERATORS, VectorError
from subsum.conformance.kit.vectors import load_vectors
from subsum.conformance.checks.caching.in_protocol import RecordedCache
from subsum.conformance.runner.reports import html_page
from subsum.conformance.checks.routing.churn import SCHEMA, CheckedSummaryBroker
from subsum.conformance.schedules.runs import Violation, execute
from subsum.conformance.schedules.shrinking import Found, shrink
from subsum.conformance.checks.summaries import examples, proofs
from subsum.conformance.checks.pipeline.trace_boundaries import count_boundaries
from subsum.conformance.runner.violations import ClaimViolation
from subsum.impl.caching import make_cache
from subsum.impl.network import build
from subsum.impl.network.actor import Out
from subsum.impl.network.messages import RouteEvent
from subsum.impl.network.protocols.summaries.routing import Routing
from subsum.impl.summary.history import History
from subsum.impl.summary.summary import Summary
from subsum.model import smt
from subsum.model.semantics import matches


# --- the registry and a run's reports ----------------------------------------------------------

def test_a_check_cut_at_its_budget_says_how_long_it_ran():
    def forever() -> None:
        while True:
            pass

    check = Check("example", "tests.forever", forever, budget=0.2)
    result = run_check(claim_by_id("CLM-ENG-1"), check)
    assert (result.claim, result.kind, result.check, result.status, result.violated) == ("CLM-ENG-1", "example", "tests.forever", "timeout", None)
    assert re.fullmatch(r"cut after (0\.[2-9]|[1-4]\.[0-9]) s: ran past its budget of 0\.2 s", result.detail), result.detail


def test_a_property_check_records_its_kind_and_floors():
    def holds() -> None:
        pass

    check = property_of(holds)
    assert (check.kind, check.name, check.floors) == ("property", f"{holds.__module__.replace('subsum.', '')}.holds", {})
    assert property_of(holds, {"tag": 2}, family="conformance.x").floors == {"tag": 2}


def test_the_html_page_marks_the_checks_that_did_not_pass():
    results = [CheckResult("CLM-X-1", "example", "c.ok", "pass", 0.5, "3 proved"),
               CheckResult("CLM-X-1", "property", "c.bad", "fail", 1.0, "boom", "CLM-X-2")]
    page = html_page(results, [], "ci", 1.5)
    claim = "<td><a href='#CLM-X-1'>CLM-X-1</a></td><td></td><td></td>"
    assert (f"<tr class=''>{claim}<td>example</td><td>c.ok<span class='dim'>3 proved</span></td>"
            "<td class='pass'>pass</td><td class='time'>0.50</td></tr>") in page
    assert (f"<tr class='bad'>{claim}<td>property</td><td>c.bad<div>violated <a href='#CLM-X-2'>CLM-X-2</a></div><pre>boom</pre>"
            "<div class='dim'>replay: subsum verify --claim CLM-X-1  (the ci profile draws the same examples every run)</div></td>"
            "<td class='fail'>fail</td><td class='time'>1.00</td></tr>") in page


def test_a_parallel_run_reports_the_budget_of_a_stuck_check(monkeypatch):
    claim = claim_by_id("CLM-ENG-1")
    done = [CheckResult(claim.id, "example", "c", "pass", 0.1, "")]
    told = []

    def run_parallel(settings, work, jobs, progress, stuck):
        assert (jobs, work) == (2, verify_workers.units([claim]))
        stuck(done, *work[0], 7.5)
        return done

    monkeypatch.setattr(verify_workers, "run_parallel", run_parallel)
    run = verify.Run(verify.Selection([claim]), "ci", jobs=2)
    assert run.check_all(lambda *_: None, lambda *args: told.append(args)) == done
    assert told == [(claim, claim.checks[0], 7.5)] and run.results == done


class DyingWorker:
    """A worker process stand-in: the first one made dies on the check it is handed, the others answer."""

    made: list = []

    def __init__(self, settings, inbox: queue.Queue, spark: bool) -> None:
        self.inbox, self.spark, self.running, self.stopped = inbox, spark, None, False
        self.process = SimpleNamespace(stdin=SimpleNamespace(close=lambda: None))
        self.first = not DyingWorker.made
        DyingWorker.made.append(self)

    def send(self, message: dict) -> None:
        if self.first:
            self.inbox.put((self, None))
        else:
            index = message["check"]
            self.inbox.put((self, {"result": index, "claim": "CLM-ENG-1", "kind": "example", "check": f"c{index}", "status": "pass",
                                   "seconds": 0.1, "detail": ""}))

    def death(self) -> str:
        return "the worker process running it ended with exit status -9"

    def stop(self) -> None:
        self.stopped = True


def test_a_worker_that_dies_fails_its_check_and_is_replaced(monkeypatch):
    claim = claim_by_id("CLM-ENG-1")
    work = [(claim, check) for check in claim.checks[:2]]
    monkeypatch.setattr(DyingWorker, "made", [])
    monkeypatch.setattr(verify_workers, "Worker", DyingWorker)
    results = verify_workers.run_parallel({}, work, 1, lambda *_: None, lambda *_: None)
    assert results == [CheckResult("CLM-ENG-1", work[0][1].kind, work[0][1].name, "fail", 0.0,
                                   "the worker process running it ended with exit status -9"),
                       CheckResult("CLM-ENG-1", "example", "c1", "pass", 0.1, "")]
    assert len(DyingWorker.made) == 2 and all(w.stopped for w in DyingWorker.made)


# --- fixed cases and planted failures ----------------------------------------------------------

def test_the_every_operator_case_fails_one_constraint_an_event():
    [(_, subscription)], events = engines._every_operator_case()
    pairs = {(c.type, c.op) for c in subscription.constraints}
    assert pairs == {(t, op) for t in ("int", "float") for op in ("=", "!=", "<", "<=", ">", ">=", "any")} | {
        ("string", op) for op in ("=", "!=", "prefix", "suffix", "contains", "wildcard", "any")} | {("bool", op) for op in ("=", "!=", "any")}
    assert [matches(subscription, e) for e in events] == [True] + [False] * len(pairs)


def test_the_fuzzers_report_says_how_long_each_violation_was_when_found():
    result = FuzzResult(schedules=3, operations=40, violations=["a.json", "b.json"], claims=["CLM-NET-2", "crash"],
                        lengths=[(4, 9), (5, 5)], seconds=2.0, first_violation_seconds=0.5)
    assert result.report(seed=7) == {
        "seed": 7, "schedules": 3, "operations": 40, "seconds": 2.0, "schedules_per_minute": 90.0, "first_violation_seconds": 0.5,
        "cut_operations": 0, "interrupted": False, "repeats": 0,
        "violations": [{"claim": "CLM-NET-2", "replay": "a.json", "operations": 4, "saved": True, "shrunk_from": 9},
                       {"claim": "crash", "replay": "b.json", "operations": 5, "saved": True}]}


def test_a_recorded_cache_records_an_advance():
    recorded = RecordedCache(make_cache("lru", 2), "broker 0", lambda: 3.0)
    recorded.advance(3.0)
    assert recorded.ops == [{"op": "advance", "time": 3.0}]


class PlantedRouting(Routing):
    """A routing role that hands every event on to broker 0 with a BROCLI it chose badly (`grow`)."""

    grow: frozenset = frozenset()

    def route(self, eid, event, brocli, publisher, out):
        out.send_direct(0, "ROUTE", RouteEvent(eid, event, brocli | self.grow, publisher))
        return set()


@pytest.mark.parametrize("grow, message", [
    (frozenset(), "BROCLI of event 7 did not grow at broker 1: [5] then [5]"),
    (frozenset({0, 1}), "broker 1 sent the ROUTE of event 7 to broker 0, already in its BROCLI [0, 1, 5]")])
def test_a_route_that_does_not_grow_its_brocli_or_goes_to_a_checked_broker_is_a_violation(grow, message):
    """Read off the broker's out-buffer, where it hands the event on (planted: a routing role that keeps or over-fills
    the BROCLI)."""
    routing = type("Planted", (PlantedRouting,), {"grow": grow, "__slots__": ()})
    broker_class = type("PlantedSummaryBroker", (CheckedSummaryBroker,), {"routing_role": routing, "__slots__": ()})
    net = build([(0, 1)], 2, seed=0, protocol="summaries", broker_class=broker_class,
                options={"schema": SCHEMA, "brokers": 8, "max_subscriptions": 64, "option": "a", "period": 50.0})
    with pytest.raises(ClaimViolation) as caught:
        net.brokers[1].routed(0, RouteEvent(7, None, frozenset({5}), 1_000_000), Out(1, net))
    assert (caught.value.claim, caught.value.message) == ("CLM-SR-6", message)


def test_a_schedule_runs_under_strawman_unless_told_otherwise():
    topology = {"kind": "line", "brokers": 2, "links": [[0, 1]], "clients": [1, 1]}
    schedule = [{"op": "subscribe", "client": 1_000_000, "filter": "x > 1"}, {"op": "quiesce"},
                {"op": "publish", "client": 1_000_001, "attributes": {"x": 2}}]
    assert execute(topology, 0, schedule) is None
    assert execute(topology, 0, schedule, "nonesuch").claim == "crash"


def test_shrinking_cuts_a_deliver_to_the_choices_the_failure_needs(monkeypatch):
    def fake_execute(topology, seed, schedule, *rest):  # fails where a deliver's first choice is 3
        for step, op in enumerate(schedule):
            if op["op"] == "deliver" and op["choices"][:1] == [3]:
                return Violation("CLM-NET-1", "planted", step)
        return None

    monkeypatch.setattr("subsum.conformance.schedules.shrinking.execute", fake_execute)
    schedule = [{"op": "quiesce"}, {"op": "deliver", "choices": [3, 1, 2]}, {"op": "quiesce"}]
    case = Found({}, 0, schedule, Violation("CLM-NET-1", "planted", 1), "strawman", 1.0, 1.0)
    assert shrink(case, 30.0) == ([{"op": "deliver", "choices": [3]}], Violation("CLM-NET-1", "planted", 0))


def test_example_4_4_wants_one_request_naming_both_owners(monkeypatch):
    """Seed 000's Example 4-4: broker 3 rebuilds the price row by asking
    brokers 1 and 2. A history that asks broker 1 apart, first, gets the
    same rows, but its last request for the row no longer names broker 1."""
    def split_apply(self, delta, resolve):
        def by_owner(key, ids):
            first = [i for i in ids if self.layout.broker_of(i) == 1]
            return resolve(key, first) + resolve(key, [i for i in ids if i not in first])

        return Summary.apply(self, delta, None if resolve is None else by_owner)

    monkeypatch.setattr(History, "apply", split_apply)
    with pytest.raises(AssertionError) as caught:
        examples.seed000_example_4_4()
    price, symbol = ("price", "float"), ("symbol", "string")
    assert str(caught.value) == str([(price, [1]), (price, [2, 3]), (symbol, [1]), (symbol, [2])])


def test_the_generalization_proofs_name_the_step_that_fails(monkeypatch):
    holds = smt.operator_holds
    monkeypatch.setattr(smt, "operator_holds", lambda op, v, w: z3.BoolVal(False) if op == "wildcard" else holds(op, v, w))
    with pytest.raises(AssertionError) as caught:
        proofs.prove_generalizations()
    assert str(caught.value) == "wildcard * is any: sat []"


def test_the_trace_census_counts_each_boundary():
    records = [{"time": 995.0, "kind": "subscribe", "filter": ""}, {"time": 1005.0, "kind": "unsubscribe", "filter": "x > 0"},
               {"time": 995.0, "kind": "unsubscribe", "filter": ""}, {"time": 1000.0, "kind": "publish"}]
    with census.observe() as seen:
        count_boundaries(records, [1000.0], 5.0)
    assert seen == Counter({"trace:start-at-tp-minus-grace": 1, "trace:end-at-tp-plus-grace": 1, "trace:end-at-tp-minus-grace": 1,
                            "trace:empty-filter": 2, "trace:equal-times": 1})


# --- vectors -----------------------------------------------------------------------------------

def test_strawman_vectors_of_a_removed_link_give_the_state_and_messages():
    removed = [case for case in GENERATORS["strawman"](random.Random(0)) if case["input"]["message"]["kind"] == "REMOVE-LINK"]
    assert len(removed) > 10
    for case in removed:
        assert set(case["input"]["message"]) == {"kind", "neighbor"} and set(case["expected"]) == {"state", "messages"}, case


def test_a_vectors_file_of_another_kind_is_refused(tmp_path):
    path = tmp_path / "matching.json"
    path.write_text('{"format": "subsum-vectors", "kind": "filters", "spec_version": 1, "cases": []}')
    with pytest.raises(VectorError) as caught:
        load_vectors(tmp_path, "matching")
    assert str(caught.value) == f"{path}: not a subsum-vectors file of kind 'matching'"
