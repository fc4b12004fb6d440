"""The compiled engine's index as its kernels read it (spec/03-matching.md
DEF-MATCH-7), laid out once per change of the subscriptions from
`pivots.PivotIndex`.

*Pivot positions.* Every pivot constraint has one position: the ranked
operators' sorted pivot keys concatenated (operator by operator, each by
group then key), then the `any` pivots by group, then the pattern pivots by
group. `candidates` stores the subscriptions by pivot position, so the
pivots of a range of positions have their subscriptions in one range of
candidates. Per candidate: its slot, its signature (one bit per group of
its other constraints, `group_bits`), and its other constraints as
(operator, group, key) triples, the likely most selective first.

*One search per occurrence.* Per group, the distinct keys of its ranked
pivots, of every operator, are merged into one sorted list (`merged_keys`).
One search of it finds, for every operator at once, where the attribute's
key falls among that operator's pivots: row i of `cuts` holds, per
operator, the first candidate of the first pivot whose key is not below the
list's i-th key. The search looks only inside the key's bucket: each group's
list is cut into as many buckets of equal width as it has keys.

    >>> bits = group_bits(3)
    >>> [int(b).bit_count() for b in bits], len(set(bits.tolist()))
    ([1, 1, 1], 3)
"""

from __future__ import annotations

import numba
import numpy as np

from subsum.impl.matching.ops import RANKED_OPS

#: Fibonacci hashing: a group's bit is the top 6 bits of its number times this constant, mod 2^64.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def group_bits(n_groups: int) -> np.ndarray:
    """Each group's signature bit (uint64 with one bit set)."""
    spread = np.arange(n_groups, dtype=np.uint64) * GOLDEN  # wraps mod 2^64, as it should
    return np.left_shift(np.uint64(1), spread >> np.uint64(58))


@numba.njit(cache=True)
def candidates(pos_con, pivot_ptr, pivot_slots, rest_ptr, rest_con, cop, cgid, ckey, bits):
    """The subscriptions by pivot position: (cand_ptr by position, slot,
    signature and rest_ptr by candidate, rest as (operator, group, key)
    triples by candidate)."""
    n_pos = len(pos_con)
    cand_ptr = np.zeros(n_pos + 1, np.int64)
    for p in range(n_pos):
        cand_ptr[p + 1] = cand_ptr[p] + pivot_ptr[pos_con[p] + 1] - pivot_ptr[pos_con[p]]
    n = cand_ptr[n_pos]
    slot, signature, cand_rest = np.empty(n, np.int64), np.zeros(n, np.uint64), np.zeros(n + 1, np.int64)
    for p in range(n_pos):
        j = cand_ptr[p]
        for q in range(pivot_ptr[pos_con[p]], pivot_ptr[pos_con[p] + 1]):
            s = pivot_slots[q]
            slot[j] = s
            cand_rest[j + 1] = cand_rest[j] + rest_ptr[s + 1] - rest_ptr[s]
            j += 1
    rest = np.empty(3 * cand_rest[n], np.int64)
    for j in range(n):
        s, at = slot[j], 3 * cand_rest[j]
        for r in range(rest_ptr[s], rest_ptr[s + 1]):
            c = rest_con[r]
            rest[at], rest[at + 1], rest[at + 2] = cop[c], cgid[c], ckey[c]
            signature[j] |= bits[cgid[c]]
            at += 3
    return cand_ptr, slot, signature, cand_rest, rest


@numba.njit(cache=True)
def key_buckets(merged, merged_ptr):
    """Per group g with n keys merged[merged_ptr[g]:merged_ptr[g + 1]],
    ascending: n buckets of equal width over [its least key, its greatest],
    as (low by group, span by group, bucket_ptr by group, first), where
    first[bucket_ptr[g] + b] is the local index of the group's first key in
    bucket b or above, for b in 0 … n."""
    n_groups = len(merged_ptr) - 1
    low, span = np.zeros(n_groups, np.int64), np.ones(n_groups, np.int64)
    bucket_ptr = np.zeros(n_groups + 1, np.int64)
    for g in range(n_groups):
        bucket_ptr[g + 1] = bucket_ptr[g] + merged_ptr[g + 1] - merged_ptr[g] + 1
    first = np.zeros(bucket_ptr[n_groups], np.int64)
    for g in range(n_groups):
        a, n = merged_ptr[g], merged_ptr[g + 1] - merged_ptr[g]
        if n == 0:
            continue
        low[g], span[g] = merged[a], merged[a + n - 1] - merged[a] + 1
        b = 0
        for i in range(n):
            bucket = (merged[a + i] - low[g]) * n // span[g]
            while b <= bucket:  # buckets up to this key's start here
                first[bucket_ptr[g] + b] = i
                b += 1
        while b <= n:
            first[bucket_ptr[g] + b] = n
            b += 1
    return low, span, bucket_ptr, first


