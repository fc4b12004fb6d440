"""Summary-based routing across brokers, the reference version
(spec/08-summary-routing.md; seed 000 §4.3, Algorithms 4-2 and 4-3).

Constructed for ease of understanding rather than for speed. The overlay is
a networkx graph of brokers (any connected or disconnected graph; cycles are
allowed). Propagation (Algorithm 4-2) decides which broker sends its merged
summary to which; routing (Algorithm 4-3) carries an event with its broker
check list (BROCLI) from broker to broker. Neither function looks inside a
summary: routing is given, per broker, the owners its summary reports for
the event. The simulator's summaries protocol
(`subsum.impl.network.protocols.summaries.broker`) is checked against these functions.
"""

from __future__ import annotations

from typing import Iterable, Mapping, cast

import attrs
import networkx as nx

from subsum.core.types import Event, Subscription
from subsum.model.semantics import matches

OPTIONS = ("a", "b")


def processing_rank(graph: nx.Graph, b: int) -> tuple[int, int]:
    """DEF-SR-1: a broker's place in propagation: iterations run by degree,
    and brokers of one iteration in id order, so broker b acts at rank
    (degree, id).

    >>> processing_rank(nx.path_graph([1, 2, 3]), 2)
    (2, 2)
    """
    return (graph.degree(b), b)


def propagation_target(graph: nx.Graph, b: int) -> int | None:
    """DEF-SR-1: the one neighbor broker b sends its merged summary to:
    among the neighbors that act after b (rank greater than b's, so of
    equal or greater degree and not yet done), the one of smallest
    (degree, id). None if there is none: b is a sink.

    >>> g = nx.Graph([(1, 2), (2, 3), (3, 4), (3, 5)])
    >>> [propagation_target(g, b) for b in (1, 2, 3, 4)]
    [2, 3, None, 3]
    """
    later = [n for n in graph[b] if processing_rank(graph, n) > processing_rank(graph, b)]
    return min(later, key=lambda n: processing_rank(graph, n), default=None)


@attrs.frozen
class PropagationPlan:
    """DEF-SR-1: the result of one propagation round.

    - `sends`: (iteration, sender, receiver), in the order they happen;
    - `merged_brokers`: each broker's Merged_Brokers list after the round;
    - `sinks`: the brokers that send nothing, in id order.
    """

    sends: tuple[tuple[int, int, int], ...]
    merged_brokers: Mapping[int, frozenset[int]]
    sinks: tuple[int, ...]

    def target_of(self, b: int) -> int | None:
        """The broker b sends to, or None for a sink."""
        return next((r for _, s, r in self.sends if s == b), None)


def propagation_plan(graph: nx.Graph) -> PropagationPlan:
    """DEF-SR-1 (Algorithm 4-2): for i = 1 .. max degree, each broker of
    degree i, in id order, merges its own summary with everything it has
    received (Merged_Brokers = itself and the senders' lists) and sends the
    result to `propagation_target`. Every send goes to a broker that acts
    later, so nobody receives after it has sent, the send relation is a
    forest, and the sinks' lists partition the brokers.

    Example 4-3 (the 13-broker tree of the seed note §5.2):

    >>> g = nx.Graph([(1, 2), (2, 5), (3, 5), (4, 5), (6, 5), (5, 7), (7, 8), (8, 9), (8, 10), (10, 11), (11, 12), (11, 13)])
    >>> plan = propagation_plan(g)
    >>> plan.sinks, len(plan.sends)
    ((5, 8, 11), 10)
    >>> [sorted(plan.merged_brokers[s]) for s in plan.sinks]
    [[1, 2, 3, 4, 5, 6], [7, 8, 9, 10], [11, 12, 13]]
    """
    received: dict[int, set[int]] = {b: set() for b in graph}
    merged: dict[int, frozenset[int]] = {}
    sends = []
    for b in sorted(graph, key=lambda v: processing_rank(graph, v)):
        merged[b] = frozenset({b}).union(*(merged[s] for s in received[b]))
        target = propagation_target(graph, b)
        if target is not None:
            sends.append((graph.degree(b), b, target))
            received[target].add(b)
    sinks = tuple(sorted(b for b in graph if propagation_target(graph, b) is None))
    return PropagationPlan(tuple(sends), merged, sinks)


def single_sink_plan(graph: nx.Graph) -> PropagationPlan:
    """DEF-SR-8 (a reading for Fig. 5-4, not Algorithm 4-2): each connected
    part of the overlay merges into one sink, the broker that option (a)
    visits first (highest degree, smallest id among equals). Every other
    broker sends to its parent in the breadth-first tree from that sink
    (neighbors in id order), the deepest first, so Merged_Brokers(B) is
    B's subtree and the sink's list holds its whole part: N − #parts sends.

    >>> g = nx.Graph([(1, 2), (2, 5), (3, 5), (4, 5), (6, 5), (5, 7), (7, 8), (8, 9), (8, 10), (10, 11), (11, 12), (11, 13)])
    >>> plan = single_sink_plan(g)
    >>> plan.sinks, len(plan.sends), sorted(plan.merged_brokers[8])
    ((5,), 12, [8, 9, 10, 11, 12, 13])
    """
    parent: dict[int, int] = {}
    depth: dict[int, int] = {}
    sinks = []
    for part in nx.connected_components(graph):
        sink = min(part, key=lambda b: (-graph.degree(b), b))
        sinks.append(sink)
        depth[sink] = 0
        for up, down in nx.bfs_edges(graph, sink, sort_neighbors=sorted):
            parent[down], depth[down] = up, depth[up] + 1
    received: dict[int, set[int]] = {b: set() for b in graph}
    merged: dict[int, frozenset[int]] = {}
    sends = []
    deepest = max(depth.values(), default=0)
    for b in sorted(graph, key=lambda v: (-depth[v], v)):
        merged[b] = frozenset({b}).union(*(merged[s] for s in received[b]))
        if b in parent:  # iteration 1 is the deepest level
            sends.append((deepest - depth[b] + 1, b, parent[b]))
            received[parent[b]].add(b)
    return PropagationPlan(tuple(sends), merged, tuple(sorted(sinks)))


