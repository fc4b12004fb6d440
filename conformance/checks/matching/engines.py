"""Conformance of the matching engines (subsum.impl.matching) with the model
(subsum.model.semantics): properties, and a state machine that interleaves
add, remove and match (claims CLM-ENG-*, spec/03-matching.md)."""

from __future__ import annotations



import attrs
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule, run_state_machine_as_test

from subsum.conformance.runner.profiles import pinned
from subsum.conformance.runner import census
from subsum.conformance.runner import under_test
from subsum.conformance import strategies as gen
from subsum.conformance.checks.matching.properties import property_check
from subsum.core.types import INT_MAX, INT_MIN, OPS_BY_TYPE, TYPES, Attribute, Constraint, Event, Scalar, Subscription
from subsum.impl.matching import make_engine
from subsum.impl.matching.cindex import OrderedLeaf
from subsum.model import semantics
from subsum.model.covering import covers_by_rules


def assert_engines_agree(subscriptions: list[tuple[str, Subscription]], events: list[Event]) -> None:
    """Every engine returns exactly the model's matches, event by event."""
    census.record_matching(subscriptions, events)
    expected = semantics.match_batch(subscriptions, events)
    for name in under_test.engines():
        got = make_engine(name, subscriptions).match_batch(events)
        for event, want, have in zip(events, expected, got):
            assert have == want, (
                f"engine {name}: event {event} matched {sorted(have)}, the model says {sorted(want)}; "
                f"subscriptions {subscriptions}"
            )
        assert len(got) == len(events), f"engine {name}: {len(got)} result lines for {len(events)} events"


# --- census floors (conformance/runner/census.py): what the `ci` profile must draw ----------------------

#: Every (type, operator) pair of DEF-DATA-5.
TYPE_OPERATOR_FLOORS = {f"op:{t}:{op}": 5 for t in TYPES for op in OPS_BY_TYPE[t]}
MIXED_FLOORS = {
    **TYPE_OPERATOR_FLOORS,
    "float:zero": 5, "int-64-limit": 5, "float-limit": 5, "numeric:at-threshold": 5,
    "name:several-types": 5, "name:bool-true-and-int-1": 5, "name:int-1-and-float-1.0": 5,
    "subscription:empty": 5, "subscription:only-not-equal": 5, "subscription:only-any": 5, "subscription:only-not-equal-or-any": 3,
}
STRING_FLOORS = {
    **{f"op:string:{op}": 20 for op in OPS_BY_TYPE["string"]},
    # matches (and near misses) at the start, in the middle and at the end of a value, and of the whole value
    **{f"contains:{where}": 3 for where in ("at-start", "in-middle", "at-end-only", "whole-value")},
    # built around the patterns in use, values meet a prefix at the start (50 under ci) and a wildcard at its exact
    # length (116) far more than arbitrary values do (3 and 10: tests/test_gate.py plants that regression)
    "prefix:at-start": 10, "prefix:at-end-only": 1, "prefix:whole-value": 5,
    "suffix:at-end-only": 1, "suffix:at-start": 1, "suffix:whole-value": 1, "empty-prefix": 3, "empty-suffix": 3, "empty-contains": 3, "wildcard-star-alone": 3,
    "wildcard:exact-length": 30, "wildcard:parts-overlap": 3,
}
BOUNDARY_FLOORS = {
    **{f"op:{t}:{op}": 20 for t in ("int", "float") for op in ("<", "<=", ">", ">=", "=", "!=")},
    "int-64-limit": 20, "float-limit": 20, "numeric:at-threshold": 20,
}


def _one_name_case(name: str, type_: str, constraints: list[tuple[str, Scalar]], values: list[Scalar]):
    """A pinned workload: one subscription per (op, value), one event per value, all on one name and type."""
    subs = [(f"s{i}", Subscription(frozenset({Constraint(name, type_, op, value)}))) for i, (op, value) in enumerate(constraints)]
    return subs, [Event((Attribute(name, type_, v),)) for v in values]


#: The spec's string edge cases (spec/01-data-model.md DEF-DATA-5, CLM-DATA-4), pinned.
STRING_EDGE_CASES = (
    # contains at the start, in the middle, at the end only, as the whole value, and empty
    _one_name_case("s", "string", [("contains", "b"), ("contains", "ab"), ("contains", "")], ["ab", "ba", "aba", "b", "", "aab", "bb"]),
    # the empty prefix and suffix and `*` alone match every string, the empty one included
    _one_name_case("s", "string", [("prefix", ""), ("suffix", ""), ("wildcard", "*")], ["", "ab"]),
    # wildcard values exactly len(l) + len(r) long, and parts that overlap in a value too short
    _one_name_case("s", "string", [("wildcard", "a*b"), ("wildcard", "ab*ba"), ("prefix", "ab"), ("suffix", "ab")], ["ab", "aba", "abba", "b"]),
)

