"""How `subsum bench matching` measures one engine on one workload: in a
forked child process, so its peak resident memory is its own (it
includes the interpreter and the workload, which the child inherits).
The child builds the engine (timed apart), matches the batch `repeat`
times and sends back the times and a digest of the matching (event,
subscription) pairs, which the parent compares across engines and with
the reference model.

What is timed: `match_batch(events)` for the object engines (the events
already built), `match_columns(batch)` for the vectorized and compiled
engines, and the SQL query plus fetching its result for DuckDB (tables
already loaded). Building indexes and loading tables is reported as build
time: the object engines from Subscription objects, the vectorized and
compiled engines in bulk from the generator's subscription columns
(`from_columns`). The first match in the child is timed apart (`first_call_s`): for
the compiled engine it includes loading its kernels from the disk cache,
or compiling them when there is none. The `repeat` runs after it are the
steady state. Where the child is not `warm` (the scaling run, whose points
are long), there is no extra run: the first call is one of the `repeat`.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import resource
import time

import numpy as np

from subsum.bench.peer import DuckDBPeer
from subsum.impl.matching import ENGINES, make_engine
from subsum.bench.matching.workload import Workload
from subsum.model.semantics import match_batch


#: the engines built from subscription columns and matched on a columnar batch
COLUMNAR = ("vectorized", "compiled")


def digest(ev: np.ndarray, slot: np.ndarray, n_subs: int) -> str:
    keys = np.sort(ev.astype(np.int64) * max(n_subs, 1) + slot.astype(np.int64))
    return hashlib.sha256(keys.tobytes()).hexdigest()[:16]


def pairs_from_sets(results: list[set[str]], slot_of: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    ev = [i for i, ids in enumerate(results) for _ in ids]
    slot = [slot_of[s] for ids in results for s in ids]
    return np.array(ev, np.int64), np.array(slot, np.int64)


def _child(workload: Workload, events, engine: str, repeat: int, warm: bool, first: int, conn) -> None:
    """Build one engine, match once more than `repeat` times when `warm`
    (the first run timed apart), else `repeat` times; send the figures back,
    with the digest of the pairs of the `first` events when asked."""
    try:
        start_rss = resident_mib()
        n_subs = len(workload.columns)
        start = time.perf_counter()
        if engine == "duckdb":
            peer = DuckDBPeer(workload.subscriptions)
            peer.load_events(workload.batch)
            run = peer.match
            stats = None
        else:
            if engine in COLUMNAR:  # built in bulk from the generator's columns, as a columnar reader would
                matcher = ENGINES[engine].from_columns(workload.columns, count_distinct=False)
            else:
                matcher = make_engine(engine, workload.subscriptions, count_distinct=False)
            matcher.prepare()
            stats = matcher.stats
            if engine in COLUMNAR:
                run = lambda: matcher.match_columns(workload.batch)  # noqa: E731
            else:
                slot_of = {sid: j for j, (sid, _) in enumerate(workload.subscriptions)}
                run = lambda: pairs_from_sets(matcher.match_batch(events), slot_of)  # noqa: E731
        build = time.perf_counter() - start
        times = []
        for _ in range(repeat + warm):
            t0 = time.perf_counter()
            ev, slot = run()
            times.append(time.perf_counter() - t0)
        conn.send({
            "build_s": build, "first_call_s": times[0], "times": times[1:] if warm else times, "matches": int(len(ev)), "digest": digest(ev, slot, n_subs),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "start_rss_mib": start_rss,
            "index_lookups": stats.index_lookups // (repeat + warm) if stats else "",
            "counter_increments": stats.counter_increments // (repeat + warm) if stats else "",
            **({"digest_first": digest(ev[ev < first], slot[ev < first], n_subs)} if first else {}),
        })
    except BaseException as exc:  # report, never hang the parent
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


def resident_mib() -> float:
    """This process's resident memory now, in MiB (Linux /proc; NaN elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**20
    except (OSError, ValueError, IndexError):
        return float("nan")


def run_in_child(start_method: str, target, args: tuple) -> dict:
    """Run target(*args, conn) in a child process and return the one dict it sends
    on conn, or {"error": ...} when the child dies first (out of memory, usually)."""
    ctx = multiprocessing.get_context(start_method)
    parent, child = ctx.Pipe(duplex=False)
    process = ctx.Process(target=target, args=(*args, child))
    process.start()
    child.close()
    try:
        result = parent.recv()
    except EOFError:
        result = {"error": f"the child process died (exit code {process.exitcode}); out of memory?"}
    process.join()
    return result


def measure(workload: Workload, events, engine: str, repeat: int, warm: bool = True, first: int = 0) -> dict:
    """One engine on one workload, in a forked child (module docstring);
    `first`: also the digest of the matching pairs of the first events."""
    return run_in_child("fork", _child, (workload, events, engine, repeat, warm, first))


def measure_model(workload: Workload, events, n: int) -> dict:
    """The reference model on the first n events (it is far too slow for all)."""
    slot_of = {sid: j for j, (sid, _) in enumerate(workload.subscriptions)}
    subset = events[:n]
    t0 = time.perf_counter()
    results = match_batch(workload.subscriptions, subset)
    elapsed = time.perf_counter() - t0
    ev, slot = pairs_from_sets(results, slot_of)
    return {"seconds": elapsed, "events": len(subset), "digest": digest(ev, slot, len(workload.subscriptions)),
            "matches": int(len(ev))}
