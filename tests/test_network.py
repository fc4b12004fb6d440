"""The broker network's building blocks: topologies, the edge-list reader, the simulator's determinism and FIFO links."""

from pathlib import Path

import pytest

from subsum.core.filters import parse_filter
from subsum.core.types import Attribute, Event, Subscription
from subsum.impl.network import Network, NetworkError, TopologyError, build, generate, read_edgelist
from subsum.impl.network.topology import DisconnectedTopology, check_forest, overlay_links
from subsum.impl.network.workloads.caching import run_caching
from subsum.impl.network.workloads.client_server import run_client_server
from subsum.impl.network.trace import record_json
from subsum.impl.network.workloads.routing import delivery_audit, report, simulate

CWIX = Path(__file__).resolve().parents[1] / "examples" / "seed002" / "cwix-us-24.edgelist"  # a copy of ../shared/data/


@pytest.mark.parametrize("kind", ["random-tree", "path", "star", "balanced"])
def test_generators_give_trees(kind):
    for n in (1, 2, 7, 50):
        edges = generate(kind, n, seed=3)
        assert len(edges) == n - 1
        check_forest(n, edges)
    assert generate("random-tree", 30, seed=3) == generate("random-tree", 30, seed=3)
    assert generate("balanced", 7) == [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (2, 6)]


def test_unknown_topology_and_cycles_are_refused():
    with pytest.raises(TopologyError, match="unknown topology 'ring'"):
        generate("ring", 5)
    with pytest.raises(TopologyError, match=r"link \(2, 0\) closes a cycle"):
        check_forest(3, [(0, 1), (1, 2), (2, 0)])


def test_cwix_backbone_reduces_to_a_spanning_tree():
    if not CWIX.exists():
        pytest.fail(f"{CWIX} is missing: CI runs with shared/ beside the project")
    n, edges, dropped = read_edgelist(CWIX)
    assert (n, len(edges), dropped) == (24, 23, 6)  # 29 links, 24 nodes: 6 closed cycles
    check_forest(n, edges)


def test_a_disconnected_topology_is_refused_naming_its_components(tmp_path):
    two = tmp_path / "two.edgelist"
    two.write_text("a b\nc d\nd e\n")
    with pytest.raises(DisconnectedTopology) as info:
        overlay_links(str(two), 0, 0)
    assert str(info.value) == (f"{two}: the links form 2 components, {{a b}} (2 brokers), {{c d e}} (3 brokers); "
                               "the overlay must be connected, or run as a forest")
    assert info.value.components == [["a", "b"], ["c", "d", "e"]]
    assert overlay_links(str(two), 0, 0, forest=True) == (5, [(0, 1), (2, 3), (3, 4)])
    for workload in (run_caching, run_client_server):  # neither runs on a forest
        with pytest.raises(DisconnectedTopology):
            workload(topology=str(two))


def test_on_a_forest_only_clients_in_the_publishers_tree_are_owed(tmp_path):
    """Strawman on two trees loses nothing it owes; an audit that owed every
    matching client (the planted fault: trees ignored) would call half of
    them lost."""
    two = tmp_path / "two.edgelist"
    two.write_text("0 1\n1 2\n3 4\n")
    run = simulate(str(two), subscriptions=40, events=100, seed=1, forest=True)
    assert run.tree_of == {0: 0, 1: 0, 2: 0, 3: 1, 4: 1}
    audit = delivery_audit(run.net, run.published, run.tree_of)
    assert audit["owed"] == sum(sum(c.values()) for c in run.net.ledger.deliveries.values()) > 0
    assert audit["lost"] == audit["duplicates"] == audit["unjustified"] == 0
    blind = delivery_audit(run.net, run.published)
    assert blind["owed"] > audit["owed"] and blind["lost"] == blind["owed"] - audit["owed"] > 0
    assert report(run, 1.0)["trees"] == 2 and report(run, 1.0)["owed"] == audit["owed"]  # the report's audit knows the trees


