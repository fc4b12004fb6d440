"""Seed 000's Table 5-2 workload, the generator behind `subsum bench
summaries` and `subsum bench summary-routing`.

The generator (seed note §6.3: covered values are "funnelled into" the n_sr
ranges; uncovered ones are distinct values), all draws from
`random.Random` instances seeded by strings derived from `seed`:
- schema: nt = 10 attributes, num0, num1 (int), num2, num3 (float),
  str0 … str5 (string): 40% numeric, 60% string;
- per numeric attribute two disjoint base ranges (n_sr = 2), each 2% of the
  domain ([0, 10^6) for int, [0, 10^4) with two decimals for float); per
  string attribute two base patterns, `prefix P` and `suffix X` (two
  uppercase letters each);
- each subscription constrains 2 numeric and 3 string attributes (uniform).
  A constraint is *covered* iff a coin u < p; the coins and the attribute
  choices come from a p-independent stream, so the covered constraints at a
  larger p are a superset of those at a smaller p;
- a covered numeric constraint falls in one of the base ranges: `=` a value
  inside it (40%), a sub-range `>= a, <= b` inside it (30%), or the base
  range itself (30%); an uncovered one is `=` a value outside both ranges,
  distinct from every other such value of the attribute;
- a covered string constraint is under one of the base patterns: `=` a
  10-letter string with that prefix or suffix (40%), a longer `prefix` /
  `suffix` of 3–5 letters (30%), or the base pattern itself (30%); an
  uncovered one is `=` a distinct 10-letter string with neither base
  prefix nor base suffix;
- events have 5 attributes too, the attribute names of a random
  subscription (so the counting can reach popcount(c3)). `PLANTED` (20%)
  take a value satisfying each of its constraints. The others are near
  misses: per attribute, with probability `HOT` (70%) a value in the base
  range or base pattern the subscription's constraint lies in (or its `=`
  value if that constraint is uncovered), else (15%) some subscription's
  `=` value on that attribute, else (15%) a random value.
"""

from __future__ import annotations

import random
import string
from abc import ABC, abstractmethod

import attrs

from subsum.core.types import Attribute, Constraint, Event, Subscription

PROBABILITIES = (0.1, 0.25, 0.5, 0.75, 0.9)
NUMERIC = (("num0", "int"), ("num1", "int"), ("num2", "float"), ("num3", "float"))
STRINGS = tuple((f"str{i}", "string") for i in range(6))
SCHEMA = tuple(sorted(NUMERIC + STRINGS))  # nt = 10
NUMERIC_PER_SUB, STRING_PER_SUB = 2, 3
DOMAIN = {"int": 1_000_000, "float": 10_000.0}
RANGE_SHARE = 0.02  # width of a base range, as a share of the domain
STRING_LEN = 10  # s_sv
ALPHABET = string.ascii_uppercase
# Covered constraint kinds: (value inside, sub-range / longer pattern, the base itself).
KIND_WEIGHTS = (0.4, 0.3, 0.3)
PLANTED = 0.2
HOT, EXISTING = 0.7, 0.15  # non-planted event values: in a base region, an existing `=` value; else random
THESIS_SUB_BYTES = 50


@attrs.frozen
class Workload:
    p: float
    seed: int
    subscriptions: list  # [(name, Subscription)]
    events: list  # [Event]
    covered_drawn: float  # share of constraints the generator drew as covered
    planted: int
    base: dict  # key -> base ranges or patterns


def _word(rnd: random.Random, n: int) -> str:
    return "".join(rnd.choice(ALPHABET) for _ in range(n))


def _number(type_: str, x: float):
    return int(x) if type_ == "int" else round(x, 2)


