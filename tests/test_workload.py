"""Seed 001's workload generator (subsum/bench/matching/workload.py) against the
rules its docstring and benchmarks/README.md state: the shape of names,
strings, constraints and events, the planted matches, the witnesses, and the
parameter bounds. The benchmarks' figures rest on this shape."""

import math
import re
from collections import Counter

import numpy as np
import pytest

from subsum.core.types import Attribute, Constraint, Event, Subscription
from subsum.impl.matching.columnar.batch import DTYPES
from subsum.bench.matching.workload import HIGH, LOW, OPS, STRING_TABLE_SIZE, Params, _Generator, generate
from subsum.model import semantics

SMALL = dict(events=80, attrs_low=3, attrs_high=5, names=12, subscriptions=30, cons_low=1, cons_high=4)


def holds(c: Constraint, value) -> bool:
    return semantics.matches(Subscription(frozenset({c})), Event((Attribute(name=c.name, type=c.type, value=value),)))


def test_names_and_string_table_have_the_stated_shape():
    g = _Generator(Params(names=300, seed=3))
    assert len(g.names) == len(set(g.names)) == 300
    assert all(re.fullmatch("[a-z]{6}", n) for n in g.names)
    assert len(g.table) == len(set(g.table)) == STRING_TABLE_SIZE
    assert all(re.fullmatch("[a-z]{8}", s) for s in g.table)


def test_types_follow_the_weights_40_30_20_10():
    g = _Generator(Params(names=4000, attrs_low=0, attrs_high=0, cons_low=0, cons_high=0, seed=5))
    share = {t: n / 4000 for t, n in Counter(g.types).items()}
    for t, w in (("int", 0.4), ("float", 0.3), ("string", 0.2), ("bool", 0.1)):
        assert abs(share[t] - w) < 0.03, (t, share[t])


def test_random_values_cover_their_ranges():
    g = _Generator(Params(seed=9))
    ints = [g.value("int") for _ in range(3000)]
    assert min(ints) == LOW and max(ints) == HIGH
    floats = [g.value("float") for _ in range(3000)]
    assert all(LOW <= f <= HIGH and type(f) is float for f in floats) and min(floats) < -99 and max(floats) > 99
    bools = Counter(g.value("bool") for _ in range(4000))
    assert set(bools) == {True, False} and abs(bools[True] / 4000 - 0.5) < 0.03
    assert {g.value("string") for _ in range(3000)} == set(g.table)


def test_constraints_use_the_stated_operators_and_pattern_lengths():
    p = Params(names=40, seed=11, attrs_low=1, attrs_high=2, cons_low=1, cons_high=2)
    g = _Generator(p)
    seen: dict = {}
    for _ in range(6000):
        i = g.rnd.randrange(p.names)
        c = Constraint(g.names[i], *g.constraint(i))
        assert c.name == g.names[i] and c.type == g.types[i] and c.op in OPS[c.type]
        seen.setdefault((c.type, c.op), set())
        if c.type == "string" and c.op in ("prefix", "suffix", "contains"):
            words = [w for w in g.table if {"prefix": w.startswith, "suffix": w.endswith, "contains": w.__contains__}[c.op](c.value)]
            assert words, c
            seen[(c.type, c.op)].add(len(c.value))
        elif c.op == "wildcard":
            left, right = c.value.split("*")
            assert c.value.count("*") == 1 and any(w.startswith(left) and w.endswith(right) for w in g.table)
            seen[(c.type, c.op)].add((len(left), len(right)))
        elif c.type == "int":
            assert LOW <= c.value <= HIGH
    assert set(seen) == {(t, op) for t, ops in OPS.items() for op in ops}
    for op in ("prefix", "suffix", "contains"):
        assert seen[("string", op)] == {1, 2, 3}
    assert seen[("string", "wildcard")] == {(1, 1), (1, 2), (2, 1), (2, 2)}


def test_contains_patterns_are_cut_from_every_position():
    g = _Generator(Params(names=40, seed=2))
    g.table = ["abcdefgh"]  # one word of distinct letters: a pattern's position is its start
    strings = [i for i, t in enumerate(g.types) if t == "string"]
    starts: dict[int, set[int]] = {1: set(), 2: set(), 3: set()}
    for _ in range(6000):
        k = g.rnd.choice(strings)
        c = Constraint(g.names[k], *g.constraint(k))
        if c.op == "contains":
            starts[len(c.value)].add("abcdefgh".index(c.value))
    assert starts == {k: set(range(0, 9 - k)) for k in (1, 2, 3)}


@pytest.mark.parametrize("type_, op, value", [
    ("int", ">", 98), ("int", ">=", 99), ("int", "<", -98), ("int", "<=", -99), ("int", "=", 7),
    ("int", ">", HIGH), ("int", "<", LOW),
])
def test_int_witnesses_cover_exactly_the_satisfying_values_in_range(type_, op, value):
    g = _Generator(Params(seed=1))
    c = Constraint(name="n", type=type_, op=op, value=value)
    drawn = {g.witness(c.type, c.op, c.value) for _ in range(400)}
    wanted = {v for v in range(LOW - 1, HIGH + 2) if holds(c, v) and LOW <= v <= HIGH} or {value + 1 if op == ">" else value - 1}
    assert drawn == wanted


@pytest.mark.parametrize("op, value", [(">", 50.0), (">=", 50.0), ("<", -50.0), ("<=", -50.0), (">", 100.0), ("<", -100.0),
                                       (">=", 100.0), ("<=", -100.0)])
