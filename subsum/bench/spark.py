"""`subsum bench spark`: the Spark engine beside the fastest in-process
engine (vectorized) and DuckDB, on one workload family, events from 10^4 up
to 10^7 and subscriptions from 10^3 to 10^5 (benchmarks/README.md).

The workload is generated with numpy, column-wise, so that 10^7 events
never become Python objects: 20 names (12 int in [0, 1000), 4 float with one
decimal in [0, 100), 4 string from a table of 500 words); each event holds 5
of them, each subscription 1 to 3 constraints: mostly `=`, and `>`, `<`,
`prefix` near the edges of the domains, so that an event satisfies a few
constraints, not hundreds (the counting plan's work is the number of
satisfied pairs; spec/07-pipeline.md, "Cost"). The same arrays feed the
vectorized engine (a ColumnarBatch), DuckDB (its tables), and Spark (a
Parquet file written by pyarrow, DEF-PIPE-1's schema).

Every engine runs in its own child process: in-process engines in a forked
one (as `bench matching`), Spark in a spawned one with a fresh JVM, so each
point's peak memory is its own. Spark's time covers reading the Parquet
inputs, matching, and writing the results as Parquet; the in-process
engines' time covers matching only (their input is already in memory), so
the comparison favours them.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from subsum.bench.matching_measure import measure, run_in_child
from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.core.filters import format_filter
from subsum.core.types import Constraint, Subscription
from subsum.impl.matching.columnar import Column, ColumnarBatch
from subsum.impl.matching.workload import Params, Workload
from subsum.impl.matching.subscription_columns import SubscriptionColumns
from subsum.impl.spark.session import get_session

N_NAMES = 20
NAME_TYPES = ["int"] * 12 + ["float"] * 4 + ["string"] * 4
NAMES = [f"a{k:02d}" for k in range(N_NAMES)]
PER_EVENT = 5
WORDS = 500


def _words(rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    out: dict[str, None] = {}
    while len(out) < WORDS:
        out["".join(rng.choice(letters, 6))] = None
    return list(out)


def generate(events: int, subscriptions: int, seed: int = 1):
    """(subscriptions as (id, Subscription), ColumnarBatch, words)."""
    rng = np.random.default_rng(seed)
    words = _words(rng)
    subs = []
    for j in range(subscriptions):
        constraints = []
        for k in rng.choice(N_NAMES, int(rng.integers(1, 4)), replace=False):
            name, type_ = NAMES[k], NAME_TYPES[k]
            roll = rng.random()
            if type_ == "int":
                op, value = ("=", int(rng.integers(0, 1000))) if roll < 0.6 else (
                    (">", int(rng.integers(990, 1000))) if roll < 0.8 else ("<", int(rng.integers(0, 10))))
            elif type_ == "float":
                op, value = ("=", round(float(rng.integers(0, 1000)) / 10, 1)) if roll < 0.5 else (
                    (">", 99.0 + float(rng.integers(0, 10)) / 10) if roll < 0.75 else ("<", float(rng.integers(0, 10)) / 10))
            else:
                word = words[int(rng.integers(0, WORDS))]
                op, value = ("=", word) if roll < 0.6 else ("prefix", word[:3])
            constraints.append(Constraint(name, type_, op, value))
        subs.append((f"s{j}", Subscription(frozenset(constraints))))
    # Event i holds names b, b+4, ..., b+16 with b = i's random base in [0, 4): five distinct names.
    base = rng.integers(0, 4, events)
    name_idx = (base[:, None] + 4 * np.arange(PER_EVENT)[None, :]).ravel()
    event_idx = np.repeat(np.arange(events, dtype=np.int64), PER_EVENT)
    types = np.array(NAME_TYPES)[name_idx]
    columns = {}
    for t in ("int", "float", "string", "bool"):
        mask = types == t
        n = int(mask.sum())
        if t == "int":
            values = rng.integers(0, 1000, n).astype(np.int64)
        elif t == "float":
            values = rng.integers(0, 1000, n).astype(np.float64) / 10
        elif t == "string":
            values = rng.integers(0, WORDS, n).astype(np.int64)
        else:
            values = np.zeros(0, np.bool_)
        columns[t] = Column(event_idx[mask], name_idx[mask].astype(np.int64), values)
    return subs, ColumnarBatch(events, list(NAMES), words, columns), words


def write_parquet(subs, batch, directory: Path) -> tuple[Path, Path]:
    """DEF-PIPE-1's Parquet files: events (id, attributes list<struct>) and subscriptions (id, filter)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = batch.n_events
    parts = []
    for t, col in batch.columns.items():
        if len(col):
            parts.append((t, col))
    event = np.concatenate([c.event for _, c in parts])
    order = np.argsort(event, kind="stable")
    event = event[order]
    name = np.concatenate([c.name for _, c in parts])[order]
    type_code = np.concatenate([np.full(len(c), k) for k, (_, c) in enumerate(parts)])[order]
    type_names = [t for t, _ in parts]

    names_arr = pa.array(np.array(batch.names, dtype=object)[name])
    types_arr = pa.array(np.array(type_names, dtype=object)[type_code])
    ints = pa.array(np.concatenate([c.value if t == "int" else np.zeros(len(c), np.int64) for t, c in parts])[order],
                    mask=(np.array(type_names)[type_code] != "int"))
    floats = pa.array(np.concatenate([c.value if t == "float" else np.zeros(len(c)) for t, c in parts])[order],
                      mask=(np.array(type_names)[type_code] != "float"))
    codes = np.concatenate([c.value if t == "string" else np.zeros(len(c), np.int64) for t, c in parts])[order]
    strings = pa.array(np.array(batch.strings, dtype=object)[codes], mask=(np.array(type_names)[type_code] != "string"))
    bools = pa.nulls(len(event), pa.bool_())
    structs = pa.StructArray.from_arrays([names_arr, types_arr, ints, floats, strings, bools],
                                         names=["name", "type", "int", "float", "string", "bool"])
    offsets = np.concatenate([[0], np.cumsum(np.bincount(event, minlength=n))]).astype(np.int32)
    attributes = pa.ListArray.from_arrays(pa.array(offsets), structs)
    ids = pa.array([f"e{i}" for i in range(n)])
    events_path, subs_path = directory / "events.parquet", directory / "subscriptions.parquet"
    pq.write_table(pa.table({"id": ids, "attributes": attributes}), events_path, row_group_size=1_000_000)
    pq.write_table(pa.table({"id": [sid for sid, _ in subs], "filter": [format_filter(s) for sid, s in subs]}),
                   subs_path)
    return events_path, subs_path


