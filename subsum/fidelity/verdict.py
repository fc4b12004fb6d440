"""The one rule that turns a seed's statement and our measurement into a
verdict (issue 33, made strict by issue 54; spec/13-fidelity.md):
`benchmarks/FIDELITY.md` and every bench's summary.json take their verdicts
from here, never from a hand-written label.

- **matches**: a number within the seed's stated precision (its range), or
  within ±15% of its value where it states none; a trend whose every step
  goes the stated way (a flat one: every point within ±15% of the series'
  mean); a ranking that holds at every point measured.
- **same trend**: a trend of which at least 75% of the steps go the stated
  way; a ranking that holds at at least 75% of the points, where every
  point at which it fails does so inside the 95% intervals (each reversed or
  tied pair of neighbors in the order has overlapping intervals; a point
  with no interval cannot show it). A number is never *same trend*: one
  outside its band *differs*, and the direction of our series is reported
  beside the verdict (`direction_note`), never instead of it. A flat trend
  either matches or differs.
- **differs**: anything else measured.
- **not reproduced**: nothing of ours measures it.

Means are compared; their 95% intervals are reported beside them.

>>> number_verdict(6.0, None, 5.4)
'matches'
>>> number_verdict(5.0, None, 0.2)
'differs'
>>> trend_verdict("down", [(0.05, 1.0), (0.5, 0.6), (1.5, 0.7)])
'differs'
>>> ranking_verdict(["soha", "sc", "server"], "lower", [{"soha": 2.9, "sc": 3.4, "server": 5.0}])
'matches'
"""

from __future__ import annotations

import statistics
from typing import Mapping, Sequence

MATCHES, SAME_TREND, DIFFERS, NOT_REPRODUCED = "matches", "same trend", "differs", "not reproduced"
VERDICTS = (MATCHES, SAME_TREND, DIFFERS, NOT_REPRODUCED)
#: the band around a seed's number when it states no precision
TOLERANCE = 0.15
DIRECTIONS = ("up", "down", "flat")
#: The share of a trend's steps, or of a ranking's points, that must go the stated way for *same trend*
MAJORITY = 0.75
BETTER = ("lower", "higher")


def band_of(value: float, stated: Sequence[float] | None = None) -> tuple[float, float]:
    """The values that match `value`: the seed's stated range, else ±15% of it.

    >>> band_of(0.45)
    (0.3825, 0.5175)
    >>> band_of(0.0, (0.0, 0.05))
    (0.0, 0.05)
    """
    if stated is not None:
        low, high = stated
        return (float(low), float(high))
    spread = TOLERANCE * abs(value)
    return (round(value - spread, 10), round(value + spread, 10))


def direction_of(series: Sequence[tuple[float, float]]) -> str | None:
    """Our series' way from its first point to its last: up, down or flat
    (every point within ±15% of the mean); None for fewer than two points."""
    points = [y for _, y in sorted(series)]
    if len(points) < 2:
        return None
    centre = statistics.fmean(points)
    if all(abs(y - centre) <= TOLERANCE * abs(centre) for y in points) or points[-1] == points[0]:
        return "flat"
    return "up" if points[-1] > points[0] else "down"


def steps_going(direction: str, series: Sequence[tuple[float, float]]) -> tuple[int, int]:
    """How many steps of the series (in x order) go the stated way (up or down), of how many."""
    points = [y for _, y in sorted(series)]
    pairs = list(zip(points, points[1:]))
    return sum((b > a) if direction == "up" else (b < a) for a, b in pairs), len(pairs)


def number_verdict(value: float, stated_band: Sequence[float] | None, ours: float | None) -> str:
    """A number the seed states, against our mean: within its band or not (its direction is a note beside the
    verdict, `direction_note`, never the verdict).

    >>> number_verdict(0.45, None, 0.5), number_verdict(0.45, None, 0.9)
    ('matches', 'differs')
    """
    if ours is None:
        return NOT_REPRODUCED
    low, high = band_of(value, stated_band)
    return MATCHES if low <= ours <= high else DIFFERS


