"""DEF-MATCH-5's index of the subscriptions (steps 1 and 2), built in bulk
with numpy from their columns (`subscription_columns`): the vectorized and
compiled engines' one way of building it, whether the subscriptions came as
objects or as columns.

- *Groups*: each (type, name) a constraint names gets a number, in (type,
  name) order.
- *Constraints*: equal (type, name, operator, value) rows are one
  constraint (seed 001 Theorem 2), numbered in (group, operator, value)
  order; -0.0 and +0.0 are one float (DEF-DATA-2).
- *Rank keys*: per type, the values of the ranked operators (`=`, `!=` and
  the orderings) form the sorted universe U, and a constraint's key is
  2r + 1 for its value U[r]. String patterns get pattern IDs instead.
- *Pivots*: each subscription's constraint of least pivot rank, ties to the
  lowest constraint number; its other constraints follow in the same order.

    >>> from subsum.core.types import Constraint, Subscription
    >>> from subsum.impl.matching.columnar.subscription_columns import SubscriptionColumns
    >>> cols = SubscriptionColumns.from_subscriptions([("s", Subscription([Constraint("x", "int", "<", 5), Constraint("y", "int", "=", 1)]))])
    >>> index = PivotIndex.from_columns(cols)
    >>> index.n_constraints, index.universe["int"].tolist(), index.rest_con.tolist()
    (2, [1, 5], [0])
"""

from __future__ import annotations

import numpy as np

from subsum.core.types import TYPES, Scalar
from subsum.impl.matching.columnar.arrays import csr, packed_order, sorted_unique
from subsum.impl.matching.cindex import PatternProber
from subsum.impl.matching.ops import ANY, OP_CODE, OP_NAME, PATTERN_OPS, RANKED_OPS
from subsum.impl.matching.columnar.subscription_columns import ConstraintColumn, SubscriptionColumns

#: How selective a constraint is likely to be, by operator code; the lowest rank is the pivot (`=` on bool is 4).
PIVOT_RANK_OF_CODE = np.array([{"=": 0, "prefix": 1, "suffix": 1, "wildcard": 1, "contains": 2, "<": 3, "<=": 3, ">": 3, ">=": 3,
                                "!=": 5, "any": 6}[op] for op in OP_NAME], np.int64)
OP_NAME_OF = np.array(OP_NAME, object)
RANKED_CODES = np.array([OP_CODE[op] for op in RANKED_OPS], np.int64)
PATTERN_CODES = np.array([OP_CODE[op] for op in PATTERN_OPS], np.int64)


def pivot_rank_of(key: tuple) -> int:
    """How selective a (type, name, op, value) constraint is likely to be; the lowest rank is the pivot."""
    type_, _name, op, _value = key
    return 4 if (type_ == "bool" and op == "=") else int(PIVOT_RANK_OF_CODE[OP_CODE[op]])


def _rows(columns: dict[str, ConstraintColumn]) -> tuple[np.ndarray, ...]:
    """Every constraint row of every type as (type index, slot, name, op,
    value bits): an int's value, a float's IEEE bits (-0.0 as +0.0), a
    string's code, a bool's 0 or 1, and 0 for `any`."""
    parts = []
    for t_index, t in enumerate(TYPES):
        col = columns.get(t)
        if col is None or not len(col):
            continue
        if t == "float":
            bits = (col.value + 0.0).view(np.int64)
        else:
            bits = col.value.astype(np.int64)
        bits = np.where(col.op == ANY, 0, bits)
        parts.append((np.full(len(col), t_index, np.int64), col.sub.astype(np.int64), col.name.astype(np.int64), col.op.astype(np.int64), bits))
    if not parts:
        return tuple(np.zeros(0, np.int64) for _ in range(5))
    return tuple(np.concatenate(p) for p in zip(*parts))


def _by_text(names: list[str], strings: list[str], columns: dict[str, ConstraintColumn]):
    """The same columns with names and strings coded in text order, so that
    groups, constraint numbers and pattern IDs (and hence pivot ties) do not
    depend on the order in which the names and strings first appeared."""
    name_order, string_order = sorted(range(len(names)), key=names.__getitem__), sorted(range(len(strings)), key=strings.__getitem__)
    name_code, string_code = np.zeros(max(len(names), 1), np.int64), np.zeros(max(len(strings), 1), np.int64)
    name_code[name_order], string_code[string_order] = np.arange(len(names)), np.arange(len(strings))
    recoded = {}
    for t, col in columns.items():
        value = np.where(col.op == ANY, 0, string_code[np.where(col.op == ANY, 0, col.value)]) if t == "string" and len(col) else col.value
        recoded[t] = ConstraintColumn(col.sub, name_code[col.name] if len(col) else col.name, col.op, value)
    return [names[i] for i in name_order], [strings[i] for i in string_order], recoded


