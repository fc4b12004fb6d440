"""The client-server system over pub/sub, the reference version (seed 003
§4; spec/10-client-server.md DEF-CS-1 … 3).

A request for one message, served in one step on a broker tree: which
brokers are asked under each request policy, who answers, what each
response costs, and which caches change. Caches are spec/09's reference
caches (`subsum.model.caching`). Every function returns new values.

>>> import networkx as nx
>>> system = System(nx.path_graph([3, 2, 1, 5]), {"A": 5}, {b: empty_cache("lfu", 10) for b in (1, 2, 3, 5)})
>>> system, outcome = serve(system, "sc", 3, "A", 0.0)
>>> outcome.delay, outcome.hit, sorted(holders(system, "A"))
(3, False, [1, 2, 3])
"""

from __future__ import annotations

from typing import Mapping

import attrs
import networkx as nx

from subsum.core.names import REQUEST_POLICIES
from subsum.model.caching import Cache, empty_cache, hit, insert, messages

POLICIES = REQUEST_POLICIES  # DEF-CS-2

__all__ = ["POLICIES", "Outcome", "Response", "System", "at_path", "empty_cache", "holders", "messages", "serve"]


@attrs.frozen
class System:
    """The broker tree, each message's server broker, each broker's cache,
    and the brokers with a client that requested each message (SS's table;
    DEF-CS-1, DEF-CS-2)."""

    graph: nx.Graph = attrs.field(eq=False)
    server_of: Mapping[str, int]
    caches: Mapping[int, Cache]
    interested: Mapping[str, frozenset[int]] = attrs.Factory(dict)


@attrs.frozen
class Response:
    """One response: who answered, the brokers it visits from the responder
    to the client's broker, and its place in the answering order (DEF-CS-2;
    DEF-CS-3 counts it)."""

    responder: int
    route: tuple[int, ...]
    from_path: bool
    position: int  # the path index of the broker that asked the responder (its own index for a path response)

    @property
    def hops(self) -> int:
        return len(self.route) - 1


@attrs.frozen
class Outcome:
    """DEF-CS-3: the responses, the answering one, and the request's metrics."""

    responses: tuple[Response, ...]
    asked: tuple[int, ...]  # the brokers the request reached beyond the client's own

    @property
    def answer(self) -> Response:
        return self.responses[0]

    @property
    def delay(self) -> int:
        return self.answer.hops

    @property
    def overhead(self) -> int:
        return sum(r.hops for r in self.responses[1:])

    @property
    def hit(self) -> bool:
        return not (self.answer.from_path and self.answer.responder == self.answer_server)

    answer_server: int = -1


def at_path(graph: nx.Graph, broker: int, server_broker: int) -> list[int]:
    """DEF-CS-1: the AT path from `broker` to the server's broker, both included.

    >>> at_path(nx.path_graph([3, 2, 1, 5]), 3, 5)
    [3, 2, 1, 5]
    """
    return list(nx.shortest_path(graph, broker, server_broker))


def holds(system: System, broker: int, m: str) -> bool:
    """Broker's cache holds m (DEF-CACHE-1; a policy without caches: no broker does).

    >>> holds(System(nx.path_graph([1, 2]), {"A": 2}, {}), 1, "A")
    False
    """
    cache = system.caches.get(broker)
    return cache is not None and m in messages(cache)


def holders(system: System, m: str) -> set[int]:
    """The brokers whose cache holds m (DEF-CACHE-1).

    >>> holders(System(nx.path_graph([1, 2]), {"A": 2}, {}), "A")
    set()
    """
    return {b for b in system.caches if holds(system, b, m)}


def answering_order(r: Response) -> tuple[int, bool, int, int]:
    """DEF-CS-3: fewest hops first; among equals the path's response, then by
    the asking path broker's position, then by the responder's id.

    >>> sorted([Response(4, (4, 3), False, 0), Response(2, (2, 3), True, 1)], key=answering_order)[0].responder
    2
    """
    return (r.hops, not r.from_path, r.position, r.responder)


def serve(system: System, policy: str, broker: int, m: str, now: float) -> tuple[System, Outcome]:
    """DEF-CS-2: a client at `broker` requests m at time `now` under `policy`.
    Returns the system after the request (caches, SS's table) and its outcome.

    >>> g = nx.path_graph([3, 2, 1, 5]); g.add_edge(4, 3)
    >>> caches = {b: empty_cache("lfu", 10) for b in (1, 2, 3, 4, 5)}
    >>> caches[4], _ = insert(caches[4], "A", 0.0)
    >>> system, outcome = serve(System(g, {"A": 5}, caches), "soha", 3, "A", 1.0)
    >>> [(r.responder, r.hops) for r in outcome.responses], outcome.delay, outcome.overhead, outcome.hit
    ([(4, 1), (5, 3)], 1, 3, True)
    """
    assert policy in POLICIES, policy
    server_broker = system.server_of[m]
    path = at_path(system.graph, broker, server_broker)
    if policy == "server":
        answer = Response(server_broker, tuple(reversed(path)), True, len(path) - 1)
        return system, Outcome((answer,), tuple(path[1:]), answer_server=server_broker)
    i = next((j for j, b in enumerate(path[:-1]) if holds(system, b, m)), len(path) - 1)
    responses = [Response(path[i], tuple(reversed(path[:i + 1])), True, i)]
    asked = list(path[1:i + 1])
    if policy == "soha":
        on_path = set(path)
        for j in range(i):  # the path brokers that missed ask their active neighbors
            for q in sorted(system.graph[path[j]]):
                if q not in on_path:
                    asked.append(q)
                    if holds(system, q, m):
                        responses.append(Response(q, (q, *reversed(path[:j + 1])), False, j))
    if policy == "ss" and i > 0:  # the client's broker missed (and does not serve m): it asks the interested brokers
        for q in sorted(system.interested.get(m, frozenset()) - set(path)):  # interested path brokers get the path's request, if reached
            asked.append(q)
            if holds(system, q, m):
                responses.append(Response(q, tuple(nx.shortest_path(system.graph, q, broker)), False, len(path)))
    responses.sort(key=answering_order)
    caches = dict(system.caches)
    for r in responses:
        if r.responder != server_broker:
            caches[r.responder] = hit(caches[r.responder], [m], now)
    for r in responses:  # en-route caching, in the answering order
        for relay in r.route[1:]:
            if relay != server_broker:
                caches[relay], _ = insert(caches[relay], m, now)
    interested = dict(system.interested)
    interested[m] = interested.get(m, frozenset()) | {broker}
    return attrs.evolve(system, caches=caches, interested=interested), Outcome(tuple(responses), tuple(asked), answer_server=server_broker)
