"""What an engine under test declares it does not support (spec/11-plugins.md
DEF-PLUG-7): operators, types and features, given to `subsum conform` as
`--unsupported wildcard,bool,hostile-strings` or as a TOML profile file.
The kit never sends a workload that uses any of them, and every report and
replay says what was left out, so that a pass is never over-claimed.

>>> p = parse_unsupported("wildcard,bool,hostile-strings")
>>> p.headline().split(" / ")[1]
'not checked: bool; wildcard; hostile-strings'
>>> p.admits(features_of([("s0", Subscription(frozenset({Constraint("s", "string", "=", "ab")})))], [], [True]))
True
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Iterable

import attrs

from subsum.conformance.kit.processes import ConformError
from subsum.core.types import OPS_BY_TYPE, TYPES, Constraint, Event, Subscription

#: every operator, in the order reports list them
OPERATORS = ("=", "!=", "<", "<=", ">", ">=", "prefix", "suffix", "contains", "wildcard", "any")
#: words for the operators that are awkward in a shell
OPERATOR_WORDS = {"eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
#: the features a workload may use, and what each means (spec/11-plugins.md DEF-PLUG-7)
FEATURES = {
    "mixed-types": "one attribute name with two types in one workload (a float constraint against an int value, say)",
    "repeated-names": "two or more constraints on one attribute name in one subscription (x > 3 and x < 5)",
    "filter-text": "subscriptions written as `filter` text (without it, only the `constraints` array form)",
    "big-ints": "ints beyond ±2^53, which a double cannot hold exactly",
    "hostile-strings": "characters other than ASCII letters and digits in string values and patterns (the hostile alphabet)",
}
#: the characters a string may hold when `hostile-strings` is not supported
PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
BIG_INT = 2**53


@attrs.frozen
class Profile:
    """The operators, types and features left out of a run (all empty: everything is checked)."""

    operators: frozenset[str] = frozenset()
    types: frozenset[str] = frozenset()
    features: frozenset[str] = frozenset()
    source: str | None = attrs.field(default=None, eq=False)  # the profile file it was read from, if any

    def allows_op(self, type_: str, op: str) -> bool:
        return type_ not in self.types and op not in self.operators

    def ops_for(self, type_: str) -> tuple[str, ...]:
        return tuple(op for op in OPS_BY_TYPE[type_] if self.allows_op(type_, op))

    def usable_types(self) -> tuple[str, ...]:
        """The types a workload may use: supported, with at least one supported operator."""
        return tuple(t for t in TYPES if t not in self.types and self.ops_for(t))

    def exercised(self) -> "Used":
        """What the matching generators can send within the profile: the usable types, their operators left,
        and the features a workload of those types can use (big-ints needs int, hostile-strings needs string,
        mixed-types two types)."""
        types = self.usable_types()
        features = {f for f in FEATURES if f not in self.features}
        needs = {"big-ints": "int" in types, "hostile-strings": "string" in types, "mixed-types": len(types) > 1}
        return Used(frozenset(op for t in types for op in self.ops_for(t)), frozenset(types),
                    frozenset(f for f in features if needs.get(f, True)))

    def as_option(self) -> str:
        """The `--unsupported` value that declares this profile ("" for none), operators as words."""
        words = {op: word for word, op in OPERATOR_WORDS.items()}
        _, left_out = self.split(Used(frozenset(OPERATORS), frozenset(TYPES), frozenset(FEATURES)))
        return ",".join([*left_out["types"], *(words.get(o, o) for o in left_out["operators"]), *left_out["features"]])

    def admits(self, used: "Used") -> bool:
        """Whether a workload that uses `used` may be sent."""
        return not (used.operators & self.operators or used.types & self.types or used.features & self.features)

    def to_json(self, exercised: "Used | None" = None) -> dict:
        checked, left_out = self.split(exercised)
        return {"checked": checked, "not_checked": left_out}

    def split(self, exercised: "Used | None" = None) -> tuple[dict, dict]:
        """(checked, not checked), each as {"types", "operators", "features"} in report order. Checked is what the
        run can send (`exercised`; by default what the matching generators can, `exercised()`) and the profile
        does not leave out."""
        run = exercised if exercised is not None else self.exercised()

        def sends(kind: str, name: str) -> bool:
            return name in getattr(run, kind)

        def part(keep: bool) -> dict:
            return {"types": [t for t in TYPES if (t not in self.types and sends("types", t)) == keep],
                    "operators": [o for o in OPERATORS if (o not in self.operators and sends("operators", o)) == keep],
                    "features": [f for f in FEATURES if (f not in self.features and sends("features", f)) == keep]}
        return part(True), part(False)

    def headline(self, exercised: "Used | None" = None) -> str:
        """The first line of every report: `checked: … / not checked: …`."""
        checked, left_out = self.split(exercised)

        def words(part: dict) -> str:
            return "; ".join(", ".join(part[k]) for k in ("types", "operators", "features") if part[k]) or "nothing"
        return f"checked: {words(checked)} / not checked: {words(left_out)}"


@attrs.frozen
class Used:
    """The operators, types and features one workload uses."""

    operators: frozenset[str]
    types: frozenset[str]
    features: frozenset[str]


def features_of(subscriptions: list[tuple[str, Subscription]], events: list[Event], forms: list[bool]) -> Used:
    """What a workload uses (`forms[k]`: subscription k written as constraints, not filter text)."""
    constraints = [c for _, s in subscriptions for c in s.constraints]
    attributes = [a for e in events for a in e.attributes]
    features = set()
    types_by_name: dict[str, set[str]] = {}
    for name, type_ in [(c.name, c.type) for c in constraints] + [(a.name, a.type) for a in attributes]:
        types_by_name.setdefault(name, set()).add(type_)
    if any(len(kinds) > 1 for kinds in types_by_name.values()):
        features.add("mixed-types")
    if any(len({c.name for c in s.constraints}) < len(s.constraints) for _, s in subscriptions):
        features.add("repeated-names")
    if not all(forms):
        features.add("filter-text")
    values = [c.value for c in constraints] + [a.value for a in attributes]
    if any(type(v) is int and abs(v) > BIG_INT for v in values):
        features.add("big-ints")
    if any(isinstance(v, str) and not plain(v, c) for v, c in _strings(constraints, attributes)):
        features.add("hostile-strings")
    return Used(frozenset(c.op for c in constraints), frozenset(c.type for c in constraints) | {a.type for a in attributes},
                frozenset(features))


def _strings(constraints: list[Constraint], attributes) -> Iterable[tuple[str, Constraint | None]]:
    yield from ((c.value, c) for c in constraints if isinstance(c.value, str))
    yield from ((a.value, None) for a in attributes if isinstance(a.value, str))


def plain(value: str, constraint: Constraint | None = None) -> bool:
    """Letters and digits only (a wildcard pattern's one `*` aside)."""
    text = value.replace("*", "", 1) if constraint is not None and constraint.op == "wildcard" else value
    return set(text) <= PLAIN


def parse_unsupported(text: str | None, *, where: str = "--unsupported") -> Profile:
    """`--unsupported`: a comma-separated list of operators, types and features, or the path of a TOML
    profile file (ending `.toml`)."""
    if text is None or text.strip() == "":
        return Profile()
    if text.lower().endswith(".toml"):
        return read_profile(Path(text))
    return profile_of([word.strip() for word in text.split(",")], where)


def profile_of(words: list[str], where: str) -> Profile:
    operators, types, features = set(), set(), set()
    for word in words:
        op = OPERATOR_WORDS.get(word, word)
        if word == "":
            raise ConformError(f"{where}: an empty name in the list")
        if op in OPERATORS:
            operators.add(op)
        elif word in TYPES:
            types.add(word)
        elif word in FEATURES:
            features.add(word)
        else:
            raise ConformError(f"{where}: unknown operator, type or feature {word!r}; known: operators "
                               f"{', '.join(OPERATORS)} (or {', '.join(OPERATOR_WORDS)}), types {', '.join(TYPES)}, "
                               f"features {', '.join(FEATURES)}")
    profile = Profile(frozenset(operators), frozenset(types), frozenset(features))
    if not profile.usable_types():
        raise ConformError(f"{where}: leaves no type with an operator to check")
    return profile


def read_profile(path: Path) -> Profile:
    """A TOML profile: `[unsupported]` with `operators`, `types` and `features`, each a list of names."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise ConformError(f"{path}: cannot read the profile: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConformError(f"{path}: not a TOML profile: {exc}") from None
    table = data.get("unsupported")
    if set(data) != {"unsupported"} or not isinstance(table, dict):
        raise ConformError(f"{path}: a profile holds one table, [unsupported]; found {', '.join(sorted(data)) or 'none'}")
    words = []
    for key, value in table.items():
        if key not in ("operators", "types", "features"):
            raise ConformError(f"{path}: [unsupported] field {key!r}: not one of operators, types, features")
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise ConformError(f"{path}: [unsupported] field {key!r}: a list of names")
        known = {"operators": (*OPERATORS, *OPERATOR_WORDS), "types": TYPES, "features": tuple(FEATURES)}[key]
        for v in value:
            if v not in known:
                raise ConformError(f"{path}: [unsupported] field {key!r}: unknown name {v!r}; known: {', '.join(known)}")
        words += value
    return attrs.evolve(profile_of(words, str(path)), source=str(path))

