"""The caching benchmark, `subsum bench caching` (issue 18; seeds 003, 004;
spec/09-caching.md; benchmarks/README.md).

Seed 004's file stops before its results, so there are no published
numbers to put beside ours. What the benchmark makes visible is the
trade-off the seeds and the group's papers describe: caching everywhere
("all") answers the most requests at the highest cost, caching at
candidate brokers ("basic caching") a little less, leaf caching less
still but cheaply, a single copy least. It checks that ranking:

    answered share:  all >= candidate > leaf > single
    overhead:        the reverse

on every (tree size, Zipf α) point, and says where it holds and where not.

Two series on the churning-subscriber workload of the `caching` protocol
(`subsum simulate caching`), each point five seeded simulations (one with
--quick), reported as means with 95% intervals:

- **placement**: all, candidate, leaf (reading ii) and single, on random
  trees of 20, 50 and 100 brokers, Zipf α 0.6, 0.8, 1.0 and 1.2, caches of
  5% of the messages, LRU;
- **policy**: FIFO, regeneration/degradation, rate-LFU and LRU under
  candidate placement on 50 brokers, caches of 1%, 5% and 10% of the
  messages, for each α;
- **readings**: the placement points again under the other readings of
  the choices seed 004 leaves open (spec/09 DEF-CACHE-6): leaf (i), a
  broker with a local subscriber, and single at the tree's centre (not the
  publisher's broker). Only leaf and single are simulated again; the
  series' all and candidate rows are the placement series' own.

And the caches alone (`caching.ops`): operations per second of each
implementation policy beside its reference and cachetools.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

import attrs

from subsum.bench.caching import ops as cache_ops
from subsum.fidelity import verdict as rule
from subsum.bench.intervals import mean_ci
from subsum.bench.output import map_runs, pyplot, save_figure, write_csv
from subsum.core import names
from subsum.impl.network.protocols.caching import LEAF_READING, SINGLE_READING
from subsum.impl.network.workloads.caching import run_caching

PLACEMENTS = tuple(sorted(names.PLACEMENTS))  # in the order of the tables and plots
POLICIES = names.CACHE_POLICIES
ALPHAS = (0.6, 0.8, 1.0, 1.2)
SIZES = (20, 50, 100)
CACHE_SHARES = (0.01, 0.05, 0.10)
MESSAGES = 1000  # distinct publications over a run (the seed note's suggested K)


@attrs.frozen
class Sweep:
    """The points a run covers."""

    sizes: tuple[int, ...]
    alphas: tuple[float, ...]
    shares: tuple[float, ...]
    messages: int
    capacities: tuple[int, ...]  # of the cache-operation timing
    operations: int
    runs: int  # seeds per point: `seed`, `seed` + 1, …


FULL = Sweep(SIZES, ALPHAS, CACHE_SHARES, MESSAGES, (10, 100, 1000), 200_000, 5)
QUICK = Sweep((20,), (0.8,), (0.05,), 300, (10, 100), 20_000, 1)


#: the reading each placement runs under unless a point names another (DEF-CACHE-6; leaf and single leave a choice open)
DEFAULT_READING = {"leaf": LEAF_READING, "single": SINGLE_READING}
#: the readings series: the other reading of each open choice
OTHER_READINGS = (("leaf", "i"), ("single", "centre"))


#: the seeds' alternatives the variants series measures beside the defaults (spec/09 DEF-CACHE-4, -7): protocol options
VARIANTS: dict[str, dict] = {"": {}, "default": {}, "no-suppression": {"suppress_duplicates": False}, "ask-one": {"ask": "one"},
                             "lfu-oldest": {"lfu_ties": "oldest"}}


def one_run(brokers: int, placement: str, policy: str, cache_share: float | None, alpha: float, messages: int, seed: int,
            reading: str = "", variant: str = "") -> dict:
    """One seeded simulation of the caching protocol; its report (DEF-CACHE-8).
    `cache_share` None: unbounded caches; `reading` the leaf or single
    reading ("" or None: the default); `variant` one of `VARIANTS`."""
    capacity = None if cache_share is None else max(1, round(cache_share * messages))
    reading = reading or DEFAULT_READING.get(placement, "")
    started = time.perf_counter()
    _, report = run_caching(brokers=brokers, placement=placement, policy=policy, capacity=capacity, alpha=alpha, messages=messages,
                            seed=seed, leaf_reading=reading if placement == "leaf" else LEAF_READING,
                            single_reading=reading if placement == "single" else SINGLE_READING, variant=VARIANTS[variant])
    return {"series": "", "brokers": brokers, "placement": placement, "reading": reading, "variant": variant, "policy": policy,
            "cache_share": cache_share,
            "alpha": alpha, "messages": messages, "seed": seed, **{k: report[k] for k in METRICS},
            "seconds": round(time.perf_counter() - started, 2)}


METRICS = ("capacity", "requests", "requests_with_past", "answered_share", "survivability", "delay_mean_hops", "overhead_per_request",
           "request_hops", "response_hops", "store_messages", "duplicates_suppressed", "duplicate_copies", "stored_at_publish",
           "stored_at_response", "evictions")


def run_task(task: tuple) -> dict:
    """One seeded simulation of a point (a worker process's job)."""
    return one_run(*task)


def over_seeds(reports: list[dict]) -> dict:
    """A point's row: the settings, the seeds, and each metric's mean over
    the seeds with its 95% half-width (`METRIC_ci95`); a metric no run
    defines (None) stays None."""
    first = reports[0]
    row = {k: first[k] for k in ("series", "brokers", "placement", "reading", "variant", "policy", "cache_share", "alpha", "messages")}
    row.update(first_seed=first["seed"], seeds=len(reports), capacity=first["capacity"])
    for metric in METRICS[1:]:
        values = [r[metric] for r in reports if r[metric] is not None]
        row[metric], row[f"{metric}_ci95"] = mean_ci(values) if values else (None, None)
    row["seconds"] = round(sum(r["seconds"] for r in reports), 2)
    return row


#: the trade-off the bench checks, as (metric, order best first, better): caching at more brokers answers more and costs more
#: (seed 004 §3.5: "all" answers most, at the greatest overhead; the strict order is the group's GLOBECOM'09 abstract's, seed note 004 §4.2)
RANKINGS = (("survivability", ("all", "candidate", "leaf", "single"), "higher"),
            ("answered_share", ("all", "candidate", "leaf", "single"), "higher"),
            ("overhead_per_request", ("single", "leaf", "candidate", "all"), "lower"))


def ranking_holds(rows: list[dict], metric: str) -> bool:
    """The trade-off's order on `metric` holds strictly at one point (rows:
    one per placement), by `subsum.fidelity.verdict.holds`."""
    _, order, better = next(r for r in RANKINGS if r[0] == metric)
    return rule.holds(order, better, {r["placement"]: r[metric] or 0.0 for r in rows})


def verdicts(placement_rows: list[dict]) -> dict[str, str]:
    """Each ranking's verdict over the series' points, by `subsum.fidelity.verdict.ranking_verdict`."""
    out = {}
    for metric, order, better in RANKINGS:
        by_point: dict[tuple, dict[str, float]] = {}
        for r in placement_rows:
            by_point.setdefault((r["brokers"], r["alpha"]), {})[r["placement"]] = r[metric] or 0.0
        out[metric] = rule.ranking_verdict(order, better, list(by_point.values()))
    return out


def holding(found: list[dict]) -> dict[str, str]:
    """At how many of a series' points each ranking holds."""
    return {metric: f"{sum(f[key] for f in found)} of {len(found)} points" for metric, key in
            (("survivability", "survivability_ranking_holds"), ("answered_share", "answered_ranking_holds"),
             ("overhead", "overhead_ranking_holds"))}


def findings(placement_rows: list[dict]) -> list[dict]:
    """The trade-off at every (brokers, α) point of a placement series."""
    points: dict[tuple, list[dict]] = {}
    for row in placement_rows:
        points.setdefault((row["brokers"], row["alpha"]), []).append(row)
    out = []
    for (brokers, alpha), rows in sorted(points.items()):
        by = {r["placement"]: r for r in rows}
        shown = ("survivability", "answered_share", "overhead_per_request", "delay_mean_hops")
        out.append({"brokers": brokers, "alpha": alpha, "seeds": rows[0]["seeds"],
                    "readings": {p: by[p]["reading"] for p in PLACEMENTS if by[p]["reading"]},
                    **{metric: {p: by[p][metric] for p in PLACEMENTS} for metric in shown},
                    **{f"{metric}_ci95": {p: by[p][f"{metric}_ci95"] for p in PLACEMENTS} for metric in shown},
                    "survivability_ranking_holds": ranking_holds(rows, "survivability"),
                    "answered_ranking_holds": ranking_holds(rows, "answered_share"),
                    "overhead_ranking_holds": ranking_holds(rows, "overhead_per_request")})
    return out


def point_list(sweep: Sweep, policy_brokers: int) -> list[tuple]:
    """Every point a run simulates: (series, brokers, placement, policy, cache share, α, reading, variant)."""
    points: list[tuple] = [("placement", brokers, placement, "lru", 0.05, alpha, "", "") for brokers in sweep.sizes
                           for alpha in sweep.alphas for placement in PLACEMENTS]
    # the same trees with caches that never evict: the seeds' reasoning without eviction
    points += [("unbounded", brokers, placement, "lru", None, 0.8, "", "") for brokers in sweep.sizes for placement in PLACEMENTS]
    points += [("policy", policy_brokers, "candidate", policy, share, alpha, "", "") for alpha in sweep.alphas for share in sweep.shares
               for policy in POLICIES]
    points += [("readings", brokers, placement, "lru", 0.05, alpha, reading, "") for brokers in sweep.sizes for alpha in sweep.alphas
               for placement, reading in OTHER_READINGS]
    return points + variant_points(sweep, policy_brokers)


def variant_points(sweep: Sweep, brokers: int) -> list[tuple]:
    """The variants series: candidate placement on the policy series' trees, each seed alternative at every α,
    beside the defaults of the same points (variant "default"; rate-LFU's are the policy series' LFU rows):
    duplicate suppression off and the request asked of one neighbor only (LRU, caches of 5% and unbounded),
    rate-LFU evicting the oldest among equal rates (each cache share)."""
    points = [("variants", brokers, "candidate", "lru", share, alpha, "", variant) for variant in ("no-suppression", "ask-one")
              for alpha in sweep.alphas for share in (0.05, None)]
    points += [("variants", brokers, "candidate", "lru", share, alpha, "", "default") for alpha in sweep.alphas for share in (0.05, None)]
    return points + [("variants", brokers, "candidate", "lfu", share, alpha, "", "lfu-oldest") for alpha in sweep.alphas
                     for share in sweep.shares]


def with_readings_rows(rows: list[dict]) -> list[dict]:
    """The readings series made whole: the placement series' all and
    candidate rows (no reading changes them) copied beside its own leaf and
    single rows, so that each of its points ranks the four placements."""
    copied = [{**r, "series": "readings"} for r in rows if r["series"] == "placement" and r["placement"] in ("all", "candidate")]
    return rows + copied


def run(out_dir, *, quick: bool = False, seed: int = 1, workers: int | None = None, log: Callable[[str], None] = print) -> dict:
    """The whole benchmark, each point over the seeds `seed`, `seed` + 1, …
    (five in the full run, in one process per core unless `workers` says;
    one with --quick, in this process); writes caching.csv, cache_ops.csv,
    tradeoff.png, policies.png, cache_ops.png and summary.json into out_dir."""
    sweep = QUICK if quick else FULL
    sizes, alphas, shares, messages = sweep.sizes, sweep.alphas, sweep.shares, sweep.messages
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows: list[dict] = []
    policy_brokers = 50 if not quick else sizes[0]
    points = point_list(sweep, policy_brokers)
    seeds = range(seed, seed + sweep.runs)
    tasks = [(brokers, placement, policy, share, alpha, messages, s, reading, variant)
             for _, brokers, placement, policy, share, alpha, reading, variant in points for s in seeds]
    reports = map_runs(run_task, tasks, workers or (1 if quick else os.cpu_count() or 1))
    for done, (series, *_) in enumerate(points, 1):
        row = over_seeds([{**next(reports), "series": series} for _ in seeds])
        rows.append(row)
        variant = f" {row['variant']}" if row["variant"] else ""
        log(f"[{done}/{len(points)}] {series}: {row['brokers']} brokers, α {row['alpha']}, {row['placement']} {row['reading']}{variant}, "
            f"{row['policy']}, cache {row['capacity'] or 'unbounded'}: survivability {row['survivability']} ± {row['survivability_ci95']}, "
            f"overhead {row['overhead_per_request']}/request ({row['seconds']}s over {row['seeds']} seeds)")

    rows = with_readings_rows(rows)
    op_rows, disagreements = cache_ops.measure(sweep.capacities, 5000, 0.8, sweep.operations, min(sweep.operations, 5000), seed, log)

    write_csv(out / "caching.csv", rows)
    write_csv(out / "cache_ops.csv", op_rows)
    placement_rows = [r for r in rows if r["series"] == "placement"]
    found = findings(placement_rows)
    unbounded = findings([r for r in rows if r["series"] == "unbounded"])
    readings = findings([r for r in rows if r["series"] == "readings"])
    plots = [plot_tradeoff(placement_rows, out / "tradeoff.png"), plot_policies([r for r in rows if r["series"] == "policy"], out / "policies.png")]
    cache_ops.plot(op_rows, out / "cache_ops.png")
    plots.append(out / "cache_ops.png")
    files = [str(out / "caching.csv"), str(out / "cache_ops.csv"), *map(str, plots), str(out / "summary.json")]
    seconds = round(time.perf_counter() - started, 1)
    summary = {
        "seconds": seconds,
        "parameters": {"sizes": list(sizes), "alphas": list(alphas), "cache_shares": list(shares), "messages": messages,
                       "topics": max(1, messages // 10), "placement_series": "LRU, caches of 5% of the messages",
                       "policy_series": f"candidate placement, {policy_brokers} brokers", "seeds": list(seeds), "quick": quick,
                       "interval": "95%, Student's t over the seeds (subsum/bench/intervals.py)"},
        "hypothesis": "survivability and answered share: all > candidate > leaf > single; overhead per request: the same order "
                      "(seed 004 §3.5 for all; the strict order is seed note 004 §4.2's outside context)",
        "verdicts": {series: verdicts([r for r in rows if r["series"] == series]) for series in ("placement", "unbounded", "readings")},
        "verdict_rule": "subsum/fidelity/verdict.py: matches if the order holds at every point, same trend at more than half, else differs",
        "hypothesis_holds": holding(found),
        "points": found,
        "unbounded_points": unbounded,
        "unbounded_hypothesis_holds": holding(unbounded),
        "readings_points": readings,
        "readings_hypothesis_holds": holding(readings),
        "policies": [{k: r[k] for k in ("alpha", "cache_share", "policy", "seeds", "survivability", "survivability_ci95", "answered_share",
                                        "answered_share_ci95", "delay_mean_hops", "overhead_per_request")} for r in rows if r["series"] == "policy"],
        "cache_ops": cache_ops.ratios(op_rows),
        "disagreements": disagreements,
        "seed_numbers": "none: seed 004's file stops at its page 21, before the results (seed note 004 §0)",
        "files": files,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(f"wrote {', '.join(files)} in {seconds}s")
    return summary


MARKERS = {"all": "s", "candidate": "o", "leaf": "^", "single": "x"}


def plot_tradeoff(rows: list[dict], path: Path) -> Path:
    plt = pyplot()
    sizes = sorted({r["brokers"] for r in rows})
    fig, axes = plt.subplots(2, len(sizes), figsize=(5 * len(sizes), 8), squeeze=False)
    for column, brokers in enumerate(sizes):
        for placement in PLACEMENTS:
            mine = sorted((r for r in rows if r["brokers"] == brokers and r["placement"] == placement), key=lambda r: r["alpha"])
            x = [r["overhead_per_request"] for r in mine]
            for row_index, metric, label in ((0, "survivability", "survivability (recovered / matching past)"),
                                             (1, "delay_mean_hops", "delay (mean broker hops of a recovered message)")):
                ax = axes[row_index][column]
                ax.errorbar(x, [r[metric] or 0.0 for r in mine], yerr=[r[f"{metric}_ci95"] or 0.0 for r in mine],
                            xerr=[r["overhead_per_request_ci95"] or 0.0 for r in mine], marker=MARKERS[placement], capsize=2, label=placement)
                for r in mine:
                    ax.annotate(f"α{r['alpha']}", (r["overhead_per_request"], r[metric] or 0.0), fontsize=6)
                ax.set_xlabel("overhead: REQUEST + RESPONSE + STORE messages per request")
                ax.set_ylabel(label)
                ax.set_title(f"{brokers} brokers, LRU, caches of 5%")
                ax.legend(fontsize=7)
    fig.suptitle("Placement trade-off (no published numbers: seed 004's results are lost); means over seeds, 95% intervals")
    return save_figure(fig, path, dpi=100)


def plot_policies(rows: list[dict], path: Path) -> Path:
    plt = pyplot()
    alphas = sorted({r["alpha"] for r in rows})
    fig, axes = plt.subplots(1, len(alphas), figsize=(4.5 * len(alphas), 4), squeeze=False)
    for ax, alpha in zip(axes[0], alphas):
        for policy in POLICIES:
            mine = sorted((r for r in rows if r["alpha"] == alpha and r["policy"] == policy), key=lambda r: r["cache_share"])
            ax.errorbar([100 * r["cache_share"] for r in mine], [r["survivability"] or 0.0 for r in mine],
                        yerr=[r["survivability_ci95"] or 0.0 for r in mine], marker="o", capsize=2, label=policy)
        ax.set_xlabel("cache size, % of the messages")
        ax.set_ylabel("survivability")
        ax.set_title(f"Zipf α = {alpha}, candidate placement")
        ax.legend(fontsize=7)
    return save_figure(fig, path, dpi=100)


def markdown_table(summary: dict) -> str:
    """The placement points and the hypothesis, as a markdown table."""
    lines = ["| caches | brokers | α | survivability all / candidate / leaf / single | overhead per request all / candidate / leaf / single "
             "| ranking holds (surv., overhead) |", "|---|---|---|---|---|---|"]
    for caches, f in ([("5%", f) for f in summary["points"]] + [("unbounded", f) for f in summary["unbounded_points"]]
                      + [("5%, leaf (i), single at the centre", f) for f in summary.get("readings_points", [])]):
        surv = " / ".join(f"{f['survivability'][p] or 0:.2f}" for p in PLACEMENTS)
        over = " / ".join(f"{f['overhead_per_request'][p] or 0:.1f}" for p in PLACEMENTS)
        lines.append(f"| {caches} | {f['brokers']} | {f['alpha']} | {surv} | {over} | {'yes' if f['survivability_ranking_holds'] else 'no'}, "
                     f"{'yes' if f['overhead_ranking_holds'] else 'no'} |")
    lines.append("")
    lines.append("hypothesis holds at (caches of 5%): " + "; ".join(f"{k} {v}" for k, v in summary["hypothesis_holds"].items()))
    lines.append("hypothesis holds at (unbounded caches): " + "; ".join(f"{k} {v}" for k, v in summary["unbounded_hypothesis_holds"].items()))
    if "readings_hypothesis_holds" in summary:
        lines.append("hypothesis holds at (leaf (i), single at the centre): "
                     + "; ".join(f"{k} {v}" for k, v in summary["readings_hypothesis_holds"].items()))
    lines.append("verdicts (subsum/fidelity/verdict.py): " + "; ".join(f"{series}: " + ", ".join(f"{m} {v}" for m, v in found.items())
                                                                  for series, found in summary.get("verdicts", {}).items()))
    lines.append("cache operations per second, implementation over reference (over cachetools): " + "; ".join(
        f"{r['policy']} K={r['capacity']} {r['impl_over_reference']}x" + (f" ({r['impl_over_cachetools']}x)" if r["impl_over_cachetools"] else "")
        for r in summary["cache_ops"]))
    return "\n".join(lines)
