"""Summary routing benchmark (issue 17; seed 000 §4.3 and ch. 5, Figs 5-2 to
5-5; spec/08-summary-routing.md DEF-SR-1, DEF-SR-2, DEF-SR-5;
benchmarks/README.md).

Summaries against Siena's covering-based forwarding and baseline (i) on
24-broker overlays: the Cable & Wireless US backbone (the thesis's
topology, Topology Zoo version, the full graph with its cycles) and a few
random trees.

- **Fig. 5-2, propagation bandwidth per period** against σ: each broker's
  delta of σ new subscriptions (DEF-SUM-14) merged with its children's
  along the Algorithm 4-2 plan (DEF-SR-1), sized by the DEF-SUM-15 formula
  and by the DEF-SUM-16 binary encoding; Siena (probabilistic covering, seed
  note §6.5) × 50 bytes; baseline (i) (N−1)·h̄·N·σ·50 and walked.
- **Fig. 5-3, propagation hops per period**: N − #sinks sends for summaries;
  Siena's messages per period under two readings; baseline (i).
- **Fig. 5-4, routing hops per event** against popularity: BROCLI routing
  (DEF-SR-2) given the interested brokers, ROUTE + DELIVER messages (the
  thesis's hops) and overlay links (DEF-SR-5); Siena along the reverse
  paths of the subscriptions.
- **Fig. 5-5, storage** against covering probability: history summaries
  (DEF-SUM-14) against Siena's routing tables.
- **False positives** with real summaries: DELIVERs the owner's re-check
  (DEF-SUM-10) empties, on events of the generated workload.

The workload is `subsum.bench.summaries.generate` (Table 5-2), one per
broker and covering probability, seeded `seed * 1000 + broker`. Every
other random draw comes from a generator seeded by a string derived from
`seed`. The figures, findings and the thesis's numbers are in
`summary_routing_report`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import time
from pathlib import Path
from typing import Callable, Iterable, Mapping

import attrs
import networkx as nx
import numpy as np

from subsum.bench import summaries as bs
from subsum.impl.network import topology as topo
from subsum.impl.network.summary_plan import Plan, distances, plan
from subsum.impl.summary import IdLayout, Summary, wire
from subsum.impl.summary.normalize import abstraction
from subsum.impl.summary.stats import formula_size
from subsum.impl.summary.summary import recheck
from subsum.model.routing import PropagationPlan, Route, brocli_route, propagation_plan

CWIX = Path(__file__).resolve().parents[2] / "examples" / "seed002" / "cwix-us-24.edgelist"
BROKERS = 24
SIGMAS = (10, 30, 100, 300, 1000)  # Table 5-2: σ = 10 … 1000 new subscriptions per broker per period
SUBSCRIPTIONS = 1000  # Table 5-2: S active subscriptions per broker
SUBSCRIPTION_BYTES = bs.THESIS_SUB_BYTES  # 50
EVENTS_PER_BROKER = 1000  # Fig. 5-4: 1000 events published at each broker
FP_EVENTS_PER_BROKER = 40  # real events per broker for the false-positive run
RANDOM_TREES = 3
SEED_PREFIX = "subsum-summary-routing"


def rng_for(seed: int, *parts) -> random.Random:
    """A generator seeded by a string derived from `seed` and `parts`."""
    return random.Random(":".join(map(str, (SEED_PREFIX, seed, *parts))))


def np_rng_for(seed: int, *parts) -> np.random.Generator:
    digest = hashlib.sha256(":".join(map(str, (SEED_PREFIX, seed, *parts))).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


# -- topologies ------------------------------------------------------------------

@attrs.frozen
class Tree:
    """A breadth-first spanning tree rooted at `root` (neighbours in id order)."""

    root: int
    edges: tuple[tuple[int, int], ...]  # (parent, child), in breadth-first order
    parent: Mapping[int, int]
    children: Mapping[int, tuple[int, ...]]


def siena_tree(graph: nx.Graph, root: int) -> Tree:
    """Seed note §6.5: Siena's per-broker spanning tree (unit weights, so a
    breadth-first tree is a minimum spanning tree; its paths are shortest):
    networkx's breadth-first search from `root`, neighbours in id order."""
    edges = tuple(nx.bfs_edges(graph, root, sort_neighbors=sorted))
    children = {b: tuple(child for parent, child in edges if parent == b) for b in graph}
    return Tree(root, edges, {child: parent for parent, child in edges}, children)


