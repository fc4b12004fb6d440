"""The syntactic covering rules (spec/02-covering.md, DEF-COV-4).

A rule says: a constraint `specific` (op1, value v1) is contained in a
constraint `general` (op2, value v2) of the same name and type whenever a
condition on (v1, v2) holds. Each condition is written once, against a small
vocabulary `L` (holds, both, either, left, right, is_empty, same), and is read
twice:

- by `PYTHON`, to decide `covers_by_rules` at run time;
- by `SMT`, so that z3 proves the rule sound (CLM-COV-1, CLM-COV-2, CLM-COV-3):
  for all v, v1, v2: cond(v1, v2) ∧ op1(v, v1) → op2(v, v2).

So the condition that is proved is, character for character, the condition
that runs.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs
import z3

from subsum.core.types import OPS_BY_TYPE, split_wildcard
from subsum.model import semantics, smt


class PYTHON:
    """The vocabulary of rule conditions over Python values (DEF-COV-4 run by Python)."""

    holds = staticmethod(semantics.operator_holds)
    TRUE = True

    @staticmethod
    def both(a: bool, b: bool) -> bool:
        return a and b

    @staticmethod
    def either(a: bool, b: bool) -> bool:
        return a or b

    @staticmethod
    def left(pattern: str) -> str:
        return split_wildcard(pattern)[0]

    @staticmethod
    def right(pattern: str) -> str:
        return split_wildcard(pattern)[1]

    @staticmethod
    def is_empty(text: str) -> bool:
        return text == ""

    @staticmethod
    def same(v1: object, v2: object) -> bool:
        return v1 == v2


class SMT:
    """The vocabulary of rule conditions over z3 terms (DEF-COV-4 proved over DEF-SMT-1)."""

    holds = staticmethod(smt.operator_holds)
    TRUE = z3.BoolVal(True)
    both = staticmethod(z3.And)
    either = staticmethod(z3.Or)

    @staticmethod
    def left(pattern: Any) -> Any:
        return pattern[0]

    @staticmethod
    def right(pattern: Any) -> Any:
        return pattern[1]

    @staticmethod
    def is_empty(text: Any) -> Any:
        return z3.Length(text) == 0

    @staticmethod
    def same(v1: Any, v2: Any) -> Any:
        if isinstance(v1, tuple):
            return z3.And(v1[0] == v2[0], v1[1] == v2[1])
        if v1 is None:
            return z3.BoolVal(True)
        return z3.fpEQ(v1, v2) if z3.is_fp(v1) else v1 == v2


#: A condition over a vocabulary (PYTHON or SMT, passed as the class) and v1, v2.
Condition = Callable[..., Any]


@attrs.frozen
class Rule:
    """One covering rule for one type (DEF-COV-4): `specific_op` v1 ≺ `general_op` v2 if condition."""

    id: str
    family: str
    source: str
    type: str
    specific_op: str
    general_op: str
    condition: Condition
    text: str

    @property
    def key(self) -> str:
        return f"{self.id}[{self.type}]"


#: Seed 001 Table 1: (op1, op2, f(op1, op2)); `substring` is our `contains`.
TABLE_1: tuple[tuple[str, str, str], ...] = (
    (">", ">", ">="),
    (">", ">=", ">="),
    (">=", ">", ">"),
    (">=", ">=", ">="),
    ("<", "<", "<="),
    ("<", "<=", "<="),
    ("<=", "<", "<"),
    ("<=", "<=", "<="),
    ("=", "=", "="),
    ("prefix", "prefix", "prefix"),
    ("suffix", "suffix", "suffix"),
    ("contains", "contains", "contains"),
)


def _table_1_rules() -> list[Rule]:
    rules = []
    for row, (op1, op2, f) in enumerate(TABLE_1, start=1):
        types = [t for t in ("int", "float", "string", "bool") if op1 in OPS_BY_TYPE[t] and f in OPS_BY_TYPE[t]]
        for type_ in types:
            rules.append(
                Rule(
                    id=f"T1-{row}",
                    family=f"T1-{row}",
                    source=f"seed 001 Lemma 1, Table 1 row {row}, Theorem 1",
                    type=type_,
                    specific_op=op1,
                    general_op=op2,
                    condition=lambda L, v1, v2, f=f: L.holds(f, v1, v2),
                    text=f"x {op1} v1 ≺ x {op2} v2 if v1 {f} v2",
                )
            )
    return rules


#: Seed 000 §1.5 string rules not already in Table 1, as
#: (id, specific op, general op, condition, text).
_STRING_RULES: tuple[tuple[str, str, str, Condition, str], ...] = (
    ("S-PREFIX-EQ", "=", "prefix", lambda L, s, p: L.holds("prefix", s, p), "Prefix(p) ⊇ Eq(s) if s starts with p"),
    ("S-PREFIX-WILD", "wildcard", "prefix", lambda L, w, p: L.holds("prefix", L.left(w), p), "Prefix(p) ⊇ Wild(l,r) if l starts with p"),
    ("S-SUFFIX-EQ", "=", "suffix", lambda L, s, x: L.holds("suffix", s, x), "Suffix(x) ⊇ Eq(s) if s ends with x"),
    ("S-SUFFIX-WILD", "wildcard", "suffix", lambda L, w, x: L.holds("suffix", L.right(w), x), "Suffix(x) ⊇ Wild(l,r) if r ends with x"),
    ("S-CONTAINS-EQ", "=", "contains", lambda L, s, c: L.holds("contains", s, c), "Contains(c) ⊇ Eq(s) if c in s"),
    ("S-CONTAINS-PREFIX", "prefix", "contains", lambda L, q, c: L.holds("contains", q, c), "Contains(c) ⊇ Prefix(q) if c in q"),
    ("S-CONTAINS-SUFFIX", "suffix", "contains", lambda L, q, c: L.holds("contains", q, c), "Contains(c) ⊇ Suffix(q) if c in q"),
    # Seed 000's "Contains(c) ⊇ Wild(l,r) if c in l or c in r" is the union of
    # these two; as one disjunction z3 does not decide it within a minute.
    ("S-CONTAINS-WILD-LEFT", "wildcard", "contains", lambda L, w, c: L.holds("contains", L.left(w), c), "Contains(c) ⊇ Wild(l,r) if c in l"),
    ("S-CONTAINS-WILD-RIGHT", "wildcard", "contains", lambda L, w, c: L.holds("contains", L.right(w), c), "Contains(c) ⊇ Wild(l,r) if c in r"),
    ("S-WILD-EQ", "=", "wildcard", lambda L, s, w: L.holds("wildcard", s, w), "Wild(l,r) ⊇ Eq(s) if s matches l*r"),
    (
        "S-WILD-WILD",
        "wildcard",
        "wildcard",
        lambda L, w1, w2: L.both(L.holds("prefix", L.left(w1), L.left(w2)), L.holds("suffix", L.right(w1), L.right(w2))),
        "Wild(l,r) ⊇ Wild(l',r') if l' starts with l and r' ends with r",
    ),
    (
        "S-WILD-PREFIX",
        "prefix",
        "wildcard",
        lambda L, q, w: L.both(L.is_empty(L.right(w)), L.holds("prefix", q, L.left(w))),
        "Wild(l,'') ⊇ Prefix(q) if q starts with l",
    ),
    (
        "S-WILD-SUFFIX",
        "suffix",
        "wildcard",
        lambda L, q, w: L.both(L.is_empty(L.left(w)), L.holds("suffix", q, L.right(w))),
        "Wild('',r) ⊇ Suffix(q) if q ends with r",
    ),
)


def _string_rules() -> list[Rule]:
    rules = [
        Rule(id=rid, family=rid, source="seed 000 §1.5 (string covering)", type="string",
             specific_op=op1, general_op=op2, condition=cond, text=text)
        for rid, op1, op2, cond, text in _STRING_RULES
    ]
    for op in OPS_BY_TYPE["string"]:
        rules.append(
            Rule(id=f"S-ANY-{op}", family="S-ANY", source="seed 000 §1.2 'all' and §1.5", type="string",
                 specific_op=op, general_op="any", condition=lambda L, v1, v2: L.TRUE,
                 text=f"Any ⊇ x {op} v1")
        )
    return rules


def _derived_rules() -> list[Rule]:
    rules = []
    for type_ in ("int", "float", "string", "bool"):
        for op in OPS_BY_TYPE[type_]:
            rules.append(
                Rule(id=f"T2-{op}", family="T2", source="seed 001 Theorem 2", type=type_,
                     specific_op=op, general_op=op, condition=lambda L, v1, v2: L.same(v1, v2),
                     text="identical constraints are equal")
            )
        if type_ == "string":
            continue  # the seed 000 rules cover strings
        for op in OPS_BY_TYPE[type_]:
            if op != "any":
                rules.append(
                    Rule(id=f"D-ANY-{op}", family="D-ANY", source="derived", type=type_,
                         specific_op=op, general_op="any", condition=lambda L, v1, v2: L.TRUE,
                         text=f"any ⊇ x {op} v1")
                )
            if op not in ("=", "any"):
                rules.append(
                    Rule(id=f"D-EQ-POINT-{op}", family="D-EQ-POINT", source="derived", type=type_,
                         specific_op="=", general_op=op,
                         condition=lambda L, v1, v2, op=op: L.holds(op, v1, v2),
                         text=f"x = v1 ≺ x {op} v2 if v1 {op} v2")
                )
    return rules


#: Every rule `covers_by_rules` uses. Each one is proved sound by z3.
RULES: tuple[Rule, ...] = tuple(_table_1_rules() + _string_rules() + _derived_rules())


def soundness_formula(rule: Rule) -> tuple[z3.BoolRef, dict[str, Any]]:
    """The negation of the rule's soundness (DEF-COV-4 over DEF-SMT-1): a model of it is a counterexample.

    Values range over a superset of the data model (z3 Int without 64-bit
    bounds; Float64 without NaN but with ±inf and -0.0; wildcard patterns as
    arbitrary (l, r) pairs), so a proof covers the data model a fortiori.

    >>> rule = RULES[0]
    >>> rule.key, rule.text
    ('T1-1[int]', 'x > v1 ≺ x > v2 if v1 >= v2')
    >>> formula, variables = soundness_formula(rule)
    >>> smt.check(formula)[0]  # no counterexample: the rule is sound
    unsat
    """
    v = smt.variable(rule.type, "v")

    def value_var(op: str, label: str) -> Any:
        if op == "wildcard":
            return smt.pattern_variable(label)
        if op == "any":
            return None
        return smt.variable(rule.type, label)

    v1 = value_var(rule.specific_op, "v1")
    v2 = value_var(rule.general_op, "v2")
    assumptions = []
    if rule.type == "float":
        assumptions = [z3.Not(z3.fpIsNaN(x)) for x in (v, v1, v2) if x is not None]
    formula = z3.And(
        *assumptions,
        rule.condition(SMT, v1, v2),
        smt.operator_holds(rule.specific_op, v, v1),
        z3.Not(smt.operator_holds(rule.general_op, v, v2)),
    )
    return formula, {"v": v, "v1": v1, "v2": v2}
