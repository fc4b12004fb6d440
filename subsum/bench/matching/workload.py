"""Seed 001's workload generator (§4.1), with planted matches.

The paper's rules, and where this generator has to choose (benchmarks/README.md):
- A_n names of 6 random lowercase letters. Each name gets one type, drawn
  once: int 40%, float 30%, string 20%, bool 10% (a schema; the paper does
  not say whether types are per name or per attribute).
- Values: int uniform in [-100, 100]; float uniform in [-100, 100] at full
  precision (so float equality almost never holds, as in the paper);
  string: one of 100 random 8-letter strings; bool: 50/50.
- Operators, 20% each: int and float use the paper's `> < >= <= =`. Our data
  model has no order on strings and bools, so string constraints draw from
  `= prefix suffix contains wildcard` (patterns cut from the string table)
  and bool constraints from `= !=`.
- Each event draws its attribute count from [a_l, a_h], each subscription its
  constraint count from [c_l, c_h]; names are drawn without replacement
  (events are Maps).
- `planted_rate`: that share of the events is built from a random
  subscription, with a value satisfying each of its constraints, then
  topped up with random attributes. The literal generator almost never
  yields a match (seed note §4.5); planted events match at least the
  subscription they came from.
Everything is drawn from one `random.Random(seed)`.
"""

from __future__ import annotations

import functools
import math
import random
import string
from array import array
from typing import Any

import attrs
import numpy as np

from subsum.core.types import TYPES, Subscription
from subsum.impl.matching.columnar.batch import Column, ColumnarBatch, DTYPES
from subsum.impl.matching.ops import OP_CODE, OP_NAME
from subsum.impl.matching.columnar.subscription_columns import ConstraintColumn, SubscriptionColumns

TYPE_WEIGHTS = (("int", 0.4), ("float", 0.3), ("string", 0.2), ("bool", 0.1))
OPS = {
    "int": (">", "<", ">=", "<=", "="),
    "float": (">", "<", ">=", "<=", "="),
    "string": ("=", "prefix", "suffix", "contains", "wildcard"),
    "bool": ("=", "!="),
}
LOW, HIGH = -100, 100
STRING_TABLE_SIZE = 100


@attrs.frozen
class Params:
    """Seed 001 §4.1's test parameters; the defaults are its default point."""

    events: int = 1000  # E
    attrs_low: int = 20  # a_l
    attrs_high: int = 30  # a_h
    names: int = 500  # A_n
    subscriptions: int = 1000  # S
    cons_low: int = 10  # c_l
    cons_high: int = 15  # c_h
    planted_rate: float = 0.0
    seed: int = 1

    def __attrs_post_init__(self) -> None:
        for field in ("events", "names", "subscriptions"):
            if getattr(self, field) < 0:
                raise ValueError(f"{field} must be >= 0, got {getattr(self, field)}")
        if not 0 <= self.attrs_low <= self.attrs_high <= self.names:
            raise ValueError(f"need 0 <= a_l <= a_h <= A_n, got a_l={self.attrs_low} a_h={self.attrs_high} A_n={self.names}")
        if not 0 <= self.cons_low <= self.cons_high <= self.names:
            raise ValueError(f"need 0 <= c_l <= c_h <= A_n, got c_l={self.cons_low} c_h={self.cons_high} A_n={self.names}")
        if not (0.0 <= self.planted_rate <= 1.0) or math.isnan(self.planted_rate):
            raise ValueError(f"planted_rate must lie in [0, 1], got {self.planted_rate}")


@attrs.frozen
class Workload:
    params: Params
    columns: SubscriptionColumns  # the subscriptions, as the columnar engines take them
    batch: ColumnarBatch
    planted: int  # how many events were planted

    @functools.cached_property
    def subscriptions(self) -> list[tuple[str, Subscription]]:
        """The subscriptions as (id, Subscription) pairs, built on first use."""
        return self.columns.to_subscriptions()

    def events(self, limit: int | None = None):
        """The batch as Event objects (the first `limit` events)."""
        events = self.batch.to_events()
        return events if limit is None else events[:limit]


