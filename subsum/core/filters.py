"""The filter syntax (spec/01-data-model.md, DEF-DATA-8), parsed with lark.

    price > 8.30 and price < 8.70 and symbol prefix "OT" and volume:int any

- A filter is one or more constraints joined by `and`.
- A constraint is `name op value`; `name:type op value` states the type
  explicitly (`price:float > 8` is the float 8.0); `name:type any` has no value.
- Literal types: `8` is int, `8.0` / `8e3` is float, `"OT"` is string
  (JSON escapes), `true` / `false` is bool.
- A name is an identifier (`[A-Za-z_][A-Za-z0-9_.]*`) or any text between
  backquotes, with `\\` escaping a backquote or a backslash.

`parse_filter` returns a Subscription; `format_filter` prints its normal form
(constraints de-duplicated and sorted), which parses back to the same value.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

import attrs
from lark import Lark, Token, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from subsum.core.errors import SubsumError
from subsum.core.types import (
    OPS_BY_TYPE,
    TYPES,
    Constraint,
    InvalidValue,
    Scalar,
    Subscription,
    sorted_constraints,
    type_of_python_value,
)

_GRAMMAR = r"""
start: constraint ("and" constraint)*
constraint: name (":" TYPE)? OP value?
name: IDENT | QUOTED_NAME
value: INT | FLOAT | STRING | TRUE | FALSE

OP: "!=" | "<=" | ">=" | "=" | "<" | ">" | "prefix" | "suffix" | "contains" | "wildcard" | "any"
TYPE: "int" | "float" | "string" | "bool"
TRUE: "true"
FALSE: "false"
IDENT: /[A-Za-z_][A-Za-z0-9_.]*/
QUOTED_NAME: /`(?:[^`\\]|\\.)+`/
INT: /-?[0-9]+/
FLOAT: /-?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/ | /-?[0-9]+[eE][+-]?[0-9]+/
STRING: /"(?:[^"\\]|\\.)*"/

%import common.WS
%ignore WS
"""

_PARSER = Lark(_GRAMMAR, parser="lalr", lexer="contextual", propagate_positions=True)

_KEYWORDS = frozenset({"and", "true", "false", *TYPES, *(op for op in OPS_BY_TYPE["string"] if op.isalpha())})
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")

_FRIENDLY = {
    "OP": "an operator (=, !=, <, <=, >, >=, prefix, suffix, contains, wildcard, any)",
    "TYPE": "a type (int, float, string, bool)",
    "IDENT": "a name",
    "QUOTED_NAME": "a name",
    "INT": "a value",
    "FLOAT": "a value",
    "STRING": "a value",
    "TRUE": "a value",
    "FALSE": "a value",
    "AND": "'and'",
    "COLON": "':'",
    "$END": "the end of the filter",
}


@attrs.frozen
class FilterError(SubsumError, ValueError):
    """A filter that does not parse or does not type-check. `column` is 1-based."""

    message: str
    column: int

    def __str__(self) -> str:
        return f"column {self.column}: {self.message}"


def _expected(names: set[str]) -> str:
    if "AND" in names:
        names = names | {"$END"}  # `and` only follows a complete constraint, where the filter may end
    friendly = sorted({_FRIENDLY.get(n, n) for n in names})
    return " or ".join(friendly) if friendly else "nothing"


def _syntax_error(text: str, exc: UnexpectedInput) -> FilterError:
    if isinstance(exc, UnexpectedEOF) or (
        isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
    ):
        return FilterError(
            f"the filter ends too early; expected {_expected(set(exc.expected))}",
            len(text) + 1,
        )
    if isinstance(exc, UnexpectedCharacters):
        pos = cast(int, exc.pos_in_stream)
        char = text[pos] if pos < len(text) else ""
        hint = ""
        if char == '"':
            hint = " (an unterminated or badly escaped string?)"
        elif char == "`":
            hint = " (an unterminated or empty quoted name?)"
        return FilterError(
            f"unexpected character {char!r}{hint}; expected {_expected(set(exc.allowed or ()))}",
            cast(int, exc.pos_in_stream) + 1,
        )
    assert isinstance(exc, UnexpectedToken)
    return FilterError(
        f"unexpected {exc.token.value!r}; expected {_expected(set(exc.expected))}",
        cast(int, exc.token.start_pos) + 1,
    )


def _decode_name(token: Token) -> str:
    if token.type == "IDENT":
        return str(token)
    return re.sub(r"\\(.)", r"\1", str(token)[1:-1])


