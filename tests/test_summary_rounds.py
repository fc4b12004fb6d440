"""The round clock of summary-based routing (spec/08-summary-routing.md
DEF-SR-4), step by step on a path of three brokers 0 - 1 - 2: rounds start
on period boundaries, round 0 sends SUMMARY and later rounds DELTA, a round
that has not finished everywhere puts the next one off by a period, a round
stuck for STALL_LIMIT periods stops the run, and the settings are checked."""

from __future__ import annotations

import pytest

from subsum.core.filters import parse_filter
from subsum.impl.network import CLIENT_BASE, build
from subsum.impl.network.actor import Out
from subsum.impl.network.messages import DeleteAnswer, DeleteQuery, SummaryDelta
from subsum.impl.network.overlay import NetworkError
from subsum.impl.network.protocols.summaries import rounds


def path_of_three(delay: float, period: float = 100.0):
    net = build([(0, 1), (1, 2)], 3, seed=1, protocol="summaries", options={"period": period}, delay=(delay, delay))
    return net, [net.add_client(b) for b in range(3)]


@pytest.fixture
def round_starts(monkeypatch):
    """(time, broker, round) of every begin_round call."""
    seen: list[tuple[float, int, int]] = []
    broker_class = type(path_of_three(1.0)[0].brokers[0])
    original = broker_class.begin_round

    def recording(self, r, out):
        seen.append((out.now, self.id, r))
        original(self, r, out)

    monkeypatch.setattr(broker_class, "begin_round", recording)
    return seen


def test_round_zero_sends_summaries_and_round_one_deltas_each_on_a_boundary(round_starts):
    net, clients = path_of_three(delay=5.0)
    net.subscribe(clients[0], parse_filter("x > 1"))
    net.run()
    assert (net.shared.round, dict(net.ledger.sent)) == (0, {"SUMMARY": 2})  # leaves to the centre
    assert round_starts == [(100.0, 0, 0), (100.0, 1, 0), (100.0, 2, 0)]
    net.at(130.0, lambda: net.subscribe(clients[2], parse_filter("x > 5")))
    net.run()
    assert (net.shared.round, dict(net.ledger.sent)) == (1, {"SUMMARY": 2, "DELTA": 2})
    assert round_starts[3:] == [(200.0, 0, 1), (200.0, 1, 1), (200.0, 2, 1)]  # the next boundary after 130, not 230 or 300
    assert (net.shared.deferred, net.shared.stalled) == (0, 0)


def test_a_round_not_finished_everywhere_puts_the_next_off_by_a_period(round_starts):
    net, clients = path_of_three(delay=150.0)  # a SUMMARY takes longer than a period
    net.subscribe(clients[0], parse_filter("x > 1"))
    net.at(120.0, lambda: net.subscribe(clients[2], parse_filter("x > 5")))
    net.at(250.0, lambda: stalled_at.append((net.shared.deferred, net.shared.stalled)))
    stalled_at: list[tuple[int, int]] = []
    net.run()
    assert [t for t, b, _ in round_starts if b == 0] == [100.0, 300.0]  # 200 was put off: round 0 ran until 250
    assert stalled_at == [(1, 1)]
    assert (net.shared.round, net.shared.deferred, net.shared.stalled) == (1, 1, 0)


def test_a_round_stuck_for_the_stall_limit_stops_the_run_naming_the_brokers_not_done(monkeypatch):
    monkeypatch.setattr(rounds, "STALL_LIMIT", 3)
    net, clients = path_of_three(delay=10_000.0)
    net.subscribe(clients[0], parse_filter("x > 1"))
    net.at(120.0, lambda: net.subscribe(clients[2], parse_filter("x > 5")))
    with pytest.raises(NetworkError) as caught:
        net.run()
    assert str(caught.value) == "propagation round 0 has not finished after 3 periods (brokers [1] are not done)"
    assert (net.now, net.shared.deferred, net.shared.stalled) == (500.0, 4, 4)  # put off at 200, 300, 400; stopped at 500


def test_a_broker_that_joins_after_propagation_started_stops_the_run():
    net, clients = path_of_three(delay=5.0)
    net.subscribe(clients[0], parse_filter("x > 1"))
    net.run()
    net.add_broker()  # a broker without links (a join would add a link: refused at once) is refused when the next round starts
    net.subscribe(clients[1], parse_filter("x > 2"))
    with pytest.raises(NetworkError) as caught:
        net.run()
    assert str(caught.value) == "the summaries protocol runs on a fixed set of brokers: one joined or left after propagation started"


@pytest.mark.parametrize("period", [0, -1.0])
def test_the_period_must_be_positive(period):
    with pytest.raises(NetworkError) as caught:
        path_of_three(delay=5.0, period=period)
    assert str(caught.value) == f"the summaries period must be > 0 ms, got {period}"


