"""Conformance of the optimized summaries (subsum.impl.summary) with the
reference (subsum.model.summaries.abstraction, subsum.model.summaries.summary): claims
CLM-SUM-*, spec/04-summaries.md. The checks are named
`conformance.checks.summaries.<function>` whichever module holds them.

- `views`: the two representations side by side (rows as sets of model
  constraints and names, compared by `check_same_rows`) and owners built
  from (name, subscription) lists;
- `agreement`: properties against the model: the abstraction, no false
  negatives, the structures' lookups, exactness (CLM-SUM-1, 2, 3, 5, 10);
- `proofs`: z3 proofs that rows cover their members and that every
  generalization is sound (CLM-SUM-2);
- `structure`: the structures' invariants, canonical rows, insert and
  delete, the merge laws, history plus delta (CLM-SUM-4, 6, 7, 8);
- `formats`: IDs and the file and wire formats round trip (CLM-SUM-9, 16);
- `churn`: the `SummariesUnderChurn` state machine and its regressions
  (CLM-SUM-11);
- `seed000`: seed 000's Fig. 4-5 under both readings of `>*`, and the
  expected rows transcribed from the thesis (Example 4-4's, shared with
  conformance/checks/routing/routes.py);
- `examples`: the worked examples of seed 000 and the documented
  exceptions (CLM-SUM-6, 7, 8, 9, 12 .. 15).
"""
