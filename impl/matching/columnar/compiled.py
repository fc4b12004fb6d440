"""The compiled engine (spec/03-matching.md DEF-MATCH-7): the vectorized
engine's index (`pivots.PivotIndex`), matched by numba kernels instead of
numpy passes over every pivot operator and a Python probe of every
distinct string.

`KernelIndex` lays the index out for the kernels once per change of the
subscriptions (`kernel_layout`): each group's merged ranked pivot keys
with their buckets and cuts, the subscriptions by pivot position with
their signatures and other constraints, every pattern as UTF-8 bytes, the
numeric universes' buckets. Per match, step 1 (`KernelIndex.occurrences`)
maps names to groups and values to rank keys, the batch's distinct strings
are encoded once, the pattern memo is filled when it pays, and
`match_kernel.match_chunk` does steps 2 to 5, chunk by chunk of events, on
the threads `MatchPlan` allows. The kernels and their layout import numba
on first use."""

from __future__ import annotations

import os
import types
from concurrent.futures import ThreadPoolExecutor
from typing import cast

import attrs
import numpy as np

from subsum.impl.matching.columnar.arrays import EMPTY
from subsum.impl.matching.columnar.batch import ColumnarBatch, not_a_map
from subsum.core.types import TYPES, Attribute, Constraint, Event, Subscription, split_wildcard
from subsum.impl.matching.ops import OP_CODE
from subsum.impl.matching.columnar.pivots import PivotIndex
from subsum.impl.matching.columnar.pivot_engine import PivotEngine


def _kernels():
    """The numba kernels, imported on first use: importing numba takes a
    quarter of a second, which no other engine should pay."""
    from subsum.impl.matching.columnar import kernels

    return kernels


def _layout():
    """`kernel_layout` and `match_kernel`, imported on first use: they import numba too."""
    from subsum.impl.matching.columnar import kernel_layout
    from subsum.impl.matching.columnar import match_kernel

    return types.SimpleNamespace(lay_out=kernel_layout.lay_out, match_chunk=match_kernel.match_chunk)


def run_parts(run, parts: list, workers: int) -> list:
    """run(part) for each part, in order; on up to `workers` threads when
    there are several parts (the kernels release the GIL)."""
    if workers > 1 and len(parts) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(run, parts))
    return [run(part) for part in parts]


class KernelIndex:
    """The pivot index of a `PivotIndex` as the kernels read it (`kernel_layout`)."""

    def __init__(self, c: PivotIndex) -> None:
        self.source = c
        layout = _layout()
        self.index, self.pattern_ptr, self.pattern_pid = layout.lay_out(c)
        self.patterns = _pattern_arrays(c.pattern_of)
        # Row r of group_table: the group of name_row's r-th name per type of TYPES, -1 if none; the last row is all -1.
        self.name_row: dict[str, int] = {}
        for _t, name in c.gid:
            self.name_row.setdefault(name, len(self.name_row))
        self.group_table = np.full((len(self.name_row) + 1, len(TYPES)), -1, np.int64)
        for (t, name), g in c.gid.items():
            self.group_table[self.name_row[name], TYPES.index(t)] = g
        self.universe, self.string_rank = c.universe, c.string_rank
        self.buckets = {t: _kernels().rank_buckets(u) for t, u in c.universe.items()}

    def match(self, ev, gid, rkey, scode, n_events: int, strings: tuple, memo: tuple, plan: "MatchPlan"):
        """DEF-MATCH-7 steps 2 to 5 (`match_kernel.match_chunk`) over step 1's
        occurrences, chunk by chunk of events as `plan` says: (pairs by
        event, index searches, constraints checked)."""
        order, start = _kernels().by_event(ev, n_events)
        chunks = plan.chunks(start, n_events)
        match_chunk = _layout().match_chunk

        def run(chunk: tuple[int, int]):
            return match_chunk(ev, order, start, chunk[0], chunk[1], gid, rkey, scode, self.index, self.patterns, strings, memo, plan.room)

        results = run_parts(run, chunks, plan.workers())
        for _, _, _, twice in results:
            if twice >= 0:
                raise not_a_map(twice)
        pairs = np.concatenate([r[0] for r in results]) if len(results) > 1 else results[0][0]
        return pairs, sum(int(r[1]) for r in results), sum(int(r[2]) for r in results)

    def pattern_memo(self, gid: np.ndarray, scode: np.ndarray, n_strings: int, strings: tuple, threshold: float,
                     plan: "MatchPlan") -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], int]:
        """When the batch's string occurrences would test more than
        `threshold` pattern pivots each on average: each distinct (group,
        string) pair's satisfied pattern pivots, tested once (DEF-MATCH-7
        step 3), as (pair of each occurrence or -1, ptr, pattern positions),
        and the tests made; the pairs in parts on `plan`'s threads when
        they are many. Otherwise three empty arrays and 0."""
        is_string = (scode >= 0) & (gid >= 0)
        per_group = np.diff(self.pattern_ptr)
        tested = per_group[gid[is_string]]
        if len(tested) == 0 or tested.sum() <= threshold * len(tested):
            return (EMPTY, EMPTY, EMPTY), 0
        keys, pair_of = np.unique(gid[is_string] * n_strings + scode[is_string], return_inverse=True)
        pair = np.full(len(gid), -1, np.int64)
        pair[is_string] = pair_of
        groups, codes = keys // n_strings, keys % n_strings
        work = np.cumsum(per_group[groups])
        parts = plan.workers() if work[-1] >= plan.parallel_occurrences else 1
        edges = [0, *np.searchsorted(work, np.linspace(0, work[-1], parts + 1)[1:-1]).tolist(), len(keys)]
        pattern_pairs = _kernels().pattern_pairs

        def run(part: tuple[int, int]):
            a, b = part
            return pattern_pairs(groups[a:b], codes[a:b], self.pattern_ptr, self.pattern_pid, self.patterns, strings)

        results = run_parts(run, list(zip(edges[:-1], edges[1:])), plan.workers())
        offsets = np.cumsum([0] + [len(positions) for _, positions, _ in results])
        ptr = np.concatenate([r[0][:-1] + offset for r, offset in zip(results, offsets)] + [offsets[-1:]])
        return (pair, ptr, np.concatenate([r[1] for r in results])), sum(int(r[2]) for r in results)

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


