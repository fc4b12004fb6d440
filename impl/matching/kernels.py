"""numba kernels of the compiled engine (spec/03-matching.md DEF-MATCH-6):
steps 3 to 5 of DEF-MATCH-5 as one loop over a batch's attribute
occurrences, compiled to machine code.

The occurrences arrive sorted by (event, group): each event's are a run, and
within it a group is found by binary search. Per occurrence and per pivot
operator with pivots on its group, one binary search of the sorted pivot
keys gives the satisfied pivots; each pivot's subscriptions are candidates
(once per event: `mark`), and each candidate's other constraints are checked
against the event's occurrences until one fails. Patterns arrive as the
batch's satisfied (string code, pattern) keys.

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
def holds(slot, first, end, gid, rkey, scode, rest_ptr, rest_con, cop, cgid, ckey, satisfied, n_patterns, checks):
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
        else:  # a pattern: is (string code, pattern) among the satisfied keys?
            key = scode[k] * n_patterns + wanted
            p = np.searchsorted(satisfied, key)
            ok = scode[k] >= 0 and p < len(satisfied) and satisfied[p] == key
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
def candidates_of(o, keys, cons, bounds, any_ptr, any_cons, pat_keys, pat_cons, gid, rkey, scode, sat_ptr, sat_pid,
                  stride, n_groups, found, lookups):
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
    code = scode[o]
    if code >= 0:
        for t in range(sat_ptr[code], sat_ptr[code + 1]):
            lookups[0] += 1
            key = sat_pid[t] * n_groups + g
            for p in range(np.searchsorted(pat_keys, key, "left"), np.searchsorted(pat_keys, key, "right")):
                found, n = _push(found, n, pat_cons[p])
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
def match_occurrences(ev, gid, rkey, scode, satisfied, sat_ptr, sat_pid, keys, cons, bounds, any_ptr, any_cons,
                      pat_keys, pat_cons, pivot_ptr, pivot_slots, rest_ptr, rest_con, cop, cgid, ckey,
                      n_slots, stride, n_groups, n_patterns):
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
            found, n_found = candidates_of(o, keys, cons, bounds, any_ptr, any_cons, pat_keys, pat_cons, gid, rkey, scode,
                                           sat_ptr, sat_pid, stride, n_groups, found, lookups)
            for f in range(n_found):
                con = found[f]
                for q in range(pivot_ptr[con], pivot_ptr[con + 1]):
                    slot = pivot_slots[q]
                    if mark[slot] == ev[first]:
                        continue
                    mark[slot] = ev[first]
                    if holds(slot, first, end, gid, rkey, scode, rest_ptr, rest_con, cop, cgid, ckey, satisfied, n_patterns,
                             checks):
                        out = emit(out, n_out, ev[first], slot)
                        n_out += 1
        first = end
    return out[:n_out], lookups[0], checks[0]
