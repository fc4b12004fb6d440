"""The Strawman broker handlers, plainly (spec/05-network.md DEF-NET-6, DEF-NET-7).

Constructed for ease of understanding rather than for speed. A broker's
state is a value (`BrokerState`); each handler takes the state and one
input (SUB, UNSUB, an event, a link removed or added) and returns the new
state and the messages to send, with no simulator at all. The simulator's
Strawman broker (`subsum.impl.network`) is checked against these handlers
message by message; the state they must converge to is the ideal table of
`subsum.model.network`.
"""

from __future__ import annotations

import attrs

from subsum.core.types import Event, Subscription, subscription_sort_key
from subsum.model.semantics import matches


@attrs.frozen
class BrokerState:
    """DEF-NET-6: what one broker knows: its neighbors, which of them are
    clients, and its table subTab as a set of (neighbor, filter) pairs."""

    id: int
    neighbors: frozenset[int]
    clients: frozenset[int]
    table: frozenset[tuple[int, Subscription]]


#: DEF-NET-6: a message a handler sends: (destination, "SUB" | "UNSUB", filter).
Message = tuple[int, str, Subscription]


def subscribers_of(state: BrokerState, p: Subscription) -> set[int]:
    """DEF-NET-6: the neighbors subscribed to p.

    >>> from subsum.core.filters import parse_filter
    >>> p = parse_filter("x > 1")
    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> subscribers_of(attrs.evolve(s, table=frozenset({(1, p), (100, p)})), p)
    {1, 100}
    """
    return {n for n, q in state.table if q == p}


def broker_neighbors(state: BrokerState) -> set[int]:
    """DEF-NET-6: the neighbors that are brokers (only they get SUB and UNSUB).

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
    UNSUB(p) goes to every broker neighbor but n; with one left, to it (if a broker).

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
    """DEF-NET-6: the neighbors but n with a filter the event matches.

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
    """DEF-NET-7 (removeLinkTo): every (n, p) is an unsubscription from n; then n is no neighbor.

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
    """DEF-NET-7 (addLinkTo): n becomes a neighbor; a broker gets SUB(p) for every distinct filter.

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
