"""CIndex: seed 001's multi-level constraint index, type -> name -> operator
-> constraint list (CL). Shared by `indexed` (ICCounting) and `rab`.

Each leaf maps a constraint value to the list of subscription slots that hold
that constraint (the CSList entry, the same list object), so a probe yields
the slot lists of every satisfied constraint. The leaves (spec/03-matching.md
DEF-MATCH-4):

- `<`, `<=`, `>`, `>=`: the values sorted by containment (seed 001 Theorem 1),
  CL[i] ≺ CL[i+1]: ascending for `<` and `<=`, descending for `>` and `>=`.
  The constraints an attribute value satisfies are a suffix CL[i:], and one
  binary search finds i (strict or non-strict bound, per operator).
- `=`: a hash from value to constraint.
- `!=`: a hash; every entry except the attribute's own value is satisfied.
- `any`: one slot list; every attribute of the (type, name) satisfies it.
- `prefix`, `suffix`: a hash from pattern to constraint, probed with the
  value's prefix (suffix) of every pattern length present in the leaf.
- `contains`: a hash, probed per pattern length present with the value's
  substrings of that length (at most |v| probes), or, when cheaper, each
  pattern of that length searched for in the value; memory stays linear.
- `wildcard` `l*r`: a hash on l, probed like `prefix`; then each r stored
  under that l is checked with endswith and the length condition.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any
from subsum.impl.matching.ops import ConstraintKey

ASCENDING = ("<", "<=")
DESCENDING = (">", ">=")
ORDERING = frozenset(ASCENDING + DESCENDING)
STRING_PATTERN_OPS = ("prefix", "suffix", "contains")


class OrderedLeaf:
    """A CL for an ordering operator, in containment order (Theorem 1).

    `values` holds the constraint values in containment order and `subs` the
    aligned slot lists. The satisfied constraints are a suffix, so their
    slots are one slice of `flat` (every slot list concatenated, rebuilt
    lazily after a change): `flat[offset[i]:]`.
    """

    __slots__ = ("op", "values", "subs", "_keys", "_flat", "_offset")

    def __init__(self, op: str):
        self.op = op
        self.values: list = []  # containment order
        self.subs: list[list[int]] = []
        self._keys: list = []  # ascending search keys: v, or -v for > and >=
        self._flat: list[int] | None = []
        self._offset: list[int] = [0]

    def _key(self, value):
        return -value if self.op in DESCENDING else value

    def add(self, value, subs: list[int]) -> None:
        key = self._key(value)
        i = bisect_left(self._keys, key)
        self._keys.insert(i, key)
        self.values.insert(i, value)
        self.subs.insert(i, subs)
        self._flat = None

    def discard(self, value) -> None:
        i = bisect_left(self._keys, self._key(value))
        del self._keys[i], self.values[i], self.subs[i]
        self._flat = None

    def changed(self) -> None:
        """A slot list changed in place (a subscription joined or left a constraint)."""
        self._flat = None

    def __len__(self) -> int:
        return len(self.values)

    def first_match(self, v) -> int:
        """The index i such that CL[i:] are exactly the constraints v satisfies."""
        op, keys = self.op, self._keys
        if op == "<":  # v < w: the values above v
            return bisect_right(keys, v)
        if op == "<=":  # v <= w
            return bisect_left(keys, v)
        if op == ">":  # v > w: keys are -w, so -w > -v
            return bisect_right(keys, -v)
        return bisect_left(keys, -v)  # ">=": -w >= -v

    def flat(self) -> tuple[list[int], list[int]]:
        """(every slot list concatenated in CL order, the offset of each constraint)."""
        if self._flat is None:
            flat: list[int] = []
            offset = [0]
            for subs in self.subs:
                flat.extend(subs)
                offset.append(len(flat))
            self._flat, self._offset = flat, offset
        return self._flat, self._offset


class PatternLeaf:
    """A hash leaf for prefix, suffix or contains, with the pattern lengths present."""

    __slots__ = ("op", "subs", "by_length", "_lengths")

    def __init__(self, op: str):
        self.op = op
        self.subs: dict[str, object] = {}  # slot lists in ConstraintIndex, pattern IDs in PatternProber
        self.by_length: dict[int, set[str]] = {}  # the patterns of each length present
        self._lengths: tuple[int, ...] | None = ()

    def add(self, pattern: str, subs: object) -> None:
        self.subs[pattern] = subs
        self.by_length.setdefault(len(pattern), set()).add(pattern)
        self._lengths = None

    def discard(self, pattern: str) -> None:
        del self.subs[pattern]
        same_length = self.by_length[len(pattern)]
        same_length.discard(pattern)
        if not same_length:
            del self.by_length[len(pattern)]
        self._lengths = None

    def __len__(self) -> int:
        return len(self.subs)

    def lengths(self) -> tuple[int, ...]:
        if self._lengths is None:
            self._lengths = tuple(sorted(self.by_length))
        return self._lengths

    def hits(self, v: str, out: list) -> int:
        """Append the value stored under every pattern v satisfies (each
        distinct pattern once); return the number of lookups made.

        For contains, per length L present, the cheaper of two probes: look up
        each of v's n - L + 1 substrings of length L, or search v for each
        pattern of length L (`in`, one lookup each). Either way the extra
        memory is one substring and the patterns found, linear in the input:
        the set of every substring of v is never built (a 100,000-character
        pattern against a 200,000-character value would need gigabytes)."""
        n = len(v)
        get = self.subs.get
        lookups = 0
        for length in self.lengths():
            if length > n:
                break
            if self.op == "prefix" or self.op == "suffix":
                lookups += 1
                found = get(v[:length] if self.op == "prefix" else v[n - length:])
                if found is not None:
                    out.append(found)
                continue
            patterns = self.by_length[length]
            if len(patterns) * n <= (n - length + 1) * length:  # searching for each pattern is cheaper
                for pattern in patterns:
                    lookups += 1
                    if pattern in v:
                        out.append(self.subs[pattern])
                continue
            seen: set[str] = set()
            for i in range(n - length + 1):
                key = v[i:i + length]
                lookups += 1
                if key not in seen:
                    found = get(key)
                    if found is not None:
                        seen.add(key)
                        out.append(found)
        return lookups


class WildcardLeaf:
    """Wildcard patterns l*r: a hash on l (probed like prefix), then each r checked."""

    __slots__ = ("by_left", "left_lengths")

    def __init__(self):
        self.by_left: dict[str, dict[str, object]] = {}
        self.left_lengths = PatternLeaf("prefix")  # only its length bookkeeping is used

    def add(self, pattern: str, subs: object) -> None:
        left, _, right = pattern.partition("*")
        rights = self.by_left.get(left)
        if rights is None:
            rights = self.by_left[left] = {}
            self.left_lengths.add(left, subs)
        rights[right] = subs

    def discard(self, pattern: str) -> None:
        left, _, right = pattern.partition("*")
        rights = self.by_left[left]
        del rights[right]
        if not rights:
            del self.by_left[left]
            self.left_lengths.discard(left)

    def __len__(self) -> int:
        return sum(map(len, self.by_left.values()))

    def hits(self, v: str, out: list) -> int:
        """Append the value stored under every pattern v satisfies; return
        the number of hash lookups made."""
        n = len(v)
        lookups = 0
        for length in self.left_lengths.lengths():
            if length > n:
                break
            lookups += 1
            rights = self.by_left.get(v[:length])
            if rights is not None:
                out.extend(found for r, found in rights.items() if n >= length + len(r) and v.endswith(r))
        return lookups


def _new_leaf(op: str):
    if op in ASCENDING or op in DESCENDING:
        return OrderedLeaf(op)
    if op in STRING_PATTERN_OPS:
        return PatternLeaf(op)
    if op == "wildcard":
        return WildcardLeaf()
    return {}  # "=", "!=", "any": value -> slots ("any" uses the key None)


class ConstraintIndex:
    """type -> name -> operator -> leaf."""

    def __init__(self) -> None:
        self.tree: dict[str, dict[str, dict[str, Any]]] = {}  # leaves of several kinds

    def touched(self, key: ConstraintKey) -> None:
        """The slot list of an indexed constraint changed in place."""
        type_, name, op, _value = key
        leaf = self.tree[type_][name][op]
        if isinstance(leaf, OrderedLeaf):
            leaf.changed()

    def add(self, key: ConstraintKey, subs: list[int]) -> None:
        type_, name, op, value = key
        by_op = self.tree.setdefault(type_, {}).setdefault(name, {})
        leaf = by_op.get(op)
        if leaf is None:
            leaf = by_op[op] = _new_leaf(op)
        if isinstance(leaf, dict):
            leaf[value] = subs
        else:
            leaf.add(value, subs)

    def discard(self, key: ConstraintKey) -> None:
        type_, name, op, value = key
        by_name = self.tree[type_]
        by_op = by_name[name]
        leaf = by_op[op]
        if isinstance(leaf, dict):
            del leaf[value]
        else:
            leaf.discard(value)
        if not len(leaf):
            del by_op[op]
            if not by_op:
                del by_name[name]
                if not by_name:
                    del self.tree[type_]

    def probe(self, type_: str, name: str, v, out: list[list[int]]) -> int:
        """Append to `out` the slot list of every constraint (type_, name, v)
        satisfies; return the number of index lookups made."""
        by_name = self.tree.get(type_)
        if by_name is None:
            return 1
        by_op = by_name.get(name)
        if by_op is None:
            return 1
        lookups = 1
        for op, leaf in by_op.items():
            lookups += 1
            if op == "=":
                subs = leaf.get(v)
                if subs is not None:
                    out.append(subs)
            elif op in ORDERING:  # the satisfied constraints are the suffix CL[i:] (CLM-ENG-7)
                flat, offset = leaf.flat()
                start = offset[leaf.first_match(v)]
                if start < len(flat):
                    out.append(flat[start:])
            elif op == "!=":
                out.extend(subs for w, subs in leaf.items() if w != v)
            elif op == "any":
                out.append(leaf[None])
            else:  # prefix, suffix, contains, wildcard
                lookups += leaf.hits(v, out)
        return lookups


class PatternProber:
    """DEF-MATCH-4's hash leaves for prefix, suffix, contains and wildcard
    (`cindex`), holding pattern IDs: one string in, the IDs of the patterns
    it satisfies out."""

    def __init__(self) -> None:
        self.leaves: dict[str, PatternLeaf | WildcardLeaf] = {op: PatternLeaf(op) for op in ("prefix", "suffix", "contains")}
        self.leaves["wildcard"] = WildcardLeaf()
        self.lookups = 0

    def __bool__(self) -> bool:
        return any(len(leaf) for leaf in self.leaves.values())

    def add(self, op: str, pattern: str, pid: int) -> None:
        self.leaves[op].add(pattern, pid)

    def satisfied(self, s: str) -> list[int]:
        found: list[int] = []
        for leaf in self.leaves.values():
            self.lookups += leaf.hits(s, found)
        return found
