"""Checks of the Spark pipeline (spec/07-pipeline.md) against the model.

One SparkSession serves every check of a process (`get_session` reuses it).
A Spark job costs about a second however small its input, so the properties
put several Hypothesis workloads into one job: workload k's attribute and
constraint names get the prefix `w{k}.`, so no event of one workload can
satisfy a constraint of another, and the union is compared with the model
evaluated on the same union.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from subsum.core.errors import InputError
from subsum.core.jsonio import match_result_lines
from subsum.core.jsonio import read_events as read_events_jsonl
from subsum.core.jsonio import read_subscriptions as read_subscriptions_jsonl
from subsum.core.tracefile import parse_trace_line
from subsum.core.types import Attribute, Constraint, Event, Subscription
from subsum.model import semantics
from subsum.model import trace as model_trace
from subsum.conformance import strategies as gen
from subsum.conformance.properties import property_check

#: Workloads per Spark job in the batched properties.
PER_JOB = 25


def session():
    """The process's SparkSession, its cache emptied (the readers cache what
    they validated; a long run of checks would otherwise fill the heap)."""
    from subsum.impl.spark.session import get_session

    spark = get_session()
    spark.catalog.clearCache()
    return spark


# --- CLM-PIPE-1 -----------------------------------------------------------------------------

def _renamed(prefix: str, subscription: Subscription) -> Subscription:
    return Subscription(frozenset(Constraint(prefix + c.name, c.type, c.op, c.value) for c in subscription.constraints))


def _renamed_event(prefix: str, event: Event) -> Event:
    return Event(tuple(Attribute(prefix + a.name, a.type, a.value) for a in event.attributes))


def union_of(workloads) -> tuple[list[tuple[str, Subscription]], list[Event]]:
    """Several workloads as one: names and IDs prefixed with `w{k}.`."""
    subs, events = [], []
    for k, (pairs, batch) in enumerate(workloads):
        prefix = f"w{k}."
        subs += [(prefix + sid, _renamed(prefix, s)) for sid, s in pairs]
        events += [_renamed_event(prefix, e) for e in batch]
    return subs, events


def spark_match_sets(subs, events) -> list[set[str]]:
    from subsum.impl.spark import frames
    from subsum.impl.spark.match import match

    spark = session()
    rows = match(frames.subscriptions_frame(spark, subs), frames.events_frame(spark, events)).collect()
    got = {row["ord"]: row["subscriptions"] for row in rows}
    assert sorted(got) == list(range(len(events))), f"not one row per event: {sorted(got)}"
    for ids in got.values():
        assert ids == sorted(ids), f"IDs not sorted: {ids}"
    return [set(got[i]) for i in range(len(events))]


@property_check(st.lists(gen.workloads(), min_size=1, max_size=PER_JOB), scale=0.1)  # each example is a Spark job
def spark_engine_equals_model(workloads):
    """CLM-PIPE-1: the Spark engine equals the model on Hypothesis workloads."""
    subs, events = union_of(workloads)
    if not events:
        return
    want = semantics.match_batch(subs, events)
    got = spark_match_sets(subs, events)
    for i, (w, g) in enumerate(zip(want, got)):
        assert w == g, f"event {i} {events[i]}: model {sorted(w)}, spark {sorted(g)}"




def _boundary_cases() -> list[tuple[str, str, object, object]]:
    """(type, op, attribute value v, constraint value w): every operator of
    every type at, just below and just above its boundary."""
    import math

    from subsum.core.types import INT_MAX, INT_MIN, OPS_BY_TYPE

    cases = []
    for w in (INT_MIN, -1, 0, 1, INT_MAX):
        for v in (w - 1, w, w + 1):
            if INT_MIN <= v <= INT_MAX:
                cases += [("int", op, v, w) for op in OPS_BY_TYPE["int"]]
    for w in (0.0, -1.5, 5e-324, 8.3, 1.7976931348623157e308):
        for v in (math.nextafter(w, -math.inf), w, math.nextafter(w, math.inf), -0.0):
            if math.isfinite(v):
                cases += [("float", op, v, w) for op in OPS_BY_TYPE["float"]]
    strings = ("", "a", "ab", "ba", "aba", "é", "aé", "éa")
    for w in strings:
        for v in strings:
            cases += [("string", op, v, w) for op in ("=", "!=", "prefix", "suffix", "contains", "any")]
    for w in ("*", "a*", "*a", "a*a", "ab*ba", "é*"):
        cases += [("string", "wildcard", v, w) for v in strings + ("abba", "aba", "a")]
    cases += [("bool", op, v, w) for op in OPS_BY_TYPE["bool"] for v in (False, True) for w in (False, True)]
    return cases


def operator_boundaries() -> str:
    """CLM-PIPE-1 (example): every operator of every type at its boundaries,
    as one subscription and one event per case (names kept apart), in one job."""
    subs, events = [], []
    for k, (type_, op, v, w) in enumerate(_boundary_cases()):
        name = f"c{k}"
        subs.append((f"s{k}", Subscription(frozenset({Constraint(name, type_, op, None if op == "any" else w)}))))
        events.append(Event((Attribute(name, type_, v),)))
    want = semantics.match_batch(subs, events)
    got = spark_match_sets(subs, events)
    wrong = [(_boundary_cases()[i], sorted(w), sorted(g)) for i, (w, g) in enumerate(zip(want, got)) if w != g]
    assert not wrong, f"{len(wrong)} cases differ, e.g. (type, op, v, w), model, spark: {wrong[:3]}"
    held = sum(1 for w in want if w)
    assert 0 < held < len(want)
    return f"{len(want)} boundary cases, {held} hold"


SEED000_SUBSCRIPTIONS = [
    '{"id": "S1", "filter": "symbol = \\"OTE\\" and price = 8.50"}',
    '{"id": "S2", "filter": "symbol = \\"OTER\\" and price = 8.55"}',
    '{"id": "S3", "filter": "symbol prefix \\"OTE\\" and price >= 8.45 and price <= 8.60"}',
    '{"id": "S4", "filter": "symbol prefix \\"T\\" and price >= 8.60 and price <= 8.70"}',
    '{"id": "S5", "filter": "exchange wildcard \\"N*SE\\" and symbol = \\"OTE\\" and price < 8.70 and price > 8.30"}',
    '{"id": "S6", "constraints": [{"name": "symbol", "type": "string", "op": "prefix", "value": "OT"}, '
    '{"name": "price", "type": "float", "op": "=", "value": 8.20}, {"name": "volume", "type": "int", "op": ">", '
    '"value": 130000}, {"name": "low", "type": "float", "op": "<", "value": 8.05}]}',
    '{"id": "S7", "filter": "volume != 132700 and exchange:string any"}',
    '{"id": "EMPTY", "constraints": []}',
]
SEED000_EVENTS = [
    '{"id": "fig-2-2", "attributes": {"exchange": "NYSE", "symbol": "OTE", "price": 8.40, "volume": 132700, '
    '"high": 8.80, "low": 8.22}}',
    '{"id": "false-positive", "attributes": {"symbol": "OTE", "price": 8.65}}',
    '{"id": "s1-s3-match", "attributes": {"symbol": "OTE", "price": 8.50}}',
    '{"id": "s4-match", "attributes": {"symbol": "TEL", "price": 8.62}}',
    '',
    '{"id": "no-symbol", "attributes": {"price": 8.50, "exchange": "LSE", "volume": 5}}',
    '{"id": "nothing", "attributes": {}}',
]


def _write(directory: Path, name: str, lines: list[str]) -> Path:
    path = directory / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_events_parquet(path: Path, events: list[tuple[str, Event]]) -> None:
    """Events as DEF-PIPE-1's Parquet schema, written by pyarrow (not by Spark)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from subsum.impl.spark.frames import EVENTS_DDL, arrow_schema, attribute_rows

    schema = arrow_schema(EVENTS_DDL)
    table = pa.table({"id": [i for i, _ in events], "attributes": [attribute_rows(e) for _, e in events]},
                     schema=pa.schema([schema.field("id"), schema.field("attributes")]))
    pq.write_table(table, path)


