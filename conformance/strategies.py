"""Hypothesis strategies for the data model.

They are built to find bugs, not to look realistic:
- names come from a small pool, so constraints and attributes collide;
- strings come from a tiny alphabet, so prefixes, suffixes and substrings
  overlap, plus a few non-ASCII and above-U+2FFFF characters;
- numbers favour boundaries: 64-bit limits, zero, ±1, and the constraint's
  own value and its neighbors (`near`);
- `planted_event` builds an event from a subscription so that events often match.
"""

from __future__ import annotations

import math
from typing import cast

from hypothesis import strategies as st

from subsum.core.types import INT_MAX, INT_MIN, OPS_BY_TYPE, TYPES, Attribute, Constraint, Event, Subscription

NAMES = ("a", "b", "price", "symbol")
ALPHABET = "ab*"
EXOTIC = "é\U0001F600\U00030001"

types = st.sampled_from(TYPES)
names = st.sampled_from(NAMES)

_int_boundaries = st.sampled_from([INT_MIN, INT_MIN + 1, -1, 0, 1, INT_MAX - 1, INT_MAX])
ints = st.one_of(_int_boundaries, st.integers(-5, 5), st.integers(INT_MIN, INT_MAX))
_float_boundaries = st.sampled_from([0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308, 0.5])
floats = st.one_of(_float_boundaries, st.floats(-4, 4).map(lambda x: round(x, 1)), st.floats(allow_nan=False, allow_infinity=False))
short_text = st.text(alphabet="ab", max_size=4)
strings = st.one_of(short_text, st.text(alphabet=ALPHABET + EXOTIC, max_size=5))
bools = st.booleans()


def values(type_: str) -> st.SearchStrategy:
    return {"int": ints, "float": floats, "string": strings, "bool": bools}[type_]


patterns = st.builds(lambda l, r: f"{l}*{r}", short_text, short_text)


def constraint_values(type_: str, op: str) -> st.SearchStrategy:
    if op == "any":
        return st.none()
    if op == "wildcard":
        return patterns
    if type_ == "string":
        return short_text if op != "=" else strings
    return values(type_)


@st.composite
def constraints(draw, type_: str | None = None, name: str | None = None, op: str | None = None) -> Constraint:
    type_ = type_ or draw(types)
    op = op or draw(st.sampled_from(OPS_BY_TYPE[type_]))
    return Constraint(
        name=name or draw(names),
        type=type_,
        op=op,
        value=draw(constraint_values(type_, op)),
    )


def subscriptions(max_size: int = 4) -> st.SearchStrategy:
    # Names mostly keep one type, as a schema would, but not always.
    typed = st.one_of(
        st.builds(lambda n: (n, {"a": "int", "b": "float", "price": "float", "symbol": "string"}[n]), names),
        st.tuples(names, types),
    )
    return st.lists(typed.flatmap(lambda nt: constraints(type_=nt[1], name=nt[0])), max_size=max_size).map(
        lambda cs: Subscription(frozenset(cs))
    )


def near(type_: str, value) -> st.SearchStrategy:
    """Values at and around a constraint value: the boundary cases."""
    if type_ == "int":
        return st.sampled_from([v for v in (value - 1, value, value + 1) if INT_MIN <= v <= INT_MAX])
    if type_ == "float":
        around = [math.nextafter(value, -math.inf), value, math.nextafter(value, math.inf)]
        return st.sampled_from([v for v in around if math.isfinite(v)])
    if type_ == "string":
        return st.one_of(st.just(value), st.builds(lambda l, r: l + value + r, short_text, short_text))
    return st.sampled_from([value, not value])


#: Fillers that never make an {a, b} pattern appear again.
_ELSEWHERE = st.text(alphabet="c", min_size=1, max_size=2)


def placed(pattern: str, filler: st.SearchStrategy) -> st.SearchStrategy:
    """A string value with `pattern` as the whole value, at the start only, in the middle only, at the end
    only, or between `filler`s (which may repeat it): each placement drawn on its own, so a prefix, suffix or
    contains constraint meets every case of DEF-DATA-5 (the census's `contains:at-end-only` and the like)."""
    return st.one_of(
        st.just(pattern),
        _ELSEWHERE.map(lambda r: pattern + r),
        st.builds(lambda l, r: l + pattern + r, _ELSEWHERE, _ELSEWHERE),
        _ELSEWHERE.map(lambda l: l + pattern),
        st.builds(lambda l, r: l + pattern + r, filler, filler),
    )


