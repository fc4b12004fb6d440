"""Hypothesis properties (claim kind `property`).

Each function is a property body marked with the strategies of its
arguments. `run_property` applies Hypothesis's `@given` when it runs, so the
settings profile active at that moment (conformance/runner/profiles.py) applies:
Hypothesis binds its settings when `@given` decorates, not when the test runs.
"""

from __future__ import annotations

import json
import math

import z3
import functools

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from subsum.core.filters import format_filter, parse_filter
from subsum.core.jsonio import parse_event_line, parse_subscription_line
from subsum.impl.matching import make_engine
from subsum.impl.network.protocols.covering import filter_covers
from subsum.core.types import OPS_BY_TYPE, Attribute, Constraint, Subscription
from subsum.model import semantics, smt
from subsum.model.covering import (
    constraints_equal,
    covering_counterexample,
    covers_by_rules,
    covers_constraint,
    covers_subscription,
)
from subsum.conformance.runner.profiles import pinned, seed_name
from subsum.conformance.runner import budget
from subsum.conformance.runner import census
from subsum.conformance.runner import under_test
from subsum.conformance import strategies as gen


def property_check(*strategies, examples: tuple[tuple, ...] = (), scale: float = 1):
    """Mark a property body with the strategies for its arguments, the
    examples it always runs first (the spec's edge cases, pinned as
    Hypothesis `@example`s: every profile runs them, whatever it draws), and
    `scale`, which multiplies the profile's number of examples (5 for a
    check of milliseconds an example, 0.1 for one whose examples are Spark
    jobs; never fewer than 3)."""

    def mark(fn):
        fn.strategies = strategies
        fn.examples = examples
        fn.scale = scale
        return fn

    return mark


def run_property(fn) -> None:
    """Run a property under the active settings profile; raise on a counterexample.
    Each failing call is kept in `budget.last_failure`, so a check cut by its
    time budget while Hypothesis shrinks still shows a counterexample."""

    pinned_args = {tuple(map(id, args)) for args in getattr(fn, "examples", ())}

    @functools.wraps(fn)
    def test(*args, **kwargs):
        try:
            if tuple(map(id, (*args, *kwargs.values()))) in pinned_args:  # the census counts what the generators draw, not the pins
                with census.paused():
                    return fn(*args, **kwargs)
            return fn(*args, **kwargs)
        except Exception as exc:
            budget.last_failure.record(f"{fn.__name__}{(*args, *kwargs.values())!r}: {type(exc).__name__}: {exc}")
            raise

    for args in getattr(fn, "examples", ()):
        test = example(*args)(test)
    run = given(*fn.strategies)(test)
    if fn.scale != 1:
        current = settings()  # the active profile's
        run = settings(current, max_examples=max(3, int(current.max_examples * fn.scale)))(run)
    pinned(run, name=f"{seed_name(fn.__module__)}.{fn.__qualname__}")()


@st.composite
def _operator_case(draw):
    type_ = draw(gen.types)
    op = draw(st.sampled_from(OPS_BY_TYPE[type_]))
    w = draw(gen.constraint_values(type_, op))
    v = draw(st.one_of(gen.values(type_), gen.near(type_, w) if w is not None and op != "wildcard" else gen.values(type_)))
    return type_, op, v, w


@property_check(_operator_case())
def smt_agrees_with_semantics(case):
    """CLM-SMT-1: the z3 encoding of every operator agrees with operator_holds."""
    type_, op, v, w = case
    chars = smt.CharMap([x for x in (v, w) if isinstance(x, str)])
    formula = smt.operator_holds(op, smt.value_constant(type_, v, chars), smt.constant(type_, op, w, chars))
    decided = z3.simplify(formula)
    assert z3.is_true(decided) or z3.is_false(decided), f"z3 did not reduce {formula} to a constant"
    assert z3.is_true(decided) == semantics.operator_holds(op, v, w), (type_, op, v, w)


@property_check(gen.subscription_and_event())
def counting_equals_exact(case):
    """CLM-MATCH-1: counting match equals exact match on Map events."""
    subscription, event = case
    assert semantics.counting_match(subscription, event) == semantics.matches(subscription, event)


