"""Means over seeds with their 95% confidence intervals, for every
benchmark that repeats a point over seeds (`client_server`, `caching`,
`summary_routing`, `seeds`).

The half-width is Student's t: t(0.975, n − 1) · s / √n. With the five
seeds a point gets, t is 2.776, not the normal 1.96: a normal interval
over five runs would claim more confidence than the runs give.

>>> mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
(3.0, 1.9629)
>>> rows = [[{"p": 0.1, "x": 1.0, "name": "a"}], [{"p": 0.1, "x": 3.0, "name": "a"}]]
>>> means_over_seeds(rows, ("p",))
[{'p': 0.1, 'x': 2.0, 'x_ci95': 12.706, 'name': 'a', 'seeds': 2}]
"""

from __future__ import annotations

import math
import statistics
from typing import Mapping, Sequence

#: t(0.975, df) for df = 1 … 30 (the standard table); beyond 30, the normal 1.96 is within 4%.
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_critical(df: int) -> float:
    """Student's t(0.975, df), the multiplier of a two-sided 95% interval."""
    if df < 1:
        raise ValueError(f"an interval needs at least 2 values (df ≥ 1), got df = {df}")
    return T_975[df - 1] if df <= len(T_975) else 1.96


def mean_ci(values: list[float], digits: int = 4) -> tuple[float, float]:
    """The mean and the half-width of its 95% confidence interval, rounded
    to `digits` (half-width 0 for a single value: one seed, no interval)."""
    mean = statistics.fmean(values)
    half = t_critical(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return round(mean, digits), round(half, digits)


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def means_over_seeds(per_seed: Sequence[Sequence[Mapping]], keys: Sequence[str]) -> list[dict]:
    """One row per point (the `keys`' values, in first-seen order): each number the mean over the seeds with its
    95% half-width beside it (`{column}_ci95`), any other value (equal in every seed) as it is, and `seeds`. Every
    point must have exactly one row in each seed, with the same columns (ValueError otherwise: no silent mix)."""
    groups: dict[tuple, list[Mapping]] = {}
    for seed, rows in enumerate(per_seed):
        for row in rows:
            slot = groups.setdefault(tuple(row[k] for k in keys), [])
            if len(slot) != seed:
                raise ValueError(f"point { {k: row[k] for k in keys} }: not one row in each seed before seed index {seed}")
            slot.append(row)
    out = []
    for point, rows in groups.items():
        if len(rows) != len(per_seed) or any(set(row) != set(rows[0]) for row in rows):
            raise ValueError(f"point {dict(zip(keys, point))}: {len(rows)} rows for {len(per_seed)} seeds, or columns that differ")
        merged: dict = dict(zip(keys, point))
        for column in rows[0]:
            if column in keys:
                continue
            values = [row[column] for row in rows]
            if all(is_number(v) for v in values):
                merged[column], merged[f"{column}_ci95"] = mean_ci([float(v) for v in values])
            elif all(v == values[0] for v in values):
                merged[column] = values[0]
            else:
                raise ValueError(f"point {dict(zip(keys, point))}: column {column} is not a number and differs between seeds")
        merged["seeds"] = len(rows)
        out.append(merged)
    return out