def test_overlay_operations_keep_a_forest():
    net = build([(0, 1), (1, 2)], 4)
    with pytest.raises(NetworkError, match=r"link \(0, 2\) would close a cycle"):
        net.connect(0, 2)
    with pytest.raises(NetworkError, match="does not reconnect"):
        net.swap((0, 1), (1, 2))
    with pytest.raises(NetworkError, match=r"no link \(0, 3\) to break"):
        net.disconnect(0, 3)
    with pytest.raises(NetworkError, match="link delay range"):
        Network(delay=(5.0, 1.0))


def _run(seed):
    net = build(generate("random-tree", 20, seed=1), 20, seed=seed, trace=True)
    f = parse_filter("x > 0")
    clients = [net.add_client(b) for b in range(20)]
    for c in clients[::3]:
        net.subscribe(c, f)
    net.run()
    net.publish(clients[1], Event((Attribute("x", "int", 1),)))
    a, b = net.broker_links()[0]
    net.disconnect(a, b)
    net.at(net.now + 5.0, lambda: net.connect(a, b))  # a timer re-adds the link
    net.run()
    return net


def test_same_seed_same_run_and_fifo_links():
    a, b = _run(7), _run(7)
    assert a.ledger.trace == b.ledger.trace and a.ledger.sent == b.ledger.sent and a.now == b.now
    assert _run(8).now != a.now  # another seed, other delays
    net = build([(0, 1)], 2, seed=5, delay=(1.0, 50.0))
    for i in range(30):
        net.send(0, 1, "SUB", parse_filter(f"x = {i}"))
    arrivals = [t for t, *_ in net.transport.links[(0, 1)]]
    assert arrivals == sorted(arrivals)
    net.run()
    assert net.tables()[1] == {(0, parse_filter(f"x = {i}")) for i in range(30)}


