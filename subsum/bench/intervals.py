"""Means over seeds with their 95% confidence intervals, for every
benchmark that repeats a point over seeds (`client_server`, `caching`).

The half-width is Student's t: t(0.975, n − 1) · s / √n. With the five
seeds a point gets, t is 2.776, not the normal 1.96: a normal interval
over five runs would claim more confidence than the runs give.

>>> mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
(3.0, 1.9629)
"""

from __future__ import annotations

import math
import statistics

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
