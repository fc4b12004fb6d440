"""Conformance of the optimized summaries (subsum.impl.summary) with the
reference (subsum.model.abstraction, subsum.model.summaries): properties, z3
proofs, a state machine and the worked examples of seed 000 (claims
CLM-SUM-*, spec/04-summaries.md)."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter

import z3
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from subsum.conformance import census
from subsum.conformance import strategies as gen
from subsum.conformance.properties import property_check
from subsum.core.filters import parse_filter
from subsum.core.types import OPS_BY_TYPE, Attribute, Constraint, Event, Subscription
from subsum.impl.summary import IdLayout, OwnerSummary, Summary, summary_file, wire
from subsum.impl.summary.file_reader import SummaryFileError
from subsum.impl.summary.normalize import abstraction as impl_abstraction
from subsum.impl.summary.normalize import pattern_covers
from subsum.impl.summary.history import Directory, History
from subsum.model import abstraction as ref_abstraction
from subsum.model import smt
from subsum.model import summaries as ref
from subsum.model.covering import covers_by_rules
from subsum.model.semantics import matching_ids

# --- translating between the two representations -----------------------------

def to_model(key, n):
    """An impl normalized constraint as the model's Interval or Constraint."""
    if key[1] in ref_abstraction.NUMERIC_TYPES:
        return ref_abstraction.Interval(n[0], n[1])
    return Constraint(key[0], key[1], n[0], n[1])


def impl_rows(summary: Summary, names=None) -> dict:
    """key -> sorted [(kind, model constraint, frozenset of names)]."""
    names = summary.names if names is None else names
    return {
        key: sorted(((kind, to_model(key, c), frozenset(names[i] for i in ids)) for kind, c, ids in rows), key=repr)
        for key, rows in summary.rows().items()
    }


def model_rows(summary: ref.ReferenceSummary) -> dict:
    return {key: sorted(((r.kind, r.constraint, r.ids) for r in rows), key=repr) for key, rows in summary.rows.items() if rows}


def constraint_sets(rows: dict) -> dict:
    return {key: sorted({repr(c) for _, c, _ in key_rows}) for key, key_rows in rows.items()}


def layout_for(subscriptions, brokers: int = 1) -> tuple[IdLayout, tuple]:
    schema = ref_abstraction.schema_of(s for _, s in subscriptions)
    return IdLayout(brokers, max(1, len(subscriptions) + 2), len(schema)), schema


def build_owner(subscriptions, broker: int = 0, brokers: int = 1, virtual: str = "none", schema=None) -> OwnerSummary:
    layout, derived = layout_for(subscriptions, brokers)
    if schema is not None:
        layout = IdLayout(brokers, max(1, len(subscriptions) + 2), len(schema))
    owner = OwnerSummary(broker, layout, schema if schema is not None else derived, virtual)
    for name, subscription in subscriptions:
        owner.add(name, subscription)
    return owner


def names_matched(summary: Summary, event: Event) -> set[str]:
    return {summary.names[i] for i in summary.match(event)}


# --- CLM-SUM-1: the abstraction -------------------------------------------------

@property_check(gen.summary_subscriptions(), gen.summary_subscriptions())
def abstraction_agrees_with_model(first, second):
    """CLM-SUM-1: the impl's normalization and covering equal the model's."""
    for subscription in (first, second):
        want = ref_abstraction.abstraction(subscription)
        got = impl_abstraction(subscription)
        if want is None:
            assert got is None, (subscription, got)
            continue
        assert got is not None and {k: to_model(k, n) for k, n in got.items()} == want, (subscription, got, want)
    a, b = impl_abstraction(first) or {}, impl_abstraction(second) or {}
    for key in set(a) & set(b):
        if key[1] in ref_abstraction.NUMERIC_TYPES:
            continue
        for g, s in ((a[key], b[key]), (b[key], a[key])):
            assert pattern_covers(g, s) == covers_by_rules(to_model(key, g), to_model(key, s)), (key, g, s)


# --- CLM-SUM-2 / 5: no false negatives, and the impl equals the reference ------------

#: What the summary workloads must draw under `ci`: every (type, operator) pair of the five names, and the string positions.
SUMMARY_FLOORS = {
    **{f"op:{t}:{op}": 3 for t in ("int", "float", "string", "bool") for op in OPS_BY_TYPE[t]},
    "contains:at-start": 2, "contains:at-end": 2, "wildcard:exact-length": 1, "numeric:at-threshold": 5, "subscription:empty": 3,
}


@property_check(gen.summary_workloads(), st.sampled_from(["none", "contains"]), scale=3)  # cheap; the pairs are many
def summary_has_no_false_negatives(workload, virtual):
    """CLM-SUM-2: exact ⊆ summary match. CLM-SUM-5: the owner's export has
    the reference summary's rows and matches. CLM-SUM-10: the owner's
    re-check returns exactly the exact matches."""
    subscriptions, events = workload
    census.record_matching(subscriptions, events)
    owner = build_owner(subscriptions, virtual=virtual)
    summary = owner.export()
    reference = ref.reference_summary(subscriptions, virtual)
    assert impl_rows(summary) == model_rows(reference), (subscriptions, impl_rows(summary), model_rows(reference))
    for event in events:
        exact = set(matching_ids(subscriptions, event))
        for sid, n in summary.counters(event).items():
            assert n <= owner.layout.popcount(sid), f"counter {n} of {summary.names[sid]} exceeds popcount(c3)"
        candidates = summary.match(event)
        got = {summary.names[i] for i in candidates}
        assert exact <= got, f"false negative: {sorted(exact - got)} for {event}; subscriptions {subscriptions}"
        assert got == ref.summary_match(reference, event), (event, got, ref.summary_match(reference, event))
        want_counters = ref.summary_counters(reference, event)
        assert {summary.names[i]: n for i, n in summary.counters(event).items()} == want_counters, (event, want_counters)
        assert {owner.names[i] for i in owner.recheck(event, candidates)} == exact, (event, got, exact)


