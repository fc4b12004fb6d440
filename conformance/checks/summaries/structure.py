"""The summaries' structure and how it changes: the AACS and SACS
invariants (CLM-SUM-4), canonical numeric rows (CLM-SUM-6), insert then
delete (CLM-SUM-7), the merge laws and history plus delta (CLM-SUM-8)."""

from __future__ import annotations

import itertools
from collections import Counter

from hypothesis import strategies as st

from subsum.conformance import strategies as gen
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.checks.summaries.views import build_owner, check_same_rows, constraint_sets, impl_rows, names_matched, split_brokers
from subsum.impl.summary import IdLayout, OwnerSummary, Summary
from subsum.impl.summary.history import Directory, History
from subsum.impl.summary.normalize import pattern_covers
from subsum.model.summaries import abstraction as ref_abstraction
from subsum.model.summaries import summary as ref
from subsum.model.semantics import matching_ids

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
    check_same_rows(impl_rows(history), remote_before)
    check_structure(history, owner.abstractions)


# --- CLM-SUM-8: merge -----------------------------------------------------------------------


@property_check(gen.summary_workloads(max_events=4))
def merge_laws(workload):
    """CLM-SUM-8: merge is commutative, associative and idempotent on
    numeric rows with their ID sets and on the string row constraints (an
    ID covered by two string rows may join either); idempotent on
    everything; a merged summary has no false negatives."""
    subscriptions, events = workload
    a, b, c = (o.export() for o in split_brokers(subscriptions, 3))
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
    check_same_rows(impl_rows(history), scratch)
