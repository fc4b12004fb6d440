"""The two engines that share one columnar index (spec/03-matching.md
DEF-MATCH-5, DEF-MATCH-7): `vectorized` (numpy) and `compiled` (numba).

- `batch`: a batch of events as columns (`ColumnarBatch`), their input;
- `subscription_columns`: the subscriptions as columns, their bulk input;
- `arrays`: numpy helpers (ranges expanded to pairs, sorted look-ups);
- `pivots`: DEF-MATCH-5's index, one pivot constraint per subscription,
  built in bulk; `pivot_engine`: the bookkeeping both engines share over it;
- `kernel_layout`, `kernels`, `match_kernel`: the compiled engine's numba
  kernels and the flat arrays they read.
"""
