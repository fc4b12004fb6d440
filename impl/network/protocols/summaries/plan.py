"""Summary propagation and event routing decisions (seed 000 §4.3,
spec/08-summary-routing.md DEF-SR-1, DEF-SR-2), over plain adjacency
dicts: what the summaries protocol and the summary-routing benchmark
compute. `subsum.conformance.checks.routing.routes` checks both against the model.

The overlay may be any graph (cycles allowed): `adjacency` maps each
broker to its neighbors.
"""

from __future__ import annotations

from collections import deque
from typing import Iterable, Mapping

import attrs

Adjacency = Mapping[int, Iterable[int]]


@attrs.frozen
class Plan:
    """DEF-SR-1: one propagation round's send forest."""

    degree: Mapping[int, int]
    target: Mapping[int, int | None]  # broker -> the broker it sends to (None: a sink)
    children: Mapping[int, tuple[int, ...]]  # broker -> the brokers that send to it, in sending order
    order: tuple[int, ...]  # the brokers in acting order, by (degree, id)
    merged: Mapping[int, frozenset[int]]  # Merged_Brokers after the round

    @property
    def sinks(self) -> tuple[int, ...]:
        return tuple(sorted(b for b, t in self.target.items() if t is None))

    @property
    def sends(self) -> list[tuple[int, int, int]]:
        """(iteration, sender, receiver) in sending order."""
        return [(self.degree[b], b, self.target[b]) for b in self.order if self.target[b] is not None]  # type: ignore[misc]


def plan(adjacency: Adjacency) -> Plan:
    """DEF-SR-1 (Algorithm 4-2): brokers act in (degree, id) order; each
    sends to the neighbor of smallest (degree, id) among those acting after it."""
    neighbors = {b: tuple(ns) for b, ns in adjacency.items()}
    degree = {b: len(ns) for b, ns in neighbors.items()}
    order = tuple(sorted(neighbors, key=lambda b: (degree[b], b)))
    target: dict[int, int | None] = {}
    children: dict[int, list[int]] = {b: [] for b in order}
    merged: dict[int, frozenset[int]] = {}
    for b in order:
        merged[b] = frozenset({b}).union(*(merged[c] for c in children[b]))
        rank = (degree[b], b)
        later = [(degree[n], n) for n in neighbors[b] if (degree[n], n) > rank]
        target[b] = min(later)[1] if later else None
        if later:
            children[min(later)[1]].append(b)
    return Plan(degree, target, {b: tuple(cs) for b, cs in children.items()}, order, merged)


def distances(adjacency: Adjacency, source: int) -> dict[int, int]:
    """Overlay links from `source` to each broker it can reach (breadth first)."""
    out = {source: 0}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in adjacency[u]:
            if v not in out:
                out[v] = out[u] + 1
                queue.append(v)
    return out


def next_broker(adjacency: Adjacency, degree: Mapping[int, int], at: int, brocli, option: str = "a") -> int | None:
    """DEF-SR-2: option (a) the highest degree not in BROCLI (smallest id
    among equals); option (b) the nearest not in BROCLI with degree at least
    `at`'s (ties: higher degree, then smaller id), else option (a)."""
    left = [b for b in degree if b not in brocli]
    if not left:
        return None
    if option == "b":
        mine = degree[at]
        eligible = [b for b in left if degree[b] >= mine]
        if eligible:
            far = len(degree)
            d = distances(adjacency, at)
            return min(eligible, key=lambda b: (d.get(b, far), -degree[b], b))
    return min(left, key=lambda b: (-degree[b], b))
