"""The overlay (DEF-NET-1, spec/05-network.md): which brokers exist and
which undirected links join them. The links always form a forest; every
operation that would close a cycle or name a missing broker raises
`NetworkError`. LSTree repair (seed 002 §3.5.5) picks the new parents of a
crashed broker's children.

The overlay knows nothing of messages or protocols: `sim.Network` calls it
first and then tells the brokers and the transport what changed.
"""

from __future__ import annotations

from typing import cast

import random

from subsum.core.errors import SubsumError


class NetworkError(SubsumError, ValueError):
    """An overlay or simulator operation that would break the forest, names
    no node, or that a broker cannot handle."""


class Overlay:
    """The broker forest: adjacency sets and one epoch per live link."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng  # the overlay's own choices (LSTree's new parents), apart from link delays
        self.adjacent: dict[int, set[int]] = {}  # broker -> broker neighbors
        self.epoch: dict[frozenset, int] = {}  # live undirected link -> the order it was added in
        self._epochs = 0
        self._links: tuple[tuple[int, int], ...] | None = None  # `links()`, until the next link or unlink
        self._shared = False  # `adjacent` and `epoch` may be another overlay's too (`fork`): copied before a change

    def fork(self, share_random: bool = False) -> Overlay:
        """A copy whose later changes leave this one as it is (`sim.Network.fork`); `share_random`: LSTree's choices
        come from this one's generator, not a copy of it. The two share their links until either changes them
        (`_own`): `subsum explore` forks at every move, and few moves change the overlay."""
        forked = Overlay.__new__(Overlay)
        if share_random:
            forked.rng = self.rng
        else:
            forked.rng = random.Random()
            forked.rng.setstate(self.rng.getstate())
        forked.adjacent, forked.epoch = self.adjacent, self.epoch
        forked._epochs, forked._links = self._epochs, self._links
        self._shared = forked._shared = True
        return forked

    def _own(self) -> None:
        """Before a change: a copy of links shared with another overlay (`fork`)."""
        if self._shared:
            self.adjacent = {b: set(neighbors) for b, neighbors in self.adjacent.items()}
            self.epoch = dict(self.epoch)
            self._shared = False

    def add_broker(self, b: int) -> None:
        self._own()
        self.adjacent[b] = set()

    def remove_broker(self, b: int) -> None:
        """Forget b; its links must be gone already."""
        assert not self.adjacent[b], f"broker {b} still has links"
        self._own()
        del self.adjacent[b]

    def has_link(self, a: int, b: int) -> bool:
        return frozenset((a, b)) in self.epoch

    def link(self, a: int, b: int) -> None:
        if a not in self.adjacent or b not in self.adjacent:
            raise NetworkError(f"cannot link {a} and {b}: no such broker")
        if self.connected(a, b):
            raise NetworkError(f"link ({a}, {b}) would close a cycle")
        self._own()
        self._epochs += 1
        self.epoch[frozenset((a, b))] = self._epochs
        self._links = None
        self.adjacent[a].add(b)
        self.adjacent[b].add(a)

    def unlink(self, a: int, b: int) -> None:
        key = frozenset((a, b))
        if key not in self.epoch:
            raise NetworkError(f"there is no link ({a}, {b}) to break")
        self._own()
        del self.epoch[key]
        self._links = None
        self.adjacent[a].discard(b)
        self.adjacent[b].discard(a)

    def links(self) -> list[tuple[int, int]]:
        """The live links as sorted pairs, sorted (remembered until the links change: checks ask after every step)."""
        if self._links is None:
            self._links = tuple(sorted(tuple(sorted(e)) for e in self.epoch))
        return list(self._links)

    def connected(self, a: int, b: int) -> bool:
        """Whether a and b are in one tree. Two searches, from a and from b,
        take turns one link at a time, and the first to run out answers: the
        work is that of the smaller tree, so building any forest link by link
        costs O(n log n), not the O(n^2) of searching a's whole tree per link."""
        if a == b:
            return True
        seen = ({a}, {b})
        stacks = ([iter(self.adjacent[a])], [iter(self.adjacent[b])])
        while True:
            for side in (0, 1):
                stack = stacks[side]
                while stack:
                    m = next(stack[-1], None)
                    if m is None:
                        stack.pop()
                        continue
                    if m in seen[1 - side]:
                        return True
                    if m not in seen[side]:
                        seen[side].add(m)
                        stack.append(iter(self.adjacent[m]))
                    break
                if not stack:
                    return False

    def component(self, b: int) -> set[int]:
        """The brokers of b's tree."""
        return set(self.walk(b))

    def side(self, a: int, b: int) -> set[int]:
        """The brokers on a's side of the link (a, b): reachable from a without crossing it."""
        return set(self.walk(a, without=(a, b)))

    def path(self, a: int, b: int) -> list[int]:
        """The tree path from a to b, both included (NetworkError if they are in different trees)."""
        toward_b = self.walk(b)
        if a not in toward_b:
            raise NetworkError(f"brokers {a} and {b} are in different trees")
        route = [a]
        while route[-1] != b:
            route.append(cast(int, toward_b[route[-1]]))
        return route

    def parent_of(self, b: int) -> int | None:
        """b's parent in its tree rooted at its smallest broker (LSTree's rooted view)."""
        return self.walk(min(self.component(b)))[b]

    def walk(self, start: int, without: tuple[int, int] | None = None) -> dict[int, int | None]:
        """Every broker reachable from `start` (not crossing the link
        `without`), each with the broker it was reached from (None for start)."""
        previous: dict[int, int | None] = {start: None}
        stack = [start]
        while stack:
            u = stack.pop()
            for m in self.adjacent[u]:
                if m not in previous and (u, m) != without:
                    previous[m] = u
                    stack.append(m)
        return previous

    def lstree_repairs(self, b: int) -> list[tuple[int, int]]:
        """LSTree repair for a crash of b (seed 002 §3.5.5): the link to b's
        parent is lost; each orphaned child attaches to a random broker of
        the parent's tree (or, if b was the root, of the first child's
        tree). Returns (child, new parent) pairs; changes nothing."""
        parent = self.parent_of(b)
        neighbors = sorted(self.adjacent[b])
        children = [m for m in neighbors if m != parent]
        anchor = parent if parent is not None else (children.pop(0) if children else None)
        targets = sorted(self.side(anchor, b)) if anchor is not None else []
        return [(child, self.rng.choice(targets)) for child in children]