def next_broker(graph: nx.Graph, at: int, brocli: frozenset[int], option: str = "a") -> int | None:
    """DEF-SR-2: where an event goes next from broker `at`, given the
    brokers already checked (BROCLI). None once BROCLI holds every broker.

    - option (a): the broker of highest degree not in BROCLI, the smallest
      id among equals (the evaluation's choice);
    - option (b): the nearest broker (fewest overlay links) not in BROCLI
      whose degree is at least `at`'s, ties to the higher degree, then the
      smaller id; if no such broker remains, option (a). Brokers the
      overlay cannot reach from `at` count as farthest.

    >>> g = nx.Graph([(1, 2), (2, 5), (3, 5), (4, 5), (6, 5), (5, 7), (7, 8), (8, 9), (8, 10), (10, 11), (11, 12), (11, 13)])
    >>> next_broker(g, 1, frozenset({1})), next_broker(g, 1, frozenset({1}), "b")
    (5, 2)
    """
    assert option in OPTIONS, option
    left = [b for b in graph if b not in brocli]
    if not left:
        return None
    if option == "b":
        distance = nx.single_source_shortest_path_length(graph, at)
        far = len(graph)
        eligible = [b for b in left if graph.degree(b) >= graph.degree(at)]
        if eligible:
            return cast(int, min(eligible, key=lambda b: (distance.get(b, far), -graph.degree(b), b)))
    return cast(int, min(left, key=lambda b: (-graph.degree(b), b)))


@attrs.frozen
class Route:
    """DEF-SR-2: one event's journey.

    - `messages`: ("ROUTE", from, to) and ("DELIVER", from, owner), in the
      order they are sent; each is one hop in the thesis's count;
    - `checked`: the brokers that matched the event against their summary,
      in visiting order;
    - `delivered`: owner -> the broker that handed it the event (itself
      for a local match);
    - `brocli`: BROCLI at the end.
    """

    messages: tuple[tuple[str, int, int], ...]
    checked: tuple[int, ...]
    delivered: Mapping[int, int]
    brocli: frozenset[int]

    @property
    def route_hops(self) -> int:
        return sum(1 for kind, _, _ in self.messages if kind == "ROUTE")


def brocli_route(graph: nx.Graph, plan: PropagationPlan, reported: Mapping[int, Iterable[int]], publisher: int,
                 option: str = "a") -> Route:
    """DEF-SR-2 (Algorithm 4-3): the event enters at `publisher` with an
    empty BROCLI. Each broker B it reaches takes the owners its summary
    reports (`reported[B]`), less the owners already in BROCLI (the c1
    filter), delivers to each (DELIVER, or locally when the owner is B),
    adds its Merged_Brokers list to BROCLI, and sends the event on
    (ROUTE) to `next_broker`, until BROCLI holds every broker.

    >>> g = nx.Graph([(1, 2), (2, 5), (3, 5), (4, 5), (6, 5), (5, 7), (7, 8), (8, 9), (8, 10), (10, 11), (11, 12), (11, 13)])
    >>> plan = propagation_plan(g)
    >>> route = brocli_route(g, plan, {5: {4}, 8: {8}, 11: {13}}, 1)
    >>> [f"{a}->{b}" for _, a, b in route.messages]
    ['1->5', '5->4', '5->8', '8->11', '11->13']
    """
    messages: list[tuple[str, int, int]] = []
    checked: list[int] = []
    delivered: dict[int, int] = {}
    brocli: frozenset[int] = frozenset()
    at: int | None = publisher
    while at is not None:
        checked.append(at)
        for owner in sorted(set(reported.get(at, ())) - brocli):
            delivered[owner] = at
            if owner != at:
                messages.append(("DELIVER", at, owner))
        brocli = brocli | plan.merged_brokers[at]
        nxt = next_broker(graph, at, brocli, option)
        if nxt is not None:
            messages.append(("ROUTE", at, nxt))
        at = nxt
    return Route(tuple(messages), tuple(checked), delivered, brocli)


def interested_owners(subscriptions: Mapping[int, Iterable[Subscription]], event: Event) -> set[int]:
    """DEF-SR-3: the ideal delivery: exactly the brokers owning a
    subscription that matches the event exactly (DEF-MATCH-2).

    >>> from subsum.core.filters import parse_filter
    >>> from subsum.core.types import Attribute
    >>> e = Event((Attribute("x", "int", 5),))
    >>> sorted(interested_owners({1: [parse_filter("x > 3")], 2: [parse_filter("x > 7")], 3: []}, e))
    [1]
    """
    return {owner for owner, subs in subscriptions.items() if any(matches(s, event) for s in subs)}
