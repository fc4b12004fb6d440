"""The owner's exact re-check (DEF-SUM-10, spec/04-summaries.md).

A summary over-approximates: the IDs it reports are candidates. Before
delivery the owner keeps the candidates whose exact subscription matches the
event, which removes every false positive. `OwnerSummary.recheck` applies it
to the owner's subscriptions; the network baselines apply it to a broker's
filters.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from subsum.core.types import Event
from subsum.impl.matching.ops import HOLDS


def recheck(subscriptions: Mapping, event: Event, candidates: Iterable) -> set:
    """DEF-SUM-10: the candidates whose exact subscription (looked up in
    `subscriptions`) matches the event; unknown candidates are dropped."""
    values = {a.name: a for a in event.attributes}
    out = set()
    for sid in candidates:
        subscription = subscriptions.get(sid)
        if subscription is None:
            continue
        for c in subscription.constraints:
            a = values.get(c.name)
            if a is None or a.type != c.type or not HOLDS[c.op](a.value, c.value):
                break
        else:
            out.add(sid)
    return out