@property_check(gen.events())
def empty_subscription_matches_every_event(event):
    """CLM-MATCH-2: the empty subscription matches every event, by both definitions."""
    empty = Subscription()
    assert semantics.matches(empty, event)
    assert semantics.counting_match(empty, event)


@st.composite
def _related_constraints(draw):
    """Pairs (general, specific) on one name and type, values drawn near each
    other so that covering is often, but not always, true."""
    specific = draw(gen.constraints(name="x"))
    op = draw(st.sampled_from(OPS_BY_TYPE[specific.type]))
    if op == "any":
        value = None
    elif op == "wildcard" or specific.value is None or specific.op == "wildcard":
        value = draw(gen.constraint_values(specific.type, op))
    elif specific.type == "string" and op != "=":
        value = draw(st.one_of(gen.constraint_values("string", op), st.sampled_from([specific.value[:k] for k in range(len(specific.value) + 1)] or [""])))
    else:
        value = draw(gen.near(specific.type, specific.value))
    return Constraint(name="x", type=specific.type, op=op, value=value), specific


@property_check(_related_constraints(), st.data())
def rules_imply_exact_covering(pair, data):
    """CLM-COV-3: covers_by_rules(g, s) implies covers_constraint(g, s), and
    every sampled attribute that satisfies s then satisfies g."""
    general, specific = pair
    if covers_by_rules(general, specific):
        assert covers_constraint(general, specific), (general, specific)
        value = data.draw(gen.attribute_value_for(specific))
        attribute = Attribute(name="x", type=specific.type, value=value)
        if semantics.satisfies(attribute, specific):
            assert semantics.satisfies(attribute, general), (attribute, general, specific)


@property_check(_related_constraints())
def covers_constraint_agrees_with_subscription_covering(pair):
    """CLM-COV-1: Def 7 on constraints equals DEF-COV-3 on one-constraint
    subscriptions, and a refutation comes with a witness event that the
    Python semantics confirm."""
    general, specific = pair
    exact = covers_constraint(general, specific)
    witness = covering_counterexample(Subscription({general}), Subscription({specific}))
    assert exact == (witness is None), (general, specific, witness)
    if witness is not None:
        assert semantics.matches(Subscription({specific}), witness)
        assert not semantics.matches(Subscription({general}), witness)


@property_check(gen.constraints())
def identical_constraints_are_equal(c):
    """CLM-COV-4 (Theorem 2): a constraint equals (Def 8) a syntactically
    identical copy, in every layer that decides covering: z3's mutual
    containment (constraints_equal), the rules (rule T2 fires both ways),
    and the impl's filter covering (subsum.impl.network.protocols.covering), which
    Siena forwarding relies on. The copy is rebuilt from the filter text,
    so it is identical in syntax, not the same object."""
    copy = parse_filter(format_filter(Subscription({c})))
    (twin,) = copy.constraints
    assert twin is not c
    assert constraints_equal(c, twin) and constraints_equal(twin, c), c
    assert covers_by_rules(c, twin) and covers_by_rules(twin, c), c
    assert filter_covers(Subscription({c}), copy) and filter_covers(copy, Subscription({c})), c


@property_check(gen.subscriptions(max_size=3), gen.subscriptions(max_size=3), st.data())
def covers_subscription_agrees_with_sampling(general, specific, data):
    """CLM-COV-6: if covers_subscription(G, S), every sampled event matching
    S matches G; if not, the witness event matches S and not G."""
    witness = covering_counterexample(general, specific)
    if witness is None:
        assert covers_subscription(general, specific)
        for _ in range(3):
            event = data.draw(gen.planted_event(specific))
            if semantics.matches(specific, event):
                assert semantics.matches(general, event), (general, specific, event)
    else:
        assert not covers_subscription(general, specific)
        assert semantics.matches(specific, witness), (specific, witness)
        assert not semantics.matches(general, witness), (general, witness)


