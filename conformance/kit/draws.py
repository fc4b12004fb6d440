"""The generated workloads of `subsum conform matching` (spec/11-plugins.md
DEF-PLUG-4): workload i is drawn from a generator seeded by (seed, i) alone,
so a longer run extends a shorter one, `--only i` draws exactly workload i,
and neither the Python version nor the Hypothesis version nor the modules
loaded can move a draw. Every draw respects the declared profile
(DEF-PLUG-7).

They are built to find bugs, as the model's strategies are: names from a
small pool so constraints and attributes collide; boundary numbers (zero,
±1, the 64-bit limits) and each constraint's own value and neighbors;
strings over a tiny alphabet, plus the hostile one; wildcard patterns whose
parts overlap; events planted from a subscription so that they often match.

>>> a, b = draw_workload(3, 7, Profile()), draw_workload(3, 7, Profile())
>>> a == b and a != draw_workload(3, 8, Profile())
True
"""

from __future__ import annotations

import math
import random

from subsum.conformance.kit.profile import BIG_INT, Profile, features_of
from subsum.core.types import INT_MAX, INT_MIN, Attribute, Constraint, Event, Subscription

SEED_PREFIX = "subsum-conform-matching"

#: the characters a hostile string is made of, and why each is there (spec/11-plugins.md DEF-PLUG-4)
HOSTILE_CHARACTERS = {
    '"': "JSON's string quote", "\\": "JSON's and SQL's escape", "\n": "a line break inside one JSONL line", "\r": "CR of CRLF",
    "\x00": "C's string end", "%": "SQL LIKE's any-run", "_": "SQL LIKE's any-one", "*": "a glob (and the wildcard's own star)",
    "?": "a glob's any-one", "$": "shell and template variables (PADRES's `$S$`)", "'": "SQL's and shells' quote",
    "[": "glob and regex classes", "]": "glob and regex classes", ",": "list separators in filter syntaxes",
    "(": "grouping", ")": "grouping", "{": "JSON and template braces", "}": "JSON and template braces",
    "=": "an operator inside a value", "<": "an operator inside a value", ">": "an operator inside a value",
    "!": "negation", "&": "conjunction", "|": "disjunction", ";": "a statement end", ":": "key-value separators",
    "#": "a comment start", ".": "regex's any-one", "^": "regex anchor", "+": "regex repetition", " ": "a token separator",
    "\t": "a token separator", "é": "non-ASCII (two UTF-8 bytes)", "\u2028": "a line separator to JavaScript",
    "\ufeff": "a byte-order mark", "\U0001F600": "an astral character (a UTF-16 surrogate pair)",
}
HOSTILE = "".join(HOSTILE_CHARACTERS)
PLAIN_LETTERS = "ab"

SMALL_INTS = (0, 1, -1, 2, -2, 3, 5, 10)
INT_LIMITS = (INT_MIN, INT_MIN + 1, INT_MAX - 1, INT_MAX)
FLOATS = (0.0, 0.5, 1.0, -1.0, 1.5, -0.5, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308)
FAMILIES = {"mixed": ("a", "b", "price", "symbol"), "strings": ("s", "t"), "numbers": ("i", "f"), "hostile": ("s", "t")}
FAMILY_TYPES = {"mixed": ("int", "float", "string", "bool"), "strings": ("string",), "numbers": ("int", "float"),
                "hostile": ("string",)}


def rng_for(seed: int, i: int) -> random.Random:
    """Workload i's generator: seeded by a string, which Python hashes the same way on every platform."""
    return random.Random(f"{SEED_PREFIX}:{seed}:{i}")


def draw_workload(seed: int, i: int, profile: Profile) -> tuple[list, list, list[bool]]:
    """Workload i of `seed`: (subscriptions as (id, Subscription), events, forms), within `profile`."""
    rng = rng_for(seed, i)
    families = [f for f in FAMILIES if usable(f, profile)]
    family = rng.choice(families)
    draw = Drawer(rng, profile, family)
    subscriptions = [(f"s{k}", draw.subscription()) for k in range(rng.randint(1, 6))]
    events = [draw.event([s for _, s in subscriptions]) for _ in range(rng.randint(1, 6))]
    forms = [True] * len(subscriptions) if "filter-text" in profile.features else [rng.random() < 0.5 for _ in subscriptions]
    workload = (subscriptions, events, forms)
    assert profile.admits(features_of(*workload)), f"workload {i} of seed {seed} uses what the profile leaves out"
    return workload


def usable(family: str, profile: Profile) -> bool:
    if family == "hostile" and "hostile-strings" in profile.features:
        return False
    return any(t in profile.usable_types() for t in FAMILY_TYPES[family])


