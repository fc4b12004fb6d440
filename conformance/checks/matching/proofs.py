"""z3 proofs of the covering rules (claim kind `proof`).

Each rule instance (rule × type) is one proof: z3 searches for values
v, v1, v2 with cond(v1, v2) ∧ op1(v, v1) ∧ ¬op2(v, v2). `unsat` means the
rule is sound (status `proved`); a model is a counterexample (status
`refuted`), printed in Python terms and re-checked with the Python semantics.
"""

from __future__ import annotations

import time
from typing import Iterable

import attrs
import z3

from subsum.model import semantics, smt
from subsum.model.rules import PYTHON, RULES, Rule, soundness_formula


@attrs.frozen
class ProofResult:
    id: str
    rule: str
    type: str
    statement: str
    source: str
    status: str  # proved | refuted | unknown
    counterexample: dict | None
    seconds: float

    def to_json(self) -> dict:
        return attrs.asdict(self)


def _readable(type_: str, op: str, model: z3.ModelRef, term) -> object:
    if term is None:
        return None
    return smt.value_from_model("string" if op == "wildcard" else type_, model, term, smt.CharMap())


def prove_rule(rule: Rule, timeout_ms: int = 60_000) -> ProofResult:
    """Prove one rule instance sound, or return its counterexample."""
    start = time.perf_counter()
    formula, variables = soundness_formula(rule)
    verdict, model = smt.check(formula, timeout_ms)
    counterexample = None
    if verdict == z3.sat:
        counterexample = {
            "v": _readable(rule.type, "", model, variables["v"]),
            "v1": _readable(rule.type, rule.specific_op, model, variables["v1"]),
            "v2": _readable(rule.type, rule.general_op, model, variables["v2"]),
        }
    status = "proved" if verdict == z3.unsat else "refuted" if verdict == z3.sat else "unknown"
    return ProofResult(
        id=rule.key,
        rule=rule.id,
        type=rule.type,
        statement=rule.text,
        source=rule.source,
        status=status,
        counterexample=counterexample,
        seconds=round(time.perf_counter() - start, 4),
    )


def counterexample_confirmed(rule: Rule, cex: dict) -> bool:
    """Re-check a z3 counterexample with the Python semantics: the condition
    and op1(v, v1) hold, op2(v, v2) does not."""
    v, v1, v2 = cex["v"], cex["v1"], cex["v2"]
    return bool(
        rule.condition(PYTHON, v1, v2)
        and semantics.operator_holds(rule.specific_op, v, v1)
        and not semantics.operator_holds(rule.general_op, v, v2)
    )


def rules_of(prefixes: Iterable[str]) -> list[Rule]:
    prefixes = tuple(prefixes)
    return [r for r in RULES if r.id.startswith(prefixes)]


def prove_all(rules: Iterable[Rule]) -> list[ProofResult]:
    return [prove_rule(rule) for rule in rules]


def rules_to_prove(negative: bool = False) -> list[Rule]:
    """Every covering rule (`subsum prove`), and with `negative` the wrong ones after them."""
    return list(RULES) + (list(WRONG_RULES) if negative else [])


#: Deliberately wrong rules: the negative test (CLM-PROVER-1). If z3 "proved"
#: any of them, the prover, or the encoding, would be vacuous.
WRONG_RULES: tuple[Rule, ...] = (
    Rule(id="WRONG-T1-3", family="WRONG", source="Table 1 row 3 with f(≥, >) misprinted as ≥", type="int",
         specific_op=">=", general_op=">", condition=lambda L, v1, v2: L.holds(">=", v1, v2),
         text="x >= v1 ≺ x > v2 if v1 >= v2 (wrong: v = v1 = v2)"),
    Rule(id="WRONG-T1-1", family="WRONG", source="Table 1 row 1 with f(>, >) misprinted as ≤", type="float",
         specific_op=">", general_op=">", condition=lambda L, v1, v2: L.holds("<=", v1, v2),
         text="x > v1 ≺ x > v2 if v1 <= v2 (wrong)"),
    Rule(id="WRONG-S-WILD-PREFIX", family="WRONG", source="seed 000 §1.5 Wild ⊇ Prefix without r = ''", type="string",
         specific_op="prefix", general_op="wildcard", condition=lambda L, q, w: L.holds("prefix", q, L.left(w)),
         text="Wild(l,r) ⊇ Prefix(q) if q starts with l (wrong: r must be empty)"),
    Rule(id="WRONG-PREFIX-AS-CONTAINS", family="WRONG", source="Example 4-2 read with >* as prefix", type="string",
         specific_op="=", general_op="prefix", condition=lambda L, s, p: L.holds("contains", s, p),
         text="Prefix(p) ⊇ Eq(s) if p in s (wrong: 'OTE' does not start with 'T')"),
)