def test_a_period_under_a_millisecond_is_a_period():
    net, clients = path_of_three(delay=0.1, period=0.5)
    net.subscribe(clients[0], parse_filter("x > 1"))
    net.run()
    assert net.shared.round == 0 and net.shared.options["period"] == 0.5


def test_settings_are_checked_by_name():
    with pytest.raises(NetworkError, match=r"summaries option 'option': 'c' is not one of a, b"):
        build([(0, 1)], 2, protocol="summaries", options={"option": "c"})
    with pytest.raises(NetworkError, match=r"unknown summaries option\(s\) \['speed'\]"):
        build([(0, 1)], 2, protocol="summaries", options={"speed": 1})


def test_distance_counts_links_and_every_broker_when_unreachable():
    net = build([(0, 1), (1, 2)], 3, protocol="summaries")
    out = Out(0, net)
    assert [net.shared.distance(0, b, out) for b in range(3)] == [0, 1, 2]
    net.disconnect(1, 2)
    net.shared.forget_distances()
    assert net.shared.distance(0, 2, out) == 3  # unreachable: the number of brokers


def test_messages_out_of_round_are_counted_as_violations_and_not_applied():
    """DEF-SR-4: a message whose round is not the receiver's is a violation (the history lag
    assumption is checked, not assumed). Round 0 has settled on 0 - 1 - 2; the centre, 1, then gets
    stale or misdirected SUMMARY, DELTA, DELETE-QUERY and DELETE-ANSWER messages."""
    net, clients = path_of_three(delay=5.0)
    net.subscribe(clients[0], parse_filter("x > 1"))
    net.run()
    centre = net.brokers[1]
    assert centre.propagation.round == 0 and not net.ledger.violations
    merged = set(centre.merged)
    net.deliver(0, 1, "DELTA", SummaryDelta(5, None, frozenset()))  # another round
    net.deliver(2, 1, "DELTA", SummaryDelta(6, None, frozenset()))
    net.deliver(0, 1, "SUMMARY", SummaryDelta(0, None, frozenset()))  # this round, but 0's summary is already in
    net.deliver(2, 1, "DELETE-ANSWER", DeleteAnswer(0, {}))  # nobody was asked
    net.deliver(0, 1, "DELETE-ANSWER", DeleteAnswer(3, {}))
    assert dict(net.ledger.violations) == {"DELTA out of round": 2, "SUMMARY out of round": 1, "DELETE-ANSWER out of round": 2}
    assert centre.merged == merged and not centre.propagation.waiting_for  # nothing applied
    sent = net.ledger.sent["DELETE-ANSWER"]
    net.deliver(0, 1, "DELETE-QUERY", DeleteQuery(4, {}))  # counted, and answered all the same
    net.deliver(2, 1, "DELETE-QUERY", DeleteQuery(4, {}))
    assert net.ledger.violations["DELETE-QUERY out of round"] == 2 and net.ledger.sent["DELETE-ANSWER"] == sent + 2
    net.run()  # 0 and 2 get those answers, for round 4: out of their round too
    assert net.ledger.violations["DELETE-ANSWER out of round"] == 4


def test_brokers_must_fit_the_id_layout():
    build([(0, 1), (1, 2)], 3, protocol="summaries", options={"brokers": 3})  # 0 .. 2: fits exactly
    with pytest.raises(NetworkError) as caught:
        build([(0, 1), (1, 2)], 3, protocol="summaries", options={"brokers": 2})
    assert str(caught.value) == "broker 2 does not fit the summaries' ID layout, which numbers brokers 0 .. 1 (the 'brokers' option)"


def test_the_overlay_is_fixed_once_the_plan_is_but_clients_may_come():
    net = build([(0, 1), (1, 2)], 3, protocol="summaries")
    net.shared.current_plan(net.overlay)  # fixed from here on
    assert net.add_client(0) == CLIENT_BASE  # the first client's link is not an overlay link
    with pytest.raises(NetworkError) as caught:
        net.disconnect(1, 2)
    assert str(caught.value) == "the summaries protocol runs on a fixed overlay: links cannot change once propagation has started"


def test_a_subscription_that_changes_nothing_starts_no_round():
    """DEF-NET-2: subscribing to a filter one holds, or dropping one not held, changes nothing: no round, no DELTA."""
    net, clients = path_of_three(delay=5.0)
    held = parse_filter("x > 1")
    net.subscribe(clients[0], held)
    net.run()
    before = (net.shared.round, dict(net.ledger.sent))
    net.subscribe(clients[0], held)
    net.unsubscribe(clients[1], held)
    net.run()
    assert (net.shared.round, dict(net.ledger.sent)) == before == (0, {"SUMMARY": 2})
    net.unsubscribe(clients[0], held)  # a real change: round 1
    net.run()
    assert (net.shared.round, net.ledger.sent["DELTA"]) == (1, 2)
