"""The one rule that turns a seed's statement and our measurement into a
verdict (issue 33): `benchmarks/FIDELITY.md` and every bench's summary.json
take their verdicts from here, never from a hand-written label.

- **matches**: a number within the seed's stated precision (its range), or
  within ±15% of its value where it states none; a trend whose every step
  goes the stated way; a ranking that holds at every point measured.
- **same trend**: a number outside that band whose stated direction (as a
  parameter grows) agrees with ours; a trend whose first and last points
  go the stated way though some step does not; a ranking that holds at more
  than half of the points.
- **differs**: anything else measured.
- **not reproduced**: nothing of ours measures it.

A flat trend is one whose every point lies within ±15% of the series'
mean. Means are compared; their 95% intervals are reported beside them.

>>> number_verdict(6.0, None, 5.4)
'matches'
>>> number_verdict(9.0, None, 24.4, stated_direction="up", our_series=[(5, 0.4), (50, 24.4)])
'same trend'
>>> trend_verdict("down", [(0.05, 1.0), (0.5, 0.6), (1.5, 0.7)])
'same trend'
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


def steps_agree(direction: str, series: Sequence[tuple[float, float]]) -> bool:
    """Every step of the series goes the stated way (flat: every point near the mean)."""
    points = [y for _, y in sorted(series)]
    if direction == "flat":
        return direction_of(series) == "flat"
    pairs = list(zip(points, points[1:]))
    return bool(pairs) and all((b > a) if direction == "up" else (b < a) for a, b in pairs)


def number_verdict(value: float, stated_band: Sequence[float] | None, ours: float | None, *,
                   stated_direction: str | None = None, our_series: Sequence[tuple[float, float]] = ()) -> str:
    """A number the seed states, against our mean (and, for same trend, our
    series along the parameter the seed says it moves with)."""
    if ours is None:
        return NOT_REPRODUCED
    low, high = band_of(value, stated_band)
    if low <= ours <= high:
        return MATCHES
    if stated_direction is not None and direction_of(our_series) == stated_direction:
        return SAME_TREND
    return DIFFERS


def trend_verdict(direction: str, series: Sequence[tuple[float, float]] | None) -> str:
    """A trend the seed states (up, down or flat as the parameter grows) against our series."""
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}; expected one of {', '.join(DIRECTIONS)}")
    if not series or len(series) < 2:
        return NOT_REPRODUCED
    if steps_agree(direction, series):
        return MATCHES
    return SAME_TREND if direction_of(series) == direction else DIFFERS


def holds(order: Sequence[str], better: str, point: Mapping[str, float]) -> bool:
    """The stated order (best first) holds among our means at one point: each strictly better than the next."""
    values = [point[name] for name in order]
    pairs = list(zip(values, values[1:]))
    return all(a < b for a, b in pairs) if better == "lower" else all(a > b for a, b in pairs)


def ranking_verdict(order: Sequence[str], better: str, points: Sequence[Mapping[str, float]] | None) -> str:
    """A ranking the seed states (best first; `better` says whether lower or
    higher values are better) against our means at each point measured."""
    if better not in BETTER:
        raise ValueError(f"unknown sense {better!r}; expected lower or higher")
    if not points:
        return NOT_REPRODUCED
    holding = sum(holds(order, better, p) for p in points)
    if holding == len(points):
        return MATCHES
    return SAME_TREND if 2 * holding > len(points) else DIFFERS
