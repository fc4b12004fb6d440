"""Declared properties (spec/12 DEF-EXP-8, conformance/schedules/declared.py): each
family lists what a run checks, each `Always` property runs after exactly
the operations it names, the explorer's report lists every property with
how often it ran, and the quiescence backstop of the overlay check bites."""

from __future__ import annotations

import pytest

from subsum.conformance.schedules import declared
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore
from subsum.conformance.schedules.families import FORWARDING, SIENA, SUMMARIES
from subsum.conformance.schedules.runs import Run
from subsum.conformance.runner.violations import ClaimViolation
from subsum.impl.network import CLIENT_BASE, SienaBroker


@pytest.mark.parametrize("family, protocol", [(FORWARDING, "strawman"), (FORWARDING, "informed"), (SIENA, "siena"),
                                              (SUMMARIES, "summaries")])
def test_each_family_declares_its_properties_once_each(family, protocol):
    properties = family.properties(protocol)
    names = [p.name for p in properties]
    assert len(names) == len(set(names)) and {"overlay", "client-messages"} <= set(names)
    assert {p.form for p in properties} == {declared.ALWAYS, declared.AT_QUIESCENCE, declared.ON_STEP}
    for p in properties:
        assert (p.check is None) == (p.form == declared.ON_STEP) and p.after <= declared.EVERY_OPERATION


def three_brokers() -> Run:
    return Run(Scope("strawman", 3, 1).network(), 0, "strawman", delay=(0.0, 0.0))


def test_a_property_runs_after_the_operations_it_names_only():
    run = three_brokers()
    with declared.tallying() as tally:
        run.apply({"op": "subscribe", "client": CLIENT_BASE, "filter": "x > 0"})
        run.apply({"op": "deliver", "choices": [0]})
    assert tally["overlay"] == 0 and tally["client-messages"] == 2 and tally["broker-steps"] == 2
    with declared.tallying() as tally:
        run.apply({"op": "swap", "old": [0, 1], "pick": [0.5, 0.75], "lose": False, "gap": 0.0})
        run.apply({"op": "quiesce"})
    assert tally["overlay"] == 2 and tally["tables"] == 1 and tally["client-messages"] == 2


def test_the_explorer_lists_every_property_with_its_runs():
    result = explore(Scope("strawman", 3, 2, events=1, swaps=1), budget=float("inf"))
    runs = {p["name"]: p["runs"] for p in result.report()["properties"]}
    assert set(runs) == {p.name for p in FORWARDING.properties("strawman")}
    assert all(runs.values()), runs  # this scope makes every one of them run
    assert runs["overlay"] < runs["client-messages"]  # not after deliveries and client operations


class NeighborDroppingSiena(SienaBroker):
    """Planted: a SUB makes the broker forget the sender as a neighbor (the overlay's links stay): only a step of its
    own changes the neighbor set, and no step of Siena is compared with the model."""

    __slots__ = ()

    def sub_received(self, n, f, out):
        super().sub_received(n, f, out)
        if n < CLIENT_BASE:
            self.neighbors.discard(n)


def planted_run() -> Run:
    return Run(Scope("siena", 2, 1).network(), 0, "siena", broker_class=NeighborDroppingSiena, delay=(0.0, 0.0))


def test_the_overlay_check_at_quiescence_catches_a_handler_that_breaks_its_neighbor_set():
    run = planted_run()
    run.apply({"op": "subscribe", "client": CLIENT_BASE, "filter": "x > 0"})
    run.apply({"op": "deliver", "choices": [0]})  # not checked here: a delivery cannot change the overlay's links
    with pytest.raises(ClaimViolation) as caught:
        run.apply({"op": "quiesce"})
    assert caught.value.claim == "CLM-NET-1"


def test_without_the_quiescence_backstop_the_planted_handler_is_missed(monkeypatch):
    """The backstop is what catches it: declared after overlay changes only, the overlay check never runs here."""
    real = SIENA.properties

    def narrower(protocol):
        return tuple(declared.Always(p.name, p.claim, p.says, p.check, after=declared.OVERLAY_CHANGES) if p.name == "overlay" else p
                     for p in real(protocol))

    monkeypatch.setattr(SIENA, "properties", narrower)
    run = planted_run()
    for op in ({"op": "subscribe", "client": CLIENT_BASE, "filter": "x > 0"}, {"op": "deliver", "choices": [0]}, {"op": "quiesce"}):
        run.apply(op)  # no violation raised
    assert 0 not in run.net.brokers[1].neighbors and run.net.overlay.has_link(0, 1)  # and yet the neighbor set is broken
