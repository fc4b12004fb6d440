"""Summary routing benchmark (issue 17; seed 000 §4.3 and ch. 5, Figs 5-2 to
5-5; spec/08-summary-routing.md DEF-SR-1, DEF-SR-2, DEF-SR-5;
benchmarks/README.md).

Summaries against Siena's covering-based forwarding and baselines (i) and
(ii) on 24-broker overlays: the Cable & Wireless US backbone (the thesis's
topology, Topology Zoo version, the full graph with its cycles) and a few
random trees; means over five seeds (--quick: two) with 95% intervals
(`seeds`). The baselines are measured on the simulator
(`simulated`: SienaBroker, BroadcastBroker and
FloodingBroker on CWIX's breadth-first tree); the thesis's own model of
Siena (a covering probability per broker) stays beside them as a
cross-check:

- **Fig. 5-2, propagation bandwidth per period** against σ: each broker's
  delta of σ new subscriptions (DEF-SUM-14) merged with its children's
  along the Algorithm 4-2 plan (DEF-SR-1), sized by the DEF-SUM-15 formula
  and by the DEF-SUM-16 binary encoding; Siena (probabilistic covering, seed
  note §6.5) × 50 bytes; baseline (i) (N−1)·h̄·N·σ·50 and walked.
- **Fig. 5-3, propagation hops per period**: N − #sinks sends for summaries;
  Siena's messages per period under two readings; baseline (i).
- **Fig. 5-4, routing hops per event** against popularity: BROCLI routing
  (DEF-SR-2) given the interested brokers, ROUTE + DELIVER messages (the
  thesis's hops) and overlay links (DEF-SR-5); Siena along the reverse
  paths of the subscriptions.
- **Fig. 5-5, storage** against covering probability: history summaries
  (DEF-SUM-14) against Siena's routing tables.
- **False positives** with real summaries: DELIVERs the owner's re-check
  (DEF-SUM-10) empties, on events of the generated workload.

The workload is `subsum.bench.summaries.workload.generate` (Table 5-2),
one per broker and covering probability, seeded `seed * 1000 + broker`.
Every other random draw comes from a generator seeded by a string derived
from `seed` (`summary_routing_overlays.rng_for`).

This module runs the benchmark and writes its files; the parts are
`overlays` (the topologies), `summaries`
(propagation and storage of summaries), `siena` (the
thesis's model of Siena, and baseline (i) by formula),
`simulated` (the baselines on the simulator),
`events` (routing and false positives) and
`seeds` (the means over seeds); the findings and the
thesis's numbers are in `report`, the figures in
`plots`.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable, Mapping

import attrs

from subsum.fidelity import report as fidelity
from subsum.bench.summary_routing import report
from subsum.bench.summary_routing import simulated
from subsum.bench.output import map_runs, write_csv
from subsum.bench.summaries.workload import PROBABILITIES, SCHEMA
from subsum.bench.summary_routing.events import false_positive_row, routing_rows
from subsum.bench.summary_routing.overlays import BROKERS, RANDOM_TREES, Topology, rng_for, topologies
from subsum.bench.summary_routing.plots import plots
from subsum.bench.intervals import means_over_seeds
from subsum.bench.summary_routing.seeds import KEYS, beside_summaries, routing_beside_summaries, storage_beside_summaries
from subsum.bench.summary_routing.siena import (SUBSCRIPTION_BYTES, baseline_formula_bytes, baseline_walked_links,
                                                siena_expected_messages, siena_period)
from subsum.bench.summary_routing.summaries import GrowingDeltas, broker_workloads, propagate, summary_propagation, summary_storage
from subsum.impl.summary import IdLayout, Summary

FIGURES = ("Fig. 5-2", "Fig. 5-3", "Fig. 5-4", "Fig. 5-5")  # the figures whose statements summary.json judges
SIGMAS = (10, 30, 100, 300, 1000)  # Table 5-2: σ = 10 … 1000 new subscriptions per broker per period
SUBSCRIPTIONS = 1000  # Table 5-2: S active subscriptions per broker
EVENTS_PER_BROKER = 1000  # Fig. 5-4: 1000 events published at each broker
FP_EVENTS_PER_BROKER = 40  # real events per broker for the false-positive run
SIMULATED_EVENTS_PER_BROKER = 100  # Fig. 5-4 on the simulator: events per broker and point, under each baseline


@attrs.define
class Results:
    """The rows of every table the run writes, and the cross-checks' disagreements."""

    propagation: list = attrs.field(factory=list)  # Fig. 5-2 (and the hops of 5-3): topology, p, σ
    hops: list = attrs.field(factory=list)  # Fig. 5-3: topology, p (from 0)
    routing: list = attrs.field(factory=list)  # Fig. 5-4: topology, k
    storage: list = attrs.field(factory=list)  # Fig. 5-5: topology, p
    storage_small: list = attrs.field(factory=list)  # Fig. 5-5 with 10 to 100 subscriptions a broker (§5.2.3): topology, p, σ
    false_positives: list = attrs.field(factory=list)
    simulated: list = attrs.field(factory=list)  # Figs 5-2, 5-3, 5-5: Siena and baseline (i) on the simulator, CWIX
    simulated_storage: list = attrs.field(factory=list)  # Fig. 5-5: the same, at σ = S
    simulated_routing: list = attrs.field(factory=list)  # Fig. 5-4: Siena, flooding and baseline (i) on the simulator
    disagreements: list = attrs.field(factory=list)


