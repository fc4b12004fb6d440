"""Operational correctness of a trace (spec/07-pipeline.md DEF-TRACE-1 ..
DEF-TRACE-4): safety, liveness with a grace window, and no duplicates,
after Mühl's definition of pub/sub correctness.

Constructed for ease of understanding rather than for speed: every function
is a direct transcription of the definition it cites. The Spark checker
(`subsum.impl.spark.trace`) must reach the same verdicts on every trace.
"""

from __future__ import annotations

import math
from typing import Sequence, cast

import attrs

from subsum.core.tracefile import TraceRecord
from subsum.core.types import Event, Subscription
from subsum.model.semantics import matches


@attrs.frozen
class Interval:
    """DEF-TRACE-1: client `client` held filter `filter` from `start` until `end` (inf: never cancelled)."""

    client: int
    filter_text: str
    filter: Subscription
    start: float
    end: float


@attrs.frozen
class Publication:
    """A publication record of the trace (DEF-TRACE-2 opens a window at its time)."""

    event: int
    client: int
    time: float
    attributes: Event


@attrs.frozen
class Violation:
    """DEF-TRACE-3: one violation. `time` is the delivery's time (duplicate,
    spurious) or the publication's (missed)."""

    cause: str  # "duplicate" | "spurious" | "missed"
    event: int
    client: int
    time: float


#: The examples' trace (DEF-NET-9): client 1000001 holds x > 1 from 0 s to
#: 2 s; client 1000000 publishes event 7 (x = 5) at 1 s; it reaches 1000001 at 1.5 s.
EXAMPLE_TRACE = (
    '{"time": 0, "kind": "subscribe", "client": 1000001, "broker": 1, "filter": "x > 1"}',
    '{"time": 1, "kind": "publish", "event": 7, "client": 1000000, "broker": 2, "attributes": {"x": 5}}',
    '{"time": 1.5, "kind": "deliver", "event": 7, "client": 1000001, "broker": 1}',
    '{"time": 2, "kind": "unsubscribe", "client": 1000001, "broker": 1, "filter": "x > 1"}',
)


def subscription_intervals(records: Sequence[TraceRecord]) -> list[Interval]:
    """DEF-TRACE-1: each subscribe record opens an interval that ends at the
    first later unsubscribe record (in file order) of the same client and
    filter, or never.

    >>> from subsum.core.tracefile import parse_trace_line
    >>> trace = [parse_trace_line(line.encode()) for line in EXAMPLE_TRACE]
    >>> [(i.client, i.filter_text, i.start, i.end) for i in subscription_intervals(trace)]
    [(1000001, 'x > 1', 0.0, 2.0)]
    """
    intervals = []
    for k, record in enumerate(records):
        if record.kind != "subscribe":
            continue
        end = math.inf
        for later in records[k + 1:]:
            if later.kind == "unsubscribe" and later.client == record.client and later.filter_text == record.filter_text:
                end = later.time
                break
        # A subscribe record has a client and a filter (DEF-NET-9); mypy sees Optional fields.
        intervals.append(Interval(cast(int, record.client), cast(str, record.filter_text), cast(Subscription, record.filter), record.time, end))
    return intervals


def publications(records: Sequence[TraceRecord]) -> dict[int, Publication]:
    """DEF-TRACE-3: the publications of a trace (DEF-NET-9), by event.

    >>> from subsum.core.tracefile import parse_trace_line
    >>> trace = [parse_trace_line(line.encode()) for line in EXAMPLE_TRACE]
    >>> p = publications(trace)[7]
    >>> p.client, p.time, p.attributes.get("x").value
    (1000000, 1.0, 5)
    """
    return {cast(int, r.event): Publication(cast(int, r.event), cast(int, r.client), r.time, cast(Event, r.attributes))
            for r in records if r.kind == "publish"}


def active_within(interval: Interval, t: float, grace: float) -> bool:
    """DEF-TRACE-2: the interval meets the window [t - grace, t + grace].

    >>> held = Interval(1000001, "x > 1", Subscription(), 0.0, 2.0)
    >>> active_within(held, 2.5, 0.5), active_within(held, 2.6, 0.5)
    (True, False)
    """
    return interval.start <= t + grace and interval.end >= t - grace