def seed000_files_through_every_reader() -> str:
    """CLM-PIPE-1 (example): seed 000's example subscriptions and events, as
    JSONL and as Parquet, through the Spark readers, engine and writers, give
    the model's lines (in input order, one per event)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from subsum.impl.spark import io as sio
    from subsum.impl.spark.match import match

    spark = session()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        subs_path = _write(d, "subs.jsonl", SEED000_SUBSCRIPTIONS)
        events_path = _write(d, "events.jsonl", SEED000_EVENTS)
        subs = [(s.id, s.subscription) for s in read_subscriptions_jsonl(subs_path)]
        named = [(e.id, e.event) for e in read_events_jsonl(events_path)]
        want = [{"event": i, "subscriptions": sorted(m)}
                for (i, _), m in zip(named, semantics.match_batch(subs, [e for _, e in named]))]
        assert any(w["subscriptions"] for w in want) and any(len(w["subscriptions"]) == 1 for w in want)
        pq.write_table(pa.table({"id": [json.loads(line)["id"] for line in SEED000_SUBSCRIPTIONS[:5]],
                                 "filter": [json.loads(line)["filter"] for line in SEED000_SUBSCRIPTIONS[:5]]}),
                       d / "subs.parquet")
        write_events_parquet(d / "events.parquet", named)
        subs_parquet_want = [{"event": w["event"], "subscriptions": [s for s in w["subscriptions"]
                                                                     if s in ("S1", "S2", "S3", "S4", "S5")]}
                             for w in want]
        for subs_in, events_in, expected, out in ((subs_path, d / "events.parquet", want, "out.jsonl"),
                                                  (d / "subs.parquet", events_path, subs_parquet_want, "out.parquet")):
            results = match(sio.read_subscriptions(spark, str(subs_in)), sio.read_events(spark, str(events_in)))
            sio.write_results(results, str(d / out))
            if out.endswith(".jsonl"):
                lines = (d / out).read_text(encoding="utf-8").splitlines()
                assert lines == list(match_result_lines((w["event"], w["subscriptions"]) for w in expected)), lines
            else:
                table = pq.read_table(d / out).to_pylist()
                assert table == expected, (subs_in.name, events_in.name, table)
            spark.catalog.clearCache()
    return f"{len(want)} events x {len(subs)} subscriptions, JSONL and Parquet in, JSONL and Parquet out"


# --- CLM-PIPE-2 and CLM-PIPE-3: bad input ---------------------------------------------------

def _parquet_case(d: Path, name: str, rows: list[dict], attributes_type=None):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from subsum.impl.spark.frames import EVENTS_DDL, arrow_schema

    schema = arrow_schema(EVENTS_DDL)
    fields = [schema.field("id"), attributes_type or schema.field("attributes")]
    path = d / f"{name}.parquet"
    pq.write_table(pa.table({"id": [r["id"] for r in rows], "attributes": [r["attributes"] for r in rows]},
                            schema=pa.schema(fields)), path)
    return path


def _attr(name, type_, **value):
    out = {"name": name, "type": type_, "int": None, "float": None, "string": None, "bool": None}
    out.update(value)
    return out


def parquet_rejects_bad_events() -> str:
    """CLM-PIPE-2: the Parquet reader refuses each bad events file, naming the row and field."""
    import pyarrow as pa

    from subsum.impl.spark import io as sio

    spark = session()
    good = {"id": "e1", "attributes": [_attr("x", "int", int=1)]}
    cases = [
        ("repeated-name", [good, {"id": "e2", "attributes": [_attr("x", "int", int=1), _attr("x", "int", int=2)]}],
         "attributes", "row 2: duplicate attribute name"),
        ("nan", [good, {"id": "e2", "attributes": [_attr("p", "float", float=float("nan"))]}],
         "attributes.p.value", "row 2: float value is NaN"),
        ("second-attribute", [{"id": "e1", "attributes": [_attr("a", "int", int=1), _attr("b", "bool")]}],
         "attributes.b.value", "row 1: exactly the 'bool' value field must be set"),
        ("infinity", [{"id": "e1", "attributes": [_attr("p", "float", float=float("-inf"))]}],
         "attributes.p.value", "row 1: infinities are not allowed"),
        ("wrong-slot", [{"id": "e1", "attributes": [_attr("p", "float", int=3)]}],
         "attributes.p.value", "row 1: exactly the 'float' value field must be set"),
        ("two-slots", [{"id": "e1", "attributes": [_attr("p", "int", int=3, string="x")]}],
         "attributes.p.value", "row 1: exactly the 'int' value field must be set"),
        ("unknown-type", [good, good | {"id": "e2"}, {"id": "e3", "attributes": [_attr("p", "decimal", int=3)]}],
         "attributes.p.type", "row 3: unknown type decimal"),
        ("empty-id", [{"id": "", "attributes": []}], "id", "row 1: must be a non-empty string"),
        ("empty-name", [{"id": "e1", "attributes": [_attr("", "int", int=3)]}], "attributes..name",
         "row 1: must be a non-empty string"),
        ("duplicate-id", [good, {"id": "e2", "attributes": []}, good], "id",
         "row 3: duplicate event id 'e1' (first on row 1)"),
        ("empty", [], None, "the file is empty"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, rows, field, message in cases:
            path = _parquet_case(d, name, rows)
            try:
                sio.read_events(spark, str(path))
            except InputError as exc:
                assert exc.field == field and exc.message.startswith(message), (name, str(exc))
                assert exc.path == str(path)
            else:
                raise AssertionError(f"{name}: accepted")
        bad_type = pa.field("attributes", pa.list_(pa.struct([pa.field("name", pa.string()),
                                                              pa.field("value", pa.string())])))
        path = _parquet_case(d, "column-type", [{"id": "e1", "attributes": [{"name": "x", "value": "1"}]}], bad_type)
        try:
            sio.read_events(spark, str(path))
        except InputError as exc:
            assert exc.field == "attributes" and "expected array<struct" in exc.message, str(exc)
        else:
            raise AssertionError("column-type: accepted")
    return f"{len(cases) + 1} bad Parquet files refused"


JSONL_CASES = {
    "malformed": (["{\"id\": \"s1\", \"filter\": \"x > 1\"}", "{\"id\": \"s2\", \"filter\": "], "subscription"),
    "unknown-operator": (["{\"id\": \"s1\", \"constraints\": [{\"name\": \"x\", \"type\": \"int\", \"op\": \"~\", "
                          "\"value\": 1}]}"], "subscription"),
    "operator-type": (["", "", "{\"id\": \"s1\", \"filter\": \"x:bool > true\"}"], "subscription"),
    "nan": (["{\"id\": \"e1\", \"attributes\": {\"p\": 1.5}}", "{\"id\": \"e2\", \"attributes\": {\"p\": NaN}}"],
            "event"),
    "duplicate-id": (["{\"id\": \"e1\", \"attributes\": {}}", "", "{\"id\": \"e1\", \"attributes\": {\"x\": 1}}"],
                     "event"),
    "not-object": (["[1, 2]"], "event"),
    "empty": (["", "  "], "event"),
    "unknown-field": (["{\"id\": \"e1\", \"attributes\": {}, \"extra\": 1}"], "event"),
    "typed-value": (["{\"id\": \"e1\", \"attributes\": {\"p\": {\"type\": \"float\", \"value\": \"x\"}}}"], "event"),
    # A UTF-8 byte order mark starts the file: Hadoop's line reader drops it there, and so must
    # the in-process reader (spec/formats.md), so the error is line 2's for both.
    "bom-at-start": (["\ufeff{\"id\": \"e1\", \"attributes\": {}}", "{\"id\": \"e1\", \"attributes\": {}}"], "event"),
    # Anywhere else a BOM is not whitespace: malformed JSON on line 2 for both.
    "bom-later": (["{\"id\": \"s1\", \"filter\": \"x > 1\"}", "\ufeff{\"id\": \"s2\", \"filter\": \"x > 2\"}"],
                  "subscription"),
    "float-overflow": (["{\"id\": \"s1\", \"constraints\": [{\"name\": \"x\", \"type\": \"float\", \"op\": \">\", "
                        "\"value\": 1" + "0" * 400 + "}]}"], "subscription"),
}


def jsonl_errors_agree() -> str:
    """CLM-PIPE-3: for each bad JSONL file, the Spark reader raises the in-process reader's error."""
    from subsum.impl.spark import io as sio

    spark = session()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, (lines, kind) in JSONL_CASES.items():
            path = str(_write(d, f"{name}.jsonl", lines))
            local, remote = (read_events_jsonl, sio.read_events) if kind == "event" else (
                read_subscriptions_jsonl, sio.read_subscriptions)
            try:
                local(path)
            except InputError as exc:
                want = exc
            else:
                raise AssertionError(f"{name}: the in-process reader accepted it")
            try:
                remote(spark, path)
            except InputError as exc:  # attrs exceptions compare by identity: compare the fields
                got = (exc.path, exc.line, exc.field, exc.message)
                assert got == (want.path, want.line, want.field, want.message), \
                    f"{name}: spark said {exc}, in-process said {want}"
            else:
                raise AssertionError(f"{name}: the Spark reader accepted it")
    return f"{len(JSONL_CASES)} bad files, same errors"


