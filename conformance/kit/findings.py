"""What tells one failure of `subsum conform matching` from another
(spec/11-plugins.md DEF-PLUG-8): its kind, its direction (an extra match,
a missed one) and what the failing subscription uses, and the
`--unsupported` word that would leave it out of a run.

For a difference, the traits are those of the first subscription the engine
got wrong, on the first event it got wrong: `repeated-names` if it
constrains one name twice, else `mixed-types` if the event gives one of its
names another type, else its operators with their types (`wildcard
string`). A crash, a time-out or malformed output is told apart by what it
says (its message with numbers and quoted text blanked, `detail`); its
traits, every operator with its type and every feature (DEF-PLUG-7) of the
shrunk workload, are shown only.

>>> from subsum.conformance.kit.pinned import sub, event
>>> w = ([("s0", sub(("s", "string", "wildcard", "ab*ba")))], [event(s=("string", "aba"))], [True])
>>> s = signature(w, "difference", [("e0", {"s0"})], [("e0", set())])
>>> s.direction, s.traits, s.declare
('extra', ('wildcard string',), 'wildcard')
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import attrs

from subsum.conformance.kit.profile import FEATURES, features_of
from subsum.core.types import Event, Subscription


@attrs.frozen
class Signature:
    kind: str  # difference, crash, timeout, malformed
    direction: str  # extra, missed, extra and missed; "-" for the other kinds and for a failure that did not repeat
    traits: tuple[str, ...]  # ("not deterministic",) for a failure that did not happen again on the same workload
    detail: str = ""  # a crash's, time-out's or malformed answer's message, blanked (`blanked`)

    @property
    def declare(self) -> str | None:
        """The `--unsupported` word that would leave this out, when one does: the one feature among the
        traits, else the one operator (a failure that did not repeat has none)."""
        if "not deterministic" in self.traits:
            return None
        features = [t for t in self.traits if t in FEATURES]
        if features:
            return features[0] if len(features) == 1 else None
        ops = {t.split(" ")[0] for t in self.traits if " " in t}
        return ops.pop() if len(ops) == 1 else None

    @property
    def key(self) -> tuple:
        """What two alike failures share: a difference's kind, direction and traits; another failure's kind and
        blanked message (and whether it repeated)."""
        if self.kind == "difference":
            return self.kind, self.direction, self.traits
        return self.kind, self.detail, "not deterministic" in self.traits

    def covered_by(self, known: "Signature", traits: frozenset[str]) -> bool:
        """Whether this failure, whose subscription has `traits` in all, is already explained by `known`: a
        difference of the same direction with every trait of it present, or another failure alike (`key`)."""
        if self.kind != "difference":
            return known.key == self.key
        return (known.kind, known.direction) == (self.kind, self.direction) and set(known.traits) <= traits

    def to_json(self) -> dict:
        return {"kind": self.kind, "direction": self.direction, "traits": list(self.traits), "declare": self.declare}


def received_results(stdout: bytes) -> list[tuple[str, set[str]]]:
    """The engine's result lines as (event id, ids), as far as they parse."""
    out = []
    for raw in stdout.split(b"\n"):
        try:
            obj = json.loads(raw)
            out.append((obj["event"], set(obj["subscriptions"])))
        except (ValueError, TypeError, KeyError):
            continue
    return out


def blanked(message: str) -> str:
    """A message with its numbers and quoted text blanked, so that one cause reads the same on any workload.

    >>> blanked("output line 3 is not JSON: b'{x'")
    'output line # is not JSON: b…'
    """
    return re.sub(r"\d+", "#", re.sub(r"'[^']*'|\"[^\"]*\"", "…", message))


def signature(workload, kind: str, received: list[tuple[str, set[str]]], expected: list[tuple[str, set[str]]],
              message: str = "") -> Signature:
    """The signature of one failure on `workload` (the engine's `received` results against the model's)."""
    subscriptions, events, _ = workload
    if kind == "difference":
        for k, ((eid, want), (_, got)) in enumerate(zip(expected, received)):
            if want != got:
                extra, missed = got - want, want - got
                direction = "extra and missed" if extra and missed else "extra" if extra else "missed"
                sid = min(extra | missed)
                subscription = dict(subscriptions).get(sid, Subscription())
                return Signature(kind, direction, traits_of(subscription, events[k] if k < len(events) else Event()))
    ops = sorted({f"{c.op} {c.type}" for _, s in subscriptions for c in s.constraints})
    return Signature(kind, "-", (*ops, *sorted(features_of(*workload).features)), blanked(message))


def traits_of(subscription: Subscription, event: Event) -> tuple[str, ...]:
    """A difference's traits (the module's docstring): one feature if the subscription uses it on the event,
    else its operators with their types."""
    every = all_traits(subscription, event)
    for feature in ("repeated-names", "mixed-types"):
        if feature in every:
            return (feature,)
    return tuple(sorted(every)) or ("empty subscription",)


def all_traits(subscription: Subscription, event: Event) -> frozenset[str]:
    """Every trait the subscription has on the event: its operators with their types, repeated-names when it
    constrains one name twice, mixed-types when the event gives one of its names another type."""
    names = [c.name for c in subscription.constraints]
    out = {f"{c.op} {c.type}" for c in subscription.constraints}
    if len(set(names)) < len(names):
        out.add("repeated-names")
    if any((a := event.get(c.name)) is not None and a.type != c.type for c in subscription.constraints):
        out.add("mixed-types")
    return frozenset(out)


def unshrunk_traits(workload, received: list[tuple[str, set[str]]], expected: list[tuple[str, set[str]]]) -> frozenset[str]:
    """`all_traits` of the first subscription got wrong, before shrinking (empty if none is)."""
    subscriptions, events, _ = workload
    for k, ((_, want), (_, got)) in enumerate(zip(expected, received)):
        if want != got:
            sid = min((got - want) | (want - got))
            return all_traits(dict(subscriptions).get(sid, Subscription()), events[k] if k < len(events) else Event())
    return frozenset()


@attrs.define
class Finding:
    """One distinct failure: where it was first found, how often it was seen, its replay."""

    signature: Signature
    message: str
    found_at: str  # "workload 17" or "pinned wildcard-overlap"
    replay: Path | None = None
    seen: int = 1

    def to_json(self, replay_command: str | None) -> dict:
        return {**self.signature.to_json(), "message": self.message, "found_at": self.found_at, "seen": self.seen,
                "replay": None if self.replay is None else str(self.replay), "replay_command": replay_command}
