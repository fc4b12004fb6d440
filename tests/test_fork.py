"""Forking a network (spec/05 DEF-NET-2, `Network.fork`): the fork goes on
from the same state and neither network's later steps change the other's.
Checked on the fuzzer's schedules with churn under every protocol the
fuzzer runs: a run forked halfway and then stepped on two ways ends exactly
as an unforked run of each way does (every counter, delivery, table, link
and timer), and stepping the fork never changes the original."""

from __future__ import annotations

import pytest

from subsum.conformance.schedules.runs import Run
from subsum.conformance.schedules.runs import draw_schedule
from subsum.core.filters import parse_filter
from subsum.impl.network import NetworkError, build
from subsum.impl.network.protocol import Broker
from tests.test_pinned_runs import digest, state_of

QUIESCE = {"op": "quiesce"}


def finished(run: Run, ops: list[dict]) -> str:
    for op in ops + [QUIESCE]:
        run.apply(op)
    return digest(state_of(run.net))


def two_ways(protocol: str, seed: int) -> tuple[dict, list[dict], list[dict], list[dict]]:
    """A topology, a common start and two different continuations (the second: another seed's operations that
    still name only clients the network has, or none)."""
    topology, schedule = draw_schedule(seed, brokers=6, subscriptions=8, churn=0.3, steps=50)
    half = len(schedule) // 2
    _, other = draw_schedule(seed + 1000, brokers=6, subscriptions=8, churn=0.0, steps=50)
    other = [op for op in other if op["op"] in ("deliver", "fire", "quiesce")]
    return topology, schedule[:half], schedule[half:], other


@pytest.mark.parametrize("protocol", ["strawman", "timed", "notified", "informed"])
@pytest.mark.parametrize("seed", range(6))
def test_a_fork_and_its_original_go_on_independently(protocol, seed):
    topology, start, first, second = two_ways(protocol, seed)
    twins = []
    for rest in (first, second):
        twin = Run(topology, seed, protocol, defer_timeout=20.0, sub_timeout=30.0)
        for op in start:
            twin.apply(op)
        twins.append(finished(twin, rest))
    run = Run(topology, seed, protocol, defer_timeout=20.0, sub_timeout=30.0)
    for op in start:
        run.apply(op)
    before = digest(state_of(run.net))
    fork = run.fork()
    assert finished(fork, second) == twins[1]
    assert digest(state_of(run.net)) == before  # the fork's steps left the original alone
    assert finished(run, first) == twins[0]


def test_the_summaries_shared_state_is_forked_too():
    net = build([(0, 1), (1, 2)], 3, seed=1, protocol="summaries", delay=(5.0, 5.0))
    clients = [net.add_client(b) for b in range(3)]
    net.subscribe(clients[0], parse_filter("x > 1"))
    fork = net.fork()
    fork.subscribe(clients[2], parse_filter("x > 5"))
    fork.run()
    assert net.shared.round == -1 and fork.shared.round >= 0  # the fork's rounds ran; the original's did not
    net.run()
    assert net.shared.round == 0 and dict(net.ledger.sent) == {"SUMMARY": 2}


def test_a_network_with_a_closure_timer_cannot_be_forked():
    net = build([(0, 1)], 2)
    net.at(5.0, lambda: None)
    with pytest.raises(NetworkError, match="cannot fork a network with a timer it did not set"):
        net.fork()


def test_a_shallow_broker_copy_would_be_caught(monkeypatch):
    """The check bites: a copy that shares the table lets the fork's steps change the original."""
    monkeypatch.setattr(Broker, "copy", lambda self: self)
    with pytest.raises(AssertionError):
        test_a_fork_and_its_original_go_on_independently("strawman", 0)


@pytest.mark.parametrize("release", [True, False])
def test_a_released_network_is_freed_without_the_cyclic_collector(release):
    """`Network.release` (what `subsum explore` calls on each state it drops) breaks the network's cycles (its
    transport's callbacks and its out-buffer point back at it), so reference counting frees it at once; without it
    (the plant) the network waits for the cyclic collector."""
    import gc
    import weakref

    net = build([(0, 1), (1, 2)], 3, seed=0)
    forked = net.fork()
    gone = weakref.ref(forked)
    collecting = gc.isenabled()
    gc.disable()
    try:
        if release:
            forked.release()
        del forked
        assert (gone() is None) == release
    finally:
        gc.collect()
        if collecting:
            gc.enable()


@pytest.mark.parametrize("planted", [False, True])
def test_a_search_leaves_no_cyclic_garbage(planted, monkeypatch):
    """`subsum explore` runs with the cyclic collector off (`collector.acyclic`): every state it drops must be freed
    by reference counting. After a whole search (strawman 3/2/1/1, with its swaps and publications, 8,633 states)
    the collector finds nothing per state (67 objects: the few networkx graphs the scope and its overlays make, which
    hold views of themselves); with `Network.release` planted as a no-op it finds every dropped state's network."""
    import gc

    from subsum.conformance.explore.scope import Scope
    from subsum.conformance.explore.search import explore
    from subsum.impl.network.sim import Network

    if planted:
        monkeypatch.setattr(Network, "release", lambda self: None)
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    try:
        result = explore(Scope("strawman", 3, 2, events=1, swaps=1), budget=float("inf"))
        assert result.complete and result.states == 8633
        found = gc.collect()
    finally:
        if collecting:
            gc.enable()
    assert (found > 10 * result.states) if planted else found < 200, found
