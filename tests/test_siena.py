"""Siena's covering forwarding (spec/08-summary-routing.md, DEF-SR-6, CLM-SR-8):
the covering test, the protocol on small networks, and the conformance
checks with a small example budget."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from subsum.conformance.checks.routing import siena
from subsum.core.filters import parse_filter
from subsum.core.types import Attribute, Event, Subscription
from subsum.impl.network import build, forwarding_protocols
from subsum.impl.network.protocols.covering import covered_by_any, filter_covers, keys_of
from subsum.impl.network.workloads.routing import delivery_audit, simulate

X0, X2 = parse_filter("x > 0"), parse_filter("x > 2")
X3 = Event((Attribute("x", "int", 3),))


@pytest.mark.parametrize("general, specific, covers", siena.COVERING_EXAMPLES)
def test_covering_examples(general, specific, covers):
    g, s = (parse_filter(text) if text else Subscription() for text in (general, specific))
    assert filter_covers(g, s) is covers


@pytest.mark.parametrize("general, specific", [
    ('s wildcard "a*b"', 's prefix "a" and s suffix "b"'),  # true, but no single constraint of the specific shows it
    ("x < 9223372036854775807", "x != 9223372036854775807"),  # `!=` in the specific: not exact at the domain's end
])
def test_covering_is_not_complete(general, specific):
    assert not filter_covers(parse_filter(general), parse_filter(specific))


def path_with_two_clients(protocol):
    """Brokers 0 - 1 - 2; a subscriber at 2 and a publisher at 0."""
    net = build([(0, 1), (1, 2)], 3, protocol=protocol)
    return net, net.add_client(2), net.add_client(0)


def test_a_covered_filter_is_held_back_and_sent_when_its_cover_leaves():
    net, subscriber, publisher = path_with_two_clients("siena")
    net.subscribe(subscriber, X0)
    net.run()
    net.subscribe(subscriber, X2)
    net.run()
    assert net.ledger.sent["SUB"] == 2  # x > 0 went 2 -> 1 -> 0; x > 2 stayed at 2
    assert net.tables()[1] == {(2, X0)}
    net.unsubscribe(subscriber, X0)
    net.run()
    assert net.tables()[0] == {(1, X2)} and net.tables()[1] == {(2, X2)}
    assert (net.ledger.sent["SUB"], net.ledger.sent["UNSUB"]) == (4, 2)
    eid = net.publish(publisher, X3)
    net.run()
    assert net.ledger.deliveries[eid] == {subscriber: 1}


def test_without_covering_every_filter_is_forwarded():
    net, subscriber, _ = path_with_two_clients("siena-nocover")
    net.subscribe(subscriber, X0)
    net.subscribe(subscriber, X2)
    net.run()
    assert net.ledger.sent["SUB"] == 4
    assert net.tables()[0] == {(1, X0), (1, X2)}


def test_a_new_link_gets_only_the_covering_filters():
    net = build([], 2, protocol="siena")
    client = net.add_client(1)
    net.subscribe(client, X2)
    net.subscribe(client, X0)
    net.connect(0, 1)
    net.run()
    assert net.tables()[0] == {(1, X2), (1, X0)}  # table order: x > 2 came first and nothing covered it yet
    net.disconnect(0, 1)
    net.unsubscribe(client, X2)
    net.subscribe(client, X2)  # now after x > 0 in the table
    net.connect(0, 1)
    net.run()
    assert net.tables()[0] == {(1, X0)}


def test_siena_is_not_one_of_the_model_described_protocols():
    assert "siena" not in forwarding_protocols() and "siena-nocover" not in forwarding_protocols()
    assert "strawman" in forwarding_protocols()


def test_covering_saves_subs_on_the_simulate_workload():
    runs = {p: simulate(protocol=p, brokers=10, subscriptions=40, events=30, seed=2) for p in ("siena", "siena-nocover", "strawman")}
    assert runs["siena-nocover"].net.ledger.sent == runs["strawman"].net.ledger.sent
    assert runs["siena"].net.ledger.sent["SUB"] < runs["siena-nocover"].net.ledger.sent["SUB"]
    for run in runs.values():
        audit = delivery_audit(run.net, run.published)
        assert audit["lost"] == audit["duplicates"] == audit["unjustified"] == 0


SMALL = settings(max_examples=10, derandomize=True, deadline=None, database=None)


@pytest.mark.parametrize("check", [siena.covering_is_sound, siena.covering_is_exact_on_single_constraints,
                                   siena.siena_delivers_exactly_with_fewer_subs], ids=lambda fn: fn.__name__)
def test_conformance_properties_with_a_small_budget(check):
    SMALL(given(*check.strategies)(check))()


@pytest.mark.parametrize("machine", [siena.SienaUnderChurn, siena.PlainSienaUnderChurn], ids=lambda m: m.__name__)
def test_conformance_machines_with_a_small_budget(machine):
    run_state_machine_as_test(machine, settings=settings(SMALL, stateful_step_count=15))


def test_conformance_examples():
    assert siena.covering_examples() == f"{len(siena.COVERING_EXAMPLES)} cases"


@settings(max_examples=300, deadline=None)
@given(st.lists(siena.covering_pairs(), min_size=1, max_size=6))
def test_covered_by_any_is_filter_covers_over_the_set(pairs):
    """The broker's grouped test (`covered_by_any`, filters grouped by their keys) says what trying
    `filter_covers` against every filter of the set says."""
    filters = [g for g, _ in pairs]
    grouped: dict = {}
    for g in filters:
        grouped.setdefault(keys_of(g), {})[g] = None
    for _, specific in pairs:
        assert covered_by_any(specific, grouped) == any(filter_covers(g, specific) for g in filters)
    assert not covered_by_any(filters[0], {})
