"""Worked examples and documented behaviours (claim kind `example`).

Each function replays a fixed case and asserts the outcome the spec states.
Expected values are transcribed from the seeds or derived by hand in the
spec, never produced by the code under test.
"""

from __future__ import annotations

import math

from subsum.core.types import INT_MAX, Attribute, Constraint, Event, InvalidValue, Subscription
from subsum.core.filters import parse_filter
from subsum.model import semantics
from subsum.model.covering import (
    constraint_is_satisfiable,
    covering_counterexample,
    covers_by_rules,
    covers_constraint,
)
from subsum.conformance.checks.matching.proofs import WRONG_RULES, counterexample_confirmed, prove_rule

#: Seed 000, Fig. 2-2: the running example event (the `date` attribute
#: `when` has no counterpart among our four types and is left out; no
#: subscription constrains it).
FIG_2_2_EVENT = Event(
    (
        Attribute("exchange", "string", "NYSE"),
        Attribute("symbol", "string", "OTE"),
        Attribute("price", "float", 8.40),
        Attribute("volume", "int", 132700),
        Attribute("high", "float", 8.80),
        Attribute("low", "float", 8.22),
    )
)

#: Seed 000, Fig. 4-1: S1 = exchange N*SE; symbol = OTE; price < 8.70; price > 8.30.
FIG_4_1_S1 = parse_filter('exchange wildcard "N*SE" and symbol = "OTE" and price < 8.70 and price > 8.30')
#: Seed 000, Fig. 4-1: S2 = symbol >* OT; price = 8.20; volume > 130000; low < 8.05.
FIG_4_1_S2 = parse_filter('symbol prefix "OT" and price = 8.20 and volume > 130000 and low < 8.05')


def seed000_running_example() -> None:
    """CLM-EX-1: the Fig. 2-2 event matches S1 and not S2 (seed 000 §2.3, §4.2)."""
    assert semantics.matches(FIG_4_1_S1, FIG_2_2_EVENT)
    assert not semantics.matches(FIG_4_1_S2, FIG_2_2_EVENT)
    # S2 fails on price = 8.20 and low < 8.05, and only on those.
    failing = {c for c in FIG_4_1_S2.constraints if not any(semantics.satisfies(a, c) for a in FIG_2_2_EVENT.attributes)}
    assert failing == {Constraint("price", "float", "=", 8.20), Constraint("low", "float", "<", 8.05)}
    assert semantics.matching_ids([("S1", FIG_4_1_S1), ("S2", FIG_4_1_S2)], FIG_2_2_EVENT) == ["S1"]


def rules_are_not_complete() -> None:
    """CLM-COV-5: the rules are sufficient, not complete. For int, x > 5 and
    x >= 6 contain each other, but no rule sees x > 5 ≺ x >= 6; for float,
    x > 5.0 and x >= nextafter(5.0, inf) likewise."""
    gt5, ge6 = Constraint("x", "int", ">", 5), Constraint("x", "int", ">=", 6)
    assert covers_constraint(ge6, gt5) and covers_constraint(gt5, ge6)
    assert not covers_by_rules(ge6, gt5)
    assert covers_by_rules(gt5, ge6)  # x >= 6 ≺ x > 5 by T1-3, since 6 > 5
    fgt, fge = Constraint("x", "float", ">", 5.0), Constraint("x", "float", ">=", math.nextafter(5.0, math.inf))
    assert covers_constraint(fge, fgt) and not covers_by_rules(fge, fgt)


def prefix_semantics_of_thesis_notation() -> None:
    """CLM-COV-7: `>*` is prefix (seed 000 §2.3.2). So `symbol prefix "T"`
    does not cover `symbol = "OTE"` (Example 4-2's t4 row assumes it does),
    while `symbol contains "T"` does."""
    prefix_t = Constraint("symbol", "string", "prefix", "T")
    contains_t = Constraint("symbol", "string", "contains", "T")
    for specific in ("OTE", "OTER"):
        eq = Constraint("symbol", "string", "=", specific)
        assert not covers_constraint(prefix_t, eq) and not covers_by_rules(prefix_t, eq)
        assert covers_constraint(contains_t, eq) and covers_by_rules(contains_t, eq)
    witness = covering_counterexample(Subscription({prefix_t}), Subscription({Constraint("symbol", "string", "=", "OTE")}))
    assert witness == Event((Attribute("symbol", "string", "OTE"),))


