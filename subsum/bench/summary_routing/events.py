"""Event routing in the summary routing benchmark (`summary_routing`):
BROCLI routing (DEF-SR-2, `subsum.model.routing.brocli_route`) counted
for Fig. 5-4 against Siena's reverse paths, with interested brokers drawn
at random; and, on real history summaries, the DELIVERs the owner's
re-check (DEF-SUM-10) empties: the false positives."""

from __future__ import annotations

from typing import Mapping

import attrs
import numpy as np

from subsum.bench.summary_routing.overlays import Topology, np_rng_for, rng_for
from subsum.bench.summary_routing.siena import covered_reverse_links, reverse_path_incidence
from subsum.bench.summary_routing.summaries import Brokers
from subsum.impl.matching import make_engine
from subsum.impl.summary import IdLayout, Summary
from subsum.impl.summary.recheck import recheck
from subsum.model.routing import PropagationPlan, Route, brocli_route


# -- routing (DEF-SR-2, DEF-SR-5) -------------------------------------------------

#: the covering probabilities of Siena's covering reading of event cost (`siena_coverP_hops`): a middle one and the thesis's highest
SIENA_COVERING = (0.5, 0.9)
SUMMARY_KEYS = ("a_messages", "a_links", "b_messages", "b_links", "one_sink_messages", "one_sink_links")

@attrs.frozen
class RouteShape:
    """With exact summaries an event's ROUTE hops do not depend on who is
    interested (BROCLI grows by Merged_Brokers lists only), and broker X,
    if interested, is handed the event by the first visited broker whose
    list holds X: the route with every broker interested tells both."""

    routes: int  # ROUTE messages
    route_links: int  # their overlay links
    remote: np.ndarray  # [X] 1 if X is handed the event by a DELIVER message, 0 if X was visited
    deliver_links: np.ndarray  # [X] overlay links of that DELIVER


def route_shape(t: Topology, publisher: int, option: str, plan: PropagationPlan | None = None) -> RouteShape:
    plan = plan or t.routing_plan
    everyone = brocli_route(t.graph, plan, plan.merged_brokers, publisher, option)
    routes = [(a, b) for kind, a, b in everyone.messages if kind == "ROUTE"]
    reporter = np.array([everyone.delivered[x] for x in range(t.n)])
    remote = (reporter != np.arange(t.n)).astype(np.int64)
    links = np.array([t.distance[int(reporter[x])][x] for x in range(t.n)], dtype=np.int64)
    return RouteShape(len(routes), sum(t.distance[a][b] for a, b in routes), remote, links)


def routing_rows(t: Topology, events_per_broker: int, seed: int, check_per_point: int) -> tuple[list[dict], list[str]]:
    """Fig. 5-4: for k = 0 … N interested brokers (popularity k/N), chosen at
    random per event (nested as k grows), `events_per_broker` events at
    every broker. Summaries: ROUTE + DELIVER messages (option a, and b) and
    their overlay links, and option (a) under the single-sink plan (DEF-SR-8,
    `summary_one_sink_messages`, `summary_one_sink_links`); Siena: the links of the union of reverse paths, and
    under the covering reading (`siena_cover50_hops`, `siena_cover90_hops`)
    of only the links each interested broker's own subscription crossed.
    `check_per_point` events per publisher and k are also routed one by one
    (`brocli_route`) to check the shape's prediction."""
    rng = np_rng_for(seed, t.name, "interest")
    shapes = {opt: [route_shape(t, b, opt) for b in range(t.n)] for opt in ("a", "b")}
    shapes["one_sink"] = [route_shape(t, b, "a", t.one_sink_plan) for b in range(t.n)]
    incidence = [reverse_path_incidence(t, b) for b in range(t.n)]
    ranks = {b: rng.random((events_per_broker, t.n)).argsort(axis=1).argsort(axis=1) for b in range(t.n)}
    cover_rng = np_rng_for(seed, t.name, "siena-covering")
    covered = {p: [covered_reverse_links(t, b, p, events_per_broker, cover_rng) for b in range(t.n)] for p in SIENA_COVERING}
    rows, problems = [], []
    for k in range(t.n + 1):
        totals = dict.fromkeys((*SUMMARY_KEYS, "siena", *covered), 0)
        for b in range(t.n):
            interested = (ranks[b] < k).astype(np.int64)
            for opt in ("a", "b", "one_sink"):
                s = shapes[opt][b]
                totals[f"{opt}_messages"] += int(interested.shape[0] * s.routes + (interested @ s.remote).sum())
                totals[f"{opt}_links"] += int(interested.shape[0] * s.route_links + (interested @ s.deliver_links).sum())
            totals["siena"] += int(((interested @ incidence[b]) > 0).sum())
            for p, per_publisher in covered.items():
                totals[p] += covered_links(per_publisher[b], ranks[b] < k)
            problems += check_routes(t, b, interested[:check_per_point], shapes["a"][b], t.routing_plan)
            problems += check_routes(t, b, interested[:check_per_point], shapes["one_sink"][b], t.one_sink_plan)
        events = t.n * events_per_broker
        rows.append({"topology": t.name, "interested": k, "popularity": round(k / t.n, 4), "events": events,
                     **{f"summary_{key}": round(v / events, 4) for key, v in totals.items() if key in SUMMARY_KEYS},
                     "siena_hops": round(totals["siena"] / events, 4),
                     **{f"siena_cover{round(100 * p)}_hops": round(totals[p] / events, 4) for p in covered}})
    return rows, problems