@attrs.frozen
class Topology:
    """An overlay with everything the cost models need: the DEF-SR-1 plan
    (the implementation's, for propagation; the model's, for BROCLI
    routing), all-pairs distances and one breadth-first tree per broker."""

    name: str
    n: int
    edges: tuple[tuple[int, int], ...]
    note: str
    graph: nx.Graph
    plan: Plan
    routing_plan: PropagationPlan
    distance: Mapping[int, Mapping[int, int]]
    trees: Mapping[int, Tree]

    @property
    def mean_hops(self) -> float:
        """h̄: the mean shortest-path length over ordered pairs of brokers."""
        total = sum(d for a in self.distance for b, d in self.distance[a].items() if a != b)
        return total / (self.n * (self.n - 1))

    @property
    def max_degree(self) -> int:
        return max(self.plan.degree.values())


def make_topology(name: str, n: int, links: Iterable[tuple[int, int]], note: str) -> Topology:
    edges = tuple(sorted((min(a, b), max(a, b)) for a, b in links))
    neighbours: dict[int, list[int]] = {b: [] for b in range(n)}
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    adjacency = {b: tuple(sorted(ns)) for b, ns in neighbours.items()}
    dist = {b: distances(adjacency, b) for b in adjacency}
    if any(len(d) != n for d in dist.values()):
        raise ValueError(f"topology {name} is not connected")
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    return Topology(name, n, edges, note, graph, plan(adjacency), propagation_plan(graph), dist,
                    {b: siena_tree(graph, b) for b in graph})


def topologies(seed: int, trees: int) -> list[Topology]:
    """The CWIX backbone (full graph) and `trees` random recursive trees of 24 brokers."""
    labels, edges = topo.read_graph(CWIX)  # every link: the plan of DEF-SR-1 works on graphs with cycles
    n = len(labels)
    out = [make_topology("cwix", n, edges, f"Cable & Wireless US backbone (Topology Zoo), {n} brokers, {len(edges)} links, "
                                          "the full graph with its cycles")]
    for i in range(trees):
        tree = topo.random_tree(BROKERS, rng_for(seed, "tree", i))
        out.append(make_topology(f"random-tree-{i}", BROKERS, tree, f"random recursive tree of {BROKERS} brokers"))
    return out


