"""Each replay read back with every field checked (spec/formats.md,
"Replays"): a wrong field is bad input (`ReplayError`, exit 2) before
anything runs, so a tampered replay never passes for an implementation
that failed (exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import networkx as nx

from subsum.conformance.replays import schedule_schema
from subsum.conformance.replays.documents import CACHE, CASE_FILE, CLIENT_SERVER, MATCHING, SCHEDULE, ReplayError, check_schema, read_document
from subsum.core.jsonio import JsonObject, RecordError
from subsum.core.names import CACHE_POLICIES, REQUEST_POLICIES
from subsum.core.schema import StrictValidator
from subsum.impl.caching.replay import parse_operation, read_operations
from subsum.impl.network.sim import DEFER_TIMEOUT, SUB_TIMEOUT
from subsum.conformance.schedules.runs import DELAY

#: Bounds on a replay, far above what the checks write, so that a replay runs in bounded time and memory.
MAX_CAPACITY = 1_000_000
MAX_REQUESTS = 100_000
MAX_OPERATIONS = 100_000


@attrs.frozen
class ScheduleReplay:
    """A broker schedule and the violation it showed (`subsum-replay`)."""

    path: str
    protocol: str  # a built-in name, a plug-in, or "external" (a `subsum conform broker` run)
    defer_timeout: float
    sub_timeout: float
    seed: int
    topology: dict[str, Any]
    schedule: list[dict[str, Any]]
    violation: dict[str, Any]  # the claim, message and step recorded
    command: str | None = None  # the external broker's command, recorded (never run because the file says so)
    shrunk_from: int | None = None
    delay: tuple[float, float] = DELAY  # the links' delay range, ms (`subsum explore` writes 0, 0)
    not_checked: dict[str, list[str]] | None = None  # what the `conform broker` run did not check (DEF-PLUG-7)


@attrs.frozen
class ClientServerReplay:
    """Client-server requests on which the simulator and the reference differed (`subsum-client-server-replay`)."""

    path: str
    brokers: int
    links: list[tuple[int, int]]
    servers: dict[str, int]
    policy: str
    cache_policy: str
    capacity: int
    requests: list[tuple[int, str]]

    def case(self) -> tuple:
        """The check's case (conformance/checks/caching/client_server.py `first_difference`)."""
        return self.brokers, self.links, self.servers, self.policy, self.cache_policy, self.capacity, self.requests


@attrs.frozen
class CacheReplay:
    """Operations on one cache (`subsum-cache-replay`, or a `subsum cache replay` operations file)."""

    path: str
    policy: str  # a built-in policy or a plug-in, run beside the reference of the policy it names
    capacity: int | None
    operations: list[dict[str, Any]]


@attrs.frozen
class MatchingReplay:
    """A replay directory of `subsum conform matching` (`subsum-conform-matching`)."""

    path: str
    engine: dict[str, Any]  # the engine it ran: {"command", "persistent", "timeout"} or {"engine", "timeout"}
    seed: int
    failure: dict[str, str]  # the failure recorded: kind and message
    found_at: str | None = None  # "seed S, workload I" or "seed S, pinned NAME" (issue 55)
    not_checked: dict[str, list[str]] | None = None  # what the run's --unsupported left out (DEF-PLUG-7)


def load_schedule(path: str | Path) -> ScheduleReplay:
    doc = read_document(path)
    if not isinstance(doc, dict) or doc.get("format") != SCHEDULE:
        raise ReplayError(path, "format", f"expected {SCHEDULE!r}")
    schedule_schema.validate(doc, path)
    if doc["violation"]["step"] > len(doc["schedule"]):  # len(schedule) is the closing quiesce; nothing comes after it
        raise ReplayError(path, "violation.step", f"{doc['violation']['step']} is past the schedule's {len(doc['schedule'])} operations "
                                                  "and its closing quiesce")
    return ScheduleReplay(str(path), doc["protocol"], float(doc.get("defer_timeout", DEFER_TIMEOUT)),
                          float(doc.get("sub_timeout", SUB_TIMEOUT)), doc["seed"], doc["topology"], doc["schedule"], doc["violation"],
                          doc.get("command"), doc.get("shrunk_from"), _delay(doc), doc.get("not_checked"))


def _delay(doc: dict) -> tuple[float, float]:
    low, high = doc.get("delay", DELAY)
    return float(low), float(high)


_PAIR_OF_BROKERS = {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2}
CLIENT_SERVER_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["format", "version", "brokers", "links", "servers", "policy", "cache_policy", "capacity", "requests"],
    "properties": {
        "format": {"const": CLIENT_SERVER}, "version": {"type": "integer", "const": 1},
        "brokers": {"type": "integer", "minimum": 1, "maximum": 10_000},
        "links": {"type": "array", "items": _PAIR_OF_BROKERS, "maxItems": 9_999},
        "servers": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}, "maxProperties": 100_000},
        "policy": {"enum": list(REQUEST_POLICIES)}, "cache_policy": {"enum": list(CACHE_POLICIES)},
        "capacity": {"type": "integer", "minimum": 1, "maximum": MAX_CAPACITY},
        "requests": {"type": "array", "maxItems": MAX_REQUESTS, "items": {
            "type": "array", "minItems": 2, "maxItems": 2, "prefixItems": [{"type": "integer", "minimum": 0}, {"type": "string"}]}},
    },
}
_CLIENT_SERVER_VALIDATOR = StrictValidator(CLIENT_SERVER_SCHEMA)