def _member_formula(constraints, var, chars):
    return z3.And(*[smt.operator_holds(c.op, var, smt.constant(c.type, c.op, c.value, chars)) for c in constraints])


def _row_formula(key, row_constraint, var, chars):
    if isinstance(row_constraint, ref_abstraction.Interval):
        parts = []
        for bound, cmp in ((row_constraint.lo, ">="), (row_constraint.hi, "<=")):
            if math.isfinite(bound):
                parts.append(smt.operator_holds(cmp, var, smt.value_constant(key[1], bound, chars)))
        return z3.And(*parts) if parts else z3.BoolVal(True)
    c = row_constraint
    return smt.operator_holds(c.op, var, smt.constant(c.type, c.op, c.value, chars))


@property_check(gen.summary_workloads(max_events=0), st.sampled_from(["none", "contains"]))
def rows_cover_members_by_z3(workload, virtual):
    """CLM-SUM-2 (z3): for every row and member, z3 shows that no value
    satisfies the member's own constraints on the key but not the row."""
    subscriptions, _ = workload
    by_id = dict(subscriptions)
    summary = build_owner(subscriptions, virtual=virtual).export()
    for key, rows in summary.rows().items():
        for _, c, ids in rows:
            row_constraint = to_model(key, c)
            for sid in ids:
                own = [x for x in by_id[summary.names[sid]].constraints if ref_abstraction.key_of(x) == key]
                chars = smt.CharMap([t for x in own + [row_constraint] if isinstance(x, Constraint) and isinstance(x.value, str) for t in [x.value]])
                v = smt.variable(key[1], "v")
                verdict, model = smt.check(z3.And(smt.in_domain(key[1], v), _member_formula(own, v, chars),
                                                  z3.Not(_row_formula(key, row_constraint, v, chars))))
                assert verdict == z3.unsat, f"row {row_constraint} does not cover {own} ({verdict}: {model})"


def prove_generalizations() -> str:
    """CLM-SUM-2 (z3, for all values): every step that makes a row more
    general than its members is sound. Numeric: each operator's closed
    interval contains it (int and float), the intersection of two intervals
    contains their conjunction, and the hull of two intervals contains each.
    String: the canonical names (`prefix ""` etc., `l*` as prefix, `*r` as
    suffix) denote the same sets, and the virtual `contains x` contains
    `prefix x` and `suffix x`."""
    proved = 0

    def prove(claim: z3.BoolRef, label: str) -> None:
        nonlocal proved
        verdict, model = smt.check(z3.Not(claim))
        assert verdict == z3.unsat, f"{label}: {verdict} {model}"
        proved += 1

    for type_ in ("int", "float"):
        v, w = smt.variable(type_, "v"), smt.variable(type_, "w")
        lo1, hi1, lo2, hi2 = (smt.variable(type_, n) for n in ("lo1", "hi1", "lo2", "hi2"))
        domain = z3.And(*[smt.in_domain(type_, x) for x in (v, w, lo1, hi1, lo2, hi2)])
        le = (lambda a, b: z3.fpLEQ(a, b)) if type_ == "float" else (lambda a, b: a <= b)
        for op in ("=", "<", "<=", ">", ">=", "!=", "any"):
            interval = ref_abstraction.constraint_interval(Constraint("v", type_, op, None if op == "any" else (1 if type_ == "int" else 1.0)))
            inside = []
            if math.isfinite(interval.lo):
                inside.append(le(w, v))
            if math.isfinite(interval.hi):
                inside.append(le(v, w))
            prove(z3.Implies(z3.And(domain, smt.operator_holds(op, v, w)), z3.And(*inside) if inside else z3.BoolVal(True)),
                  f"{type_} {op} lies in its closed interval")
        in1 = z3.And(le(lo1, v), le(v, hi1))
        in2 = z3.And(le(lo2, v), le(v, hi2))
        mx = z3.If(le(lo1, lo2), lo2, lo1)
        mn = z3.If(le(hi1, hi2), hi1, hi2)
        prove(z3.Implies(z3.And(domain, in1, in2), z3.And(le(mx, v), le(v, mn))), f"{type_} intersection")
        lo = z3.If(le(lo1, lo2), lo1, lo2)
        hi = z3.If(le(hi1, hi2), hi2, hi1)
        prove(z3.Implies(z3.And(domain, z3.Or(in1, in2)), z3.And(le(lo, v), le(v, hi))), f"{type_} hull")
    v, x = z3.String("v"), z3.String("x")
    empty = z3.StringVal("")
    holds = smt.operator_holds
    for op in ("prefix", "suffix", "contains"):
        prove(holds(op, v, empty) == z3.BoolVal(True), f"{op} \"\" is any")
    prove(holds("wildcard", v, (empty, empty)) == z3.BoolVal(True), "wildcard * is any")
    prove(holds("wildcard", v, (x, empty)) == holds("prefix", v, x), "wildcard l* is prefix l")
    prove(holds("wildcard", v, (empty, x)) == holds("suffix", v, x), "wildcard *r is suffix r")
    prove(z3.Implies(holds("prefix", v, x), holds("contains", v, x)), "contains x covers prefix x")
    prove(z3.Implies(holds("suffix", v, x), holds("contains", v, x)), "contains x covers suffix x")
    return f"{proved} proved"


#: Probe values: every string over {a, b} up to length 3, and numbers at and between the strategies' bounds.
PROBE_STRINGS = ["".join(p) for n in range(4) for p in itertools.product("ab", repeat=n)]
PROBE_NUMBERS = [x / 4 for x in range(-24, 25)]


