"""File to file at seed 001's default point (`subsum bench matching`): the
workload written as JSONL, then matched by a fresh process per engine, as
a user would run it, and timed from outside.

For subsum's engines the process is `python -m subsum match --engine E
--json T`: its timings split the work into reading the files (parsing and
validating every subscription and event), building the index, matching and
writing the result lines; what the wall time adds to them is starting the
interpreter and importing (for `compiled`, also loading its kernels from
numba's disk cache). `compiled` also runs once with an empty cache
(NUMBA_CACHE_DIR pointed at a fresh folder), so the row shows what the
first process after an install pays to compile.

DuckDB has no reader of subsum's files, so its process (`python -m
subsum.bench.matching.files`) reads them with subsum's reader, loads the
tables, runs the peer's query and writes the same lines. Every process's
output is hashed: the digests must agree.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from subsum.bench.peer import DuckDBPeer
from subsum.core.jsonio import event_to_json, match_result_lines, read_events, read_subscriptions, subscription_to_json
from subsum.core.outputs import write_lines_atomically
from subsum.impl.matching.columnar.batch import ColumnarBatch
from subsum.bench.matching.workload import Workload

FILE_ENGINES = ("vectorized", "compiled", "duckdb")
PHASES = ("read_seconds", "build_seconds", "match_seconds", "write_seconds")
FILE_FIELDS = ("engine", "wall_s", "start_s", "read_s", "build_s", "match_s", "write_s", "digest", "error")


def write_workload(workload: Workload, directory: Path) -> tuple[Path, Path]:
    """subscriptions.jsonl and events.jsonl (event IDs e0, e1, …) in `directory`."""
    subs, events = directory / "subscriptions.jsonl", directory / "events.jsonl"
    subs.write_text("".join(json.dumps(subscription_to_json(sid, s)) + "\n" for sid, s in workload.subscriptions))
    events.write_text("".join(json.dumps(event_to_json(f"e{i}", e)) + "\n" for i, e in enumerate(workload.events())))
    return subs, events


def _command(engine: str, subs: Path, events: Path, output: Path, timings: Path) -> list[str]:
    if engine == "duckdb":
        return [sys.executable, "-m", "subsum.bench.matching.files", str(subs), str(events), str(output), str(timings)]
    return [sys.executable, "-m", "subsum", "match", "--engine", engine, "--subscriptions", str(subs),
            "--events", str(events), "--output", str(output), "--json", str(timings)]


def file_to_file(engine: str, subs: Path, events: Path, directory: Path, cold_cache: bool = False) -> dict:
    """Run one engine's process on the files; its wall time, its phases, the
    rest (interpreter start and imports) and a digest of the lines written."""
    label = f"{engine}-cold" if cold_cache else engine
    output, timings = directory / f"{label}.out.jsonl", directory / f"{label}.timings.json"
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="subsum-numba-cache-") as empty_cache:
        if cold_cache:
            env["NUMBA_CACHE_DIR"] = empty_cache
        started = time.perf_counter()
        done = subprocess.run(_command(engine, subs, events, output, timings), env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
    if done.returncode != 0:
        return {"engine": label, "error": f"exit {done.returncode}: {done.stderr.strip()[-300:]}"}
    phases = json.loads(timings.read_text())
    result = {"engine": label, "wall_s": round(wall, 4)}
    result.update({p.replace("_seconds", "_s"): round(phases[p], 4) for p in PHASES})
    result["start_s"] = round(wall - sum(phases[p] for p in PHASES), 4)
    result["digest"] = hashlib.sha256(output.read_bytes()).hexdigest()[:16]
    return result


def run_files(workload: Workload, report: Callable[[str], None], cold: bool = True) -> list[dict]:
    """Every FILE_ENGINES process on the workload's files (in a scratch
    folder, removed afterwards), plus `compiled` with an empty kernel cache
    when `cold`; one row each, reported as it finishes."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="subsum-files-") as scratch:
        directory = Path(scratch)
        subs, events = write_workload(workload, directory)
        runs = [(engine, False) for engine in FILE_ENGINES] + ([("compiled", True)] if cold else [])
        for engine, cold_cache in runs:
            row = file_to_file(engine, subs, events, directory, cold_cache)
            rows.append(row)
            if "error" in row:
                report(f"  {row['engine']:>14} file to file: ERROR {row['error']}")
            else:
                report(f"  {row['engine']:>14} file to file: {row['wall_s']:.2f} s (start {row['start_s']:.2f}, "
                       f"read {row['read_s']:.2f}, build {row['build_s']:.2f}, match {row['match_s']:.3f}, "
                       f"write {row['write_s']:.3f})")
    return rows


def files_disagree(rows: list[dict]) -> str | None:
    """A message when the processes did not all write the same bytes (or one failed), else None."""
    digests = {r["engine"]: r.get("digest", r.get("error")) for r in rows}
    if len(set(digests.values())) == 1:
        return None
    return f"file to file at the default point: {digests}"


def _duckdb_file_to_file(subs_path: str, events_path: str, output_path: str, timings_path: str) -> None:
    """The DuckDB process: subsum's reader, the peer's tables and query, subsum's writer."""
    reading = time.perf_counter()
    pairs = [(s.id, s.subscription) for s in read_subscriptions(subs_path)]
    events = read_events(events_path)
    started = time.perf_counter()
    peer = DuckDBPeer(pairs)
    peer.load_events(ColumnarBatch.from_events([e.event for e in events]))
    built = time.perf_counter()
    ev, sub = peer.match()
    finished = time.perf_counter()
    matched: list[list[str]] = [[] for _ in events]
    for e, s in zip(ev.tolist(), sub.tolist()):
        matched[e].append(peer.ids[s])
    write_lines_atomically(output_path, list(match_result_lines((e.id, sorted(ids)) for e, ids in zip(events, matched))))
    Path(timings_path).write_text(json.dumps({
        "read_seconds": started - reading, "build_seconds": built - started, "match_seconds": finished - built,
        "write_seconds": time.perf_counter() - finished}))


if __name__ == "__main__":
    _duckdb_file_to_file(*sys.argv[1:5])
