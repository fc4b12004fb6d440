"""Traces whose times land exactly on the trace check's boundaries
(CLM-TRACE-1, spec/07-pipeline.md): Spark's trace check and the reference
checker (`subsum.model.trace`) compared where a float drawn at random never
lands.

Simulated traces draw their times as floats, so a subscription never starts
exactly at t_p - grace, never ends exactly at t_p + grace, and two records
rarely share a time. Here every time is on a grid around each publication
time t_p: a subscription starts or ends at t_p - grace, t_p + grace, t_p, or
one unit beside them; deliveries come at t_p or at the window's end; the
publication times are multiples of the 1,000 ms window; grace 0 makes the
two window ends one. Filters include the empty one, which every event
matches. The census names each boundary a trace holds, so a generator that
stops producing one fails its floor. CLM-TRACE-1's property merges these
traces into the simulated ones it checks (one Spark job an example).
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from subsum.conformance.runner import census

#: The trace check's window in spark_traces.spark_trace_violations (ms): publication times are multiples of it.
WINDOW = 1000.0
FILTERS = ("x > 0", "", "x = 1")
#: What CLM-TRACE-1's property must draw under `ci` (conformance/runner/census.py).
FLOORS = {"trace:start-at-tp-minus-grace": 10, "trace:start-at-tp-plus-grace": 10, "trace:end-at-tp-minus-grace": 4,
          "trace:end-at-tp-plus-grace": 4, "trace:equal-times": 10, "trace:empty-filter": 10, "trace:grace-0": 10}
CLIENTS = (1_000_001, 1_000_002, 1_000_003)
PUBLISHER = 1_000_000


@st.composite
def boundary_trace(draw, grace: float) -> list[str]:
    """The JSONL lines of one trace for a check with this grace (ms): one or
    two publications at window ends, each client's subscriptions starting and
    ending on the grid around them, deliveries dropped, repeated or sent
    where not owed."""
    times = sorted(set(draw(st.lists(st.sampled_from([WINDOW, 2 * WINDOW, 3 * WINDOW]), min_size=1, max_size=2))))
    near = sorted({t + d for t in times for d in (-grace - 1, -grace, 0.0, grace, grace + 1)} - {t for t in times if grace == 0} | set(times))
    records: list[dict] = []
    for client in CLIENTS:
        for f in draw(st.lists(st.sampled_from(FILTERS), max_size=2, unique=True)):
            start = draw(st.sampled_from(near))
            records.append({"time": start, "kind": "subscribe", "client": client, "broker": 0, "filter": f})
            end = draw(st.one_of(st.none(), st.sampled_from([t for t in near if t >= start])))
            if end is not None:
                records.append({"time": end, "kind": "unsubscribe", "client": client, "broker": 0, "filter": f})
    for eid, t in enumerate(times):
        x = draw(st.sampled_from([0, 1, 2]))
        records.append({"time": t, "kind": "publish", "client": PUBLISHER, "broker": 0, "event": eid, "attributes": {"x": x}})
        for client in CLIENTS:
            for _ in range(draw(st.sampled_from([0, 1, 1, 2]))):  # dropped, delivered, delivered twice
                at = t + draw(st.sampled_from([0.0, grace]))
                records.append({"time": at, "kind": "deliver", "client": client, "broker": 0, "event": eid})
    order = {"subscribe": 0, "unsubscribe": 1, "publish": 2, "deliver": 3}
    records.sort(key=lambda r: (r["time"], order[r["kind"]]))  # a publication before its deliveries at one time
    count_boundaries(records, times, grace)
    return [json.dumps(r) for r in records]


def count_boundaries(records: list[dict], times: list[float], grace: float) -> None:
    """The census of one trace: which of the check's boundaries it lands on."""
    for r in records:
        if r["kind"] in ("subscribe", "unsubscribe"):
            edge = "start" if r["kind"] == "subscribe" else "end"
            for t in times:
                if r["time"] == t - grace:
                    census.record(f"trace:{edge}-at-tp-minus-grace")
                if r["time"] == t + grace:
                    census.record(f"trace:{edge}-at-tp-plus-grace")
            if r["filter"] == "":
                census.record("trace:empty-filter")
    if len({r["time"] for r in records}) < len(records):
        census.record("trace:equal-times")
    if grace == 0:
        census.record("trace:grace-0")
