"""Subscription summaries, the reference version (spec/04-summaries.md).

Constructed for ease of understanding rather than for speed. A summary is a
map from attribute keys to rows; a row is one summary constraint with the
set of subscription IDs it stands for. Every function cites the definition
it transcribes. The optimized summary (bit-packed IDs, binary search, ACGT
maintenance, merging, deltas) is `subsum.impl.summary`; conformance checks
one against the other.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence, Union, cast

import attrs

from subsum.core.types import Attribute, Constraint, Event, Scalar, Subscription, constraint_sort_key
from subsum.model.covering import covers_by_rules
from subsum.model.semantics import matches, operator_holds

NUMERIC_TYPES = ("int", "float")
INF = math.inf

#: DEF-SUM-1: an attribute key is (name, type).
Key = tuple[str, str]


@attrs.frozen(order=True)
class Interval:
    """DEF-SUM-2: the closed interval [lo, hi]; lo may be -inf, hi +inf."""

    lo: Union[int, float]
    hi: Union[int, float]

    def holds(self, value: Union[int, float]) -> bool:
        return self.lo <= value <= self.hi


#: A normalized constraint: an Interval for int and float, a Constraint for string and bool.
Normalized = Union[Interval, Constraint]


def key_of(c: Union[Constraint, Attribute]) -> Key:
    """DEF-SUM-1: the attribute key of a constraint or an attribute.

    >>> key_of(Constraint("price", "float", "<", 8.70)), key_of(Attribute("price", "float", 8.40))
    (('price', 'float'), ('price', 'float'))
    """
    return (c.name, c.type)


def schema_of(subscriptions: Iterable[Subscription]) -> tuple[Key, ...]:
    """DEF-SUM-1: the sorted attribute keys that the subscriptions constrain.
    The position of a key in the schema is its attribute index (c3 bit).

    >>> from subsum.core.filters import parse_filter
    >>> schema_of([parse_filter('symbol = "OTE" and price = 8.50'), parse_filter("price < 9.0 and volume > 1000")])
    (('price', 'float'), ('symbol', 'string'), ('volume', 'int'))
    """
    return tuple(sorted({key_of(c) for s in subscriptions for c in s.constraints}))


# --- DEF-SUM-2: the abstraction of one subscription -------------------------

def constraint_interval(c: Constraint) -> Interval:
    """DEF-SUM-2 (numeric): the closed interval of one constraint. Strict
    bounds are closed, `!=` and `any` are the whole line: over-approximations.

    >>> constraint_interval(Constraint("price", "float", "<", 8.70)), constraint_interval(Constraint("x", "int", "!=", 3))
    (Interval(lo=-inf, hi=8.7), Interval(lo=-inf, hi=inf))
    """
    v = cast(float, c.value)  # a number, or None under `any` (not read then)
    if c.op == "=":
        return Interval(v, v)
    if c.op in ("<", "<="):
        return Interval(-INF, v)
    if c.op in (">", ">="):
        return Interval(v, INF)
    assert c.op in ("!=", "any"), c.op
    return Interval(-INF, INF)


def normalize_numeric(constraints: Sequence[Constraint]) -> Interval | None:
    """DEF-SUM-2 (numeric): the intersection of the constraints' intervals,
    or None if it is empty.

    >>> normalize_numeric([Constraint("price", "float", ">=", 8.45), Constraint("price", "float", "<=", 8.60)])
    Interval(lo=8.45, hi=8.6)
    >>> normalize_numeric([Constraint("x", "int", ">", 5), Constraint("x", "int", "<", 2)]) is None
    True
    """
    lo = max(constraint_interval(c).lo for c in constraints)
    hi = min(constraint_interval(c).hi for c in constraints)
    if lo > hi:
        return None
    return Interval(lo, hi)


def normalize_bool(constraints: Sequence[Constraint]) -> Constraint | None:
    """DEF-SUM-2 (bool): the set of allowed values, written `= v` or `any`;
    None if no value is allowed. Exact.

    >>> normalize_bool([Constraint("b", "bool", "!=", True)])
    Constraint(name='b', type='bool', op='=', value=False)
    >>> normalize_bool([Constraint("b", "bool", "=", True), Constraint("b", "bool", "=", False)]) is None
    True
    """
    allowed = {True, False}
    for c in constraints:
        if c.op == "=":
            allowed &= {c.value}
        elif c.op == "!=":
            allowed -= {c.value}
    name = constraints[0].name
    if not allowed:
        return None
    if allowed == {True, False}:
        return Constraint(name, "bool", "any")
    return Constraint(name, "bool", "=", allowed.pop())


def canonical_string_constraint(c: Constraint) -> Constraint:
    """DEF-SUM-2 (string): one name for constraints that mean the same:
    `prefix ""`, `suffix ""`, `contains ""`, `wildcard "*"` and `!=` become
    `any` (`!=` over-approximated); `wildcard "l*"` becomes `prefix l` and
    `wildcard "*r"` becomes `suffix r`.

    >>> canonical_string_constraint(Constraint("s", "string", "wildcard", "OT*"))
    Constraint(name='s', type='string', op='prefix', value='OT')
    >>> canonical_string_constraint(Constraint("s", "string", "suffix", "")).op
    'any'
    """
    if c.op == "!=" or (c.op in ("prefix", "suffix", "contains") and c.value == ""):
        return Constraint(c.name, "string", "any")
    if c.op == "wildcard":
        left, _, right = cast(str, c.value).partition("*")
        if left == "" and right == "":
            return Constraint(c.name, "string", "any")
        if right == "":
            return Constraint(c.name, "string", "prefix", left)
        if left == "":
            return Constraint(c.name, "string", "suffix", right)
    return c


#: DEF-SUM-2: which string constraint represents a conjunction (lower is preferred).
SELECTIVITY = {"=": 0, "wildcard": 1, "prefix": 2, "suffix": 2, "contains": 3, "any": 4}


def representative(c: Constraint) -> tuple[Any, ...]:
    """DEF-SUM-2: the order in which a conjunct is chosen to stand for the
    conjunction: most selective operator, then longest value, then the
    canonical constraint order.

    >>> prefix, contains = Constraint("s", "string", "prefix", "OT"), Constraint("s", "string", "contains", "OTER")
    >>> min([contains, prefix], key=representative) == prefix  # the operator first, then the length
    True
    """
    length = 0 if c.value is None else len(cast(str, c.value))
    return (SELECTIVITY[c.op], -length, constraint_sort_key(c))


def normalize_string(constraints: Sequence[Constraint]) -> Constraint | None:
    """DEF-SUM-2 (string): with an `=` conjunct the result is exact (`= s`, or
    None if s fails another conjunct); otherwise the single conjunct that
    `representative` puts first, in canonical form, which contains the
    conjunction.

    >>> from subsum.core.filters import parse_filter
    >>> normalize_string(list(parse_filter('s prefix "OT" and s contains "E"').constraints))
    Constraint(name='s', type='string', op='prefix', value='OT')
    >>> normalize_string(list(parse_filter('s = "OTE" and s prefix "OT"').constraints))
    Constraint(name='s', type='string', op='=', value='OTE')
    >>> normalize_string(list(parse_filter('s = "OTE" and s prefix "X"').constraints)) is None
    True
    """
    equalities = {c.value for c in constraints if c.op == "="}
    if equalities:
        if len(equalities) > 1:
            return None
        value = cast(str, equalities.pop())
        if all(operator_holds(c.op, value, c.value) for c in constraints):
            return Constraint(constraints[0].name, "string", "=", value)
        return None
    candidates = [canonical_string_constraint(c) for c in constraints]
    return min(candidates, key=representative)


def normalize_constraints(constraints: Sequence[Constraint]) -> Normalized | None:
    """DEF-SUM-2: the one normalized constraint of a (subscription, key) pair.

    >>> from subsum.core.filters import parse_filter
    >>> normalize_constraints(list(parse_filter("x > 1 and x <= 5").constraints))
    Interval(lo=1, hi=5)
    """
    type_ = constraints[0].type
    if type_ in NUMERIC_TYPES:
        return normalize_numeric(constraints)
    if type_ == "bool":
        return normalize_bool(constraints)
    return normalize_string(constraints)


def abstraction(subscription: Subscription) -> dict[Key, Normalized] | None:
    """DEF-SUM-2: key -> normalized constraint, one per key the subscription
    constrains; None if some key normalizes to the empty set (the
    subscription can never match and is left out of the summary).

    >>> from subsum.core.filters import parse_filter
    >>> abstraction(parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60'))
    {('price', 'float'): Interval(lo=8.45, hi=8.6), ('symbol', 'string'): Constraint(name='symbol', type='string', op='prefix', value='OTE')}
    >>> abstraction(parse_filter("x > 5 and x < 2")) is None
    True
    """
    by_key: dict[Key, list[Constraint]] = {}
    for c in sorted(subscription.constraints, key=constraint_sort_key):
        by_key.setdefault(key_of(c), []).append(c)
    result = {}
    for key, constraints in sorted(by_key.items()):
        normalized = normalize_constraints(constraints)
        if normalized is None:
            return None
        result[key] = normalized
    return result


def normalized_holds(n: Normalized, value: Scalar) -> bool:
    """DEF-SUM-3: a value satisfies a normalized constraint.

    >>> normalized_holds(Interval(8.45, 8.60), 8.50), normalized_holds(Constraint("s", "string", "prefix", "OT"), "TEL")
    (True, False)
    """
    if isinstance(n, Interval):
        return n.holds(cast(float, value))
    return operator_holds(n.op, value, n.value)


def normalized_covers(general: Normalized, specific: Normalized) -> bool:
    """DEF-SUM-3: interval containment for numeric keys; the proved
    syntactic rules (DEF-COV-4) for string and bool keys.

    >>> normalized_covers(Interval(1, 5), Interval(2, 3)), normalized_covers(Interval(2, 3), Interval(1, 5))
    (True, False)
    >>> normalized_covers(Constraint("s", "string", "prefix", "OT"), Constraint("s", "string", "=", "OTE"))
    True
    """
    if isinstance(general, Interval):
        specific = cast(Interval, specific)  # normalized constraints of one key
        return general.lo <= specific.lo and specific.hi <= general.hi
    return covers_by_rules(general, cast(Constraint, specific))


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

    >>> from subsum.core.filters import parse_filter
    >>> subs = [("S1", parse_filter('symbol = "OTE" and price = 8.50')),
    ...         ("S2", parse_filter('symbol = "OTER" and price = 8.55')),
    ...         ("S3", parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60')),
    ...         ("S4", parse_filter('symbol prefix "T" and price >= 8.60 and price <= 8.70'))]
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


def satisfied_rows(rows: Sequence[Row], value: Scalar) -> list[Row]:
    """DEF-SUM-8 step 1: the rows of one key that a value satisfies.

    Seed 000 Fig. 4-5's subscriptions:

    >>> from subsum.core.filters import parse_filter
    >>> subs = [("S1", parse_filter('symbol = "OTE" and price = 8.50')),
    ...         ("S2", parse_filter('symbol = "OTER" and price = 8.55')),
    ...         ("S3", parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60')),
    ...         ("S4", parse_filter('symbol prefix "T" and price >= 8.60 and price <= 8.70'))]
    >>> rows = reference_summary(subs).rows[("symbol", "string")]
    >>> [r.constraint.value for r in satisfied_rows(rows, "OTE")], [r.constraint.value for r in satisfied_rows(rows, "TEL")]
    (['OTE'], ['T'])
    """
    return [r for r in rows if normalized_holds(r.constraint, value)]


def summary_counters(summary: ReferenceSummary, event: Event) -> dict[str, int]:
    """DEF-SUM-8 (Algorithm 4-1) step 1: per ID, the number of the event's
    attributes whose satisfied rows hold it. Counted per attribute, not per
    row: an ID in two satisfied rows of one key counts once.

    Seed 000 Fig. 4-5's subscriptions:

    >>> from subsum.core.filters import parse_filter
    >>> subs = [("S1", parse_filter('symbol = "OTE" and price = 8.50')),
    ...         ("S2", parse_filter('symbol = "OTER" and price = 8.55')),
    ...         ("S3", parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60')),
    ...         ("S4", parse_filter('symbol prefix "T" and price >= 8.60 and price <= 8.70'))]
    >>> false_positive = Event((Attribute("symbol", "string", "OTE"), Attribute("price", "float", 8.65)))
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

    Seed 000 Fig. 4-5's subscriptions:

    >>> from subsum.core.filters import parse_filter
    >>> subs = [("S1", parse_filter('symbol = "OTE" and price = 8.50')),
    ...         ("S2", parse_filter('symbol = "OTER" and price = 8.55')),
    ...         ("S3", parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60')),
    ...         ("S4", parse_filter('symbol prefix "T" and price >= 8.60 and price <= 8.70'))]
    >>> false_positive = Event((Attribute("symbol", "string", "OTE"), Attribute("price", "float", 8.65)))
    >>> sorted(summary_match(reference_summary(subs), false_positive))  # candidates; none really matches
    ['S1', 'S2', 'S3']
    """
    counters = summary_counters(summary, event)
    return {sid for sid, n in counters.items() if n == summary.attribute_count[sid]} | set(summary.unconditional)


def recheck(subscriptions: Mapping[str, Subscription], candidates: Iterable[str], event: Event) -> set[str]:
    """DEF-SUM-10: the owner's exact re-check: the candidates whose
    subscription really matches the event (DEF-MATCH-2).

    Seed 000 Fig. 4-5's subscriptions:

    >>> from subsum.core.filters import parse_filter
    >>> subs = [("S1", parse_filter('symbol = "OTE" and price = 8.50')),
    ...         ("S2", parse_filter('symbol = "OTER" and price = 8.55')),
    ...         ("S3", parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60')),
    ...         ("S4", parse_filter('symbol prefix "T" and price >= 8.60 and price <= 8.70'))]
    >>> false_positive = Event((Attribute("symbol", "string", "OTE"), Attribute("price", "float", 8.65)))
    >>> recheck(dict(subs), ["S1", "S2", "S3"], false_positive)
    set()
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

    >>> from subsum.core.filters import parse_filter
    >>> subs = [("S1", parse_filter('symbol = "OTE" and price = 8.50')),
    ...         ("S2", parse_filter('symbol = "OTER" and price = 8.55')),
    ...         ("S3", parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60')),
    ...         ("S4", parse_filter('symbol prefix "T" and price >= 8.60 and price <= 8.70'))]
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

    >>> from subsum.core.filters import parse_filter
    >>> subs = [("S1", parse_filter('symbol = "OTE" and price = 8.50')),
    ...         ("S2", parse_filter('symbol = "OTER" and price = 8.55')),
    ...         ("S3", parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60')),
    ...         ("S4", parse_filter('symbol prefix "T" and price >= 8.60 and price <= 8.70'))]
    >>> summary_is_exact(reference_summary(subs), dict(subs)), summary_is_exact(reference_summary(subs[:1]), dict(subs))
    (False, True)
    """
    return all(row_is_exact(key, row, subscriptions) for key, rows in summary.rows.items() for row in rows)