def load_client_server(path: str | Path) -> ClientServerReplay:
    """Its structure checked by the schema, then what a schema cannot state:
    the links form a tree, and every broker and message named exists."""
    doc = check_schema(path, read_document(path), _CLIENT_SERVER_VALIDATOR, {"requests": (MAX_REQUESTS, "requests")})
    n, links, servers, requests = doc["brokers"], doc["links"], doc["servers"], doc["requests"]
    for i, (a, b) in enumerate(links):
        if not (a < n and b < n):
            raise ReplayError(path, f"links[{i}]", f"link ({a}, {b}) names a broker outside 0 … {n - 1}")
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(tuple(x) for x in links)
    if not nx.is_tree(graph):
        raise ReplayError(path, "links", f"the links must form a tree over the {n} brokers")
    for message, broker in servers.items():
        if broker >= n:
            raise ReplayError(path, f"servers.{message}", f"broker {broker} is outside 0 … {n - 1}")
    for i, (broker, message) in enumerate(requests):
        if broker >= n or message not in servers:
            raise ReplayError(path, f"requests[{i}]", f"expected a broker of 0 … {n - 1} and a message of 'servers', got [{broker}, {message!r}]")
    return ClientServerReplay(str(path), n, [(a, b) for a, b in links], dict(servers), doc["policy"], doc["cache_policy"], doc["capacity"],
                              [(b, m) for b, m in requests])


CACHE_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["format", "version", "policy", "capacity", "operations"],
    "properties": {
        "format": {"const": CACHE}, "version": {"type": "integer", "const": 1},
        "policy": {"type": "string", "minLength": 1, "maxLength": 1000},
        "capacity": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_CAPACITY}, {"type": "null"}]},
        "operations": {"type": "array", "maxItems": MAX_OPERATIONS, "items": {"type": "object"}},
    },
}
_CACHE_VALIDATOR = StrictValidator(CACHE_SCHEMA)


def load_cache(path: str | Path) -> CacheReplay:
    """Its structure checked by the schema; each operation as a line of a
    `subsum cache replay` file is (the same reader, its time never going back)."""
    doc = check_schema(path, read_document(path), _CACHE_VALIDATOR, {"operations": (MAX_OPERATIONS, "operations")})
    operations, clock = [], 0.0
    for i, obj in enumerate(doc["operations"]):
        try:
            op = parse_operation(JsonObject(obj), clock)
        except RecordError as exc:
            raise ReplayError(path, f"operations[{i}].{exc.field}" if exc.field else f"operations[{i}]", exc.message) from None
        clock = op["time"]
        operations.append(op)
    return CacheReplay(str(path), doc["policy"], doc["capacity"], operations)


def load_cache_operations(path: str | Path, policy: str, capacity: int | None) -> CacheReplay:
    """A `subsum cache replay` operations file (JSONL), with the policy and capacity it runs under."""
    return CacheReplay(str(path), policy, capacity, [op for _, op in read_operations(path)])


def load_matching(folder: str | Path) -> MatchingReplay:
    """A replay directory: its `case.json` checked field by field, and its two inputs present."""
    folder = Path(folder)
    path = folder / CASE_FILE
    case = read_document(path)

    def wrong(field: str, expected: str, got: object) -> ReplayError:
        return ReplayError(path, field, f"expected {expected}, got {json.dumps(got)[:80]}")

    if not isinstance(case, dict) or case.get("format") != MATCHING:
        raise ReplayError(path, "format", f"expected {MATCHING!r}")
    if case.get("version") != 1 or isinstance(case.get("version"), bool):
        raise wrong("version", "1", case.get("version"))
    engine = case.get("engine")
    if not isinstance(engine, dict) or not isinstance(engine.get("command", engine.get("engine")), str):
        raise wrong("engine", '{"command": CMD, ...} or {"engine": NAME, ...}', engine)
    timeout = engine.get("timeout", 10.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0.001 <= timeout <= 3600:
        raise wrong("engine.timeout", "seconds, a number from 0.001 to 3600", timeout)
    if not isinstance(engine.get("persistent", False), bool):
        raise wrong("engine.persistent", "true or false", engine.get("persistent"))
    failure = case.get("failure", {})
    if not (isinstance(failure, dict) and all(isinstance(failure.get(k, ""), str) for k in ("kind", "message"))):
        raise wrong("failure", '{"kind": text, "message": text}', failure)
    seed = case.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise wrong("seed", "an integer", seed)
    found_at = case.get("found_at")
    if found_at is not None and not isinstance(found_at, str):
        raise wrong("found_at", "text", found_at)
    not_checked = case.get("not_checked")
    if not_checked is not None and not (isinstance(not_checked, dict) and all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in not_checked.values())):
        raise wrong("not_checked", '{"types": [names], "operators": [names], "features": [names]}', not_checked)
    for name in ("subscriptions.jsonl", "events.jsonl"):
        if not (folder / name).is_file():
            raise ReplayError(folder, None, f"{name} is missing")
    return MatchingReplay(str(folder), engine, seed, failure, found_at, not_checked)
