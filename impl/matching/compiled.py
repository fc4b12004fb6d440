"""The compiled engine (spec/03-matching.md DEF-MATCH-7): the vectorized
engine's index, matched by numba kernels (`kernels.py`) instead of numpy
passes over every pivot operator and a Python probe of every distinct
string.

The index is DEF-MATCH-5's (`vectorized.PivotIndex`), laid out for the
kernels once per change of the subscriptions (`KernelIndex`): the six
ranked operators' sorted pivot keys concatenated, with each (operator,
group) segment's bounds; the `any` pivots and the pattern pivots by group;
every pattern as UTF-8 bytes; the numeric universes' buckets. Per match,
step 1 (`KernelIndex.occurrences`) maps names to groups and values to rank
keys, the batch's distinct strings are encoded once, and
`kernels.match_events` does the rest."""

from __future__ import annotations

from typing import cast

import numpy as np

from subsum.impl.matching.arrays import EMPTY
from subsum.impl.matching.columnar import ColumnarBatch
from subsum.core.types import TYPES, Attribute, Constraint, Event, Subscription, split_wildcard
from subsum.impl.matching.vectorized import OP_CODE, RANKED_OPS, PivotIndex, VectorizedEngine


def _kernels():
    """The numba kernels, imported on first use: importing numba takes a
    quarter of a second, which no other engine should pay."""
    from subsum.impl.matching import kernels

    return kernels


class KernelIndex:
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
        pattern_keys, pattern_cons = c.pivot_pattern  # keyed pattern ID * n_groups + group
        by_group = np.argsort(pattern_keys % c.n_groups, kind="stable")
        self.pattern_cons = pattern_cons[by_group]
        self.pattern_ptr = np.searchsorted((pattern_keys % c.n_groups)[by_group], np.arange(c.n_groups + 1)).astype(np.int64)
        self.patterns = _pattern_arrays(c.pattern_of)
        self.pivots = (self.keys, self.cons, self.bounds, self.any_ptr, self.any_cons, self.pattern_ptr, self.pattern_cons)
        block_ptr, blocks = _kernels().candidate_blocks(c.pivot_ptr, c.pivot_slots, c.rest_ptr, c.rest_con, c.cop, c.cgid, c.ckey)
        self.subs = (block_ptr, blocks, c.ckey)
        self.ckey, self.n_groups, self.stride = c.ckey, c.n_groups, c.stride
        # Row r of group_table: the group of name_row's r-th name per type of TYPES, -1 if none; the last row is all -1.
        self.name_row: dict[str, int] = {}
        for _t, name in c.gid:
            self.name_row.setdefault(name, len(self.name_row))
        self.group_table = np.full((len(self.name_row) + 1, len(TYPES)), -1, np.int64)
        for (t, name), g in c.gid.items():
            self.group_table[self.name_row[name], TYPES.index(t)] = g
        self.universe, self.string_rank = c.universe, c.string_rank
        self.buckets = {t: _kernels().rank_buckets(u) for t, u in c.universe.items()}

    def match(self, ev, gid, rkey, scode, n_events: int, strings: tuple, memo: tuple):
        """DEF-MATCH-7 steps 2 to 5 (`kernels.match_events`) over step 1's occurrences."""
        pairs, lookups, checks, twice = _kernels().match_events(ev, gid, rkey, scode, n_events, self.n_groups, self.pivots,
                                                               self.subs, self.patterns, strings, self.stride, memo)
        if twice >= 0:
            raise ValueError(f"event {twice} of the batch holds an attribute name twice with one type: events are Maps (DEF-DATA-4)")
        return pairs, lookups, checks

    def pattern_memo(self, gid: np.ndarray, scode: np.ndarray, n_strings: int, strings: tuple,
                     threshold: float) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], int]:
        """When the batch's string occurrences would test more than
        `threshold` pattern pivots each on average: each distinct (group,
        string) pair's satisfied pattern pivots, tested once (DEF-MATCH-7
        step 3), as (pair of each occurrence or -1, ptr, cons), and the tests
        made. Otherwise three empty arrays and 0."""
        is_string = (scode >= 0) & (gid >= 0)
        per_group = np.diff(self.pattern_ptr)
        tested = per_group[gid[is_string]]
        if len(tested) == 0 or tested.sum() <= threshold * len(tested):
            return (EMPTY, EMPTY, EMPTY), 0
        keys, pair_of = np.unique(gid[is_string] * n_strings + scode[is_string], return_inverse=True)
        pair = np.full(len(gid), -1, np.int64)
        pair[is_string] = pair_of
        ptr, cons, tests = _kernels().pattern_pairs(keys // n_strings, keys % n_strings, self.pattern_ptr, self.pattern_cons,
                                                 self.ckey, self.patterns, strings)
        return (pair, ptr, cons), int(tests)

    def occurrences(self, batch: ColumnarBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """DEF-MATCH-7 step 1: every attribute occurrence of the batch as
        (event, group or -1 if no constraint names its type and name, rank
        key, string code or -1)."""
        unknown = len(self.name_row)
        groups = self.group_table[np.array([self.name_row.get(n, unknown) for n in batch.names] or [unknown], np.int64)]
        parts = []
        for column, t in enumerate(TYPES):
            col = batch.columns.get(t)
            if col is None or not len(col):
                continue
            no_string = np.full(len(col), -1, np.int64)
            if t == "bool":
                key, scode = 1 + 2 * col.value.astype(np.int64), no_string
            elif t == "string":
                rank = np.array([self.string_rank.get(s, -1) for s in batch.strings] or [-1], np.int64)[col.value]
                key, scode = np.where(rank >= 0, 1 + 2 * rank, 0), col.value
            else:
                key, scode = _kernels().rank_keys(self.universe[t], self.buckets[t], col.value), no_string
            parts.append((col.event, groups[col.name, column], key, scode))
        if not parts:
            return EMPTY, EMPTY, EMPTY, EMPTY
        ev, gid, key, scode = (np.concatenate(p) for p in zip(*parts))
        return ev, gid, key, scode


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a lone surrogate is a code point too


def _pattern_arrays(pattern_of: list[tuple[str, str]]) -> tuple:
    """(operator codes, bytes, first part's start and length, second part's
    start and length) by pattern ID: the pattern itself, or a wildcard's
    left and right parts."""
    n = max(len(pattern_of), 1)
    ops, parts = np.zeros(n, np.int64), np.zeros((4, n), np.int64)
    chunks: list[bytes] = []
    at = 0
    for pid, (op, text) in enumerate(pattern_of):
        ops[pid] = OP_CODE[op]
        pieces = split_wildcard(text) if op == "wildcard" else (text, "")
        for column, piece in zip((0, 2), pieces):
            encoded = _utf8(piece)
            parts[column, pid], parts[column + 1, pid] = at, len(encoded)
            chunks.append(encoded)
            at += len(encoded)
    text_bytes = np.frombuffer(b"".join(chunks) or b"\0", np.uint8)
    return ops, text_bytes, parts[0].copy(), parts[1].copy(), parts[2].copy(), parts[3].copy()


def string_arrays(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """A batch's distinct strings as (UTF-8 bytes, offsets) by string code."""
    encoded = [_utf8(s) for s in strings]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded) or b"\0", np.uint8), offsets


