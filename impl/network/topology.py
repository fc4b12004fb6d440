"""Overlay topologies (spec/05-network.md, DEF-NET-1): generators and the
edge-list reader. A topology is a list of (a, b) broker pairs over brokers
0 .. n-1 that forms a forest; every generator here returns a tree."""

from __future__ import annotations

import random
import re
from pathlib import Path

from subsum.core.errors import InputError
from subsum.core.inputs import read_input_text

TOPOLOGIES = ("random-tree", "path", "star", "balanced")


#: The most brokers a topology file may hold (as `simulate --brokers`); client IDs start above.
MAX_NODES = 100_000
MAX_LABEL = 200
INTEGER_LABEL = re.compile(r"-?[0-9]{1,18}")


class TopologyError(InputError):
    """A topology that is not a forest, or an edge-list file that cannot be
    read: `where:line: message`, `where` the file (or "topology")."""

    def __init__(self, where: str | Path, message: str, line: int | None = None) -> None:
        super().__init__(str(where), line, None, message)


def random_tree(n: int, rng: random.Random) -> list[tuple[int, int]]:
    """A uniformly random recursive tree: broker i attaches to a random earlier broker."""
    return [(rng.randrange(i), i) for i in range(1, n)]


def path(n: int) -> list[tuple[int, int]]:
    return [(i - 1, i) for i in range(1, n)]


def star(n: int) -> list[tuple[int, int]]:
    return [(0, i) for i in range(1, n)]


