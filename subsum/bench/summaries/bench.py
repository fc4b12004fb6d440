"""Subscription summaries benchmark (seed 000 §5, Table 5-2; benchmarks/README.md).

One run compares the following, for each covering probability p:
- **size**: a broker's summary by the thesis's formula (`formula_size`,
  s_st = s_id = 4, s_sv = 10) and by its measured binary encoding
  (`wire.to_bytes`), against the raw subscriptions by the thesis's
  S × 50 bytes and by their measured JSONL bytes. Also a single-broker
  stand-in for Siena (subscriptions that no other subscription covers as a
  whole, × 50 bytes).
- **false positives**: the (event, subscription) pairs the summary reports
  that do not truly match, before the owner's re-check.
- **throughput**: `Summary.match`, `Summary.match` plus `OwnerSummary.recheck`,
  and the `indexed` engine's `match_batch`, on the same subscriptions and
  events (best of `repeat` runs, building excluded).
- **scaling** (`scaling`, scaling.csv): matching and maintenance
  times against the number of subscriptions, over three seeds.

Every event is cross-checked: summary candidates must contain the indexed
engine's matches (no false negatives) and the re-check must give exactly
them. Any disagreement is listed in the result's "disagreements"; the caller
exits non-zero.

The workload is `summaries_workload.generate`; the measurements are in
`measure`, the plots, findings and table in `report`.
The realized covering share is 1 − rows / ID entries of the summary: the
share of (subscription, attribute) constraints that did not open a row of
their own.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from subsum.bench.summaries import scaling
from subsum.bench.output import write_csv
from subsum.bench.summaries.measure import BROKERS, measure, measure_merged
from subsum.bench.summaries.report import assess, markdown_table, plots
from subsum.bench.summaries.workload import (EXISTING, HOT, KIND_WEIGHTS, NUMERIC_PER_SUB, PLANTED, PROBABILITIES,
                                             RANGE_SHARE, SCHEMA, STRING_LEN, STRING_PER_SUB, generate)

CSV_FIELDS = (
    "p", "subscriptions", "events", "seed", "repeat", "covered_drawn", "covering_realized",
    "rows", "id_entries", "ranges_per_numeric", "equalities_per_numeric", "rows_per_string",
    "summary_formula_bytes", "summary_aacs_bytes", "summary_sacs_bytes", "summary_binary_bytes",
    "raw_formula_bytes", "raw_jsonl_bytes", "formula_ratio", "binary_ratio",
    "siena_stored", "siena_formula_bytes", "summary_vs_siena",
    "planted_events", "true_pairs", "reported_pairs", "false_pairs", "fp_share", "events_with_fp_share",
    "candidates_per_event", "matches_per_event", "ids_counted_per_event",
    "build_summary_s", "build_indexed_s", "summary_s", "summary_recheck_s", "indexed_s",
    "summary_eps", "summary_recheck_eps", "indexed_eps", "summary_vs_indexed", "recheck_vs_indexed",
    "merged_brokers", "merged_rows", "merged_id_entries", "merged_formula_bytes", "merged_binary_bytes",
    "merged_raw_formula_bytes", "merged_formula_ratio", "merge_s",
    "disagreements",
)


def parameters(probabilities, subscriptions: int, events: int, repeat: int, seed: int, quick: bool) -> dict:
    """The run's settings and the generator's constants, for summary.json."""
    return {"probabilities": list(probabilities), "subscriptions": subscriptions, "events": events,
            "repeat": repeat, "seed": seed, "quick": quick, "schema": [f"{n}:{t}" for n, t in SCHEMA],
            "numeric_per_subscription": NUMERIC_PER_SUB, "string_per_subscription": STRING_PER_SUB,
            "brokers_in_id_layout": BROKERS, "planted": PLANTED, "hot": HOT, "existing": EXISTING,
            "covered_kind_weights": list(KIND_WEIGHTS), "range_share": RANGE_SHARE, "string_len": STRING_LEN}


def run(out_dir: Path, *, probabilities=PROBABILITIES, subscriptions: int = 1000, events: int = 2000,
        repeat: int = 3, seed: int = 1, quick: bool = False, log: Callable[[str], None] = print) -> dict:
    """The whole benchmark: writes summaries.csv, sizes.png, false_positives.png,
    throughput.png and summary.json into out_dir; returns the summary dict."""
    if quick:
        subscriptions, events, repeat = min(subscriptions, 200), min(events, 200), 1
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows, disagreements = [], []
    for p in probabilities:
        t0 = time.perf_counter()
        w = generate(p, subscriptions, events, seed)
        log(f"p={p}: generated S={subscriptions} E={events} ({w.planted} planted) in {time.perf_counter() - t0:.1f}s")
        row, problems = measure(w, repeat, log)
        row.update(measure_merged(p, subscriptions, seed, log))
        rows.append(row)
        disagreements += problems
    write_csv(out / "summaries.csv", rows, CSV_FIELDS)
    scaled = scaling.sweep(seed, quick, 1 if quick else repeat, log)
    write_csv(out / "scaling.csv", scaled)
    figures = [*plots(rows, out), scaling.plot(scaled, out / "scaling.png")]
    summary = {
        "seconds": round(time.perf_counter() - started, 1),
        "parameters": parameters(probabilities, subscriptions, events, repeat, seed, quick),
        "rows": rows,
        "findings": assess(rows, disagreements),
        "disagreements": disagreements,
        "files": [str(out / "summaries.csv"), str(out / "scaling.csv"), *map(str, figures), str(out / "summary.json")],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(f"wrote {', '.join(summary['files'])} in {summary['seconds']}s")
    if disagreements:
        log("DISAGREEMENTS: " + "; ".join(disagreements))
    return summary


if __name__ == "__main__":  # python -m subsum.bench.summaries.bench [--quick] [OUT]
    import sys

    args = sys.argv[1:]
    result = run(Path(next((a for a in args if not a.startswith("--")), "benchmarks/results/summaries")),
                 quick="--quick" in args)
    print(markdown_table(result["rows"]))
    sys.exit(1 if result["disagreements"] else 0)