def covered_links(crossed: list[np.ndarray], interested: np.ndarray) -> int:
    """Links crossed by the events of one publisher under Siena's covering
    reading: for each event, the union over its interested brokers X of the
    links X's subscription crossed (`covered_reverse_links`)."""
    used = np.zeros_like(crossed[0])
    for x, links in enumerate(crossed):
        used |= links & interested[:, x:x + 1]
    return int(used.sum())


def check_routes(t: Topology, publisher: int, interested: np.ndarray, shape: RouteShape, plan: PropagationPlan) -> list[str]:
    """Route events one by one (DEF-SR-2 on `plan`, exact summaries) and
    compare the messages with the shape's prediction; every interested
    broker must be handed the event once."""
    problems = []
    for row in interested:
        wanted = {int(x) for x in np.flatnonzero(row)}
        reported = {b: wanted & merged for b, merged in plan.merged_brokers.items()}
        route = brocli_route(t.graph, plan, reported, publisher)
        predicted = shape.routes + int(row @ shape.remote)
        if len(route.messages) != predicted or set(route.delivered) != wanted:
            problems.append(f"{t.name}: event from {publisher} to {sorted(wanted)}: {len(route.messages)} messages, "
                            f"predicted {predicted}; delivered {sorted(route.delivered)}")
    return problems


# -- false positives with real summaries ---------------------------------------------

def false_positive_row(t: Topology, w: Brokers, histories: Mapping[int, Summary], seed: int) -> tuple[dict, list[str]]:
    """Events of the generated workload (each broker's `generate` events,
    which aim at its own subscriptions, published at a broker drawn at
    random) routed by DEF-SR-2 on the real history summaries. A DELIVER whose owner's re-check (DEF-SUM-10) keeps nothing
    is a false positive. Cross-check: the owners whose re-check keeps
    something are exactly those with an exactly matching subscription
    (the `indexed` engine over all brokers)."""
    everything = [(f"{b}:{sid}", sub) for b, ids in w.ids.items() for sid, sub in ids.items()]
    engine = make_engine("indexed", everything, count_distinct=False)
    engine.prepare()
    counts = dict.fromkeys(("events", "messages", "routes", "delivers", "false_delivers", "local_false", "true_owners",
                            "route_links", "deliver_links"), 0)
    problems = []
    publishers = rng_for(seed, "publishers", w.p)
    for b, events in w.events.items():
        exact = engine.match_batch(events)
        for event, names in zip(events, exact):
            publisher = publishers.randrange(t.n)
            reports = MatchReports(histories, event, w.layout)
            route = brocli_route(t.graph, t.routing_plan, reports, publisher)
            kept = {o for o, at in route.delivered.items() if recheck(w.ids[o], event, reports[at][o])}
            truth = {int(name.split(":")[0]) for name in names}
            if kept != truth:
                problems.append(f"p={w.p} event of broker {b} at {publisher}: owners after re-check {sorted(kept)}, exact {sorted(truth)}")
            tally_route(counts, route, kept, t.distance)
    row = {"topology": t.name, "p": w.p, **counts}
    row["false_deliver_share"] = round(counts["false_delivers"] / counts["delivers"], 4) if counts["delivers"] else 0.0
    row["messages_per_event"] = round(counts["messages"] / counts["events"], 3) if counts["events"] else 0.0
    row["true_owners_per_event"] = round(counts["true_owners"] / counts["events"], 3) if counts["events"] else 0.0
    return row, problems


class MatchReports(Mapping[int, Mapping[int, set[int]]]):
    """What each broker's history reports for one event: Algorithm 4-1,
    grouped by owner (c1). A broker's history is matched when routing
    first asks for it, so only the brokers the event visits match it."""

    def __init__(self, histories: Mapping[int, Summary], event, layout: IdLayout) -> None:
        self.histories, self.event, self.layout = histories, event, layout
        self.reported: dict[int, dict[int, set[int]]] = {}

    def __getitem__(self, broker: int) -> dict[int, set[int]]:
        if broker not in self.reported:
            by_owner: dict[int, set[int]] = {}
            for sid in self.histories[broker].match(self.event):
                by_owner.setdefault(self.layout.broker_of(sid), set()).add(sid)
            self.reported[broker] = by_owner
        return self.reported[broker]

    def __iter__(self):
        return iter(self.histories)

    def __len__(self) -> int:
        return len(self.histories)


def tally_route(counts: dict, route: Route, kept: set[int], distance: Mapping[int, Mapping[int, int]]) -> None:
    """Add one routed event: its messages (ROUTE and DELIVER, the thesis's
    hops), the overlay links they cross (DEF-SR-5), and its false positives."""
    counts["events"] += 1
    counts["messages"] += len(route.messages)
    counts["routes"] += route.route_hops
    for kind, a, b in route.messages:
        counts["route_links" if kind == "ROUTE" else "deliver_links"] += distance[a][b]
    counts["true_owners"] += len(kept)
    for owner, at in route.delivered.items():
        if owner != at:
            counts["delivers"] += 1
            counts["false_delivers"] += owner not in kept
        else:
            counts["local_false"] += owner not in kept
