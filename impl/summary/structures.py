"""The per-attribute structures of a summary (DEF-SUM-4, DEF-SUM-5).

`AACS` (numeric keys): AACS_SR, disjoint and non-touching closed ranges kept
as two sorted lists (lower and upper bounds) searched by bisection, and
AACS_E, equality values outside every range, in a hash plus a sorted list.
`SACS` (string and bool keys): an antichain of constraints in canonical
order. Every row holds a set of packed subscription IDs.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort

from subsum.impl.matching.ops import HOLDS
from subsum.impl.summary.normalize import pattern_covers, row_order

_EMPTY: frozenset = frozenset()


class AACS:
    """Arithmetic attribute constraint summary of one numeric key."""

    __slots__ = ("los", "his", "range_ids", "eq", "eq_values")

    def __init__(self) -> None:
        self.los: list = []
        self.his: list = []
        self.range_ids: list[set[int]] = []
        self.eq: dict = {}
        self.eq_values: list = []

    def insert(self, lo, hi, ids) -> None:
        """Add the interval [lo, hi] with `ids`: join the rows it overlaps or
        touches into one range and absorb the equalities inside it; a point
        outside every range becomes (or joins) an equality row."""
        i0 = bisect_left(self.his, lo)
        i1 = bisect_right(self.los, hi)
        if i0 >= i1:
            if lo == hi:
                row = self.eq.get(lo)
                if row is None:
                    self.eq[lo] = set(ids)
                    insort(self.eq_values, lo)
                else:
                    row.update(ids)
                return
            merged = set(ids)
        else:
            if lo >= self.los[i0] and hi <= self.his[i0] and i1 == i0 + 1:
                self.range_ids[i0].update(ids)
                return
            merged = set(ids)
            for row in self.range_ids[i0:i1]:
                merged |= row
            lo = min(lo, self.los[i0])
            hi = max(hi, self.his[i1 - 1])
            del self.los[i0:i1], self.his[i0:i1], self.range_ids[i0:i1]
        j0 = bisect_left(self.eq_values, lo)
        j1 = bisect_right(self.eq_values, hi)
        for value in self.eq_values[j0:j1]:
            merged |= self.eq.pop(value)
        del self.eq_values[j0:j1]
        self.los.insert(i0, lo)
        self.his.insert(i0, hi)
        self.range_ids.insert(i0, merged)

    def lookup(self, value):
        """The ID set of the one row `value` satisfies, or an empty set."""
        i = bisect_right(self.los, value) - 1
        if i >= 0 and value <= self.his[i]:
            return self.range_ids[i]
        return self.eq.get(value, _EMPTY)

    def row_of(self, lo, hi):
        """The row holding the interval [lo, hi]: ("range", index) or ("equality", value)."""
        i = bisect_right(self.los, lo) - 1
        if i >= 0 and hi <= self.his[i]:
            return ("range", i)
        if lo == hi and lo in self.eq:
            return ("equality", lo)
        return None

    def ids_of(self, row) -> set[int]:
        kind, where = row
        return self.range_ids[where] if kind == "range" else self.eq[where]

    def drop(self, row) -> None:
        kind, where = row
        if kind == "range":
            del self.los[where], self.his[where], self.range_ids[where]
        else:
            del self.eq[where]
            self.eq_values.remove(where)

    def rows(self):
        """Every row as (kind, (lo, hi), ids), ranges then equalities, each sorted."""
        out = [("range", (lo, hi), ids) for lo, hi, ids in zip(self.los, self.his, self.range_ids)]
        out += [("equality", (v, v), self.eq[v]) for v in self.eq_values]
        return out

    def __len__(self) -> int:
        return len(self.los) + len(self.eq)


class SACS:
    """String (or bool) attribute constraint summary of one key: rows of
    (op, value) constraints, no row covering another, in canonical order.

    An index (built on first use after a change) finds the rows a value
    satisfies: a hash for `=` rows, one hash per prefix (suffix) length
    present for prefix (suffix) rows, and a scan of the few contains,
    wildcard and any rows. The rows covering `= v` are exactly the rows v
    satisfies, so inserting an `=` constraint (most rows in practice) uses
    the index too and never scans the table."""

    __slots__ = ("sorted_rows", "virtual", "_index")

    def __init__(self, virtual: str = "none") -> None:
        self.sorted_rows: list[list] = []  # [order key, (op, value), ids], sorted by order key
        self.virtual = virtual
        self._index = None

    def insert(self, c, ids) -> None:
        """Cover-or-merge (seed 000 §4.2.1): join the first row (in canonical
        order) that covers `c`; otherwise add `c` as a row absorbing every
        row it covers, then apply the virtual-generalization policy."""
        if c[0] == "=":
            covering = self._satisfied(c[1])
            if covering:
                min(covering, key=_order)[2].update(ids)
                return
            row = [row_order(c), c, set(ids)]  # an `=` row covers no other row
            insort(self.sorted_rows, row, key=_order)
            if self._index is not None:
                self._index[0][c[1]] = row
            return
        for row in self.sorted_rows:
            if pattern_covers(row[1], c):
                row[2].update(ids)
                return
        self._add(c, set(ids))
        if self.virtual == "contains" and c[0] in ("prefix", "suffix"):
            twin = ("suffix" if c[0] == "prefix" else "prefix", c[1])
            pair = [row for row in self.sorted_rows if row[1] == twin or row[1] == c]
            if len(pair) == 2:
                joined = pair[0][2] | pair[1][2]
                self.sorted_rows = [row for row in self.sorted_rows if row not in pair]
                self._add(("contains", c[1]), joined)

    def _add(self, c, ids: set[int]) -> None:
        keep = []
        for row in self.sorted_rows:
            if pattern_covers(c, row[1]):
                ids |= row[2]
            else:
                keep.append(row)
        insort(keep, [row_order(c), c, ids], key=_order)
        self.sorted_rows = keep
        self._index = None

    def delete_row(self, i: int) -> None:
        del self.sorted_rows[i]
        self._index = None

    def _build_index(self):
        equal: dict = {}
        prefix: dict[int, dict] = {}
        suffix: dict[int, dict] = {}
        rest = []
        for row in self.sorted_rows:
            op, w = row[1]
            if op == "=":
                equal[w] = row
            elif op == "prefix":
                prefix.setdefault(len(w), {})[w] = row
            elif op == "suffix":
                suffix.setdefault(len(w), {})[w] = row
            else:
                rest.append((HOLDS[op], w, row))
        self._index = (equal, tuple(prefix.items()), tuple(suffix.items()), tuple(rest))
        return self._index

    def _satisfied(self, value) -> list[list]:
        """The rows `value` satisfies."""
        equal, prefix, suffix, rest = self._index or self._build_index()
        hits = []
        row = equal.get(value)
        if row is not None:
            hits.append(row)
        if prefix or suffix:
            size = len(value)
            for n, table in prefix:
                if n <= size:
                    row = table.get(value[:n])
                    if row is not None:
                        hits.append(row)
            for n, table in suffix:
                if n <= size:
                    row = table.get(value[size - n:])
                    if row is not None:
                        hits.append(row)
        for holds, w, row in rest:
            if holds(value, w):
                hits.append(row)
        return hits

    def lookup(self, value):
        """The union of the ID sets of the rows `value` satisfies."""
        hits = self._satisfied(value)
        if not hits:
            return _EMPTY
        return hits[0][2] if len(hits) == 1 else set().union(*(row[2] for row in hits))

    def row_of(self, c):
        for i, row in enumerate(self.sorted_rows):
            if row[1] == c:
                return i
        return None

    def rows(self):
        return [("constraint", c, ids) for _, c, ids in self.sorted_rows]

    def __len__(self) -> int:
        return len(self.sorted_rows)


def _order(row: list):
    return row[0]