class CompiledEngine(VectorizedEngine):
    name = "compiled"
    #: test each distinct (group, string) pair's pattern pivots once per batch, rather than per occurrence,
    #: when the string occurrences would otherwise test more than this many pattern pivots each on average
    memo_threshold = 4.0

    def prepare(self) -> None:
        if self._compiled is None:
            super().prepare()
            self.kernel_index = KernelIndex(cast(PivotIndex, self._compiled))

    def _match_pairs(self, batch: ColumnarBatch) -> tuple[np.ndarray, np.ndarray]:
        self.prepare()
        c, index = cast(PivotIndex, self._compiled), self.kernel_index
        if c.n_constraints == 0 or batch.n_events == 0:
            return EMPTY, EMPTY
        ev, gid, rkey, scode = index.occurrences(batch)
        if len(ev) == 0:
            return EMPTY, EMPTY
        strings = string_arrays(batch.strings)
        memo, tests = index.pattern_memo(gid, scode, len(batch.strings), strings, self.memo_threshold)
        pairs, lookups, checks = index.match(ev, gid, rkey, scode, batch.n_events, strings, memo)
        self.stats.index_lookups += int(lookups) + tests
        self.stats.counter_increments += int(checks)
        return pairs[:, 0].copy(), pairs[:, 1].copy()


def warm() -> None:
    """Compile every kernel, or load it from numba's disk cache: one tiny
    match through each path, the pattern memo included. `make test` runs
    it beside mypy, so that no test process pays the compilation."""
    subscriptions = [("s", Subscription([Constraint("x", "int", "<", 5), Constraint("w", "string", "prefix", "a"),
                                          Constraint("f", "float", "=", 1.5)]))]
    event = Event((Attribute("x", "int", 1), Attribute("w", "string", "ab"), Attribute("f", "float", 1.5)))
    engine = CompiledEngine(subscriptions)
    engine.memo_threshold = -1.0
    assert engine.match_batch([event]) == [{"s"}]