def _word(rnd: random.Random, length: int) -> str:
    return "".join(rnd.choice(string.ascii_lowercase) for _ in range(length))


def _distinct_words(rnd: random.Random, count: int, length: int) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < count:
        words[_word(rnd, length)] = None
    return list(words)


class _Generator:
    def __init__(self, p: Params):
        self.p = p
        self.rnd = random.Random(p.seed)
        rnd = self.rnd
        self.names = _distinct_words(rnd, p.names, 6)
        self.types = rnd.choices([t for t, _ in TYPE_WEIGHTS], [w for _, w in TYPE_WEIGHTS], k=p.names)
        self.table = _distinct_words(rnd, STRING_TABLE_SIZE, 8)

    def value(self, type_: str):
        rnd = self.rnd
        if type_ == "int":
            return rnd.randint(LOW, HIGH)
        if type_ == "float":
            return rnd.uniform(LOW, HIGH) + 0.0
        if type_ == "string":
            return rnd.choice(self.table)
        return rnd.random() < 0.5

    def constraint(self, name_index: int) -> tuple[str, str, Any]:
        """A random constraint on the name: (type, operator, value)."""
        rnd = self.rnd
        type_ = self.types[name_index]
        op = rnd.choice(OPS[type_])
        if type_ == "string" and op != "=":
            word = rnd.choice(self.table)
            k = rnd.randint(1, 3)
            value = {
                "prefix": word[:k],
                "suffix": word[-k:],
                "contains": word[rnd.randint(0, 8 - k):][:k],
                "wildcard": word[:rnd.randint(1, 2)] + "*" + word[-rnd.randint(1, 2):],
            }[op]
        else:
            value = self.value(type_)
        return type_, op, value

    def subscription(self) -> list[tuple[int, str, str, Any]]:
        """A random subscription: its constraints as (name index, type, operator, value)."""
        p, rnd = self.p, self.rnd
        count = rnd.randint(p.cons_low, p.cons_high)
        return [(i, *self.constraint(i)) for i in rnd.sample(range(p.names), count)]

    def witness(self, type_: str, op: str, w: Any):
        """A value satisfying the constraint (type_, op, w)."""
        rnd = self.rnd
        if type_ == "bool":
            return w if op == "=" else not w
        if type_ == "string":
            pad = lambda n: _word(rnd, rnd.randint(0, n))  # noqa: E731
            if op == "=":
                return w
            if op == "prefix":
                return w + _word(rnd, 8 - len(w))
            if op == "suffix":
                return _word(rnd, 8 - len(w)) + w
            if op == "contains":
                return pad(3) + w + pad(3)
            left, _, right = w.partition("*")
            return left + pad(3) + right
        if op == "=":
            return w
        if type_ == "int":
            return {
                ">": lambda: rnd.randint(w + 1, max(w + 1, HIGH)),
                ">=": lambda: rnd.randint(w, max(w, HIGH)),
                "<": lambda: rnd.randint(min(w - 1, LOW), w - 1),
                "<=": lambda: rnd.randint(min(w, LOW), w),
            }[op]()
        if op in (">", ">="):
            x = rnd.uniform(w, max(w, HIGH))
            return max(x, math.nextafter(w, math.inf)) if op == ">" else max(x, w)
        x = rnd.uniform(min(w, LOW), w)
        return min(x, math.nextafter(w, -math.inf)) if op == "<" else min(x, w)


#: array typecodes of each type's values while rows are appended (a string's value is its code; bool as a byte)
TYPECODE = {"int": "q", "float": "d", "string": "q", "bool": "b"}