# -- workloads -------------------------------------------------------------------

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
    seed*1000 + b, as `summaries.measure_merged`). IDs: c1 = the broker,
    c2 = the arrival slot, c3 = the attribute bitmap (DEF-SUM-11)."""
    layout = IdLayout(n, subscriptions, len(bs.SCHEMA))
    index = {key: i for i, key in enumerate(bs.SCHEMA)}
    subs: dict[int, list] = {}
    evs: dict[int, list] = {}
    ids: dict[int, dict] = {}
    for b in range(n):
        w = bs.generate(p, subscriptions, events, seed * 1000 + b)
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
            delta = Summary(workload.layout, bs.SCHEMA)
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


# -- summaries: propagation and storage ---------------------------------------

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


# -- Siena (seed note §6.5) ------------------------------------------------------

def covering_probabilities(t: Topology, p_max: float) -> dict[int, float]:
    """p_B = p_max × deg(B) / max deg: the quoted covering probability is the largest."""
    top = t.max_degree
    return {b: p_max * d / top for b, d in t.plan.degree.items()}


def siena_forward(tree: Tree, cover: Mapping[int, float], rnd: random.Random, used: set) -> int:
    """One subscription forwarded from tree.root, neighbour to neighbour over
    the root's tree; a receiving broker covers it (stores it, forwards it
    no further) with its probability. Returns the messages; adds each
    crossed tree edge (named by its lower end) to `used`."""
    messages, stack = 0, [tree.root]
    while stack:
        u = stack.pop()
        for c in tree.children[u]:
            messages += 1
            used.add(c)
            if rnd.random() >= cover[c]:
                stack.append(c)
    return messages


def siena_period(t: Topology, p_max: float, sigma: int, rnd: random.Random) -> dict:
    """σ new subscriptions at every broker. Messages: one per subscription per
    tree edge crossed. Link batches: the period's subscriptions of one
    origin cross a link as one message (if any crosses it)."""
    cover = covering_probabilities(t, p_max)
    messages = batches = 0
    for b in range(t.n):
        used: set = set()
        for _ in range(sigma):
            messages += siena_forward(t.trees[b], cover, rnd, used)
        batches += len(used)
    return {"siena_messages": messages, "siena_link_batches": batches}


def siena_expected_messages(t: Topology, p_max: float) -> float:
    """The expected messages of one subscription from every broker: an edge
    (u, c) of the origin's tree carries it iff no broker on the way to u
    (the origin excluded) covered it. Also Siena's hops per period when a
    period's subscriptions are covered or forwarded as one batch."""
    cover = covering_probabilities(t, p_max)
    total = 0.0
    for tree in t.trees.values():
        reach = {tree.root: 1.0}
        for u, c in tree.edges:
            total += reach[u]
            reach[c] = reach[u] * (1 - cover[c])
    return total


# -- baseline (i) ------------------------------------------------------------------

def baseline_formula_bytes(t: Topology, sigma: int) -> float:
    """Seed note §6.5: (#brokers − 1) × h̄ × #brokers × σ × 50."""
    return (t.n - 1) * t.mean_hops * t.n * sigma * SUBSCRIPTION_BYTES


def baseline_walked_links(t: Topology) -> int:
    """Links crossed when every broker sends one subscription to every other
    broker along a shortest path (the destination's path up the origin's
    breadth-first tree, walked link by link)."""
    links = 0
    for origin, tree in t.trees.items():
        for dest in range(t.n):
            while dest != origin:
                dest = tree.parent[dest]
                links += 1
    return links


# -- routing (DEF-SR-2, DEF-SR-5) -------------------------------------------------

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


def route_shape(t: Topology, publisher: int, option: str) -> RouteShape:
    everyone = brocli_route(t.graph, t.routing_plan, t.routing_plan.merged_brokers, publisher, option)
    routes = [(a, b) for kind, a, b in everyone.messages if kind == "ROUTE"]
    reporter = np.array([everyone.delivered[x] for x in range(t.n)])
    remote = (reporter != np.arange(t.n)).astype(np.int64)
    links = np.array([t.distance[int(reporter[x])][x] for x in range(t.n)], dtype=np.int64)
    return RouteShape(len(routes), sum(t.distance[a][b] for a, b in routes), remote, links)


def reverse_path_incidence(t: Topology, publisher: int) -> np.ndarray:
    """Siena's event routing (seed note §6.5: events follow the reverse paths
    of the subscriptions): [X, e] = 1 iff link e lies on the path from the
    publisher to X in X's tree, which X's subscription came down."""
    index = {e: i for i, e in enumerate(t.edges)}
    out = np.zeros((t.n, len(t.edges)), dtype=np.int64)
    for x in range(t.n):
        v = publisher
        while v != x:
            u = t.trees[x].parent[v]
            out[x, index[(min(u, v), max(u, v))]] = 1
            v = u
    return out


