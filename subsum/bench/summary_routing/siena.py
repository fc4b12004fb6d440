"""What summaries are compared with in the summary routing benchmark
(`summary_routing`): Siena's covering-based forwarding as the seed note's
probabilistic model (§6.5: subscriptions down per-broker breadth-first
trees, covered at a broker with a probability; events back along the
reverse paths), and baseline (i), every subscription to every broker."""

from __future__ import annotations

import random
from typing import Mapping

import numpy as np

from subsum.bench.summaries.workload import THESIS_SUB_BYTES
from subsum.bench.summary_routing.overlays import Topology, Tree

SUBSCRIPTION_BYTES = THESIS_SUB_BYTES  # 50


# -- Siena (seed note §6.5) ------------------------------------------------------

def covering_probabilities(t: Topology, p_max: float, uniform: bool = False) -> dict[int, float]:
    """p_B = p_max × deg(B) / max deg: the quoted covering probability is the largest (000-5.2.1-d); `uniform`: the
    other reading, p_B = p_max at every broker."""
    top = t.max_degree
    return {b: p_max if uniform else p_max * d / top for b, d in t.plan.degree.items()}


def siena_forward(tree: Tree, cover: Mapping[int, float], rnd: random.Random, used: set) -> int:
    """One subscription forwarded from tree.root, neighbor to neighbor over
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


def siena_expected_messages(t: Topology, p_max: float, uniform: bool = False) -> float:
    """The expected messages of one subscription from every broker: an edge
    (u, c) of the origin's tree carries it iff no broker on the way to u
    (the origin excluded) covered it. Also Siena's hops per period when a
    period's subscriptions are covered or forwarded as one batch. `uniform`:
    covering p_max at every broker (`covering_probabilities`)."""
    cover = covering_probabilities(t, p_max, uniform)
    total = 0.0
    for tree in t.trees.values():
        reach = {tree.root: 1.0}
        for u, c in tree.edges:
            total += reach[u]
            reach[c] = reach[u] * (1 - cover[c])
    return total


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


def reverse_path_receivers(t: Topology, publisher: int, x: int) -> tuple[list[int], list[int]]:
    """X's subscription on its way down X's tree to the publisher: the links
    it crosses (indices into t.edges) and the broker receiving each, from
    X's side to the publisher's."""
    index = {e: i for i, e in enumerate(t.edges)}
    links, receivers, v = [], [], publisher
    while v != x:
        u = t.trees[x].parent[v]
        links.append(index[(min(u, v), max(u, v))])
        receivers.append(v)
        v = u
    return links[::-1], receivers[::-1]


def covered_reverse_links(t: Topology, publisher: int, p_max: float, events: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The "covering" reading of Siena's event cost (issue 33): X's
    subscription stops at the first broker on its way to the publisher
    that covers it (with that broker's probability, `covering_probabilities`),
    and an event is charged only the links X's own subscription crossed,
    the covering subscription's route being another subscriber's cost.
    Returns, for every broker X, a boolean [events, links] matrix: link e
    carries an event for X (one covering draw per event and X)."""
    cover = covering_probabilities(t, p_max)
    out = []
    for x in range(t.n):
        crossed = np.zeros((events, len(t.edges)), dtype=bool)
        links, receivers = reverse_path_receivers(t, publisher, x)
        if links:
            covered = rng.random((events, len(links))) < np.array([cover[r] for r in receivers])
            covered[:, -1] = True  # the last link, into the publisher's broker, is crossed whether or not it covers
            reach = covered.argmax(axis=1)  # the index of the last link crossed
            for j, e in enumerate(links):
                crossed[:, e] = reach >= j
        out.append(crossed)
    return out


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
