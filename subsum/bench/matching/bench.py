"""`subsum bench matching`: seed 001's five experiment groups, a scaling run,
side by side in one run (benchmarks/README.md).

Every measurement runs in a forked child process (`measure`).
The parent generates each workload once (seeded), then forks one child
per engine, and checks that every engine's digest of the matching (event,
subscription) pairs agrees, and that the model agrees on the events it
was run on. The distinct-attribute statistic is computed once per
workload, outside every timed path. The plots and the assessment of seed
001's claims are in `report`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

import attrs

from subsum.bench.matching.measure import digest, measure, measure_model, pairs_from_sets
from subsum.bench.matching.files import FILE_FIELDS, files_disagree, run_files
from subsum.bench.matching.seeds import write_over_seeds
from subsum.bench.matching.report import assess, plot_groups, plot_scaling, point_table
from subsum.bench.output import write_csv
from subsum.impl.matching import make_engine
from subsum.bench.matching.workload import Params, generate

ENGINES = ("brute", "counting", "indexed", "rab", "vectorized", "compiled", "duckdb")
OBJECT_ENGINES = ("brute", "counting", "indexed", "rab")


@attrs.frozen
class Group:
    number: int
    title: str
    symbol: str
    values: tuple[int, ...]
    quick: tuple[int, ...]
    apply: Callable[[Params, int], Params]


GROUPS = (
    Group(1, "attributes per event", "a", tuple(range(20, 201, 20)), (20, 100, 200),
          lambda p, x: attrs.evolve(p, attrs_low=x, attrs_high=x)),
    Group(2, "events", "E", (500, 1000, 2000, 3000, 4000, 5000), (500, 2000, 5000),
          lambda p, x: attrs.evolve(p, events=x)),
    Group(3, "attribute names", "A_n", (50, 100, 200, 300, 400, 500), (50, 200, 500),
          lambda p, x: attrs.evolve(p, names=x)),
    Group(4, "constraints per subscription", "c", (5, 10, 20, 30, 40, 50), (5, 20, 50),
          lambda p, x: attrs.evolve(p, cons_low=x, cons_high=x)),
    Group(5, "subscriptions", "S", (500, 1000, 2000, 3000, 4000, 5000), (500, 2000, 5000),
          lambda p, x: attrs.evolve(p, subscriptions=x)),
)
SCALING = ((1_000, 1_000), (10_000, 10_000), (100_000, 10_000), (100_000, 100_000))
SCALING_QUICK = ((1_000, 1_000), (10_000, 10_000))
SCALING_ENGINES = ("rab", "vectorized", "compiled", "duckdb")
MILLION = 1_000_000
MILLION_CHECKED = 10_000  # events of the 10^6 point matched by vectorized too

CSV_FIELDS = (
    "group", "variant", "symbol", "x", "engine", "events", "attrs_low", "attrs_high", "names", "subscriptions",
    "cons_low", "cons_high", "planted_rate", "seed", "repeat", "build_s", "first_call_s", "match_s_mean", "match_s_min",
    "events_per_s", "peak_rss_mib", "start_rss_mib", "matches", "distinct_share", "index_lookups", "counter_increments",
    "agrees", "note",
)


def _row(group, variant, symbol, x, engine, p: Params, repeat, result, distinct_share, agrees, note=""):
    times = result.get("times") or [float("nan")]
    mean = sum(times) / len(times)
    return {
        "group": group, "variant": variant, "symbol": symbol, "x": x, "engine": engine,
        "events": p.events, "attrs_low": p.attrs_low, "attrs_high": p.attrs_high, "names": p.names,
        "subscriptions": p.subscriptions, "cons_low": p.cons_low, "cons_high": p.cons_high,
        "planted_rate": p.planted_rate, "seed": p.seed, "repeat": repeat,
        "build_s": round(result.get("build_s", float("nan")), 6),
        "first_call_s": round(result.get("first_call_s", times[0]), 6),
        "match_s_mean": round(mean, 6),
        "match_s_min": round(min(times), 6), "events_per_s": round(p.events / mean, 1) if mean > 0 else "",
        "peak_rss_mib": round(result.get("peak_rss_mib", float("nan")), 1),
        "start_rss_mib": round(result.get("start_rss_mib", float("nan")), 1), "matches": result.get("matches", ""),
        "distinct_share": round(distinct_share, 4), "index_lookups": result.get("index_lookups", ""),
        "counter_increments": result.get("counter_increments", ""), "agrees": agrees,
        "note": note or result.get("error", ""),
    }


class Runner:
    def __init__(self, out: Path, repeat: int, planted_rate: float, seed: int, model_events: int,
                 budget_s: float, report: Callable[[str], None]):
        self.out, self.repeat, self.planted_rate, self.seed = out, repeat, planted_rate, seed
        self.model_events, self.budget_s, self.report = model_events, budget_s, report
        self.rows: list[dict] = []
        self.disagreements: list[str] = []

    def point(self, group, variant, symbol, x, p: Params, engines, with_model=False, estimates=None, repeat=None,
              warm=True) -> dict:
        repeat = repeat or self.repeat
        t0 = time.perf_counter()
        workload = generate(p)
        distinct_share = workload.batch.distinct_attributes() / max(workload.batch.n_attributes, 1)
        skipped = {e for e in engines if (estimates or {}).get(e, 0.0) > self.budget_s}
        needs_objects = with_model or any(e in OBJECT_ENGINES and e not in skipped for e in engines)
        events = workload.events() if needs_objects else None
        self.report(f"[group {group} {variant}] {symbol}={x}: generated E={p.events} S={p.subscriptions} "
                    f"({workload.planted} planted, distinct share {distinct_share:.2f}) in {time.perf_counter() - t0:.1f}s")
        results, digests = {}, {}
        for engine in engines:
            projected = (estimates or {}).get(engine)
            if projected is not None and projected > self.budget_s:
                note = f"skipped: projected {projected:.0f}s > budget {self.budget_s:.0f}s"
                self.report(f"  {engine:>10}: {note}")
                self.rows.append(_row(group, variant, symbol, x, engine, p, 0, {}, distinct_share, "", note))
                continue
            result = measure(workload, events, engine, repeat, warm)
            results[engine] = result
            if "error" in result:
                self.report(f"  {engine:>10}: ERROR {result['error']}")
            else:
                digests[engine] = result["digest"]
                mean = sum(result["times"]) / len(result["times"])
                self.report(f"  {engine:>10}: {mean * 1000:10.1f} ms  build {result['build_s']:.2f}s  "
                            f"{result['matches']} matches  peak {result['peak_rss_mib']:.0f} MiB")
        agreed = len(set(digests.values())) <= 1
        if not agreed:
            self.disagreements.append(f"group {group} {variant} {symbol}={x}: {digests}")
            self.report(f"  engines disagree: {digests}")
        for engine, result in results.items():
            self.rows.append(_row(group, variant, symbol, x, engine, p, repeat, result, distinct_share,
                                  agreed and "error" not in result))
        if with_model and self.model_events:
            model = measure_model(workload, events, self.model_events)
            self.report(f"  {'model':>10}: {model['seconds'] * 1000:10.1f} ms on the first {model['events']} events "
                        f"({model['events'] / model['seconds']:.0f} events/s)")
            subset_ok = self._model_agrees(workload, events, model)
            self.rows.append(_row(group, variant, symbol, x, "model", attrs.evolve(p, events=model["events"]), 1,
                                  {"times": [model["seconds"]], "matches": model["matches"], "build_s": 0.0},
                                  distinct_share, subset_ok, f"first {model['events']} events only"))
        return results

    def _model_agrees(self, workload, events, model) -> bool:
        n = model["events"]
        matcher = make_engine("rab", workload.subscriptions, count_distinct=False)
        slot_of = {sid: j for j, (sid, _) in enumerate(workload.subscriptions)}
        ev, slot = pairs_from_sets(matcher.match_batch(events[:n]), slot_of)
        ok = digest(ev, slot, len(workload.subscriptions)) == model["digest"]
        if not ok:
            self.disagreements.append(f"model disagrees with rab on the first {n} events of {workload.params}")
        return ok

    def write_csv(self, name: str) -> Path:
        return write_csv(self.out / name, self.rows, CSV_FIELDS)


def run_groups(runner: Runner, groups, quick: bool, engines) -> None:
    base = Params(seed=runner.seed)
    for group in groups:
        values = group.quick if quick else group.values
        for variant, rate in (("literal", 0.0), ("planted", runner.planted_rate)):
            for x in values:
                p = attrs.evolve(group.apply(base, x), planted_rate=rate)
                runner.point(group.number, variant, group.symbol, x, p, engines)


def run_over_seeds(runner: Runner, groups, quick: bool, seeds: int) -> list[Path]:
    """The groups under the seeds after `runner`'s (`seeds` in all, its own first), seed 001's four engines
    only; the engines' disagreements go to `runner`'s. Writes seeds.csv and over_seeds.csv (`seeds`)."""
    per_seed = [[r for r in runner.rows if isinstance(r["group"], int)]]
    for seed in range(runner.seed + 1, runner.seed + seeds):
        runner.report(f"[over seeds] seed {seed} ({seed - runner.seed + 1} of {seeds})")
        again = Runner(runner.out, runner.repeat, runner.planted_rate, seed, 0, runner.budget_s, runner.report)
        run_groups(again, groups, quick, OBJECT_ENGINES)
        per_seed.append(again.rows)
        runner.disagreements += again.disagreements
    return write_over_seeds(per_seed, OBJECT_ENGINES, runner.out)


def run_default_point(runner: Runner, engines, planted_rate: float, files: bool, cold: bool) -> list[dict]:
    """Seed 001's default point with planted matches, and the model on its
    first events; then, when `files`, each file-to-file process on it
    (`files`). Returns the file-to-file rows."""
    p = Params(seed=runner.seed, planted_rate=planted_rate)
    runner.point("default", "planted", "point", "default", p, engines, with_model=True)
    if not files:
        return []
    file_rows = run_files(generate(p), runner.report, cold)
    disagreement = files_disagree(file_rows)
    if disagreement:
        runner.disagreements.append(disagreement)
    return file_rows


def run_scaling(runner: Runner, quick: bool) -> None:
    last: dict[str, tuple[float, int]] = {}
    for subs, events in (SCALING_QUICK if quick else SCALING):
        p = Params(seed=runner.seed, planted_rate=runner.planted_rate, subscriptions=subs, events=events)
        estimates = {}
        for engine, (seconds, work) in last.items():
            # Counting work grows with S x E at worst: a conservative projection.
            estimates[engine] = seconds * (subs * events) / work
        # One timed run per scaling point: the largest take tens of seconds.
        results = runner.point("scaling", "planted", "S x E", f"{subs}x{events}", p, SCALING_ENGINES,
                               estimates=estimates, repeat=1, warm=False)
        for engine, result in results.items():
            if "times" in result:
                last[engine] = (min(result["times"]) + result["build_s"], subs * events)


def run_million(runner: Runner) -> None:
    """S = E = 10^6, planted like the scaling run, the compiled engine alone
    and once, whatever the budget (it was asked for). Cross-checked on the
    first MILLION_CHECKED events: the vectorized engine over the same 10^6
    subscriptions must find exactly the compiled engine's pairs there."""
    p = Params(seed=runner.seed, planted_rate=runner.planted_rate, subscriptions=MILLION, events=MILLION)
    x = f"{MILLION}x{MILLION}"
    t0 = time.perf_counter()
    workload = generate(p)
    runner.report(f"[group scaling planted] S x E={x}: generated ({workload.planted} planted) in {time.perf_counter() - t0:.1f}s")
    result = measure(workload, None, "compiled", 1, warm=False, first=MILLION_CHECKED)
    head_params = attrs.evolve(p, events=MILLION_CHECKED)
    check = measure(attrs.evolve(workload, params=head_params, batch=workload.batch.head(MILLION_CHECKED)), None, "vectorized", 1, warm=False)
    agrees = "error" not in result and "error" not in check and result["digest_first"] == check["digest"]
    for engine, got in (("compiled", result), ("vectorized", check)):
        if "error" in got:
            runner.report(f"  {engine:>10}: ERROR {got['error']}")
        else:
            runner.report(f"  {engine:>10}: {got['times'][0]:10.1f} s  build {got['build_s']:.1f}s  {got['matches']} matches  "
                          f"peak {got['peak_rss_mib']:.0f} MiB ({got['start_rss_mib']:.0f} at the start)"
                          + ("" if engine == "compiled" else f" (first {MILLION_CHECKED} events)"))
    if not agrees:
        runner.disagreements.append(f"S x E={x}: the compiled engine's pairs of the first {MILLION_CHECKED} events differ from vectorized's")
        runner.report("  engines disagree on the cross-checked events")
    runner.rows.append(_row("scaling", "planted", "S x E", x, "compiled", p, 1, result, float("nan"), agrees,
                            f"cross-checked by vectorized on the first {MILLION_CHECKED} events"))
    runner.rows.append(_row("scaling-check", "planted", "S x E", x, "vectorized", head_params, 1, check, float("nan"), agrees,
                            f"the first {MILLION_CHECKED} events only, to cross-check compiled"))