class _Attr(ABC):
    """One attribute's value draws: what numeric and string attributes
    share (the `=` values stated, planted and near-miss event values)."""

    def __init__(self, key) -> None:
        self.key = key
        self.type = key[1]
        self.used: set = set()  # uncovered `=` values, kept distinct
        self.eq_values: list = []  # every `=` value stated, for event draws

    def equality(self, v, region) -> tuple[list[Constraint], tuple]:
        """`= v`, with its planting spec (region None: uncovered); v joins the values events may take."""
        self.eq_values.append(v)
        return [Constraint(self.key[0], self.type, "=", v)], ("eq", v, region)

    def constraint(self, rnd, covered: bool) -> tuple[list[Constraint], tuple]:
        """The constraints on this attribute and a spec for planting."""
        return self.covered(rnd) if covered else self.uncovered(rnd)

    @property
    @abstractmethod
    def base(self) -> list:
        """The base ranges (numeric) or patterns (string), each a region."""

    def covered(self, rnd) -> tuple[list[Constraint], tuple]:
        """A constraint inside one of the base ranges or patterns, and its
        spec: by KIND_WEIGHTS, `=` a value in it, a narrower range or
        pattern inside it, or the base range or pattern itself."""
        region = rnd.randrange(len(self.base))
        kind = rnd.choices(range(3), KIND_WEIGHTS)[0]
        if kind == 0:
            return self.equality(self.in_region(rnd, region), region)
        return self.ranged(rnd, region, narrower=kind == 1)

    @abstractmethod
    def ranged(self, rnd, region: int, narrower: bool) -> tuple[list[Constraint], tuple]:
        """Base range or pattern `region` as constraints, or a narrower one inside it; and its spec."""

    def uncovered(self, rnd) -> tuple[list[Constraint], tuple]:
        """A constraint outside every base range or pattern, and its spec:
        `=` a value no other uncovered constraint on the attribute states."""
        while True:
            v = self.outside(rnd)
            if v not in self.used:
                self.used.add(v)
                return self.equality(v, None)

    @abstractmethod
    def outside(self, rnd):
        """A value in no base range, or under no base pattern."""

    @abstractmethod
    def in_region(self, rnd, region: int):
        """A value in base range or pattern `region`."""

    @abstractmethod
    def anywhere(self, rnd):
        """A value drawn from the whole domain."""

    @abstractmethod
    def satisfying(self, rnd, spec):
        """A value satisfying a covered range or pattern spec."""

    def witness(self, rnd, spec):
        """A value satisfying the planted spec."""
        if spec[0] == "eq":
            return spec[1]
        return self.satisfying(rnd, spec)

    def near(self, rnd, spec):
        """A value of a near-miss event: in the base range or pattern of the
        subscription's constraint, or its `=` value if it is uncovered."""
        u = rnd.random()
        if u < HOT:
            region = spec[-1]
            if region is None:
                return spec[1]
            return self.in_region(rnd, region)
        if u < HOT + EXISTING and self.eq_values:
            return rnd.choice(self.eq_values)
        return self.anywhere(rnd)


class _NumericAttr(_Attr):
    """A numeric attribute: two base ranges."""

    def __init__(self, key, shape: random.Random) -> None:
        super().__init__(key)
        d = DOMAIN[self.type]
        width = d * RANGE_SHARE
        lo1 = shape.uniform(0.05 * d, 0.40 * d)
        lo2 = shape.uniform(0.55 * d, 0.90 * d)
        self.ranges = [(_number(self.type, lo), _number(self.type, lo + width)) for lo in (lo1, lo2)]

    @property
    def base(self) -> list:
        return self.ranges

    def inside(self, rnd, lo, hi):
        if self.type == "int":
            return rnd.randint(lo, hi)
        return min(max(round(rnd.uniform(lo, hi), 2), lo), hi)

    def outside(self, rnd):
        d = DOMAIN[self.type]
        while True:
            v = _number(self.type, rnd.uniform(0, d))
            if all(not lo <= v <= hi for lo, hi in self.ranges):
                return v

    def ranged(self, rnd, region: int, narrower: bool) -> tuple[list[Constraint], tuple]:
        name, type_ = self.key
        lo, hi = self.ranges[region]
        if narrower:
            while True:
                a, b = sorted((self.inside(rnd, lo, hi), self.inside(rnd, lo, hi)))
                if a < b:
                    break
            lo, hi = a, b
        return [Constraint(name, type_, ">=", lo), Constraint(name, type_, "<=", hi)], ("range", lo, hi, region)

    def satisfying(self, rnd, spec):
        return self.inside(rnd, spec[1], spec[2])

    def in_region(self, rnd, region: int):
        return self.inside(rnd, *self.ranges[region])

    def anywhere(self, rnd):
        return _number(self.type, rnd.uniform(0, DOMAIN[self.type]))