def test_float_witnesses_satisfy_and_stay_near_the_range(op, value):
    g = _Generator(Params(seed=4))
    c = Constraint(name="n", type="float", op=op, value=value)
    drawn = [g.witness(c.type, c.op, c.value) for _ in range(300)]
    assert all(holds(c, x) for x in drawn)
    if abs(value) == 100.0 and op in (">", "<"):  # nothing is left inside the range: the next float out
        assert set(drawn) == {math.nextafter(value, math.inf if op == ">" else -math.inf)}
    elif abs(value) == 100.0:  # the bound itself is the one value left
        assert set(drawn) == {value}
    else:
        assert all(LOW <= x <= HIGH for x in drawn) and len(set(drawn)) > 250


@pytest.mark.parametrize("op, value", [("prefix", "ab"), ("suffix", "xyz"), ("contains", "q"), ("wildcard", "ab*c"),
                                       ("=", "hello")])
def test_string_witnesses_satisfy_and_have_the_stated_lengths(op, value):
    g = _Generator(Params(seed=6))
    c = Constraint(name="n", type="string", op=op, value=value)
    drawn = [g.witness(c.type, c.op, c.value) for _ in range(500)]
    assert all(holds(c, s) for s in drawn)
    lengths = {len(s) for s in drawn}
    expected = {"prefix": {8}, "suffix": {8}, "=": {5}, "contains": set(range(1, 8)), "wildcard": set(range(3, 7))}[op]
    assert lengths == expected


@pytest.mark.parametrize("op, value", [("=", True), ("=", False), ("!=", True), ("!=", False)])
def test_bool_witnesses(op, value):
    c = Constraint(name="n", type="bool", op=op, value=value)
    assert _Generator(Params(seed=1)).witness(c.type, c.op, c.value) is ((op == "=") == value)


def test_events_have_their_attribute_count_and_the_schema_types():
    p = Params(**SMALL, seed=21)
    w = generate(p)
    assert w.params is p and w.planted == 0 and w.batch.n_events == p.events
    assert w.batch.names == _Generator(p).names and len(w.batch.names) == p.names
    for t, column in w.batch.columns.items():
        assert (column.event.dtype, column.name.dtype, column.value.dtype) == (np.int64, np.int64, np.dtype(DTYPES[t]))
    events = w.events()
    assert len(events) == p.events and w.events(7) == events[:7] and w.events(0) == []
    counts = Counter(len(e.attributes) for e in events)
    assert set(counts) == {3, 4, 5}
    types = dict(zip(w.batch.names, _Generator(p).types))
    assert all(a.type == types[a.name] for e in events for a in e.attributes)
    for _sid, s in w.subscriptions:
        assert 1 <= len(s.constraints) <= 4 and len({c.name for c in s.constraints}) == len(s.constraints)


def test_fixed_attribute_count_is_exact_and_empty_columns_keep_their_dtypes():
    p = Params(events=50, attrs_low=2, attrs_high=2, names=2, subscriptions=0, cons_low=0, cons_high=0, seed=1)
    w = generate(p)
    assert all(len(e.attributes) == 2 for e in w.events())
    one = generate(Params(events=5, attrs_low=1, attrs_high=1, names=1, subscriptions=0, cons_low=0, cons_high=0))
    for t, column in one.batch.columns.items():
        assert (column.event.dtype, column.name.dtype, column.value.dtype) == (np.int64, np.int64, np.dtype(DTYPES[t]))


def test_planting_every_event_or_none():
    every = generate(Params(**SMALL, planted_rate=1.0, seed=3))
    assert every.planted == SMALL["events"]
    fixed = generate(Params(**{**SMALL, "attrs_low": 5, "attrs_high": 5}, planted_rate=1.0, seed=3))
    assert all(len(e.attributes) == 5 for e in fixed.events())  # topped up to the count, never past it
    lines = semantics.match_batch(every.subscriptions, every.events())
    assert all(lines)
    none = generate(Params(**SMALL, planted_rate=0.0, seed=3))
    assert none.planted == 0
    no_subs = generate(Params(**{**SMALL, "subscriptions": 0}, planted_rate=0.5, seed=3))
    assert no_subs.planted == 0 and no_subs.subscriptions == []


def test_the_same_seed_gives_the_same_workload_and_another_seed_another():
    a, b = generate(Params(**SMALL, seed=8)), generate(Params(**SMALL, seed=8))
    assert a.subscriptions == b.subscriptions and a.events() == b.events()
    assert generate(Params(**SMALL, seed=9)).events() != a.events()


@pytest.mark.parametrize("good", [
    dict(events=0, names=0, subscriptions=0, attrs_low=0, attrs_high=0, cons_low=0, cons_high=0),
    dict(names=5, attrs_low=5, attrs_high=5, cons_low=5, cons_high=5),
    dict(planted_rate=0.0), dict(planted_rate=1.0),
])
def test_parameter_bounds_are_inclusive(good):
    Params(**good)


@pytest.mark.parametrize("bad", [
    dict(events=-1), dict(names=-1), dict(subscriptions=-1),
    dict(names=5, attrs_low=0, attrs_high=6), dict(attrs_low=-1), dict(attrs_low=4, attrs_high=3),
    dict(names=5, cons_low=0, cons_high=6), dict(cons_low=-1), dict(cons_low=4, cons_high=3),
    dict(planted_rate=-0.1), dict(planted_rate=1.01), dict(planted_rate=math.nan),
])
def test_parameters_out_of_bounds_are_refused(bad):
    with pytest.raises(ValueError):
        Params(**bad)