def counting_needs_the_map_property() -> None:
    """CLM-MATCH-3: with repeated names (not a Map), counting gives a false
    positive (seed 001 §5.2): {x=5, x=7} against {x > 3, y < 2} counts 2 =
    n. The data model forbids such events."""
    subscription = Subscription({Constraint("x", "int", ">", 3), Constraint("y", "int", "<", 2)})
    repeated = [Attribute("x", "int", 5), Attribute("x", "int", 7)]
    assert semantics.satisfied_pair_count(subscription, repeated) == len(subscription.constraints) == 2
    assert not semantics.matches(subscription, Event((repeated[0],)))
    try:
        Event(tuple(repeated))
    except InvalidValue as exc:
        assert "duplicate attribute name 'x'" in str(exc)
    else:
        raise AssertionError("an event with a repeated name was accepted")


def unsatisfiable_constraints_are_covered() -> None:
    """CLM-COV-8: an unsatisfiable constraint (int x > INT_MAX, float x <
    -MAX) is covered by every constraint, even on another name."""
    never = Constraint("x", "int", ">", INT_MAX)
    below = Constraint("x", "float", "<", -1.7976931348623157e308)
    other = Constraint("y", "bool", "=", True)
    for c in (never, below):
        assert not constraint_is_satisfiable(c)
        assert covers_constraint(other, c)
    assert constraint_is_satisfiable(Constraint("x", "int", ">=", INT_MAX))
    assert not covers_constraint(other, Constraint("x", "int", ">=", INT_MAX))


_INVALID = [
    (lambda: Attribute("x", "float", math.nan), "float value is NaN; NaN is not allowed"),
    (lambda: Attribute("x", "float", math.inf), "float value is inf; infinities are not allowed"),
    (lambda: Attribute("x", "int", 2**63), "int value 9223372036854775808 is outside the 64-bit range"),
    (lambda: Attribute("x", "int", True), "int value must be an integer, got a bool"),
    (lambda: Attribute("x", "float", 1), "float value must be a float, got the integer 1"),
    (lambda: Attribute("", "int", 1), "name must not be empty"),
    (lambda: Attribute("x", "string", "\ud800"), "string value is not valid Unicode"),
    (lambda: Constraint("x", "string", "<", "a"), "operator '<' does not apply to type string"),
    (lambda: Constraint("x", "bool", ">=", True), "operator '>=' does not apply to type bool"),
    (lambda: Constraint("x", "string", "wildcard", "a*b*"), "must hold exactly one '*', it holds 2"),
    (lambda: Constraint("x", "int", "any", 3), "operator 'any' takes no value"),
    (lambda: Constraint("x", "date", "=", 3), "unknown type 'date'"),
    (lambda: Event((Attribute("x", "int", 1), Attribute("x", "float", 1.0))), "duplicate attribute name 'x'"),
]


def invalid_values_cannot_be_built() -> None:
    """CLM-DATA-1: the validators reject every invalid value listed in spec/01."""
    for build, expected in _INVALID:
        try:
            build()
        except InvalidValue as exc:
            assert expected in str(exc), (expected, str(exc))
        else:
            raise AssertionError(f"accepted an invalid value; expected error: {expected}")


def prover_refutes_wrong_rules() -> None:
    """CLM-PROVER-1: each deliberately wrong rule is refuted, and the Python
    semantics confirm z3's counterexample. The prover is not vacuous."""
    for rule in WRONG_RULES:
        result = prove_rule(rule)
        assert result.status == "refuted", (rule.id, result.status)
        assert counterexample_confirmed(rule, result.counterexample), (rule.id, result.counterexample)