def merged_search(keys: np.ndarray, bounds: np.ndarray, cand_ptr: np.ndarray, n_groups: int, stride: int) -> tuple:
    """The per-group merged keys of the ranked pivots and their cuts, as the
    tuple (merged local keys, merged_ptr by group, cuts, segments, low,
    span, bucket_ptr, first) (`key_buckets` for the last four).
    cuts[row, op] is the candidate where operator op's pivots of keys not
    below the row's key start; group g's rows are merged_ptr[g] + g …
    merged_ptr[g + 1] + g, the last of them the end of each operator's
    segment. segments[g, op] is the candidate where operator op's pivots on
    group g start. `keys` are the concatenated composite pivot keys (group *
    stride + key), operator op's of group g in keys[bounds[op, g]:bounds[op, g + 1]]."""
    merged = np.unique(keys)
    merged_ptr = np.searchsorted(merged, np.arange(n_groups + 1, dtype=np.int64) * stride).astype(np.int64)
    group_of = np.repeat(np.arange(n_groups, dtype=np.int64), np.diff(merged_ptr))
    rows = len(merged) + n_groups
    key_row = np.arange(len(merged), dtype=np.int64) + group_of  # row of each merged key
    end_row = merged_ptr[1:] + np.arange(n_groups, dtype=np.int64)  # each group's last row
    cuts = np.zeros((rows, bounds.shape[0]), np.int64)
    for op in range(bounds.shape[0]):
        segment = keys[bounds[op, 0]:bounds[op, n_groups]]
        cuts[key_row, op] = cand_ptr[bounds[op, 0] + np.searchsorted(segment, merged, "left")]
        cuts[end_row, op] = cand_ptr[bounds[op, 1:]]
    local = merged - group_of * stride
    low, span, bucket_ptr, first = key_buckets(local, merged_ptr)
    return local, merged_ptr, cuts, np.ascontiguousarray(cand_ptr[bounds].T), low, span, bucket_ptr, first


#: the columns of `info` (`match_kernel`'s docstring)
INFO_MERGED, INFO_LOW, INFO_SPAN, INFO_BUCKET, INFO_ANY, INFO_PATTERN, INFO_SEGMENT = 0, 1, 2, 3, 4, 5, 6


def ranked_pivots(c) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """The six ranked operators' sorted composite pivot keys of a
    `pivots.PivotIndex`, concatenated: (keys, their constraints per
    operator, bounds), operator op's pivots on group g at keys[bounds[op, g]:bounds[op, g + 1]]."""
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
    return (np.concatenate(keys) if keys else np.zeros(0, np.int64)), cons, bounds


def lay_out(c) -> tuple[tuple, np.ndarray, np.ndarray]:
    """A `pivots.PivotIndex` as `match_kernel.match_chunk` reads it: (index
    tuple, pattern_ptr by group, pattern ID by pattern position)."""
    ranked_keys, cons, bounds = ranked_pivots(c)
    any_gids, any_cons = c.pivot_any
    any_ptr = np.searchsorted(any_gids, np.arange(c.n_groups + 1)).astype(np.int64)
    pattern_keys, pattern_cons = c.pivot_pattern  # keyed pattern ID * n_groups + group
    by_group = np.argsort(pattern_keys % c.n_groups, kind="stable")
    pattern_cons = pattern_cons[by_group]
    pattern_ptr = np.searchsorted((pattern_keys % c.n_groups)[by_group], np.arange(c.n_groups + 1)).astype(np.int64)
    pattern_pid = c.ckey[pattern_cons]
    # Pivot positions: the ranked pivots, then `any`, then the patterns; their subscriptions by position.
    pos_con = np.concatenate([*cons, any_cons, pattern_cons]).astype(np.int64)
    bits = group_bits(c.n_groups)
    cand_ptr, slot, signature, cand_rest, rest = candidates(pos_con, c.pivot_ptr, c.pivot_slots, c.rest_ptr, c.rest_con, c.cop, c.cgid,
                                                            c.ckey, bits)
    merged, merged_ptr, cuts, segments, low, span, bucket_ptr, first = merged_search(ranked_keys, bounds, cand_ptr, c.n_groups, c.stride)
    n_ranked, n_any = len(ranked_keys), len(any_cons)
    info = np.zeros((c.n_groups + 1, INFO_SEGMENT + len(RANKED_OPS)), np.int64)
    info[:, INFO_MERGED], info[:-1, INFO_LOW], info[:-1, INFO_SPAN], info[:, INFO_BUCKET] = merged_ptr, low, span, bucket_ptr
    info[:, INFO_ANY], info[:, INFO_PATTERN], info[:, INFO_SEGMENT:] = cand_ptr[n_ranked + any_ptr], pattern_ptr, segments
    index = (info, merged, first, cuts, bits, (slot, signature, cand_rest, rest), (pattern_pid, cand_ptr[n_ranked + n_any:]))
    return index, pattern_ptr, pattern_pid
