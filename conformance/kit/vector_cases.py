"""Portable test vectors from the model (spec/11-plugins.md DEF-PLUG-5):
cases drawn from the model, written as JSON for any implementation to run
in its own CI, the way Ethereum's consensus spec ships its tests.

`write_vectors(folder)` writes one file per kind; each case has an `id`,
the `claim` it exercises, an `input` and the `expected` output, all as the
model computes them. Subscriptions, filters and events are written in the
JSON shapes of spec/formats.md (`subsum.core.jsonio`). The cases come from
a seeded `random.Random` (never from Hypothesis, whose draws change between
its versions) plus pinned edge cases, so the same spec version and seed
give the same bytes. `subsum.conformance.kit.vectors` runs subsum's own
implementation against them.

>>> [case["expected"] for case in filter_cases(random.Random(0))][0]["normal_form"]
'price > 8.3 and symbol prefix "OT"'
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Callable, Iterator

from subsum.conformance.checks.caching.policies import apply_to_reference
from subsum.conformance.checks.matching.engines import MIXED_EDGE_CASES, STRING_EDGE_CASES
from subsum.core.errors import SubsumError
from subsum.core.filters import FilterError, format_filter, parse_filter
from subsum.core.jsonio import constraint_to_json, event_to_json, filter_to_json, subscription_to_json
from subsum.core.outputs import check_output_path, write_lines_atomically
from subsum.core.types import INT_MAX, INT_MIN, OPS_BY_TYPE, TYPES, Attribute, Constraint, Event, Subscription, sorted_constraints
from subsum.impl.network import CLIENT_BASE
from subsum.model import caching as model_caching
from subsum.model import covering as model_covering
from subsum.model import semantics
from subsum.model import strawman as model_strawman
from subsum.model.summaries import summary as model_summaries

#: The version of spec/ the vectors speak for (spec/README.md states it; tests/test_vectors.py checks both agree).
SPEC_VERSION = 1
FORMAT = "subsum-vectors"
KINDS = ("filters", "matching", "covering", "summaries", "strawman", "caches")

NAMES = ("a", "b", "price", "symbol")
USUAL_TYPE = {"a": "int", "b": "float", "price": "float", "symbol": "string"}
INTS = (INT_MIN, INT_MIN + 1, -1, 0, 1, 2, 3, INT_MAX - 1, INT_MAX)
FLOATS = (0.0, 1.0, -1.0, 0.5, 2.5, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308)
WORDS = ("", "a", "b", "ab", "ba", "aab", "aba", "é", "a\U0001F600")
#: client ids in the strawman vectors: at or above subsum's CLIENT_BASE, as DEF-NET-6's clients


# --- drawing ---------------------------------------------------------------------------------

def draw_value(rng: random.Random, type_: str, op: str):
    if op == "any":
        return None
    if op == "wildcard":
        return f"{rng.choice(WORDS[:5])}*{rng.choice(WORDS[:5])}"
    if type_ == "int":
        return rng.choice(INTS) if rng.random() < 0.7 else rng.randint(-5, 5)
    if type_ == "float":
        return rng.choice(FLOATS) if rng.random() < 0.7 else round(rng.uniform(-4, 4), 1)
    if type_ == "string":
        return rng.choice(WORDS)
    return rng.random() < 0.5


def draw_constraint(rng: random.Random, name: str | None = None, type_: str | None = None) -> Constraint:
    name = name or rng.choice(NAMES)
    type_ = type_ or (USUAL_TYPE[name] if rng.random() < 0.7 else rng.choice(TYPES))
    op = rng.choice(OPS_BY_TYPE[type_])
    return Constraint(name, type_, op, draw_value(rng, type_, op))


def draw_subscription(rng: random.Random, most: int = 3) -> Subscription:
    return Subscription(frozenset(draw_constraint(rng) for _ in range(rng.randint(1, most))))


def satisfying_value(rng: random.Random, c: Constraint):
    """A value that often satisfies c (its own value, or the parts of a pattern)."""
    if c.op == "wildcard":
        left, _, right = str(c.value).partition("*")
        return left + rng.choice(WORDS[:3]) + right
    if c.op in ("any", "!=") or c.value is None:
        return draw_value(rng, c.type, "=")
    return c.value


def draw_event(rng: random.Random, subscriptions: list[Subscription]) -> Event:
    """Half the time planted from one subscription, so that matches happen."""
    values: dict[str, Attribute] = {}
    if subscriptions and rng.random() < 0.5:
        for c in sorted_constraints(rng.choice(subscriptions)):
            values.setdefault(c.name, Attribute(c.name, c.type, satisfying_value(rng, c)))
    for name in NAMES:
        if name not in values and rng.random() < 0.4:
            type_ = USUAL_TYPE[name] if rng.random() < 0.8 else rng.choice(TYPES)
            values[name] = Attribute(name, type_, draw_value(rng, type_, "="))
    return Event(tuple(values[n] for n in sorted(values)))


# --- the kinds -------------------------------------------------------------------------------

FILTER_TEXTS = (
    'price > 8.30 and symbol prefix "OT"', "price:float > 8", "vol:int any", 'exchange wildcard "N*SE"',
    "x = 1 and x = 1", "b = true and b != false", "`odd name` = 1", 'x:string = "a\\"b\\\\c"', "x = -0.0",
    "x = 9223372036854775807", 'x contains ""', 'x wildcard "*"', "x >= 1e3",
    # errors: the column names where
    "", "price >", "price => 8", "x = 9223372036854775808", 'x wildcard "a"', "x:int any 3", "x < true",
    'x = "unterminated', "x = nan", "x prefix 3", "x = 1 or y = 2",
)


def filter_cases(rng: random.Random) -> Iterator[dict]:
    texts = list(FILTER_TEXTS)
    for _ in range(60):
        s = draw_subscription(rng)
        text = format_filter(s)
        texts.append(text.replace(" and ", rng.choice([" and ", "  and\t", " and "])))
    for text in texts:
        try:
            s = parse_filter(text)
        except FilterError as exc:
            yield {"claim": "CLM-DATA-6", "input": {"filter": text}, "expected": {"error": True, "column": exc.column,
                                                                                  "message": exc.message}}
            continue
        yield {"claim": "CLM-DATA-6", "input": {"filter": text},
               "expected": {"normal_form": format_filter(s), "constraints": filter_to_json(s)}}


def matching_cases(rng: random.Random) -> Iterator[dict]:
    pinned = list(STRING_EDGE_CASES) + list(MIXED_EDGE_CASES)
    drawn = []
    for _ in range(150):
        subs = [(f"s{i}", draw_subscription(rng)) for i in range(rng.randint(1, 6))]
        if rng.random() < 0.1:
            subs.append((f"s{len(subs)}", Subscription()))
        drawn.append((subs, [draw_event(rng, [s for _, s in subs]) for _ in range(rng.randint(1, 5))]))
    for subs, events in pinned + drawn:
        results = semantics.match_batch(subs, events)
        yield {"claim": "CLM-ENG-1", "input": {"subscriptions": [subscription_to_json(sid, s) for sid, s in subs],
                                               "events": [event_to_json(f"e{i}", e) for i, e in enumerate(events)]},
               "expected": {"results": [{"event": f"e{i}", "subscriptions": sorted(ids)} for i, ids in enumerate(results)]}}


def covering_cases(rng: random.Random) -> Iterator[dict]:
    for _ in range(120):
        name = rng.choice(NAMES)
        type_ = USUAL_TYPE[name]
        general, specific = draw_constraint(rng, name, type_), draw_constraint(rng, name, type_)
        yield {"claim": "CLM-COV-3", "input": {"general": constraint_to_json(general), "specific": constraint_to_json(specific)},
               "expected": {"covers": model_covering.covers_constraint(general, specific),
                            "by_rules": model_covering.covers_by_rules(general, specific)}}
    for _ in range(80):
        wide, narrow = draw_subscription(rng, 2), draw_subscription(rng, 3)
        if rng.random() < 0.3:
            narrow = Subscription(narrow.constraints | wide.constraints)  # covered
        yield {"claim": "CLM-COV-6", "input": {"general": filter_to_json(wide), "specific": filter_to_json(narrow)},
               "expected": {"covers": model_covering.covers_subscription(wide, narrow)}}


def summary_cases(rng: random.Random) -> Iterator[dict]:
    for _ in range(80):
        subs = [(f"s{i}", draw_subscription(rng)) for i in range(rng.randint(1, 6))]
        reference = model_summaries.reference_summary(subs, "none")
        for event in [draw_event(rng, [s for _, s in subs]) for _ in range(rng.randint(1, 3))]:
            yield {"claim": "CLM-SUM-2", "input": {"subscriptions": [subscription_to_json(sid, s) for sid, s in subs],
                                                   "event": event_to_json("e", event)},
                   "expected": {"candidates": sorted(model_summaries.summary_match(reference, event)),
                                "exact": semantics.matching_ids(subs, event)}}


def state_json(state: model_strawman.BrokerState) -> dict:
    return {"id": state.id, "neighbors": sorted(state.neighbors), "clients": sorted(state.clients),
            "table": sorted(([n, filter_to_json(f)] for n, f in state.table), key=json.dumps)}


def messages_json(messages) -> list:
    return sorted(([dst, kind, filter_to_json(f)] for dst, kind, f in messages), key=json.dumps)


def strawman_cases(rng: random.Random) -> Iterator[dict]:
    pool = [draw_subscription(rng, 2) for _ in range(4)]
    for _ in range(200):
        brokers = set(rng.sample([1, 2, 3], rng.randint(0, 3)))
        clients = set(rng.sample([CLIENT_BASE, CLIENT_BASE + 1], rng.randint(0, 2)))
        neighbors = brokers | clients
        table = frozenset((n, f) for n in neighbors for f in pool if rng.random() < 0.3)
        state = model_strawman.BrokerState(0, frozenset(neighbors), frozenset(clients), table)
        kind = rng.choice(["SUB", "SUB", "UNSUB", "UNSUB", "REMOVE-LINK", "ADD-LINK", "EVENT"])
        n = rng.choice(sorted(neighbors) + [4]) if kind != "ADD-LINK" else rng.choice([4, 5, CLIENT_BASE + 2])
        if kind in ("SUB", "UNSUB"):
            f = rng.choice(pool)
            after, sent = (model_strawman.on_sub if kind == "SUB" else model_strawman.on_unsub)(state, n, f)
            message = {"kind": kind, "from": n, "filter": filter_to_json(f)}
        elif kind == "REMOVE-LINK":
            after, sent = model_strawman.on_remove_link(state, n)
            message = {"kind": kind, "neighbor": n}
        elif kind == "ADD-LINK":
            after, sent = model_strawman.on_add_link(state, n, n >= CLIENT_BASE)
            message = {"kind": kind, "neighbor": n, "client": n >= CLIENT_BASE}
        else:
            event = draw_event(rng, pool)
            targets = model_strawman.event_targets(state, n, event)
            yield {"claim": "CLM-NET-6", "input": {"state": state_json(state), "message": {"kind": kind, "from": n,
                                                                                            "event": event_to_json("e", event)}},
                   "expected": {"targets": sorted(targets)}}
            continue
        yield {"claim": "CLM-NET-6", "input": {"state": state_json(state), "message": message},
               "expected": {"state": state_json(after), "messages": messages_json(sent)}}


def cache_cases(rng: random.Random) -> Iterator[dict]:
    for policy in model_caching.POLICIES:
        for _ in range(30):
            capacity = rng.randint(1, 5)
            messages = [f"m{i}" for i in range(capacity + 2)]
            now, ops = 0.0, []
            for _ in range(rng.randint(capacity + 2, 30)):
                kind = rng.choice(["insert", "insert", "hit", "unsubscribe", "advance"])
                if kind == "advance":
                    now += rng.choice([0.0, 0.5, 1.0, 2.0])
                    ops.append({"op": "advance", "time": now})
                elif kind == "insert":
                    ops.append({"op": "insert", "message": rng.choice(messages), "time": now})
                else:
                    ops.append({"op": kind, "matching": rng.sample(messages, rng.randint(1, 3)), "time": now})
            cache, evictions = model_caching.empty_cache(policy, capacity), []
            for op in ops:
                cache, evicted = apply_to_reference(cache, op)
                evictions.append(evicted)
            order = model_caching.order(cache)
            yield {"claim": "CLM-CACHE-1", "input": {"policy": policy, "capacity": capacity, "operations": ops},
                   "expected": {"evictions": evictions, "order": order,
                                "metadata": {m: model_caching.metadata(cache, m) for m in order}}}


class VectorError(SubsumError):
    """A vectors folder that cannot be written or read (exit 2)."""


GENERATORS: dict[str, Callable[[random.Random], Iterator[dict]]] = {
    "filters": filter_cases, "matching": matching_cases, "covering": covering_cases, "summaries": summary_cases,
    "strawman": strawman_cases, "caches": cache_cases,
}


def write_vectors(folder: Path, seed: int = 0) -> dict[str, int]:
    """Write one file per kind into `folder`; the number of cases of each.
    Every file is generated and every path checked before the first is written."""
    if folder.exists() and not folder.is_dir():
        raise VectorError(f"{folder}: not a folder")
    docs: dict[str, dict] = {}
    for kind, generate in GENERATORS.items():
        rng = random.Random(f"{kind}-{seed}")
        cases = [{"id": f"{kind}-{i:04d}", **case} for i, case in enumerate(generate(rng))]
        docs[kind] = {"format": FORMAT, "spec_version": SPEC_VERSION, "kind": kind, "seed": seed, "cases": cases}
    folder.mkdir(parents=True, exist_ok=True)
    for kind in docs:
        check_output_path(folder / f"{kind}.json")
    for kind, doc in docs.items():
        write_lines_atomically(folder / f"{kind}.json", [json.dumps(doc, indent=1, ensure_ascii=True)])
    return {kind: len(doc["cases"]) for kind, doc in docs.items()}
