"""Seed 001's five experiment groups over several seeds (issue 54),
`subsum bench matching --over-seeds N`.

One seed gives one workload draw a point, and its timed runs repeat the
same draw: a point that is slower or faster than its neighbors could be
the draw or the machine, and matching.csv cannot tell which. This run
draws every point of the chosen groups again with the seeds `seed`,
`seed + 1`, … (`N` in all), times the four engines of seed 001's §4
(BruteForce, Counting, ICCounting, RABasedMatching) on each, and writes:

- `seeds.csv`: one row per seed, group, variant, point and engine;
- `over_seeds.csv`: the means over the seeds, each with its 95% interval
  beside it (`{column}_ci95`, `intervals.means_over_seeds`).

`work` is the engine's counted work, index lookups plus counter
increments: it does not depend on the machine, only on the draw.

>>> [c for c in SEED_FIELDS if c.startswith("match")]
['match_s_mean', 'match_s_min', 'matches']
"""

from __future__ import annotations

from pathlib import Path
from subsum.bench.intervals import means_over_seeds
from subsum.bench.output import write_csv

#: the columns of seeds.csv (over_seeds.csv: the numbers' means, each with `_ci95`, and `seeds`)
KEYS = ("group", "variant", "symbol", "x", "engine")
SEED_FIELDS = (*KEYS, "seed", "match_s_mean", "match_s_min", "matches", "index_lookups", "counter_increments", "work")


def seed_row(row: dict) -> dict:
    """One engine's point of one seed, from a `matching.Runner` row."""
    out = {k: row[k] for k in (*KEYS, "seed", "match_s_mean", "match_s_min", "matches", "index_lookups", "counter_increments")}
    out["work"] = int(row["index_lookups"] or 0) + int(row["counter_increments"] or 0)
    return out


def write_over_seeds(per_seed: list[list[dict]], engines, out: Path) -> list[Path]:
    """seeds.csv and over_seeds.csv from each seed's `matching.Runner` rows (one list per seed, in seed order),
    for the `engines` only; returns their paths."""
    kept = [[seed_row(r) for r in rows if r["engine"] in engines and r["match_s_mean"] == r["match_s_mean"]] for rows in per_seed]
    means = means_over_seeds([[{k: v for k, v in r.items() if k != "seed"} for r in rows] for rows in kept], KEYS)
    fields = list(means[0]) if means else list(SEED_FIELDS)
    return [write_csv(out / "seeds.csv", [r for rows in kept for r in rows], SEED_FIELDS),
            write_csv(out / "over_seeds.csv", means, fields)]
