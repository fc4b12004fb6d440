"""The compiled engine's match (spec/03-matching.md DEF-MATCH-7 steps 2 to
5), one chunk of a batch's events at a time (`match_chunk`), compiled with
numba and run without the GIL, so that chunks run on threads side by side.

The index arrives as `kernel_layout` lays it out:
- `info`, one row per group and one more: columns INFO_MERGED (where the
  group's merged ranked keys start), INFO_LOW and INFO_SPAN (their least
  key and range), INFO_BUCKET (where its buckets start), INFO_ANY (its
  `any` pivots' first candidate), INFO_PATTERN (its first pattern
  position), then per ranked operator op the first candidate of its pivots
  on the group (INFO_SEGMENT + op); row g + 1 ends group g's;
- `merged`, `first` and `cuts`: the merged keys, their buckets' first keys,
  and each key's candidate cuts per operator (`kernel_layout.merged_search`);
- `cands` = (slot, signature, rest_ptr, rest) by candidate
  (`kernel_layout.candidates`), and `bits`, each group's signature bit;
- `pattern` = (pattern ID, first candidate) by pattern position.
"""

from __future__ import annotations

import numba
import numpy as np

from subsum.impl.matching.columnar.kernel_layout import INFO_ANY, INFO_BUCKET, INFO_LOW, INFO_MERGED, INFO_PATTERN, INFO_SEGMENT, INFO_SPAN
from subsum.impl.matching.columnar.kernels import ANY_CODE, ranked_holds, string_holds


@numba.njit(cache=True, nogil=True)
def by_group(ev, order, start, e0, e1, gid, bits, n_groups):
    """The occurrences of events e0 … e1 - 1 by group, events ascending
    within a group (a counting sort): (group_ptr, occurrences), each
    event's signature (the OR of its groups' bits), and the first event
    holding a group twice (-1 if none: a batch must be a Map, DEF-DATA-4)."""
    group_ptr = np.zeros(n_groups + 1, np.int64)
    for i in range(start[e0], start[e1]):
        if gid[order[i]] >= 0:
            group_ptr[gid[order[i]] + 1] += 1
    for g in range(n_groups):
        group_ptr[g + 1] += group_ptr[g]
    fill = group_ptr[:-1].copy()
    occurrences = np.empty(group_ptr[n_groups], np.int64)
    event_bits = np.zeros(e1 - e0, np.uint64)
    twice = -1
    for e in range(e0, e1):
        for i in range(start[e], start[e + 1]):
            g = gid[order[i]]
            if g >= 0:
                if fill[g] > group_ptr[g] and ev[occurrences[fill[g] - 1]] == e and twice < 0:
                    twice = e
                occurrences[fill[g]] = order[i]
                fill[g] += 1
                event_bits[e - e0] |= bits[g]
    return group_ptr, occurrences, event_bits, twice


