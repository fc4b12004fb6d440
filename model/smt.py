"""The SMT encoding of the data model (spec/02-covering.md, DEF-SMT-1).

Each type gets a z3 sort and a domain predicate, and each operator a z3
formula that mirrors `operator_holds`. CLM-SMT-1 checks that the two agree.

- int:    z3 Int, with the domain 64-bit bounds (DEF-DATA-2).
- float:  z3 Float64 (IEEE double); the domain excludes NaN, ±inf and -0.0,
          which the data model never holds (-0.0 is normalized to +0.0).
          Comparisons are the IEEE ones (fpLT, fpEQ, ...).
- string: z3 String. z3 characters stop at U+2FFFF, Python's at U+10FFFF.
          String operators only compare characters for equality, so any
          injective renaming of characters preserves every formula; a
          `CharMap` renames the (rare) characters above U+2FFFF to unused
          private-use code points and maps witnesses back.
- bool:   z3 Bool.

A wildcard constraint value `l*r` is encoded as the pair (l, r).
"""

from __future__ import annotations

import operator
import random
import re
import struct
from typing import Any, Iterable, cast

import z3

from subsum.core.types import INT_MAX, INT_MIN, Scalar, split_wildcard

Z3_MAX_CHAR = 0x2FFFF
_PRIVATE_USE = 0xE000


class CharMap:
    """An injective map from the characters of a query's constants to z3 characters (DEF-SMT-1, strings)."""

    def __init__(self, texts: Iterable[str] = ()):
        chars = sorted({ch for text in texts for ch in text})
        self.forward: dict[str, int] = {ch: ord(ch) for ch in chars if ord(ch) <= Z3_MAX_CHAR}
        used = set(self.forward.values())
        code = _PRIVATE_USE
        for ch in chars:
            if ord(ch) > Z3_MAX_CHAR:
                while code in used:
                    code += 1
                self.forward[ch] = code
                used.add(code)
        self.backward: dict[int, str] = {code: ch for ch, code in self.forward.items()}
        self._fresh: dict[int, str] = {}

    def _outside_constants(self, code: int) -> str:
        """A witness character z3 chose that is not valid in Python text (a
        surrogate) is renamed to a fresh character above U+2FFFF that no
        constant uses: still an injective renaming, so formulas still hold."""
        if code not in self._fresh:
            candidate = Z3_MAX_CHAR + 1 + len(self._fresh)
            while chr(candidate) in self.forward or chr(candidate) in self._fresh.values():
                candidate += 1
            self._fresh[code] = chr(candidate)
        return self._fresh[code]

    def encode(self, text: str) -> z3.SeqRef:
        units = [z3.Unit(z3.CharVal(self.forward[ch])) for ch in text]
        if not units:
            return z3.Empty(z3.StringSort())
        return units[0] if len(units) == 1 else z3.Concat(*units)

    def decode(self, value: z3.SeqRef) -> str:
        # as_string() writes some characters raw and others as \u{hex}; it
        # always escapes a backslash, so each token below is one character.
        def one(match: re.Match[str]) -> str:
            code = int(match.group(1), 16) if match.group(1) else ord(match.group(0))
            if code in self.backward:
                return self.backward[code]
            if 0xD800 <= code <= 0xDFFF:
                return self._outside_constants(code)
            return chr(code)

        return re.sub(r"\\u\{([0-9a-fA-F]+)\}|.", one, value.as_string(), flags=re.S)


def sort_of(type_: str) -> z3.SortRef:
    """DEF-SMT-1: the z3 sort of a data-model type.

    >>> sort_of("int"), sort_of("float"), sort_of("string"), sort_of("bool")
    (Int, FPSort(11, 53), String, Bool)
    """
    return {
        "int": z3.IntSort(),
        "float": z3.Float64(),
        "string": z3.StringSort(),
        "bool": z3.BoolSort(),
    }[type_]


def variable(type_: str, label: str) -> z3.ExprRef:
    """A z3 variable ranging over values of `type_` (DEF-SMT-1: its sort and domain).

    >>> v = variable("float", "v")
    >>> v, v.sort()
    (v, FPSort(11, 53))
    """
    return z3.Const(label, sort_of(type_))


def pattern_variable(label: str) -> tuple[z3.SeqRef, z3.SeqRef]:
    """A z3 variable ranging over wildcard patterns, as the pair (l, r) (DEF-SMT-1).

    >>> pattern_variable("w")
    (w.left, w.right)
    """
    return z3.String(f"{label}.left"), z3.String(f"{label}.right")


def in_domain(type_: str, var: z3.ExprRef) -> z3.BoolRef:
    """DEF-DATA-2 as a formula: `var` holds a value the data model allows.

    >>> in_domain("int", variable("int", "v"))
    And(v >= -9223372036854775808, v <= 9223372036854775807)
    """
    if type_ == "int":
        return z3.And(var >= INT_MIN, var <= INT_MAX)
    if type_ == "float":
        return z3.And(
            z3.Not(z3.fpIsNaN(var)),
            z3.Not(z3.fpIsInf(var)),
            z3.Not(z3.And(z3.fpIsZero(var), z3.fpIsNegative(var))),
        )
    return z3.BoolVal(True)


def constant(type_: str, op: str, value: Scalar | None, chars: CharMap) -> Any:
    """The z3 term for a constraint value (a pair for wildcard patterns; DEF-SMT-1).

    >>> constant("int", ">", 5, CharMap()), constant("int", "any", None, CharMap())
    (5, None)
    >>> left, right = constant("string", "wildcard", "N*SE", CharMap(["N*SE"]))
    >>> z3.simplify(left == z3.StringVal("N")), z3.simplify(right == z3.StringVal("SE"))
    (True, True)
    """
    if value is None:
        return None
    if op == "wildcard":
        left, right = split_wildcard(cast(str, value))
        return chars.encode(left), chars.encode(right)
    return value_constant(type_, value, chars)


