"""The optimized summaries against the model, property by property: the
abstraction and covering (CLM-SUM-1), no false negatives and the
reference's rows and counters (CLM-SUM-2, 5, 10), the structures' lookups
(CLM-SUM-5) and exactness (CLM-SUM-3)."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from subsum.conformance.runner import census
from subsum.conformance import strategies as gen
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.checks.summaries.views import build_owner, impl_rows, model_rows, names_matched, to_model
from subsum.core.types import OPS_BY_TYPE, Constraint
from subsum.impl.summary.normalize import abstraction as impl_abstraction
from subsum.impl.summary.normalize import pattern_covers
from subsum.model.summaries import abstraction as ref_abstraction
from subsum.model.summaries import summary as ref
from subsum.model.covering import covers_by_rules
from subsum.model.semantics import matching_ids

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


@property_check(gen.summary_workloads(), st.sampled_from(["none", "contains"]), scale=5)  # cheap; the pairs are many
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
