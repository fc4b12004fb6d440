"""The schedule replay (`subsum-replay`, spec/formats.md "Replays"), as a
JSON Schema, and the checks a schema cannot state: the topology is a tree,
and every client and broker an operation names can exist by then.

`validate(doc, path)` raises ReplayError naming the field, before anything
runs, so that a tampered file is bad input (exit 2) and never passes for an
implementation that crashed (exit 1).
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from subsum.conformance.replays.documents import SCHEDULE, ReplayError, check_schema
from subsum.conformance.schedules.runs import filter_of
from subsum.core.errors import InputError
from subsum.core.schema import StrictValidator
from subsum.impl.network import CLIENT_BASE

#: Bounds on what a replay file may ask for: far above what `fuzz reconfig`
#: writes (at most 2000 brokers, a few hundred operations), and low enough
#: that replaying any file takes bounded time and memory.
MAX_BROKERS = 10_000
MAX_CLIENTS = 100_000
MAX_OPERATIONS = 100_000
MAX_JOIN_CLIENTS = 1_000

_INT = {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}
_PAIR = {"type": "array", "items": _INT, "minItems": 2, "maxItems": 2}
_MS = {"type": "number", "minimum": 0, "maximum": 1e12}
_SHARE = {"type": "number", "minimum": 0, "exclusiveMaximum": 1}
_CLIENT = {"type": "integer", "minimum": CLIENT_BASE, "maximum": CLIENT_BASE + MAX_CLIENTS + MAX_OPERATIONS * MAX_JOIN_CLIENTS}
_NAME = {"type": "string", "minLength": 1, "maxLength": 1000}
_SCALAR = {"anyOf": [{"type": "boolean"}, {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1},
                     {"type": "string", "maxLength": 100_000}]}


def _op(kind: str, **fields: dict) -> dict:
    return {"if": {"properties": {"op": {"const": kind}}},
            "then": {"properties": {"op": True, **fields}, "required": ["op", *fields], "additionalProperties": False}}


OPERATION = {
    "type": "object",
    "required": ["op"],
    "properties": {"op": {"enum": ["subscribe", "unsubscribe", "publish", "request", "deliver", "quiesce", "fire", "timeout", "lose-flush",
                                   "swap", "break", "add", "crash", "leave", "join"]}},
    "allOf": [
        _op("subscribe", client=_CLIENT, filter={"type": "string", "maxLength": 100_000}),
        _op("unsubscribe", client=_CLIENT, filter={"type": "string", "maxLength": 100_000}),
        _op("publish", client=_CLIENT, attributes={"type": "object", "maxProperties": 1000, "additionalProperties": _SCALAR,
                                                   "propertyNames": _NAME}),
        _op("request", client=_CLIENT, filter={"type": "string", "maxLength": 100_000}),
        _op("deliver", choices={"type": "array", "items": _INT, "maxItems": 10_000}),
        _op("quiesce"),
        _op("fire", choice=_INT),
        _op("timeout"),
        _op("lose-flush", choice=_INT),
        {"if": {"properties": {"op": {"const": "swap"}}},
         "then": {"properties": {"op": True, "old": _PAIR, "pick": {"type": "array", "items": _SHARE, "minItems": 2, "maxItems": 2},
                                 "gap": _MS, "lose": {"type": "boolean"}},
                  "required": ["op", "old", "pick", "lose"], "additionalProperties": False}},
        _op("break", link=_PAIR, lose={"type": "boolean"}),
        _op("add", link=_PAIR),
        _op("crash", broker=_INT, lose={"type": "boolean"}),
        _op("leave", broker=_INT, lose={"type": "boolean"}),
        _op("join", attach=_INT, clients={"type": "integer", "minimum": 0, "maximum": MAX_JOIN_CLIENTS}),
    ],
}

SCHEMA = {
    "type": "object",
    "required": ["format", "version", "protocol", "seed", "topology", "schedule", "violation"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": SCHEDULE},
        "version": {"const": 1, "type": "integer"},
        "protocol": {"type": "string"},
        "defer_timeout": _MS,
        "sub_timeout": _MS,
        "delay": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1e6}, "minItems": 2, "maxItems": 2},
        "seed": {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1},
        "topology": {
            "type": "object",
            "required": ["kind", "brokers", "links", "clients"],
            "additionalProperties": False,
            "properties": {
                "kind": {"type": "string", "maxLength": 4096},
                "brokers": {"type": "integer", "minimum": 1, "maximum": MAX_BROKERS},
                "links": {"type": "array", "items": _PAIR, "maxItems": MAX_BROKERS},
                "clients": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": MAX_CLIENTS},
                            "maxItems": MAX_BROKERS},
            },
        },
        "schedule": {"type": "array", "items": OPERATION, "maxItems": MAX_OPERATIONS},
        "shrunk_from": {"type": "integer", "minimum": 0},
        "command": {"type": "string", "maxLength": 4096},
        "not_checked": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string", "maxLength": 100},
                                                                     "maxItems": 100}, "maxProperties": 10},
        "violation": {
            "type": "object",
            "required": ["claim", "message", "step"],
            "additionalProperties": False,
            "properties": {"claim": {"type": "string", "maxLength": 100}, "message": {"type": "string"},
                           "step": {"type": "integer", "minimum": 0}},
        },
    },
}

_VALIDATOR = StrictValidator(SCHEMA)


def validate(doc: object, path: str | Path) -> None:
    """Raise ReplayError (an InputError) at the first field that is wrong."""
    doc = check_schema(path, doc, _VALIDATOR, {"schedule": (MAX_OPERATIONS, "operations")})
    if "delay" in doc and doc["delay"][0] > doc["delay"][1]:
        raise ReplayError(path, "delay", f"the link delay range {doc['delay']} must have low <= high")
    _check_topology(doc["topology"], path)
    _check_schedule(doc["topology"], doc["schedule"], path)


def _check_topology(topology: dict, path: str | Path) -> None:
    n = topology["brokers"]
    links = topology["links"]
    if len(topology["clients"]) != n:
        raise ReplayError(path, "topology.clients", f"expected one client count per broker ({n}), got {len(topology['clients'])}")
    if sum(topology["clients"]) > MAX_CLIENTS:
        raise ReplayError(path, "topology.clients", f"{sum(topology['clients']):,} clients; a replay holds at most {MAX_CLIENTS:,}")
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    for i, (a, b) in enumerate(links):
        if not (a < n and b < n) or a == b:
            raise ReplayError(path, f"topology.links[{i}]", f"link ({a}, {b}) needs two distinct brokers of 0 .. {n - 1}")
        graph.add_edge(a, b)
    if len(links) != n - 1 or not nx.is_tree(graph):
        raise ReplayError(path, "topology.links", f"the links must form a tree over the {n} brokers (a path, no cycle)")


def _check_schedule(topology: dict, schedule: list, path: str | Path) -> None:
    """Every client and broker an operation names exists by then (joins add both)."""
    brokers, clients = topology["brokers"], sum(topology["clients"])
    for i, op in enumerate(schedule):
        kind = op["op"]
        if "client" in op and op["client"] >= CLIENT_BASE + clients:
            raise ReplayError(path, f"schedule[{i}].client", f"client {op['client']} does not exist (clients are "
                              f"{CLIENT_BASE} .. {CLIENT_BASE + clients - 1} at this step)")
        for key in ("broker", "attach"):
            if key in op and op[key] >= brokers:
                raise ReplayError(path, f"schedule[{i}].{key}", f"broker {op[key]} does not exist (brokers are 0 .. {brokers - 1})")
        for key in ("link", "old"):
            if key in op and max(op[key]) >= brokers:
                raise ReplayError(path, f"schedule[{i}].{key}", f"broker {max(op[key])} does not exist (brokers are 0 .. {brokers - 1})")
        if "filter" in op:
            try:
                filter_of(op["filter"])
            except (InputError, ValueError) as exc:
                raise ReplayError(path, f"schedule[{i}].filter", str(exc)) from None
        if kind == "join":
            brokers += 1
            clients += op["clients"]
