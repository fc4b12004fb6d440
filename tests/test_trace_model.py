"""model/trace.py, the reference trace checker (spec/07-pipeline.md DEF-TRACE-1..3), on traces worked by hand.

Its only other checks compare it with the Spark checker (CLM-TRACE-1), which needs a JVM; these run without one
(and so inside `make mutate`, which leaves Spark out). Every expected value below is read off the definitions.
"""

import json
import math

import pytest

from subsum.core.tracefile import parse_trace_line
from subsum.model.trace import Violation, check_trace, owed, publications, subscription_intervals

SUBSCRIBER, OTHER, PUBLISHER = 1000001, 1000002, 1000000


def _trace(*records: dict) -> list:
    return [parse_trace_line(json.dumps(r).encode()) for r in records]


def sub(t, client, text, kind="subscribe"):
    return {"time": t, "kind": kind, "client": client, "broker": 1, "filter": text}


def unsub(t, client, text):
    return sub(t, client, text, kind="unsubscribe")


def pub(t, event, x, client=PUBLISHER):
    return {"time": t, "kind": "publish", "event": event, "client": client, "broker": 2, "attributes": {"x": x}}


def deliver(t, event, client):
    return {"time": t, "kind": "deliver", "event": event, "client": client, "broker": 1}


def test_an_interval_ends_at_the_first_later_unsubscribe_of_the_same_client_and_filter():
    trace = _trace(unsub(0, SUBSCRIBER, "x > 1"),  # before the subscribe: closes nothing
                   sub(1, SUBSCRIBER, "x > 1"), unsub(2, OTHER, "x > 1"), unsub(3, SUBSCRIBER, "x > 2"),
                   unsub(4, SUBSCRIBER, "x > 1"), unsub(5, SUBSCRIBER, "x > 1"),
                   sub(6, SUBSCRIBER, "x > 1"), sub(7, OTHER, "x>1"))
    got = [(i.client, i.filter_text, i.start, i.end) for i in subscription_intervals(trace)]
    assert got == [(SUBSCRIBER, "x > 1", 1.0, 4.0), (SUBSCRIBER, "x > 1", 6.0, math.inf), (OTHER, "x > 1", 7.0, math.inf)]


def test_the_filter_is_matched_by_normal_form_not_by_spelling():
    trace = _trace(sub(0, SUBSCRIBER, "x>1"), unsub(2, SUBSCRIBER, "x  >  1"))
    assert [(i.start, i.end) for i in subscription_intervals(trace)] == [(0.0, 2.0)]


def test_publications_are_keyed_by_event_with_publisher_time_and_attributes():
    found = publications(_trace(sub(0, SUBSCRIBER, "x > 1"), pub(1.5, 7, 5), pub(2, 9, -1, client=OTHER), deliver(3, 7, SUBSCRIBER)))
    assert sorted(found) == [7, 9]
    assert (found[7].event, found[7].client, found[7].time, found[7].attributes.get("x").value) == (7, PUBLISHER, 1.5, 5)
    assert (found[9].event, found[9].client, found[9].time, found[9].attributes.get("x").value) == (9, OTHER, 2.0, -1)


@pytest.mark.parametrize(("start", "end", "grace", "expected"), [
    (4.0, 6.0, 1.0, True),        # starts exactly at t - g and ends exactly at t + g: stable (closed window)
    (4.5, 9.0, 1.0, False),       # starts inside the window
    (0.0, 5.5, 1.0, False),       # ends inside the window
    (5.0, 5.0, 0.0, True),        # g = 0: held at the instant itself
    (5.0, math.inf, 0.0, True),
])
def test_owed_needs_an_interval_stable_over_the_whole_window(start, end, grace, expected):
    records = [sub(start, SUBSCRIBER, "x > 1"), pub(5, 7, 3)]
    if end != math.inf:
        records.append(unsub(end, SUBSCRIBER, "x > 1"))
    trace = _trace(*records)
    assert owed(publications(trace)[7], subscription_intervals(trace), grace) == ({SUBSCRIBER} if expected else set())