def value_constant(type_: str, value: Scalar, chars: CharMap) -> z3.ExprRef:
    """The z3 term for a value of `type_` (DEF-SMT-1).

    >>> value_constant("int", 5, CharMap()), value_constant("bool", True, CharMap())
    (5, True)
    >>> z3.simplify(value_constant("string", "OTE", CharMap(["OTE"])) == z3.StringVal("OTE"))
    True
    """
    if type_ == "int":
        return z3.IntVal(value)
    if type_ == "float":
        return z3.FPVal(value, z3.Float64())
    if type_ == "string":
        return chars.encode(cast(str, value))
    return z3.BoolVal(value)


def _equal(v: Any, w: Any) -> z3.BoolRef:
    if z3.is_fp(v):
        return z3.fpEQ(v, w)
    return v == w


#: The four orderings: z3's integers and strings take Python's comparisons; its floats, IEEE's.
ORDERINGS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
FLOAT_ORDERINGS = {"<": z3.fpLT, "<=": z3.fpLEQ, ">": z3.fpGT, ">=": z3.fpGEQ}


def operator_holds(op: str, v: Any, w: Any) -> z3.BoolRef:
    """DEF-SMT-1: the z3 formula for op(v, w), mirroring
    `subsum.model.semantics.operator_holds`.

    >>> z3.simplify(operator_holds("<", z3.IntVal(3), z3.IntVal(5)))
    True
    >>> z3.simplify(operator_holds("prefix", z3.StringVal("OTE"), z3.StringVal("OT")))
    True
    """
    if op == "any":
        return z3.BoolVal(True)
    if op == "=":
        return _equal(v, w)
    if op == "!=":
        return z3.Not(_equal(v, w))
    if op in ORDERINGS:
        return (FLOAT_ORDERINGS if z3.is_fp(v) else ORDERINGS)[op](v, w)
    if op == "prefix":
        return z3.PrefixOf(w, v)
    if op == "suffix":
        return z3.SuffixOf(w, v)
    if op == "contains":
        return z3.Contains(v, w)
    if op == "wildcard":
        left, right = w
        return z3.And(
            z3.PrefixOf(left, v),
            z3.SuffixOf(right, v),
            z3.Length(v) >= z3.Length(left) + z3.Length(right),
        )
    raise AssertionError(f"unknown operator {op!r}")


def value_from_model(type_: str, model: z3.ModelRef, term: Any, chars: CharMap) -> Any:
    """Read a witness value of `type_` back from a z3 model (DEF-SMT-1, inverted).

    >>> v = variable("int", "v")
    >>> verdict, model = check(z3.And(v > 1, v < 3))
    >>> value_from_model("int", model, v, CharMap())
    2
    """
    if isinstance(term, tuple):
        return "*".join(value_from_model("string", model, part, chars) for part in term)
    value = model.eval(term, model_completion=True)
    if type_ == "int":
        return value.as_long()
    if type_ == "float":
        bits = model.eval(z3.fpToIEEEBV(term), model_completion=True).as_long()
        result = struct.unpack("<d", struct.pack("<Q", bits))[0]
        return 0.0 if result == 0.0 else result
    if type_ == "string":
        return chars.decode(value)
    return z3.is_true(value)


def _conjuncts(formula: z3.BoolRef) -> list[z3.BoolRef]:
    if z3.is_and(formula):
        return [part for child in formula.children() for part in _conjuncts(child)]
    return [formula]


def orderings(formula: z3.BoolRef, shuffles: int = 6) -> list[list[z3.BoolRef]]:
    """The same conjunction (DEF-SMT-1) in several orders: as given, reversed, then
    seeded shuffles. Deterministic, so every run tries the same sequence.

    >>> v = variable("int", "v")
    >>> tries = orderings(z3.And(v > 1, v < 3))
    >>> len(tries), tries[0], tries[1]
    (8, [v > 1, v < 3], [v < 3, v > 1])
    """
    parts = _conjuncts(formula)
    tries = [parts, parts[::-1]]
    for seed in range(shuffles):
        shuffled = list(parts)
        random.Random(seed).shuffle(shuffled)
        tries.append(shuffled)
    return tries


def check(formula: z3.BoolRef, timeout_ms: int = 60_000) -> tuple[z3.CheckSatResult, z3.ModelRef | None]:
    """Check `formula` (DEF-SMT-1) for satisfiability; return the verdict and a model if sat.

    z3's string solver can be decisive or stuck on the same conjunction
    depending on the order of its conjuncts (S-CONTAINS-WILD-RIGHT is
    decided in 1 ms in one order and not in a minute in another). Order does
    not change meaning, so this tries the orderings of `orderings` with a
    short timeout each, then the given order with the rest of the budget;
    whichever ordering answers sat or unsat answers for the formula.

    >>> v = variable("int", "v")
    >>> check(z3.And(v > 1, v < 3))
    (sat, [v = 2])
    >>> check(z3.And(v > 1, v < 2))
    (unsat, None)
    """
    attempts = orderings(formula)
    short = max(1, min(2_000, timeout_ms // (2 * len(attempts))))
    budgets = [short] * len(attempts)
    attempts.append(attempts[0])
    budgets.append(max(1, timeout_ms - short * len(budgets)))
    for parts, budget in zip(attempts, budgets):
        solver = z3.Solver()
        solver.set("timeout", budget)
        solver.add(*parts)
        verdict = solver.check()
        if verdict != z3.unknown:
            return verdict, solver.model() if verdict == z3.sat else None
    return z3.unknown, None
