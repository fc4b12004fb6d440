"""The summaries side of the summary routing benchmark
(`summary_routing`): each broker's Table 5-2 workload with its IDs
(DEF-SUM-11), its delta of the period's σ new subscriptions (DEF-SUM-14),
the deltas merged along the DEF-SR-1 plan (DEF-SUM-13), and the bytes of
what is sent (Fig. 5-2) and stored (Fig. 5-5)."""

from __future__ import annotations

from typing import Mapping

import attrs

from subsum.bench.summaries.workload import SCHEMA, generate
from subsum.impl.network.protocols.summaries.plan import Plan
from subsum.impl.summary import IdLayout, Summary, wire
from subsum.impl.summary.normalize import abstraction
from subsum.impl.summary.stats import formula_size


@attrs.frozen
class Brokers:
    """One covering probability's workload: per broker its subscriptions
    (in arrival order) and the events its clients publish."""

    p: float
    layout: IdLayout
    subscriptions: Mapping[int, list]  # broker -> [(name, Subscription)]
    events: Mapping[int, list]
    ids: Mapping[int, dict]  # broker -> {ID: Subscription}


def broker_workloads(p: float, n: int, subscriptions: int, events: int, seed: int) -> Brokers:
    """Table 5-2 at covering probability p for each of n brokers (seeds
    seed*1000 + b, as `summaries_measure.measure_merged`). IDs: c1 = the broker,
    c2 = the arrival slot, c3 = the attribute bitmap (DEF-SUM-11)."""
    layout = IdLayout(n, subscriptions, len(SCHEMA))
    index = {key: i for i, key in enumerate(SCHEMA)}
    subs: dict[int, list] = {}
    evs: dict[int, list] = {}
    ids: dict[int, dict] = {}
    for b in range(n):
        w = generate(p, subscriptions, events, seed * 1000 + b)
        subs[b], evs[b], ids[b] = w.subscriptions, w.events, {}
        for slot, (_, sub) in enumerate(w.subscriptions):
            a = abstraction(sub)
            assert a is not None, "the generator's subscriptions are satisfiable"
            ids[b][layout.encode(b, slot, layout.bitmap(index[k] for k in a))] = sub
    return Brokers(p, layout, subs, evs, ids)


class GrowingDeltas:
    """Per broker, the insertion delta of its first σ subscriptions
    (DEF-SUM-14: what `OwnerSummary.take_delta` ships), grown in place as σ
    rises. A delta holds only the period's new subscriptions, so the
    period's σ new ones are drawn from the same generator as the S active
    ones: the broker's first σ."""

    def __init__(self, workload: Brokers) -> None:
        self.workload = workload
        self.size = 0
        self.deltas = {}
        for b in workload.subscriptions:
            delta = Summary(workload.layout, SCHEMA)
            delta.merged_brokers = {b}
            self.deltas[b] = delta

    def grow_to(self, sigma: int) -> Mapping[int, Summary]:
        for b, delta in self.deltas.items():
            arrivals = list(self.workload.ids[b].items())
            if len(arrivals) < sigma:
                raise ValueError(f"broker {b} holds {len(arrivals)} subscriptions, fewer than σ = {sigma}")
            for sid, sub in arrivals[self.size:sigma]:
                delta.add_member(sid, abstraction(sub) or {})
        self.size = sigma
        return self.deltas


# -- propagation and storage ---------------------------------------------------

def propagate(the_plan: Plan, own: Mapping[int, Summary]) -> dict[int, Summary]:
    """DEF-SR-1 with DEF-SUM-13: in acting order each broker merges its own
    summary with what its children sent; the result is what it sends to its
    target (none for a sink) and what it adds to its history."""
    merged: dict[int, Summary] = {}
    for b in the_plan.order:
        m = own[b].copy()
        for child in the_plan.children[b]:
            m.merge_in(merged[child])
        merged[b] = m
    return merged


def sizes(summary: Summary) -> tuple[float, int]:
    """DEF-SUM-15 formula bytes and DEF-SUM-16 binary bytes."""
    return formula_size(summary)["total"], len(wire.to_bytes(summary))


def summary_propagation(the_plan: Plan, merged: Mapping[int, Summary]) -> dict:
    """DEF-SR-5: one period's sends (one per non-sink broker) and their bytes."""
    senders = [b for b in the_plan.order if the_plan.target[b] is not None]
    measured = [sizes(merged[b]) for b in senders]
    return {"summary_sends": len(senders), "summary_formula_bytes": round(sum(f for f, _ in measured)),
            "summary_wire_bytes": sum(w for _, w in measured)}


def summary_storage(merged: Mapping[int, Summary]) -> dict:
    """Fig. 5-5: every broker's history summary (DEF-SUM-14): its own merged
    with everything its Merged_Brokers list holds."""
    measured = [sizes(m) for m in merged.values()]
    return {"summary_formula_bytes": round(sum(f for f, _ in measured)), "summary_wire_bytes": sum(w for _, w in measured)}