@property_check(gen.summary_workloads(max_events=0), st.sampled_from(["none", "contains"]))
def lookups_equal_satisfied_rows(workload, virtual):
    """CLM-SUM-5 (step 1 of Algorithm 4-1): for every probe value, each
    structure's lookup returns exactly the union of the ID sets of the rows
    the model says the value satisfies."""
    subscriptions, _ = workload
    summary = build_owner(subscriptions, virtual=virtual).export()
    for key, structure in summary.structures.items():
        rows = [ref.Row(kind, to_model(key, c), frozenset(ids)) for kind, c, ids in structure.rows()]
        if key[1] == "string":
            probes = PROBE_STRINGS
        elif key[1] == "bool":
            probes = [False, True]
        else:
            probes = [int(v) for v in PROBE_NUMBERS if v == int(v)] if key[1] == "int" else PROBE_NUMBERS
        for value in probes:
            want = set().union(*(r.ids for r in ref.satisfied_rows(rows, value)))
            assert set(structure.lookup(value)) == want, (key, value, set(structure.lookup(value)), want)


def _normalized_strings(alphabet: str = "ab", longest: int = 2) -> list[Constraint]:
    words = ["".join(p) for n in range(longest + 1) for p in itertools.product(alphabet, repeat=n)]
    out = {Constraint("s", "string", "any")}
    for w in words:
        out.add(Constraint("s", "string", "=", w))
        if w:
            out |= {Constraint("s", "string", op, w) for op in ("prefix", "suffix", "contains")}
    out |= {Constraint("s", "string", "wildcard", f"{l}*{r}") for l in words for r in words if l and r}
    return sorted(out, key=repr)


def covering_agrees_exhaustively() -> str:
    """CLM-SUM-1: the impl's covering of normalized string constraints equals
    the model's rules on every pair of normalized constraints over {a, b}
    with values up to length 2 (wildcards with both sides)."""
    constraints = _normalized_strings()
    for g, sp in itertools.product(constraints, repeat=2):
        assert pattern_covers((g.op, g.value), (sp.op, sp.value)) == covers_by_rules(g, sp), (g, sp)
    return f"{len(constraints) ** 2} pairs"


# --- CLM-SUM-3: exactness ------------------------------------------------------------

@property_check(gen.exact_summary_workloads())
def exact_rows_give_exact_matches(workload):
    """CLM-SUM-3: when no row generalizes (DEF-SUM-9), summary match equals exact match."""
    subscriptions, events = workload
    reference = ref.reference_summary(subscriptions)
    assert ref.summary_is_exact(reference, dict(subscriptions)), model_rows(reference)
    summary = build_owner(subscriptions).export()
    for event in events:
        assert names_matched(summary, event) == set(matching_ids(subscriptions, event)), (event, subscriptions)


@property_check(gen.summary_workloads())
def exactness_implies_equality(workload):
    """CLM-SUM-3 on general workloads: if the summary happens to be exact,
    it matches exactly; if it matches more, some row generalizes."""
    subscriptions, events = workload
    reference = ref.reference_summary(subscriptions)
    exact_rows = ref.summary_is_exact(reference, dict(subscriptions))
    summary = build_owner(subscriptions).export()
    for event in events:
        if names_matched(summary, event) != set(matching_ids(subscriptions, event)):
            assert not exact_rows, (event, model_rows(reference))


# --- CLM-SUM-4: structure -------------------------------------------------------------

def check_structure(summary: Summary, members: dict[int, dict]) -> None:
    """AACS: ranges sorted, disjoint, non-touching; equalities distinct and
    outside every range; no empty ID set. SACS: an antichain. Every
    (subscription, key) in exactly one row, which covers its constraint."""
    for key, s in summary.structures.items():
        rows = s.rows()
        assert rows, f"{key}: empty structure kept"
        if key[1] in ref_abstraction.NUMERIC_TYPES:
            for i in range(len(s.los)):
                assert s.los[i] < s.his[i], f"{key}: range {s.los[i]}..{s.his[i]} is a point or empty"
                if i:
                    assert s.his[i - 1] < s.los[i], f"{key}: ranges {i - 1} and {i} overlap or touch"
            assert s.eq_values == sorted(set(s.eq)), f"{key}: equality index out of step"
            for value in s.eq_values:
                assert all(not lo <= value <= hi for lo, hi in zip(s.los, s.his)), f"{key}: equality {value} inside a range"
        else:
            constraints = [c for _, c, _ in rows]
            for a, b in itertools.permutations(constraints, 2):
                assert not pattern_covers(a, b), f"{key}: row {a} covers row {b}"
        for kind, c, ids in rows:
            assert ids, f"{key}: empty ID list on {c}"
    seen = Counter()
    for key, s in summary.structures.items():
        for _, c, ids in s.rows():
            for sid in ids:
                seen[(sid, key)] += 1
                n = members[sid][key]
                covered = (c[0] <= n[0] and n[1] <= c[1]) if key[1] in ref_abstraction.NUMERIC_TYPES else pattern_covers(c, n)
                assert covered, f"{key}: row {c} does not cover member {sid}'s {n}"
    expected = Counter((sid, key) for sid, a in members.items() for key in a)
    assert seen == expected, f"rows per (subscription, key): {dict(seen - expected)} extra, {dict(expected - seen)} missing"


@property_check(gen.summary_workloads(max_events=0), st.sampled_from(["none", "contains"]))
def summary_structure_holds(workload, virtual):
    """CLM-SUM-4."""
    subscriptions, _ = workload
    owner = build_owner(subscriptions, virtual=virtual)
    check_structure(owner.export(), owner.abstractions)


# --- CLM-SUM-6: order independence ------------------------------------------------------

@property_check(gen.summary_workloads(max_events=0), st.randoms(use_true_random=False))
def numeric_rows_are_canonical(workload, random):
    """CLM-SUM-6: numeric rows do not depend on insertion order and equal
    the connected components of the intervals; the string rows' constraints
    do not depend on it either."""
    subscriptions, _ = workload
    shuffled = list(subscriptions)
    random.shuffle(shuffled)
    a = impl_rows(build_owner(subscriptions).export())
    b = impl_rows(build_owner(shuffled, schema=ref_abstraction.schema_of(s for _, s in subscriptions)).export())
    canonical = {}
    for key in a:
        if key[1] in ref_abstraction.NUMERIC_TYPES:
            members = [(sid, ref_abstraction.abstraction(s)[key]) for sid, s in subscriptions
                       if ref_abstraction.abstraction(s) is not None and key in ref_abstraction.abstraction(s)]
            canonical[key] = sorted(((r.kind, r.constraint, r.ids) for r in ref.numeric_rows(members)), key=repr)
    for key in a:
        if key[1] in ref_abstraction.NUMERIC_TYPES:
            assert a[key] == b[key] == canonical[key], (key, a[key], b[key], canonical[key])
    assert constraint_sets(a) == constraint_sets(b), (constraint_sets(a), constraint_sets(b))


