"""numba kernels of the compiled engine (spec/03-matching.md DEF-MATCH-7):
step 1's numeric rank keys and steps 3 to 5 of DEF-MATCH-5 as loops over a
batch's attribute occurrences, compiled to machine code.

`match_events` groups the occurrences by event with a counting sort. For
each event it first writes where each of the event's groups is (`at`,
stamped with the event in `seen`): a batch is a Map per event (DEF-DATA-4),
so a group occurs at most once, and finding an event's attribute of a
constraint is one array read. Then, per occurrence and per pivot operator
with pivots on its group, one binary search of the sorted pivot keys gives
the satisfied pivots; each pivot's subscriptions become candidates (once
per event: `mark`), and each candidate's other constraints are checked
until one fails. String patterns are tested on the batch's strings as UTF-8
bytes (`string_holds`).

Operator codes are `vectorized.OP_CODE`'s: = != < <= > >= are 0 … 5, the
patterns 6 … 9, `any` 10. The index arrives as two tuples:
pivots = (keys, cons, bounds, any_ptr, any_cons, pattern_ptr, pattern_cons)
and subs = (block_ptr, blocks, ckey) (`candidate_blocks`; ckey is each
constraint's key, here a pattern pivot's pattern ID).
Kernels are cached on disk (`cache=True`): a second process loads them
instead of compiling.
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
def first_above(keys, low, high, x, strict):
    """The first position in the sorted keys[low:high] whose key is > x
    (strict) or >= x (not strict)."""
    while low < high:
        mid = (low + high) >> 1
        if keys[mid] < x or (strict and keys[mid] == x):
            low = mid + 1
        else:
            high = mid
    return low


@numba.njit(cache=True)
def ranked_range(op, keys, low, high, x):
    """The pivot positions of one ranked operator, within its group's sorted
    segment [low, high) of keys, that an attribute of composite key x
    satisfies: up to two ranges, as (a, b, c, d) for [a, b) and [c, d)."""
    left = first_above(keys, low, high, x, False)
    right = first_above(keys, left, high, x, True)
    if op == 0:  # attribute = v: v == x
        return left, right, 0, 0
    if op == 1:  # attribute != v: every v but x
        return low, left, right, high
    if op == 2:  # attribute < v: v > x
        return right, high, 0, 0
    if op == 3:  # attribute <= v: v >= x
        return left, high, 0, 0
    if op == 4:  # attribute > v: v < x
        return low, left, 0, 0
    return low, right, 0, 0  # attribute >= v: v <= x


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
def candidate_blocks(pivot_ptr, pivot_slots, rest_ptr, rest_con, cop, cgid, ckey):
    """The subscriptions by pivot constraint, laid out for the check: pivot
    c's are blocks[block_ptr[c]:block_ptr[c + 1]], each as its slot, its
    number k of other constraints, then those k as (operator, group, key)
    triples, the likely most selective first. A candidate's whole check is
    then one sequential read; returns (block_ptr, blocks)."""
    n = len(pivot_ptr) - 1
    block_ptr = np.zeros(n + 1, np.int64)
    for c in range(n):
        size = 0
        for q in range(pivot_ptr[c], pivot_ptr[c + 1]):
            size += 2 + 3 * (rest_ptr[pivot_slots[q] + 1] - rest_ptr[pivot_slots[q]])
        block_ptr[c + 1] = block_ptr[c] + size
    blocks = np.empty(block_ptr[n], np.int64)
    for c in range(n):
        pos = block_ptr[c]
        for q in range(pivot_ptr[c], pivot_ptr[c + 1]):
            slot = pivot_slots[q]
            blocks[pos], blocks[pos + 1] = slot, rest_ptr[slot + 1] - rest_ptr[slot]
            pos += 2
            for r in range(rest_ptr[slot], rest_ptr[slot + 1]):
                con = rest_con[r]
                blocks[pos], blocks[pos + 1], blocks[pos + 2] = cop[con], cgid[con], ckey[con]
                pos += 3
    return block_ptr, blocks


@numba.njit(cache=True)
def all_hold(blocks, pos, k, e, seen, at, rkey, scode, patterns, strings):
    """Whether the k constraints blocks[pos:pos + 3k], as (operator, group,
    key) triples, all hold for event e, whose occurrence of each group g is
    at[g] where seen[g] == e; and how many were checked, stopping at the
    first that fails."""
    for i in range(k):
        op, g, wanted = blocks[pos + 3 * i], blocks[pos + 3 * i + 1], blocks[pos + 3 * i + 2]
        if seen[g] != e:
            return False, i + 1  # the event lacks the attribute
        if op < 6 or op == ANY_CODE:
            if not ranked_holds(op, rkey[at[g]], wanted):
                return False, i + 1
        elif scode[at[g]] < 0 or not string_holds(wanted, scode[at[g]], patterns, strings):
            return False, i + 1
    return True, k


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


@numba.njit(cache=True)
def grow(out, n):
    """`out` with room for one more row (doubled when full)."""
    if n < out.shape[0]:
        return out
    bigger = np.empty((2 * n, 2), np.int64)
    bigger[:n] = out
    return bigger


@numba.njit(cache=True)
def take(source, low, high, found, n):
    """Append source[low:high] to found[n:]; returns the new count."""
    for p in range(low, high):
        found[n] = source[p]
        n += 1
    return n


@numba.njit(cache=True)
def pattern_pairs(pair_group, pair_code, pattern_ptr, pattern_cons, ckey, patterns, strings):
    """For each distinct (group, string code) pair, the pattern pivots of the
    group that the string satisfies, as CSR (ptr, cons); and the tests made."""
    ptr = np.zeros(len(pair_group) + 1, np.int64)
    cons = np.empty(max(len(pair_group), 16), np.int64)
    n, tests = 0, 0
    for k in range(len(pair_group)):
        g = pair_group[k]
        for p in range(pattern_ptr[g], pattern_ptr[g + 1]):
            tests += 1
            if string_holds(ckey[pattern_cons[p]], pair_code[k], patterns, strings):
                if n == len(cons):
                    bigger = np.empty(2 * n, np.int64)
                    bigger[:n] = cons
                    cons = bigger
                cons[n] = pattern_cons[p]
                n += 1
        ptr[k + 1] = n
    return ptr, cons[:n], tests


@numba.njit(cache=True)
def match_events(ev, gid, rkey, scode, n_events, n_groups, pivots, subs, patterns, strings, stride, memo):
    """Steps 3 to 5 over a batch's occurrences (in any order; group -1
    where no constraint names the attribute): the matching (event, slot)
    pairs as an (n, 2) array by event, the pivot-index searches, the
    constraints checked, and the first event holding a group twice (-1 if
    none: a batch must be a Map per event, DEF-DATA-4). `memo` = (pair, ptr,
    cons) of `pattern_pairs`, or three empty arrays. A subscription is a
    candidate only through its one pivot, which an event's one occurrence
    of its group finds once, so no candidate is checked twice. (One loop,
    the pivot search written inline: a numba call passing a dozen arrays
    per occurrence costs more than the search itself.)"""
    keys, cons, bounds, any_ptr, any_cons, pattern_ptr, pattern_cons = pivots
    block_ptr, blocks, ckey = subs
    pair, pair_ptr, pair_cons = memo  # pair[o]: occurrence o's (group, string) pair, -1 for none; empty: no memo
    order, start = by_event(ev, n_events)
    seen, at = np.full(n_groups, -1, np.int64), np.zeros(n_groups, np.int64)
    out, n_out = np.empty((64, 2), np.int64), 0
    found = np.empty(len(cons) + len(any_cons) + len(pattern_cons), np.int64)  # one occurrence's pivots
    searches, checks = 0, 0
    for e in range(n_events):
        for i in range(start[e], start[e + 1]):
            if gid[order[i]] >= 0:
                if seen[gid[order[i]]] == e:
                    return out[:0], searches, checks, e  # not a Map
                seen[gid[order[i]]], at[gid[order[i]]] = e, order[i]
        for i in range(start[e], start[e + 1]):
            o = order[i]
            g, n_found = gid[o], 0
            if g < 0:
                continue  # no constraint names the attribute
            for op in range(6):
                if bounds[op, g] < bounds[op, g + 1]:  # some pivot of this operator on the group
                    searches += 1
                    a, b, c, d = ranked_range(op, keys, bounds[op, g], bounds[op, g + 1], g * stride + rkey[o])
                    n_found = take(cons, c, d, found, take(cons, a, b, found, n_found))
            if any_ptr[g] < any_ptr[g + 1]:
                searches += 1
                n_found = take(any_cons, any_ptr[g], any_ptr[g + 1], found, n_found)
            if len(pair) and pair[o] >= 0:  # the pattern pivots its (group, string) pair satisfies, tested once per batch
                n_found = take(pair_cons, pair_ptr[pair[o]], pair_ptr[pair[o] + 1], found, n_found)
            else:
                for p in range(pattern_ptr[g], pattern_ptr[g + 1] if scode[o] >= 0 else 0):
                    searches += 1  # each pattern pivot on the group is tested
                    if string_holds(ckey[pattern_cons[p]], scode[o], patterns, strings):
                        n_found = take(pattern_cons, p, p + 1, found, n_found)
            for f in range(n_found):
                pos = block_ptr[found[f]]
                while pos < block_ptr[found[f] + 1]:  # each subscription whose pivot it is: a candidate
                    k = blocks[pos + 1]
                    ok, checked = all_hold(blocks, pos + 2, k, e, seen, at, rkey, scode, patterns, strings)
                    checks += checked
                    if ok:
                        out = grow(out, n_out)
                        out[n_out, 0], out[n_out, 1] = e, blocks[pos]
                        n_out += 1
                    pos += 2 + 3 * k
    return out[:n_out], searches, checks, -1
