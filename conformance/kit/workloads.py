"""The workloads of `subsum conform matching` (spec/11-plugins.md DEF-PLUG-3):
Hypothesis draws them (the model's generators plus hostile strings), they
are written as a subscriptions file and an events file in the formats of
spec/formats.md, the model says what an engine must answer, and
`first_failure` says how an answer falls short of it.

>>> [line.decode() for line in expected_lines([("e1", {"s2", "s10"})])]
['{"event": "e1", "subscriptions": ["s10", "s2"]}']
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import strategies as st

from subsum.conformance import strategies as gen
from subsum.conformance.kit.engines import Failure, Received
from subsum.conformance.kit.processes import quote
from subsum.core.jsonio import event_to_json, match_result_lines, read_events, read_subscriptions, subscription_to_json
from subsum.core.types import Attribute, Constraint, Event, Subscription
from subsum.model import semantics

#: Strings with the characters a reader or a query language gets wrong: JSON
#: escapes, SQL wildcards and escapes, a NUL, a newline, non-ASCII and astral.
HOSTILE_ALPHABET = 'ab*%_\\"\n\x00é\U0001F600'


#: a string over `HOSTILE_ALPHABET`, and one without the wildcard's `*`
HOSTILE_TEXT = st.text(alphabet=HOSTILE_ALPHABET, max_size=4)
HOSTILE_PART = HOSTILE_TEXT.filter(lambda t: "*" not in t)


@st.composite
def hostile_constraint(draw) -> Subscription:
    """One equality or string constraint over `HOSTILE_ALPHABET`."""
    op = draw(st.sampled_from(["=", "!=", "prefix", "suffix", "contains", "wildcard"]))
    value = f"{draw(HOSTILE_PART)}*{draw(HOSTILE_PART)}" if op == "wildcard" else draw(HOSTILE_TEXT)
    return Subscription(frozenset({Constraint(draw(st.sampled_from(["s", "t"])), "string", op, value)}))


@st.composite
def hostile_string_workloads(draw):
    """Equality and string operators over `HOSTILE_ALPHABET`. The subscriptions
    and events are lists, which Hypothesis shrinks element by element."""
    subs = draw(st.lists(hostile_constraint(), min_size=1, max_size=5))
    names = st.lists(st.sampled_from(["s", "t"]), unique=True)
    events = draw(st.lists(names.flatmap(lambda ns: st.tuples(*(HOSTILE_TEXT for _ in ns)).map(
        lambda values: Event(tuple(Attribute(n, "string", v) for n, v in zip(ns, values))))), max_size=5))
    return [(f"s{i}", s) for i, s in enumerate(subs)], events


def pinned_workloads() -> list[tuple[list, list, list[bool]]]:
    """Small workloads run before any generated one, so that a reader or a
    query language that gets one of the hostile characters wrong is caught
    at once, whatever the search finds: one workload per string operator,
    holding a subscription for each character of `HOSTILE_ALPHABET` (a
    wildcard's left part) in both forms, and an event without any of them
    plus one event with each. One workload per operator, not per
    character, keeps an engine run one process a workload to five starts."""
    characters = [c for c in HOSTILE_ALPHABET if c != "*"]
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
        pinned.append((subscriptions, events, forms))
    return pinned


def generated_workloads() -> st.SearchStrategy:
    """(subscriptions, events, forms): the model's generators (spec/03 CLM-ENG-1)
    plus hostile strings; `forms` says, per subscription, whether it is written
    with `constraints` (True) or as a `filter` text. The forms are the bits of
    one drawn number, so that dropping a subscription while shrinking leaves
    the others' forms as they were."""
    base = st.one_of(gen.workloads(), gen.string_workloads(), gen.numeric_workloads(), hostile_string_workloads()).map(
        lambda w: (list(w[0]) or [("s0", Subscription())], list(w[1]) or [Event()]))  # the formats want a line in each file
    return st.tuples(base, st.integers(0, 2**FORM_BITS - 1)).map(
        lambda w: (w[0][0], w[0][1], [bool(w[1] >> (i % FORM_BITS) & 1) for i in range(len(w[0][0]))]))


#: the bits of the number that chooses the subscriptions' forms (they repeat past it)
FORM_BITS = 16


def subscription_line(sid: str, subscription: Subscription, as_constraints: bool) -> str:
    """One subscriptions line (spec/formats.md), in either form."""
    return json.dumps(subscription_to_json(sid, subscription, as_filter_text=not as_constraints))


def write_workload(folder: Path, subscriptions: list, events: list, forms: list) -> list[str]:
    """Write subscriptions.jsonl and events.jsonl into `folder`; the event ids."""
    ids = [f"e{i}" for i in range(len(events))]
    (folder / "subscriptions.jsonl").write_text("".join(subscription_line(sid, s, f) + "\n"
                                                        for (sid, s), f in zip(subscriptions, forms)))
    (folder / "events.jsonl").write_text("".join(json.dumps(event_to_json(eid, e)) + "\n" for eid, e in zip(ids, events)))
    return ids


def expected_lines(results) -> list[bytes]:
    """The result lines of spec/formats.md for (event id, ids) pairs."""
    return [line.encode() for line in match_result_lines((eid, sorted(ids)) for eid, ids in results)]


def model_results(folder: Path) -> list[tuple[str, set[str]]]:
    """The model's (event id, matching ids) for the workload in `folder`, read back from its files."""
    subs = read_subscriptions(folder / "subscriptions.jsonl")
    events = read_events(folder / "events.jsonl")
    matched = semantics.match_batch([(s.id, s.subscription) for s in subs], [e.event for e in events])
    return [(e.id, ids) for e, ids in zip(events, matched)]



# --- comparing ------------------------------------------------------------------------------

def first_failure(expected: list[tuple[str, set[str]]], received: Received) -> Failure | None:
    """The first way `received` falls short of `expected`: its own failure,
    a line that is not a result line (spec/formats.md), or a line that
    differs from the model's. Whitespace and key order are free."""
    if received.failure is not None:
        return received.failure
    text = received.stdout
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, raw in enumerate(lines, 1):
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return Failure("malformed", f"output line {i} is not JSON ({exc}): {quote(raw)}")
        if not (isinstance(obj, dict) and set(obj) == {"event", "subscriptions"} and isinstance(obj["event"], str)
                and isinstance(obj["subscriptions"], list) and all(isinstance(s, str) for s in obj["subscriptions"])):
            return Failure("malformed", f"output line {i} is not {{\"event\": ID, \"subscriptions\": [IDs]}}: {quote(raw)}")
        if i > len(expected):
            return Failure("malformed", f"{len(lines)} output lines for {len(expected)} events")
        eid, want = expected[i - 1]
        got = obj["subscriptions"]
        if obj["event"] != eid:
            return Failure("malformed", f"output line {i} is for event {obj['event']!r}; line {i} must be for event {eid!r} (input order)")
        if got != sorted(set(got)):
            return Failure("malformed", f"output line {i}: the ids {got} are not sorted by code point without repeats")
        if set(got) != want:
            extra, missing = sorted(set(got) - want), sorted(want - set(got))
            return Failure("difference", f"event {eid}: the engine matched {got}, the model {sorted(want)}"
                                         + (f"; extra {extra}" if extra else "") + (f"; missing {missing}" if missing else ""))
    if len(lines) != len(expected):
        return Failure("malformed", f"{len(lines)} output lines for {len(expected)} events")
    return None