@numba.njit(cache=True, nogil=True)
def group_spans(g, occurrences, rkey, scode, info, merged, first, cuts, pattern, memo, patterns, strings, spans):
    """The candidate ranges that group g's occurrences satisfy, as rows
    (occurrence, first candidate, end) of spans (grown as needed): one
    search of the group's merged keys, inside the key's bucket, serves every
    ranked operator; the `any` pivots are read off; each pattern pivot is
    tested (or read from the memo). Returns (spans, rows, searches)."""
    pattern_pid, pattern_cands = pattern
    pair, pair_ptr, pair_pos = memo  # pair[o]: occurrence o's (group, string) pair, -1 for none; empty: no memo
    a, n = info[g, INFO_MERGED], info[g + 1, INFO_MERGED] - info[g, INFO_MERGED]
    low, span = info[g, INFO_LOW], info[g, INFO_SPAN]
    n_spans, searches = 0, 0
    for o in occurrences:
        spans = grow(spans, n_spans + 13 + info[g + 1, INFO_PATTERN] - info[g, INFO_PATTERN], 3)  # room for this occurrence's
        x = rkey[o]
        if n > 0:  # some ranked pivot on the group
            searches += 1
            if x < low:
                k = 0
            elif x - low >= span:
                k = n
            else:  # the first key not below x, inside x's bucket
                b = info[g, INFO_BUCKET] + (x - low) * n // span
                k, high = first[b], first[b + 1]
                while k < high:
                    mid = (k + high) >> 1
                    if merged[a + mid] < x:
                        k = mid + 1
                    else:
                        high = mid
            row, equal = a + g + k, k < n and merged[a + k] == x
            for op in range(6):
                lo, hi = info[g, INFO_SEGMENT + op], info[g + 1, INFO_SEGMENT + op]
                if lo == hi:
                    continue
                left = cuts[row, op]
                right = cuts[row + 1, op] if equal else left
                if op == 0:  # attribute = v: v == x
                    lo, hi = left, right
                elif op == 1:  # attribute != v: every v but x
                    spans[n_spans, 0], spans[n_spans, 1], spans[n_spans, 2] = o, lo, left
                    n_spans, lo = n_spans + 1, right
                elif op == 2:  # attribute < v: v > x
                    lo = right
                elif op == 3:  # attribute <= v: v >= x
                    lo = left
                elif op == 4:  # attribute > v: v < x
                    hi = left
                else:  # attribute >= v: v <= x
                    hi = right
                spans[n_spans, 0], spans[n_spans, 1], spans[n_spans, 2] = o, lo, hi
                n_spans += 1
        if info[g, INFO_ANY] < info[g + 1, INFO_ANY]:
            searches += 1
            spans[n_spans, 0], spans[n_spans, 1], spans[n_spans, 2] = o, info[g, INFO_ANY], info[g + 1, INFO_ANY]
            n_spans += 1
        if len(pair) and pair[o] >= 0:  # the pattern pivots its (group, string) pair satisfies, tested once per batch
            for u in range(pair_ptr[pair[o]], pair_ptr[pair[o] + 1]):
                spans[n_spans, 0], spans[n_spans, 1], spans[n_spans, 2] = o, pattern_cands[pair_pos[u]], pattern_cands[pair_pos[u] + 1]
                n_spans += 1
        elif scode[o] >= 0:
            for p in range(info[g, INFO_PATTERN], info[g + 1, INFO_PATTERN]):
                searches += 1  # each pattern pivot on the group is tested
                if string_holds(pattern_pid[p], scode[o], patterns, strings):
                    spans[n_spans, 0], spans[n_spans, 1], spans[n_spans, 2] = o, pattern_cands[p], pattern_cands[p + 1]
                    n_spans += 1
    return spans, n_spans, searches


@numba.njit(cache=True, nogil=True)
def grow(out, n, width):
    """`out`, an array of rows of `width`, with room for row n (doubled when full)."""
    if n < out.shape[0]:
        return out
    bigger = np.empty((max(2 * out.shape[0], n + 1), width), np.int64)
    bigger[:out.shape[0]] = out
    return bigger


@numba.njit(cache=True, nogil=True)
def check_survivors(survivors, n, e0, e1, order, start, gid, rkey, scode, cands, patterns, strings, seen, at, out, n_out):
    """Check the other constraints of each (event, candidate) survivor
    against its event, until one fails, event by event (`seen` and `at`:
    where the event's attribute of each group is); append the matches to
    out. Returns (out, n_out, constraints checked)."""
    slot, _signature, cand_rest, rest = cands
    ptr = np.zeros(e1 - e0 + 1, np.int64)
    for s in range(n):
        ptr[survivors[s, 0] - e0 + 1] += 1
    for e in range(e1 - e0):
        ptr[e + 1] += ptr[e]
    fill = ptr[:-1].copy()
    mine = np.empty(n, np.int64)
    for s in range(n):
        mine[fill[survivors[s, 0] - e0]] = survivors[s, 1]
        fill[survivors[s, 0] - e0] += 1
    checks = 0
    for e in range(e0, e1):
        if ptr[e - e0] == ptr[e - e0 + 1]:
            continue
        for i in range(start[e], start[e + 1]):
            if gid[order[i]] >= 0:
                seen[gid[order[i]]], at[gid[order[i]]] = e, order[i]
        for s in range(ptr[e - e0], ptr[e - e0 + 1]):
            c, ok = mine[s], True
            for r in range(cand_rest[c], cand_rest[c + 1]):
                checks += 1
                op, h, wanted = rest[3 * r], rest[3 * r + 1], rest[3 * r + 2]
                if seen[h] != e:
                    ok = False  # the event lacks the attribute
                elif op < 6 or op == ANY_CODE:
                    ok = ranked_holds(op, rkey[at[h]], wanted)
                else:
                    ok = scode[at[h]] >= 0 and string_holds(wanted, scode[at[h]], patterns, strings)
                if not ok:
                    break
            if ok:
                out = grow(out, n_out, 2)
                out[n_out, 0], out[n_out, 1] = e, slot[c]
                n_out += 1
    return out, n_out, checks