def direction_note(stated_direction: str | None, series: Sequence[tuple[float, float]]) -> str:
    """Beside a number's verdict: the way our series goes from its first point to its last, and whether that is the
    way the seed says the number moves ("" when the seed says none or we have no series).

    >>> direction_note("down", [(1, 5.0), (2, 3.0)])
    'our series goes down, as the seed says'
    """
    ours = direction_of(series)
    if stated_direction is None or ours is None:
        return ""
    return f"our series goes {ours}, as the seed says" if ours == stated_direction else \
        f"our series goes {ours}; the seed says {stated_direction}"


def trend_verdict(direction: str, series: Sequence[tuple[float, float]] | None) -> str:
    """A trend the seed states (up, down or flat as the parameter grows) against our series: every step the stated
    way matches, at least 75% of them keep the same trend; flat matches only with every point near the mean.

    >>> trend_verdict("up", [(1, 1.0), (2, 10.0), (3, 9.0), (4, 8.0), (5, 3.0)])
    'differs'
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}; expected one of {', '.join(DIRECTIONS)}")
    if not series or len(series) < 2:
        return NOT_REPRODUCED
    if direction == "flat":
        return MATCHES if direction_of(series) == "flat" else DIFFERS
    going, steps = steps_going(direction, series)
    if going == steps:
        return MATCHES
    return SAME_TREND if going >= MAJORITY * steps else DIFFERS


def holds(order: Sequence[str], better: str, point: Mapping[str, float]) -> bool:
    """The stated order (best first) holds among our means at one point: each strictly better than the next."""
    values = [point[name] for name in order]
    pairs = list(zip(values, values[1:]))
    return all(a < b for a, b in pairs) if better == "lower" else all(a > b for a, b in pairs)


def within_intervals(order: Sequence[str], better: str, point: Mapping[str, float], ci95: Mapping[str, float] | None) -> bool:
    """Whether a point where the order fails fails inside the 95% intervals: every pair of neighbors in the order
    that is reversed or tied has overlapping intervals. A point with no intervals for such a pair cannot show it.

    >>> within_intervals("abc", "lower", {"a": 0.0, "b": 0.11, "c": 0.09}, {"a": 0.0, "b": 0.06, "c": 0.01})
    True
    """
    failing = [(a, b) for a, b in zip(order, order[1:]) if not holds((a, b), better, point)]
    if ci95 is None or any(name not in ci95 for pair in failing for name in pair):
        return False
    return all(abs(point[a] - point[b]) <= ci95[a] + ci95[b] for a, b in failing)


def ranking_verdict(order: Sequence[str], better: str, points: Sequence[Mapping[str, float]] | None,
                    ci95: Sequence[Mapping[str, float]] | None = None) -> str:
    """A ranking the seed states (best first; `better` says whether lower or
    higher values are better) against our means at each point measured
    (`ci95`: their 95% half-widths at each point, where known).

    >>> good, bad = {"a": 1.0, "b": 2.0}, {"a": 2.1, "b": 2.0}
    >>> ranking_verdict("ab", "lower", [good, good, good, bad], [{}, {}, {}, {"a": 0.1, "b": 0.1}])
    'same trend'
    >>> ranking_verdict("ab", "lower", [good, good, good, bad])
    'differs'
    """
    if better not in BETTER:
        raise ValueError(f"unknown sense {better!r}; expected lower or higher")
    if not points:
        return NOT_REPRODUCED
    failing = [i for i, p in enumerate(points) if not holds(order, better, p)]
    if not failing:
        return MATCHES
    intervals = list(ci95) if ci95 is not None else [None] * len(points)
    inside = all(within_intervals(order, better, points[i], intervals[i] if i < len(intervals) else None) for i in failing)
    return SAME_TREND if len(points) - len(failing) >= MAJORITY * len(points) and inside else DIFFERS