@property_check(gen.constraints(type_="float"), under_test.engine_names())
def signed_zero_is_one_value(c, engine):
    """CLM-DATA-2: -0.0 and +0.0 are one float value, stored as +0.0, and
    they satisfy the same constraints: in the model's operators (given the
    raw floats), in every engine (given events and subscriptions read from
    JSON text that spells -0.0), and in the filter parser."""
    negative = Attribute(name=c.name, type="float", value=-0.0)
    assert math.copysign(1.0, negative.value) == 1.0, "an attribute keeps -0.0 instead of storing +0.0"
    assert math.copysign(1.0, Constraint(c.name, "float", "=", -0.0).value) == 1.0, "a constraint keeps -0.0"
    if c.value is not None:
        assert semantics.operator_holds(c.op, -0.0, c.value) == semantics.operator_holds(c.op, 0.0, c.value), c
        assert semantics.operator_holds(c.op, 0.0, -0.0) == semantics.operator_holds(c.op, 0.0, 0.0), c.op
    read = [parse_event_line(f'{{"id": "e{i}", "attributes": {{"{c.name}": {text}}}}}'.encode())[1] for i, text in enumerate(("-0.0", "0.0"))]
    spelled = parse_subscription_line(json.dumps({"id": "s", "filter": format_filter(Subscription({c}))}).encode())[1]
    zero_constraint = parse_subscription_line(json.dumps({"id": "z", "filter": f"{c.name}:float = -0.0"}).encode())[1]
    assert zero_constraint == parse_filter(f"{c.name}:float = 0.0")
    got = make_engine(engine, [("s", spelled), ("z", zero_constraint)]).match_batch(read)
    assert got[0] == got[1] and "z" in got[0], (engine, c, got)


@property_check(gen.constraints(type_="float"), gen.ints)
def int_never_satisfies_float(c, n):
    """CLM-DATA-3: an int attribute never satisfies a float constraint (and back)."""
    assert not semantics.satisfies(Attribute(name=c.name, type="int", value=n), c)
    as_float = float(n)
    if int(as_float) == n:
        int_constraint = Constraint(name=c.name, type="int", op="=", value=n)
        assert not semantics.satisfies(Attribute(name=c.name, type="float", value=as_float), int_constraint)


@property_check(gen.strings)
def empty_pattern_matches_every_string(s):
    """CLM-DATA-4: the empty string under prefix, suffix and contains, and the
    pattern '*' under wildcard, match every string."""
    a = Attribute(name="s", type="string", value=s)
    for op, value in (("prefix", ""), ("suffix", ""), ("contains", ""), ("wildcard", "*")):
        assert semantics.satisfies(a, Constraint(name="s", type="string", op=op, value=value))


@property_check(st.lists(gen.constraints(), max_size=5), st.randoms(use_true_random=False), gen.events())
def duplicate_constraints_collapse(constraints, rnd, event):
    """CLM-DATA-5: a subscription is a set: built from a list, from the list
    doubled and shuffled, from its filter text written twice, or from JSON
    constraints listed twice, it is one subscription and matches alike."""
    doubled = constraints + constraints
    rnd.shuffle(doubled)
    a, b = Subscription(constraints), Subscription(doubled)  # the Subscription itself collapses the lists
    assert a == b and len(b.constraints) == len(set(constraints)), (constraints, b)
    assert semantics.matches(a, event) == semantics.matches(b, event)
    assert semantics.counting_match(b, event) == semantics.matches(a, event)
    if constraints:
        text = format_filter(a)
        assert parse_filter(f"{text} and {text}") == a, text
        listed = [{"name": c.name, "type": c.type, "op": c.op, **({} if c.value is None else {"value": c.value})} for c in doubled]
        assert parse_subscription_line(json.dumps({"id": "s", "constraints": listed}).encode())[1] == a, listed


@property_check(gen.subscriptions())
def filter_round_trip(subscription):
    """CLM-DATA-6: format_filter prints a normal form that parses back to the same subscription."""
    assume(subscription.constraints)
    text = format_filter(subscription)
    assert parse_filter(text) == subscription, text
    assert format_filter(parse_filter(text)) == text