def attribute_value_for(c: Constraint) -> st.SearchStrategy:
    if c.op == "any" or c.value is None:
        return values(c.type)
    if c.op == "wildcard":
        left, right = cast(str, c.value).split("*")
        return st.builds(lambda m: left + m + right, short_text)
    return near(c.type, c.value)


@st.composite
def attributes(draw, name: str | None = None) -> Attribute:
    type_ = draw(types)
    return Attribute(name=name or draw(names), type=type_, value=draw(values(type_)))


@st.composite
def events(draw) -> Event:
    chosen = draw(st.lists(names, unique=True, max_size=len(NAMES)))
    return Event(tuple(draw(attributes(name=n)) for n in chosen))


@st.composite
def planted_event(draw, subscription: Subscription) -> Event:
    """An event built from the subscription's own constraint values and their
    neighbors, plus some unrelated attributes: it matches often, and when it
    does not, it misses narrowly."""
    chosen: dict[str, Attribute] = {}
    for c in sorted(subscription.constraints, key=lambda c: (c.name, c.op, repr(c.value))):
        if c.name not in chosen and draw(st.integers(0, 9)) > 0:
            chosen[c.name] = Attribute(name=c.name, type=c.type, value=draw(attribute_value_for(c)))
    for extra in draw(st.lists(attributes(), max_size=2)):
        chosen.setdefault(extra.name, extra)
    # Sometimes reuse another attribute name as an attribute no subscription mentions.
    if draw(st.booleans()):
        chosen.setdefault("unmentioned", Attribute(name="unmentioned", type="int", value=draw(ints)))
    return Event(tuple(chosen.values()))


def subscription_and_event() -> st.SearchStrategy:
    return subscriptions().flatmap(lambda s: st.tuples(st.just(s), st.one_of(planted_event(s), events())))


# -- workloads for the matching engines ---------------------------------------

def _ids(subscriptions: list[Subscription]) -> list[tuple[str, Subscription]]:
    return [(f"s{i}", s) for i, s in enumerate(subscriptions)]


@st.composite
def batch_for(draw, subscriptions: list[Subscription], max_events: int = 6) -> list[Event]:
    """Events for these subscriptions: half planted from one of them (so
    matches happen), half arbitrary."""
    batch = []
    for _ in range(draw(st.integers(0, max_events))):
        if subscriptions and draw(st.booleans()):
            batch.append(draw(planted_event(draw(st.sampled_from(subscriptions)))))
        else:
            batch.append(draw(events()))
    # Sometimes repeat an event, so that attributes repeat across the batch.
    if batch and draw(st.booleans()):
        batch.append(draw(st.sampled_from(batch)))
    # Sometimes one name carries the type puns across events: bool true, int 1, float 1.0.
    if draw(st.integers(0, 3)) == 0:
        batch.extend(draw(pun_events()))
    return batch


@st.composite
def pun_events(draw) -> list[Event]:
    """Events that give one name the values `true`, `1` and `1.0` (one each,
    in some order): equal in Python, distinct in the data model (DEF-DATA-1)."""
    name = draw(names)
    puns = [Attribute(name, "bool", True), Attribute(name, "int", 1), Attribute(name, "float", 1.0)]
    chosen = draw(st.lists(st.sampled_from(puns), min_size=2, max_size=3, unique=True))
    return [Event((a,)) for a in chosen]


@st.composite
def workloads(draw, max_subscriptions: int = 6, max_events: int = 6):
    """(id, subscription) pairs and a batch of events. Covers every operator,
    boundary values, planted matches, the empty subscription, several
    constraints on one name, and attributes no subscription mentions."""
    subs = draw(st.lists(subscriptions(), max_size=max_subscriptions))
    if draw(st.integers(0, 4)) == 0:
        subs.append(Subscription())
    return _ids(subs), draw(batch_for(subs, max_events))

PATTERN_ALPHABET = "ab"


