"""How a broker's summary scales with its number of subscriptions (issue
54; seed 000 §5.2.4: matching and maintenance are O(N) in the number N of
subscriptions). Part of `subsum bench summaries`.

For each S (the subscriptions of one broker, Table 5-2's workload at
covering probability p) and each seed:
- **maintenance**: the time to add the S subscriptions to an
  `OwnerSummary` and export it, and to remove a tenth of them again, per
  subscription;
- **matching**: the time of `Summary.match` over the same E events (best
  of `repeat` runs), per event, and the ID entries the summary holds (what
  a match walks through).

The means over seeds with their 95% intervals go to scaling.csv. O(N)
shows as time per event growing with S while the time per event and
subscription stays level.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from subsum.bench.intervals import mean_ci
from subsum.bench.output import pyplot, save_figure
from subsum.bench.summaries.measure import BROKERS, best_time
from subsum.bench.summaries.workload import SCHEMA, generate
from subsum.impl.summary import IdLayout, OwnerSummary

SIZES = (250, 500, 1000, 2000, 4000)
QUICK_SIZES = (100, 200, 400)
COVERING = (0.1, 0.5, 0.9)
SEEDS = 3
EVENTS = 1000
REMOVED_SHARE = 0.1


def one_run(p: float, subscriptions: int, events: int, seed: int, repeat: int) -> dict:
    """One broker's summary of `subscriptions` at covering p: maintenance and matching times."""
    w = generate(p, subscriptions, events, seed)
    owner = OwnerSummary(0, IdLayout(BROKERS, max(subscriptions, 1), len(SCHEMA)), SCHEMA)
    t0 = time.perf_counter()
    for name, sub in w.subscriptions:
        owner.add(name, sub)
    summary = owner.export()
    added = time.perf_counter() - t0
    removed_names = [name for name, _ in w.subscriptions[:: round(1 / REMOVED_SHARE)]]
    t0 = time.perf_counter()
    for name in removed_names:
        owner.remove(name)
    removed = time.perf_counter() - t0
    match = summary.match
    matched = best_time(lambda: [match(e) for e in w.events], repeat)
    return {"add_us_per_subscription": 1e6 * added / subscriptions,
            "remove_us_per_subscription": 1e6 * removed / max(len(removed_names), 1),
            "match_us_per_event": 1e6 * matched / len(w.events),
            "match_ns_per_event_and_subscription": 1e9 * matched / len(w.events) / subscriptions,
            "rows": summary.row_count(), "id_entries": summary.id_entries()}


def sweep(seed: int, quick: bool, repeat: int, log: Callable[[str], None]) -> list[dict]:
    """scaling.csv's rows: each (p, S), the means over the seeds seed … seed + SEEDS − 1 with their intervals."""
    rows = []
    for p in COVERING:
        for subscriptions in QUICK_SIZES if quick else SIZES:
            t0 = time.perf_counter()
            runs = [one_run(p, subscriptions, 200 if quick else EVENTS, seed + k, repeat) for k in range(SEEDS)]
            row: dict = {"p": p, "subscriptions": subscriptions, "seeds": SEEDS}
            for column in runs[0]:
                row[column], row[f"{column}_ci95"] = mean_ci([float(r[column]) for r in runs])
            rows.append(row)
            log(f"scaling p={p} S={subscriptions}: match {row['match_us_per_event']:.1f} µs/event, "
                f"add {row['add_us_per_subscription']:.1f} µs/subscription ({time.perf_counter() - t0:.1f}s)")
    return rows


def plot(rows: list[dict], path: Path) -> Path:
    """scaling.png: time per event (matching) and per subscription (maintenance) against S, per p, log-log."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    for axis, column, title in ((axes[0], "match_us_per_event", "Summary.match, µs per event"),
                                (axes[1], "add_us_per_subscription", "OwnerSummary.add, µs per subscription")):
        for p in sorted({r["p"] for r in rows}):
            at = [r for r in rows if r["p"] == p]
            axis.errorbar([r["subscriptions"] for r in at], [r[column] for r in at], yerr=[r[f"{column}_ci95"] for r in at],
                          fmt="o-", capsize=2, label=f"p = {p}")
        xs = sorted({r["subscriptions"] for r in rows})
        first = min(r[column] for r in rows if r["subscriptions"] == xs[0])
        axis.plot(xs, [first * x / xs[0] for x in xs], "k:", label="O(N) from the smallest S")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("subscriptions at the broker (S)")
        axis.set_title(title + f" (95% intervals over {SEEDS} seeds)", fontsize=10)
        axis.grid(True, which="both", alpha=0.25)
        axis.legend(fontsize=7)
    return save_figure(fig, path)