# --- CLM-SUM-7: round trip ---------------------------------------------------------------

@property_check(gen.summary_workloads(max_events=0), gen.summary_subscriptions(), st.sampled_from(["none", "contains"]))
def insert_then_delete_restores(workload, extra, virtual):
    """CLM-SUM-7: at the owner, adding then deleting a subscription restores
    every row and ID set (through the ACGTs); at a remote history fed by
    deltas, numeric rows are restored exactly and string rows' constraints."""
    subscriptions, _ = workload
    schema = ref_abstraction.schema_of([s for _, s in subscriptions] + [extra])
    owner = build_owner(subscriptions, schema=schema, virtual=virtual)
    before = impl_rows(owner.export())
    history = History.of(owner.take_delta().insertions)
    remote_before = impl_rows(history)
    owner.add("extra", extra)
    history.apply(owner.take_delta(), None)
    owner.remove("extra")
    history.apply(owner.take_delta(), Directory([owner]).resolve)
    assert impl_rows(owner.export()) == before, (impl_rows(owner.export()), before)
    after = impl_rows(history)
    for key in set(after) | set(remote_before):
        if key[1] in ref_abstraction.NUMERIC_TYPES:
            assert after.get(key) == remote_before.get(key), (key, after.get(key), remote_before.get(key))
    assert constraint_sets(after) == constraint_sets(remote_before)
    check_structure(history, owner.abstractions)


# --- CLM-SUM-8: merge -----------------------------------------------------------------------

def _split_brokers(subscriptions, parts: int):
    schema = ref_abstraction.schema_of(s for _, s in subscriptions)
    layout = IdLayout(parts, max(1, len(subscriptions) + 2), len(schema))
    owners = [OwnerSummary(b, layout, schema) for b in range(parts)]
    for i, (name, subscription) in enumerate(subscriptions):
        owners[i % parts].add(name, subscription)
    return owners


@property_check(gen.summary_workloads(max_events=4))
def merge_laws(workload):
    """CLM-SUM-8: merge is commutative, associative and idempotent on
    numeric rows with their ID sets and on the string row constraints (an
    ID covered by two string rows may join either); idempotent on
    everything; a merged summary has no false negatives."""
    subscriptions, events = workload
    a, b, c = (o.export() for o in _split_brokers(subscriptions, 3))
    ab = a.copy().merge_in(b)
    assert _merge_view(ab) == _merge_view(b.copy().merge_in(a)), "merge is not commutative"
    assert _merge_view(ab.copy().merge_in(c)) == _merge_view(a.copy().merge_in(b.copy().merge_in(c))), "merge is not associative"
    assert impl_rows(a.copy().union_rows(a)) == impl_rows(a), "merge is not idempotent"
    merged = ab.merge_in(c)
    assert merged.merged_brokers == {0, 1, 2}
    for event in events:
        assert set(matching_ids(subscriptions, event)) <= names_matched(merged, event)


def _merge_view(summary: Summary) -> tuple:
    rows = impl_rows(summary)
    return ({k: v for k, v in rows.items() if k[1] in ref_abstraction.NUMERIC_TYPES}, constraint_sets(rows), summary.member_ids())


def merge_assigns_ids_by_order() -> None:
    """CLM-SUM-8's exception: which covering string row an ID joins depends
    on the merge order. P = prefix a (broker 0), Q = suffix b (1), R = "ab" (2)."""
    subs = [("P", parse_filter('s prefix "a"')), ("Q", parse_filter('s suffix "b"')), ("R", parse_filter('s = "ab"'))]
    a, b, c = (o.export() for o in _split_brokers(subs, 3))
    left = _as_sets(impl_rows(a.copy().merge_in(b).merge_in(c)))
    right = _as_sets(impl_rows(a.copy().merge_in(b.copy().merge_in(c))))
    prefix_a, suffix_b = Constraint("s", "string", "prefix", "a"), Constraint("s", "string", "suffix", "b")
    assert left[("s", "string")] == {("constraint", prefix_a, frozenset("PR")), ("constraint", suffix_b, frozenset("Q"))}, left
    assert right[("s", "string")] == {("constraint", prefix_a, frozenset("P")), ("constraint", suffix_b, frozenset("QR"))}, right


@property_check(gen.summary_workloads(max_events=0), gen.summary_workloads(max_events=0))
def history_plus_delta_equals_scratch(old, new):
    """CLM-SUM-8: merge(history, delta) equals the summary built from
    scratch: numeric rows exactly, string rows' constraints."""
    old_subs, _ = old
    new_subs = [(f"n{i}", s) for i, (_, s) in enumerate(new[0])]
    everything = old_subs + new_subs
    schema = ref_abstraction.schema_of(s for _, s in everything)
    owner = OwnerSummary(0, IdLayout(1, len(everything) + 2, len(schema)), schema)
    for name, s in old_subs:
        owner.add(name, s)
    history = History.of(owner.take_delta().insertions)
    for name, s in new_subs:
        owner.add(name, s)
    history.apply(owner.take_delta(), None)
    scratch = impl_rows(owner.export())
    got = impl_rows(history)
    for key in set(scratch) | set(got):
        if key[1] in ref_abstraction.NUMERIC_TYPES:
            assert got.get(key) == scratch.get(key), (key, got.get(key), scratch.get(key))
    assert constraint_sets(got) == constraint_sets(scratch)