def routing_rows(t: Topology, events_per_broker: int, seed: int, check_per_point: int) -> tuple[list[dict], list[str]]:
    """Fig. 5-4: for k = 0 … N interested brokers (popularity k/N), chosen at
    random per event (nested as k grows), `events_per_broker` events at
    every broker. Summaries: ROUTE + DELIVER messages (option a, and b) and
    their overlay links; Siena: the links of the union of reverse paths.
    `check_per_point` events per publisher and k are also routed one by one
    (`brocli_route`) to check the shape's prediction."""
    rng = np_rng_for(seed, t.name, "interest")
    shapes = {opt: [route_shape(t, b, opt) for b in range(t.n)] for opt in ("a", "b")}
    incidence = [reverse_path_incidence(t, b) for b in range(t.n)]
    ranks = {b: rng.random((events_per_broker, t.n)).argsort(axis=1).argsort(axis=1) for b in range(t.n)}
    rows, problems = [], []
    for k in range(t.n + 1):
        totals = dict.fromkeys(("a_messages", "a_links", "b_messages", "b_links", "siena"), 0)
        for b in range(t.n):
            interested = (ranks[b] < k).astype(np.int64)
            for opt in ("a", "b"):
                s = shapes[opt][b]
                totals[f"{opt}_messages"] += int(interested.shape[0] * s.routes + (interested @ s.remote).sum())
                totals[f"{opt}_links"] += int(interested.shape[0] * s.route_links + (interested @ s.deliver_links).sum())
            totals["siena"] += int(((interested @ incidence[b]) > 0).sum())
            problems += check_routes(t, b, interested[:check_per_point], shapes["a"][b])
        events = t.n * events_per_broker
        rows.append({"topology": t.name, "interested": k, "popularity": round(k / t.n, 4), "events": events,
                     **{f"summary_{key}": round(v / events, 4) for key, v in totals.items() if key != "siena"},
                     "siena_hops": round(totals["siena"] / events, 4)})
    return rows, problems


def check_routes(t: Topology, publisher: int, interested: np.ndarray, shape: RouteShape) -> list[str]:
    """Route events one by one (DEF-SR-2, exact summaries) and compare the
    messages with the shape's prediction; every interested broker must be
    handed the event once."""
    problems = []
    for row in interested:
        wanted = {int(x) for x in np.flatnonzero(row)}
        reported = {b: wanted & merged for b, merged in t.routing_plan.merged_brokers.items()}
        route = brocli_route(t.graph, t.routing_plan, reported, publisher)
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
    from subsum.impl.matching import make_engine

    everything = [(f"{b}:{sid}", sub) for b, ids in w.ids.items() for sid, sub in ids.items()]
    engine = make_engine("indexed", everything, count_distinct=False)
    engine.prepare()
    counts = dict.fromkeys(("events", "messages", "routes", "delivers", "false_delivers", "local_false", "true_owners"), 0)
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
            tally_route(counts, route, kept)
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


def tally_route(counts: dict, route: Route, kept: set[int]) -> None:
    counts["events"] += 1
    counts["messages"] += len(route.messages)
    counts["routes"] += route.route_hops
    counts["true_owners"] += len(kept)
    for owner, at in route.delivered.items():
        if owner != at:
            counts["delivers"] += 1
            counts["false_delivers"] += owner not in kept
        else:
            counts["local_false"] += owner not in kept


# -- one covering probability ------------------------------------------------------------

@attrs.define
class Results:
    propagation: list = attrs.field(factory=list)  # Fig. 5-2 (and the hops of 5-3): topology, p, σ
    hops: list = attrs.field(factory=list)  # Fig. 5-3: topology, p (from 0)
    routing: list = attrs.field(factory=list)  # Fig. 5-4: topology, k
    storage: list = attrs.field(factory=list)  # Fig. 5-5: topology, p
    false_positives: list = attrs.field(factory=list)
    disagreements: list = attrs.field(factory=list)


def propagation_row(t: Topology, p: float, sigma: int, merged: Mapping[int, Summary], seed: int) -> dict:
    row = {"topology": t.name, "p": p, "sigma": sigma, "sinks": len(t.plan.sinks), **summary_propagation(t.plan, merged)}
    row.update(siena_period(t, p, sigma, rng_for(seed, t.name, p, sigma, "siena")))
    row["siena_bytes"] = row["siena_messages"] * SUBSCRIPTION_BYTES
    row["baseline_formula_bytes"] = round(baseline_formula_bytes(t, sigma))
    row["baseline_walked_bytes"] = baseline_walked_links(t) * sigma * SUBSCRIPTION_BYTES
    row["siena_over_summary"] = round(row["siena_bytes"] / row["summary_formula_bytes"], 3)
    row["siena_over_summary_wire"] = round(row["siena_bytes"] / row["summary_wire_bytes"], 3)
    row["baseline_over_summary"] = round(row["baseline_formula_bytes"] / row["summary_formula_bytes"], 2)
    row["baseline_over_summary_wire"] = round(row["baseline_formula_bytes"] / row["summary_wire_bytes"], 2)
    return row


