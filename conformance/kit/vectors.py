"""Running subsum's own implementation against portable test vectors
(spec/11-plugins.md DEF-PLUG-5; `subsum conform vectors check DIR`): each
case's input through the implementation, its output compared with the
model's expected one. A vectors file or case that cannot be read or run
is bad input (exit 2), never a finding.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Callable, Iterator, cast

from subsum.conformance.kit.vector_cases import FORMAT, KINDS, SPEC_VERSION, VectorError, messages_json, state_json
from subsum.conformance.checks.summaries.views import build_owner
from subsum.core.errors import SubsumError
from subsum.core.filters import FilterError, format_filter, parse_filter
from subsum.core.inputs import read_input_text
from subsum.core.jsonio import JsonObject, RecordError, event_from_json, filter_from_json, filter_to_json, loads_json, subscription_from_json
from subsum.core.types import Event, Subscription
from subsum.impl.caching import make_cache
from subsum.impl.caching.replay import apply
from subsum.impl.matching import ENGINES, make_engine
from subsum.impl.network import CLIENT_BASE, Network, StrawmanBroker
from subsum.impl.network.actor import Out
from subsum.impl.network.messages import Publication
from subsum.impl.network.protocols.covering import filter_covers
from subsum.model import strawman as model_strawman


def read_subscription(obj: dict) -> tuple[str, Subscription]:
    """A subscriptions line's object, read by subsum's reader (spec/formats.md)."""
    return subscription_from_json(cast(JsonObject, loads_json(json.dumps(obj))))


def read_event(obj: dict) -> Event:
    """An events line's object, read by subsum's reader (spec/formats.md)."""
    return event_from_json(cast(JsonObject, loads_json(json.dumps(obj))))[1]


def load_vectors(folder: Path, kind: str) -> list[dict]:
    """The cases of one file, read with subsum's bounded reader and checked for shape (exit 2 naming what is wrong)."""
    path = folder / f"{kind}.json"
    if not path.exists():
        raise VectorError(f"{path}: missing (write vectors with `subsum conform vectors write --out-dir {folder}`)")
    try:
        doc = json.loads(read_input_text(path))
    except RecursionError:
        raise VectorError(f"{path}: not JSON: nested too deeply") from None
    except ValueError as exc:  # InputError is one too
        raise VectorError(f"{path}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("kind") != kind:
        raise VectorError(f"{path}: not a {FORMAT} file of kind {kind!r}")
    if doc.get("spec_version") != SPEC_VERSION or isinstance(doc.get("spec_version"), bool):
        raise VectorError(f"{path}: spec version {doc.get('spec_version')!r}; this subsum speaks spec version {SPEC_VERSION}")
    cases = doc.get("cases")
    if not isinstance(cases, list):
        raise VectorError(f"{path}: field 'cases': expected a list of cases")
    for i, case in enumerate(cases):
        if not (isinstance(case, dict) and isinstance(case.get("id"), str) and isinstance(case.get("input"), dict)
                and isinstance(case.get("expected"), dict)):
            raise VectorError(f"{path}: cases[{i}]: expected {{\"id\": text, \"claim\", \"input\": {{...}}, \"expected\": {{...}}}}")
    return cases


def _run_case(folder: Path, kind: str, case: dict, run: Callable[[], Iterator[str]]) -> Iterator[str]:
    """One case's findings; a case whose input cannot be run is bad input (exit 2), not a finding."""
    try:
        yield from list(run())
    except RecordError as exc:  # names the field at fault
        where = f"field {exc.field!r}: " if exc.field else ""
        raise VectorError(f"{folder / (kind + '.json')}: case {case['id']}: cannot be run: {where}{exc.message}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, AssertionError, RecursionError, SubsumError) as exc:
        raise VectorError(f"{folder / (kind + '.json')}: case {case['id']}: cannot be run: {type(exc).__name__}: {exc}") from None


def impl_filter(case: dict) -> dict:
    try:
        s = parse_filter(case["input"]["filter"])
    except FilterError:
        return {"error": True}
    return {"normal_form": format_filter(s), "constraints": filter_to_json(s)}


def impl_matching(case: dict, engine: str) -> dict:
    subs = [read_subscription(obj) for obj in case["input"]["subscriptions"]]
    events = [read_event(obj) for obj in case["input"]["events"]]
    matched = make_engine(engine, subs).match_batch(events)
    return {"results": [{"event": obj["id"], "subscriptions": sorted(ids)} for obj, ids in zip(case["input"]["events"], matched)]}


def impl_summary(case: dict) -> dict:
    subs = [read_subscription(obj) for obj in case["input"]["subscriptions"]]
    summary = build_owner(subs).export()
    event = read_event(case["input"]["event"])
    return {"candidates": sorted(summary.names[i] for i in summary.match(event))}


def impl_strawman(case: dict) -> dict:
    """The implementation's Strawman broker on one vector: a handler run on the vector's state, its out-buffer read."""
    state, message = case["input"]["state"], case["input"]["message"]
    net = Network(seed=0, protocol="strawman")  # the brokers' shared filter index, and the handler's context
    broker = StrawmanBroker(state["id"], net.shared)
    broker.neighbors = set(state["neighbors"])
    for n, f in state["table"]:
        broker.insert_entry(n, filter_from_json(f), Out(broker.id, net))
    out = Out(broker.id, net)
    kind = message["kind"]
    if kind == "SUB":
        broker.sub_received(message["from"], filter_from_json(message["filter"]), out)
    elif kind == "UNSUB":
        broker.unsub_received(message["from"], filter_from_json(message["filter"]), out)
    elif kind == "REMOVE-LINK":
        broker.remove_link_to(message["neighbor"], out)
    elif kind == "ADD-LINK":
        broker.add_link_to(message["neighbor"], out)
    else:
        broker.event_received(message["from"], Publication(0, read_event(message["event"])), out)
        return {"targets": sorted(out.routed())}
    after = model_strawman.BrokerState(state["id"], frozenset(broker.neighbors), frozenset(n for n in broker.neighbors if n >= CLIENT_BASE),
                                      frozenset(broker.entries()))
    return {"state": state_json(after), "messages": messages_json(out.messages())}


def impl_cache(case: dict) -> dict:
    try:
        cache = make_cache(case["input"]["policy"], case["input"]["capacity"])
    except SubsumError as exc:
        raise RecordError("input.policy", str(exc)) from None
    evictions = [apply(cache, op) for op in case["input"]["operations"]]
    order = cache.order()
    return {"evictions": evictions, "order": order, "metadata": {m: cache.metadata(m) for m in order}}


def check_vectors(folder: Path, engines: tuple[str, ...] | None = None) -> Iterator[str]:
    """Run subsum's implementation against every vector in `folder`; yield
    one line per case it gets wrong. Matching runs on every engine;
    covering checks `filter_covers` is sound (it may not show a covering the
    model proves: spec/08 DEF-SR-6); summaries check candidates ⊇ exact and
    equal the model's."""
    def filters(case: dict) -> Iterator[str]:
        got, want = impl_filter(case), case["expected"]
        if got != ({"error": True} if want.get("error") else want):
            yield f"{case['id']}: {case['input']['filter']!r}: got {got}, expected {want}"

    def matching(case: dict) -> Iterator[str]:
        wrong: dict[str, list[str]] = {}  # one line per case: the engines that agree on a wrong answer, and how it differs
        for engine in engines or tuple(ENGINES):
            got = impl_matching(case, engine)
            if got != case["expected"]:
                wrong.setdefault(matching_difference(got, case["expected"]), []).append(engine)
        for difference, named in wrong.items():
            yield f"{case['id']}: engine{'s' if len(named) > 1 else ''} {', '.join(named)}: {difference}"

    def covering(case: dict) -> Iterator[str]:
        general, specific = case["input"]["general"], case["input"]["specific"]
        if isinstance(general, dict):
            general, specific = [general], [specific]
        if filter_covers(filter_from_json(general), filter_from_json(specific)) and not case["expected"]["covers"]:
            yield f"{case['id']}: filter_covers says covered; the model says not"

    def summaries(case: dict) -> Iterator[str]:
        got = impl_summary(case)["candidates"]
        if not set(case["expected"]["exact"]) <= set(got) or got != case["expected"]["candidates"]:
            yield f"{case['id']}: candidates {got}, expected {case['expected']}"

    def same(impl: Callable[[dict], dict]) -> Callable[[dict], Iterator[str]]:
        def run(case: dict) -> Iterator[str]:
            got = impl(case)
            if got != case["expected"]:
                yield f"{case['id']}: got {got}, expected {case['expected']}"
        return run

    checks: dict[str, Callable[[dict], Iterator[str]]] = {
        "filters": filters, "matching": matching, "covering": covering, "summaries": summaries,
        "strawman": same(impl_strawman), "caches": same(impl_cache)}
    for kind, check in checks.items():
        for case in load_vectors(folder, kind):
            yield from _run_case(folder, kind, case, lambda: check(case))


def matching_difference(got: dict, expected: dict) -> str:
    """How a matching answer differs from the expected one, event by event: the subscriptions missed and the extra ones.

    >>> matching_difference({"results": [{"event": "e1", "subscriptions": ["s1", "s3"]}]},
    ...                     {"results": [{"event": "e1", "subscriptions": ["s1", "s2"]}]})
    'event e1: missed s2, extra s3'
    """
    want = {r["event"]: set(r["subscriptions"]) for r in expected["results"]}
    have = {r["event"]: set(r["subscriptions"]) for r in got["results"]}
    parts = []
    for event in dict.fromkeys([*want, *have]):
        missed, extra = sorted(want.get(event, set()) - have.get(event, set())), sorted(have.get(event, set()) - want.get(event, set()))
        said = ([f"missed {', '.join(missed)}"] if missed else []) + ([f"extra {', '.join(extra)}"] if extra else [])
        if event not in have or event not in want:
            said.append("no line" if event not in have else "a line for no such event")
        if said:
            parts.append(f"event {event}: {', '.join(said)}")
    return "; ".join(parts) or f"got {got}, expected {expected}"


def count_cases(folder: Path) -> Counter:
    return Counter({kind: len(load_vectors(folder, kind)) for kind in KINDS})
