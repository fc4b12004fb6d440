"""Seed 000's running example of summaries, as values (spec/04-summaries.md).

The subscriptions S1..S4 of Fig. 4-5 (with `>*` read as prefix, the reading
spec/04 decides on; the same as examples/seed000/fig-4-5-subscriptions.jsonl)
and Example 4-2's false positive: the event (symbol OTE, price 8.65), which
the summary reports for S1, S2 and S3 although none of them matches it. The
docstring examples of `subsum.model.summaries.summary` run on them.
"""

from __future__ import annotations

from subsum.core.filters import parse_filter
from subsum.core.types import Attribute, Event, Subscription

#: Seed 000 Fig. 4-5: (ID, subscription), in the thesis's order.
FIG_4_5_SUBSCRIPTIONS: tuple[tuple[str, Subscription], ...] = (
    ("S1", parse_filter('symbol = "OTE" and price = 8.50')),
    ("S2", parse_filter('symbol = "OTER" and price = 8.55')),
    ("S3", parse_filter('symbol prefix "OTE" and price >= 8.45 and price <= 8.60')),
    ("S4", parse_filter('symbol prefix "T" and price >= 8.60 and price <= 8.70')),
)

#: Seed 000 Example 4-2: an event the summary of Fig. 4-5 reports for S1, S2 and S3; none matches it.
FALSE_POSITIVE = Event((Attribute("symbol", "string", "OTE"), Attribute("price", "float", 8.65)))
