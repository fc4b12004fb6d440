"""The workloads of `subsum conform matching` on disk (spec/11-plugins.md
DEF-PLUG-3): a workload (`pinned`, `draws`) is written as a subscriptions
file and an events file in the formats of spec/formats.md, the model says
what an engine must answer, and `first_failure` says how an answer falls
short of it.

>>> [line.decode() for line in expected_lines([("e1", {"s2", "s10"})])]
['{"event": "e1", "subscriptions": ["s10", "s2"]}']
"""

from __future__ import annotations

import json
from pathlib import Path

from subsum.conformance.kit.engines import Failure, Received
from subsum.conformance.kit.processes import quote
from subsum.core.jsonio import event_to_json, match_result_lines, read_events, read_subscriptions, subscription_to_json
from subsum.core.types import Subscription
from subsum.model import semantics


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