def _every_operator_case():
    """A pinned workload: one subscription holding a constraint of every
    (type, operator) pair, each on its own name (so every one but the pivot
    is checked in the vectorized engine's step 5), the event that satisfies
    them all, and for each constraint the event that fails just it."""
    table = [  # (name, type, op, value, a value that satisfies, one that does not; None: the attribute is absent)
        ("i_eq", "int", "=", 1, 1, 2), ("i_ne", "int", "!=", 1, 2, 1), ("i_lt", "int", "<", 5, 4, 5), ("i_le", "int", "<=", 5, 5, 6),
        ("i_gt", "int", ">", 5, 6, 5), ("i_ge", "int", ">=", 5, 5, 4), ("i_any", "int", "any", None, 0, None),
        ("f_eq", "float", "=", 1.5, 1.5, 1.0), ("f_ne", "float", "!=", 1.5, 1.0, 1.5), ("f_lt", "float", "<", 0.5, 0.0, 0.5),
        ("f_le", "float", "<=", 0.5, 0.5, 0.75), ("f_gt", "float", ">", 0.5, 0.75, 0.5), ("f_ge", "float", ">=", 0.5, 0.5, 0.25),
        ("f_any", "float", "any", None, 0.0, None),
        ("s_eq", "string", "=", "ab", "ab", "abc"), ("s_ne", "string", "!=", "ab", "a", "ab"), ("s_pre", "string", "prefix", "ab", "abc", "cab"),
        ("s_suf", "string", "suffix", "ab", "cab", "abc"), ("s_con", "string", "contains", "b", "aba", "aca"),
        ("s_wild", "string", "wildcard", "a*b", "acb", "ba"), ("s_any", "string", "any", None, "", None),
        ("b_eq", "bool", "=", True, True, False), ("b_ne", "bool", "!=", True, False, True), ("b_any", "bool", "any", None, True, None),
    ]
    subscription = Subscription({Constraint(n, t, op, v) for n, t, op, v, _, _ in table})
    good = {n: Attribute(n, t, yes) for n, t, _, _, yes, _ in table}
    events = [Event(tuple(good.values()))]
    for n, t, _, _, _, no in table:
        failing = dict(good)
        if no is None:
            del failing[n]
        else:
            failing[n] = Attribute(n, t, no)
        events.append(Event(tuple(failing.values())))
    return [("all", subscription)], events


F_MAX = 1.7976931348623157e308
#: Numeric edge cases and type puns (DEF-DATA-1, DEF-DATA-2, CLM-DATA-2, CLM-DATA-3), pinned.
MIXED_EDGE_CASES = (
    # the 64-bit limits, the float limits, the smallest subnormal and signed zero
    ([("s0", Subscription({Constraint("a", "int", "<", INT_MAX)})), ("s1", Subscription({Constraint("a", "int", ">", INT_MIN)})),
      ("s2", Subscription({Constraint("b", "float", "<=", F_MAX)})), ("s3", Subscription({Constraint("b", "float", ">=", -5e-324)})),
      ("s4", Subscription({Constraint("b", "float", "=", -0.0)}))],
     [Event((Attribute("a", "int", INT_MAX), Attribute("b", "float", -0.0))), Event((Attribute("a", "int", INT_MIN), Attribute("b", "float", F_MAX))),
      Event((Attribute("b", "float", 5e-324),))]),
    # bool true, int 1 and float 1.0 under one name, in different events
    ([("s0", Subscription({Constraint("a", "int", "=", 1)})), ("s1", Subscription({Constraint("a", "float", "=", 1.0)})),
      ("s2", Subscription({Constraint("a", "bool", "=", True)})), ("s3", Subscription({Constraint("a", "int", "!=", 1)})),
      ("s4", Subscription({Constraint("a", "float", "any")}))],
     [Event((Attribute("a", "bool", True),)), Event((Attribute("a", "int", 1),)), Event((Attribute("a", "float", 1.0),)), Event()]),
    # every operator in one subscription: each event but the first fails exactly one constraint
    _every_operator_case(),
    # subscriptions whose only constraints are != or any
    ([("s0", Subscription({Constraint("a", "int", "!=", 0), Constraint("a", "int", "!=", 1)})),
      ("s1", Subscription({Constraint("a", "int", "any"), Constraint("b", "string", "any")})),
      ("s2", Subscription({Constraint("a", "int", "!=", 0), Constraint("b", "string", "any")}))],
     [Event((Attribute("a", "int", 0),)), Event((Attribute("a", "int", 2), Attribute("b", "string", ""))), Event((Attribute("a", "float", 2.0),))]),
)


