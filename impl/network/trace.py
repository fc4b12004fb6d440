"""The simulator's trace file (DEF-NET-9, spec/05-network.md): one JSON
object per line, in time order. The Spark trace checker (`subsum trace-check`) reads it.

    {"time": t, "kind": "subscribe" | "unsubscribe", "client": c, "broker": b, "filter": "x > 1"}
    {"time": t, "kind": "publish", "event": e, "client": c, "broker": b, "attributes": {"x": 3}}
    {"time": t, "kind": "deliver", "event": e, "client": c, "broker": b}
    {"time": t, "kind": "link", "a": a, "b": b, "up": true | false}
    {"time": t, "kind": "crash" | "leave" | "join", "broker": b}

Filters are written in the filter syntax (the empty filter as ""); event
attributes as the event attributes of spec/formats.md.
"""

from __future__ import annotations

import json
from pathlib import Path

from subsum.core.filters import format_filter
from subsum.core.outputs import write_lines_atomically


def record_json(record: dict) -> dict:
    out = dict(record)
    if "filter" in out:
        f = out["filter"]
        out["filter"] = format_filter(f) if f.constraints else ""
    if "attributes" in out:
        out["attributes"] = {a.name: a.value for a in out["attributes"].attributes}
    return out


def write_trace(trace: list[dict], path: str | Path) -> None:
    """Write the trace as JSONL, atomically."""
    write_lines_atomically(path, (json.dumps(record_json(r), ensure_ascii=False) for r in trace))
