"""Subscription summaries, the reference version (spec/04-summaries.md DEF-SUM-4..10).

Constructed for ease of understanding rather than for speed. A summary is a
map from attribute keys to rows; a row is one summary constraint with the
set of subscription IDs it stands for, built from the subscriptions'
abstractions (`subsum.model.summaries.abstraction`, DEF-SUM-1..3). This module builds
the rows and the summary (DEF-SUM-4..7), matches events against it
(DEF-SUM-8), re-checks the candidates (DEF-SUM-10) and tells whether it is
exact (DEF-SUM-9). Every function cites the definition it transcribes. The
optimized summary (bit-packed IDs, binary search, ACGT maintenance, merging,
deltas) is `subsum.impl.summary`; conformance checks one against the other.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence, cast

import attrs

from subsum.core.types import Constraint, Event, Scalar, Subscription, constraint_sort_key
from subsum.model.summaries.abstraction import (
    INF,
    NUMERIC_TYPES,
    Interval,
    Key,
    Normalized,
    abstraction,
    canonical_string_constraint,
    key_of,
    normalized_covers,
    normalized_holds,
)
from subsum.model.semantics import matches


# --- Rows and the reference summary ---------------------------------------

@attrs.frozen
class Row:
    """DEF-SUM-4/5: one row: a summary constraint and the IDs it stands for.
    `kind` is "range" or "equality" (AACS_SR, AACS_E) or "constraint" (SACS)."""

    kind: str
    constraint: Normalized
    ids: frozenset[str]


def numeric_rows(members: Sequence[tuple[str, Interval]]) -> list[Row]:
    """DEF-SUM-4: the canonical AACS of one numeric key: the connected
    components of the members' closed intervals (overlapping or touching
    intervals are joined). A component that is one point is an equality
    row (AACS_E), any other a range row (AACS_SR). Sorted by lower bound.

    >>> rows = numeric_rows([("S1", Interval(8.50, 8.50)), ("S3", Interval(8.45, 8.60)), ("S4", Interval(8.60, 8.70)), ("S5", Interval(9, 9))])
    >>> [(r.kind, r.constraint, sorted(r.ids)) for r in rows]
    [('range', Interval(lo=8.45, hi=8.7), ['S1', 'S3', 'S4']), ('equality', Interval(lo=9, hi=9), ['S5'])]
    """
    rows: list[Row] = []
    current_ids: set[str] = set()
    lo: float | None = None
    hi: float = -INF  # read only once lo is set
    for sid, interval in sorted(members, key=lambda m: (m[1].lo, m[1].hi, m[0])):
        if lo is not None and interval.lo <= hi:
            hi = max(hi, interval.hi)
            current_ids.add(sid)
            continue
        if lo is not None:
            rows.append(_numeric_row(lo, hi, current_ids))
        lo, hi, current_ids = interval.lo, interval.hi, {sid}
    if lo is not None:
        rows.append(_numeric_row(lo, hi, current_ids))
    return rows


def _numeric_row(lo: float, hi: float, ids: set[str]) -> Row:
    return Row("equality" if lo == hi else "range", Interval(lo, hi), frozenset(ids))


def constraint_rows(members: Sequence[tuple[str, Constraint]], virtual: str = "none") -> list[Row]:
    """DEF-SUM-5: the SACS of one string (or bool) key, built by inserting the
    members in the given order. A member covered by a row joins the first
    such row in canonical order; otherwise it becomes a new row that absorbs
    every row it covers. With `virtual="contains"` (DEF-SUM-6), a new
    `prefix x` row and a `suffix x` row (or the reverse) are replaced by the
    virtual row `contains x`, which also absorbs every row it covers.

    >>> rows = constraint_rows([("S1", Constraint("symbol", "string", "=", "OTE")), ("S3", Constraint("symbol", "string", "prefix", "OTE")),
    ...                         ("S4", Constraint("symbol", "string", "prefix", "T"))])
    >>> [(r.constraint.op, r.constraint.value, sorted(r.ids)) for r in rows]
    [('prefix', 'OTE', ['S1', 'S3']), ('prefix', 'T', ['S4'])]
    """
    rows: list[Row] = []
    for sid, c in members:
        covering = [r for r in rows if normalized_covers(r.constraint, c)]
        if covering:
            target = covering[0]
            rows[rows.index(target)] = Row("constraint", target.constraint, target.ids | {sid})
        else:
            rows = _add_row(rows, c, {sid})
            dual = {"prefix": "suffix", "suffix": "prefix"}.get(c.op)
            twin = Constraint(c.name, c.type, dual, c.value) if dual else None
            if virtual == "contains" and twin is not None and any(r.constraint == twin for r in rows):
                joined = {i for r in rows if r.constraint in (c, twin) for i in r.ids}
                rows = [r for r in rows if r.constraint not in (c, twin)]
                rows = _add_row(rows, Constraint(c.name, c.type, "contains", c.value), joined)
        rows.sort(key=lambda r: constraint_sort_key(cast(Constraint, r.constraint)))
    return rows


def _add_row(rows: list[Row], c: Constraint, ids: set[str]) -> list[Row]:
    absorbed = [r for r in rows if normalized_covers(c, r.constraint)]
    joined = frozenset(ids).union(*(r.ids for r in absorbed))
    return [r for r in rows if r not in absorbed] + [Row("constraint", c, joined)]


@attrs.frozen
class ReferenceSummary:
    """DEF-SUM-7: a broker's summary: rows per key, the number of keys each
    subscription constrains (popcount of c3), and the IDs of subscriptions
    that constrain nothing (they match every event)."""

    rows: Mapping[Key, tuple[Row, ...]]
    attribute_count: Mapping[str, int]
    unconditional: frozenset[str]


def reference_summary(subscriptions: Sequence[tuple[str, Subscription]], virtual: str = "none") -> ReferenceSummary:
    """DEF-SUM-7: the summary built in the plainest way, subscriptions
    taken in the given order. Subscriptions whose abstraction is empty
    (DEF-SUM-2) are left out.

    Seed 000 Fig. 4-5's subscriptions:

    >>> from subsum.model.summaries.seed000 import FIG_4_5_SUBSCRIPTIONS as subs
    >>> summary = reference_summary(subs)
    >>> for key, rows in summary.rows.items():
    ...     print(key, [(r.kind, sorted(r.ids)) for r in rows])
    ('price', 'float') [('range', ['S1', 'S2', 'S3', 'S4'])]
    ('symbol', 'string') [('constraint', ['S1', 'S2', 'S3']), ('constraint', ['S4'])]
    >>> [r.constraint.value for r in summary.rows[('symbol', 'string')]], summary.rows[('price', 'float')][0].constraint
    (['OTE', 'T'], Interval(lo=8.45, hi=8.7))
    >>> summary.attribute_count["S1"], summary.unconditional
    (2, frozenset())
    """
    members: dict[Key, list[tuple[str, Normalized]]] = {}
    counts: dict[str, int] = {}
    for sid, subscription in subscriptions:
        abstract = abstraction(subscription)
        if abstract is None:
            continue
        counts[sid] = len(abstract)
        for key, normalized in abstract.items():
            members.setdefault(key, []).append((sid, normalized))
    rows = {}
    for key, key_members in sorted(members.items()):
        if key[1] in NUMERIC_TYPES:
            rows[key] = tuple(numeric_rows(cast(list[tuple[str, Interval]], key_members)))
        else:
            rows[key] = tuple(constraint_rows(cast(list[tuple[str, Constraint]], key_members), virtual))
    unconditional = frozenset(sid for sid, n in counts.items() if n == 0)
    return ReferenceSummary(rows, counts, unconditional)


# --- Matching against the summary, the owner's re-check, exactness ---------

def satisfied_rows(rows: Sequence[Row], value: Scalar) -> list[Row]:
    """DEF-SUM-8 step 1: the rows of one key that a value satisfies.

    Seed 000 Fig. 4-5's subscriptions:

    >>> from subsum.model.summaries.seed000 import FIG_4_5_SUBSCRIPTIONS as subs
    >>> rows = reference_summary(subs).rows[("symbol", "string")]
    >>> [r.constraint.value for r in satisfied_rows(rows, "OTE")], [r.constraint.value for r in satisfied_rows(rows, "TEL")]
    (['OTE'], ['T'])
    """
    return [r for r in rows if normalized_holds(r.constraint, value)]


def summary_counters(summary: ReferenceSummary, event: Event) -> dict[str, int]:
    """DEF-SUM-8 (Algorithm 4-1) step 1: per ID, the number of the event's
    attributes whose satisfied rows hold it. Counted per attribute, not per
    row: an ID in two satisfied rows of one key counts once.

    Seed 000 Fig. 4-5's subscriptions and Example 4-2's false positive:

    >>> from subsum.model.summaries.seed000 import FALSE_POSITIVE as false_positive, FIG_4_5_SUBSCRIPTIONS as subs
    >>> sorted(summary_counters(reference_summary(subs), false_positive).items())
    [('S1', 2), ('S2', 2), ('S3', 2), ('S4', 1)]
    """
    counters: dict[str, int] = {}
    for attribute in event.attributes:
        rows = summary.rows.get(key_of(attribute), ())
        ids = set().union(*(r.ids for r in satisfied_rows(rows, attribute.value)))
        for sid in ids:
            counters[sid] = counters.get(sid, 0) + 1
    return counters


def summary_match(summary: ReferenceSummary, event: Event) -> set[str]:
    """DEF-SUM-8 step 2: the IDs whose counter equals the number of keys
    they constrain (popcount of c3), plus the unconditional IDs.

    Seed 000 Fig. 4-5's subscriptions and Example 4-2's false positive:

    >>> from subsum.model.summaries.seed000 import FALSE_POSITIVE as false_positive, FIG_4_5_SUBSCRIPTIONS as subs
    >>> sorted(summary_match(reference_summary(subs), false_positive))  # candidates; none really matches
    ['S1', 'S2', 'S3']
    """
    counters = summary_counters(summary, event)
    return {sid for sid, n in counters.items() if n == summary.attribute_count[sid]} | set(summary.unconditional)


def recheck(subscriptions: Mapping[str, Subscription], candidates: Iterable[str], event: Event) -> set[str]:
    """DEF-SUM-10: the owner's exact re-check: the candidates whose
    subscription really matches the event (DEF-MATCH-2).

    Seed 000 Fig. 4-5's subscriptions and Example 4-2's false positive:

    >>> from subsum.model.summaries.seed000 import FALSE_POSITIVE as false_positive, FIG_4_5_SUBSCRIPTIONS as subs
    >>> recheck(dict(subs), ["S1", "S2", "S3"], false_positive)
    set()
    >>> from subsum.core.types import Attribute
    >>> sorted(recheck(dict(subs), ["S1", "S3"], Event((Attribute("symbol", "string", "OTE"), Attribute("price", "float", 8.50)))))
    ['S1', 'S3']
    """
    return {sid for sid in candidates if matches(subscriptions[sid], event)}


def row_is_exact(key: Key, row: Row, subscriptions: Mapping[str, Subscription]) -> bool:
    """DEF-SUM-9: a row of `key` is exact if it generalizes nothing: every
    member has a single constraint on `key`, satisfied by exactly the values
    that satisfy the row. Decided syntactically: an equality row whose
    members all say `= v`, or a string or bool row whose members' single
    constraint is the row constraint (in canonical form, `!=` excluded).

    Seed 000 Fig. 4-5's subscriptions:

    >>> from subsum.model.summaries.seed000 import FIG_4_5_SUBSCRIPTIONS as subs
    >>> rows = reference_summary(subs).rows[("symbol", "string")]
    >>> [row_is_exact(("symbol", "string"), row, dict(subs)) for row in rows]  # prefix OTE stands for S1's = OTE too
    [False, True]
    """
    for sid in row.ids:
        own = [c for c in subscriptions[sid].constraints if key_of(c) == key]
        if len(own) != 1 or own[0].op == "!=":
            return False
        c = own[0]
        if isinstance(row.constraint, Interval):
            if not (c.op == "=" and row.constraint == Interval(cast(float, c.value), cast(float, c.value))):
                return False
        elif c.type == "string" and canonical_string_constraint(c) != row.constraint:
            return False
        elif c.type == "bool" and c != row.constraint:
            return False
    return True


def summary_is_exact(summary: ReferenceSummary, subscriptions: Mapping[str, Subscription]) -> bool:
    """DEF-SUM-9: every row of the summary is exact.

    Seed 000 Fig. 4-5's subscriptions:

    >>> from subsum.model.summaries.seed000 import FIG_4_5_SUBSCRIPTIONS as subs
    >>> summary_is_exact(reference_summary(subs), dict(subs)), summary_is_exact(reference_summary(subs[:1]), dict(subs))
    (False, True)
    """
    return all(row_is_exact(key, row, subscriptions) for key, rows in summary.rows.items() for row in rows)
