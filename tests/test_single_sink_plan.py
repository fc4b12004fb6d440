"""DEF-SR-8: the single-sink reading of the propagation plan (a Fig. 5-4
reading of the summary routing bench): one sink per connected part, the
broker option (a) visits first; every other broker sends once, along an
overlay link, one level closer to its sink; the sinks' lists partition the
brokers; and on a connected overlay BROCLI routing (option a) needs at most
one ROUTE."""

from __future__ import annotations

from collections import defaultdict

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from subsum.conformance.checks.routing.routes import graphs
from subsum.model.routing import brocli_route, single_sink_plan


@settings(max_examples=200, deadline=None)
@given(graphs(), st.data())
def test_single_sink_plan_merges_each_part_into_its_first_visited_broker(graph: nx.Graph, data) -> None:
    plan = single_sink_plan(graph)
    parts = list(nx.connected_components(graph))
    assert len(plan.sinks) == len(parts)
    for part in parts:
        (sink,) = [s for s in plan.sinks if s in part]
        assert sink == min(part, key=lambda b: (-graph.degree(b), b))
        assert plan.merged_brokers[sink] == frozenset(part)
    senders = [s for _, s, _ in plan.sends]
    assert len(senders) == len(set(senders)) == graph.number_of_nodes() - len(parts)
    received = defaultdict(set)
    for _, s, r in plan.sends:
        sink = next(x for x in plan.sinks if nx.has_path(graph, x, s))
        assert graph.has_edge(s, r)
        assert nx.shortest_path_length(graph, sink, r) == nx.shortest_path_length(graph, sink, s) - 1, (s, r)
        received[r].add(s)
    for b in graph:
        assert plan.merged_brokers[b] == frozenset({b}).union(*(plan.merged_brokers[s] for s in received[b]))
    if graph.number_of_nodes() and nx.is_connected(graph):
        publisher = data.draw(st.sampled_from(sorted(graph)))
        route = brocli_route(graph, plan, {}, publisher, "a")
        assert route.route_hops == (0 if publisher in plan.sinks else 1)
        assert route.brocli == frozenset(graph)


def test_example_4_3_has_one_sink_at_its_highest_degree_broker() -> None:
    """On Example 4-3's tree broker 5 (degree 5) is the sink, and the event of
    CLM-SR-3 (at broker 1, matching at 4, 8 and 13) goes there once and is
    delivered from there: four messages where Algorithm 4-2's plan needs five."""
    g = nx.Graph([(1, 2), (2, 5), (3, 5), (4, 5), (6, 5), (5, 7), (7, 8), (8, 9), (8, 10), (10, 11), (11, 12), (11, 13)])
    plan = single_sink_plan(g)
    route = brocli_route(g, plan, {5: {4, 8, 13}}, 1)
    assert [f"{k} {a} {b}" for k, a, b in route.messages] == ["ROUTE 1 5", "DELIVER 5 4", "DELIVER 5 8", "DELIVER 5 13"]