# --- CLM-SUM-9: IDs ---------------------------------------------------------------------------

@property_check(st.integers(1, 2000), st.integers(1, 10**6), st.integers(0, 64), st.data())
def ids_round_trip(brokers, max_subscriptions, attributes, data):
    """CLM-SUM-9: decode(encode(c1, c2, c3)) = (c1, c2, c3); the widths are
    ⌈log2 brokers⌉, ⌈log2 max subscriptions⌉ and nt; popcount(c3) counts the
    attributes; the ID fits in its bits."""
    layout = IdLayout(brokers, max_subscriptions, attributes)
    assert layout.c1_bits == math.ceil(math.log2(brokers)) if brokers > 1 else layout.c1_bits == 0
    assert 2 ** layout.c1_bits >= brokers and (brokers == 1 or 2 ** (layout.c1_bits - 1) < brokers)
    assert 2 ** layout.c2_bits >= max_subscriptions and (max_subscriptions == 1 or 2 ** (layout.c2_bits - 1) < max_subscriptions)
    assert layout.c3_bits == attributes
    c1 = data.draw(st.integers(0, brokers - 1))
    c2 = data.draw(st.integers(0, max_subscriptions - 1))
    chosen = data.draw(st.sets(st.integers(0, attributes - 1))) if attributes else set()
    c3 = layout.bitmap(chosen)
    sid = layout.encode(c1, c2, c3)
    assert layout.decode(sid) == (c1, c2, c3)
    assert layout.popcount(sid) == len(chosen)
    assert layout.broker_of(sid) == c1
    assert sid < 2 ** max(layout.bits, 1)


# --- CLM-SUM-11: state machine ----------------------------------------------------------------

SCHEMA = (("b", "bool"), ("s", "string"), ("t", "string"), ("x", "int"), ("y", "float"))


class SummariesUnderChurn(RuleBasedStateMachine):
    """Three owner brokers add and remove subscriptions and ship their deltas
    one broker at a time (so deletions reach the history late, and rebuilds
    ask owners about IDs they already dropped); a remote broker's history
    applies the deltas and rebuilds rows through the owners (method 1).
    After every step: each owner's rows equal the reference built from its
    active subscriptions (numeric exactly, string constraints) and the
    structures hold at the owners and at the history. At every publish: the
    history has no false negatives for the subscriptions shipped and still
    active, and with the owners' re-check it delivers exactly those that match."""

    def __init__(self) -> None:
        super().__init__()
        self.layout = IdLayout(3, 8, len(SCHEMA))  # few slots, so slots are reused
        self.owners = [OwnerSummary(b, self.layout, SCHEMA) for b in range(3)]
        self.history = History(self.layout, SCHEMA)
        self.active: dict[str, tuple[int, Subscription]] = {}
        self.shipped: list[dict[int, tuple[str, dict]]] = [{}, {}, {}]  # per broker: ID -> (name, abstraction)
        self.counter = 0

    @precondition(lambda self: len(self.active) < 20)
    @rule(broker=st.integers(0, 2), subscription=gen.summary_subscriptions())
    def subscribe(self, broker, subscription):
        if len(self.owners[broker].by_name) + len(self.owners[broker]._released) >= self.layout.max_subscriptions:
            return  # the broker's c2 field is full (its freed slots wait for the next delta)
        name = f"s{self.counter}"
        self.counter += 1
        self.owners[broker].add(name, subscription)
        self.active[name] = (broker, subscription)

    @precondition(lambda self: self.active)
    @rule(data=st.data())
    def unsubscribe(self, data):
        name = data.draw(st.sampled_from(sorted(self.active)))
        broker, _ = self.active.pop(name)
        self.owners[broker].remove(name)

    @rule(broker=st.integers(0, 2))
    def propagate(self, broker):
        owner = self.owners[broker]
        self.history.apply(owner.take_delta(), Directory(self.owners).resolve)
        self.shipped[broker] = {sid: (owner.names[sid], dict(a)) for sid, a in owner.abstractions.items()}

    def _live(self) -> dict[int, str]:
        """Shipped IDs whose subscription is still active: what must be delivered."""
        return {sid: name for shipped in self.shipped for sid, (name, _) in shipped.items() if name in self.active}

    @rule(data=st.data())
    def publish(self, data):
        live = self._live()
        subscriptions = {name: self.active[name][1] for name in live.values()}
        source = data.draw(st.sampled_from(sorted(subscriptions))) if subscriptions else None
        event = data.draw(gen.summary_event_for(subscriptions[source] if source else Subscription()))
        exact = set(matching_ids(sorted(subscriptions.items()), event))
        candidates = self.history.match(event)
        got = {live[i] for i in candidates if i in live}
        assert exact <= got, f"false negative {sorted(exact - got)} for {event}"
        delivered = set()
        for owner in self.owners:
            mine = {i for i in candidates if self.layout.broker_of(i) == owner.broker}
            delivered |= {owner.names[i] for i in owner.recheck(event, mine)}
        assert delivered == exact, (delivered, exact)

    @invariant()
    def owners_equal_reference(self):
        for owner in self.owners:
            mine = [(name, s) for name, (b, s) in sorted(self.active.items(), key=lambda kv: int(kv[0][1:])) if b == owner.broker]
            got = impl_rows(owner.export())
            want = model_rows(ref.reference_summary(mine))
            for key in set(got) | set(want):
                if key[1] in ref_abstraction.NUMERIC_TYPES:
                    assert got.get(key) == want.get(key), (owner.broker, key, got.get(key), want.get(key))
            assert constraint_sets(got) == constraint_sets(want), (owner.broker, got, want)
            check_structure(owner.export(), owner.abstractions)

    @invariant()
    def history_structure(self):
        members = {sid: {k: n for k, n in a.items() if (sid, k) not in self.history.retired}
                   for shipped in self.shipped for sid, (_, a) in shipped.items()}
        check_structure(self.history, members)


def run_summaries_state_machine() -> None:
    run_state_machine_as_test(SummariesUnderChurn, settings=settings(stateful_step_count=40))