def _decode_literal(token: Token) -> Scalar:
    if token.type == "INT":
        try:
            return int(token)
        except ValueError:  # more digits than Python converts (4,300); far beyond 64 bits anyway
            raise FilterError(f"an integer of {len(token.lstrip('-'))} digits is out of range; ints are 64-bit",
                              (cast(int, token.start_pos) + 1)) from None
    if token.type == "FLOAT":
        return float(token)
    if token.type == "TRUE":
        return True
    if token.type == "FALSE":
        return False
    try:
        return cast(str, json.loads(token))
    except json.JSONDecodeError as exc:
        why = exc.msg
        if why.startswith("Invalid control character"):
            why = (f"the control character U+{ord(token[exc.pos]):04X} cannot stand in a string literal; "
                   "write it as an escape such as \\t or \\u001b")
        raise FilterError(f"bad string literal: {why}", (cast(int, token.start_pos) + 1) + exc.pos) from None


def _coerce(type_: str, literal: Scalar, token: Token) -> Scalar:
    """Apply an explicit `name:type` annotation to a literal."""
    literal_type = type_of_python_value(literal)
    if literal_type == type_:
        return literal
    if type_ == "float" and literal_type == "int":
        try:
            as_float = float(literal)
        except OverflowError:
            raise FilterError(f"an integer of {len(str(abs(cast(int, literal))))} digits is out of the float range",
                              (cast(int, token.start_pos) + 1)) from None
        if int(as_float) != literal:
            raise FilterError(f"{literal} is not exactly representable as a float", (cast(int, token.start_pos) + 1))
        return as_float
    raise FilterError(f"the value {token} is {literal_type}, but the name is declared {type_}", (cast(int, token.start_pos) + 1))


def _build_constraint(node: Any) -> Constraint:  # a lark parse-tree node
    children = list(node.children)
    name_node = children.pop(0)
    name = _decode_name(name_node.children[0])
    declared = None
    if children and isinstance(children[0], Token) and children[0].type == "TYPE":
        declared = str(children.pop(0))
    op_token = children.pop(0)
    op = str(op_token)
    value_token = children[0].children[0] if children else None
    if op == "any":
        if value_token is not None:
            raise FilterError("operator 'any' takes no value", (cast(int, value_token.start_pos) + 1))
        if declared is None:
            raise FilterError(
                f"operator 'any' needs a type: write {name}:int any, {name}:string any, ...",
                (cast(int, op_token.start_pos) + 1),
            )
        type_, value = declared, None
    else:
        if value_token is None:
            raise FilterError(f"operator {op!r} needs a value", cast(int, op_token.end_pos) + 1)
        literal = _decode_literal(value_token)
        if declared is None:
            type_, value = type_of_python_value(literal), literal
        else:
            type_, value = declared, _coerce(declared, literal, value_token)
        if op not in OPS_BY_TYPE[type_]:
            raise FilterError(
                f"operator {op!r} does not apply to type {type_}; "
                f"{type_} allows {', '.join(OPS_BY_TYPE[type_])}",
                (cast(int, op_token.start_pos) + 1),
            )
    try:
        return Constraint(name=name, type=type_, op=op, value=value)
    except InvalidValue as exc:
        column = (cast(int, value_token.start_pos) + 1) if value_token is not None else (cast(int, op_token.start_pos) + 1)
        raise FilterError(str(exc), column) from None


def parse_filter(text: str) -> Subscription:
    """Parse a filter into a Subscription, or raise FilterError with a column."""
    if not text.strip():
        raise FilterError("the filter is empty; write at least one constraint", 1)
    try:
        tree = _PARSER.parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc) from None
    return Subscription(frozenset(_build_constraint(node) for node in tree.children))


def format_name(name: str) -> str:
    if _PLAIN_NAME.match(name) and name not in _KEYWORDS:
        return name
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def format_value(type_: str, value: object) -> str:
    if type_ == "bool":
        return "true" if value else "false"
    if type_ == "float":
        return repr(value)
    if type_ == "int":
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def format_constraint(c: Constraint) -> str:
    if c.op == "any":
        return f"{format_name(c.name)}:{c.type} any"
    return f"{format_name(c.name)} {c.op} {format_value(c.type, c.value)}"


def format_filter(subscription: Subscription) -> str:
    """The normal form: de-duplicated constraints in canonical order.
    The empty subscription has no filter text and formats as ''."""
    return " and ".join(format_constraint(c) for c in sorted_constraints(subscription))