def stable_over(interval: Interval, t: float, grace: float) -> bool:
    """DEF-TRACE-2: the interval covers the whole window [t - grace, t + grace].

    >>> held = Interval(1000001, "x > 1", Subscription(), 0.0, 2.0)
    >>> stable_over(held, 1.0, 0.5), stable_over(held, 1.8, 0.5)
    (True, False)
    """
    return interval.start <= t - grace and interval.end >= t + grace


def justified(client: int, publication: Publication | None, intervals: Sequence[Interval], grace: float) -> bool:
    """DEF-TRACE-3 (safety): a delivery of the publication to `client` is
    justified iff the client held a filter the event matches, active within
    the grace window around the publication time.

    >>> from subsum.core.filters import parse_filter
    >>> from subsum.core.types import Attribute
    >>> held = [Interval(1000001, "x > 1", parse_filter("x > 1"), 0.0, 2.0)]
    >>> p = Publication(7, 1000000, 1.0, Event((Attribute("x", "int", 5),)))
    >>> justified(1000001, p, held, 0.0), justified(1000002, p, held, 0.0), justified(1000001, None, held, 0.0)
    (True, False, False)
    """
    if publication is None:
        return False
    return any(i.client == client and active_within(i, publication.time, grace)
               and matches(i.filter, publication.attributes) for i in intervals)


def owed(publication: Publication, intervals: Sequence[Interval], grace: float) -> set[int]:
    """DEF-TRACE-3 (liveness): the clients owed the publication: every client
    other than the publisher holding a filter the event matches, stable over
    the grace window around the publication time.

    >>> from subsum.core.filters import parse_filter
    >>> from subsum.core.types import Attribute
    >>> y = parse_filter("y < 3")
    >>> held = [Interval(1000002, "y < 3", y, 0.5, 9.0), Interval(1000003, "y < 3", y, 4.0, 9.0)]
    >>> late = Publication(8, 1000001, 5.0, Event((Attribute("y", "int", 1),)))
    >>> sorted(owed(late, held, 0.0)), sorted(owed(late, held, 1.5))  # 1000003 subscribed 1 s before, inside a 1.5 s grace
    ([1000002, 1000003], [1000002])
    """
    return {i.client for i in intervals
            if i.client != publication.client and stable_over(i, publication.time, grace)
            and matches(i.filter, publication.attributes)}


def check_trace(records: Sequence[TraceRecord], grace: float) -> list[Violation]:
    """DEF-TRACE-3: every violation of the trace, sorted by (cause, event, client, time).

    - duplicate: each delivery of an event to a client after the first;
    - spurious: each delivery that is not justified;
    - missed: each (publication, owed client) with no delivery at all.

    >>> from subsum.core.tracefile import parse_trace_line
    >>> trace = [parse_trace_line(line.encode()) for line in EXAMPLE_TRACE]
    >>> check_trace(trace, grace=0.0)
    []
    >>> check_trace(trace + [trace[2]], grace=0.0)  # delivered twice
    [Violation(cause='duplicate', event=7, client=1000001, time=1.5)]
    >>> check_trace(trace[:2] + trace[3:], grace=0.0)  # never delivered
    [Violation(cause='missed', event=7, client=1000001, time=1.0)]
    """
    assert grace >= 0
    intervals = subscription_intervals(records)
    published = publications(records)
    found: list[Violation] = []
    delivered: set[tuple[int, int]] = set()
    for record in records:
        if record.kind != "deliver":
            continue
        pair = (cast(int, record.event), cast(int, record.client))
        if pair in delivered:
            found.append(Violation("duplicate", *pair, record.time))
        delivered.add(pair)
        if not justified(pair[1], published.get(pair[0]), intervals, grace):
            found.append(Violation("spurious", *pair, record.time))
    for publication in published.values():
        for client in owed(publication, intervals, grace):
            if (publication.event, client) not in delivered:
                found.append(Violation("missed", publication.event, client, publication.time))
    return sorted(found, key=lambda v: (v.cause, v.event, v.client, v.time))