# --- CLM-SUM-16: file and wire formats ----------------------------------------------------------

@property_check(gen.summary_workloads(max_events=0), st.sampled_from(["none", "contains"]), st.integers(0, 2))
def summary_formats_round_trip(workload, virtual, broker):
    """CLM-SUM-16: JSON and binary round trips keep every row and ID set;
    a file with a row out of canonical form is rejected."""
    subscriptions, _ = workload
    summary = build_owner(subscriptions, broker=broker, brokers=3, virtual=virtual).export()
    doc = json.loads(json.dumps(summary_file.to_json(summary)))
    for back in (summary_file.from_json(doc), wire.from_bytes(wire.to_bytes(summary))):
        assert back.rows() == summary.rows(), (back.rows(), summary.rows())
        assert back.unconditional == summary.unconditional and back.merged_brokers == summary.merged_brokers
        assert back.virtual == summary.virtual and back.schema == summary.schema
    assert summary_file.from_json(doc).names == summary.names
    for i, entry in enumerate(doc["attributes"]):
        broken = json.loads(json.dumps(doc))
        target = broken["attributes"][i]
        some_id = (target.get("rows") or target.get("ranges") or target.get("equalities"))[0]["ids"][:1]
        if "rows" in target:
            target["rows"].append({"op": "any", "ids": some_id})  # covers every other row
        elif target["equalities"]:
            target["equalities"].append(dict(target["equalities"][0]))  # a repeated value
        else:
            target["ranges"].append({"lo": None, "hi": None, "ids": some_id})  # overlaps every range
        try:
            summary_file.from_json(broken, "broken.json")
        except SummaryFileError as exc:
            assert "broken.json" in str(exc) and "attributes" in str(exc), str(exc)
        else:
            raise AssertionError(f"a non-canonical attribute {target} was accepted")


# --- worked examples of seed 000 (CLM-SUM-9, 12 .. 15, 6) -------------------------------------------

PRICE, SYMBOL = ("price", "float"), ("symbol", "string")


def symbol(op: str, value: str) -> Constraint:
    return Constraint("symbol", "string", op, value)


def equality_row(v: float) -> tuple:
    return ("equality", ref_abstraction.Interval(v, v))


def range_row(lo: float, hi: float) -> tuple:
    return ("range", ref_abstraction.Interval(lo, hi))


def expected_rows(**by_key) -> dict:
    """Expected rows, transcribed from the thesis: key -> {(kind, constraint, names)}."""
    keys = {"price": PRICE, "symbol": SYMBOL}
    return {keys[k]: {(kind, c, frozenset(names.split())) for (kind, c), names in rows} for k, rows in by_key.items()}


def _as_sets(rows: dict) -> dict:
    return {key: set(key_rows) for key, key_rows in rows.items()}


def fig_4_5(reading: str) -> list[tuple[str, Subscription]]:
    """Seed 000 Fig. 4-5: S1..S4 on symbol and price. `>*` is read as prefix
    (ours) or as contains (the reading under which the thesis's t4 holds)."""
    star = "prefix" if reading == "prefix" else "contains"
    return [
        ("S1", parse_filter('symbol = "OTE" and price = 8.50')),
        ("S2", parse_filter('symbol = "OTER" and price = 8.55')),
        ("S3", parse_filter(f'symbol {star} "OTE" and price >= 8.45 and price <= 8.60')),
        ("S4", parse_filter(f'symbol {star} "T" and price >= 8.60 and price <= 8.70')),
    ]


def _both_sides(subscriptions) -> dict:
    """The owner's rows, after checking that the model builds the same."""
    got = _as_sets(impl_rows(build_owner(subscriptions, schema=(PRICE, SYMBOL)).export()))
    assert got == _as_sets(model_rows(ref.reference_summary(subscriptions))), (got, model_rows(ref.reference_summary(subscriptions)))
    return got


def seed000_example_4_1() -> None:
    """CLM-SUM-12: Example 4-1 (Figs. 2-2, 4-1, 4-2, 4-3)."""
    from subsum.conformance.examples import FIG_2_2_EVENT, FIG_4_1_S1, FIG_4_1_S2

    subscriptions = [("S1", FIG_4_1_S1), ("S2", FIG_4_1_S2)]
    owner = build_owner(subscriptions, brokers=2)
    summary = owner.export()
    sid = {name: i for i, name in summary.names.items()}
    assert (owner.layout.popcount(sid["S1"]), owner.layout.popcount(sid["S2"])) == (3, 4)
    counters = {summary.names[i]: n for i, n in summary.counters(FIG_2_2_EVENT).items()}
    assert counters == {"S1": 3, "S2": 2}, counters
    assert ref.summary_counters(ref.reference_summary(subscriptions), FIG_2_2_EVENT) == counters
    assert names_matched(summary, FIG_2_2_EVENT) == {"S1"}
    rows = _as_sets(impl_rows(summary))
    assert rows[PRICE] == {(*range_row(8.30, 8.70), frozenset({"S1"})), (*equality_row(8.20), frozenset({"S2"}))}, rows[PRICE]
    assert rows[SYMBOL] == {("constraint", symbol("prefix", "OT"), frozenset({"S1", "S2"}))}, rows[SYMBOL]
    assert rows[("volume", "int")] == {("range", ref_abstraction.Interval(130000, math.inf), frozenset({"S2"}))}
    assert rows[("low", "float")] == {("range", ref_abstraction.Interval(-math.inf, 8.05), frozenset({"S2"}))}
    assert rows[("exchange", "string")] == {("constraint", Constraint("exchange", "string", "wildcard", "N*SE"), frozenset({"S1"}))}


def _tree(node, names) -> tuple:
    return (node.c, tuple(sorted(names[i] for i in node.ids)), tuple(sorted(_tree(c, names) for c in node.children)))


