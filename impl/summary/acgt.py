"""DEF-SUM-12: attribute-constraint generalization trees (ACGT, seed 000
§4.2.4), kept by the owning broker, one tree per summary row.

A node is a normalized constraint with the IDs of the owner's subscriptions
whose constraint on the key it is. A node's children are the next most
general constraints it covers. The root is the row's constraint; a
*virtual* root (no IDs) is a generalization no subscriber wrote: the hull of
a numeric row joined from several intervals, or `contains x` made by the
virtual policy. The summary row of a tree is (root constraint, every ID in
the tree).

Insertion descends to the deepest node covering the new constraint and
adopts the children it covers (scenario 1), or makes a new root over the
rows it covers (scenario 2). Deleting an ID from a node whose ID set
becomes empty lifts its children to its parent; if the node is the root,
the children become roots of their own rows: the split of scenario 2.
"""

from __future__ import annotations

from subsum.impl.summary.normalize import interval_covers, pattern_covers, row_order


class Node:
    __slots__ = ("c", "ids", "children")

    def __init__(self, c, ids=None, children=None) -> None:
        self.c = c
        self.ids: set[int] = set() if ids is None else ids
        self.children: list[Node] = [] if children is None else children

    @property
    def virtual(self) -> bool:
        return not self.ids

    def all_ids(self) -> set[int]:
        out = set(self.ids)
        for child in self.children:
            out |= child.all_ids()
        return out

    def size(self) -> int:
        return 1 + sum(child.size() for child in self.children)

    def to_json(self, fmt) -> dict:
        return {"constraint": fmt(self.c), "ids": sorted(self.ids), "virtual": self.virtual,
                "children": [child.to_json(fmt) for child in self.children]}


def _descend(node: Node, new: Node, covers) -> None:
    """Hang `new` (a node, possibly with a subtree) below the deepest node of
    `node`'s tree that covers it; `new` adopts the children it covers.
    A node with the same constraint absorbs `new` instead."""
    while True:
        if node.c == new.c:
            node.ids |= new.ids
            for child in new.children:
                _descend(node, child, covers)
            return
        for child in node.children:
            if covers(child.c, new.c):
                node = child
                break
        else:
            adopted = [child for child in node.children if covers(new.c, child.c) and child.c != new.c]
            node.children = [child for child in node.children if child not in adopted]
            new.children.extend(adopted)
            node.children.append(new)
            return


def _path_to(node: Node, c, sid: int) -> list[Node] | None:
    if node.c == c and sid in node.ids:
        return [node]
    for child in node.children:
        path = _path_to(child, c, sid)
        if path is not None:
            return [node] + path
    return None


def _emptied_path(roots: list[Node], c, sid: int) -> list[Node] | None | bool:
    """Remove `sid` from the node of constraint `c` under `roots`. Returns
    False if no such node holds it, None if the node keeps other IDs, and
    otherwise the path from its root to the now empty node."""
    for root in roots:
        path = _path_to(root, c, sid)
        if path is not None:
            break
    else:
        return False
    path[-1].ids.discard(sid)
    return None if path[-1].ids else path


def _lift(path: list[Node]) -> None:
    """The emptied last node of `path` leaves; its children join its parent."""
    node, parent = path[-1], path[-2]
    parent.children.remove(node)
    parent.children.extend(node.children)


class ConstraintForest:
    """The ACGTs of one string or bool key: roots form an antichain, kept in
    canonical order (the same rows as `structures.SACS`)."""

    def __init__(self, virtual: str = "none") -> None:
        self.roots: list[Node] = []
        self.virtual = virtual

    def insert(self, c, sid: int) -> None:
        self._plant(Node(c, {sid}))

    @staticmethod
    def _justified(node: Node) -> bool:
        """A virtual `contains x` stands only while `prefix x` and `suffix x`
        are both beneath it (DEF-SUM-6)."""
        kids = {child.c for child in node.children}
        return ("prefix", node.c[1]) in kids and ("suffix", node.c[1]) in kids

    def _plant(self, new: Node) -> None:
        if new.virtual and not self._justified(new):
            for child in new.children:
                self._plant(child)
            return
        for root in self.roots:
            if pattern_covers(root.c, new.c):
                _descend(root, new, pattern_covers)
                return
        adopted = [root for root in self.roots if pattern_covers(new.c, root.c)]
        self.roots = [root for root in self.roots if root not in adopted]
        new.children.extend(adopted)
        self.roots.append(new)
        self.roots.sort(key=lambda n: row_order(n.c))
        c = new.c
        if self.virtual == "contains" and c[0] in ("prefix", "suffix"):
            twin = ("suffix" if c[0] == "prefix" else "prefix", c[1])
            pair = [root for root in self.roots if root.c == twin or root.c == c]
            if len(pair) == 2:
                self.roots = [root for root in self.roots if root not in pair]
                self._plant(Node(("contains", c[1]), set(), pair))

    def remove(self, c, sid: int) -> bool:
        """Delete `sid` from the node of constraint `c`; return False if absent."""
        path = _emptied_path(self.roots, c, sid)
        if not path:
            return path is None
        if len(path) > 1:
            _lift(path)
            root = path[0]
            if root.virtual and not self._justified(root):
                self._uproot(root)
        else:
            self._uproot(path[0])
        return True

    def _uproot(self, root: Node) -> None:
        """The root is gone (or a virtual root lost its reason): its children
        become rows of their own, each joining a row that covers it."""
        self.roots.remove(root)
        for child in root.children:
            self._plant(child)

    def rows(self):
        return [(root.c, root.all_ids()) for root in self.roots]


def _touch(a, b) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


class IntervalForest:
    """The ACGTs of one numeric key: one tree per connected component of the
    members' intervals; the root is the member interval equal to the
    component's hull, or else a virtual hull node."""

    def __init__(self) -> None:
        self.roots: list[Node] = []  # sorted by hull

    def insert(self, interval, sid: int) -> None:
        self.insert_tree(Node(interval, {sid}))

    @staticmethod
    def _collapse(root: Node) -> Node:
        """A virtual root whose only child has its hull is that child."""
        if root.virtual and len(root.children) == 1 and root.children[0].c == root.c:
            return root.children[0]
        return root

    def remove(self, interval, sid: int) -> bool:
        """Delete `sid` from the node of `interval`; return False if absent."""
        path = _emptied_path(self.roots, interval, sid)
        if not path:
            return path is None
        root = path[0]
        if len(path) > 1:
            _lift(path)
            if not root.virtual:
                return True
        # the root itself is gone, or a virtual root may have lost a bridge
        self.roots.remove(root)
        self._regroup(root.children)
        return True

    def _regroup(self, tops: list[Node]) -> None:
        """Split the top nodes into connected components; each is a row."""
        for top in sorted(tops, key=lambda n: n.c):
            self.insert_tree(top)

    def insert_tree(self, top: Node) -> None:
        touching = [root for root in self.roots if _touch(root.c, top.c)]
        if not touching:
            self.roots.append(top)
        else:
            self.roots = [root for root in self.roots if root not in touching]
            tops = [t for root in touching for t in ([*root.children] if root.virtual else [root])] + [top]
            hull = (min(t.c[0] for t in tops), max(t.c[1] for t in tops))
            root = Node(hull, set(), [])
            for t in tops:
                _descend(root, t, interval_covers)
            self.roots.append(self._collapse(root))
        self.roots.sort(key=lambda n: n.c)

    def rows(self):
        return [(root.c, root.all_ids()) for root in self.roots]