def _at_least_one(_instance, attribute, value) -> None:
    if value is not None and (type(value) is not int or value < 1):
        raise ValueError(f"MatchPlan.{attribute.name} must be an integer of at least 1, got {value!r}")


@attrs.frozen
class MatchPlan:
    """How the compiled engine cuts a batch and runs its chunks. Its lines
    and counters do not depend on it (CLM-ENG-1, CLM-ENG-8)."""

    #: matching threads; None: one per CPU this process may run on
    threads: int | None = attrs.field(default=None, validator=_at_least_one)
    #: attribute occurrences per chunk of events (a chunk's by-group arrays take about 16 bytes an occurrence)
    chunk_occurrences: int = attrs.field(default=1 << 21, validator=_at_least_one)
    #: a batch of at least this many occurrences is cut into one chunk per thread at least (0: always)
    parallel_occurrences: int = attrs.field(default=1 << 17, validator=attrs.validators.ge(0))
    #: candidates that pass their signature test held before their check
    room: int = attrs.field(default=1 << 16, validator=_at_least_one)

    def workers(self) -> int:
        if self.threads:
            return self.threads
        try:
            return len(os.sched_getaffinity(0))  # the CPUs this process may run on (Linux)
        except AttributeError:  # macOS, Windows
            return os.cpu_count() or 1

    def chunks(self, start: np.ndarray, n_events: int) -> list[tuple[int, int]]:
        """The events cut into ranges [e0, e1) of about `chunk_occurrences`
        occurrences each (start[e] is event e's first), and into one per
        worker at least when the batch is large."""
        total = int(start[n_events])
        parts = self.workers() if total >= self.parallel_occurrences else 1
        n = max(1, -(-total // max(self.chunk_occurrences, 1)), min(parts, n_events))
        cuts = np.searchsorted(start[:n_events + 1], np.linspace(0, total, n + 1)[1:-1], "left")
        edges = [0, *sorted({int(c) for c in cuts if 0 < c < n_events}), n_events]
        return list(zip(edges[:-1], edges[1:]))


class CompiledEngine(PivotEngine):
    name = "compiled"
    #: test each distinct (group, string) pair's pattern pivots once per batch, rather than per occurrence,
    #: when the string occurrences would otherwise test more than this many pattern pivots each on average
    memo_threshold = 4.0
    #: how a batch is cut into chunks of events, and on how many threads they run
    plan = MatchPlan()
    _kernel_index: KernelIndex | None = None

    def prepare(self) -> None:
        super().prepare()
        if self._kernel_index is None or self._kernel_index.source is not self._compiled:
            self._kernel_index = KernelIndex(cast(PivotIndex, self._compiled))

    @property
    def kernel_index(self) -> KernelIndex:
        """The index as the kernels read it, for the current subscriptions."""
        self.prepare()
        return cast(KernelIndex, self._kernel_index)

    def _match_pairs(self, batch: ColumnarBatch) -> tuple[np.ndarray, np.ndarray]:
        self.prepare()
        c, index = cast(PivotIndex, self._compiled), self.kernel_index
        if c.n_constraints == 0 or batch.n_events == 0:
            return EMPTY, EMPTY
        ev, gid, rkey, scode = index.occurrences(batch)
        if len(ev) == 0:
            return EMPTY, EMPTY
        strings = string_arrays(batch.strings)
        memo, tests = index.pattern_memo(gid, scode, len(batch.strings), strings, self.memo_threshold, self.plan)
        pairs, lookups, checks = index.match(ev, gid, rkey, scode, batch.n_events, strings, memo, self.plan)
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
    engine.plan = MatchPlan(threads=1, room=1)
    assert engine.match_batch([event]) == [{"s"}]
