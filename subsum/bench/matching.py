"""`subsum bench matching`: seed 001's five experiment groups, a scaling run,
side by side in one run (benchmarks/README.md).

Every measurement runs in a forked child process, so its peak resident
memory is its own (it includes the interpreter and the workload, which the
child inherits). The parent generates each workload once (seeded), then
forks one child per engine. Each child builds its engine (timed apart),
matches the batch `repeat` times and reports the times and a digest of the
matching (event, subscription) pairs; the parent checks that every engine's
digest agrees, and that the model agrees on the events it was run on.

What is timed: `match_batch(events)` for the object engines (the events
already built), `match_columns(batch)` for the vectorized engine, and the
SQL query plus fetching its result for DuckDB (tables already loaded).
Building indexes and loading tables is reported as build time. The
distinct-attribute statistic is computed once per workload, outside every
timed path.
"""

from __future__ import annotations

import csv
import hashlib
import json
import multiprocessing
import resource
import time
from pathlib import Path
from typing import Callable

import attrs
import numpy as np

from subsum.impl.matching.workload import Params, Workload, generate

ENGINES = ("brute", "counting", "indexed", "rab", "vectorized", "duckdb")
OBJECT_ENGINES = ("brute", "counting", "indexed", "rab")
RANKED = ("brute", "counting", "indexed", "rab")  # seed 001's claimed order, slowest first


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
SCALING_ENGINES = ("rab", "vectorized", "duckdb")

CSV_FIELDS = (
    "group", "variant", "symbol", "x", "engine", "events", "attrs_low", "attrs_high", "names", "subscriptions",
    "cons_low", "cons_high", "planted_rate", "seed", "repeat", "build_s", "match_s_mean", "match_s_min",
    "events_per_s", "peak_rss_mib", "matches", "distinct_share", "index_lookups", "counter_increments",
    "agrees", "note",
)


def _digest(ev: np.ndarray, slot: np.ndarray, n_subs: int) -> str:
    keys = np.sort(ev.astype(np.int64) * max(n_subs, 1) + slot.astype(np.int64))
    return hashlib.sha256(keys.tobytes()).hexdigest()[:16]