@st.composite
def string_workloads(draw):
    """String constraints only, on two names, over a two-letter alphabet:
    prefixes, suffixes, substrings and wildcard parts overlap and collide."""
    text = st.text(alphabet=PATTERN_ALPHABET, max_size=4)
    # A wildcard whose parts overlap inside one word (l = w[:i], r = w[j:], j < i):
    # w itself starts with l and ends with r, yet is too short to match.
    overlapping = st.text(alphabet=PATTERN_ALPHABET, min_size=2, max_size=4).flatmap(
        lambda w: st.tuples(st.integers(1, len(w)), st.integers(0, len(w) - 1)).map(lambda ij: f"{w[:max(ij)]}*{w[min(ij):]}"))
    op_value = st.one_of(
        st.tuples(st.sampled_from(["=", "!=", "prefix", "prefix", "suffix", "suffix", "contains", "contains"]), text),
        st.tuples(st.just("wildcard"), st.one_of(st.builds(lambda l, r: f"{l}*{r}", text, text), overlapping)),
        st.tuples(st.just("any"), st.none()),
    )
    constraint = st.builds(lambda n, ov: Constraint(name=n, type="string", op=ov[0], value=ov[1]), st.sampled_from("st"), op_value)
    subscriptions = draw(st.lists(st.lists(constraint, max_size=3).map(lambda cs: Subscription(frozenset(cs))), min_size=1, max_size=8))
    patterns = sorted({c.value for s in subscriptions for c in s.constraints if c.value is not None})
    return _ids(subscriptions), draw(st.lists(string_event(patterns), max_size=8))


def string_event(patterns: list[str]) -> st.SearchStrategy:
    """An event over the names s, t, u whose values are arbitrary, or built
    around a pattern in use (a wildcard's parts filled or squeezed): so every
    pattern lands at the start, in the middle, at the end and as the whole
    value, and wildcard values come exactly len(l) + len(r) long."""
    text = st.text(alphabet=PATTERN_ALPHABET, max_size=3)
    arbitrary = st.text(alphabet=PATTERN_ALPHABET, max_size=7)

    def around(pattern: str) -> st.SearchStrategy:
        if "*" in pattern:
            left, right = pattern.split("*")
            squeezed = [left + right[k:] for k in range(1, min(len(left), len(right)) + 1) if left.endswith(right[:k])]
            return st.one_of(st.builds(lambda m: left + m + right, text), st.sampled_from(squeezed or [left + right]))
        return placed(pattern, text)

    plain, wild = [p for p in patterns if "*" not in p], [p for p in patterns if "*" in p]
    value = st.one_of(arbitrary, *(st.sampled_from(group).flatmap(around) for group in (plain, wild) if group))
    return st.builds(
        lambda d: Event(tuple(Attribute(name=n, type="string", value=v) for n, v in d.items())),
        st.dictionaries(st.sampled_from("stu"), value),
    )


@st.composite
def numeric_workloads(draw):
    """Ordering, equality and inequality constraints on one int and one float
    name, with thresholds drawn from a few values, and events at, just below
    and just above them: the boundaries of every sorted constraint list."""
    base_int = draw(st.sampled_from([INT_MIN, -3, 0, 3, INT_MAX]))
    base_float = draw(st.sampled_from([-1.7976931348623157e308, -0.5, 0.0, 0.5, 1.7976931348623157e308]))
    ops = st.sampled_from(["<", "<=", ">", ">=", "=", "!="])

    def int_constraint(op, delta):
        return Constraint(name="i", type="int", op=op, value=max(INT_MIN, min(INT_MAX, base_int + delta)))

    def float_constraint(op, steps):
        v = base_float
        for _ in range(abs(steps)):
            v = math.nextafter(v, math.inf if steps > 0 else -math.inf)
        return Constraint(name="f", type="float", op=op, value=v if math.isfinite(v) else base_float)

    constraint = st.one_of(
        st.builds(int_constraint, ops, st.integers(-2, 2)),
        st.builds(float_constraint, ops, st.integers(-2, 2)),
    )
    subscriptions = draw(st.lists(st.lists(constraint, min_size=1, max_size=3).map(lambda cs: Subscription(frozenset(cs))), min_size=1, max_size=8))
    thresholds = sorted({c.value for s in subscriptions for c in s.constraints if c.type == "int"}) or [base_int]
    floats_ = sorted({c.value for s in subscriptions for c in s.constraints if c.type == "float"}) or [base_float]
    batch = []
    for _ in range(draw(st.integers(1, 8))):
        attributes_ = []
        if draw(st.integers(0, 5)):
            attributes_.append(Attribute(name="i", type="int", value=draw(st.sampled_from(thresholds).flatmap(lambda v: near("int", v)))))
        if draw(st.integers(0, 5)):
            attributes_.append(Attribute(name="f", type="float", value=draw(st.sampled_from(floats_).flatmap(lambda v: near("float", v)))))
        batch.append(Event(tuple(attributes_)))
    return _ids(subscriptions), batch


# -- workloads for subscription summaries --------------------------------------

