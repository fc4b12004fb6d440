"""The optimized reconfiguration protocols' steps, plainly (spec/06-reconfiguration.md
DEF-RCF-2..5).

Constructed for ease of understanding rather than for speed. Deferred
unsubscriptions (timed and notified, DEF-RCF-2, DEF-RCF-3) and informed link
activation (DEF-RCF-4, and its asymmetric form on a crash, DEF-RCF-5), each
step a function of a broker's state (`subsum.model.strawman.BrokerState`)
that returns the new state, the messages or the filters it decides on. The
simulator's protocol brokers (`subsum.impl.network`) are checked against them.
"""

from __future__ import annotations

import attrs

from subsum.core.types import Subscription
from subsum.model.strawman import BrokerState, Message, broker_neighbors, subscribers_of, unsubscribe_from


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
    """DEF-RCF-2: a broker with no broker neighbor other than n.

    >>> s = BrokerState(2, neighbors=frozenset({1, 3, 100}), clients=frozenset({100}), table=frozenset())
    >>> is_leaf_without(s, 1), is_leaf_without(attrs.evolve(s, neighbors=frozenset({1, 100})), 1)
    (False, True)
    """
    return not (broker_neighbors(state) - {n})


def deferred_removal(state: BrokerState, n: int) -> tuple[BrokerState, frozenset[tuple[int, Subscription]]]:
    """DEF-RCF-2 (manageRemovedLink): n's pairs leave the table silently and
    n leaves the neighbors. Returns the new state and the pairs to defer
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
    every broker neighbor but the sender.

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
    """DEF-RCF-4 (activateReceived at n1, new neighbor n): SUB(p) to n for
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
    neighbor other than n still subscribes it.

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
