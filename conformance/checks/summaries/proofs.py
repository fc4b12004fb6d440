"""CLM-SUM-2 by z3: every row covers each of its members' constraints
(drawn workloads), and every step that generalizes a row is sound (for all
values)."""

from __future__ import annotations

import math

import z3
from hypothesis import strategies as st

from subsum.conformance import strategies as gen
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.checks.summaries.views import build_owner, to_model
from subsum.core.types import Constraint
from subsum.model.summaries import abstraction as ref_abstraction
from subsum.model import smt


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