def _summary_constraints() -> st.SearchStrategy:
    """One constraint of `summary_subscriptions`, built once (building
    strategies on every draw cost a state machine a third of its time)."""
    small_int = st.integers(-4, 4)
    small_float = st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5])
    text = st.text(alphabet=PATTERN_ALPHABET, max_size=3)
    numeric_op = st.sampled_from(["=", "=", "<", "<=", ">", ">=", "!=", "any"])
    string_op = st.sampled_from(["=", "=", "prefix", "suffix", "contains", "wildcard", "!=", "any"])

    def numeric(name, type_, value_strategy):
        return st.builds(lambda op, v: Constraint(name, type_, op, None if op == "any" else v), numeric_op, value_strategy)

    def string(name):
        def build(op, l, r):
            if op == "any":
                return Constraint(name, "string", "any")
            return Constraint(name, "string", op, f"{l}*{r}" if op == "wildcard" else l)
        return st.builds(build, string_op, text, text)

    boolean = st.builds(lambda op, v: Constraint("b", "bool", op, None if op == "any" else v),
                        st.sampled_from(["=", "!=", "any"]), st.booleans())
    return st.one_of(numeric("x", "int", small_int), numeric("y", "float", small_float), string("s"), string("t"), boolean)


SUMMARY_CONSTRAINTS = _summary_constraints()


@st.composite
def summary_subscriptions(draw) -> Subscription:
    """Subscriptions whose constraints overlap, touch and cover one another:
    small int and float ranges (so intervals meet at shared endpoints), short
    strings over {a, b} (so prefixes, suffixes and substrings cover), bools."""
    return Subscription(frozenset(draw(st.lists(SUMMARY_CONSTRAINTS, max_size=4))))


@st.composite
def summary_event_for(draw, subscription: Subscription) -> Event:
    if draw(st.booleans()):
        return draw(planted_event(subscription))
    values_ = {
        "x": ("int", st.integers(-5, 5)),
        "y": ("float", st.sampled_from([-1.5, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0])),
        "s": ("string", st.text(alphabet=PATTERN_ALPHABET, max_size=5)),
        "t": ("string", st.text(alphabet=PATTERN_ALPHABET, max_size=5)),
        "b": ("bool", st.booleans()),
    }
    chosen = draw(st.lists(st.sampled_from(sorted(values_)), unique=True))
    return Event(tuple(Attribute(n, values_[n][0], draw(values_[n][1])) for n in chosen))


@st.composite
def summary_workloads(draw, min_subscriptions: int = 0, max_subscriptions: int = 8, max_events: int = 8):
    """(id, subscription) pairs over the names x:int, y:float, s, t:string
    and b:bool, and events, half planted from a subscription."""
    subs = draw(st.lists(summary_subscriptions(), min_size=min_subscriptions, max_size=max_subscriptions))
    batch = []
    for _ in range(draw(st.integers(0, max_events))):
        source = draw(st.sampled_from(subs)) if subs else Subscription()
        batch.append(draw(summary_event_for(source)))
    return _ids(subs), batch


@st.composite
def exact_summary_workloads(draw):
    """Subscriptions whose summary generalizes nothing (DEF-SUM-9): one
    constraint per name, numeric ones `=`, string ones of one operator per
    name with values no other value covers (all strings of one length under
    `=`, or prefixes of one length), and events over the same values."""
    length = draw(st.integers(1, 3))
    words = st.text(alphabet=PATTERN_ALPHABET, min_size=length, max_size=length)
    string_op = draw(st.sampled_from(["=", "prefix", "suffix"]))

    def one():
        return st.builds(
            lambda x, s, use_x, use_s: Subscription(frozenset(
                ([Constraint("x", "int", "=", x)] if use_x else [])
                + ([Constraint("s", "string", string_op, s)] if use_s else [])
            )),
            st.integers(-3, 3), words, st.booleans(), st.booleans(),
        )

    subs = draw(st.lists(one(), min_size=1, max_size=8))
    event = st.builds(
        lambda x, s, extra: Event(tuple(
            ([Attribute("x", "int", x)] if x is not None else [])
            + ([Attribute("s", "string", extra + s if string_op == "suffix" else s + extra)] if s is not None else [])
        )),
        st.one_of(st.none(), st.integers(-4, 4)), st.one_of(st.none(), words),
        st.text(alphabet=PATTERN_ALPHABET, max_size=2) if string_op != "=" else st.just(""),
    )
    return _ids(subs), draw(st.lists(event, min_size=1, max_size=8))
