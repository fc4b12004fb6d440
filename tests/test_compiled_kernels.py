"""The compiled engine's kernels (impl/matching/columnar/kernels.py) against their
plain numpy readings, on the values where floating point bites: subnormal
and huge spans, -0.0, the int64 limits. The engine-level claims (CLM-ENG-*)
check the same kernels through whole matches; these find the slip nearer
its cause."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from subsum.impl.matching.columnar import kernels

FLOATS = st.floats(allow_nan=False, allow_infinity=False)
EDGE_FLOATS = st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                               -1.7976931348623157e308, 1.0, -1.0])
INTS = st.integers(-(2**63), 2**63 - 1)
EDGE_INTS = st.sampled_from([-(2**63), 2**63 - 1, 0, 1, -1, 2**53 + 1, -(2**53) - 1])


def plain_rank_keys(universe: np.ndarray, values: np.ndarray) -> np.ndarray:
    """DEF-MATCH-5 step 1 read literally: 2r + 1 if the value is universe[r], else 2r (r = values below)."""
    r = np.searchsorted(universe, values, "left")
    equal = np.zeros(len(values), bool)
    inside = r < len(universe)
    equal[inside] = universe[r[inside]] == values[inside]
    return 2 * r + equal


def check_rank_keys(universe: list, values: list, dtype) -> None:
    u = np.unique(np.array(universe, dtype))
    v = np.array(values + universe, dtype)  # every universe value is also queried
    got = kernels.rank_keys(u, kernels.rank_buckets(u), v)
    assert got.tolist() == plain_rank_keys(u, v).tolist()


@given(st.lists(FLOATS | EDGE_FLOATS, max_size=30), st.lists(FLOATS | EDGE_FLOATS, max_size=30))
def test_float_rank_keys_equal_the_plain_binary_search(universe, values):
    check_rank_keys(universe, values, np.float64)


@given(st.lists(INTS | EDGE_INTS, max_size=30), st.lists(INTS | EDGE_INTS, max_size=30))
def test_int_rank_keys_equal_the_plain_binary_search(universe, values):
    check_rank_keys(universe, values, np.int64)


def test_rank_keys_over_a_subnormal_span():
    """The LIMITS example of test_engine_agreement found this one: a universe {0.0, 5e-324} has a span
    whose reciprocal overflows, and (x - low) * inf is NaN at x = low."""
    check_rank_keys([-0.0, 5e-324], [0.0, -0.0, 5e-324, 1.0, -1.0], np.float64)


@given(st.lists(st.integers(0, 9), max_size=60))
def test_by_event_is_a_stable_counting_sort(events):
    ev = np.array(events, np.int64)
    order, start = kernels.by_event(ev, 10)
    assert order.tolist() == np.argsort(ev, kind="stable").tolist()
    assert start.tolist() == np.searchsorted(np.sort(ev), np.arange(11)).tolist()


def test_a_batch_that_is_not_a_map_is_refused():
    """The compiled engine finds an event's attribute of a group by one table read, and checks a candidate
    once: both need an event to hold each (type, name) at most once (DEF-DATA-4). A hand-built columnar
    batch that breaks it gets a clear error, not a silently different answer."""
    from subsum.core.filters import parse_filter
    from subsum.impl.matching import make_engine
    from subsum.impl.matching.columnar.batch import Column, ColumnarBatch

    engine = make_engine("compiled", [("s", parse_filter("x = 1"))])
    column = Column(np.array([0, 0], np.int64), np.array([0, 0], np.int64), np.array([1, 2], np.int64))
    empty = {t: Column(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dtype))
             for t, dtype in (("float", np.float64), ("string", np.int64), ("bool", np.bool_))}
    batch = ColumnarBatch(1, ["x"], [], {"int": column, **empty})
    with pytest.raises(ValueError, match="event 0 of the batch holds an attribute name twice"):
        engine.match_columns(batch)


@given(st.lists(st.lists(st.integers(0, 50), max_size=12, unique=True), min_size=1, max_size=5), st.lists(st.integers(-5, 60), max_size=20))
def test_the_bucketed_search_of_merged_keys_is_a_lower_bound(groups, queries):
    """kernel_layout.key_buckets: for every key x of a group, the bucket's first keys bracket the plain lower
    bound (the count of the group's keys below x), inside the group's range; below and above it, 0 and n."""
    from subsum.impl.matching.columnar.kernel_layout import key_buckets

    merged = np.array([k for g in groups for k in sorted(g)], np.int64)
    merged_ptr = np.cumsum([0] + [len(g) for g in groups]).astype(np.int64)
    low, span, bucket_ptr, first = key_buckets(merged, merged_ptr)
    for g, keys in enumerate(groups):
        keys, n = sorted(keys), len(keys)
        assert first[bucket_ptr[g] + n] == n if n else True
        for x in queries + keys:
            want = int(np.searchsorted(np.array(keys, np.int64), x, "left"))
            if not n or x < low[g] or x - low[g] >= span[g]:
                assert want in (0, n)
                continue
            b = bucket_ptr[g] + (x - low[g]) * n // span[g]
            assert first[b] <= want <= first[b + 1], (keys, x)


def test_group_bits_are_single_bits_spread_over_the_word():
    from subsum.impl.matching.columnar.kernel_layout import group_bits

    bits = group_bits(500)
    assert all(int(b).bit_count() == 1 for b in bits)
    assert len(set(bits.tolist())) == 64  # 500 groups use every bit of the signature


def _hand_built(**change):
    from subsum.impl.matching.columnar.batch import Column, ColumnarBatch

    column = Column(np.array([0, 1], np.int64), np.array([0, 0], np.int64), np.array([1, 2], np.int64))
    empty = {t: Column(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dtype))
             for t, dtype in (("float", np.float64), ("string", np.int64), ("bool", np.bool_))}
    batch = ColumnarBatch(2, ["x"], [], {"int": column, **empty})
    for field, value in change.items():
        setattr(batch.columns["int"], field, value)
    return batch



@pytest.mark.parametrize("engine", ["compiled", "vectorized"])
@pytest.mark.parametrize("change, message", [
    ({"event": np.array([0, 5], np.int64)}, r"event codes must lie in \[0, 2\)"),  # read past an array by the kernel: a crash once
    ({"event": np.array([-1, 0], np.int64)}, r"event codes must lie in \[0, 2\)"),  # silently no line once
    ({"name": np.array([0, 3], np.int64)}, r"name codes must lie in \[0, 1\)"),
    ({"event": np.array([0, 1], np.int32)}, "event must be a one-dimensional int64 array"),
    ({"value": np.array([[1], [2]], np.int64)}, "value must be a one-dimensional int64 array"),
    ({"value": np.array([1], np.int64)}, "arrays differ in length"),
    ({"event": np.ma.array([0, 10**9], mask=[False, True])}, "event must be a one-dimensional int64 array"),  # masks hide from min()
])
def test_a_hand_built_batch_out_of_range_is_refused(engine, change, message):
    """match_columns checks a hand-built batch first (ColumnarBatch.check): the compiled engine's kernels do
    no bounds checks, and an event index past the batch made the process die with SIGSEGV."""
    from subsum.core.filters import parse_filter
    from subsum.impl.matching import make_engine

    with pytest.raises(ValueError, match=message):
        make_engine(engine, [("s", parse_filter("x = 1"))]).match_columns(_hand_built(**change))


def test_the_vectorized_engine_refuses_a_batch_that_is_not_a_map_too():
    """Found by a hostile review: vectorized matched x > 3 and x < 2 on an event holding x twice (5 and 1).
    Like the compiled engine, it now refuses the batch."""
    from subsum.core.filters import parse_filter
    from subsum.impl.matching import make_engine
    from subsum.impl.matching.columnar.batch import Column, ColumnarBatch

    column = Column(np.array([0, 0], np.int64), np.array([0, 0], np.int64), np.array([5, 1], np.int64))
    batch = ColumnarBatch(1, ["x"], [], {"int": column})
    for engine in ("vectorized", "compiled"):
        with pytest.raises(ValueError, match="event 0 of the batch holds an attribute name twice"):
            make_engine(engine, [("a", parse_filter("x > 3 and x < 2"))]).match_columns(batch)
