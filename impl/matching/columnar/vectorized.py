"""The vectorized engine: numpy over a columnar batch (spec/03-matching.md DEF-MATCH-5).

Its cost per batch follows the work the constraints select, not
subscriptions × events:

1. Rank keys. Per type, the distinct values of the `=`, `!=` and ordering
   constraints form a sorted universe U. A value's key is 2r+1 if it equals
   U[r], else 2r where r is the number of U's values below it. Keys compare
   exactly as values do, so every numeric operator becomes an integer
   comparison, and `gid * STRIDE + key` (gid numbers the (type, name)
   groups) orders all groups in one sorted array.
2. Pivots. Each subscription picks one pivot constraint, the one likely to be
   most selective: `=` first, then prefix/suffix/wildcard, contains,
   ordering, `=` on bool, `!=`, `any`.
3. Probe. The batch's distinct attribute keys are binary-searched (one
   `searchsorted` per operator, for all attributes at once) against the
   pivots; an ordering operator yields a range of pivots, `!=` two ranges.
   String patterns are probed once per distinct string value of the batch
   with the hash index of `cindex`.
4. Candidates. Each (attribute, pivot) hit fans out to (event, subscription)
   candidate pairs: the events holding the attribute × the subscriptions
   whose pivot it is.
5. Check. Every other constraint of each candidate is checked in bulk: the
   event's attribute of that (type, name) is found by binary search in the
   sorted (event, gid) keys, and compared by rank key (or looked up among
   the batch's satisfied string patterns).

Adding or removing a subscription marks the compiled arrays stale; the next
match (or `prepare()`) rebuilds them.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from subsum.impl.matching.columnar.arrays import EMPTY, csr, exact_positions, expand_csr, expand_ranges
from subsum.impl.matching.columnar.batch import ColumnarBatch, not_a_map
from subsum.impl.matching.ops import OP_CODE
from subsum.impl.matching.columnar.pivot_engine import PivotEngine
from subsum.impl.matching.columnar.pivots import PivotIndex

CHUNK = 1 << 21  # candidate pairs checked per step, to bound memory


class VectorizedEngine(PivotEngine):
    name = "vectorized"

    # -- the five steps ---------------------------------------------------

    def _match_pairs(self, batch: ColumnarBatch) -> tuple[np.ndarray, np.ndarray]:
        self.prepare()
        c = cast(PivotIndex, self._compiled)  # prepare() compiled it
        if c.n_constraints == 0 or batch.n_events == 0:
            return EMPTY, EMPTY
        ev, gid, rkey, scode = self._relevant_occurrences(batch, c)
        if len(ev) == 0:
            return EMPTY, EMPTY
        satisfied_patterns = self._probe_strings(batch, c, np.unique(scode[scode >= 0]))
        cand_ev, cand_slot = self._candidates(c, ev, gid, rkey, scode, satisfied_patterns)
        return self._check(c, ev, gid, rkey, scode, satisfied_patterns, cand_ev, cand_slot)

    def _relevant_occurrences(self, batch: ColumnarBatch, c: PivotIndex):
        """Step 1: the attribute occurrences whose (type, name) some constraint
        names, with their group, rank key and string code (-1 if not a string)."""
        parts = []
        for t, col in batch.columns.items():
            if not len(col):
                continue
            gid_of_name = np.array([c.gid.get((t, n), -1) for n in batch.names] or [-1], np.int64)
            g = gid_of_name[col.name]
            keep = g >= 0
            if not keep.any():
                continue
            value = col.value[keep]
            if t == "bool":
                key = 1 + 2 * value.astype(np.int64)
                scode = np.full(len(value), -1, np.int64)
            elif t == "string":
                rank = np.array([c.string_rank.get(s, -1) for s in batch.strings] or [-1], np.int64)[value]
                key = np.where(rank >= 0, 1 + 2 * rank, 0)
                scode = value
            else:
                universe = c.universe[t]
                r = np.searchsorted(universe, value)
                equal = np.zeros(len(value), bool)
                inside = r < len(universe)
                equal[inside] = universe[r[inside]] == value[inside]
                key = 2 * r + equal
                scode = np.full(len(value), -1, np.int64)
            parts.append((col.event[keep], g[keep], key.astype(np.int64), scode.astype(np.int64)))
        if not parts:
            return EMPTY, EMPTY, EMPTY, EMPTY
        return tuple(np.concatenate(p) for p in zip(*parts))

    def _probe_strings(self, batch: ColumnarBatch, c: PivotIndex, codes: np.ndarray) -> np.ndarray:
        """The satisfied (string code, pattern ID) pairs, as sorted keys code * n_patterns + pid."""
        if not c.patterns or len(codes) == 0:
            return EMPTY
        keys: list[np.ndarray] = []
        before = c.patterns.lookups
        satisfied, strings, n_patterns = c.patterns.satisfied, batch.strings, c.n_patterns
        for code in codes.tolist():
            base = code * n_patterns
            keys.extend(base + pid for pid in satisfied(strings[code]))
        self.stats.index_lookups += c.patterns.lookups - before
        return np.unique(np.array(keys, np.int64))

    def _candidates(self, c, ev, gid, rkey, scode, satisfied_patterns):
        """Steps 3 and 4: the (event, slot) pairs whose pivot the event satisfies."""
        hits_attr, hits_con = [], []  # (distinct attribute, pivot constraint)
        # Ranked pivots and `any`, over distinct (gid, rank key).
        composite = gid * c.stride + rkey
        attrs_, inverse = np.unique(composite, return_inverse=True)
        attr_gid = attrs_ // c.stride
        lookups = 0
        for op, (keys, cons, bounds) in c.pivot_ranked.items():
            lookups += len(attrs_)
            low, high = bounds[attr_gid], bounds[attr_gid + 1]
            if op == "=":
                position, found = exact_positions(keys, attrs_)
                ranges = [(position, position + found)]
            elif op == "<":
                ranges = [(np.searchsorted(keys, attrs_, "right"), high)]
            elif op == "<=":
                ranges = [(np.searchsorted(keys, attrs_, "left"), high)]
            elif op == ">":
                ranges = [(low, np.searchsorted(keys, attrs_, "left"))]
            elif op == ">=":
                ranges = [(low, np.searchsorted(keys, attrs_, "right"))]
            else:  # "!="
                ranges = [(low, np.searchsorted(keys, attrs_, "left")), (np.searchsorted(keys, attrs_, "right"), high)]
            for start, end in ranges:
                owner, position = expand_ranges(start, end)
                hits_attr.append(owner)
                hits_con.append(cons[position])
        any_gids, any_cons = c.pivot_any
        if len(any_gids):
            lookups += len(attrs_)
            position, found = exact_positions(any_gids, attr_gid)
            hits_attr.append(np.flatnonzero(found))
            hits_con.append(any_cons[position[found]])
        pairs = [self._fan_out(c, ev, inverse, len(attrs_), hits_attr, hits_con)]
        # Pattern pivots, over distinct (gid, string code).
        pattern_keys, pattern_cons = c.pivot_pattern
        if len(pattern_keys) and len(satisfied_patterns):
            is_string = scode >= 0
            string_key = gid[is_string] * (int(scode.max()) + 1) + scode[is_string]
            sattrs, sinverse = np.unique(string_key, return_inverse=True)
            s_gid = sattrs // (int(scode.max()) + 1)
            s_code = sattrs % (int(scode.max()) + 1)
            # Each distinct string attribute's satisfied pattern IDs.
            pat_code = satisfied_patterns // c.n_patterns
            pat_ptr = np.searchsorted(pat_code, np.arange(int(scode.max()) + 2))
            owner, position = expand_ranges(pat_ptr[s_code], pat_ptr[s_code + 1])
            pid = satisfied_patterns[position] % c.n_patterns
            lookups += len(owner)
            where, found = exact_positions(pattern_keys, pid * c.n_groups + s_gid[owner])
            pairs.append(self._fan_out(c, ev[is_string], sinverse, len(sattrs), [owner[found]], [pattern_cons[where[found]]]))
        self.stats.index_lookups += lookups
        return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])

    @staticmethod
    def _fan_out(c, ev, inverse, n_attrs, hits_attr, hits_con):
        """(distinct attribute, pivot) hits -> (event, slot) candidates."""
        if not hits_attr:
            return EMPTY, EMPTY
        attr = np.concatenate(hits_attr)
        con = np.concatenate(hits_con)
        if len(attr) == 0:
            return EMPTY, EMPTY
        # hit -> slots whose pivot it is
        hit, slot = expand_csr(c.pivot_ptr, c.pivot_slots, con)
        attr = attr[hit]
        # attribute -> events holding it (AEList as CSR)
        ae_ptr, ae_events = csr(inverse, ev, n_attrs)
        k, event = expand_csr(ae_ptr, ae_events, attr)
        return event, slot[k]

    def _check(self, c, ev, gid, rkey, scode, satisfied_patterns, cand_ev, cand_slot):
        """Step 5: keep the candidates whose every other constraint holds."""
        if len(cand_ev) == 0:
            return EMPTY, EMPTY
        event_key = ev * c.n_groups + gid
        order = np.argsort(event_key)
        event_key, rkey, scode = event_key[order], rkey[order], scode[order]
        twice = np.flatnonzero(event_key[1:] == event_key[:-1])
        if len(twice):  # the look-up below, and the candidates, assume one occurrence per (event, group)
            raise not_a_map(int(event_key[twice[0]] // c.n_groups))
        kept_ev, kept_slot = [], []
        checks = 0
        for start in range(0, len(cand_ev), CHUNK):
            cev, cslot = cand_ev[start:start + CHUNK], cand_slot[start:start + CHUNK]
            pair, con = expand_csr(c.rest_ptr, c.rest_con, cslot)
            checks += len(pair)
            where, present = exact_positions(event_key, cev[pair] * c.n_groups + c.cgid[con])
            value, wanted, op = rkey[where], c.ckey[con], c.cop[con]
            ok = present.copy()
            for name, code in OP_CODE.items():
                sel = op == code
                if not sel.any():
                    continue
                v, w = value[sel], wanted[sel]
                if name == "=":
                    holds = v == w
                elif name == "!=":
                    holds = v != w
                elif name == "<":
                    holds = v < w
                elif name == "<=":
                    holds = v <= w
                elif name == ">":
                    holds = v > w
                elif name == ">=":
                    holds = v >= w
                elif name == "any":
                    continue
                else:
                    s = scode[where[sel]]
                    _, holds = exact_positions(satisfied_patterns, s * c.n_patterns + w)
                    holds &= s >= 0
                ok[sel] &= holds
            failed = np.bincount(pair[~ok], minlength=len(cev))
            good = failed == 0
            kept_ev.append(cev[good])
            kept_slot.append(cslot[good])
        self.stats.counter_increments += checks
        return np.concatenate(kept_ev), np.concatenate(kept_slot)