def _jvm_peak_mib(spark) -> float | None:
    try:
        pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except Exception:  # not Linux, or no access: report nothing rather than a guess
        return None
    return None


def _own_peak_mib() -> float | None:
    """This process's peak RSS since exec (VmHWM). Not ru_maxrss: on Linux that
    carries the forked parent's high-water mark across exec, which inflated it."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _spark_child(master: str, conf: dict, events_path: str, subs_path: str, out_path: str, conn) -> None:
    try:
        from pyspark.sql import functions as F

        from subsum.impl.spark import io as sio
        from subsum.impl.spark.match import match

        t0 = time.perf_counter()
        spark = get_session(master, conf)
        t1 = time.perf_counter()
        results = match(sio.read_subscriptions(spark, subs_path), sio.read_events(spark, events_path))
        sio.write_results(results, out_path)
        t2 = time.perf_counter()
        written = spark.read.parquet(out_path)
        matches = written.agg(F.sum(F.size("subscriptions"))).first()[0] or 0
        conn.send({"session_s": t1 - t0, "seconds": t2 - t1, "matches": int(matches),
                   "jvm_peak_mib": _jvm_peak_mib(spark),
                   "driver_python_peak_mib": _own_peak_mib()})
        spark.stop()
    except BaseException as exc:
        conn.send({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"})
    finally:
        conn.close()


def measure_spark(master: str, partitions: int, events_path: Path, subs_path: Path, memory: str = "8g") -> dict:
    out = Path(tempfile.mkdtemp(prefix="subsum-bench-spark-")) / "results.parquet"
    conf = {"spark.driver.memory": memory, "spark.sql.shuffle.partitions": str(partitions)}
    try:  # spawned, not forked: a fresh interpreter for the JVM gateway
        return run_in_child("spawn", _spark_child, (master, conf, str(events_path), str(subs_path), str(out)))
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)


def measure_in_process(engine: str, subs, batch) -> dict:
    workload = Workload(Params(events=0, subscriptions=0), SubscriptionColumns.from_subscriptions(subs), batch, 0)
    return measure(workload, None, engine, 1)


FIELDS = ("series", "engine", "master", "partitions", "events", "subscriptions", "seconds", "events_per_s",
          "matches", "peak_mib", "jvm_peak_mib", "ratio_to_vectorized", "session_s", "note")


def run(out_dir, *, quick: bool = False, seed: int = 1, max_events: int = 10_000_000,
        in_process_max_events: int = 10_000_000, log: Callable[[str], None] = print) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    events_series = [10_000, 100_000] if quick else [e for e in (10_000, 100_000, 1_000_000, 10_000_000) if e <= max_events]
    subs_series = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    points = [("events", e, 10_000 if not quick else 1_000) for e in events_series]
    points += [("subscriptions", 100_000 if not quick else 10_000, s) for s in subs_series]
    rows: list[dict] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="subsum-bench-spark-") as tmp:
        for series, n_events, n_subs in points:
            log(f"[{time.perf_counter() - started:7.1f}s] {series}: E={n_events:,} S={n_subs:,}: generating")
            subs, batch, _ = generate(n_events, n_subs, seed)
            point_dir = Path(tmp) / f"{series}-{n_events}-{n_subs}"
            point_dir.mkdir()
            events_path, subs_path = write_parquet(subs, batch, point_dir)
            baseline = None
            results = {}
            for engine in ("vectorized", "duckdb"):
                if n_events > in_process_max_events:
                    continue
                r = measure_in_process(engine, subs, batch)
                results[engine] = r
                if "error" in r:
                    log(f"    {engine}: {r['error']}")
                    rows.append(_row(series, engine, "", "", n_events, n_subs, None, None, None, None, None, r["error"]))
                    continue
                seconds = min(r["times"])
                if engine == "vectorized":
                    baseline = n_events / seconds
                rows.append(_row(series, engine, "in-process", "", n_events, n_subs, seconds, r["matches"],
                                 r["peak_rss_mib"], None, baseline, "match only, input in memory"))
                log(f"    {engine}: {seconds:.2f}s, {n_events / seconds:,.0f} events/s, {r['matches']:,} matches")
            masters = [f"local[{cores}]"]
            if series == "events" and n_events == min(1_000_000, max(events_series)) and cores > 1:
                masters = ["local[1]", f"local[{cores}]"]  # the partitions question, at one point
            for master in masters:
                parts = 2 * (1 if master == "local[1]" else cores)
                r = measure_spark(master, parts, events_path, subs_path)
                if "error" in r:
                    log(f"    spark {master}: {r['error']}")
                    rows.append(_row(series, "spark", master, parts, n_events, n_subs, None, None, None, None, None, r["error"]))
                    continue
                agree = "" if "vectorized" not in results or "matches" not in results["vectorized"] else (
                    "matches agree" if results["vectorized"]["matches"] == r["matches"] else
                    f"MATCHES DIFFER from vectorized ({results['vectorized']['matches']})")
                rows.append(_row(series, "spark", master, parts, n_events, n_subs, r["seconds"], r["matches"],
                                 r["driver_python_peak_mib"], r["jvm_peak_mib"], baseline,
                                 f"read Parquet + match + write Parquet; {agree}".rstrip("; "),
                                 session_s=r["session_s"]))
                log(f"    spark {master}: {r['seconds']:.1f}s, {n_events / r['seconds']:,.0f} events/s, "
                    f"{r['matches']:,} matches, JVM peak {r['jvm_peak_mib'] or 0:,.0f} MiB, "
                    f"session start {r['session_s']:.1f}s (not timed); {agree}")
            write_csv(out / "spark.csv", rows, FIELDS)
    summary = {"rows": rows, "seconds": round(time.perf_counter() - started, 1), "cores": cores, "quick": quick,
               "crossover": crossover(rows)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    plot(rows, out / "spark.png")
    return summary


def _row(series, engine, master, partitions, n_events, n_subs, seconds, matches, peak, jvm_peak, baseline, note,
         session_s=None):
    rate = n_events / seconds if seconds else None
    return {"series": series, "engine": engine, "master": master, "partitions": partitions, "events": n_events,
            "subscriptions": n_subs, "seconds": round(seconds, 3) if seconds else "",
            "events_per_s": round(rate) if rate else "", "matches": matches if matches is not None else "",
            "peak_mib": round(peak) if peak else "", "jvm_peak_mib": round(jvm_peak) if jvm_peak else "",
            "ratio_to_vectorized": round(rate / baseline, 3) if rate and baseline else "",
            "session_s": round(session_s, 1) if session_s is not None else "", "note": note}


def crossover(rows: list[dict]) -> str:
    """Per in-process engine, the smallest E of the events series from which Spark (all cores) is faster, if any."""
    cores = os.cpu_count() or 1
    sizes = sorted({r["events"] for r in rows if r["series"] == "events"})
    rate = {(r["engine"], r["events"]): r["events_per_s"] for r in rows if r["series"] == "events" and r["events_per_s"]
            and (r["engine"] != "spark" or r["master"] == f"local[{cores}]")}
    parts = []
    for engine in ("vectorized", "duckdb"):
        measured = [n for n in sizes if (engine, n) in rate and ("spark", n) in rate]
        if not measured:
            continue
        ahead = [n for n in measured if rate[("spark", n)] > rate[(engine, n)]]
        if ahead and all(n in ahead for n in measured if n >= ahead[0]):
            n = ahead[0]
            parts.append(f"Spark overtakes {engine} from E = {n:,} ({rate[('spark', n)] / rate[(engine, n)]:.2f}x)")
        else:
            best = max(measured, key=lambda n: rate[("spark", n)] / rate[(engine, n)])
            parts.append(f"Spark does not overtake {engine} (closest at E = {best:,}: "
                         f"{rate[('spark', best)] / rate[(engine, best)]:.2f}x)")
    return "; ".join(parts) if parts else "no events-series point has Spark beside an in-process engine"


def plot(rows: list[dict], path: Path) -> None:
    plt = pyplot()
    cores = os.cpu_count() or 1
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, series, x in ((axes[0], "events", "events"), (axes[1], "subscriptions", "subscriptions")):
        for engine, style in (("vectorized", "o-"), ("duckdb", "s-"), ("spark", "^-")):
            pts = [(r[x], r["events_per_s"]) for r in rows if r["series"] == series and r["engine"] == engine
                   and r["events_per_s"] and (engine != "spark" or r["master"] == f"local[{cores}]")]
            if pts:
                ax.plot(*zip(*pts), style, label=engine if engine != "spark" else f"spark local[{cores}]")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel("events / s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fixed = {r["subscriptions"] for r in rows if r["series"] == "events"}
    axes[0].set_title(f"events series (S = {', '.join(f'{s:,}' for s in sorted(fixed))})")
    fixed = {r["events"] for r in rows if r["series"] == "subscriptions"}
    axes[1].set_title(f"subscriptions series (E = {', '.join(f'{e:,}' for e in sorted(fixed))})")
    save_figure(fig, path)


def markdown_table(rows: list[dict]) -> str:
    lines = ["| series | engine | master | E | S | seconds | events/s | vs vectorized | matches | peak MiB (driver / JVM) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['series']} | {r['engine']} | {r['master']} | {r['events']:,} | {r['subscriptions']:,} | "
                     f"{r['seconds']} | {r['events_per_s']:,} | {r['ratio_to_vectorized']} | {r['matches']:,} | "
                     f"{r['peak_mib']} / {r['jvm_peak_mib']} |" if r["seconds"] else
                     f"| {r['series']} | {r['engine']} | {r['master']} | {r['events']:,} | {r['subscriptions']:,} | "
                     f"failed: {r['note']} | | | | |")
    return "\n".join(lines)