# -- one covering probability ------------------------------------------------------------

def propagation_row(t: Topology, p: float, sigma: int, merged: Mapping[int, Summary], seed: int) -> dict:
    row = {"topology": t.name, "p": p, "sigma": sigma, "sinks": len(t.plan.sinks), **summary_propagation(t.plan, merged)}
    row.update(siena_period(t, p, sigma, rng_for(seed, t.name, p, sigma, "siena")))
    row["siena_bytes"] = row["siena_messages"] * SUBSCRIPTION_BYTES
    row["baseline_formula_bytes"] = round(baseline_formula_bytes(t, sigma))
    row["baseline_walked_bytes"] = baseline_walked_links(t) * sigma * SUBSCRIPTION_BYTES
    row["siena_over_summary"] = round(row["siena_bytes"] / row["summary_formula_bytes"], 3)
    row["siena_over_summary_wire"] = round(row["siena_bytes"] / row["summary_wire_bytes"], 3)
    row["baseline_over_summary"] = round(row["baseline_formula_bytes"] / row["summary_formula_bytes"], 2)
    row["baseline_over_summary_wire"] = round(row["baseline_formula_bytes"] / row["summary_wire_bytes"], 2)
    return row


def storage_row(t: Topology, p: float, subscriptions: int, merged: Mapping[int, Summary], siena_messages: int) -> dict:
    """Siena stores every subscription at its origin and at every broker it reaches (covered or not); beside the
    sampled count, the expected one under the thesis's covering (deg-weighted, 000-5.2.1-d) and under uniform covering."""
    row = {"topology": t.name, "p": p, "subscriptions_per_broker": subscriptions, **summary_storage(merged)}
    row["siena_stored"] = t.n * subscriptions + siena_messages
    row["siena_bytes"] = row["siena_stored"] * SUBSCRIPTION_BYTES
    row["baseline_bytes"] = t.n * t.n * subscriptions * SUBSCRIPTION_BYTES
    row["local_subscription_bytes"] = t.n * subscriptions * SUBSCRIPTION_BYTES
    row["siena_over_summary"] = round(row["siena_bytes"] / row["summary_formula_bytes"], 3)
    row["siena_over_summary_wire"] = round(row["siena_bytes"] / row["summary_wire_bytes"], 3)
    for name, uniform in (("expected", False), ("uniform", True)):  # the thesis's model in expectation, each covering reading
        stored = t.n * subscriptions + subscriptions * siena_expected_messages(t, p, uniform)
        row[f"siena_{name}_over_summary"] = round(stored * SUBSCRIPTION_BYTES / row["summary_formula_bytes"], 3)
    return row


