"""Checks of the Spark pipeline (spec/07-pipeline.md) against the model: the
session they share, and matching on Spark (CLM-PIPE-1).

One SparkSession serves every check of a process (`get_session` reuses it).
A Spark job costs about a second however small its input, so the properties
put several Hypothesis workloads into one job: workload k's attribute and
constraint names get the prefix `w{k}.`, so no event of one workload can
satisfy a constraint of another, and the union is compared with the model
evaluated on the same union.

The checks of the file readers and writers are `readers`; those of
the trace check, `traces`.
"""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import strategies as st

from subsum.core.types import INT_MAX, INT_MIN, OPS_BY_TYPE, Attribute, Constraint, Event, Subscription
from subsum.impl.spark import frames
from subsum.impl.spark.kernel import kernel_match
from subsum.impl.spark.session import get_session
from subsum.model import semantics
from subsum.conformance import strategies as gen
from subsum.conformance.checks.matching.properties import property_check

#: Workloads per Spark job in the batched properties.
PER_JOB = 25


def session():
    """The process's SparkSession, its cache emptied (the readers cache what
    they validated; a long run of checks would otherwise fill the heap)."""

    spark = get_session()
    spark.catalog.clearCache()
    return spark


def write_lines(directory: Path, name: str, lines: list[str]) -> Path:
    """Write `lines` as the file `name` in `directory`, one per line; return its path."""
    path = directory / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


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


#: The two matching plans of the Spark engine (DEF-PIPE-3, DEF-PIPE-4); every check of CLM-PIPE-1 runs both.
PLANS = ("sql", "kernel")


def spark_match_sets(subs, events, plan: str = "sql") -> list[set[str]]:
    """Each event's matching subscription IDs, by the Spark engine's `plan`;
    the rows are checked to come one per event, IDs sorted, and (kernel
    plan) in input order without a sort."""
    from subsum.impl.spark.io import in_partition_order
    from subsum.impl.spark.match import match

    spark = session()
    events_frame = frames.events_frame(spark, events)
    if plan == "kernel":
        results = kernel_match(spark, list(subs), events_frame)
        assert in_partition_order(results), "the kernel plan's rows should come out in input order"
        rows = results.collect()
        assert [row["ord"] for row in rows] == list(range(len(events))), "the kernel plan's rows are not in input order"
    else:
        rows = match(frames.subscriptions_frame(spark, subs), events_frame).collect()
    got = {row["ord"]: row["subscriptions"] for row in rows}
    assert sorted(got) == list(range(len(events))), f"not one row per event: {sorted(got)}"
    for ids in got.values():
        assert ids == sorted(ids), f"IDs not sorted: {ids}"
    return [set(got[i]) for i in range(len(events))]


@property_check(st.lists(gen.workloads(), min_size=1, max_size=PER_JOB), scale=0.1)  # each example is a Spark job
def spark_engine_equals_model(workloads):
    """CLM-PIPE-1: the Spark engine, by either plan, equals the model on Hypothesis workloads."""
    subs, events = union_of(workloads)
    if not events:
        return
    want = semantics.match_batch(subs, events)
    for plan in PLANS:
        got = spark_match_sets(subs, events, plan)
        for i, (w, g) in enumerate(zip(want, got)):
            assert w == g, f"{plan} plan, event {i} {events[i]}: model {sorted(w)}, spark {sorted(g)}"


def _boundary_cases() -> list[tuple[str, str, object, object]]:
    """(type, op, attribute value v, constraint value w): every operator of
    every type at, just below and just above its boundary."""
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
    as one subscription and one event per case (names kept apart), in one
    job per plan."""
    subs, events = [], []
    for k, (type_, op, v, w) in enumerate(_boundary_cases()):
        name = f"c{k}"
        subs.append((f"s{k}", Subscription(frozenset({Constraint(name, type_, op, None if op == "any" else w)}))))
        events.append(Event((Attribute(name, type_, v),)))
    want = semantics.match_batch(subs, events)
    for plan in PLANS:
        got = spark_match_sets(subs, events, plan)
        wrong = [(_boundary_cases()[i], sorted(w), sorted(g)) for i, (w, g) in enumerate(zip(want, got)) if w != g]
        assert not wrong, f"{plan} plan: {len(wrong)} cases differ, e.g. (type, op, v, w), model, spark: {wrong[:3]}"
    held = sum(1 for w in want if w)
    assert 0 < held < len(want)
    return f"{len(want)} boundary cases, {held} hold"
