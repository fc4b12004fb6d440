"""The summary that brokers ship and match against (seed 000 §4.2–§4.3.4,
spec/04-summaries.md).

- `Summary`: one AACS or SACS per attribute key, rows holding packed IDs
  (DEF-SUM-7). It matches events by Algorithm 4-1 (DEF-SUM-8), merges with
  other brokers' summaries (DEF-SUM-13) and applies deltas (DEF-SUM-14),
  rebuilding a row from its owners' answers when its most general
  constraint is deleted (method 1).
- `Delta`: what a broker ships between propagations (DEF-SUM-14).

The owning broker's side, which builds both, is `owner.OwnerSummary`.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, Mapping

import attrs

from subsum.core.errors import SubsumError
from subsum.core.types import Event
from subsum.impl.summary.ids import IdLayout
from subsum.impl.summary.normalize import NUMERIC, row_order
from subsum.impl.summary.structures import AACS, SACS

VIRTUAL_POLICIES = ("none", "contains")

#: resolve(key, ids) -> [(id, normalized constraint)]: the owners' answer to
#: "which constraints do these IDs have on this key" (seed 000 §4.3.4, method 1).
Resolver = Callable[[tuple, set], list]


class SummaryError(SubsumError, ValueError):
    """A summary operation that cannot be done (mismatched layouts, unknown
    attribute, unknown subscription, full broker)."""


class Summary:
    """DEF-SUM-7: rows per attribute key. IDs are packed ints (`IdLayout`)."""

    def __init__(self, layout: IdLayout, schema: Iterable[tuple], virtual: str = "none") -> None:
        if virtual not in VIRTUAL_POLICIES:
            raise SummaryError(f"unknown virtual-generalization policy {virtual!r}; expected one of {', '.join(VIRTUAL_POLICIES)}")
        self.layout = layout
        self.schema: tuple = tuple(schema)
        if len(self.schema) != layout.attributes:
            raise SummaryError(f"the schema has {len(self.schema)} attributes but the ID layout has {layout.attributes} c3 bits")
        self.index = {key: i for i, key in enumerate(self.schema)}
        self.virtual = virtual
        self.structures: dict[tuple, AACS | SACS] = {}
        self.unconditional: set[int] = set()
        self.names: dict[int, str] = {}
        self.merged_brokers: set[int] = set()
        self.resolution_requests = 0
        #: (ID, key) pairs a rebuild dropped because the owner no longer held
        #: the ID: its deletion is still on its way and is accepted then.
        self.retired: set[tuple[int, tuple]] = set()

    # --- building -----------------------------------------------------------
    def structure(self, key) -> AACS | SACS:
        """The AACS (numeric key) or SACS (string or bool key) of `key`,
        created empty on first use; a key outside the schema is refused."""
        s = self.structures.get(key)
        if s is None:
            if key not in self.index:
                raise SummaryError(f"attribute {key[0]}:{key[1]} is not in the schema")
            s = AACS() if key[1] in NUMERIC else SACS(self.virtual)
            self.structures[key] = s
        return s

    def insert(self, key, normalized, ids) -> None:
        """Insert one normalized constraint (or row) with its IDs."""
        s = self.structure(key)
        if key[1] in NUMERIC:
            s.insert(normalized[0], normalized[1], ids)
        else:
            s.insert(normalized, ids)

    def add_member(self, sid: int, abstract: Mapping) -> None:
        """Insert every normalized constraint of one subscription."""
        if not abstract:
            self.unconditional.add(sid)
        for key, n in abstract.items():
            self.insert(key, n, (sid,))

    # --- matching (Algorithm 4-1) --------------------------------------------
    def counters(self, event: Event) -> Counter:
        """Step 1: per ID, the number of event attributes whose satisfied
        rows hold it (counted once per attribute)."""
        counters: Counter = Counter()
        get = counters.get
        structures = self.structures
        for a in event.attributes:
            s = structures.get((a.name, a.type))
            if s is None:
                continue
            ids = s.lookup(a.value)
            if len(ids) > 16:
                counters.update(ids)  # long ID lists are counted in C
            else:
                for sid in ids:
                    counters[sid] = get(sid, 0) + 1
        return counters

    def match(self, event: Event) -> set[int]:
        """Step 2: the IDs whose counter equals popcount(c3), plus the
        subscriptions that constrain nothing."""
        mask = self.layout.c3_mask
        hit = {sid for sid, n in self.counters(event).items() if n == (sid & mask).bit_count()}
        return hit | self.unconditional if self.unconditional else hit

    # --- merging and deltas -----------------------------------------------------
    def _check_compatible(self, other: "Summary") -> None:
        """Refuse to combine summaries of different ID layouts or schemas."""
        if other.layout != self.layout:
            raise SummaryError(f"cannot merge summaries with different ID layouts: {self.layout} and {other.layout}")
        if other.schema != self.schema:
            raise SummaryError("cannot merge summaries over different attribute schemas")

    def merge_in(self, other: "Summary") -> "Summary":
        """DEF-SUM-13: merge another broker's summary into this one: the rows
        (`union_rows`) and the Merged_Brokers lists. Refused when the lists
        overlap: the two would hold IDs of one broker number, which collide
        (DEF-SR-4, CLM-SR-7). Returns self."""
        self._check_compatible(other)
        shared = self.merged_brokers & other.merged_brokers
        if shared:
            raise SummaryError(f"cannot merge summaries that both hold broker(s) {sorted(shared)}: their subscription IDs would collide")
        self.union_rows(other)
        self.merged_brokers |= other.merged_brokers
        return self

    def union_rows(self, other: "Summary") -> "Summary":
        """DEF-SUM-13: add every row of `other` (in canonical order) to this
        summary: ranges and equalities by union, string rows by cover-or-merge,
        ID sets by union. Merged_Brokers is left alone. Returns self."""
        self._check_compatible(other)
        for key in sorted(other.structures):
            for _, c, ids in other.structures[key].rows():
                self.insert(key, c, ids)
        self.unconditional |= other.unconditional
        self.names.update(other.names)
        return self

    def copy(self) -> "Summary":
        """An independent summary with the same rows, names and Merged_Brokers."""
        out = Summary(self.layout, self.schema, self.virtual)
        out.merged_brokers = set(self.merged_brokers)
        return out.union_rows(self)

    def _member_row(self, sid: int, key, n):
        """Where `sid`, with normalized constraint n on `key`, sits: (the
        row's handle, its ID set, whether n may hold the row together, a
        numeric interval that is not a point, or a string constraint equal
        to the row's, or one of the pair behind a virtual `contains` row)."""
        s = self.structures.get(key)
        if s is None:
            raise SummaryError(f"subscription {sid} is not in the summary (no rows for {key[0]}:{key[1]})")
        if key[1] in NUMERIC:
            row = s.row_of(n[0], n[1])
            ids = None if row is None else s.ids_of(row)
            if ids is None or sid not in ids:
                raise SummaryError(f"subscription {sid} is not in the row of {key[0]}:{key[1]} holding {n}")
            return row, ids, n[0] < n[1]
        for i, (_, c, ids) in enumerate(s.sorted_rows):
            if sid in ids:
                virtual_pair = self.virtual == "contains" and c[0] == "contains" and n in (("prefix", c[1]), ("suffix", c[1]))
                return i, ids, c == n or virtual_pair
        raise SummaryError(f"subscription {sid} is not in any row of {key[0]}:{key[1]}")

    def rebuilds_for(self, sid: int, abstract: Mapping) -> dict[tuple, set[int]]:
        """DEF-SUM-14, method 1: the rows deleting `sid` will rebuild, as
        key -> the row's other IDs, whose owners must say their constraints."""
        out = {}
        for key, n in abstract.items():
            if (sid, key) not in self.retired:
                _, ids, holds_row = self._member_row(sid, key, n)
                if holds_row and ids - {sid}:
                    out[key] = ids - {sid}
        return out

    def remove_member(self, sid: int, abstract: Mapping, resolve: Resolver | None) -> None:
        """DEF-SUM-14: delete one subscription, given its normalized
        constraints. Its ID leaves each row; an empty row is dropped. When
        the deleted constraint may have held the row together, the remaining
        members' constraints are requested from their owners (`resolve`) and
        the row is rebuilt from them."""
        if not abstract:
            self.unconditional.discard(sid)
        for key, n in abstract.items():
            if (sid, key) in self.retired:
                self.retired.discard((sid, key))
                continue
            row, ids, holds_row = self._member_row(sid, key, n)
            s = self.structures[key]
            ids.discard(sid)
            if not ids or holds_row:
                if key[1] in NUMERIC:
                    s.drop(row)
                else:
                    s.delete_row(row)
            if ids and holds_row:
                self._rebuild(key, ids, resolve)
            if not len(s):
                del self.structures[key]
        self.names.pop(sid, None)

    def _rebuild(self, key, ids: set[int], resolve: Resolver | None) -> None:
        """DEF-SUM-14, method 1: re-insert the members `ids` of a deleted row
        of `key` from their owners' answers (`resolve`), in canonical order.
        IDs the owners no longer hold are retired until their deletion comes."""
        if resolve is None:
            raise SummaryError(f"deleting the most general constraint of a {key[0]}:{key[1]} row needs its owners' answers")
        self.resolution_requests += len({self.layout.broker_of(sid) for sid in ids})
        members = resolve(key, set(ids))
        answered = {sid for sid, _ in members}
        if not answered <= ids:
            raise SummaryError(f"the owners answered for {sorted(answered - ids)}, which the row does not hold")
        # IDs the owners no longer hold were deleted; their deletions are on the way.
        self.retired |= {(sid, key) for sid in ids - answered}
        order = (lambda m: (m[1], m[0])) if key[1] in NUMERIC else (lambda m: (row_order(m[1]), m[0]))
        for sid, n in sorted(members, key=order):
            self.insert(key, n, (sid,))

    def apply(self, delta: "Delta", resolve: Resolver | None) -> "Summary":
        """DEF-SUM-14: apply a delta's deletions, then merge its insertions
        (in this order, so an ID whose slot was reused is never confused)."""
        for sid, abstract in delta.deletions:
            self.remove_member(sid, abstract, resolve)
        return self.union_rows(delta.insertions)

    # --- views --------------------------------------------------------------------
    def rows(self) -> dict[tuple, list[tuple]]:
        """key -> [(kind, constraint, frozenset of IDs)], in canonical order."""
        return {key: [(kind, c, frozenset(ids)) for kind, c, ids in self.structures[key].rows()]
                for key in sorted(self.structures)}

    def row_count(self) -> int:
        """The number of rows over all keys."""
        return sum(len(s) for s in self.structures.values())

    def id_entries(self) -> int:
        """The number of IDs the rows and the unconditional list hold, with repeats."""
        return sum(len(ids) for s in self.structures.values() for _, _, ids in s.rows()) + len(self.unconditional)

    def member_ids(self) -> set[int]:
        """Every ID the summary holds, in some row or unconditional."""
        out = set(self.unconditional)
        for s in self.structures.values():
            for _, _, ids in s.rows():
                out |= ids
        return out


@attrs.define
class Delta:
    """DEF-SUM-14: what a broker sends between propagations: the summary of
    its new subscriptions, and the deletions (ID with normalized constraints)."""

    broker: int
    insertions: Summary
    deletions: list = attrs.field(factory=list)