@property_check(gen.workloads(), examples=tuple((case,) for case in MIXED_EDGE_CASES), scale=5)  # milliseconds an example
def engines_agree_with_model(workload):
    """CLM-ENG-1: mixed workloads (every operator, planted matches, the empty
    subscription, attributes no subscription mentions)."""
    assert_engines_agree(*workload)


@property_check(gen.string_workloads(), examples=tuple((case,) for case in STRING_EDGE_CASES), scale=8)
def engines_agree_on_strings(workload):
    """CLM-ENG-1: string operators over a two-letter alphabet (the hash probes
    of prefix, suffix, contains and wildcard against the model)."""
    assert_engines_agree(*workload)


@property_check(gen.numeric_workloads(), scale=5)
def engines_agree_on_boundaries(workload):
    """CLM-ENG-1: ordering operators at, just below and just above thresholds,
    including the 64-bit and float limits (the binary searches)."""
    assert_engines_agree(*workload)


@property_check(gen.workloads(max_events=8), st.integers(0, 8), under_test.engine_names())
def batch_split_is_union(workload, cut, name):
    """CLM-ENG-3: matching E1 ++ E2 gives E1's lines then E2's (seed 001 §5.1(2))."""
    subscriptions, events = workload
    cut = min(cut, len(events))
    whole = make_engine(name, subscriptions).match_batch(events)
    engine = make_engine(name, subscriptions)
    halves = engine.match_batch(events[:cut]) + engine.match_batch(events[cut:])
    assert whole == halves, (name, cut, whole, halves)


@property_check(gen.workloads(), st.integers(0, 8), st.integers(0, 8), under_test.engine_names())
def duplicate_event_duplicates_its_line(workload, which, where, name):
    """CLM-ENG-4: inserting a copy of an event gives the copy the same line and
    changes no other line (seed 001 §5.1(3))."""
    subscriptions, events = workload
    if not events:
        events = [Event()]
    which, where = which % len(events), where % (len(events) + 1)
    before = make_engine(name, subscriptions).match_batch(events)
    doubled = events[:where] + [events[which]] + events[where:]
    after = make_engine(name, subscriptions).match_batch(doubled)
    assert after[:where] + after[where + 1:] == before, (name, which, where)
    assert after[where] == before[which], (name, which, where)


@property_check(gen.workloads(), st.randoms(use_true_random=False), under_test.engine_names())
def order_does_not_matter(workload, rnd, name):
    """CLM-ENG-5: permuting the events and the order subscriptions are added
    permutes the lines and changes nothing else (seed 001 §5.1(4))."""
    subscriptions, events = workload
    reference = make_engine(name, subscriptions).match_batch(events)
    order = list(range(len(events)))
    rnd.shuffle(order)
    shuffled_subs = list(subscriptions)
    rnd.shuffle(shuffled_subs)
    got = make_engine(name, shuffled_subs).match_batch([events[i] for i in order])
    assert got == [reference[i] for i in order], name


@property_check(gen.workloads(max_events=8))
def deduplication_changes_only_probes(workload):
    """CLM-ENG-6: RABasedMatching and ICCounting (the same index without
    de-duplication) give the same matches and the same counter increments;
    RAB makes at most as many index lookups, and strictly fewer when an
    attribute repeats in the batch (seed 001 §5.1(5))."""
    subscriptions, events = workload
    indexed, rab = make_engine("indexed", subscriptions), make_engine("rab", subscriptions)
    assert indexed.match_batch(events) == rab.match_batch(events)
    assert rab.stats.counter_increments == indexed.stats.counter_increments
    assert rab.stats.index_lookups <= indexed.stats.index_lookups
    assert rab.stats.distinct_attributes == indexed.stats.distinct_attributes
    if rab.stats.distinct_attributes < rab.stats.attributes:
        assert rab.stats.index_lookups < indexed.stats.index_lookups, rab.stats


ANY_WORKLOAD = st.one_of(gen.workloads(max_events=6), gen.string_workloads())


