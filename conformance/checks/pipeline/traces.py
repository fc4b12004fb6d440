"""Checks of the Spark trace check (spec/07-pipeline.md CLM-TRACE-1..4)
against the reference checker (`subsum.model.trace`) and the simulator's own
delivery audit, on simulated traces: with churn and mutated deliveries,
static runs, planted violations, and Strawman runs with swaps.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from subsum.core.filters import parse_filter
from subsum.core.tracefile import parse_trace_line
from subsum.core.types import Subscription
from subsum.impl.network.trace import record_json
from subsum.impl.network.workloads.routing import delivery_audit, simulate
from subsum.model import trace as model_trace
from subsum.model.semantics import matches
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.checks.pipeline.spark import session, write_lines
from subsum.conformance.checks.pipeline.trace_boundaries import boundary_trace


def simulated_trace(seed: int, brokers: int = 8, subscriptions: int = 16, events: int = 30, swaps: int = 0,
                    topology: str = "random-tree"):
    """A `subsum simulate` run with its trace; returns (the `Simulation`, JSONL lines)."""
    run = simulate(topology, brokers, subscriptions, events, swaps, 5.0, seed, trace=True)
    return run, [json.dumps(record_json(r), ensure_ascii=False) for r in run.net.ledger.trace]


def _records(lines: list[str]):
    return [r for r in (parse_trace_line(line.encode("utf-8")) for line in lines) if r is not None]


def spark_trace_violations(lines: list[str], grace_ms: float) -> list[tuple]:
    from subsum.impl.spark import trace as strace

    spark = session()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_lines(Path(tmp), "trace.jsonl", lines)
        report = strace.check(strace.read_trace(spark, str(path)), grace_ms, 1000.0)
        rows = report.violations.collect()
        counts = report.counts
    found = sorted((r["cause"], r["event"], r["client"], r["time"]) for r in rows)
    for cause in strace.CAUSES:
        assert counts[cause] == sum(1 for v in found if v[0] == cause), (cause, counts)
    return found


def model_trace_violations(lines: list[str], grace_ms: float) -> list[tuple]:
    return sorted((v.cause, v.event, v.client, v.time) for v in model_trace.check_trace(_records(lines), grace_ms))


def _mutated(lines: list[str], rnd: random.Random) -> list[str]:
    """Drop, repeat and invent some deliveries, and cancel some subscriptions."""
    records = [json.loads(line) for line in lines]
    out = []
    clients = sorted({r["client"] for r in records if "client" in r})
    last_time = max(r["time"] for r in records)
    for r in records:
        roll = rnd.random()
        if r["kind"] == "deliver" and roll < 0.1:
            continue
        out.append(r)
        if r["kind"] == "deliver" and roll > 0.9:
            out.append(dict(r, time=r["time"] + rnd.choice([0.0, 1.5])))
        if r["kind"] == "publish" and roll < 0.15 and clients:
            out.append(dict(kind="deliver", time=r["time"] + 1.0, event=r["event"], client=rnd.choice(clients),
                            broker=r["broker"]))
        if r["kind"] == "subscribe" and roll < 0.2:
            out.append(dict(r, kind="unsubscribe", time=rnd.uniform(r["time"], last_time)))
    out.sort(key=lambda r: r["time"])  # stable: file order within a time
    return [json.dumps(r) for r in out]


def merged_traces(traces: list[list[str]]) -> list[str]:
    """Several traces as one: clients and events renumbered apart, records
    interleaved by time (file order kept within a time)."""
    merged, next_event = [], 0
    for k, lines in enumerate(traces):
        records = [json.loads(line) for line in lines]
        for r in records:
            if "event" in r:
                r["event"] += next_event
            if "client" in r:
                r["client"] += 10_000_000 * (k + 1)
        next_event = 1 + max((r["event"] for r in records if "event" in r), default=next_event - 1)
        merged += records
    merged.sort(key=lambda r: r["time"])
    return [json.dumps(r) for r in merged]


@property_check(st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from([0, 2])), min_size=2, max_size=12),
                st.sampled_from([0.0, 2.0, 20.0]), st.data(), scale=0.05)  # each example is a Spark job: few, each of many traces
def trace_check_equals_model(cases, grace, data):
    """CLM-TRACE-1: Spark and the reference checker report the same violations
    on simulated traces with churn and mutated deliveries, and on traces whose
    times land exactly on the check's boundaries (conformance/checks/pipeline/trace_boundaries.py),
    all merged into one trace a job."""
    traces = []
    for seed, swaps in cases:
        _, lines = simulated_trace(seed, brokers=6, subscriptions=10, events=12, swaps=swaps)
        traces.append(_mutated(lines, random.Random(seed)))
    traces += data.draw(st.lists(boundary_trace(grace), min_size=12, max_size=24), label="boundary traces")
    lines = merged_traces(traces)
    want = model_trace_violations(lines, grace)
    got = spark_trace_violations(lines, grace)
    assert got == want, (f"spark {len(got)} violations, model {len(want)}; first differences: "
                         f"{sorted(set(got) ^ set(want))[:5]}")


def static_run_is_clean() -> str:
    """CLM-TRACE-2: no violation on simulated runs without churn."""
    checked = []
    for seed, topology in ((1, "random-tree"), (2, "path"), (3, "balanced")):
        _, lines = simulated_trace(seed, brokers=12, subscriptions=30, events=60, topology=topology)
        deliveries = sum(1 for line in lines if '"deliver"' in line)
        assert deliveries > 0, f"seed {seed}: no delivery at all, the check would be vacuous"
        found = spark_trace_violations(lines, 0.0)
        assert found == [], f"seed {seed} {topology}: {found[:5]}"
        checked.append(deliveries)
    return f"3 static runs, {sum(checked)} deliveries, no violation"


def planted_violations() -> str:
    """CLM-TRACE-3: exactly the planted violations are reported."""
    _, lines = simulated_trace(7, brokers=10, subscriptions=30, events=40)
    # The base trace is clean (CLM-TRACE-2 checks that on Spark): said by the reference here, which costs no Spark job.
    assert model_trace_violations(lines, 0.0) == [], "the base trace must be clean"
    records = [json.loads(line) for line in lines]
    deliveries = [k for k, r in enumerate(records) if r["kind"] == "deliver"]
    assert len(deliveries) >= 3
    rnd = random.Random(7)
    dropped, repeated = rnd.sample(deliveries, 2)
    # A spurious one: a client whose filters the event does not match.
    pubs = {r["event"]: r for r in records if r["kind"] == "publish"}
    held = {}
    for r in records:
        if r["kind"] == "subscribe":
            held.setdefault(r["client"], []).append(parse_filter(r["filter"]) if r["filter"] else Subscription())
    spurious = None
    for k, r in enumerate(records):
        if r["kind"] != "publish":
            continue
        event = _records([json.dumps(r)])[0].attributes
        outsiders = [c for c, fs in sorted(held.items()) if not any(matches(f, event) for f in fs)]
        if outsiders:
            spurious = (k, dict(kind="deliver", time=r["time"] + 3.0, event=r["event"], client=outsiders[0],
                                broker=r["broker"]))
            break
    assert spurious is not None, "no client to plant a spurious delivery at"
    planted = []
    for k, r in enumerate(records):
        if k == dropped:
            continue
        planted.append(r)
        if k == repeated:
            planted.append(dict(r, time=r["time"] + 0.5))
        if k == spurious[0]:
            planted.append(spurious[1])
    planted.sort(key=lambda r: r["time"])
    lost, twice, extra = records[dropped], records[repeated], spurious[1]
    want = sorted([("missed", lost["event"], lost["client"], pubs[lost["event"]]["time"]),
                   ("duplicate", twice["event"], twice["client"], twice["time"] + 0.5),
                   ("spurious", extra["event"], extra["client"], extra["time"])])
    if (lost["event"], lost["client"]) == (twice["event"], twice["client"]):
        raise AssertionError("the sample picked one delivery twice")
    got = spark_trace_violations([json.dumps(r) for r in planted], 0.0)
    assert got == want, f"planted {want}, reported {got}"
    return "1 missed, 1 duplicate, 1 spurious planted and reported, nothing else"


def churn_losses_match_audit() -> str:
    """CLM-TRACE-4: on Strawman runs with swaps, the Spark checker reports
    what the model's checker (`model.trace.check_trace`, the oracle) reports,
    violation by violation; and its counts are the simulator's own audit:
    missed = lost, duplicates = duplicates, spurious = unjustified."""
    totals = {"lost": 0, "duplicates": 0}
    for seed in (2, 5):
        run, lines = simulated_trace(seed, brokers=20, subscriptions=80, events=120, swaps=8)
        found = spark_trace_violations(lines, 0.0)
        oracle = model_trace_violations(lines, 0.0)
        assert found == oracle, f"seed {seed}: trace-check {found[:5]}..., the model {oracle[:5]}..."
        audit = delivery_audit(run.net, run.published)
        counts = {c: sum(1 for v in found if v[0] == c) for c in ("duplicate", "spurious", "missed")}
        assert counts == {"duplicate": audit["duplicates"], "spurious": audit["unjustified"],
                          "missed": audit["lost"]}, f"seed {seed}: trace-check {counts}, simulator {audit}"
        totals["lost"] += audit["lost"]
        totals["duplicates"] += audit["duplicates"]
    assert totals["lost"] > 0, "no loss at all: the example would not test the missed count"
    return f"2 churn runs: {totals['lost']} lost and {totals['duplicates']} duplicates, as the model and the simulator counted"
