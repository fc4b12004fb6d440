"""`subsum bench client-server --variants` (issue 54): the runs that test
the causes seed 003's differing rows name, beside the same runs under our
defaults, over five seeds each (one with --quick), on the direct driver
(`client_server_direct`, run for run the simulator's report:
tests/test_client_server.py).

Each variant varies one knob of the main sweep's defaults (N = 10, K = 10,
λ = μ = 0.05, `client_server.DEFAULTS`), with some settings fixed and
some protocol options set:

- **soha-client**: SOHA probing the client's broker's neighbors only (the
  narrower reading of "one hop away", spec/10 DEF-CS-2), N = 5 … 50, to set
  beside series 1's SOHA, which probes every AT-path broker's;
- **split**: the four request policies against K, with every hit split by
  where it was answered (the client's broker, a broker further on the AT
  path, one off it: `hit_client`, `hit_path`, `hit_off`);
- **lam-k50**: the λ sweep at K = 50 up to λ = 1 (the main sweep has it at
  K = 10, up to 1.5; λ = 1.5 at K = 50 alone would take as long as the rest);
- **mu-0.5**: Server-Cache with K up to 250 at μ = 0.5;
- **mu-split**: SS against μ, with the hits split;
- **uniform** / **corner-uniform**: the four policies against K, and at the
  corner N = K = 50, with every message equally popular (`hot_weight` 1:
  no hot messages, where spec/10 DEF-CS-4 makes every 20th ten times as
  popular, the seed's "a very small number" left open);
- **series2-lfu-oldest**: series 2's Server-Cache under LFU against N,
  LFU evicting the oldest among equal rates (spec/09 DEF-CACHE-4's other
  rule), to set beside series 2's LFU.

Writes variants.csv: one row per (variant, knob value, policy, cache
policy), each metric's mean over the seeds with its 95% half-width
(`{metric}_ci95`, `intervals.mean_ci`).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Callable

import attrs

from subsum.bench.client_server.bench import DEFAULTS, FULL, QUICK, SS_MEMORY
from subsum.bench.intervals import mean_ci
from subsum.bench.output import resumable_runs, stored_runs, write_csv
from subsum.core.names import HIT_PLACES, REQUEST_POLICIES
from subsum.impl.network.workloads.client_server_direct import run_client_server_direct

BROKERS = tuple(range(5, 55, 5))
METRICS = ("delay", "overhead", "hit", *(f"hit_{place}" for place in HIT_PLACES))


@attrs.frozen
class Variant:
    name: str
    knob: str  # brokers, slots, lam or mu
    values: tuple
    policies: tuple[str, ...]
    fixed: dict = attrs.field(factory=dict)  # settings other than the defaults
    options: dict = attrs.field(factory=dict)  # the driver's options (soha_probes, lfu_ties, hot_weight)
    caches: tuple[str, ...] = ("lfu",)


VARIANTS = (
    Variant("soha-client", "brokers", BROKERS, ("soha",), options={"soha_probes": "client"}),
    Variant("split", "slots", (5, 10, 20, 30, 40, 50), REQUEST_POLICIES),
    Variant("lam-k50", "lam", (0.05, 0.25, 0.5, 1.0), ("sc", "soha"), fixed={"slots": 50}),
    Variant("mu-0.5", "slots", (10, 50, 100, 250), ("sc",), fixed={"mu": 0.5}),
    Variant("mu-split", "mu", (0.05, 0.1, 0.2, 0.3, 0.4, 0.5), ("ss",)),
    Variant("uniform", "slots", (5, 10, 20, 30, 40, 50), REQUEST_POLICIES, options={"hot_weight": 1.0}),
    Variant("corner-uniform", "brokers", (50,), REQUEST_POLICIES, fixed={"slots": 50}, options={"hot_weight": 1.0}),
    Variant("series2-lfu-oldest", "brokers", BROKERS, ("sc",), options={"lfu_ties": "oldest"}),
)
QUICK_VALUES = 2  # --quick: the first two values of each variant


def run_task(options: dict) -> dict:
    return run_client_server_direct(**options)


def points(quick: bool) -> list[tuple[Variant, object, str, str]]:
    """Every (variant, knob value, policy, cache policy) a run covers."""
    return [(v, value, policy, cache) for v in VARIANTS for value in (v.values[:QUICK_VALUES] if quick else v.values)
            for policy in v.policies for cache in v.caches]


def run(out_dir, *, quick: bool = False, seed: int = 1, request_process: str = "per-message", workers: int | None = None,
        resume: bool = False, log: Callable[[str], None] = print) -> dict:
    """Every variant's points on the main sweep's defaults, steps and seeds (`client_server.FULL`, or QUICK);
    writes out_dir/variants.csv; returns its rows, the file and the time taken. Each finished run is kept in
    out_dir/variants-runs.jsonl until the whole run is done; `resume` reuses the runs an interrupted run kept."""
    sweep = QUICK if quick else FULL
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    store = out / "variants-runs.jsonl"
    if not resume:
        store.unlink(missing_ok=True)
    elif store.is_file():
        log(f"resuming: {len(stored_runs(store))} runs already in {store}")
    rows = run_variants(DEFAULTS, steps=sweep.steps, seeds=sweep.seeds(seed), request_process=request_process,
                        ss_memory=SS_MEMORY, workers=workers, log=log, store=store)
    path = write_csv(out / "variants.csv", rows)
    store.unlink(missing_ok=True)  # every run is in the CSV now
    seconds = round(time.perf_counter() - started, 1)
    log(f"wrote {path} in {seconds}s")
    return {"seconds": seconds, "quick": quick, "seeds": list(sweep.seeds(seed)), "files": [str(path)], "rows": rows}


def markdown_table(result: dict) -> str:
    """The variants' rows: each point's delay, overhead and hit, the hit split by where it was answered."""
    lines = ["| variant | varied | value | policy | cache | delay | overhead | hit (client / path / off) |", "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['variant']} | {r['varied']} | {r['value']} | {r['policy']} | {r['cache_policy']} | {r['delay']} ± {r['delay_ci95']} "
                     f"| {r['overhead']} ± {r['overhead_ci95']} | {r['hit']} ± {r['hit_ci95']} ({r['hit_client']} / {r['hit_path']} / {r['hit_off']}) |")
    return "\n".join(lines)


def run_variants(defaults: dict, *, steps: int, seeds: tuple[int, ...], request_process: str, ss_memory,
                 workers: int | None, log: Callable[[str], None], store: Path | None = None) -> list[dict]:
    """Every variant's points over `seeds`, on `defaults` (N, K, λ, μ): one row per point (each finished run kept in
    `store`, `output.resumable_runs`)."""
    chosen = points(len(seeds) == 1)
    tasks = []
    for variant, value, policy, cache in chosen:
        settings = {**defaults, **variant.fixed, variant.knob: value}
        options = dict(policy=policy, cache_policy=cache, brokers=settings["brokers"], slots=settings["slots"], lam=settings["lam"],
                       mu=settings["mu"], steps=steps, request_process=request_process, ss_memory=ss_memory, **variant.options)
        tasks += [{**options, "seed": s} for s in seeds]
    reports = resumable_runs(run_task, tasks, workers or (1 if len(seeds) == 1 else os.cpu_count() or 1), store)
    rows = []
    for k, (variant, value, policy, cache) in enumerate(chosen, 1):
        runs = [next(reports) for _ in seeds]
        settings = {**defaults, **variant.fixed, variant.knob: value}
        row = {"variant": variant.name, "varied": variant.knob, "value": value, "policy": policy, "cache_policy": cache, **settings,
               "options": " ".join(f"{k}={v}" for k, v in sorted(variant.options.items())), "steps": steps, "seeds": len(seeds),
               "requests": round(statistics.fmean(r["requests"] for r in runs))}
        for metric in METRICS:
            row[metric], row[f"{metric}_ci95"] = mean_ci([r[metric] for r in runs])
        rows.append(row)
        log(f"[{k}/{len(chosen)}] {variant.name}, {variant.knob} = {value}, {policy}/{cache}: delay {row['delay']}, "
            f"overhead {row['overhead']}, hit {row['hit']} (client {row['hit_client']}, path {row['hit_path']}, off {row['hit_off']})")
    return rows