@numba.njit(cache=True, nogil=True)
def sorted_by_event(out, n_out, e0, e1):
    """The first n_out rows of out, stably sorted by their event."""
    ptr = np.zeros(e1 - e0 + 1, np.int64)
    for s in range(n_out):
        ptr[out[s, 0] - e0 + 1] += 1
    for e in range(e1 - e0):
        ptr[e + 1] += ptr[e]
    result = np.empty((n_out, 2), np.int64)
    for s in range(n_out):
        result[ptr[out[s, 0] - e0]] = out[s]
        ptr[out[s, 0] - e0] += 1
    return result


@numba.njit(cache=True, nogil=True)
def scan(spans, n_spans, ev, event_bits, e0, signature, survivors, n_survivors):
    """The candidates of spans[:n_spans] that pass their signature test,
    appended to survivors as (event, candidate) rows while there is room: a
    candidate whose signature has a bit its event's lacks names a group the
    event lacks, and fails unchecked. Returns (n_survivors, spans scanned)."""
    room = len(survivors)
    for u in range(n_spans):
        e = ev[spans[u, 0]]
        missing = ~event_bits[e - e0]
        for c in range(spans[u, 1], spans[u, 2]):
            if signature[c] & missing:
                continue
            if n_survivors == room:
                spans[u, 1] = c  # the rest of this span is still to scan
                return n_survivors, u
            survivors[n_survivors, 0], survivors[n_survivors, 1] = e, c
            n_survivors += 1
    return n_survivors, n_spans


@numba.njit(cache=True, nogil=True)
def match_chunk(ev, order, start, e0, e1, gid, rkey, scode, index, patterns, strings, memo, room):
    """Steps 3 to 5 for events e0 … e1 - 1, whose occurrences are
    order[start[e]:start[e + 1]] (`kernels.by_event`): the matching (event,
    slot) pairs as an (n, 2) array by event, the index searches, the
    constraints checked, and the first event holding a group twice (-1 if
    none). `index` = (info, merged, first, cuts, bits, cands, pattern);
    `memo` = (pair of each occurrence or -1, ptr, pattern positions) of
    `kernels.pattern_pairs`, or three empty arrays.

    Group by group, so that a group's pivots stay in the cache, its
    occurrences' satisfied pivots give candidate ranges (`group_spans`);
    the candidates that pass their signature test (`scan`) are checked
    (`check_survivors`) whenever `room` are waiting, and at the end. A
    subscription is a candidate only through its one pivot, which an
    event's one occurrence of its group finds once, so none is checked
    twice. (A numba call passing a dozen arrays costs more than a search:
    the work is cut into calls per group, not per occurrence.)"""
    info, merged, first, cuts, bits, cands, pattern = index
    n_groups = len(bits)
    group_ptr, occurrences, event_bits, twice = by_group(ev, order, start, e0, e1, gid, bits, n_groups)
    out, n_out, searches, checks, flushed = np.empty((64, 2), np.int64), 0, 0, 0, False
    if twice >= 0:
        return out[:0], searches, checks, twice
    spans, survivors, n_survivors = np.empty((64, 3), np.int64), np.empty((room, 2), np.int64), 0
    seen, at = np.full(n_groups, -1, np.int64), np.zeros(n_groups, np.int64)
    for g in range(n_groups):
        if group_ptr[g] == group_ptr[g + 1]:
            continue
        spans, n_spans, done = group_spans(g, occurrences[group_ptr[g]:group_ptr[g + 1]], rkey, scode, info, merged, first, cuts, pattern,
                                           memo, patterns, strings, spans)
        searches += done
        scanned = 0
        while scanned < n_spans:
            n_survivors, u = scan(spans[scanned:], n_spans - scanned, ev, event_bits, e0, cands[1], survivors, n_survivors)
            scanned += u
            if scanned < n_spans:  # no room left: check the survivors, then scan on
                out, n_out, done = check_survivors(survivors, n_survivors, e0, e1, order, start, gid, rkey, scode, cands, patterns,
                                                   strings, seen, at, out, n_out)
                checks, n_survivors, flushed = checks + done, 0, True
    out, n_out, done = check_survivors(survivors, n_survivors, e0, e1, order, start, gid, rkey, scode, cands, patterns, strings,
                                       seen, at, out, n_out)
    return (sorted_by_event(out, n_out, e0, e1) if flushed else out[:n_out]), searches, checks + done, -1
