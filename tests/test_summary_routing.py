"""Summary-based routing (spec/08-summary-routing.md): the checks of
conformance.checks.routing.churn bite on planted bugs, the CLI prints Example 4-3's plan,
and `subsum simulate summaries` delivers exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from subsum.conformance.runner import profiles
from subsum.conformance.checks.routing import churn as routing_machine
from subsum.impl.network.protocols.summaries.broker import SummaryBroker
from subsum.impl.network.protocols.summaries.routing import Routing

ROOT = Path(__file__).resolve().parents[1]


class RoutingWithoutOwnerFilter(Routing):
    """Planted bug: the c1 filter is dropped, so owners already checked get the event again."""

    def unchecked_owners(self, matched, brocli):
        return super().unchecked_owners(matched, frozenset())


class NoOwnerFilter(routing_machine.CheckedSummaryBroker):
    __slots__ = ()

    routing_role = RoutingWithoutOwnerFilter


class SkipsOneChild(routing_machine.CheckedSummaryBroker):
    """Planted bug: the delta of the last plan child is acknowledged but not merged."""

    __slots__ = ()

    def delta_received(self, src, update, out):
        if src == max(out.shared.plan.children[self.id]):
            delta = update.delta
            update = attrs.evolve(update, delta=type(delta)(delta.broker, type(delta.insertions)(delta.insertions.layout, delta.insertions.schema)))
        SummaryBroker.delta_received(self, src, update, out)


def machine_with(broker, compare_histories=True):
    return type(f"Planted{broker.__name__}", (routing_machine.SummaryRoutingUnderChurn,),
                {"broker_class": broker, "compare_histories": compare_histories})


def test_no_false_negative_invariant_bites():
    """With histories not compared, the delivery check alone catches a skipped delta: a lost event."""
    profiles.load("ci")
    with pytest.raises(AssertionError, match="missing"):
        routing_machine.run_summary_routing_machine(machine_with(SkipsOneChild, compare_histories=False), shrink=False)


def test_exactly_once_and_route_checks_bite():
    """Without the c1 filter an owner is handed the event again: a second
    DELIVER (a route the model does not send), or a second copy."""
    profiles.load("ci")
    with pytest.raises(AssertionError, match="CLM-SR-6: event .* (more than once|the model sends)"):
        routing_machine.run_summary_routing_machine(machine_with(NoOwnerFilter, compare_histories=False), shrink=False)


def test_history_check_bites():
    profiles.load("ci")
    with pytest.raises(AssertionError, match="history"):
        routing_machine.run_summary_routing_machine(machine_with(SkipsOneChild), shrink=False)


def test_plan_cli_prints_example_4_3():
    result = subprocess.run([sys.executable, "-m", "subsum", "summary", "plan", "--topology",
                             str(ROOT / "examples/seed000/example-4-3.edgelist"), "--format", "json"],
                            capture_output=True, text=True, check=True)
    plan = json.loads(result.stdout)
    assert plan["messages"] == 10
    assert plan["sinks"] == [{"sink": 5, "merged_brokers": [1, 2, 3, 4, 5, 6]}, {"sink": 8, "merged_brokers": [7, 8, 9, 10]},
                             {"sink": 11, "merged_brokers": [11, 12, 13]}]


def test_simulate_summaries_delivers_exactly():
    done = subprocess.run([sys.executable, "-m", "subsum", "simulate", "summaries", "--brokers", "12",
                           "--subscriptions", "60", "--events", "60", "--format", "json"], capture_output=True, text=True, check=True)
    counters = json.loads(done.stdout)
    assert counters["protocol"] == "summaries" and counters["owed"] > 0
    assert (counters["lost"], counters["duplicates"], counters["unjustified"]) == (0, 0, 0), counters
    assert counters["sent"]["SUMMARY"] < 12 and counters["sent"]["ROUTE"] <= 60 * 11


@pytest.mark.parametrize("args, message", [
    (["--swaps", "1"], "No such option '--swaps'"),  # a fixed overlay: the option is not there
    (["--protocol", "timed"], "No such option '--protocol'"),
])
def test_simulate_summaries_refuses_what_it_cannot_do(args, message):
    result = subprocess.run([sys.executable, "-m", "subsum", "simulate", "summaries", *args],
                            capture_output=True, text=True)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr
