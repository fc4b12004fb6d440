"""The pinned workloads of `subsum conform matching` (spec/11-plugins.md
DEF-PLUG-4), run before any generated one, so that a classic bug fails in
the first second: each operator's known edge cases, then the hostile
characters under every string operator. The model says what each must
give; a workload that uses what the profile leaves out is not sent
(`pinned_workloads(profile)`).

>>> names = [name for name, _ in pinned_workloads()]
>>> names[:3], len(names)
(['wildcard-overlap', 'wildcard-empty-parts', 'strict-ranges'], 16)
"""

from __future__ import annotations

from subsum.conformance.kit.draws import HOSTILE
from subsum.conformance.kit.profile import Profile, features_of
from subsum.core.types import INT_MAX, INT_MIN, Attribute, Constraint, Event, Scalar, Subscription

Workload = tuple[list, list, list[bool]]


def sub(*constraints: tuple[str, str, str, Scalar | None]) -> Subscription:
    """A subscription of (name, type, op, value) constraints."""
    return Subscription(frozenset(Constraint(n, t, op, v) for n, t, op, v in constraints))


def event(**values) -> Event:
    """An event of name=(type, value) attributes."""
    return Event(tuple(Attribute(n, t, v) for n, (t, v) in values.items()))


def boundary(subscriptions: list[Subscription], events: list[Event]) -> Workload:
    """Each subscription in the constraints form (the filter-text form has workloads of its own, below)."""
    return [(f"s{k}", s) for k, s in enumerate(subscriptions)], events, [True] * len(subscriptions)


def as_text(w: Workload) -> Workload:
    """The same workload with every subscription written as `filter` text."""
    return w[0], w[1], [False] * len(w[0])


def strings(*values: str) -> list[Event]:
    return [event(s=("string", v)) for v in values]


def boundary_workloads() -> list[tuple[str, Workload]]:
    """Each operator's edge cases, one small workload per group; their names say which."""
    w = "wildcard"
    return [
        ("wildcard-overlap", boundary([sub(("s", "string", w, "ab*ba")), sub(("s", "string", w, "a*a")), sub(("s", "string", w, "aa*aa"))],
                                      strings("aba", "a", "aa", "aaa", "aaaa", "abba", "ab", "ba"))),
        ("wildcard-empty-parts", boundary([sub(("s", "string", w, "*")), sub(("s", "string", w, "a*")), sub(("s", "string", w, "*a"))],
                                          strings("", "a", "b", "ab", "ba"))),
        ("strict-ranges", boundary([sub(("i", "int", op, 5)) for op in ("<", "<=", ">", ">=", "=", "!=")],
                                   [event(i=("int", v)) for v in (4, 5, 6)])),
        ("float-ranges", boundary([sub(("f", "float", op, 0.5)) for op in ("<", "<=", ">", ">=", "=", "!=")]
                                  + [sub(("f", "float", ">", 0.0)), sub(("f", "float", "<", 0.0))],
                                  [event(f=("float", v)) for v in (0.5, 0.49999999999999994, 0.5000000000000001, 5e-324, -5e-324, 0.0)])),
        ("int64-bounds", boundary([sub(("i", "int", ">=", INT_MAX)), sub(("i", "int", "<=", INT_MIN)), sub(("i", "int", ">", INT_MAX - 1)),
                                   sub(("i", "int", "<", INT_MIN + 1)), sub(("i", "int", "=", 2**53 + 1)), sub(("i", "int", "!=", INT_MIN))],
                                  [event(i=("int", v)) for v in (INT_MAX, INT_MIN, INT_MAX - 1, INT_MIN + 1, 2**53, 2**53 + 1, 0)])),
        ("empty-strings", boundary([sub(("s", "string", op, v)) for op in ("prefix", "suffix", "contains", "=") for v in ("", "a")],
                                   strings("", "a", "ab", "ba"))),
        ("int-against-float", boundary([sub(("x", "int", "=", 1)), sub(("x", "float", "=", 1.0)), sub(("x", "int", ">", 0)),
                                        sub(("x", "float", "<", 2.0)), sub(("x", "int", "any", None))],
                                       [event(x=("int", 1)), event(x=("float", 1.0))])),
        ("repeated-names", boundary([sub(("x", "int", ">", 3), ("x", "int", "<", 5)), sub(("x", "int", "<", 5), ("x", "int", ">", 3)),
                                     sub(("s", "string", "prefix", "a"), ("s", "string", "suffix", "b"))],
                                    [event(x=("int", v), s=("string", t)) for v, t in ((4, "ab"), (6, "ba"), (2, "a"))])),
        ("missing-attribute", boundary([sub(("x", "int", "!=", 5)), sub(("x", "int", "any", None)), sub(("s", "string", "!=", "a")), sub()],
                                       [event(y=("int", 5)), event(), event(x=("int", 4))])),
        ("bool", boundary([sub(("b", "bool", "=", True)), sub(("b", "bool", "!=", True)), sub(("b", "bool", "=", False))],
                          [event(b=("bool", True)), event(b=("bool", False))])),
        ("filter-text", as_text(boundary([sub(("s", "string", "=", "ab")), sub(("i", "int", ">=", -1)), sub(("s", "string", w, "a*b"))],
                                         strings("ab", "aab") + [event(i=("int", -1))]))),
    ]


def hostile_workloads() -> list[tuple[str, Workload]]:
    """One workload per string operator, holding a subscription for each hostile character (a wildcard's
    left part) in both forms, and an event without any of them plus one event with each. One workload per
    operator, not per character, keeps a one-shot engine to five starts."""
    characters = [c for c in HOSTILE if c != "*"]
    pinned = []
    for op in ("=", "prefix", "suffix", "contains", "wildcard"):
        subscriptions, forms = [], []
        for k, c in enumerate(characters):
            subscription = Subscription(frozenset({Constraint("s", "string", op, f"{c}*" if op == "wildcard" else c)}))
            for as_constraints in (True, False):
                subscriptions.append((f"s{k}{'c' if as_constraints else 'f'}", subscription))
                forms.append(as_constraints)
        events = [Event((Attribute("s", "string", "ab"),))]
        events += [Event((Attribute("s", "string", f"a{c}b" if op == "contains" else c),)) for c in characters]
        pinned.append((f"hostile-{op}", (subscriptions, events, forms)))
    return pinned


def pinned_workloads(profile: Profile = Profile()) -> list[tuple[str, Workload]]:
    """Every pinned workload the profile admits, in the order they run; without `filter-text`, the hostile
    ones are sent with every subscription in the constraints form (and the one on filter text not at all)."""
    out = []
    for name, w in boundary_workloads() + hostile_workloads():
        if "filter-text" in profile.features and name.startswith("hostile-"):  # one subscription a character, as constraints
            kept = [(sid, s) for (sid, s), form in zip(w[0], w[2]) if form]
            w = (kept, w[1], [True] * len(kept))
        if profile.admits(features_of(*w)):
            out.append((name, w))
    return out
