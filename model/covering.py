"""Covering (subsumption) of constraints and subscriptions (spec/02-covering.md).

`covers_constraint` and `covers_subscription` are exact: they decide
DEF-COV-1 and DEF-COV-3 with z3 over the exact value domains. `covers_by_rules`
is the cheap syntactic test of DEF-COV-4: sound, not complete.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, cast

import z3

from subsum.core.types import Attribute, Constraint, Event, Subscription
from subsum.model import smt
from subsum.model.rules import PYTHON, RULES


def _constraint_formula(c: Constraint, var: Any, chars: smt.CharMap) -> z3.BoolRef:
    return smt.operator_holds(c.op, var, smt.constant(c.type, c.op, c.value, chars))


def _chars_for(*constraints: Constraint) -> smt.CharMap:
    texts: list[str] = []
    for c in constraints:
        if c.type == "string" and c.value is not None:
            texts.append(cast(str, c.value))
    return smt.CharMap(texts)


def constraint_is_satisfiable(c: Constraint) -> bool:
    """DEF-COV-1 helper: some value of the domain satisfies `c`
    (e.g. int `x > 9223372036854775807` is not satisfiable).

    >>> constraint_is_satisfiable(Constraint("x", "int", ">", 9223372036854775807))
    False
    >>> constraint_is_satisfiable(Constraint("x", "int", ">", 0))
    True
    """
    chars = _chars_for(c)
    v = smt.variable(c.type, "v")
    verdict, _ = smt.check(z3.And(smt.in_domain(c.type, v), _constraint_formula(c, v, chars)))
    assert verdict != z3.unknown, f"z3 could not decide satisfiability of {c}"
    return bool(verdict == z3.sat)


def covers_constraint(general: Constraint, specific: Constraint) -> bool:
    """DEF-COV-1 (seed 001 Def 7): specific ≺ general iff every attribute
    that satisfies `specific` satisfies `general`. An unsatisfiable
    `specific` is covered by everything; otherwise name and type must agree
    and no value of the domain may satisfy `specific` but not `general`.

    >>> covers_constraint(Constraint("x", "int", ">", 1), Constraint("x", "int", ">", 5))
    True
    >>> covers_constraint(Constraint("x", "int", ">", 5), Constraint("x", "int", ">", 1))
    False
    >>> covers_constraint(Constraint("x", "int", ">=", 2), Constraint("x", "int", ">", 1))  # the ints above 1 start at 2
    True
    """
    if not constraint_is_satisfiable(specific):
        return True
    if (general.name, general.type) != (specific.name, specific.type):
        return False
    chars = _chars_for(general, specific)
    v = smt.variable(specific.type, "v")
    verdict, _ = smt.check(
        z3.And(
            smt.in_domain(specific.type, v),
            _constraint_formula(specific, v, chars),
            z3.Not(_constraint_formula(general, v, chars)),
        )
    )
    assert verdict != z3.unknown, f"z3 could not decide {specific} ≺ {general}"
    return bool(verdict == z3.unsat)


def constraints_equal(c1: Constraint, c2: Constraint) -> bool:
    """DEF-COV-2 (seed 001 Def 8): c1 = c2 iff each contains the other.

    >>> constraints_equal(Constraint("x", "int", ">=", 2), Constraint("x", "int", ">", 1))
    True
    >>> constraints_equal(Constraint("x", "float", ">=", 2.0), Constraint("x", "float", ">", 1.0))
    False
    """
    return covers_constraint(c1, c2) and covers_constraint(c2, c1)


def covers_by_rules(general: Constraint, specific: Constraint) -> bool:
    """DEF-COV-4: some rule of RULES shows specific ≺ general. Sound (every
    rule is proved by z3) but not complete.

    >>> covers_by_rules(Constraint("s", "string", "prefix", "OT"), Constraint("s", "string", "=", "OTE"))
    True
    >>> covers_by_rules(Constraint("x", "int", ">=", 2), Constraint("x", "int", ">", 1))  # true, but no rule says so
    False
    """
    if (general.name, general.type) != (specific.name, specific.type):
        return False
    return any(
        rule.condition(PYTHON, specific.value, general.value)
        for rule in RULES
        if rule.type == specific.type
        and rule.specific_op == specific.op
        and rule.general_op == general.op
    )


def covering_counterexample(general: Subscription, specific: Subscription) -> Event | None:
    """DEF-COV-3 witness: an event that matches `specific` but not `general`,
    or None if there is none. An event holds each name once, so each name
    constrained by `specific` becomes one variable; a name constrained at two
    types makes `specific` unsatisfiable.

    >>> from subsum.core.filters import parse_filter
    >>> covering_counterexample(parse_filter("x > 1"), parse_filter("x > 5")) is None
    True
    >>> witness = covering_counterexample(parse_filter("x > 5"), parse_filter("x > 1"))
    >>> [(a.name, 1 < a.value <= 5) for a in witness.attributes]
    [('x', True)]
    """
    by_name: dict[str, list[Constraint]] = defaultdict(list)
    for c in specific.constraints:
        by_name[c.name].append(c)
    if any(len({c.type for c in group}) > 1 for group in by_name.values()):
        return None
    chars = _chars_for(*specific.constraints, *general.constraints)
    variables = {name: smt.variable(group[0].type, f"attr:{name}") for name, group in by_name.items()}
    types = {name: group[0].type for name, group in by_name.items()}

    specific_holds = [smt.in_domain(types[name], var) for name, var in variables.items()]
    specific_holds += [_constraint_formula(c, variables[c.name], chars) for c in specific.constraints]

    def general_constraint_holds(g: Constraint) -> z3.BoolRef:
        if types.get(g.name) != g.type:
            return z3.BoolVal(False)  # the event lacks g.name, or holds it at another type
        return _constraint_formula(g, variables[g.name], chars)

    general_holds = [general_constraint_holds(g) for g in general.constraints]
    verdict, model = smt.check(z3.And(*specific_holds, z3.Not(z3.And(*general_holds))))
    assert verdict != z3.unknown, "z3 could not decide subscription covering"
    if verdict == z3.unsat:
        return None
    return Event(
        tuple(
            Attribute(name=name, type=types[name], value=smt.value_from_model(types[name], model, var, chars))
            for name, var in variables.items()
        )
    )


def subscription_is_satisfiable(s: Subscription) -> bool:
    """Some event matches s (the event encoding of DEF-COV-3: one variable
    per constrained name; a name constrained at two types cannot be held).

    >>> from subsum.core.filters import parse_filter
    >>> subscription_is_satisfiable(parse_filter("x > 1 and x < 3")), subscription_is_satisfiable(parse_filter("x > 1 and x < 2"))
    (True, False)
    >>> subscription_is_satisfiable(parse_filter('s prefix "ab" and s suffix "c" and s = "abc"'))
    True
    """
    by_name: dict[str, list[Constraint]] = defaultdict(list)
    for c in s.constraints:
        by_name[c.name].append(c)
    if any(len({c.type for c in group}) > 1 for group in by_name.values()):
        return False
    chars = _chars_for(*s.constraints)
    variables = {name: smt.variable(group[0].type, f"attr:{name}") for name, group in by_name.items()}
    holds = [smt.in_domain(group[0].type, variables[name]) for name, group in by_name.items()]
    holds += [_constraint_formula(c, variables[c.name], chars) for c in s.constraints]
    verdict, _ = smt.check(z3.And(*holds))
    assert verdict != z3.unknown, f"z3 could not decide whether {s} is satisfiable"
    return bool(verdict == z3.sat)


def covers_subscription(general: Subscription, specific: Subscription) -> bool:
    """DEF-COV-3: `general` covers `specific` iff every event that matches
    `specific` matches `general`.

    >>> from subsum.core.filters import parse_filter
    >>> covers_subscription(parse_filter('symbol prefix "OT"'), parse_filter('symbol = "OTE" and price < 8.70'))
    True
    >>> covers_subscription(parse_filter('symbol = "OTE" and price < 8.70'), parse_filter('symbol prefix "OT"'))
    False
    """
    return covering_counterexample(general, specific) is None