#: Fig. 5-5 is also measured with each broker holding σ ≤ this many subscriptions (the σ of the sweep up to it)
SMALL_STORAGE = 100


def measure_probability(tops: list[Topology], p: float, sigmas: tuple[int, ...], subscriptions: int, fp_events: int,
                        seed: int, results: Results, log: Callable[[str], None]) -> None:
    """Figs 5-2 and 5-5 (and the false-positive run on CWIX) at covering probability p."""
    t0 = time.perf_counter()
    w = broker_workloads(p, BROKERS, subscriptions, fp_events, seed)
    deltas = GrowingDeltas(w)
    for sigma in sorted(set(sigmas) | {subscriptions}):
        own = deltas.grow_to(sigma)
        for t in tops:
            merged = propagate(t.plan, own)
            row = propagation_row(t, p, sigma, merged, seed)
            if sigma in sigmas:
                results.propagation.append(row)
            if sigma <= SMALL_STORAGE:  # §5.2.3's setup: each broker receives and forwards 10 to 100 subscriptions a period
                results.storage_small.append(storage_row(t, p, sigma, merged, row["siena_messages"]))
            if sigma == subscriptions:
                results.storage.append(storage_row(t, p, subscriptions, merged, row["siena_messages"]))
                if t.name == "cwix" and fp_events:
                    fp, problems = false_positive_row(t, w, merged, seed)
                    results.false_positives.append(fp)
                    results.disagreements += problems
    log(f"p={p}: propagation, storage and false positives on {len(tops)} topologies in {time.perf_counter() - t0:.1f}s")


def measure_routing(tops: list[Topology], events: int, seed: int, checks: int, results: Results,
                    log: Callable[[str], None]) -> None:
    """Fig. 5-4 on every topology, with `checks` routes per point checked one by one."""
    t0 = time.perf_counter()
    for t in tops:
        rows, problems = routing_rows(t, events, seed, checks)
        results.routing += rows
        results.disagreements += problems
    log(f"routing: {events} events per broker, k = 0 … {BROKERS} interested, {len(tops)} topologies in {time.perf_counter() - t0:.1f}s")


def hop_rows(tops: list[Topology], propagation: list[dict], seed: int) -> list[dict]:
    """Fig. 5-3, from covering probability 0: summaries N − #sinks sends;
    Siena's expected messages of a period whose subscriptions are covered
    or forwarded as one batch (seed note §6.6: "each broker forwards to each
    neighbor with a probability depending on covering"), and its link
    batches at the smallest and largest σ (the propagation rows; simulated
    here at p = 0); baseline (i): links, each subscription to each broker."""
    rows = []
    sigmas = sorted({r["sigma"] for r in propagation})
    for t in tops:
        for p in (0.0, *sorted({r["p"] for r in propagation})):
            batches = {}
            for sigma in (sigmas[0], sigmas[-1]):
                found = [r for r in propagation if r["topology"] == t.name and r["p"] == p and r["sigma"] == sigma]
                batches[sigma] = found[0] if found else siena_period(t, p, sigma, rng_for(seed, t.name, p, sigma, "siena"))
            rows.append({"topology": t.name, "p": p, "brokers": t.n, "sinks": len(t.plan.sinks),
                         "summary_sends": t.n - len(t.plan.sinks), "siena_batch_expected": round(siena_expected_messages(t, p), 2),
                         "sigma_small": sigmas[0], "siena_link_batches_small": batches[sigmas[0]]["siena_link_batches"],
                         "sigma_large": sigmas[-1], "siena_link_batches_large": batches[sigmas[-1]]["siena_link_batches"],
                         "siena_messages_per_subscription": round(batches[sigmas[-1]]["siena_messages"] / (t.n * sigmas[-1]), 3),
                         "baseline_links": baseline_walked_links(t), "mean_hops": round(t.mean_hops, 4)})
    return rows


