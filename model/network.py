"""The broker network, the reference version (spec/05-network.md).

Constructed for ease of understanding rather than for speed. An overlay is
a networkx forest of brokers; clients hang off access brokers and hold
filters (subscriptions). The functions say what the routing state and the
deliveries *should* be, with no messages at all: the oracle the simulator
(`subsum.impl.network`) is checked against.
"""

from __future__ import annotations

from typing import Iterable, Mapping, cast

import attrs
import networkx as nx

from subsum.core.types import Event, Subscription, subscription_sort_key
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
    of the forest without (u, v) that contains v.

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> side_of(g, 2, 3), side_of(g, 3, 2)
    ({3, 4}, {1, 2})
    """
    assert graph.has_edge(u, v), (u, v)
    cut = graph.copy()
    cut.remove_edge(u, v)
    return set(nx.node_connected_component(cut, v))


def filters_at(brokers: set[int], access: ClientAccess, filters: ClientFilters) -> set[Subscription]:
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


def ideal_table(graph: nx.Graph, u: int, access: ClientAccess, filters: ClientFilters) -> set[tuple[int, Subscription]]:
    """DEF-NET-3 (seed 002 §2.4): the quiescent subTab of broker u:
    (v, p) for each broker neighbour v and each filter p subscribed on v's
    side of (u, v), and (c, p) for each client c of u and each of its filters.

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> q = parse_filter("x > 3")
    >>> access, filters = {100: 1, 200: 4}, {100: frozenset({p}), 200: frozenset({q})}
    >>> ideal_table(g, 2, access, filters) == {(1, p), (3, q)}
    True
    """
    table = {(v, p) for v in graph.neighbors(u) for p in filters_at(side_of(graph, u, v), access, filters)}
    table |= {(c, p) for c, broker in access.items() if broker == u for p in filters.get(c, ())}
    return table


def ideal_tables(graph: nx.Graph, access: ClientAccess, filters: ClientFilters) -> dict[int, set[tuple[int, Subscription]]]:
    """DEF-NET-3: the ideal table of every broker.

    >>> g = overlay([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)])
    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> q = parse_filter("x > 3")
    >>> access, filters = {100: 1, 200: 4}, {100: frozenset({p}), 200: frozenset({q})}
    >>> ideal_tables(g, access, filters)[4] == {(3, p), (200, q)}
    True
    """
    return {u: ideal_table(graph, u, access, filters) for u in graph.nodes}


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


# --- DEF-NET-6, DEF-NET-7: the Strawman handlers, plainly ----------------------------------

@attrs.frozen
class BrokerState:
    """DEF-NET-6: what one broker knows: its neighbours, which of them are
    clients, and its table subTab as a set of (neighbour, filter) pairs."""

    id: int
    neighbors: frozenset[int]
    clients: frozenset[int]
    table: frozenset[tuple[int, Subscription]]


#: DEF-NET-6: a message a handler sends: (destination, "SUB" | "UNSUB", filter).
Message = tuple[int, str, Subscription]


def subscribers_of(state: BrokerState, p: Subscription) -> set[int]:
    """DEF-NET-6: the neighbours subscribed to p.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> subscribers_of(attrs.evolve(s, table=frozenset({(1, p), (100, p)})), p)
    {1, 100}
    """
    return {n for n, q in state.table if q == p}


def broker_neighbors(state: BrokerState) -> set[int]:
    """DEF-NET-6: the neighbours that are brokers (only they get SUB and UNSUB).

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> broker_neighbors(s)
    {1, 3}
    """
    return set(state.neighbors - state.clients)


def on_sub(state: BrokerState, n: int, p: Subscription) -> tuple[BrokerState, list[Message]]:
    """DEF-NET-6: SUB(p) from n: the first subscriber floods it, the second
    tells the first (if a broker), later ones send nothing.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> s, sent = on_sub(s, 100, p)  # the first subscriber: flooded
    >>> sorted((m, kind) for m, kind, _ in sent)
    [(1, 'SUB'), (3, 'SUB')]
    >>> s, sent = on_sub(s, 1, p)  # the second: the first hears of it (a client, so no one)
    >>> sent, s.table == {(100, p), (1, p)}
    ([], True)
    """
    if n not in state.neighbors or (n, p) in state.table:
        return state, []
    before = subscribers_of(state, p)
    after = attrs.evolve(state, table=state.table | {(n, p)})
    if not before:
        return after, [(m, "SUB", p) for m in broker_neighbors(state) - {n}]
    if len(before) == 1 and before <= broker_neighbors(state):
        return after, [(before.pop(), "SUB", p)]
    return after, []


def unsubscribe_from(state: BrokerState, n: int, p: Subscription) -> tuple[BrokerState, list[Message]]:
    """DEF-NET-6 (processUnsubFrom): drop (n, p); with no subscriber left,
    UNSUB(p) goes to every broker neighbour but n; with one left, to it (if a broker).

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> s = attrs.evolve(s, table=frozenset({(100, p)}))
    >>> s, sent = unsubscribe_from(s, 100, p)  # the last subscriber leaves
    >>> sorted((m, kind) for m, kind, _ in sent), s.table
    ([(1, 'UNSUB'), (3, 'UNSUB')], frozenset())
    """
    assert (n, p) in state.table
    after = attrs.evolve(state, table=state.table - {(n, p)})
    remaining = subscribers_of(after, p)
    if not remaining:
        return after, [(m, "UNSUB", p) for m in broker_neighbors(state) - {n}]
    if len(remaining) == 1 and remaining <= broker_neighbors(state):
        return after, [(remaining.pop(), "UNSUB", p)]
    return after, []


def on_unsub(state: BrokerState, n: int, p: Subscription) -> tuple[BrokerState, list[Message]]:
    """DEF-NET-6: UNSUB(p) from n; an unknown (n, p) is ignored.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> on_unsub(s, 1, p) == (s, [])  # unknown: ignored
    True
    """
    if (n, p) not in state.table:
        return state, []
    return unsubscribe_from(state, n, p)


def event_targets(state: BrokerState, n: int, event: Event) -> set[int]:
    """DEF-NET-6: the neighbours but n with a filter the event matches.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> s = attrs.evolve(s, table=frozenset({(1, p), (100, p)}))
    >>> from subsum.core.types import Attribute
    >>> event_targets(s, 1, Event((Attribute("x", "int", 5),))), event_targets(s, 1, Event((Attribute("x", "int", 0),)))
    ({100}, set())
    """
    return {m for m, p in state.table if m != n and matches(p, event)}


def on_remove_link(state: BrokerState, n: int) -> tuple[BrokerState, list[Message]]:
    """DEF-NET-7 (removeLinkTo): every (n, p) is an unsubscription from n; then n is no neighbour.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> s = attrs.evolve(s, table=frozenset({(1, p), (3, p)}))
    >>> s, sent = on_remove_link(s, 1)  # 3 is left as the only subscriber: it hears UNSUB
    >>> sorted(s.neighbors), [(m, kind) for m, kind, _ in sent]
    ([3, 100], [(3, 'UNSUB')])
    """
    messages: list[Message] = []
    for p in sorted({p for m, p in state.table if m == n}, key=subscription_sort_key):
        state, sent = unsubscribe_from(state, n, p)
        messages += sent
    return attrs.evolve(state, neighbors=state.neighbors - {n}, clients=state.clients - {n}), messages


def on_add_link(state: BrokerState, n: int, is_client: bool) -> tuple[BrokerState, list[Message]]:
    """DEF-NET-7 (addLinkTo): n becomes a neighbour; a broker gets SUB(p) for every distinct filter.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> s = attrs.evolve(s, table=frozenset({(100, p)}))
    >>> s, sent = on_add_link(s, 4, is_client=False)
    >>> 4 in s.neighbors, [(m, kind) for m, kind, _ in sent]
    (True, [(4, 'SUB')])
    """
    after = attrs.evolve(state, neighbors=state.neighbors | {n}, clients=state.clients | ({n} if is_client else set()))
    if is_client:
        return after, []
    return after, [(n, "SUB", p) for p in {p for m, p in state.table if m != n}]


# --- DEF-RCF-2..5: the optimized protocols' steps, plainly (spec/06-reconfiguration.md) --------

def entries_of(state: BrokerState, n: int) -> frozenset[tuple[int, Subscription]]:
    """DEF-RCF-2: the pairs (n, p) of the table.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> entries_of(attrs.evolve(s, table=frozenset({(1, p), (100, p)})), 1) == {(1, p)}
    True
    """
    return frozenset((m, p) for m, p in state.table if m == n)


def is_leaf_without(state: BrokerState, n: int) -> bool:
    """DEF-RCF-2: a broker with no broker neighbour other than n.

    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> is_leaf_without(s, 1), is_leaf_without(attrs.evolve(s, neighbors=frozenset({1, 100})), 1)
    (False, True)
    """
    return not (broker_neighbors(state) - {n})


def deferred_removal(state: BrokerState, n: int) -> tuple[BrokerState, frozenset[tuple[int, Subscription]]]:
    """DEF-RCF-2 (manageRemovedLink): n's pairs leave the table silently and
    n leaves the neighbours. Returns the new state and the pairs to defer
    (none for a leaf, which only drops them).

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> s = attrs.evolve(s, table=frozenset({(1, p), (100, p)}))
    >>> after, deferred = deferred_removal(s, 1)
    >>> deferred == {(1, p)}, after.table == {(100, p)}, sorted(after.neighbors)
    (True, True, [3, 100])
    """
    pairs = entries_of(state, n)
    after = attrs.evolve(state, table=state.table - pairs, neighbors=state.neighbors - {n}, clients=state.clients - {n})
    return after, (frozenset() if is_leaf_without(state, n) else pairs)


def deferred_unsubscribe(state: BrokerState, n: int, p: Subscription) -> tuple[BrokerState, list[Message]]:
    """DEF-RCF-2 (unsubTimerExpired, per waiting pair): skipped if (n, p) is
    back in the table; otherwise (n, p) is re-inserted and unsubscribed by
    the normal rule.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> s = attrs.evolve(s, table=frozenset({(1, p)}))
    >>> after, sent = deferred_unsubscribe(s, 3, p)  # 3's pair was deferred; 1 is left, and hears UNSUB
    >>> after.table == {(1, p)}, [(m, kind) for m, kind, _ in sent]
    (True, [(1, 'UNSUB')])
    >>> deferred_unsubscribe(s, 1, p) == (s, [])  # (1, p) is back in the table: skipped
    True
    """
    if (n, p) in state.table:
        return state, []
    return unsubscribe_from(attrs.evolve(state, table=state.table | {(n, p)}), n, p)


def flush_forward(state: BrokerState, m: int) -> set[int]:
    """DEF-RCF-3: where a FLUSH with a rid this broker holds no task for goes:
    every broker neighbour but the sender.

    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> flush_forward(s, 1)
    {3}
    """
    return broker_neighbors(state) - {m}


def only_subscribed_by(state: BrokerState, o: int) -> frozenset[Subscription]:
    """DEF-RCF-4: P, the filters whose only subscriber is o.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> q = parse_filter("x > 3")
    >>> only_subscribed_by(attrs.evolve(s, table=frozenset({(1, p), (3, q), (100, q)})), 1) == {p}
    True
    """
    return frozenset(p for _, p in state.table if subscribers_of(state, p) == {o})


def announced_to(state: BrokerState, o: int) -> frozenset[Subscription]:
    """DEF-RCF-5: the filters this broker had announced to o (a subscriber other than o).

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> q = parse_filter("x > 3")
    >>> announced_to(attrs.evolve(s, table=frozenset({(1, p), (3, q)})), 1) == {q}
    True
    """
    return frozenset(p for m, p in state.table if m != o)


def activation(state: BrokerState, n: int, held: frozenset[Subscription]) -> tuple[list[Message], frozenset[Subscription]]:
    """DEF-RCF-4 (activateReceived at n1, new neighbour n): SUB(p) to n for
    every distinct p not from n and not in P; the ones in P are held back.
    Returns the SUBs and the held-back filters (FLUSH follows the SUBs).

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> q = parse_filter("x > 3")
    >>> s = attrs.evolve(s, table=frozenset({(1, p), (3, q)}))
    >>> sent, held = activation(s, 4, held=frozenset({q}))
    >>> [(m, kind, f == p) for m, kind, f in sent], held == {q}
    ([(4, 'SUB', True)], True)
    """
    distinct = {p for m, p in state.table if m != n}
    return [(n, "SUB", p) for p in distinct - held], frozenset(distinct & held)


def released(state: BrokerState, n: int, held: frozenset[Subscription]) -> list[Message]:
    """DEF-RCF-4 (subTimerExpired): a held-back p goes to n only if a
    neighbour other than n still subscribes it.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> q = parse_filter("x > 3")
    >>> s = attrs.evolve(s, neighbors=s.neighbors | {4}, table=frozenset({(1, p), (4, q)}))
    >>> [(m, kind, f == p) for m, kind, f in released(s, 4, frozenset({p, q}))]  # no one but 4 wants q
    [(4, 'SUB', True)]
    """
    if n not in state.neighbors:
        return []
    return [(n, "SUB", p) for p in held if subscribers_of(state, p) - {n}]