def seed000_example_4_2() -> None:
    """CLM-SUM-13: Example 4-2's time series under both readings of `>*`,
    and the ACGTs of Figs. 4-10 and 4-11."""
    prefix, contains = fig_4_5("prefix"), fig_4_5("contains")
    t1 = expected_rows(symbol=[(("constraint", symbol("=", "OTE")), "S1")], price=[(equality_row(8.50), "S1")])
    t2 = expected_rows(symbol=[(("constraint", symbol("=", "OTE")), "S1"), (("constraint", symbol("=", "OTER")), "S2")],
               price=[(equality_row(8.50), "S1"), (equality_row(8.55), "S2")])
    assert _both_sides(prefix[:1]) == _both_sides(contains[:1]) == t1
    assert _both_sides(prefix[:2]) == _both_sides(contains[:2]) == t2
    t3_price = [(range_row(8.45, 8.60), "S1 S2 S3")]
    assert _both_sides(prefix[:3]) == expected_rows(symbol=[(("constraint", symbol("prefix", "OTE")), "S1 S2 S3")], price=t3_price)
    assert _both_sides(contains[:3]) == expected_rows(symbol=[(("constraint", symbol("contains", "OTE")), "S1 S2 S3")], price=t3_price)
    t4_price = [(range_row(8.45, 8.70), "S1 S2 S3 S4")]
    # Ours (prefix): `>* T` does not cover OTE, so S4 keeps a row of its own.
    assert _both_sides(prefix) == expected_rows(symbol=[(("constraint", symbol("prefix", "OTE")), "S1 S2 S3"),
                                                (("constraint", symbol("prefix", "T")), "S4")], price=t4_price)
    # The thesis's t4 (`>* T -> S1, S2, S3, S4`) holds under the contains reading.
    assert _both_sides(contains) == expected_rows(symbol=[(("constraint", symbol("contains", "T")), "S1 S2 S3 S4")], price=t4_price)
    owner = build_owner(contains, schema=(PRICE, SYMBOL))
    symbol_trees = [_tree(r, owner.names) for r in owner.forests[SYMBOL].roots]
    assert symbol_trees == [(("contains", "T"), ("S4",), (
        (("contains", "OTE"), ("S3",), ((("=", "OTE"), ("S1",), ()), (("=", "OTER"), ("S2",), ()))),))], symbol_trees
    price_trees = [_tree(r, owner.names) for r in owner.forests[PRICE].roots]
    assert price_trees == [((8.45, 8.70), (), (
        ((8.45, 8.60), ("S3",), (((8.50, 8.50), ("S1",), ()), ((8.55, 8.55), ("S2",), ()))),
        ((8.60, 8.70), ("S4",), ())))], price_trees


def seed000_example_4_4() -> None:
    """CLM-SUM-14: Example 4-4: t1 -> t2 -> t3 at broker 3's history gives
    back t1 exactly; the price row is rebuilt by asking the owners."""
    for reading in ("prefix", "contains"):
        s1, s2, s3, s4 = (s for _, s in fig_4_5(reading))
        layout = IdLayout(4, 8, 2)
        owners = {b: OwnerSummary(b, layout, (PRICE, SYMBOL)) for b in (1, 2, 3)}
        owners[1].add("S1", s1)
        owners[2].add("S2", s2)
        owners[3].add("S4", s4)
        history = History.of(owners[3].take_delta().insertions)
        directory = Directory(owners.values())
        asked = []

        def resolve(key, ids):
            asked.append((key, sorted({layout.broker_of(i) for i in ids})))
            return directory.resolve(key, ids)

        for b in (1, 2):
            history.apply(owners[b].take_delta(), resolve)
        names = {i: n for o in owners.values() for i, n in o.names.items()}
        t1 = _as_sets(impl_rows(history, names))
        owners[1].add("S3", s3)
        history.apply(owners[1].take_delta(), resolve)
        names.update(owners[1].names)
        t2 = _as_sets(impl_rows(history, names))
        owners[1].remove("S3")
        history.apply(owners[1].take_delta(), resolve)
        t3 = _as_sets(impl_rows(history, names))
        price_t1 = [(range_row(8.60, 8.70), "S4"), (equality_row(8.50), "S1"), (equality_row(8.55), "S2")]
        price_t2 = [(range_row(8.45, 8.70), "S1 S2 S3 S4")]
        if reading == "prefix":
            assert t1 == expected_rows(symbol=[(("constraint", symbol("=", "OTE")), "S1"), (("constraint", symbol("=", "OTER")), "S2"),
                                       (("constraint", symbol("prefix", "T")), "S4")], price=price_t1), t1
            assert t2 == expected_rows(symbol=[(("constraint", symbol("prefix", "OTE")), "S1 S2 S3"),
                                       (("constraint", symbol("prefix", "T")), "S4")], price=price_t2), t2
            assert {k for k, _ in asked} == {PRICE, SYMBOL}, asked
        else:  # Figs. 4-13 and 4-14
            assert t1 == expected_rows(symbol=[(("constraint", symbol("contains", "T")), "S1 S2 S4")], price=price_t1), t1
            assert t2 == expected_rows(symbol=[(("constraint", symbol("contains", "T")), "S1 S2 S3 S4")], price=price_t2), t2
            assert {k for k, _ in asked} == {PRICE}, asked  # S3's symbol constraint was not the row's
        assert {1, 2} <= set(dict(asked)[PRICE]), asked
        assert t3 == t1, (reading, t3, t1)
        check_structure(history, {i: a for o in owners.values() for i, a in o.abstractions.items()})


def seed000_false_positive() -> None:
    """CLM-SUM-15: the documented false positive, removed by the owner's re-check."""
    subscriptions = fig_4_5("prefix")
    owner = build_owner(subscriptions, schema=(PRICE, SYMBOL))
    summary = owner.export()
    event = Event((Attribute("symbol", "string", "OTE"), Attribute("price", "float", 8.65)))
    candidates = summary.match(event)
    assert {summary.names[i] for i in candidates} == {"S1", "S2", "S3"}
    counters = {summary.names[i]: n for i, n in summary.counters(event).items()}
    assert counters == {"S1": 2, "S2": 2, "S3": 2, "S4": 1}, counters
    assert ref.summary_match(ref.reference_summary(subscriptions), event) == {"S1", "S2", "S3"}
    assert matching_ids(subscriptions, event) == []
    assert owner.recheck(event, candidates) == set()