def test_owed_leaves_out_the_publisher_and_filters_the_event_does_not_match():
    trace = _trace(sub(0, PUBLISHER, "x > 1"), sub(0, SUBSCRIBER, "x > 1"), sub(0, OTHER, "x > 4"), pub(5, 7, 3))
    assert owed(publications(trace)[7], subscription_intervals(trace), 0.0) == {SUBSCRIBER}


def test_a_clean_trace_has_no_violation_and_each_fault_is_named():
    base = [sub(0, SUBSCRIBER, "x > 1"), sub(0, OTHER, "x > 1"), pub(1, 7, 5), deliver(1.2, 7, SUBSCRIBER), deliver(1.3, 7, OTHER)]
    assert check_trace(_trace(*base), grace=0.0) == []
    twice = check_trace(_trace(*base, deliver(1.4, 7, OTHER), deliver(1.5, 7, OTHER)), grace=0.0)
    assert twice == [Violation("duplicate", 7, OTHER, 1.4), Violation("duplicate", 7, OTHER, 1.5)]  # each delivery after the first
    assert check_trace(_trace(*base[:3]), grace=0.0) == [Violation("missed", 7, SUBSCRIBER, 1.0), Violation("missed", 7, OTHER, 1.0)]
    assert check_trace(_trace(*base, deliver(2, 8, SUBSCRIBER)), grace=0.0) == [Violation("spurious", 8, SUBSCRIBER, 2.0)]  # never published


def test_a_delivery_is_justified_by_an_interval_active_within_the_window_only():
    # OTHER subscribed at 3: active within [2 - 1, 2 + 1] (its start is the window's end), not within [2, 2]
    trace = _trace(sub(0, SUBSCRIBER, "x > 1"), pub(2, 7, 5), sub(3, OTHER, "x > 1"), deliver(3.5, 7, OTHER), deliver(3.6, 7, SUBSCRIBER))
    assert check_trace(trace, grace=1.0) == []
    assert check_trace(trace, grace=0.0) == [Violation("spurious", 7, OTHER, 3.5)]
    # a delivery to a client whose filter the event does not match is spurious whatever the grace
    wrong = _trace(sub(0, SUBSCRIBER, "x > 1"), sub(0, OTHER, "x > 9"), pub(2, 7, 5), deliver(3, 7, SUBSCRIBER), deliver(3, 7, OTHER))
    assert check_trace(wrong, grace=5.0) == [Violation("spurious", 7, OTHER, 3.0)]


def test_a_spurious_duplicate_is_both_and_violations_are_sorted_by_cause_event_client_time():
    trace = _trace(sub(0, SUBSCRIBER, "x > 1"), sub(0, OTHER, "x > 1"), pub(1, 9, 5), pub(1, 7, 5),
                   deliver(2, 9, SUBSCRIBER), deliver(2, 8, OTHER), deliver(2.5, 8, OTHER))
    assert check_trace(trace, grace=0.0) == [
        Violation("duplicate", 8, OTHER, 2.5),
        Violation("missed", 7, SUBSCRIBER, 1.0), Violation("missed", 7, OTHER, 1.0), Violation("missed", 9, OTHER, 1.0),
        Violation("spurious", 8, OTHER, 2.0), Violation("spurious", 8, OTHER, 2.5),
    ]


def test_a_negative_grace_is_refused():
    with pytest.raises(AssertionError):
        check_trace([], grace=-0.1)


def test_the_simulators_trace_written_and_read_back_is_clean_without_swaps(tmp_path):
    # subscription forwarding on a tree that never changes delivers exactly what DEF-TRACE-3 owes, no more
    from subsum.core.tracefile import read_trace
    from subsum.impl.network.trace import write_trace
    from subsum.impl.network.workloads.routing import simulate

    run = simulate(brokers=5, subscriptions=10, events=10, trace=True, seed=3)
    write_trace(run.net.ledger.trace, tmp_path / "t.jsonl")
    records = read_trace(tmp_path / "t.jsonl")
    assert len(records) == len(run.net.ledger.trace) and sum(r.kind == "deliver" for r in records) == 22
    assert check_trace(records, grace=0.0) == []
