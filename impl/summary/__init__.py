"""Subscription summaries, optimized (spec/04-summaries.md, seed 000 ch. 4).

- `ids`: the packed subscription ID c1 | c2 | c3.
- `normalize`: one normalized constraint per (subscription, attribute key).
- `structures`: AACS (sorted disjoint ranges plus equalities, binary search)
  and SACS (an antichain of string or bool constraints), with ID sets.
- `acgt`: the owner's attribute-constraint generalization trees.
- `summary`: a shippable `Summary` (match, merge, deltas) and the owner's
  `OwnerSummary` (ACGT maintenance, exact re-check).
- `history`: the `History` summary and the `Directory` of owners (method 1).
- `wire`: the JSON and binary formats; `stats`: the size formula and statistics.

It never imports `subsum.model`; `subsum.conformance.summaries` checks it
against the model.
"""

from subsum.impl.summary.ids import IdLayout
from subsum.impl.summary.history import Directory, History
from subsum.impl.summary.summary import Delta, OwnerSummary, Summary

__all__ = ["IdLayout", "Summary", "OwnerSummary", "History", "Delta", "Directory"]