def seed000_fig_4_4_id() -> None:
    """CLM-SUM-9: Fig. 4-4: subscription 1 of broker 2, attributes 3, 5 and 6,
    with 4 brokers, 8 subscriptions and 7 attributes, is `10 001 1101000`."""
    layout = IdLayout(4, 8, 7)
    assert (layout.c1_bits, layout.c2_bits, layout.c3_bits) == (2, 3, 7)
    sid = layout.encode(2, 1, layout.bitmap([3, 5, 6]))
    assert format(sid, "012b") == "100011101000", format(sid, "012b")
    assert layout.decode(sid) == (2, 1, 0b1101000) and layout.popcount(sid) == 3
    assert IdLayout(1000, 10**6, 10).bits == 10 + 20 + 10  # seed 000 §4.2.2's sizes


def contains_policy_depends_on_order() -> None:
    """CLM-SUM-6's exception: under virtual="contains" the row constraints
    depend on insertion order, as the spec states."""
    subs = [("a", parse_filter('symbol prefix "a"')), ("pab", parse_filter('symbol prefix "ab"')),
            ("sab", parse_filter('symbol suffix "ab"'))]
    one = constraint_sets(impl_rows(build_owner(subs, virtual="contains").export()))
    other = constraint_sets(impl_rows(build_owner(subs[::-1], virtual="contains").export()))
    assert one[SYMBOL] == sorted({repr(symbol("prefix", "a")), repr(symbol("suffix", "ab"))}), one
    assert other[SYMBOL] == sorted({repr(symbol("prefix", "a")), repr(symbol("contains", "ab"))}), other
    plain = [constraint_sets(impl_rows(build_owner(order).export())) for order in (subs, subs[::-1])]
    assert plain[0] == plain[1]


def history_survives_slot_reuse_and_late_deletions() -> None:
    """CLM-SUM-11 regressions: (1) a slot freed and reused before the next
    delta, (2) two deletions of one row in one delta, (3) a rebuild asking
    another broker about an ID it deleted but has not shipped yet."""
    schema = (("s", "string"), ("x", "int"))
    layout = IdLayout(3, 8, 2)

    def one(text):
        return Subscription(frozenset(parse_filter(text).constraints))

    # (1) A deleted, B added in its place before the delta: B must be found.
    o = OwnerSummary(0, layout, schema)
    h = History(layout, schema)
    o.add("A", one('s = "zzz"'))
    h.apply(o.take_delta(), Directory([o]).resolve)
    o.remove("A")
    o.add("B", one('s = "aaa"'))
    h.apply(o.take_delta(), Directory([o]).resolve)
    assert h.match(Event((Attribute("s", "string", "aaa"),))) == {o.by_name["B"]}
    assert impl_rows(h, o.names) == impl_rows(o.export())
    # (2) x = 0 and x < 0 share a row; both deleted in one delta.
    o = OwnerSummary(0, layout, schema)
    h = History(layout, schema)
    o.add("s0", one("x = 0"))
    o.add("s1", one("x < 0"))
    h.apply(o.take_delta(), Directory([o]).resolve)
    o.remove("s1")
    o.remove("s0")
    h.apply(o.take_delta(), Directory([o]).resolve)
    assert h.rows() == {} and not h.retired
    # (3) broker 0 holds x <= 5, broker 1 x = 3; both delete; 0's delta first.
    owners = [OwnerSummary(b, layout, schema) for b in range(2)]
    h = History(layout, schema)
    owners[0].add("a", one("x <= 5"))
    owners[1].add("b", one("x = 3"))
    owners[1].add("c", one("x = 4"))
    for o in owners:
        h.apply(o.take_delta(), Directory(owners).resolve)
    owners[1].remove("b")
    owners[0].remove("a")
    h.apply(owners[0].take_delta(), Directory(owners).resolve)
    assert h.rows()[("x", "int")] == [("equality", (4, 4), frozenset({owners[1].by_name["c"]}))], h.rows()
    h.apply(owners[1].take_delta(), Directory(owners).resolve)
    assert h.rows()[("x", "int")] == [("equality", (4, 4), frozenset({owners[1].by_name["c"]}))] and not h.retired


def contains_policy_round_trip() -> None:
    """CLM-SUM-7 under virtual="contains": with rows `prefix x` and
    `contains xy`, adding `suffix x` makes the virtual row `contains x`
    (absorbing both); deleting it again must restore the two rows, at the
    owner (the ACGT drops the unjustified virtual root) and at a history."""
    subs = [("p", parse_filter('s prefix "x"')), ("c", parse_filter('s contains "xy"'))]
    owner = build_owner(subs, virtual="contains", schema=(("s", "string"),))
    history = History.of(owner.take_delta().insertions)
    before = _as_sets(impl_rows(owner.export()))
    assert before == {("s", "string"): {("constraint", Constraint("s", "string", "prefix", "x"), frozenset("p")),
                                         ("constraint", Constraint("s", "string", "contains", "xy"), frozenset("c"))}}, before
    owner.add("r", parse_filter('s suffix "x"'))
    history.apply(owner.take_delta(), None)
    joined = {("s", "string"): {("constraint", Constraint("s", "string", "contains", "x"), frozenset("pcr"))}}
    assert _as_sets(impl_rows(owner.export())) == joined
    names = dict(owner.names)
    assert _as_sets(impl_rows(history, names)) == joined
    owner.remove("r")
    history.apply(owner.take_delta(), Directory([owner]).resolve)
    assert _as_sets(impl_rows(owner.export())) == before, impl_rows(owner.export())
    assert _as_sets(impl_rows(history, names)) == before, impl_rows(history, names)
