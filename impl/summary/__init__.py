"""Subscription summaries, optimized (spec/04-summaries.md, seed 000 ch. 4).

- `ids`: the packed subscription ID c1 | c2 | c3.
- `normalize`: one normalized constraint per (subscription, attribute key).
- `structures`: AACS (sorted disjoint ranges plus equalities, binary search)
  and SACS (an antichain of string or bool constraints), with ID sets.
- `acgt`: the owner's attribute-constraint generalization trees.
- `summary`: the shippable `Summary` (match, merge, deltas) and `Delta`.
- `owner`: the owner's `OwnerSummary` (IDs, ACGT maintenance, deltas);
  `recheck`: the owner's exact re-check.
- `history`: the `History` summary and the `Directory` of owners (method 1).
- `summary_file`: the JSON summary file (`schema`: its structure,
  `file_reader`: its fields and errors); `wire`: the binary encoding.
- `stats`: the size formula and statistics.

It never imports `subsum.model`; `subsum.conformance.checks.summaries` checks it
against the model.
"""

from subsum.impl.summary.ids import IdLayout
from subsum.impl.summary.history import Directory, History
from subsum.impl.summary.owner import OwnerSummary
from subsum.impl.summary.summary import Delta, Summary

__all__ = ["IdLayout", "Summary", "OwnerSummary", "History", "Delta", "Directory"]
