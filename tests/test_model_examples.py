"""model/ functions on the seeds' worked examples, as plain tests.

Their docstrings carry the same examples, but `make mutate` cannot run docstrings (mutmut rewrites the modules), so
without these a mutant of next_broker's default, PropagationPlan.target_of, delivery_brokers or row_is_exact went
unseen. Each expected value is read off the seed or the definition cited.
"""

import networkx as nx
import z3

from subsum.core.filters import parse_filter
from subsum.core.types import Attribute, Event
from subsum.model import smt
from subsum.model.placement import delivery_brokers, overlay
from subsum.model.routing import next_broker, propagation_plan
from subsum.model.summaries.summary import reference_summary, row_is_exact

#: Seed 000 Example 4-3: the 13-broker tree (seed note §5.2).
EXAMPLE_4_3 = nx.Graph([(1, 2), (2, 5), (3, 5), (4, 5), (6, 5), (5, 7), (7, 8), (8, 9), (8, 10), (10, 11), (11, 12), (11, 13)])


def test_next_broker_defaults_to_option_a_the_highest_degree_first():
    # DEF-SR-2: from broker 1, option (a) goes to 5 (degree 5), option (b) to the nearest of degree >= 1, its neighbor 2
    assert next_broker(EXAMPLE_4_3, 1, frozenset({1})) == 5
    assert next_broker(EXAMPLE_4_3, 1, frozenset({1}), "b") == 2
    assert next_broker(EXAMPLE_4_3, 1, frozenset(EXAMPLE_4_3)) is None


def test_each_broker_sends_its_summary_to_its_propagation_target_and_sinks_send_nothing():
    # DEF-SR-1 on Example 4-3: the leaves send to their one neighbor; 2 (degree 2) sends to 5; 5, 8 and 11 are sinks
    plan = propagation_plan(EXAMPLE_4_3)
    assert [plan.target_of(b) for b in (1, 3, 2, 9, 12)] == [2, 5, 5, 8, 11]
    assert [plan.target_of(b) for b in plan.sinks] == [None, None, None]


def test_a_publication_visits_the_brokers_on_the_paths_to_matching_clients():
    g = overlay([0, 1, 2, 3], [(0, 1), (1, 2), (1, 3)])
    access = {100: 2, 101: 0, 102: 3}
    filters = {100: frozenset({parse_filter("x > 1")}), 101: frozenset({parse_filter("x > 1")}), 102: frozenset({parse_filter("x > 9")})}
    # 101 publishes at broker 0: it reaches 100 at 2 through 1; 102 (at 3) does not match; the publisher's own filter is no reason
    assert delivery_brokers(g, access, filters, 101, Event((Attribute("x", "int", 5),))) == {0: None, 1: 0, 2: 1}
    # a forest: a matching client the overlay cannot reach from the publisher's broker is not visited
    forest = overlay([0, 1, 2, 3], [(0, 1), (2, 3)])
    assert delivery_brokers(forest, {100: 3, 101: 0}, filters, 101, Event((Attribute("x", "int", 5),))) == {0: None}


def test_a_bool_row_of_one_equality_is_exact_and_two_constraints_on_the_key_are_not():
    # DEF-SUM-9: exact when every member has a single constraint on the key, satisfied by exactly the row's values
    exact = reference_summary([("S1", parse_filter("b = true"))]).rows[("b", "bool")]
    assert [row_is_exact(("b", "bool"), row, {"S1": parse_filter("b = true")}) for row in exact] == [True]
    twice = parse_filter("price = 8.5 and price <= 8.5")  # the point 8.5, but said by two constraints: not single
    rows = reference_summary([("S1", twice)]).rows[("price", "float")]
    assert [row_is_exact(("price", "float"), row, {"S1": twice}) for row in rows] == [False]


def test_surrogates_z3_chose_become_distinct_characters_above_z3s_range():
    # DEF-SMT-1: a witness may hold surrogates, which Python text cannot; each becomes its own fresh character
    # above U+2FFFF, so the renaming stays injective and clear of every character z3 can choose
    chars = smt.CharMap(["ab"])
    pair = z3.simplify(z3.Concat(z3.Unit(z3.CharVal(0xD800)), z3.Unit(z3.CharVal(0xDBFF)), z3.Unit(z3.CharVal(0xD800))))
    first, second, again = chars.decode(pair)
    assert first != second and first == again
    assert min(ord(first), ord(second)) > smt.Z3_MAX_CHAR


def test_the_derived_rules_are_the_ones_spec_02_lists():
    # spec/02-covering.md: T2-op for every type and operator; D-ANY-op (`any` covers every int, float and bool
    # constraint) and D-EQ-POINT-op (`x = v1` ≺ `x op v2` if op(v1, v2)) for the types other than string.
    # The table is built at import; building it again here is what lets `make mutate` see a changed builder.
    from subsum.core.filters import OPS_BY_TYPE
    from subsum.model.rules import PYTHON, _derived_rules

    rules = _derived_rules()
    got = {(r.id, r.family, r.type, r.specific_op, r.general_op) for r in rules}
    expected = {(f"T2-{op}", "T2", t, op, op) for t in ("int", "float", "string", "bool") for op in OPS_BY_TYPE[t]}
    for t in ("int", "float", "bool"):
        expected |= {(f"D-ANY-{op}", "D-ANY", t, op, "any") for op in OPS_BY_TYPE[t] if op != "any"}
        expected |= {(f"D-EQ-POINT-{op}", "D-EQ-POINT", t, "=", op) for op in OPS_BY_TYPE[t] if op not in ("=", "any")}
    assert got == expected and len(rules) == len(got)
    for r in rules:  # each condition, run by Python on values that tell them apart
        if r.family == "T2":
            assert r.condition(PYTHON, 3, 3) and not r.condition(PYTHON, 3, 4), r.key
        elif r.family == "D-ANY":
            assert r.condition(PYTHON, 3, 4) is True, r.key
        elif r.type != "bool":
            assert [r.condition(PYTHON, v1, 5) for v1 in (4, 5, 6)] == [{"<": v1 < 5, "<=": v1 <= 5, ">": v1 > 5, ">=": v1 >= 5,
                                                                          "!=": v1 != 5}[r.general_op] for v1 in (4, 5, 6)], r.key


def test_a_name_constrained_at_two_types_cannot_be_held():
    # DEF-COV-3's event encoding: one variable per name, so x > 1 (int) and x = "a" (string) are never both true
    from subsum.model.covering import subscription_is_satisfiable

    assert subscription_is_satisfiable(parse_filter('x > 1 and x = "a"')) is False
    assert subscription_is_satisfiable(parse_filter('x > 1 and y = "a"')) is True


def test_the_orderings_of_a_conjunction_are_the_same_on_every_call():
    # model/smt.py: as given, reversed, then seeded shuffles, "so every run tries the same sequence"
    v = smt.variable("int", "v")
    formula = z3.And(v > 1, v < 9, v != 4, v != 5, v != 6)
    first, again = smt.orderings(formula), smt.orderings(formula)
    assert len(first) == 8 and [list(map(str, t)) for t in first] == [list(map(str, t)) for t in again]
    assert len({tuple(map(str, t)) for t in first}) > 2  # the shuffles are not all the given order
