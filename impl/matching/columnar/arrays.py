"""numpy helpers of the vectorized engine (spec/03-matching.md DEF-MATCH-5):
ranges and CSR rows expanded to flat pairs, and exact look-ups in a sorted array."""

from __future__ import annotations

import numpy as np

EMPTY = np.zeros(0, np.int64)


def expand_ranges(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges [starts[k], ends[k]), the pairs (k, position), flattened."""
    lengths = np.maximum(ends - starts, 0)
    total = int(lengths.sum())
    if total == 0:
        return EMPTY, EMPTY
    owner = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    first = np.cumsum(lengths) - lengths
    position = np.arange(total, dtype=np.int64) - np.repeat(first - starts, lengths)
    return owner, position


def expand_csr(ptr: np.ndarray, items: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each k, the pairs (k, item) over the CSR row rows[k]."""
    owner, position = expand_ranges(ptr[rows], ptr[rows + 1])
    return owner, items[position]


def csr(keys: np.ndarray, values: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A CSR structure from (row key, value) pairs."""
    order = np.argsort(keys, kind="stable")
    ptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=n_rows), out=ptr[1:])
    return ptr, values[order]


def exact_positions(sorted_keys: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of queries found in sorted_keys, and a mask of which were found."""
    if len(sorted_keys) == 0:
        return np.zeros(len(queries), np.int64), np.zeros(len(queries), bool)
    position = np.searchsorted(sorted_keys, queries)
    clipped = np.minimum(position, len(sorted_keys) - 1)
    return clipped, sorted_keys[clipped] == queries


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending: a sort and one pass (numpy's
    `unique` hashes first, which is several times slower on large arrays)."""
    ordered = np.sort(values)
    if len(ordered) == 0:
        return ordered
    keep = np.empty(len(ordered), bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def packed_order(*keys: tuple[np.ndarray, int], stable: bool = True) -> np.ndarray:
    """The order that sorts by the first key, then the second, and so on:
    each key is (values in [0, bound), bound). When the bounds' product fits
    in 63 bits the keys are packed into one int64 and sorted once, otherwise
    `np.lexsort` sorts them. Rows with equal keys keep their order only when
    `stable` (a stable sort is slower)."""
    total = 1
    for _, bound in keys:
        total *= max(int(bound), 1)
    if total >= 2**63:
        return np.lexsort(tuple(values for values, _ in reversed(keys)))
    packed = np.zeros(len(keys[0][0]), np.int64)
    for values, bound in keys:
        packed *= max(int(bound), 1)
        packed += values
    return np.argsort(packed, kind="stable" if stable else None)