# -- the run ------------------------------------------------------------------------------

def topology_summary(t: Topology) -> dict:
    return {"name": t.name, "note": t.note, "brokers": t.n, "links": len(t.edges), "max_degree": t.max_degree,
            "mean_hops": round(t.mean_hops, 4), "sinks": list(t.plan.sinks),
            "merged_brokers": {str(s): sorted(t.plan.merged[s]) for s in t.plan.sinks},
            "propagation_sends": t.n - len(t.plan.sinks)}


@attrs.frozen
class Sweep:
    """What one run measures (the full run's, or --quick's)."""

    seeds: int  # seeds seed, seed + 1, …
    subscriptions: int
    sigmas: tuple[int, ...]
    trees: int
    events: int  # Fig. 5-4, per broker, BROCLI's count
    fp_events: int
    checks: int  # routes per point routed one by one
    simulated_events: int  # Fig. 5-4, per broker, on the simulator


FULL = Sweep(5, SUBSCRIPTIONS, SIGMAS, RANDOM_TREES, EVENTS_PER_BROKER, FP_EVENTS_PER_BROKER, 20, SIMULATED_EVENTS_PER_BROKER)
QUICK = Sweep(2, 60, (10, 30, 60), 1, 100, 5, 3, 10)


def measure_seed(seed: int, sweep: Sweep) -> Results:
    """The summaries side, and the model's Siena and baseline (i) beside it (the cross-check), for one seed."""
    tops = topologies(seed, sweep.trees)
    results = Results()
    for p in PROBABILITIES:
        measure_probability(tops, p, sweep.sigmas, sweep.subscriptions, sweep.fp_events, seed, results, lambda _: None)
    results.hops = hop_rows(tops, results.propagation, seed)
    measure_routing(tops, sweep.events, seed, sweep.checks, results, lambda _: None)
    return results


def run_task(task: tuple) -> dict:
    """One task of a run (a worker process's job): a seed's summaries side, one covering probability's periods on
    the simulator (CWIX), or a seed's event routing on the simulator."""
    kind, seed, p, quick = task
    sweep = QUICK if quick else FULL
    if kind == "summaries":
        return attrs.asdict(measure_seed(seed, sweep))
    cwix = topologies(seed, 0)[0]
    if kind == "periods":
        w = broker_workloads(p, BROKERS, sweep.subscriptions, 0, seed)
        return {"rows": [simulated.period_row(cwix, w, sigma, seed, store=sigma == sweep.subscriptions)
                         for sigma in sorted(set(sweep.sigmas) | {sweep.subscriptions})]}
    return {"rows": simulated.routing_rows(cwix, sweep.simulated_events, seed)}


def run_seeds(seeds: tuple[int, ...], quick: bool, workers: int, log: Callable[[str], None]) -> Results:
    """Every task of every seed, in `workers` processes; the means over seeds with their intervals."""
    simulated_ps = PROBABILITIES[::2] if quick else PROBABILITIES  # --quick: the lowest, middle and highest covering
    tasks = [("summaries", s, None, quick) for s in seeds] + [("periods", s, p, quick) for s in seeds for p in simulated_ps]
    tasks += [("routing", s, None, quick) for s in seeds]
    done: dict[tuple, dict] = {}
    for task, result in zip(tasks, map_runs(run_task, tasks, workers)):
        done[task[:3]] = result
        log(f"{len(done)} of {len(tasks)}: {task[0]}, seed {task[1]}" + (f", p={task[2]}" if task[2] is not None else ""))
    per_seed: dict[str, list] = {name: [] for name in KEYS}
    disagreements = []
    for s in seeds:
        mine = done[("summaries", s, None)]
        for name in ("propagation", "hops", "routing", "storage", "storage_small", "false_positives"):
            per_seed[name].append(mine[name])
        disagreements += [f"seed {s}: {problem}" for problem in mine["disagreements"]]
        periods = [row for p in simulated_ps for row in done[("periods", s, p)]["rows"]]
        per_seed["simulated"].append(beside_summaries(periods, mine["propagation"]))
        per_seed["simulated_storage"].append(storage_beside_summaries(periods, mine["storage"]))
        per_seed["simulated_routing"].append(routing_beside_summaries(done[("routing", s, None)]["rows"], mine["routing"]))
    tables = {name: means_over_seeds(rows, KEYS[name]) for name, rows in per_seed.items()}
    return Results(**tables, disagreements=disagreements)


