"""Where the compiled engine's time goes at seed 001's default point (issue
37: "say what each part of the time is"), beside the vectorized engine in
the same run.

    python benchmarks/compiled_phases.py [--seeds 5] [--repeat 30] [--planted-rate 0.3] [--out-dir DIR]

For each seed it generates the default point, builds both engines, warms
them (the compiled kernels load or compile), then times, `--repeat` times
each and keeping the best: the whole `match_columns` of both engines, and
the compiled engine's own steps, called on its own index in the order
`CompiledEngine._match_pairs` calls them:

- occurrences: step 1, names to groups and values to rank keys;
- strings: the batch's distinct strings encoded as UTF-8;
- pattern memo: the (group, string) pairs tested once, when used;
- kernel: steps 2 to 5 (`kernels.by_event`, then `kernels.match_chunk` per
  chunk of events);
- rest: what `match_columns` adds (counters, the result arrays): the whole
  less the parts, so it can come out slightly negative when the parts,
  timed alone, were slowed by noise.

Writes compiled-phases.csv (one row per seed and part), compiled-phases.png
(means with 95% intervals over the seeds) and compiled-phases.json (the
means, intervals and the vectorized/compiled ratio) to --out-dir (default
bench-out/compiled-phases). Exits 2 on bad arguments and 1 if the two
engines' matches differ.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from subsum.bench.intervals import mean_ci
from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.bench.summaries.measure import best_time
from subsum.impl.matching import make_engine
from subsum.impl.matching.columnar.compiled import string_arrays
from subsum.bench.matching.workload import Params, generate

PARTS = ("occurrences", "strings", "pattern memo", "kernel", "rest")


def one_seed(seed: int, repeat: int, planted_rate: float) -> dict[str, float]:
    """Best-of-`repeat` seconds of each part, of both engines' whole match, on one seed's default point."""
    workload = generate(Params(seed=seed, planted_rate=planted_rate))
    batch = workload.batch
    compiled = make_engine("compiled", workload.subscriptions, count_distinct=False)
    vectorized = make_engine("vectorized", workload.subscriptions, count_distinct=False)
    got, want = compiled.match_columns(batch), vectorized.match_columns(batch)  # warm, and cross-check
    if sorted(zip(*map(np.ndarray.tolist, got))) != sorted(zip(*map(np.ndarray.tolist, want))):
        raise SystemExit(f"seed {seed}: the compiled and vectorized engines disagree")
    index = compiled.kernel_index
    ev, gid, rkey, scode = index.occurrences(batch)
    strings = string_arrays(batch.strings)
    memo, _ = index.pattern_memo(gid, scode, len(batch.strings), strings, compiled.memo_threshold, compiled.plan)
    parts = {
        "occurrences": best_time(lambda: index.occurrences(batch), repeat),
        "strings": best_time(lambda: string_arrays(batch.strings), repeat),
        "pattern memo": best_time(lambda: index.pattern_memo(gid, scode, len(batch.strings), strings, compiled.memo_threshold, compiled.plan),
                                  repeat),
        "kernel": best_time(lambda: index.match(ev, gid, rkey, scode, batch.n_events, strings, memo, compiled.plan), repeat),
    }
    whole = best_time(lambda: compiled.match_columns(batch), repeat)
    parts["rest"] = whole - sum(parts.values())  # negative when noise made the parts alone slower than the whole
    return {**parts, "compiled": whole, "vectorized": best_time(lambda: vectorized.match_columns(batch), repeat)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds 1 … N (default 5)")
    parser.add_argument("--repeat", type=int, default=30, help="timed runs per part, best kept (default 30)")
    parser.add_argument("--planted-rate", type=float, default=0.3, help="share of planted events (default 0.3)")
    parser.add_argument("--out-dir", type=Path, default=Path("bench-out/compiled-phases"))
    args = parser.parse_args(argv)
    if args.seeds < 2 or args.repeat < 1 or not 0.0 <= args.planted_rate <= 1.0:
        parser.error("--seeds must be at least 2 (for an interval), --repeat at least 1, --planted-rate in [0, 1]")
    runs = {seed: one_seed(seed, args.repeat, args.planted_rate) for seed in range(1, args.seeds + 1)}
    rows = [{"seed": seed, "part": part, "ms": round(seconds * 1000, 4)} for seed, run in runs.items() for part, seconds in run.items()]
    summary = {}
    for part in (*PARTS, "compiled", "vectorized"):
        mean, half = mean_ci([run[part] * 1000 for run in runs.values()])
        summary[part] = {"mean_ms": mean, "ci95_ms": half}
    ratios = [run["vectorized"] / run["compiled"] for run in runs.values()]
    summary["vectorized / compiled"] = dict(zip(("mean", "ci95"), mean_ci(ratios)))
    args.out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(args.out_dir / "compiled-phases.csv", rows, ("seed", "part", "ms"))
    (args.out_dir / "compiled-phases.json").write_text(json.dumps(
        {"seeds": args.seeds, "repeat": args.repeat, "planted_rate": args.planted_rate, "parts": summary}, indent=2) + "\n")
    plot(summary, args.out_dir / "compiled-phases.png")
    for part, figures in summary.items():
        print(f"{part:>22}: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    return 0


def plot(summary: dict, path: Path) -> None:
    plt = pyplot()
    labels = [*PARTS, "compiled", "vectorized"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.barh(labels, [summary[p]["mean_ms"] for p in labels], xerr=[summary[p]["ci95_ms"] for p in labels],
            color=["#4c72b0"] * len(PARTS) + ["#55a868", "#c44e52"])
    ax.invert_yaxis()
    ax.set_xlabel("ms per batch (best of the repeats; mean over seeds, 95% interval)")
    ax.set_title("compiled engine at seed 001's default point: its parts, and vectorized")
    ax.grid(True, axis="x", alpha=0.3)
    save_figure(fig, path)


if __name__ == "__main__":
    sys.exit(main())
