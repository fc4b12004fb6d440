"""Where publications are cached and where requests go, the reference
version (spec/09-caching.md DEF-CACHE-6, DEF-CACHE-7), on the ideal routing
state of a quiescent network (`subsum.model.network`).

No messages and no caches here: the functions say which brokers a
publication visits and which of them keep it under each placement, and
which brokers a client's request reaches, with the path each one records.

>>> from subsum.core.filters import parse_filter
>>> from subsum.core.types import Attribute
>>> g = overlay([0, 1, 2], [(0, 1), (1, 2)])
>>> t1 = parse_filter("topic = 1")
>>> access, filters = {100: 2, 101: 0}, {100: frozenset({t1}), 101: frozenset()}
>>> event = Event((Attribute("topic", "int", 1),))
>>> sorted(holders(g, access, filters, 101, event, "candidate")), sorted(holders(g, access, filters, 101, event, "leaf"))
([0, 1, 2], [2])
"""

from __future__ import annotations

from typing import Callable

import networkx as nx

from subsum.core.types import Event, Subscription
from subsum.model.covering import subscription_is_satisfiable
from subsum.model.network import ClientAccess, ClientFilters, ideal_table, ideal_tables, overlay
from subsum.model.semantics import matches

__all__ = ["delivery_brokers", "filters_overlap", "has_matching_entry", "holders", "is_leaf", "overlay", "request_reach"]


def filters_overlap(f: Subscription, g: Subscription) -> bool:
    """DEF-CACHE-7: some event matches both f and g (decided by z3).

    >>> from subsum.core.filters import parse_filter
    >>> filters_overlap(parse_filter("x > 3"), parse_filter("x < 5")), filters_overlap(parse_filter("x > 3"), parse_filter("x < 4"))
    (True, False)
    """
    return subscription_is_satisfiable(Subscription(f.constraints | g.constraints))


def delivery_brokers(graph: nx.Graph, access: ClientAccess, filters: ClientFilters, publisher: int, event: Event) -> dict[int, int | None]:
    """The brokers a publication visits under subscription forwarding (DEF-NET-6): its
    publisher's broker and every broker on the tree path from there to a
    client whose filter it matches; each with the node it came from (None
    at the publisher's broker).

    >>> from subsum.core.filters import parse_filter
    >>> from subsum.core.types import Attribute
    >>> g = overlay([0, 1, 2, 3], [(0, 1), (1, 2), (1, 3)])
    >>> access, filters = {100: 2, 101: 0}, {100: frozenset({parse_filter("x > 1")}), 101: frozenset()}
    >>> delivery_brokers(g, access, filters, 101, Event((Attribute("x", "int", 5),)))
    {0: None, 1: 0, 2: 1}
    """
    origin = access[publisher]
    visited: dict[int, int | None] = {origin: None}
    for client, broker in access.items():
        if client != publisher and nx.has_path(graph, origin, broker) and any(matches(f, event) for f in filters.get(client, ())):
            path = nx.shortest_path(graph, origin, broker)
            for previous, here in zip(path, path[1:]):
                visited.setdefault(here, previous)
    return dict(sorted(visited.items()))


def has_matching_entry(table: set[tuple[int, Subscription]], event: Event, nodes: Callable[[int], bool] = lambda _: True) -> bool:
    """The table holds an entry (n, f) with f matching the event, n among `nodes` (DEF-NET-6's forwarding test).

    >>> from subsum.core.filters import parse_filter
    >>> from subsum.core.types import Attribute
    >>> has_matching_entry({(7, parse_filter("x > 1"))}, Event((Attribute("x", "int", 5),)))
    True
    """
    return any(nodes(n) and matches(f, event) for n, f in table)


def is_leaf(table: set[tuple[int, Subscription]], event: Event, came_from: int | None, brokers: set[int], reading: str) -> bool:
    """DEF-CACHE-6, leaf caching: a local end client's entry matches the event
    and, in reading (ii), no broker neighbor but `came_from` has a matching entry.

    >>> from subsum.core.filters import parse_filter
    >>> from subsum.core.types import Attribute
    >>> p, e = parse_filter("x > 1"), Event((Attribute("x", "int", 5),))
    >>> is_leaf({(100, p), (3, p)}, e, 1, {1, 3}, "i"), is_leaf({(100, p), (3, p)}, e, 1, {1, 3}, "ii")
    (True, False)
    """
    local = has_matching_entry(table, event, lambda n: n not in brokers)
    if reading == "i" or not local:
        return local
    return not has_matching_entry(table, event, lambda n: n in brokers and n != came_from)


