"""numba kernels of the compiled engine (spec/03-matching.md DEF-MATCH-6):
steps 3 to 5 of DEF-MATCH-5 as one loop over a batch's attribute
occurrences, compiled to machine code.

The occurrences arrive sorted by (event, group): each event's are a run, and
within it a group is found by binary search. Per occurrence and per pivot
operator with pivots on its group, one binary search of the sorted pivot
keys gives the satisfied pivots; each pivot's subscriptions are candidates
(once per event: `mark`), and each candidate's other constraints are checked
against the event's occurrences until one fails. String patterns are tested
in the kernel on the batch's strings as UTF-8 bytes (`string_holds`).

Operator codes are `vectorized.OP_CODE`'s: = != < <= > >= are 0 … 5, the
patterns 6 … 9, `any` 10. Kernels are cached on disk (`cache=True`): a
second process loads them instead of compiling.
"""

from __future__ import annotations

import numba
import numpy as np

ANY_CODE = 10


@numba.njit(cache=True)
def ranked_range(op, keys, low, high, x):
    """The pivot positions of one ranked operator, within its group's sorted
    segment [low, high) of keys, that an attribute of composite key x
    satisfies: up to two ranges, as (a, b, c, d) for [a, b) and [c, d)."""
    left = low + np.searchsorted(keys[low:high], x, "left")
    right = low + np.searchsorted(keys[low:high], x, "right")
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
def holds(slot, first, end, gid, rkey, scode, rest_ptr, rest_con, cop, cgid, ckey, patterns, strings, checks):
    """Whether every non-pivot constraint of `slot` holds for the event whose
    occurrences are [first, end); counts each constraint checked in
    checks[0], stopping at the first that fails."""
    for q in range(rest_ptr[slot], rest_ptr[slot + 1]):
        con = rest_con[q]
        checks[0] += 1
        g = cgid[con]
        k = first + np.searchsorted(gid[first:end], g)
        if k >= end or gid[k] != g:
            return False  # the event lacks the attribute
        op, value, wanted = cop[con], rkey[k], ckey[con]
        if op == 0:
            ok = value == wanted
        elif op == 1:
            ok = value != wanted
        elif op == 2:
            ok = value < wanted
        elif op == 3:
            ok = value <= wanted
        elif op == 4:
            ok = value > wanted
        elif op == 5:
            ok = value >= wanted
        elif op == ANY_CODE:
            ok = True
        else:  # a pattern, tested on the event's string
            ok = scode[k] >= 0 and string_holds(wanted, scode[k], patterns, strings)
        if not ok:
            return False
    return True


@numba.njit(cache=True)
def emit(out, n, event, slot):
    """Append (event, slot) to the growable pair buffer `out`; returns it (doubled when full)."""
    if n == out.shape[0]:
        bigger = np.empty((2 * n, 2), np.int64)
        bigger[:n] = out
        out = bigger
    out[n, 0] = event
    out[n, 1] = slot
    return out


@numba.njit(cache=True)
def candidates_of(o, keys, cons, bounds, any_ptr, any_cons, pattern_ptr, pattern_cons, gid, rkey, scode, ckey, patterns,
                  strings, stride, found, lookups):
    """The pivot constraints occurrence o satisfies, written to `found`
    (returned with their count); counts each pivot-index search in lookups[0]."""
    n = 0
    g = gid[o]
    for op in range(6):
        low, high = bounds[op, g], bounds[op, g + 1]
        if low == high:
            continue  # no pivot of this operator on the group
        lookups[0] += 1
        a, b, c, d = ranked_range(op, keys, low, high, g * stride + rkey[o])
        for p in range(a, b):
            found, n = _push(found, n, cons[p])
        for p in range(c, d):
            found, n = _push(found, n, cons[p])
    if any_ptr[g] < any_ptr[g + 1]:
        lookups[0] += 1
        for p in range(any_ptr[g], any_ptr[g + 1]):
            found, n = _push(found, n, any_cons[p])
    if scode[o] >= 0:
        for p in range(pattern_ptr[g], pattern_ptr[g + 1]):  # the pattern pivots on the group, each tested
            lookups[0] += 1
            if string_holds(ckey[pattern_cons[p]], scode[o], patterns, strings):
                found, n = _push(found, n, pattern_cons[p])
    return found, n


@numba.njit(cache=True)
def _push(buffer, n, value):
    if n == buffer.shape[0]:
        bigger = np.empty(2 * n, np.int64)
        bigger[:n] = buffer
        buffer = bigger
    buffer[n] = value
    return buffer, n + 1


@numba.njit(cache=True)
def match_occurrences(ev, gid, rkey, scode, keys, cons, bounds, any_ptr, any_cons, pattern_ptr, pattern_cons,
                      pivot_ptr, pivot_slots, rest_ptr, rest_con, cop, cgid, ckey, patterns, strings, n_slots, stride):
    """Steps 3 to 5 over occurrences sorted by (event, group): the matching
    (event, slot) pairs as an (n, 2) array, the pivot-index searches and the
    constraints checked."""
    mark = np.full(n_slots, -1, np.int64)  # the last event each slot was a candidate of
    out = np.empty((64, 2), np.int64)
    found = np.empty(64, np.int64)
    n_out = 0
    lookups = np.zeros(1, np.int64)
    checks = np.zeros(1, np.int64)
    first, m = 0, len(ev)
    while first < m:
        end = first
        while end < m and ev[end] == ev[first]:
            end += 1
        for o in range(first, end):
            found, n_found = candidates_of(o, keys, cons, bounds, any_ptr, any_cons, pattern_ptr, pattern_cons, gid, rkey,
                                           scode, ckey, patterns, strings, stride, found, lookups)
            for f in range(n_found):
                con = found[f]
                for q in range(pivot_ptr[con], pivot_ptr[con + 1]):
                    slot = pivot_slots[q]
                    if mark[slot] == ev[first]:
                        continue
                    mark[slot] = ev[first]
                    if holds(slot, first, end, gid, rkey, scode, rest_ptr, rest_con, cop, cgid, ckey, patterns, strings, checks):
                        out = emit(out, n_out, ev[first], slot)
                        n_out += 1
        first = end
    return out[:n_out], lookups[0], checks[0]
