"""Seed 000's running example of summaries as the checks read it: Fig.
4-5's subscriptions under both readings of `>*` (the model's fixture,
subsum.model.seed000, reads it as prefix), the two keys, and the expected
rows transcribed from the thesis."""

from __future__ import annotations

import attrs

from subsum.core.types import Constraint, Subscription
from subsum.model import abstraction as ref_abstraction
from subsum.model.seed000 import FIG_4_5_SUBSCRIPTIONS

PRICE, SYMBOL = ("price", "float"), ("symbol", "string")


def symbol(op: str, value: str) -> Constraint:
    return Constraint("symbol", "string", op, value)


def equality_row(v: float) -> tuple:
    return ("equality", ref_abstraction.Interval(v, v))


def range_row(lo: float, hi: float) -> tuple:
    return ("range", ref_abstraction.Interval(lo, hi))


def expected_rows(**by_key) -> dict:
    """Expected rows, transcribed from the thesis: key -> {(kind, constraint, names)}."""
    keys = {"price": PRICE, "symbol": SYMBOL}
    return {keys[k]: {(kind, c, frozenset(names.split())) for (kind, c), names in rows} for k, rows in by_key.items()}


def fig_4_5(reading: str) -> list[tuple[str, Subscription]]:
    """Seed 000 Fig. 4-5: S1..S4 on symbol and price. `>*` is read as prefix
    (ours: the model's fixture) or as contains (the reading under which the
    thesis's t4 holds: S3's and S4's prefix constraints become contains)."""
    if reading == "prefix":
        return list(FIG_4_5_SUBSCRIPTIONS)
    return [(name, Subscription(attrs.evolve(c, op="contains") if c.op == "prefix" else c for c in subscription.constraints))
            for name, subscription in FIG_4_5_SUBSCRIPTIONS]