class Drawer:
    """The draws of one workload: a type per attribute name (two types for a name only under
    `mixed-types`), then constraints, subscriptions and events."""

    def __init__(self, rng: random.Random, profile: Profile, family: str) -> None:
        self.rng, self.profile, self.family = rng, profile, family
        self.types = tuple(t for t in FAMILY_TYPES[family] if t in profile.usable_types())
        self.names = FAMILIES[family]
        self.type_of = {name: rng.choice(self.types) for name in self.names}
        self.mixed = "mixed-types" not in profile.features and len(profile.usable_types()) > 1
        self.letters = PLAIN_LETTERS + (HOSTILE if family == "hostile" else "")

    def name_and_type(self) -> tuple[str, str]:
        name = self.rng.choice(self.names)
        if self.mixed and self.rng.random() < 0.15:
            return name, self.rng.choice(self.profile.usable_types())
        return name, self.type_of[name]

    def subscription(self) -> Subscription:
        constraints: list[Constraint] = []
        for _ in range(self.rng.choice((0, 1, 1, 2, 2, 3))):
            name, type_ = self.name_and_type()
            if any(c.name == name for c in constraints):
                if "repeated-names" in self.profile.features or self.rng.random() < 0.5:
                    continue
                type_ = next(c.type for c in constraints if c.name == name)  # a range on one name, say
            constraints.append(self.constraint(name, type_))
        return Subscription(frozenset(constraints))

    def constraint(self, name: str, type_: str) -> Constraint:
        op = self.rng.choice(self.profile.ops_for(type_))
        if op == "any":
            return Constraint(name, type_, "any")
        if op == "wildcard":
            return Constraint(name, type_, op, self.pattern())
        return Constraint(name, type_, op, self.value(type_))

    def value(self, type_: str):
        rng = self.rng
        if type_ == "bool":
            return rng.random() < 0.5
        if type_ == "string":
            return self.text()
        if type_ == "int":
            big = "big-ints" not in self.profile.features
            roll = rng.random()
            if roll < 0.5:
                return rng.choice(SMALL_INTS)
            if roll < 0.7:
                return rng.randint(-20, 20)
            if roll < 0.85 and big:
                return rng.choice(INT_LIMITS)
            return rng.randint(INT_MIN, INT_MAX) if big else rng.randint(-BIG_INT, BIG_INT)
        roll = rng.random()
        if roll < 0.5:
            return rng.choice(FLOATS)
        return round(rng.uniform(-4, 4), 1) if roll < 0.8 else rng.uniform(-1e6, 1e6)

    def text(self, letters: str | None = None, longest: int = 4) -> str:
        letters = letters or self.letters
        return "".join(self.rng.choice(letters) for _ in range(self.rng.randint(0, longest)))

    def pattern(self) -> str:
        """A wildcard pattern `l*r`; a third of them cut from one word with overlapping parts (`ab*ba`)."""
        no_star = self.letters.replace("*", "")
        if self.rng.random() < 0.33:
            word = self.text(no_star, 4) or "a"
            cut = self.rng.randint(0, len(word))
            back = self.rng.randint(0, cut)
            return word[:cut] + "*" + word[back:]
        return self.text(no_star, 3) + "*" + self.text(no_star, 3)

    def event(self, subscriptions: list[Subscription]) -> Event:
        values: dict[str, Attribute] = {}
        if subscriptions and self.rng.random() < 0.7:
            for c in sorted(self.rng.choice(subscriptions).constraints, key=lambda c: (c.name, c.type, c.op, str(c.value))):
                if c.name not in values and self.rng.random() < 0.9:  # now and then the attribute is missing
                    values[c.name] = Attribute(c.name, c.type, self.near(c))
        for _ in range(self.rng.randint(0, 2)):
            name, type_ = self.name_and_type()
            values.setdefault(name, Attribute(name, type_, self.value(type_)))
        return Event(tuple(values.values()))

    def near(self, c: Constraint):
        """A value for the constraint's attribute that often matches it, or just misses."""
        rng, value = self.rng, c.value
        if value is None:
            return self.value(c.type)
        if isinstance(value, bool):
            return value if rng.random() < 0.7 else not value
        if isinstance(value, int):
            out = rng.choice((value - 1, value, value, value + 1))
            return max(INT_MIN, min(INT_MAX, out)) if "big-ints" not in self.profile.features else max(-BIG_INT, min(BIG_INT, out))
        if isinstance(value, float):
            near = rng.choice((value, value, math.nextafter(value, math.inf), math.nextafter(value, -math.inf), value + 0.5))
            return near if math.isfinite(near) else value
        return self.near_text(c.op, value)

    def near_text(self, op: str, value: str) -> str:
        no_star = self.letters.replace("*", "") if op == "wildcard" else self.letters
        extra = self.text(no_star, 2)
        if op == "wildcard":
            left, _, right = value.partition("*")
            return self.rng.choice((left + extra + right, left + right, (left + right)[1:], left, right))
        return self.rng.choice({"prefix": (value + extra, value, value[:-1]), "suffix": (extra + value, value, value[1:]),
                                "contains": (extra + value + self.text(no_star, 2), value, value[1:])}.get(op, (value, value + extra)))
