"""numba kernels of the compiled engine (spec/03-matching.md DEF-MATCH-7)
that test one value: step 1's numeric rank keys (`rank_keys`, exact over
buckets), a rank key against a ranked operator (`ranked_holds`), a string
against a pattern on UTF-8 bytes (`string_holds`), and the counting sort of
a batch's occurrences by event. `match_kernel` runs steps 2 to 5 with them.

Operator codes are `ops.OP_CODE`'s: = != < <= > >= are 0 … 5, the patterns
6 … 9, `any` 10. Kernels are cached on disk (`cache=True`): a second
process loads them instead of compiling.
"""

from __future__ import annotations

import numba
import numpy as np

ANY_CODE = 10


@numba.njit(cache=True)
def bucket_of(x, low, scale, last):
    """x's bucket in 0 … last: floor((x - low) * scale), clamped. It never
    decreases as x grows (IEEE subtraction and product by a constant are
    monotone), which is all `rank_keys` relies on."""
    if scale == 0.0:
        return 0  # one bucket (also where (x - low) * 0 would be inf * 0)
    b = (float(x) - low) * scale
    if not b > 0.0:
        return 0  # NaN too, so a bucket is always in range
    if b >= last:
        return last
    return int(b)


@numba.njit(cache=True)
def rank_buckets(universe):
    """A sorted universe of n values split into n buckets of equal width:
    (low, scale, first), where first[b] counts the values in buckets below b."""
    n = len(universe)
    if n == 0:
        return 0.0, 0.0, np.zeros(2, np.int64)
    low, span = float(universe[0]), float(universe[n - 1]) - float(universe[0])
    scale = n / span if 0.0 < span < np.inf else 0.0
    if not scale < np.inf:
        scale = 0.0  # a subnormal span: n / span overflows, and inf * 0 would be NaN
    first = np.zeros(n + 1, np.int64)
    for u in universe:
        first[bucket_of(u, low, scale, n - 1) + 1] += 1
    for b in range(n):
        first[b + 1] += first[b]
    return low, scale, first


@numba.njit(cache=True)
def rank_keys(universe, buckets, values):
    """DEF-MATCH-5 step 1 for numbers: 2r + 1 if a value equals universe[r],
    else 2r, where r counts the universe's values below it. Values in
    buckets below x's are below x, values in buckets above are above it, so
    r is searched for only among the values of x's own bucket."""
    low, scale, first = buckets
    out = np.empty(len(values), np.int64)
    n = len(universe)
    for i in range(len(values)):
        x = values[i]
        b = bucket_of(x, low, scale, max(n - 1, 0))
        r, high = first[b], first[b + 1]
        while r < high:  # the first value of the bucket not below x
            mid = (r + high) >> 1
            if universe[mid] < x:
                r = mid + 1
            else:
                high = mid
        out[i] = 2 * r + (1 if r < n and universe[r] == x else 0)
    return out


@numba.njit(cache=True)
def same_bytes(text, at, pattern, start, length):
    """Whether text[at:at + length] equals pattern[start:start + length]."""
    for i in range(length):
        if text[at + i] != pattern[start + i]:
            return False
    return True


@numba.njit(cache=True)
def string_holds(pid, code, patterns, strings):
    """Whether the batch's string `code` satisfies pattern `pid`, both as
    UTF-8 bytes (surrogates passed through): prefix, suffix, contains, or
    wildcard l*r (starts with l, ends with r, the two not overlapping).
    `patterns` = (operator codes, bytes, first part's start and length,
    second part's start and length) by pattern ID; `strings` = (bytes,
    offsets) by string code. Byte order and byte matches are code-point
    ones: an encoding's multi-byte sequences never start inside another."""
    ops, text_of_pattern, a_start, a_len, b_start, b_len = patterns
    text, offsets = strings
    at, n = offsets[code], offsets[code + 1] - offsets[code]
    op, a, la = ops[pid], a_start[pid], a_len[pid]
    if op == 6:  # prefix
        return la <= n and same_bytes(text, at, text_of_pattern, a, la)
    if op == 7:  # suffix
        return la <= n and same_bytes(text, at + n - la, text_of_pattern, a, la)
    if op == 8:  # contains
        for i in range(n - la + 1):
            if same_bytes(text, at + i, text_of_pattern, a, la):
                return True
        return False
    b, lb = b_start[pid], b_len[pid]  # wildcard
    return la + lb <= n and same_bytes(text, at, text_of_pattern, a, la) and same_bytes(text, at + n - lb, text_of_pattern, b, lb)


@numba.njit(cache=True)
def ranked_holds(op, value, wanted):
    """Whether a rank key `value` satisfies ranked operator `op` (or `any`)
    against the constraint's rank key `wanted`."""
    if op == 0:
        return value == wanted
    if op == 1:
        return value != wanted
    if op == 2:
        return value < wanted
    if op == 3:
        return value <= wanted
    if op == 4:
        return value > wanted
    if op == 5:
        return value >= wanted
    return op == ANY_CODE


@numba.njit(cache=True)
def by_event(ev, n_events):
    """A counting sort: (order, start) such that event e's occurrences are
    order[start[e]:start[e + 1]], in their original order."""
    start = np.zeros(n_events + 1, np.int64)
    for o in range(len(ev)):
        start[ev[o] + 1] += 1
    for e in range(n_events):
        start[e + 1] += start[e]
    fill = start[:-1].copy()
    order = np.empty(len(ev), np.int64)
    for o in range(len(ev)):
        order[fill[ev[o]]] = o
        fill[ev[o]] += 1
    return order, start


@numba.njit(cache=True, nogil=True)
def pattern_pairs(pair_group, pair_code, pattern_ptr, pattern_pid, patterns, strings):
    """For each distinct (group, string code) pair, the pattern pivots of the
    group that the string satisfies, as CSR (ptr, pattern positions); and
    the tests made."""
    ptr = np.zeros(len(pair_group) + 1, np.int64)
    found = np.empty(max(len(pair_group), 16), np.int64)
    n, tests = 0, 0
    for k in range(len(pair_group)):
        g = pair_group[k]
        for p in range(pattern_ptr[g], pattern_ptr[g + 1]):
            tests += 1
            if string_holds(pattern_pid[p], pair_code[k], patterns, strings):
                if n == len(found):
                    bigger = np.empty(2 * n, np.int64)
                    bigger[:n] = found
                    found = bigger
                found[n] = p
                n += 1
        ptr[k + 1] = n
    return ptr, found[:n], tests