class _Columns:
    """Rows appended per type into compact arrays (8 bytes a field, not a
    Python object), turned into numpy columns once."""

    def __init__(self, fields: int):
        self.rows: dict[str, tuple[array, ...]] = {t: (*(array("q") for _ in range(fields - 1)), array(TYPECODE[t])) for t in DTYPES}

    def arrays(self, t: str) -> list[np.ndarray]:
        *codes, value = self.rows[t]
        return [np.frombuffer(c, np.int64).copy() for c in codes] + [np.frombuffer(value, DTYPES[t]).copy()]


class _Subscriptions:
    """The generated subscriptions, constraint by constraint in drawing order:
    (name index, operator code, value; a string's value is its code)."""

    def __init__(self, g: _Generator, count: int):
        self.g, self.strings = g, dict[str, int]()
        self.ptr, self.name, self.op, self.value = array("q", [0]), array("q"), array("b"), array("d")
        for _ in range(count):
            for k, type_, op, value in g.subscription():
                self.name.append(k)
                self.op.append(OP_CODE[op])
                self.value.append(self.strings.setdefault(value, len(self.strings)) if type_ == "string" else value)
            self.ptr.append(len(self.name))
        self.text = list(self.strings)

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def constraints(self, j: int) -> list[tuple[int, str, str, Any]]:
        """Subscription j's constraints as (name index, type, operator, value), by name."""
        found = []
        for r in range(self.ptr[j], self.ptr[j + 1]):
            k, type_ = self.name[r], self.g.types[self.name[r]]
            v = self.value[r]
            value = self.text[int(v)] if type_ == "string" else bool(v) if type_ == "bool" else int(v) if type_ == "int" else v
            found.append((k, type_, OP_NAME[self.op[r]], value))
        return sorted(found, key=lambda c: self.g.names[c[0]])

    def columns(self) -> SubscriptionColumns:
        name = np.frombuffer(self.name, np.int64)
        sub = np.repeat(np.arange(len(self), dtype=np.int64), np.diff(np.frombuffer(self.ptr, np.int64)).astype(np.int64))
        type_of = np.array([TYPES.index(t) for t in self.g.types], np.int64)[name] if len(name) else np.zeros(0, np.int64)
        op, value = np.frombuffer(self.op, np.int8).astype(np.int64), np.frombuffer(self.value, np.float64)
        columns = {}
        for t in DTYPES:
            sel = type_of == TYPES.index(t)
            columns[t] = ConstraintColumn(sub[sel], name[sel], op[sel], value[sel].astype(DTYPES[t]))
        return SubscriptionColumns([f"s{j}" for j in range(len(self))], list(self.g.names), self.text, columns)


def generate(p: Params) -> Workload:
    g = _Generator(p)
    rnd = g.rnd
    subs = _Subscriptions(g, p.subscriptions)
    strings: dict[str, int] = {s: i for i, s in enumerate(g.table)}
    cols = _Columns(3)
    planted = 0
    for i in range(p.events):
        chosen: dict[int, Any] = {}
        if len(subs) and p.planted_rate and rnd.random() < p.planted_rate:
            planted += 1
            for k, type_, op, w in subs.constraints(rnd.randrange(len(subs))):
                chosen[k] = g.witness(type_, op, w)
        count = rnd.randint(p.attrs_low, p.attrs_high)
        if len(chosen) < count:
            for k in rnd.sample(range(p.names), count):
                if len(chosen) >= count:
                    break
                if k not in chosen:
                    chosen[k] = g.value(g.types[k])
        for k, value in chosen.items():
            type_ = g.types[k]
            ev, nm, val = cols.rows[type_]
            ev.append(i)
            nm.append(k)
            if type_ == "string":
                value = strings.setdefault(value, len(strings))
            val.append(value)
    batch = ColumnarBatch(p.events, list(g.names), list(strings), {t: Column(*cols.arrays(t)) for t in DTYPES})
    return Workload(p, subs.columns(), batch, planted)
