"""Seed 000's running example of summaries as the checks read it: Fig.
4-5's subscriptions under both readings of `>*` (the model's fixture,
subsum.model.summaries.seed000, reads it as prefix), the two keys, and the expected
rows transcribed from the thesis."""

from __future__ import annotations

import attrs

from subsum.core.types import Constraint, Subscription
from subsum.model.summaries import abstraction as ref_abstraction
from subsum.model.summaries.seed000 import FIG_4_5_SUBSCRIPTIONS

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


def example_4_4_rows(reading: str) -> tuple[dict, dict]:
    """Example 4-4's rows at broker 3's history, (t1, t2): at t1 broker 1
    holds S1, broker 2 S2 and broker 3 S4; at t2 S3 has joined broker 1.
    Under the contains reading, `>* T` covers every symbol row (Figs. 4-13
    and 4-14); under ours (prefix), S1 and S2 keep rows of their own until
    S3's `prefix OTE` covers them."""
    price_t1 = [(range_row(8.60, 8.70), "S4"), (equality_row(8.50), "S1"), (equality_row(8.55), "S2")]
    price_t2 = [(range_row(8.45, 8.70), "S1 S2 S3 S4")]
    if reading == "prefix":
        return (expected_rows(symbol=[(("constraint", symbol("=", "OTE")), "S1"), (("constraint", symbol("=", "OTER")), "S2"),
                                      (("constraint", symbol("prefix", "T")), "S4")], price=price_t1),
                expected_rows(symbol=[(("constraint", symbol("prefix", "OTE")), "S1 S2 S3"),
                                      (("constraint", symbol("prefix", "T")), "S4")], price=price_t2))
    return (expected_rows(symbol=[(("constraint", symbol("contains", "T")), "S1 S2 S4")], price=price_t1),
            expected_rows(symbol=[(("constraint", symbol("contains", "T")), "S1 S2 S3 S4")], price=price_t2))