@property_check(ANY_WORKLOAD, ANY_WORKLOAD.map(lambda w: w[1]), under_test.engine_names(), scale=3)
def work_counters_add_up(workload, more_events, name):
    """CLM-ENG-8: an engine's work counters (MatchStats) are sums over its
    batches: after matching E1 then E2, each equals the sum of what fresh
    engines count for E1 and for E2 alone; none is negative; `events` and
    `matches` count the batch's events and result entries; a batch of
    events without attributes makes no index lookup."""
    subscriptions, events = workload
    both = make_engine(name, subscriptions)
    both.match_batch(events)
    got = both.match_batch(more_events)
    first, second = make_engine(name, subscriptions), make_engine(name, subscriptions)
    first.match_batch(events)
    second.match_batch(more_events)
    for field in attrs.fields(type(both.stats)):
        total, a, b = (getattr(e.stats, field.name) for e in (both, first, second))
        assert total == a + b and a >= 0 and b >= 0, f"engine {name}: {field.name} {total} after E1, E2; {a} and {b} alone"
    assert second.stats.events == len(more_events) and second.stats.matches == sum(len(r) for r in got), (name, second.stats)
    bare = make_engine(name, subscriptions)
    bare.match_batch([Event()] * len(events))
    assert bare.stats.index_lookups == 0, (name, bare.stats)


@st.composite
def _ordered_leaf_case(draw):
    type_ = draw(st.sampled_from(["int", "float"]))
    op = draw(st.sampled_from(["<", "<=", ">", ">="]))
    values = draw(st.lists(gen.values(type_), min_size=1, max_size=8, unique=True))
    probe = draw(st.one_of(gen.values(type_), st.sampled_from(values).flatmap(lambda v: gen.near(type_, v))))
    return type_, op, values, probe


@property_check(_ordered_leaf_case())
def ordered_lists_are_containment_ordered(case):
    """CLM-ENG-7: every sorted constraint list is in containment order, CL[i] ≺
    CL[i+1] by Theorem 1, and the constraints a value satisfies are exactly
    the suffix CL[i:] that the binary search finds (seed 001 §5.1(7))."""
    type_, op, values, v = case
    leaf = OrderedLeaf(op)
    for c in {Constraint(name="x", type=type_, op=op, value=w) for w in values}:
        leaf.add(c.value, [0])
    ordered = list(leaf.values)
    cl = [Constraint(name="x", type=type_, op=op, value=w) for w in ordered]
    for specific, general in zip(cl, cl[1:]):
        assert covers_by_rules(general, specific), f"{specific} ≺ {general} does not follow from Table 1"
    first = leaf.first_match(v)
    satisfied = [i for i, w in enumerate(ordered) if semantics.operator_holds(op, v, w)]
    assert satisfied == list(range(first, len(ordered))), (op, ordered, v, first, satisfied)


class EnginesAgainstModel(RuleBasedStateMachine):
    """CLM-ENG-2: add, remove and match, interleaved; after every step each
    engine's matches on the batch so far equal the model's."""

    ids = Bundle("ids")

    def __init__(self):
        super().__init__()
        self.model: dict[str, Subscription] = {}
        self.engines = {name: make_engine(name) for name in under_test.engines()}
        self.events: list[Event] = []
        self.next_id = 0

    @rule(target=ids, subscription=gen.subscriptions())
    def add(self, subscription):
        sid = f"s{self.next_id}"
        self.next_id += 1
        self.model[sid] = subscription
        for engine in self.engines.values():
            engine.add(sid, subscription)
        return sid

    @rule(sid=consumes(ids))
    def remove(self, sid):
        del self.model[sid]
        for engine in self.engines.values():
            engine.remove(sid)

    @rule(data=st.data())
    def publish(self, data):
        subs = list(self.model.values())
        self.events = (self.events + data.draw(gen.batch_for(subs, max_events=4)))[-8:]

    @invariant()
    def engines_equal_model(self):
        census.record_matching(sorted(self.model.items()), self.events)
        expected = semantics.match_batch(sorted(self.model.items()), self.events)
        for name, engine in self.engines.items():
            assert len(engine) == len(self.model), name
            got = engine.match_batch(self.events)
            assert got == expected, f"engine {name} after {self.next_id} adds: {got} != model {expected}"


def run_engines_state_machine() -> None:
    """Run the state machine under the active settings profile."""
    run_state_machine_as_test(
        pinned(EnginesAgainstModel), settings=settings(settings.default, stateful_step_count=15)
    )