class PivotIndex:
    """The numpy form of the subscriptions, rebuilt when they change.

    Per constraint (by number): `cop` (operator code), `cgid` (group), `ckey`
    (rank key, or pattern ID). Per slot: `rest_ptr`/`rest_con` (CSR of the
    other constraints). Per constraint: `pivot_ptr`/`pivot_slots` (CSR of
    the slots whose pivot it is). Per type: `universe` (int, float) and
    `string_rank`. `gid` maps (type, name) to its group."""

    def __init__(self, names: list[str], strings: list[str], columns: dict[str, ConstraintColumn], n_slots: int) -> None:
        names, strings, columns = _by_text(names, strings, columns)
        t_of, slot, name, op, bits = _rows(columns)
        group_key, group = np.unique(t_of * max(len(names), 1) + name, return_inverse=True)
        self.gid = {(TYPES[int(k) // max(len(names), 1)], names[int(k) % max(len(names), 1)]): g for g, k in enumerate(group_key.tolist())}
        self.n_groups = max(len(self.gid), 1)
        # Equal rows are one constraint, numbered in (group, op, value) order.
        value_rank = np.unique(bits, return_inverse=True)[1].reshape(-1)
        order = packed_order((group, len(group_key)), (op, len(OP_NAME)), (value_rank, len(bits)), stable=False)
        first = np.ones(len(order), bool)
        first[1:] = (np.diff(group[order]) != 0) | (np.diff(op[order]) != 0) | (np.diff(bits[order]) != 0)
        number = np.cumsum(first) - 1
        cid = np.empty(len(order), np.int64)
        cid[order] = number
        heads = order[first]
        self.n_constraints = n = len(heads)
        self.cop, self.cgid, c_type, c_bits = op[heads], group[heads], t_of[heads], bits[heads]
        self.ckey = np.zeros(n, np.int64)
        self._rank_keys(c_type, c_bits, strings)
        self._pattern_ids(c_bits, strings)
        self._pivots(slot, cid, c_type, n_slots)

    @classmethod
    def from_columns(cls, cols: SubscriptionColumns) -> "PivotIndex":
        """The index of columns whose subscription indices are the slots."""
        return cls(cols.names, cols.strings, cols.columns, len(cols))

    def slot_keys(self) -> dict[int, tuple[tuple, ...]]:
        """Each non-empty slot's constraints as (type, name, op, value) keys,
        read back from the index (its pivot, then the others): what an engine
        built from columns needs to take a change, without keeping the
        caller's arrays, which the caller may reuse."""
        names_of = {g: key for key, g in self.gid.items()}
        strings_by_rank = sorted(self.string_rank, key=self.string_rank.__getitem__)
        keys = []
        for op, g, key in zip(OP_NAME_OF[self.cop].tolist(), self.cgid.tolist(), self.ckey.tolist()):
            t, name = names_of[g]
            value: Scalar | None
            if op == "any":
                value = None
            elif op in PATTERN_OPS:
                value = self.pattern_of[key][1]
            elif t == "bool":
                value = bool((key - 1) // 2)
            elif t == "string":
                value = strings_by_rank[(key - 1) // 2]
            else:
                value = self.universe[t][(key - 1) // 2].item()
            keys.append((t, name, op, value))
        found: dict[int, tuple[tuple, ...]] = {}
        pivot_of = np.repeat(np.arange(self.n_constraints, dtype=np.int64), np.diff(self.pivot_ptr))
        for pivot, slot in zip(pivot_of.tolist(), self.pivot_slots.tolist()):
            rest = self.rest_con[self.rest_ptr[slot]:self.rest_ptr[slot + 1]].tolist()
            found[slot] = (keys[pivot], *(keys[c] for c in rest))
        return dict(sorted(found.items()))

    def _rank_keys(self, c_type: np.ndarray, c_bits: np.ndarray, strings: list[str]) -> None:
        """Step 1: the universes, and each ranked constraint's key 2r + 1."""
        ranked = np.isin(self.cop, RANKED_CODES)
        self.universe = {}
        for t in ("int", "float"):
            sel = ranked & (c_type == TYPES.index(t))
            values = c_bits[sel] if t == "int" else c_bits[sel].view(np.float64)
            self.universe[t], rank = np.unique(values, return_inverse=True)
            self.ckey[sel] = 1 + 2 * rank.reshape(-1)
        sel = ranked & (c_type == TYPES.index("string"))
        codes = sorted_unique(c_bits[sel]).tolist()
        by_text = sorted(codes, key=strings.__getitem__)
        self.string_rank = {strings[code]: r for r, code in enumerate(by_text)}
        rank_of_code = np.zeros(max(len(strings), 1), np.int64)
        rank_of_code[np.array(by_text, np.int64)] = np.arange(len(by_text), dtype=np.int64)
        self.ckey[sel] = 1 + 2 * rank_of_code[c_bits[sel]]
        sel = c_type == TYPES.index("bool")
        self.ckey[sel] = np.where(self.cop[sel] == ANY, 0, 1 + 2 * c_bits[sel])
        longest = max(len(self.universe["int"]), len(self.universe["float"]), len(self.string_rank), 2)
        self.stride = 2 * longest + 1

    def _pattern_ids(self, c_bits: np.ndarray, strings: list[str]) -> None:
        """Pattern IDs, in (operator, text code) order, and the hash leaves
        that find them (DEF-MATCH-4)."""
        sel = np.isin(self.cop, PATTERN_CODES)
        keys, pid = np.unique(self.cop[sel] * max(len(strings), 1) + c_bits[sel], return_inverse=True)
        self.ckey[sel] = pid
        self.pattern_of = [(OP_NAME[int(k) // max(len(strings), 1)], strings[int(k) % max(len(strings), 1)]) for k in keys.tolist()]
        self.n_patterns = max(len(self.pattern_of), 1)
        self.patterns = PatternProber()
        for p, (op, text) in enumerate(self.pattern_of):
            self.patterns.add(op, text, p)

    def _pivots(self, slot: np.ndarray, cid: np.ndarray, c_type: np.ndarray, n_slots: int) -> None:
        """Step 2: each slot's pivot and its other constraints, least pivot rank first."""
        rank = PIVOT_RANK_OF_CODE[self.cop]
        rank[(c_type == TYPES.index("bool")) & (self.cop == OP_CODE["="])] = 4
        pair = sorted_unique(slot * max(self.n_constraints, 1) + cid)  # a constraint listed twice in a slot counts once
        pair_slot, pair_cid = pair // max(self.n_constraints, 1), pair % max(self.n_constraints, 1)
        order = packed_order((pair_slot, n_slots), (rank[pair_cid], len(PIVOT_RANK_OF_CODE)), (pair_cid, self.n_constraints), stable=False)
        pair_slot, pair_cid = pair_slot[order], pair_cid[order]
        is_pivot = np.ones(len(pair_slot), bool)
        is_pivot[1:] = pair_slot[1:] != pair_slot[:-1]
        self.size = np.bincount(pair_slot, minlength=n_slots)
        self.rest_ptr, self.rest_con = csr(pair_slot[~is_pivot], pair_cid[~is_pivot], n_slots)
        pivots = pair_cid[is_pivot]
        self.pivot_ptr, self.pivot_slots = csr(pivots, pair_slot[is_pivot], self.n_constraints)
        self._build_pivot_arrays(sorted_unique(pivots))

    def _build_pivot_arrays(self, used: np.ndarray) -> None:
        """Per ranked operator, the pivots' composite keys gid * stride + key,
        sorted, with each group's segment; the `any` pivots by group; the
        pattern pivots by (pattern ID, group)."""
        op, gid, key = self.cop[used], self.cgid[used], self.ckey[used]
        self.pivot_ranked = {}
        group_starts = np.arange(self.n_groups + 1, dtype=np.int64) * self.stride
        for name in RANKED_OPS:
            sel = op == OP_CODE[name]
            if not sel.any():
                continue
            composite = gid[sel] * self.stride + key[sel]
            order = np.argsort(composite, kind="stable")
            composite = composite[order]
            bounds = np.searchsorted(composite, group_starts)  # group g's segment: [bounds[g], bounds[g + 1])
            self.pivot_ranked[name] = (composite, used[sel][order], bounds)
        sel = op == ANY
        order = np.argsort(gid[sel], kind="stable")
        self.pivot_any = (gid[sel][order], used[sel][order])
        sel = np.isin(op, PATTERN_CODES)
        composite = key[sel] * self.n_groups + gid[sel]
        order = np.argsort(composite, kind="stable")
        self.pivot_pattern = (composite[order], used[sel][order])