def storage_row(t: Topology, p: float, subscriptions: int, merged: Mapping[int, Summary], siena_messages: int) -> dict:
    """Siena stores every subscription at its origin and at every broker it reaches (covered or not)."""
    row = {"topology": t.name, "p": p, "subscriptions_per_broker": subscriptions, **summary_storage(merged)}
    row["siena_stored"] = t.n * subscriptions + siena_messages
    row["siena_bytes"] = row["siena_stored"] * SUBSCRIPTION_BYTES
    row["baseline_bytes"] = t.n * t.n * subscriptions * SUBSCRIPTION_BYTES
    row["local_subscription_bytes"] = t.n * subscriptions * SUBSCRIPTION_BYTES
    row["siena_over_summary"] = round(row["siena_bytes"] / row["summary_formula_bytes"], 3)
    row["siena_over_summary_wire"] = round(row["siena_bytes"] / row["summary_wire_bytes"], 3)
    return row


def measure_probability(tops: list[Topology], p: float, sigmas: tuple[int, ...], subscriptions: int, fp_events: int,
                        seed: int, results: Results, log: Callable[[str], None]) -> None:
    """Figs 5-2 and 5-5 (and the false-positive run on CWIX) at covering probability p."""
    t0 = time.perf_counter()
    w = broker_workloads(p, BROKERS, subscriptions, fp_events, seed)
    deltas = GrowingDeltas(w)
    for sigma in sorted(set(sigmas) | {subscriptions}):
        own = deltas.grow_to(sigma)
        for t in tops:
            merged = propagate(t.plan, own)
            row = propagation_row(t, p, sigma, merged, seed)
            if sigma in sigmas:
                results.propagation.append(row)
            if sigma == subscriptions:
                results.storage.append(storage_row(t, p, subscriptions, merged, row["siena_messages"]))
                if t.name == "cwix" and fp_events:
                    fp, problems = false_positive_row(t, w, merged, seed)
                    results.false_positives.append(fp)
                    results.disagreements += problems
    log(f"p={p}: propagation, storage and false positives on {len(tops)} topologies in {time.perf_counter() - t0:.1f}s")


def hop_rows(tops: list[Topology], propagation: list[dict], seed: int) -> list[dict]:
    """Fig. 5-3, from covering probability 0: summaries N − #sinks sends;
    Siena's expected messages of a period whose subscriptions are covered
    or forwarded as one batch (seed note §6.6: "each broker forwards to each
    neighbour with a probability depending on covering"), and its link
    batches at the smallest and largest σ (the propagation rows; simulated
    here at p = 0); baseline (i): links, each subscription to each broker."""
    rows = []
    sigmas = sorted({r["sigma"] for r in propagation})
    for t in tops:
        for p in (0.0, *sorted({r["p"] for r in propagation})):
            batches = {}
            for sigma in (sigmas[0], sigmas[-1]):
                found = [r for r in propagation if r["topology"] == t.name and r["p"] == p and r["sigma"] == sigma]
                batches[sigma] = found[0] if found else siena_period(t, p, sigma, rng_for(seed, t.name, p, sigma, "siena"))
            rows.append({"topology": t.name, "p": p, "brokers": t.n, "sinks": len(t.plan.sinks),
                         "summary_sends": t.n - len(t.plan.sinks), "siena_batch_expected": round(siena_expected_messages(t, p), 2),
                         "sigma_small": sigmas[0], "siena_link_batches_small": batches[sigmas[0]]["siena_link_batches"],
                         "sigma_large": sigmas[-1], "siena_link_batches_large": batches[sigmas[-1]]["siena_link_batches"],
                         "siena_messages_per_subscription": round(batches[sigmas[-1]]["siena_messages"] / (t.n * sigmas[-1]), 3),
                         "baseline_links": baseline_walked_links(t), "mean_hops": round(t.mean_hops, 4)})
    return rows