def _pairs_from_sets(results: list[set[str]], slot_of: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    ev = [i for i, ids in enumerate(results) for _ in ids]
    slot = [slot_of[s] for ids in results for s in ids]
    return np.array(ev, np.int64), np.array(slot, np.int64)


def _child(workload: Workload, events, engine: str, repeat: int, conn) -> None:
    """Build one engine, match `repeat` times, send the figures back."""
    try:
        n_subs = len(workload.subscriptions)
        start = time.perf_counter()
        if engine == "duckdb":
            from subsum.bench.peer import DuckDBPeer

            peer = DuckDBPeer(workload.subscriptions)
            peer.load_events(workload.batch)
            run = peer.match
            stats = None
        else:
            from subsum.impl.matching import make_engine

            matcher = make_engine(engine, workload.subscriptions, count_distinct=False)
            matcher.prepare()
            stats = matcher.stats
            if engine == "vectorized":
                run = lambda: matcher.match_columns(workload.batch)  # noqa: E731
            else:
                slot_of = {sid: j for j, (sid, _) in enumerate(workload.subscriptions)}
                run = lambda: _pairs_from_sets(matcher.match_batch(events), slot_of)  # noqa: E731
        build = time.perf_counter() - start
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            ev, slot = run()
            times.append(time.perf_counter() - t0)
        conn.send({
            "build_s": build, "times": times, "matches": int(len(ev)), "digest": _digest(ev, slot, n_subs),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "index_lookups": stats.index_lookups // repeat if stats else "",
            "counter_increments": stats.counter_increments // repeat if stats else "",
        })
    except BaseException as exc:  # report, never hang the parent
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


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


def measure(workload: Workload, events, engine: str, repeat: int) -> dict:
    return run_in_child("fork", _child, (workload, events, engine, repeat))


def measure_model(workload: Workload, events, n: int) -> dict:
    """The reference model on the first n events (it is far too slow for all)."""
    from subsum.model.semantics import match_batch

    slot_of = {sid: j for j, (sid, _) in enumerate(workload.subscriptions)}
    subset = events[:n]
    t0 = time.perf_counter()
    results = match_batch(workload.subscriptions, subset)
    elapsed = time.perf_counter() - t0
    ev, slot = _pairs_from_sets(results, slot_of)
    return {"seconds": elapsed, "events": len(subset), "digest": _digest(ev, slot, len(workload.subscriptions)),
            "matches": int(len(ev))}


def _row(group, variant, symbol, x, engine, p: Params, repeat, result, distinct_share, agrees, note=""):
    times = result.get("times") or [float("nan")]
    mean = sum(times) / len(times)
    return {
        "group": group, "variant": variant, "symbol": symbol, "x": x, "engine": engine,
        "events": p.events, "attrs_low": p.attrs_low, "attrs_high": p.attrs_high, "names": p.names,
        "subscriptions": p.subscriptions, "cons_low": p.cons_low, "cons_high": p.cons_high,
        "planted_rate": p.planted_rate, "seed": p.seed, "repeat": repeat,
        "build_s": round(result.get("build_s", float("nan")), 6), "match_s_mean": round(mean, 6),
        "match_s_min": round(min(times), 6), "events_per_s": round(p.events / mean, 1) if mean > 0 else "",
        "peak_rss_mib": round(result.get("peak_rss_mib", float("nan")), 1), "matches": result.get("matches", ""),
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

    def point(self, group, variant, symbol, x, p: Params, engines, with_model=False, estimates=None, repeat=None) -> dict:
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
            result = measure(workload, events, engine, repeat)
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
        from subsum.impl.matching import make_engine

        n = model["events"]
        matcher = make_engine("rab", workload.subscriptions, count_distinct=False)
        slot_of = {sid: j for j, (sid, _) in enumerate(workload.subscriptions)}
        ev, slot = _pairs_from_sets(matcher.match_batch(events[:n]), slot_of)
        ok = _digest(ev, slot, len(workload.subscriptions)) == model["digest"]
        if not ok:
            self.disagreements.append(f"model disagrees with rab on the first {n} events of {workload.params}")
        return ok

    def write_csv(self, name: str) -> Path:
        path = self.out / name
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
            writer.writeheader()
            writer.writerows(self.rows)
        return path


def run_groups(runner: Runner, groups, quick: bool, engines) -> None:
    base = Params(seed=runner.seed)
    for group in groups:
        values = group.quick if quick else group.values
        for variant, rate in (("literal", 0.0), ("planted", runner.planted_rate)):
            for x in values:
                p = attrs.evolve(group.apply(base, x), planted_rate=rate)
                runner.point(group.number, variant, group.symbol, x, p, engines)


def run_default_point(runner: Runner, engines) -> None:
    """Seed 001's default point with planted matches, and the model on its first events."""
    p = Params(seed=runner.seed, planted_rate=runner.planted_rate)
    runner.point("default", "planted", "point", "default", p, engines, with_model=True)


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
                               estimates=estimates, repeat=1)
        for engine, result in results.items():
            if "times" in result:
                last[engine] = (min(result["times"]) + result["build_s"], subs * events)


# -- the report ------------------------------------------------------------

def _times(rows, **where) -> dict:
    """engine -> {x: mean match seconds} for the rows matching `where`."""
    table: dict[str, dict] = {}
    for r in rows:
        if all(str(r[k]) == str(v) for k, v in where.items()) and r["repeat"]:
            table.setdefault(r["engine"], {})[r["x"]] = float(r["match_s_mean"])
    return table


def plot_groups(rows, out: Path, groups) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for group in groups:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
        for ax, variant in zip(axes, ("literal", "planted")):
            for engine, series in sorted(_times(rows, group=group.number, variant=variant).items()):
                xs = sorted(series)
                ax.plot(xs, [series[x] * 1000 for x in xs], marker="o", label=engine)
            ax.set_yscale("log")
            ax.set_xlabel(f"{group.title} ({group.symbol})")
            ax.set_title(f"{variant}" + (" (planted matches)" if variant == "planted" else " generator"))
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("match time per batch (ms, log)")
        axes[1].legend(fontsize=8)
        fig.suptitle(f"seed 001 group {group.number}: {group.title}")
        fig.tight_layout()
        path = out / f"group{group.number}-{group.symbol.lower().replace('_', '')}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def plot_scaling(rows, out: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = _times(rows, group="scaling")
    if not series:
        return None
    labels = list(dict.fromkeys(r["x"] for r in rows if r["group"] == "scaling"))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for engine, values in sorted(series.items()):
        xs = [i for i, label in enumerate(labels) if label in values]
        ax.plot(xs, [values[labels[i]] for i in xs], marker="o", label=engine)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_yscale("log")
    ax.set_xlabel("subscriptions x events")
    ax.set_ylabel("match time (s, log)")
    ax.set_title("scaling, planted matches")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = out / "scaling.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def assess(rows, groups) -> list[dict]:
    """Seed 001's qualitative claims and the performance targets: holds or not, with the figures."""
    findings = []
    # 1. brute < counting < indexed < rab (slowest first) at every point.
    points = {(r["group"], r["variant"], r["x"]) for r in rows if r["group"] not in ("default", "scaling")}
    ordered = 0
    for g, v, x in sorted(points, key=str):
        t = {e: s[x] for e, s in _times(rows, group=g, variant=v).items() if x in s}
        if all(e in t for e in RANKED) and all(t[a] > t[b] for a, b in zip(RANKED, RANKED[1:])):
            ordered += 1
    findings.append({"claim": "speed ranks brute < counting < indexed < rab (slowest first)",
                     "holds": bool(points) and ordered == len(points), "detail": f"order holds at {ordered} of {len(points)} points"})
    # 2. rab degrades slowest as E, a, S, c grow.
    for group in groups:
        if group.number == 3:
            continue
        for variant in ("literal", "planted"):
            t = _times(rows, group=group.number, variant=variant)
            growth = {e: s[max(s)] / s[min(s)] for e, s in t.items() if e in RANKED and len(s) > 1}
            if len(growth) == len(RANKED):
                slowest = min(growth, key=growth.get)
                findings.append({"claim": f"rab degrades slowest as {group.symbol} grows ({variant})",
                                 "holds": slowest == "rab",
                                 "detail": ", ".join(f"{e} x{g:.2f}" for e, g in sorted(growth.items(), key=lambda kv: kv[1]))})
    # 3. indexed and rab get faster as A_n grows.
    for variant in ("literal", "planted"):
        t = _times(rows, group=3, variant=variant)
        for engine in ("indexed", "rab"):
            s = t.get(engine, {})
            if len(s) > 1:
                first, last = s[min(s)], s[max(s)]
                findings.append({"claim": f"{engine} gets faster as A_n grows ({variant})", "holds": last < first,
                                 "detail": f"A_n={min(s)}: {first * 1000:.1f} ms, A_n={max(s)}: {last * 1000:.1f} ms"})
    # Targets at the default point with planted matches.
    d = {r["engine"]: r for r in rows if r["group"] == "default"}
    fast = {e: float(r["match_s_mean"]) for e, r in d.items() if e not in ("duckdb", "model") and r["repeat"]}
    if fast and "duckdb" in d:
        best = min(fast, key=fast.get)
        ratio = float(d["duckdb"]["match_s_mean"]) / fast[best]
        findings.append({"claim": "target: fastest engine >= 5x faster than DuckDB at the default point (planted)",
                         "holds": ratio >= 5,
                         "detail": f"{best} {fast[best] * 1000:.1f} ms vs duckdb {float(d['duckdb']['match_s_mean']) * 1000:.1f} ms: {ratio:.2f}x"})
        if "model" in d:
            best_rate = float(d[best]["events_per_s"])
            model_rate = float(d["model"]["events_per_s"])
            findings.append({"claim": "target: fastest engine >= 100x faster than the model (events/s, default point)",
                             "holds": best_rate / model_rate >= 100,
                             "detail": f"{best} {best_rate:,.0f} events/s vs model {model_rate:,.0f} events/s: {best_rate / model_rate:.0f}x"})
    big = [r for r in rows if r["group"] == "scaling" and r["x"] == "100000x100000" and r["repeat"]]
    if big:
        best = min(big, key=lambda r: float(r["match_s_mean"]) + float(r["build_s"]))
        total = float(best["match_s_mean"]) + float(best["build_s"])
        findings.append({"claim": "target: S=100,000, E=100,000 in < 60 s and < 4 GiB peak",
                         "holds": total < 60 and float(best["peak_rss_mib"]) < 4096,
                         "detail": (f"{best['engine']}: build {float(best['build_s']):.1f} s + match {float(best['match_s_mean']):.1f} s, "
                                    f"peak {float(best['peak_rss_mib']):.0f} MiB")})
    return findings


def run(out: Path, *, groups=(1, 2, 3, 4, 5), quick: bool = False, repeat: int = 3, planted_rate: float = 0.1, seed: int = 1,
        model_events: int = 100, scaling: bool = True, budget: float = 120.0, log: Callable[[str], None] = print) -> dict:
    """The whole matching benchmark (benchmarks/README.md): the default point,
    seed 001's experiment groups and the scaling run, every engine and
    DuckDB side by side and cross-checked. Writes matching.csv, one PNG per
    group, scaling.png and summary.json into `out`; returns the summary
    (with the files written and the engines' disagreements)."""
    out.mkdir(parents=True, exist_ok=True)
    repeat = 1 if quick else repeat
    runner = Runner(out, repeat, planted_rate, seed, model_events, budget, log)
    chosen = [g for g in GROUPS if g.number in groups]
    started = time.perf_counter()
    run_default_point(runner, ENGINES)
    run_groups(runner, chosen, quick, ENGINES)
    if scaling:
        run_scaling(runner, quick)
    csv_path = runner.write_csv("matching.csv")
    plots = plot_groups(runner.rows, out, chosen)
    scaling_plot = plot_scaling(runner.rows, out)
    summary = {"seconds": round(time.perf_counter() - started, 1), "repeat": repeat, "planted_rate": planted_rate,
               "seed": seed, "quick": quick, "groups": list(groups), "findings": assess(runner.rows, chosen),
               "disagreements": runner.disagreements}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    summary["files"] = [str(p) for p in (csv_path, *plots, *([scaling_plot] if scaling_plot else []), out / "summary.json")]
    return summary
