"""Small impl/ units at the cases the property checks reach rarely, each read off its definition.

Found by `make mutate`'s sample (mutation/sample.md): a change at each of these lines went unseen.
"""

import pytest

from subsum.core.types import Constraint
from subsum.impl.network.protocols.covering import string_implies
from subsum.impl.network.workloads.client_server_direct import run_client_server_direct
from subsum.impl.summary.acgt import IntervalForest


def test_an_interval_inside_a_row_joins_that_row():
    # DEF-SUM-12: one tree per connected component of the members' intervals; (2, 5) lies inside (0, 10)
    forest = IntervalForest()
    forest.insert((0, 10), 1)
    forest.insert((2, 5), 2)
    forest.insert((12, 20), 3)  # apart: its own row
    assert sorted(forest.rows()) == [((0, 10), {1, 2}), ((12, 20), {3})]


@pytest.mark.parametrize("specific", [Constraint("x", "string", "!=", "a"), Constraint("x", "string", "any", None),
                                      Constraint("x", "string", "prefix", "ab")])
def test_any_string_is_implied_by_every_string_constraint(specific):
    assert string_implies(specific, Constraint("x", "string", "any", None)) is True


def test_a_negative_ss_memory_is_refused_before_any_work():
    with pytest.raises(ValueError, match=r"^ss_memory must be None \(ever\) or a whole number of steps >= 0, not -1$"):
        run_client_server_direct(brokers=3, steps=5, ss_memory=-1)


@pytest.mark.parametrize(("specific", "expected"), [
    (("suffix", "xbc"), True), (("suffix", "b"), False),        # S-WILD-SUFFIX: *bc covers suffix q iff q ends with bc
    (("prefix", "bc"), False),                                   # a prefix leaves the end free
    (("=", "abc"), True), (("=", "ab"), False),                  # S-WILD-EQ
    (("wildcard", "a*xbc"), True), (("wildcard", "a*b"), False),  # S-WILD-WILD
])
def test_a_wildcard_with_an_empty_left_part_covers_by_its_end(specific, expected):
    from subsum.impl.summary.normalize import pattern_covers

    assert pattern_covers(("wildcard", "*bc"), specific) is expected


@pytest.mark.parametrize(("gone", "stays"), [(("prefix", "ab"), ("suffix", "ab")), (("suffix", "ab"), ("prefix", "ab"))])
def test_deleting_half_of_a_virtual_contains_pair_rebuilds_the_row_from_the_other_half(gone, stays):
    # DEF-SUM-5's `contains` policy joins prefix ab and suffix ab into a virtual row `contains ab`; the pair held it
    # together, so deleting one (DEF-SUM-14, method 1) asks the owner for the other and rebuilds its own row
    from subsum.impl.summary import IdLayout, Summary

    key = ("s", "string")
    summary = Summary(IdLayout(2, 8, 1), [key], "contains")
    summary.add_member(1, {key: gone})
    summary.add_member(2, {key: stays})
    assert summary.rows() == {key: [("constraint", ("contains", "ab"), frozenset({1, 2}))]}
    asked = []
    summary.remove_member(1, {key: gone}, lambda k, ids: asked.append((k, ids)) or [(2, stays)])
    assert asked == [(key, {2})] and summary.rows() == {key: [("constraint", stays, frozenset({2}))]}


@pytest.mark.parametrize(("option", "value", "allowed"), [("policy", "bogus", "server, sc, soha, ss"), ("cache_policy", "mru", "fifo, regdeg, lfu, lru")])
def test_a_client_server_option_outside_its_choices_is_refused_naming_them(option, value, allowed):
    from subsum.impl.network import build
    from subsum.impl.network.overlay import NetworkError

    with pytest.raises(NetworkError) as refused:
        build([(0, 1)], 2, protocol="client-server", options={option: value})
    assert str(refused.value) == f"client-server option {option!r}: {value!r} is not one of {allowed}"


def test_the_filter_index_counts_each_filter_once_per_table_holding_it():
    # DEF-NET-2: the strawman brokers share one index of their tables' filters, reference-counted per table;
    # a filter leaves the matching engine when the last table drops it
    from subsum.core.filters import parse_filter
    from subsum.impl.network import build

    net = build([(0, 1), (1, 2), (1, 3)], 4, seed=0, protocol="strawman")
    f, g = parse_filter("x > 1"), parse_filter("y = 2")
    clients = [net.add_client(b) for b in (0, 2, 3, 3)]
    for c in clients:
        net.subscribe(c, f)
    net.subscribe(clients[1], g)
    net.run()
    for c in clients[:3]:
        net.unsubscribe(c, f)
    net.unsubscribe(clients[1], g)
    net.run()
    index = net.shared
    holding = {h: sum(h in b.table for b in net.brokers.values()) for h in (f, g)}
    assert holding == {f: 4, g: 0}  # the last subscriber of f at broker 3: every broker still routes f towards it
    assert index.refs == {f: 4}
    assert sorted(index.catalog.by_name.values(), key=str) == [f]  # g left the engine (no fork shares the catalog)
    fork = net.fork()
    fork.subscribe(clients[1], g)
    fork.unsubscribe(clients[1], g)
    assert fork.shared.refs == index.refs == {f: 4}
    assert sorted(index.catalog.by_name.values(), key=str) == [f, g]  # shared with a fork: the catalog only grows


@pytest.mark.parametrize("policy", ["fifo", "regdeg", "lfu", "lru"])
def test_a_new_cache_starts_at_time_zero_like_the_reference_and_refuses_no_room(policy):
    # DEF-CACHE-1: a cache's clock starts at 0 (model/caching.py empty_cache) and moves only forward; capacity >= 1
    from subsum.impl.caching.policies import make_cache
    from subsum.model.caching import empty_cache

    assert make_cache(policy, 2).now == empty_cache(policy, 2).now == 0.0
    with pytest.raises(ValueError, match=r"^cache capacity must be at least 1, got 0$"):
        make_cache(policy, 0)