def test_simulate_writes_a_trace(tmp_path):
    import json

    from click.testing import CliRunner

    from subsum.cli import main

    trace = tmp_path / "t.jsonl"
    result = CliRunner().invoke(main, ["simulate", "forwarding", "--brokers", "12", "--subscriptions", "30", "--events", "20", "--swaps", "3",
                                       "--seed", "4", "--trace", str(trace), "--format", "json"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    kinds = {r["kind"] for r in records}
    assert {"link", "subscribe", "publish", "deliver"} <= kinds
    assert [r["time"] for r in records] == sorted(r["time"] for r in records)
    stats = json.loads(result.stdout)
    assert stats["swaps"] == 3 and stats["deliveries"] == sum(r["kind"] == "deliver" for r in records)
    assert sum(r["kind"] == "publish" for r in records) == 20
    assert sum(r["kind"] == "link" and not r["up"] for r in records) == 3
    again = CliRunner().invoke(main, ["simulate", "forwarding", "--brokers", "12", "--subscriptions", "30", "--events", "20", "--swaps", "3",
                                      "--seed", "4", "--trace", str(tmp_path / "t2.jsonl")])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "t2.jsonl").read_text() == trace.read_text()  # deterministic
    bad = CliRunner().invoke(main, ["simulate", "forwarding", "--topology", "nowhere"])
    assert bad.exit_code == 2 and "neither random-tree" in bad.stderr


def test_the_delivery_audit_counts_each_way_a_delivery_goes_wrong():
    """A hand-made run: broker 0 - broker 1; client a (at 0) holds x > 1, b (at 1) holds x > 5, c (at 1) holds nothing.
    c publishes x = 7 (owed to a and b), a publishes x = 3 (owed to nobody: a is its publisher, b's filter does not match).
    Then the ledger is doctored: a gets x = 7 twice, b never, c (no filter) its own x = 7 once, a its own x = 3 once."""
    net = build([(0, 1)], 2, seed=0)
    a, b, c = net.add_client(0), net.add_client(1), net.add_client(1)
    net.subscribe(a, parse_filter("x > 1"))
    net.subscribe(b, parse_filter("x > 5"))
    net.run()
    seven, three = Event((Attribute("x", "int", 7),)), Event((Attribute("x", "int", 3),))
    first, second = net.publish(c, seven), net.publish(a, three)
    net.run()
    published = [(first, c, seven), (second, a, three)]
    assert delivery_audit(net, published) == {"owed": 2, "lost": 0, "duplicates": 0, "unjustified": 0, "to_publisher": 0}
    deliveries = net.ledger.deliveries
    deliveries[first][a] = 2  # one copy too many
    del deliveries[first][b]  # lost
    deliveries[first][c] = 1  # unjustified (c holds no filter), and back to its publisher
    deliveries[second][a] = 1  # back to its publisher, justified (a's own filter matches)
    assert delivery_audit(net, published) == {"owed": 2, "lost": 1, "duplicates": 1, "unjustified": 1, "to_publisher": 2}
    deliveries[second][b] = 3  # three copies to a client that holds no matching filter: unjustified, two of them extra
    assert delivery_audit(net, published) == {"owed": 2, "lost": 1, "duplicates": 3, "unjustified": 4, "to_publisher": 2}


def test_the_simulate_report_is_the_runs_own_ledger():
    """`subsum simulate`'s figures recomputed from the finished run: its ledger, its network and its audit."""
    run = simulate("random-tree", brokers=9, subscriptions=30, events=40, swaps=3, seed=2)
    net, ledger = run.net, run.net.ledger
    got = report(run, 0.12345)
    assert set(got) == {"protocol", "brokers", "clients", "events", "swaps", "sent", "handled", "dropped", "deliveries", "owed", "lost",
                        "duplicates", "unjustified", "to_publisher", "simulated_ms", "seconds", "handled_per_second"}
    assert (got["protocol"], got["brokers"], got["clients"], got["events"], got["swaps"]) == ("strawman", 9, 15, 40, 3)
    assert (got["sent"], got["handled"], got["dropped"]) == (dict(ledger.sent), dict(ledger.handled), dict(ledger.dropped))
    assert got["deliveries"] == sum(sum(copies.values()) for copies in ledger.deliveries.values()) > 0
    assert {k: got[k] for k in ("owed", "lost", "duplicates", "unjustified", "to_publisher")} == delivery_audit(net, run.published)
    assert got["simulated_ms"] == round(net.now, 3) > 0 and got["seconds"] == 0.123
    assert got["handled_per_second"] == round(sum(ledger.handled.values()) / 0.12345)
    assert report(run, 0.0)["handled_per_second"] is None
    assert simulate("path", brokers=2, subscriptions=3, events=1, seed=2, protocol="summaries").net.shared.layout.brokers == 2  # c1, c2 sized
    assert simulate("path", brokers=1, subscriptions=3, events=1, seed=2, protocol="summaries").net.shared.layout.brokers == 2  # at least 2
    assert simulate("path", brokers=2, subscriptions=3, events=1, seed=2).net.options == {}  # the sizing is the summaries' alone
    summaries = simulate("random-tree", brokers=5, subscriptions=10, events=10, seed=2, protocol="summaries")
    assert (summaries.net.shared.layout.brokers, summaries.net.shared.layout.max_subscriptions) == (5, 10)
    extra = report(summaries, 1.0)
    assert extra["overlay_hops"] == dict(summaries.net.ledger.overlay_hops) and extra["overlay_hops"]
    assert extra["payload_bytes"] == dict(summaries.net.ledger.payload_bytes) and extra["payload_bytes"]


def test_a_trace_writes_the_empty_filter_as_empty_text():
    assert record_json({"kind": "subscribe", "filter": Subscription()})["filter"] == ""
    assert record_json({"kind": "subscribe", "filter": parse_filter("x > 1")})["filter"] == "x > 1"


@pytest.mark.parametrize("collecting", [True, False])
def test_the_event_loop_puts_the_garbage_collector_back_as_it_was(collecting):
    """Transport.run pauses the cyclic collector while it loops (issue 36): it must restore the caller's setting,
    whether the loop returns or a handler raises, and the handlers run with it paused."""
    import gc

    net = build([(0, 1)], 2, seed=1)
    seen = []
    net.at(1.0, lambda: seen.append(gc.isenabled()))
    net.at(2.0, lambda: 1 / 0)
    was = gc.isenabled()
    (gc.enable if collecting else gc.disable)()
    try:
        with pytest.raises(ZeroDivisionError):
            net.run()
        assert gc.isenabled() is collecting and seen == [False]
        net.run()  # nothing left: returns at once
        assert gc.isenabled() is collecting
    finally:
        (gc.enable if was else gc.disable)()
