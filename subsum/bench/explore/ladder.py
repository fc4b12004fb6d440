"""The largest scope `subsum explore` searches completely within a budget,
per protocol (part of `subsum bench explore`, benchmarks/README.md).

"Largest" is greedy, since scopes are not totally ordered: start from 3
brokers and 1 subscription; try one more subscription, then one more
publication, one more swap (not for summaries, whose overlay is fixed),
one more broker, in turn; keep a step whose search completes within the
budget, and stop trying a dimension once a step in it does not. The
result completes within the budget and no one-step larger scope does.
Each search is the real one (`conformance.explore.search.explore`), cut by
the budget; its states, transitions and states per second are reported.
"""

from __future__ import annotations

from typing import Callable

import attrs

from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore
from subsum.conformance.schedules.families import family_of
from subsum.core.errors import SubsumError

#: The dimensions grown in turn, as Scope fields.
DIMENSIONS = ("subscriptions", "events", "swaps", "brokers")
PROTOCOLS = ("strawman", "timed", "notified", "informed", "siena", "summaries")
START = {"brokers": 3, "subscriptions": 1, "events": 0, "swaps": 0}


def try_scope(protocol: str, size: dict, budget: float) -> dict | None:
    """One search of the scope, cut at `budget` seconds; None for a scope the family refuses (swaps on a fixed overlay)."""
    try:
        scope = Scope(protocol, **size)
    except SubsumError:
        return None
    result = explore(scope, budget=budget)
    result.raise_if_interrupted()
    if result.found:
        raise AssertionError(f"{protocol} {size}: {result.found[0].violation.claim} violated: {result.found[0].violation.message}")
    return {"protocol": protocol, **size, "complete": result.complete, "states": result.states, "transitions": result.transitions,
            "depth": result.depth, "seconds": round(result.seconds, 3), "states_per_second": round(result.states_per_second, 1)}


def largest_scope(protocol: str, budget: float, log: Callable[[str], None]) -> tuple[dict, list[dict]]:
    """The greedy largest scope of `protocol` that completes within `budget`, and every search tried."""
    size = dict(START)
    best = try_scope(protocol, size, budget)
    assert best is not None and best["complete"], f"{protocol}: the starting scope {size} does not complete within {budget} s"
    tried = [{**best, "kept": True}]
    open_dimensions = [d for d in DIMENSIONS if not (d == "swaps" and not family_of(protocol).churn)]
    while open_dimensions:
        for dimension in list(open_dimensions):
            candidate = {**size, dimension: size[dimension] + 1}
            row = try_scope(protocol, candidate, budget)
            kept = row is not None and row["complete"]
            if row is not None:
                tried.append({**row, "kept": kept})
                log(f"  {protocol} {_shape(candidate)}: {row['states']:,} states in {row['seconds']} s"
                    f"{'' if kept else ', not complete'}")
            if kept:
                size, best = candidate, row
            else:
                open_dimensions.remove(dimension)
    assert best is not None
    return best, tried


def _shape(size: dict) -> str:
    return f"{size['brokers']}/{size['subscriptions']}/{size['events']}/{size['swaps']}"


@attrs.frozen
class Ladder:
    largest: list[dict]
    tried: list[dict]


def run_ladder(protocols: tuple[str, ...], budget: float, log: Callable[[str], None]) -> Ladder:
    largest, tried = [], []
    for protocol in protocols:
        log(f"{protocol}: growing the scope (budget {budget} s a search)")
        best, rows = largest_scope(protocol, budget, log)
        largest.append(best)
        tried += rows
    return Ladder(largest, tried)


#: The largest scope of each protocol within 60 s when issue 53 was filed (benchmarks/results/explore/ladder.csv as of
#: commit afc431c: 200-480 states/s), what issue 53's reach target is measured from.
BEFORE_53 = {"strawman": (3, 2, 1, 1), "timed": (3, 2, 1, 1), "notified": (4, 3, 1, 0), "informed": (4, 3, 1, 0),
             "siena": (3, 2, 1, 1), "summaries": (4, 2, 0, 0)}
GROWTH_RULE = ("holds when the largest scope has at least one broker more than before issue 53 and, for a protocol whose "
               "overlay may change, at least one swap more (for summaries, whose overlay is fixed, one subscription more)")


def growth(largest: list[dict]) -> list[dict]:
    """Each protocol's largest scope against BEFORE_53, with a verdict by GROWTH_RULE."""
    rows = []
    for r in largest:
        before = BEFORE_53.get(r["protocol"])
        if before is None:
            continue
        brokers, subscriptions, _, swaps = before
        churn = family_of(r["protocol"]).churn
        grown = r["brokers"] >= brokers + 1 and (r["swaps"] >= swaps + 1 if churn else r["subscriptions"] >= subscriptions + 1)
        rows.append({"protocol": r["protocol"], "before": "/".join(map(str, before)), "after": _shape(r),
                     "verdict": "holds" if grown else "differs"})
    return rows


def markdown_table(largest: list[dict], budget: float) -> str:
    lines = [f"| protocol | largest scope within {budget:g} s (N/S/E/K) | before issue 53 | grown by a broker and a swap | states "
             "| transitions | seconds | states/s |", "|---|---|---|---|---|---|---|---|"]
    verdicts = {g["protocol"]: g for g in growth(largest)}
    for r in largest:
        g = verdicts.get(r["protocol"], {"before": "", "verdict": ""})
        lines.append(f"| {r['protocol']} | {_shape(r)} | {g['before']} | {g['verdict']} | {r['states']:,} | {r['transitions']:,} "
                     f"| {r['seconds']} | {r['states_per_second']:,.0f} |")
    return "\n".join(lines) + f"\n\nGrowth rule: {GROWTH_RULE}."