# -- the run ------------------------------------------------------------------------------

def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else [])
        writer.writeheader()
        writer.writerows(rows)


def topology_summary(t: Topology) -> dict:
    return {"name": t.name, "note": t.note, "brokers": t.n, "links": len(t.edges), "max_degree": t.max_degree,
            "mean_hops": round(t.mean_hops, 4), "sinks": list(t.plan.sinks),
            "merged_brokers": {str(s): sorted(t.plan.merged[s]) for s in t.plan.sinks},
            "propagation_sends": t.n - len(t.plan.sinks)}


def run(out_dir: Path, *, quick: bool = False, seed: int = 1, log: Callable[[str], None] = print) -> dict:
    """The whole benchmark: writes propagation.csv, hops.csv, routing.csv,
    storage.csv, false_positives.csv, one PNG per figure and summary.json
    into out_dir; returns the summary dict."""
    from subsum.bench import summary_routing_report as report

    subscriptions, trees = SUBSCRIPTIONS, RANDOM_TREES
    sigmas: tuple[int, ...] = SIGMAS
    events, fp_events, checks = EVENTS_PER_BROKER, FP_EVENTS_PER_BROKER, 20
    if quick:
        subscriptions, sigmas, trees, events, fp_events, checks = 200, (10, 50, 200), 1, 100, 5, 3
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    tops = topologies(seed, trees)
    results = Results()
    for p in bs.PROBABILITIES:
        measure_probability(tops, p, sigmas, subscriptions, fp_events, seed, results, log)
    results.hops = hop_rows(tops, results.propagation, seed)
    t0 = time.perf_counter()
    for t in tops:
        rows, problems = routing_rows(t, events, seed, checks)
        results.routing += rows
        results.disagreements += problems
    log(f"routing: {events} events per broker, k = 0 … {BROKERS} interested, {len(tops)} topologies in {time.perf_counter() - t0:.1f}s")
    tables = {"propagation.csv": results.propagation, "hops.csv": results.hops, "routing.csv": results.routing,
              "storage.csv": results.storage, "false_positives.csv": results.false_positives}
    for name, rows in tables.items():
        write_csv(out / name, rows)
    plots = report.plots(results, [topology_summary(t) for t in tops], out)
    comparison = report.comparison(results)
    summary: dict = {
        "seconds": round(time.perf_counter() - started, 1),
        "parameters": {"quick": quick, "seed": seed, "brokers": BROKERS, "subscriptions_per_broker": subscriptions,
                       "sigmas": list(sigmas), "probabilities": list(bs.PROBABILITIES), "events_per_broker": events,
                       "false_positive_events_per_broker": fp_events, "checked_routes_per_point": checks,
                       "subscription_bytes": SUBSCRIPTION_BYTES, "schema": [f"{n}:{t}" for n, t in bs.SCHEMA],
                       "id_bytes": IdLayout(BROKERS, subscriptions, len(bs.SCHEMA)).id_bytes, "random_trees": trees},
        "topologies": [topology_summary(t) for t in tops],
        "thesis": report.THESIS,
        "comparison": comparison,
        "verdicts": report.verdicts(comparison),
        "differences": report.DIFFERENCES,
        "disagreements": results.disagreements,
        "files": [*(str(out / n) for n in tables), *map(str, plots), str(out / "summary.json")],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(f"wrote {', '.join(summary['files'])} in {summary['seconds']}s")
    return summary


if __name__ == "__main__":  # python -m subsum.bench.summary_routing [--quick] [OUT]
    import sys

    args = sys.argv[1:]
    result = run(Path(next((a for a in args if not a.startswith("--")), "bench-out/summary-routing")), quick="--quick" in args)
    sys.exit(1 if result["disagreements"] else 0)
