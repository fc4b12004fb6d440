"""The broker network, the reference version (spec/05-network.md DEF-NET-1..5).

Constructed for ease of understanding rather than for speed. An overlay is
a networkx forest of brokers; clients hang off access brokers and hold
filters (subscriptions). The functions say what the routing state and the
deliveries *should* be, with no messages at all: the oracle the simulator
(`subsum.impl.network`) is checked against. The brokers' handlers that
reach that state message by message are `subsum.model.strawman` (spec/05)
and `subsum.model.reconfiguration` (the optimized protocols, spec/06).
"""

from __future__ import annotations

from typing import AbstractSet, Callable, Iterable, Mapping, cast

import networkx as nx

from subsum.core.types import Event, Subscription
from subsum.model.semantics import matches

#: DEF-NET-2: a client is attached to one broker and holds a set of filters.
ClientAccess = Mapping[int, int]
ClientFilters = Mapping[int, frozenset[Subscription]]


def overlay(brokers: Iterable[int], links: Iterable[tuple[int, int]]) -> nx.Graph:
    """DEF-NET-1: the overlay: brokers as nodes, links as edges. It must be a forest.

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> sorted(g.edges)
    [(1, 2), (2, 3), (3, 4)]
    """
    graph = nx.Graph()
    graph.add_nodes_from(brokers)
    graph.add_edges_from(links)
    assert nx.is_forest(graph), "the overlay must be a forest"
    return graph


def side_of(graph: nx.Graph, u: int, v: int) -> set[int]:
    """DEF-NET-3: v's side of the link (u, v): the brokers of the component
    of the forest without (u, v) that contains v. In a forest that link is
    the only path between u and v, so the component is what v reaches
    without passing through u (tests/test_network_checks.py checks the two
    readings agree).

    >>> g = overlay([1, 2, 3, 4, 5], [(1, 2), (2, 3), (3, 4), (3, 5)])
    >>> side_of(g, 2, 3), side_of(g, 3, 2)
    ({3, 4, 5}, {1, 2})
    """
    assert graph.has_edge(u, v), (u, v)
    side, frontier = {v}, [v]
    while frontier:
        for w in graph.adj[frontier.pop()]:
            if w != u and w not in side:
                side.add(w)
                frontier.append(w)
    return side


#: How a caller finds v's side of the link (u, v) (`side_of`, or a memoised `side_of`).
SideOf = Callable[[nx.Graph, int, int], AbstractSet[int]]


def filters_at(brokers: AbstractSet[int], access: ClientAccess, filters: ClientFilters) -> set[Subscription]:
    """DEF-NET-3: the filters subscribed by the clients of these brokers.

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> q = parse_filter("x > 3")
    >>> access, filters = {100: 1, 200: 4}, {100: frozenset({p}), 200: frozenset({q})}
    >>> filters_at({3, 4}, access, filters) == {q}
    True
    """
    return {f for client, broker in access.items() if broker in brokers for f in filters.get(client, ())}


def ideal_table(graph: nx.Graph, u: int, access: ClientAccess, filters: ClientFilters,
                side: SideOf = side_of) -> set[tuple[int, Subscription]]:
    """DEF-NET-3 (seed 002 §2.4): the quiescent subTab of broker u:
    (v, p) for each broker neighbor v and each filter p subscribed on v's
    side of (u, v), and (c, p) for each client c of u and each of its filters.
    `side` finds v's side of (u, v): `side_of`, or the same function
    memoised by a caller that asks for the tables of one overlay many times.

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> q = parse_filter("x > 3")
    >>> access, filters = {100: 1, 200: 4}, {100: frozenset({p}), 200: frozenset({q})}
    >>> ideal_table(g, 2, access, filters) == {(1, p), (3, q)}
    True
    """
    table = {(v, p) for v in graph.neighbors(u) for p in filters_at(side(graph, u, v), access, filters)}
    table |= {(c, p) for c, broker in access.items() if broker == u for p in filters.get(c, ())}
    return table


def ideal_tables(graph: nx.Graph, access: ClientAccess, filters: ClientFilters,
                 side: SideOf = side_of) -> dict[int, set[tuple[int, Subscription]]]:
    """DEF-NET-3: the ideal table of every broker (`side` as in `ideal_table`).

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> q = parse_filter("x > 3")
    >>> access, filters = {100: 1, 200: 4}, {100: frozenset({p}), 200: frozenset({q})}
    >>> ideal_tables(g, access, filters)[4] == {(3, p), (200, q)}
    True
    """
    return {u: ideal_table(graph, u, access, filters, side) for u in graph.nodes}


def ideal_delivery(graph: nx.Graph, access: ClientAccess, filters: ClientFilters, publisher: int, event: Event) -> set[int]:
    """DEF-NET-4: the clients that must receive an event published by client
    `publisher`: every other client in the publisher's tree with a filter the
    event matches. (The publisher is the event's source, so it never gets
    its own event back.)

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> q = parse_filter("x > 3")
    >>> access, filters = {100: 1, 200: 4}, {100: frozenset({p}), 200: frozenset({q})}
    >>> from subsum.core.types import Attribute
    >>> x5 = Event((Attribute("x", "int", 5),))
    >>> ideal_delivery(g, access, filters, 100, x5), ideal_delivery(g, access, filters, 200, x5)
    ({200}, {100})
    """
    tree = nx.node_connected_component(graph, access[publisher])
    return {c for c, broker in access.items()
            if broker in tree and c != publisher and any(matches(f, event) for f in filters.get(c, ()))}


def reconfiguration_path(graph: nx.Graph, old: tuple[int, int], new: tuple[int, int]) -> list[int]:
    """DEF-NET-5 (seed 002 §3.4, Observation 3): for the swap of link `old`
    = (a, b) for `new` = (c, d), the path in the new tree from the old
    endpoint with the smaller identifier to the other one: Path-1 from it
    to the new link's end on its side, then Path-2 from the new link's
    other end to the second old endpoint.

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> reconfiguration_path(g, old=(2, 3), new=(1, 4))
    [2, 1, 4, 3]
    """
    after = swapped(graph, old, new)
    a, b = sorted(old)
    return cast(list[int], nx.shortest_path(after, a, b))


def swapped(graph: nx.Graph, old: tuple[int, int], new: tuple[int, int]) -> nx.Graph:
    """DEF-NET-5: the overlay after breaking `old` and adding `new`; `new`
    must reconnect the two halves.

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> sorted(swapped(g, (2, 3), (1, 4)).edges)
    [(1, 2), (1, 4), (3, 4)]
    """
    after = graph.copy()
    after.remove_edge(*old)
    assert not nx.has_path(after, *new), f"{new} does not reconnect the halves of {old}"
    after.add_edge(*new)
    return after
