"""The compiled engine (spec/03-matching.md DEF-MATCH-6): the vectorized
engine's index and first two steps, then steps 3 to 5 as one numba kernel
(`kernels.match_occurrences`) instead of numpy passes over every pivot
operator.

The index is DEF-MATCH-5's (`vectorized.PivotIndex`), laid out for the
kernel once per change of the subscriptions: the six ranked operators'
sorted pivot keys concatenated, with each (operator, group) segment's
bounds; the `any` pivots and the pattern pivots by group.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from subsum.impl.matching import kernels
from subsum.impl.matching.arrays import EMPTY
from subsum.impl.matching.columnar import ColumnarBatch
from subsum.impl.matching.vectorized import RANKED_OPS, VectorizedEngine, PivotIndex


class _KernelIndex:
    """The pivot index of a `PivotIndex` as the kernel reads it."""

    def __init__(self, c: PivotIndex) -> None:
        keys, cons, bounds, offset = [], [], np.zeros((len(RANKED_OPS), c.n_groups + 1), np.int64), 0
        for row, op in enumerate(RANKED_OPS):
            if op in c.pivot_ranked:
                op_keys, op_cons, op_bounds = c.pivot_ranked[op]
                keys.append(op_keys)
                cons.append(op_cons)
                bounds[row] = op_bounds + offset
                offset += len(op_keys)
            else:
                bounds[row] = offset  # every segment empty
        self.keys = np.concatenate(keys) if keys else EMPTY
        self.cons = np.concatenate(cons) if cons else EMPTY
        self.bounds = bounds
        any_gids, self.any_cons = c.pivot_any
        self.any_ptr = np.searchsorted(any_gids, np.arange(c.n_groups + 1)).astype(np.int64)
        self.pattern_keys, self.pattern_cons = c.pivot_pattern


class CompiledEngine(VectorizedEngine):
    name = "compiled"

    def prepare(self) -> None:
        if self._compiled is None:
            super().prepare()
            self._kernel_index = _KernelIndex(cast(PivotIndex, self._compiled))

    def _match_pairs(self, batch: ColumnarBatch) -> tuple[np.ndarray, np.ndarray]:
        self.prepare()
        c, index = cast(PivotIndex, self._compiled), self._kernel_index
        if c.n_constraints == 0 or batch.n_events == 0:
            return EMPTY, EMPTY
        ev, gid, rkey, scode = self._relevant_occurrences(batch, c)
        if len(ev) == 0:
            return EMPTY, EMPTY
        order = np.lexsort((gid, ev))
        ev, gid, rkey, scode = ev[order], gid[order], rkey[order], scode[order]
        satisfied = self._probe_strings(batch, c, np.unique(scode[scode >= 0]))
        codes = int(scode.max()) + 2 if len(scode) else 1
        sat_ptr = np.searchsorted(satisfied // c.n_patterns, np.arange(codes)).astype(np.int64)
        pairs, lookups, checks = kernels.match_occurrences(
            ev, gid, rkey, scode, satisfied, sat_ptr, satisfied % c.n_patterns, index.keys, index.cons, index.bounds,
            index.any_ptr, index.any_cons, index.pattern_keys, index.pattern_cons, c.pivot_ptr, c.pivot_slots,
            c.rest_ptr, c.rest_con, c.cop, c.cgid, c.ckey, len(self._size), c.stride, c.n_groups, c.n_patterns)
        self.stats.index_lookups += int(lookups)
        self.stats.counter_increments += int(checks)
        return pairs[:, 0].copy(), pairs[:, 1].copy()
