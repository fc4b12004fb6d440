"""Worked examples of seed 000 (Example 4-1, 4-2, 4-4, the false positive,
Fig. 4-4's ID: CLM-SUM-9, 12 .. 15) and the exceptions the spec documents
(the contains policy's order, CLM-SUM-6 and 7; merge order, CLM-SUM-8)."""

from __future__ import annotations

import math

from subsum.conformance.checks.matching.examples import FIG_2_2_EVENT, FIG_4_1_S1, FIG_4_1_S2
from subsum.conformance.checks.summaries.seed000 import PRICE, SYMBOL, equality_row, example_4_4_rows, expected_rows, fig_4_5, range_row, symbol
from subsum.conformance.checks.summaries.structure import check_structure
from subsum.conformance.checks.summaries.views import as_sets, build_owner, constraint_sets, impl_rows, model_rows, names_matched, split_brokers
from subsum.core.filters import parse_filter
from subsum.core.types import Constraint
from subsum.impl.summary import IdLayout, OwnerSummary
from subsum.impl.summary.history import Directory, History
from subsum.model.summaries import abstraction as ref_abstraction
from subsum.model.summaries import summary as ref
from subsum.model.summaries.seed000 import FALSE_POSITIVE
from subsum.model.semantics import matching_ids


def _both_sides(subscriptions) -> dict:
    """The owner's rows, after checking that the model builds the same."""
    got = as_sets(impl_rows(build_owner(subscriptions, schema=(PRICE, SYMBOL)).export()))
    assert got == as_sets(model_rows(ref.reference_summary(subscriptions))), (got, model_rows(ref.reference_summary(subscriptions)))
    return got


def seed000_example_4_1() -> None:
    """CLM-SUM-12: Example 4-1 (Figs. 2-2, 4-1, 4-2, 4-3)."""
    subscriptions = [("S1", FIG_4_1_S1), ("S2", FIG_4_1_S2)]
    owner = build_owner(subscriptions, brokers=2)
    summary = owner.export()
    sid = {name: i for i, name in summary.names.items()}
    assert (owner.layout.popcount(sid["S1"]), owner.layout.popcount(sid["S2"])) == (3, 4)
    counters = {summary.names[i]: n for i, n in summary.counters(FIG_2_2_EVENT).items()}
    assert counters == {"S1": 3, "S2": 2}, counters
    assert ref.summary_counters(ref.reference_summary(subscriptions), FIG_2_2_EVENT) == counters
    assert names_matched(summary, FIG_2_2_EVENT) == {"S1"}
    rows = as_sets(impl_rows(summary))
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
        t1 = as_sets(impl_rows(history, names))
        owners[1].add("S3", s3)
        history.apply(owners[1].take_delta(), resolve)
        names.update(owners[1].names)
        t2 = as_sets(impl_rows(history, names))
        owners[1].remove("S3")
        history.apply(owners[1].take_delta(), resolve)
        t3 = as_sets(impl_rows(history, names))
        want_t1, want_t2 = example_4_4_rows(reading)
        assert t1 == want_t1, t1
        assert t2 == want_t2, t2
        if reading == "prefix":
            assert {k for k, _ in asked} == {PRICE, SYMBOL}, asked
        else:  # Figs. 4-13 and 4-14
            assert {k for k, _ in asked} == {PRICE}, asked  # S3's symbol constraint was not the row's
        assert {1, 2} <= set(dict(asked)[PRICE]), asked
        assert t3 == t1, (reading, t3, t1)
        check_structure(history, {i: a for o in owners.values() for i, a in o.abstractions.items()})


def seed000_false_positive() -> None:
    """CLM-SUM-15: the documented false positive, removed by the owner's re-check."""
    subscriptions = fig_4_5("prefix")
    owner = build_owner(subscriptions, schema=(PRICE, SYMBOL))
    summary = owner.export()
    event = FALSE_POSITIVE
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


def merge_assigns_ids_by_order() -> None:
    """CLM-SUM-8's exception: which covering string row an ID joins depends
    on the merge order. P = prefix a (broker 0), Q = suffix b (1), R = "ab" (2)."""
    subs = [("P", parse_filter('s prefix "a"')), ("Q", parse_filter('s suffix "b"')), ("R", parse_filter('s = "ab"'))]
    a, b, c = (o.export() for o in split_brokers(subs, 3))
    left = as_sets(impl_rows(a.copy().merge_in(b).merge_in(c)))
    right = as_sets(impl_rows(a.copy().merge_in(b.copy().merge_in(c))))
    prefix_a, suffix_b = Constraint("s", "string", "prefix", "a"), Constraint("s", "string", "suffix", "b")
    assert left[("s", "string")] == {("constraint", prefix_a, frozenset("PR")), ("constraint", suffix_b, frozenset("Q"))}, left
    assert right[("s", "string")] == {("constraint", prefix_a, frozenset("P")), ("constraint", suffix_b, frozenset("QR"))}, right


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


def contains_policy_round_trip() -> None:
    """CLM-SUM-7 under virtual="contains": with rows `prefix x` and
    `contains xy`, adding `suffix x` makes the virtual row `contains x`
    (absorbing both); deleting it again must restore the two rows, at the
    owner (the ACGT drops the unjustified virtual root) and at a history."""
    subs = [("p", parse_filter('s prefix "x"')), ("c", parse_filter('s contains "xy"'))]
    owner = build_owner(subs, virtual="contains", schema=(("s", "string"),))
    history = History.of(owner.take_delta().insertions)
    before = as_sets(impl_rows(owner.export()))
    assert before == {("s", "string"): {("constraint", Constraint("s", "string", "prefix", "x"), frozenset("p")),
                                         ("constraint", Constraint("s", "string", "contains", "xy"), frozenset("c"))}}, before
    owner.add("r", parse_filter('s suffix "x"'))
    history.apply(owner.take_delta(), None)
    joined = {("s", "string"): {("constraint", Constraint("s", "string", "contains", "x"), frozenset("pcr"))}}
    assert as_sets(impl_rows(owner.export())) == joined
    names = dict(owner.names)
    assert as_sets(impl_rows(history, names)) == joined
    owner.remove("r")
    history.apply(owner.take_delta(), Directory([owner]).resolve)
    assert as_sets(impl_rows(owner.export())) == before, impl_rows(owner.export())
    assert as_sets(impl_rows(history, names)) == before, impl_rows(history, names)