def balanced(n: int, branching: int = 2) -> list[tuple[int, int]]:
    """Broker i's parent is (i - 1) // branching: a complete `branching`-ary tree."""
    return [((i - 1) // branching, i) for i in range(1, n)]


def generate(kind: str, n: int, seed: int = 0) -> list[tuple[int, int]]:
    if n < 1:
        raise TopologyError("topology", f"a topology needs at least one broker, got {n}")
    if kind == "random-tree":
        return random_tree(n, random.Random(seed))
    if kind == "path":
        return path(n)
    if kind == "star":
        return star(n)
    if kind == "balanced":
        return balanced(n)
    raise TopologyError("topology", f"unknown topology {kind!r}; expected one of {', '.join(TOPOLOGIES)} or an edge-list file")


def check_forest(n: int, edges, where: str = "topology") -> None:
    """Raise TopologyError unless `edges` over brokers 0..n-1 form a forest
    (no self-loop, no repeated link, no cycle)."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    seen = set()
    for a, b in edges:
        if not (0 <= a < n and 0 <= b < n):
            raise TopologyError(where, f"link ({a}, {b}) names a broker outside 0 .. {n - 1}")
        if a == b:
            raise TopologyError(where, f"link ({a}, {b}) is a self-loop")
        if frozenset((a, b)) in seen:
            raise TopologyError(where, f"link ({a}, {b}) is given twice")
        seen.add(frozenset((a, b)))
        ra, rb = find(a), find(b)
        if ra == rb:
            raise TopologyError(where, f"link ({a}, {b}) closes a cycle; the overlay must be a forest")
        parent[ra] = rb


def spanning_forest(n: int, edges) -> list[tuple[int, int]]:
    """A breadth-first spanning forest, deterministic: roots and neighbors
    are visited in increasing order."""
    adjacency: dict[int, set[int]] = {i: set() for i in range(n)}
    for a, b in edges:
        adjacency[a].add(b)
        adjacency[b].add(a)
    seen, tree = set(), []
    for root in range(n):
        if root in seen:
            continue
        seen.add(root)
        frontier = [root]
        while frontier:
            nxt = []
            for u in frontier:
                for v in sorted(adjacency[u]):
                    if v not in seen:
                        seen.add(v)
                        tree.append((u, v))
                        nxt.append(v)
            frontier = nxt
    return tree


def read_graph(path_: str | Path) -> tuple[list[str], list[tuple[int, int]]]:
    """A networkx edge list (`a b` per line, `#` comments, extra columns
    ignored), every link kept. Node names are mapped to 0 .. n-1: integers
    in numeric order if every name is an integer, else in order of
    appearance. Returns (names by number, sorted links); raises
    TopologyError naming the file and line."""
    p = Path(path_)
    text = read_input_text(p)
    raw = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) < 2:
            raise TopologyError(p, f"expected two node names, got {line!r}", number)
        for label in parts[:2]:
            if not label.isprintable() or len(label) > MAX_LABEL:
                raise TopologyError(p, f"node name {ascii(label[:40])} holds a control character or is longer than "
                                    f"{MAX_LABEL} characters", number)
        if parts[0] == parts[1]:
            raise TopologyError(p, f"link {parts[0]} {parts[1]} is a self-loop", number)
        raw.append(tuple(parts[:2]))
    if not raw:
        raise TopologyError(p, "the file holds no links")
    labels = list(dict.fromkeys(x for edge in raw for x in edge))
    if len(labels) > MAX_NODES:
        raise TopologyError(p, f"the graph has {len(labels):,} nodes; a topology holds at most {MAX_NODES:,} brokers")
    if all(INTEGER_LABEL.fullmatch(x) for x in labels):
        labels.sort(key=int)
    names = {x: i for i, x in enumerate(labels)}
    return labels, sorted({(min(names[a], names[b]), max(names[a], names[b])) for a, b in raw})


def components(n: int, edges) -> list[list[int]]:
    """The connected components of brokers 0 .. n-1 under `edges`, each
    sorted, in order of their smallest broker.

    >>> components(4, [(0, 1), (2, 3)])
    [[0, 1], [2, 3]]
    """
    adjacency: dict[int, list[int]] = {i: [] for i in range(n)}
    for a, b in edges:
        adjacency[a].append(b)
        adjacency[b].append(a)
    seen: set[int] = set()
    parts = []
    for root in range(n):
        if root in seen:
            continue
        seen.add(root)
        part = [root]
        for u in part:  # breadth first: `part` grows as it is walked
            for v in adjacency[u]:
                if v not in seen:
                    seen.add(v)
                    part.append(v)
        parts.append(sorted(part))
    return parts


class DisconnectedTopology(TopologyError):
    """An edge-list file whose links form more than one component, for a
    simulation that needs a connected overlay. The message names the
    components by the file's node names."""

    def __init__(self, where: str | Path, labels: list[str], parts: list[list[int]],
                 remedy: str = "the overlay must be connected, or run as a forest") -> None:
        shown = [_component_text([labels[b] for b in part]) for part in parts[:MAX_COMPONENTS_SHOWN]]
        more = f" and {len(parts) - MAX_COMPONENTS_SHOWN:,} more" if len(parts) > MAX_COMPONENTS_SHOWN else ""
        super().__init__(where, f"the links form {len(parts):,} components, {', '.join(shown)}{more}; {remedy}")
        self.where, self.labels, self.parts = where, labels, parts
        self.components = [[labels[b] for b in part] for part in parts]

    def with_remedy(self, remedy: str) -> DisconnectedTopology:
        """The same error, ending with `remedy` (what the caller can do about it)."""
        return DisconnectedTopology(self.where, self.labels, self.parts, remedy)


#: how many components, and how many brokers of each, a DisconnectedTopology message shows
MAX_COMPONENTS_SHOWN = 5
MAX_BROKERS_SHOWN = 6


def _component_text(names: list[str]) -> str:
    shown = " ".join(names[:MAX_BROKERS_SHOWN]) + (" …" if len(names) > MAX_BROKERS_SHOWN else "")
    return f"{{{shown}}} ({len(names):,} broker{'s' if len(names) != 1 else ''})"


def overlay_links(kind: str, brokers: int, seed: int, forest: bool = False) -> tuple[int, list[tuple[int, int]]]:
    """The overlay a simulation runs on: `kind` is a generator's name
    (TOPOLOGIES, with `brokers` brokers and `seed`; always a tree) or an
    edge-list file (`read_edgelist`, cycles cut). A file whose links form
    more than one component is refused (`DisconnectedTopology`) unless
    `forest` asks for one. Returns (number of brokers, links)."""
    if kind in TOPOLOGIES:
        return brokers, generate(kind, brokers, seed)
    labels, edges = read_graph(kind)
    tree = spanning_forest(len(labels), edges)
    if not forest and len(tree) < len(labels) - 1:
        raise DisconnectedTopology(kind, labels, components(len(labels), tree))
    return len(labels), tree


def read_edgelist(path_: str | Path) -> tuple[int, list[tuple[int, int]], int]:
    """`read_graph`, cut to a forest: the overlay must be one, so a graph
    with cycles is reduced to its breadth-first spanning forest (DEF-NET-1).
    Returns (n, tree edges, links dropped)."""
    labels, edges = read_graph(path_)
    tree = spanning_forest(len(labels), edges)
    return len(labels), tree, len(edges) - len(tree)