def run(out: Path, *, groups=(1, 2, 3, 4, 5), quick: bool = False, repeat: int = 3, planted_rate: float = 0.1, seed: int = 1,
        model_events: int = 100, scaling: bool = True, budget: float = 120.0, point_planted_rate: float = 0.3,
        files: bool = True, cold: bool = True, million: bool = False, over_seeds: int = 1,
        log: Callable[[str], None] = print) -> dict:
    """The whole matching benchmark (benchmarks/README.md): the default point
    (in process, then file to file), seed 001's experiment groups and the
    scaling run, every engine and DuckDB side by side and cross-checked.
    Writes matching.csv, files.csv, one PNG per group, scaling.png and
    summary.json into `out`; returns the summary (with the files written
    and the engines' disagreements). `over_seeds` > 1: the groups again
    under the next seeds, seed 001's four engines only (`seeds`)."""
    out.mkdir(parents=True, exist_ok=True)
    repeat = 1 if quick else repeat
    runner = Runner(out, repeat, planted_rate, seed, model_events, budget, log)
    chosen = [g for g in GROUPS if g.number in groups]
    started = time.perf_counter()
    if million:  # first, while this process is small: each child inherits (and counts) its memory
        run_million(runner)
    file_rows = run_default_point(runner, ENGINES, point_planted_rate, files, cold)
    run_groups(runner, chosen, quick, ENGINES)
    if over_seeds > 1:
        written_seeds = run_over_seeds(runner, chosen, quick, over_seeds)
    if scaling:
        run_scaling(runner, quick)
    written = [runner.write_csv("matching.csv")] + (written_seeds if over_seeds > 1 else [])
    if file_rows:
        written.append(write_csv(out / "files.csv", file_rows, FILE_FIELDS))
    written += plot_groups(runner.rows, out, chosen)
    scaling_plot = plot_scaling(runner.rows, out)
    summary = {"seconds": round(time.perf_counter() - started, 1), "repeat": repeat, "planted_rate": planted_rate,
               "point_planted_rate": point_planted_rate, "seed": seed, "quick": quick, "groups": list(groups),
               "over_seeds": over_seeds,
               "default_point": point_table(runner.rows, file_rows),
               "findings": assess(runner.rows, chosen), "disagreements": runner.disagreements}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    summary["files"] = [str(p) for p in (*written, *([scaling_plot] if scaling_plot else []), out / "summary.json")]
    return summary