class _StringAttr(_Attr):
    """A string attribute: two base patterns, a prefix and a suffix."""

    def __init__(self, key, shape: random.Random) -> None:
        super().__init__(key)
        first = shape.sample(ALPHABET, 2)  # the prefix and the suffix start differently
        self.patterns = [("prefix", first[0] + shape.choice(ALPHABET)), ("suffix", shape.choice(ALPHABET) + first[1])]

    @property
    def base(self) -> list:
        return self.patterns

    def plain(self, s: str) -> bool:
        (_, p), (_, x) = self.patterns
        return not s.startswith(p) and not s.endswith(x)

    def under(self, rnd, op, w, n=STRING_LEN):
        fill = _word(rnd, n - len(w))
        return w + fill if op == "prefix" else fill + w

    def ranged(self, rnd, region: int, narrower: bool) -> tuple[list[Constraint], tuple]:
        name, type_ = self.key
        op, w = self.patterns[region]
        if narrower:
            w = self.under(rnd, op, w, rnd.randint(3, 5))
        return [Constraint(name, type_, op, w)], (op, w, region)

    def outside(self, rnd):
        while True:
            v = _word(rnd, STRING_LEN)
            if self.plain(v):
                return v

    def satisfying(self, rnd, spec):
        return self.under(rnd, spec[0], spec[1])

    def in_region(self, rnd, region: int):
        return self.under(rnd, *self.patterns[region])

    def anywhere(self, rnd):
        return _word(rnd, STRING_LEN)


def _attribute(key, shape: random.Random) -> _NumericAttr | _StringAttr:
    """The attribute's base ranges (numeric) or patterns (string), drawn from `shape`."""
    return _NumericAttr(key, shape) if key[1] in DOMAIN else _StringAttr(key, shape)


def generate(p: float, subscriptions: int = 1000, events: int = 2000, seed: int = 1) -> Workload:
    """Seed 000's Table 5-2 workload at covering probability p (module docstring)."""
    shape = random.Random(f"subsum-summaries:{seed}:shape")
    values = random.Random(f"subsum-summaries:{seed}:{p!r}:values")
    attrs_ = {key: _attribute(key, shape) for key in SCHEMA}
    subs, specs, covered = [], [], 0
    for j in range(subscriptions):
        keys = sorted(shape.sample(NUMERIC, NUMERIC_PER_SUB) + shape.sample(STRINGS, STRING_PER_SUB))
        coins = [shape.random() for _ in keys]  # p-independent: covered sets nest as p grows
        constraints, spec = [], {}
        for key, u in zip(keys, coins):
            cs, s = attrs_[key].constraint(values, u < p)
            constraints += cs
            spec[key] = s
            covered += u < p
        subs.append((f"s{j}", Subscription(frozenset(constraints))))
        specs.append(spec)
    rnd = random.Random(f"subsum-summaries:{seed}:{p!r}:events")
    out, planted = [], 0
    for _ in range(events):
        spec = rnd.choice(specs) if specs else {}
        if rnd.random() < PLANTED:
            planted += 1
            attrs_list = [Attribute(k[0], k[1], attrs_[k].witness(rnd, s)) for k, s in spec.items()]
        else:
            attrs_list = [Attribute(k[0], k[1], attrs_[k].near(rnd, s)) for k, s in spec.items()]
        out.append(Event(tuple(attrs_list)))
    base = {f"{k[0]}:{k[1]}": a.base for k, a in attrs_.items()}
    total = subscriptions * (NUMERIC_PER_SUB + STRING_PER_SUB)
    return Workload(p, seed, subs, out, covered / total if total else 0.0, planted, base)
