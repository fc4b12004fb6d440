"""`subsum bench spark`: Spark's two plans (sql, DEF-PIPE-3; kernel,
DEF-PIPE-4) beside the compiled engine in process, read to write, and the
vectorized engine and DuckDB in memory, on one workload family
(`workload`): events from 10^5 to 10^7 at 10^4 subscriptions, and
subscriptions from 10^3 to 10^5 at 10^5 events (benchmarks/README.md).

How each run is measured is `measure`'s docstring. The ratios are against
the compiled engine's read-to-write time (`ratio_to_compiled`; the
in-memory engines' ratios favour them: they neither read nor write). Every
Spark plan's output and the compiled engine's are compared row for row
(`agrees`). The verdicts in summary.json are computed by `verdicts`' rules.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.bench.spark.measure import compiled_run, in_memory_run, spark_run
from subsum.bench.spark.workload import generate, write_parquet

__all__ = ["run", "generate", "write_parquet", "in_memory_run", "crossover", "verdicts", "markdown_table"]

FIELDS = ("series", "engine", "plan", "master", "partitions", "events", "subscriptions", "seconds", "events_per_s",
          "matches", "agrees", "ratio_to_compiled", "session_s", "probe_s", "first_call_s", "peak_mib", "jvm_peak_mib",
          "note")
PLANS = ("kernel", "sql")
#: The acceptance rules of issue 56, applied to the largest events point (and to every Spark run for the session).
KERNEL_RATIO_LIMIT = 2.0
SESSION_LIMIT_S = 6.0


def _points(quick: bool, max_events: int) -> list[tuple[str, int, int]]:
    events = [10_000, 100_000] if quick else [e for e in (100_000, 1_000_000, 10_000_000) if e <= max_events]
    subs = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    return [("events", e, 1_000 if quick else 10_000) for e in events] + [
        ("subscriptions", 10_000 if quick else 100_000, s) for s in subs]


def _row(series: str, engine: str, n_events: int, n_subs: int, result: dict, **extra) -> dict:
    seconds: float = result.get("seconds") or 0.0
    row: dict = dict.fromkeys(FIELDS, "")
    row.update(series=series, engine=engine, events=n_events, subscriptions=n_subs, **extra)
    if "error" in result:
        row["note"] = f"failed: {result['error']}"
        return row
    row.update(seconds=round(seconds, 3), events_per_s=round(n_events / seconds), matches=result.get("matches", ""),
               peak_mib=round(result["driver_peak_mib"]) if result.get("driver_peak_mib") else "",
               jvm_peak_mib=round(result["jvm_peak_mib"]) if result.get("jvm_peak_mib") else "",
               session_s=round(result["session_s"], 2) if "session_s" in result else "",
               probe_s=round(result["probe_s"], 2) if "probe_s" in result else "",
               first_call_s=round(result["warm_s"], 2) if result.get("warm_s") is not None else "")
    return row


def _measure_point(series: str, n_events: int, n_subs: int, seed: int, directory: Path, cores: int,
                   in_process_max_events: int, log: Callable[[str], None]) -> list[dict]:
    subs, batch, _ = generate(n_events, n_subs, seed)
    events_path, subs_path = write_parquet(subs, batch, directory)
    rows: list[dict] = []
    compiled = compiled_run(events_path, subs_path)
    rows.append(_row(series, "compiled", n_events, n_subs, compiled, master="in-process",
                     note="read Parquet + match + write Parquet"))
    log(f"    compiled, read to write: {compiled.get('seconds', 0):.1f}s {compiled.get('error', '')}")
    base = compiled.get("seconds")
    for engine in ("vectorized", "duckdb"):
        if n_events > in_process_max_events:
            continue
        r = in_memory_run(engine, subs, batch)
        r = r if "error" in r else {**r, "seconds": min(r["times"]), "driver_peak_mib": r.get("peak_rss_mib")}
        rows.append(_row(series, engine, n_events, n_subs, r, master="in-process", note="match only, input in memory"))
        log(f"    {engine}, match only: {r.get('seconds', 0):.2f}s {r.get('error', '')}")
    del batch
    masters = [f"local[{cores}]"]
    if series == "events" and n_events == 1_000_000 and cores > 1:
        masters = ["local[1]", *masters]  # one core against all, at one point
    for master in masters:
        for plan in PLANS:
            parts = 2 * (1 if master == "local[1]" else cores)
            r = spark_run(master, parts, plan, events_path, subs_path)
            agrees = "" if "error" in r or "digest" not in compiled else (
                "yes" if r["digest"] == compiled["digest"] else "NO")
            rows.append(_row(series, "spark", n_events, n_subs, r, plan=plan, master=master, partitions=parts, agrees=agrees,
                             note="read Parquet + match + write Parquet; session apart"))
            log(f"    spark {plan} {master}: {r.get('seconds', 0):.1f}s (session {r.get('session_s', 0):.1f}s apart), "
                f"agrees with compiled: {agrees or '?'} {r.get('error', '')}")
    for row in rows:
        if row["seconds"] and base:
            row["ratio_to_compiled"] = round(row["seconds"] / base, 3)
    return rows


def run(out_dir, *, quick: bool = False, seed: int = 1, max_events: int = 10_000_000,
        in_process_max_events: int = 10_000_000, log: Callable[[str], None] = print) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    rows: list[dict] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="subsum-bench-spark-") as tmp:
        for series, n_events, n_subs in _points(quick, max_events):
            log(f"[{time.perf_counter() - started:7.1f}s] {series}: E={n_events:,} S={n_subs:,}")
            point = Path(tmp) / f"{series}-{n_events}-{n_subs}"
            point.mkdir()
            rows += _measure_point(series, n_events, n_subs, seed, point, cores, in_process_max_events, log)
            write_csv(out / "spark.csv", rows, FIELDS)
    summary = {"rows": rows, "seconds": round(time.perf_counter() - started, 1), "cores": cores, "quick": quick,
               "seed": seed, "crossover": crossover(rows), "verdicts": verdicts(rows, cores)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    plot(rows, out / "spark.png", cores)
    return summary


def verdicts(rows: list[dict], cores: int) -> dict:
    """Issue 56's rules, each "holds", "differs" or "not measured":
    - kernel within 2x: at the largest events point, the kernel plan on all
      cores takes at most KERNEL_RATIO_LIMIT times the compiled engine's
      read-to-write time, and its output agrees;
    - session: the median of the Spark runs' session starts is at most SESSION_LIMIT_S;
    - plans agree: every Spark run's output equals the compiled engine's."""
    spark = [r for r in rows if r["engine"] == "spark" and r["seconds"]]
    largest = max((r["events"] for r in rows if r["series"] == "events"), default=None)
    kernel = [r for r in spark if r["series"] == "events" and r["events"] == largest and r["plan"] == "kernel"
              and r["master"] == f"local[{cores}]"]
    out: dict[str, object] = {"rules": {"kernel within 2x": f"kernel seconds <= {KERNEL_RATIO_LIMIT} x compiled read-to-write seconds at "
                                         f"E = {largest}, all cores, output agreeing",
                     "session": f"the median Spark session start is at most {SESSION_LIMIT_S} s",
                     "plans agree": "every Spark run's output equals the compiled engine's, row for row"}}
    out["kernel within 2x"] = "not measured" if not kernel or kernel[0]["ratio_to_compiled"] == "" else (
        "holds" if kernel[0]["ratio_to_compiled"] <= KERNEL_RATIO_LIMIT and kernel[0]["agrees"] == "yes" else "differs")
    out["session"] = "not measured" if not spark else (
        "holds" if statistics.median(r["session_s"] for r in spark) <= SESSION_LIMIT_S else "differs")
    out["plans agree"] = "not measured" if not spark else ("holds" if all(r["agrees"] == "yes" for r in spark) else "differs")
    return out


def crossover(rows: list[dict]) -> str:
    """Per Spark plan and in-memory engine, the smallest E of the events
    series from which that plan (all cores) is faster and stays so, if any."""
    cores = os.cpu_count() or 1
    sizes = sorted({r["events"] for r in rows if r["series"] == "events"})
    rate = {(r["engine"] if r["engine"] != "spark" else f"spark {r['plan']}", r["events"]): r["events_per_s"] for r in rows
            if r["series"] == "events" and r["events_per_s"] and (r["engine"] != "spark" or r["master"] == f"local[{cores}]")}
    parts = []
    for plan in PLANS:
        spark = f"spark {plan}"
        for engine in ("compiled", "vectorized", "duckdb"):
            measured = [n for n in sizes if (engine, n) in rate and (spark, n) in rate]
            if not measured:
                continue
            ahead = [n for n in measured if rate[(spark, n)] > rate[(engine, n)]]
            if ahead and all(n in ahead for n in measured if n >= ahead[0]):
                parts.append(f"{spark} overtakes {engine} from E = {ahead[0]:,} ({rate[(spark, ahead[0])] / rate[(engine, ahead[0])]:.2f}x)")
            else:
                best = max(measured, key=lambda n: rate[(spark, n)] / rate[(engine, n)])
                parts.append(f"{spark} does not overtake {engine} (closest at E = {best:,}: "
                             f"{rate[(spark, best)] / rate[(engine, best)]:.2f}x)")
    return "; ".join(parts) if parts else "no events-series point has Spark beside an in-process engine"


def plot(rows: list[dict], path: Path, cores: int) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    lines = (("compiled", None, "D-", "compiled (read to write)"), ("vectorized", None, "o--", "vectorized (match only)"),
             ("duckdb", None, "s--", "duckdb (match only)"), ("spark", "kernel", "^-", f"spark kernel local[{cores}]"),
             ("spark", "sql", "v-", f"spark sql local[{cores}]"))
    for ax, series in ((axes[0], "events"), (axes[1], "subscriptions")):
        for engine, plan, style, label in lines:
            pts = [(r[series], r["events_per_s"]) for r in rows if r["series"] == series and r["engine"] == engine
                   and r["events_per_s"] and (plan is None or r["plan"] == plan and r["master"] == f"local[{cores}]")]
            if pts:
                ax.plot(*zip(*pts), style, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(series)
        ax.set_ylabel("events / s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fixed = sorted({r["subscriptions" if series == "events" else "events"] for r in rows if r["series"] == series})
        ax.set_title(f"{series} series ({'S' if series == 'events' else 'E'} = {', '.join(f'{s:,}' for s in fixed)})")
    save_figure(fig, path)


def markdown_table(rows: list[dict]) -> str:
    lines = ["| series | engine | plan | master | E | S | seconds | events/s | vs compiled | agrees | session s | "
             "peak MiB (driver / JVM) |", "|---|---|---|---|---:|---:|---:|---:|---:|---|---:|---|"]
    for r in rows:
        lines.append(f"| {r['series']} | {r['engine']} | {r['plan']} | {r['master']} | {r['events']:,} | {r['subscriptions']:,} | "
                     + (f"{r['seconds']} | {r['events_per_s']:,} | {r['ratio_to_compiled']} | {r['agrees']} | {r['session_s']} | "
                        f"{r['peak_mib']} / {r['jvm_peak_mib']} |" if r["seconds"] else f"{r['note']} | | | | | |"))
    return "\n".join(lines)
