"""The vectorized engine's numpy helpers (impl/matching/columnar/arrays.py) against
plain Python: ranges and CSR rows expanded to pairs, and exact look-ups,
including the empty cases the engine reaches only rarely."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from subsum.impl.matching.columnar.arrays import csr, expand_csr, expand_ranges, exact_positions

small = st.integers(-3, 12)


@given(st.lists(st.tuples(small, small), max_size=8))
def test_expand_ranges_lists_every_position_of_every_range(ranges):
    starts = np.array([s for s, _ in ranges], np.int64)
    ends = np.array([e for _, e in ranges], np.int64)
    owner, position = expand_ranges(starts, ends)
    assert owner.dtype == np.int64 and position.dtype == np.int64
    assert list(zip(owner.tolist(), position.tolist())) == [(k, p) for k, (s, e) in enumerate(ranges) for p in range(s, e)]


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 99)), max_size=12), st.lists(st.integers(0, 4), max_size=6))
def test_csr_rows_hold_each_rows_values_and_expand_to_pairs(pairs, rows):
    keys = np.array([k for k, _ in pairs], np.int64)
    values = np.array([v for _, v in pairs], np.int64)
    ptr, items = csr(keys, values, 5)
    assert ptr.tolist()[0] == 0 and ptr.tolist()[-1] == len(pairs)
    for r in range(5):
        assert sorted(items[ptr[r]:ptr[r + 1]].tolist()) == sorted(v for k, v in pairs if k == r)
    owner, got = expand_csr(ptr, items, np.array(rows, np.int64))
    assert sorted(zip(owner.tolist(), got.tolist())) == sorted((i, v) for i, r in enumerate(rows) for k, v in pairs if k == r)


@given(st.lists(small, unique=True, max_size=6).map(sorted), st.lists(small, max_size=6))
def test_exact_positions_finds_exactly_the_keys_present(keys, queries):
    position, found = exact_positions(np.array(keys, np.int64), np.array(queries, np.int64))
    assert position.dtype == np.int64 and found.dtype == bool and len(position) == len(found) == len(queries)
    assert found.tolist() == [q in keys for q in queries]
    assert all(keys[p] == q for p, q, f in zip(position.tolist(), queries, found.tolist()) if f)