def run(out_dir: Path, *, quick: bool = False, seed: int = 1, workers: int | None = None,
        log: Callable[[str], None] = print) -> dict:
    """The whole benchmark over the seeds seed, seed + 1, … (5; --quick: 2), in `workers` processes (default: one
    per core; --quick: this one): writes propagation.csv, hops.csv, routing.csv, storage.csv, storage_small.csv, false_positives.csv,
    simulated.csv, simulated_routing.csv (means with their 95% intervals), one PNG per figure and summary.json
    into out_dir; returns the summary dict."""
    sweep = QUICK if quick else FULL
    seeds = tuple(range(seed, seed + sweep.seeds))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    workers = 1 if quick else (workers or os.cpu_count() or 1)
    results = run_seeds(seeds, quick, workers, log)
    tables = {f"{name}.csv": getattr(results, name) for name in KEYS}
    for name, rows in tables.items():
        write_csv(out / name, rows)
    tops = [topology_summary(t) for t in topologies(seed, sweep.trees)]
    figures = plots(results, tops, out)
    summary: dict = {
        "seconds": round(time.perf_counter() - started, 1),
        "parameters": {"quick": quick, "seed": seed, "seeds": list(seeds), "brokers": BROKERS,
                       "subscriptions_per_broker": sweep.subscriptions, "sigmas": list(sweep.sigmas),
                       "probabilities": list(PROBABILITIES), "events_per_broker": sweep.events,
                       "simulated_events_per_broker": sweep.simulated_events,
                       "false_positive_events_per_broker": sweep.fp_events, "checked_routes_per_point": sweep.checks,
                       "subscription_bytes": SUBSCRIPTION_BYTES, "schema": [f"{n}:{t}" for n, t in SCHEMA],
                       "id_bytes": IdLayout(BROKERS, sweep.subscriptions, len(SCHEMA)).id_bytes, "random_trees": sweep.trees},
        "topologies": tops,
        "simulated_tree": "CWIX's breadth-first tree from its centre: " + str(simulated.spanning_tree(topologies(seed, 0)[0])),
        "thesis": report.THESIS,
        "comparison": {**report.comparison(results), "simulated_cwix": report.simulated_comparison(results)},
        "verdicts": [],  # below, once the CSVs are written
        "why": report.WHY,
        "differences": report.DIFFERENCES,
        "disagreements": results.disagreements,
        "files": [*(str(out / n) for n in tables), *map(str, figures), str(out / "summary.json")],
    }
    # the verdicts: seed 000's statements about Figs. 5-2 to 5-5 on these CSVs, by the rule of benchmarks/FIDELITY.md
    summary["verdicts"] = fidelity.judged("summary-routing", out, "000", FIGURES)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(f"wrote {', '.join(summary['files'])} in {summary['seconds']}s")
    return summary


if __name__ == "__main__":  # python -m subsum.bench.summary_routing.bench [--quick] [OUT]
    import sys

    args = sys.argv[1:]
    result = run(Path(next((a for a in args if not a.startswith("--")), "bench-out/summary-routing")), quick="--quick" in args)
    sys.exit(1 if result["disagreements"] else 0)