def centre_broker(graph: nx.Graph, broker: int) -> int:
    """DEF-CACHE-6, single placement's `centre` reading: the broker of least
    eccentricity in `broker`'s tree, the least id among equals.

    >>> centre_broker(overlay([0, 1, 2, 3], [(0, 1), (1, 2), (2, 3)]), 3)
    1
    """
    centre: list[int] = nx.center(graph.subgraph(nx.node_connected_component(graph, broker)))
    return min(centre)


def holders(graph: nx.Graph, access: ClientAccess, filters: ClientFilters, publisher: int, event: Event, placement: str,
            reading: str = "ii") -> set[int]:
    """DEF-CACHE-6: the brokers that store a publication when it is published
    (on a quiescent network, with unbounded caches):

    - candidate: the brokers it visits whose table has an entry it matches;
    - leaf: the brokers it visits that are leaves for it (`is_leaf`);
    - all: every broker of the publisher's tree;
    - single: one broker, the publisher's (the default reading) or, with
      reading "centre", the centre of the publisher's tree (`centre_broker`).

    >>> from subsum.core.filters import parse_filter
    >>> from subsum.core.types import Attribute
    >>> g = overlay([0, 1, 2], [(0, 1), (1, 2)])
    >>> access, filters = {100: 2, 101: 0}, {100: frozenset({parse_filter("x > 1")}), 101: frozenset()}
    >>> holders(g, access, filters, 101, Event((Attribute("x", "int", 5),)), "single")
    {0}
    """
    origin = access[publisher]
    if placement == "all":
        return set(nx.node_connected_component(graph, origin))
    if placement == "single":
        return {centre_broker(graph, origin)} if reading == "centre" else {origin}
    brokers = set(graph.nodes)
    visited = delivery_brokers(graph, access, filters, publisher, event)
    kept = set()
    for broker, came_from in visited.items():
        table = ideal_table(graph, broker, access, filters)
        if placement == "candidate" and has_matching_entry(table, event):
            kept.add(broker)
        if placement == "leaf" and is_leaf(table, event, came_from if came_from is not None else publisher, brokers, reading):
            kept.add(broker)
    return kept


def request_reach(graph: nx.Graph, access: ClientAccess, filters: ClientFilters, client: int, f: Subscription,
                  overlap: Callable[[Subscription, Subscription], bool] = filters_overlap) -> tuple[dict[int, tuple[int, ...]], set[int]]:
    """DEF-CACHE-7: the brokers client's request(f) reaches, each with the
    path it records (itself first, the client last), and the brokers where
    it is dropped (no broker neighbor but the sender has an entry whose
    filter overlaps f). `overlap` decides overlap (exact by default).

    >>> from subsum.core.filters import parse_filter
    >>> g = overlay([0, 1, 2], [(0, 1), (1, 2)])
    >>> p, q = parse_filter("x > 1"), parse_filter("x < 5")
    >>> access, filters = {100: 0, 200: 2}, {100: frozenset({p}), 200: frozenset({q})}
    >>> request_reach(g, access, filters, 100, p)
    ({0: (0, 100), 1: (1, 0, 100), 2: (2, 1, 0, 100)}, {2})
    """
    tables = ideal_tables(graph, access, filters)
    brokers = set(graph.nodes)
    start = access[client]
    reached: dict[int, tuple[int, ...]] = {}
    dropped: set[int] = set()
    pending: list[tuple[int, int, tuple[int, ...]]] = [(start, client, (client,))]
    while pending:
        here, sender, path = pending.pop()
        stack = (here, *path)
        reached[here] = stack
        targets = sorted({n for n, g in tables[here] if n in brokers and n != sender and overlap(f, g)})
        if not targets:
            dropped.add(here)
        pending.extend((n, here, stack) for n in targets)
    return reached, dropped