# --- trace conformance (CLM-TRACE-1 .. 4) ---------------------------------------------------

def simulated_trace(seed: int, brokers: int = 8, subscriptions: int = 16, events: int = 30, swaps: int = 0,
                    topology: str = "random-tree"):
    """A `subsum simulate` run with its trace; returns (the `Simulation`, JSONL lines)."""
    from subsum.impl.network.trace import record_json
    from subsum.impl.network.workload import simulate

    run = simulate(topology, brokers, subscriptions, events, swaps, 5.0, seed, trace=True)
    return run, [json.dumps(record_json(r), ensure_ascii=False) for r in run.net.ledger.trace]


def _records(lines: list[str]):
    return [r for r in (parse_trace_line(line.encode("utf-8")) for line in lines) if r is not None]


def spark_trace_violations(lines: list[str], grace_ms: float) -> list[tuple]:
    from subsum.impl.spark import trace as strace

    spark = session()
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp), "trace.jsonl", lines)
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


@property_check(st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from([0, 2])), min_size=1, max_size=8),
                st.sampled_from([0.0, 2.0, 20.0]), scale=0.1)  # each example is a Spark job
def trace_check_equals_model(cases, grace):
    """CLM-TRACE-1: Spark and the reference checker report the same violations
    on simulated traces with churn and mutated deliveries (several per job)."""
    traces = []
    for seed, swaps in cases:
        _, lines = simulated_trace(seed, brokers=6, subscriptions=10, events=12, swaps=swaps)
        traces.append(_mutated(lines, random.Random(seed)))
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
    from subsum.core.filters import parse_filter
    from subsum.model.semantics import matches

    _, lines = simulated_trace(7, brokers=10, subscriptions=30, events=40)
    assert spark_trace_violations(lines, 0.0) == [], "the base trace must be clean"
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
    """CLM-TRACE-4: on Strawman runs with swaps, missed = lost, duplicates =
    duplicates and spurious = unjustified, as the simulator counted them."""
    from subsum.impl.network.workload import delivery_audit

    totals = {"lost": 0, "duplicates": 0}
    for seed in (2, 5):
        run, lines = simulated_trace(seed, brokers=20, subscriptions=80, events=120, swaps=8)
        audit = delivery_audit(run.net, run.published)
        found = spark_trace_violations(lines, 0.0)
        counts = {c: sum(1 for v in found if v[0] == c) for c in ("duplicate", "spurious", "missed")}
        assert counts == {"duplicate": audit["duplicates"], "spurious": audit["unjustified"],
                          "missed": audit["lost"]}, f"seed {seed}: trace-check {counts}, simulator {audit}"
        totals["lost"] += audit["lost"]
        totals["duplicates"] += audit["duplicates"]
    assert totals["lost"] > 0, "no loss at all: the example would not test the missed count"
    return f"2 churn runs: {totals['lost']} lost and {totals['duplicates']} duplicates, as the simulator counted"
