"""The summary routing benchmark's overlays (`summary_routing`): the
Cable & Wireless US backbone and random trees of 24 brokers, each with
what the cost models need (the DEF-SR-1 plan, all-pairs distances, Siena's
breadth-first trees); and the seeded generators every part of the
benchmark draws from."""

from __future__ import annotations

import hashlib
import random
from importlib import resources
from typing import Iterable, Mapping

import attrs
import networkx as nx
import numpy as np

from subsum.impl.network import topology as topo
from subsum.impl.network.protocols.summaries.plan import Plan, distances, plan
from subsum.model.routing import PropagationPlan, propagation_plan, single_sink_plan

#: The Cable & Wireless US backbone, a networkx edge list shipped beside this module (examples/seed002/ links to it).
CWIX_FILE = "cwix-us-24.edgelist"
BROKERS = 24
RANDOM_TREES = 3
SEED_PREFIX = "subsum-summary-routing"


def rng_for(seed: int, *parts) -> random.Random:
    """A generator seeded by a string derived from `seed` and `parts`."""
    return random.Random(":".join(map(str, (SEED_PREFIX, seed, *parts))))


def np_rng_for(seed: int, *parts) -> np.random.Generator:
    """A numpy generator seeded by the SHA-256 of the same derived string."""
    digest = hashlib.sha256(":".join(map(str, (SEED_PREFIX, seed, *parts))).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


# -- topologies ------------------------------------------------------------------

@attrs.frozen
class Tree:
    """A breadth-first spanning tree rooted at `root` (neighbors in id order)."""

    root: int
    edges: tuple[tuple[int, int], ...]  # (parent, child), in breadth-first order
    parent: Mapping[int, int]
    children: Mapping[int, tuple[int, ...]]


def siena_tree(graph: nx.Graph, root: int) -> Tree:
    """Seed note §6.5: Siena's per-broker spanning tree (unit weights, so a
    breadth-first tree is a minimum spanning tree; its paths are shortest):
    networkx's breadth-first search from `root`, neighbors in id order."""
    edges = tuple(nx.bfs_edges(graph, root, sort_neighbors=sorted))
    children = {b: tuple(child for parent, child in edges if parent == b) for b in graph}
    return Tree(root, edges, {child: parent for parent, child in edges}, children)


@attrs.frozen
class Topology:
    """An overlay with everything the cost models need: the DEF-SR-1 plan
    (the implementation's, for propagation; the model's, for BROCLI
    routing), the single-sink plan (DEF-SR-8, for routing), all-pairs distances and one breadth-first tree per broker."""

    name: str
    n: int
    edges: tuple[tuple[int, int], ...]
    note: str
    graph: nx.Graph
    plan: Plan
    routing_plan: PropagationPlan
    one_sink_plan: PropagationPlan  # DEF-SR-8, the single-sink reading of Fig. 5-4
    distance: Mapping[int, Mapping[int, int]]
    trees: Mapping[int, Tree]

    @property
    def mean_hops(self) -> float:
        """h̄: the mean shortest-path length over ordered pairs of brokers."""
        total = sum(d for a in self.distance for b, d in self.distance[a].items() if a != b)
        return total / (self.n * (self.n - 1))

    @property
    def max_degree(self) -> int:
        return max(self.plan.degree.values())


def make_topology(name: str, n: int, links: Iterable[tuple[int, int]], note: str) -> Topology:
    edges = tuple(sorted((min(a, b), max(a, b)) for a, b in links))
    neighbors: dict[int, list[int]] = {b: [] for b in range(n)}
    for a, b in edges:
        neighbors[a].append(b)
        neighbors[b].append(a)
    adjacency = {b: tuple(sorted(ns)) for b, ns in neighbors.items()}
    dist = {b: distances(adjacency, b) for b in adjacency}
    if any(len(d) != n for d in dist.values()):
        raise ValueError(f"topology {name} is not connected")
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    return Topology(name, n, edges, note, graph, plan(adjacency), propagation_plan(graph), single_sink_plan(graph), dist,
                    {b: siena_tree(graph, b) for b in graph})


def topologies(seed: int, trees: int) -> list[Topology]:
    """The CWIX backbone (full graph) and `trees` random recursive trees of 24 brokers."""
    with resources.as_file(resources.files(__package__) / CWIX_FILE) as path:
        labels, edges = topo.read_graph(path)  # every link: the plan of DEF-SR-1 works on graphs with cycles
    n = len(labels)
    out = [make_topology("cwix", n, edges, f"Cable & Wireless US backbone (Topology Zoo), {n} brokers, {len(edges)} links, "
                                          "the full graph with its cycles")]
    for i in range(trees):
        tree = topo.random_tree(BROKERS, rng_for(seed, "tree", i))
        out.append(make_topology(f"random-tree-{i}", BROKERS, tree, f"random recursive tree of {BROKERS} brokers"))
    return out
