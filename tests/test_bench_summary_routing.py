"""The summary routing benchmark (subsum/bench/summary_routing*.py): its
outputs, the cost models' sanity relations, and the routing it counts.
Nothing here asserts timings."""

import csv
import random

import numpy as np
import pytest

from subsum.fidelity import report as fidelity
from subsum.bench.summary_routing import bench as sr
from subsum.bench.summary_routing import report
from subsum.bench.summaries.workload import SCHEMA
from subsum.bench.summary_routing.events import false_positive_row, route_shape, routing_rows
from subsum.bench.summary_routing.overlays import make_topology, rng_for, topologies
from subsum.bench.summary_routing.siena import (covered_reverse_links, reverse_path_incidence, reverse_path_receivers, siena_expected_messages,
                                                siena_period)
from subsum.bench.summary_routing.summaries import GrowingDeltas, broker_workloads, propagate, summary_propagation
from subsum.impl.network import build
from subsum.impl.network.protocols.summaries.plan import plan
from subsum.impl.network.topology import random_tree
from subsum.model.routing import brocli_route
from tests.test_findings_kept import interruptible

FILES = ("propagation.csv", "hops.csv", "routing.csv", "storage.csv", "storage_small.csv", "false_positives.csv", "simulated.csv",
         "simulated_storage.csv", "simulated_routing.csv", "fig5-2-propagation-bandwidth.png",
         "fig5-3-propagation-hops.png", "fig5-4-routing-hops.png", "fig5-5-storage.png", "summary.json")


@pytest.fixture(scope="module")
def quick(quick_bench):
    return quick_bench("summary-routing", sr.run)


def rows(out, name):
    with open(out / name, newline="") as fh:
        return list(csv.DictReader(fh))


def test_quick_run_writes_every_file_and_no_disagreement(quick):
    _, result, messages = quick
    saved = quick.written(FILES)
    assert result["disagreements"] == []
    assert saved["thesis"] == report.THESIS and saved["differences"] and saved["comparison"]
    # verdicts: seed 000's statements about Figs. 5-2 … 5-5, judged by the fidelity rule on this run's CSVs
    assert {v["figure"] for v in saved["verdicts"]} == set(sr.FIGURES)
    assert all(v["id"].startswith("000-") and v["verdict"] in fidelity.markings(False) for v in saved["verdicts"])
    by_id = {v["id"]: v["verdict"] for v in saved["verdicts"]}
    assert by_id["000-5.2.1-p"] == fidelity.BY_CONSTRUCTION  # Siena's 552 hops at 0% covering
    assert saved["why"] == report.WHY
    assert any("p=0.9" in m for m in messages)
    assert report.markdown_table(saved).count("\n") == 9  # a header, its rule and eight figures (two of them the simulated Siena)


def test_summaries_propagation_sends_are_n_minus_sinks_of_the_plan(quick):
    out, result, _ = quick
    tops = {t.name: t for t in topologies(1, result["parameters"]["random_trees"])}
    assert set(tops) == {r["topology"] for r in rows(out, "propagation.csv")}
    for r in rows(out, "propagation.csv") + rows(out, "hops.csv"):
        t = tops[r["topology"]]
        assert round(float(r["summary_sends"])) == t.n - len(t.plan.sinks) < t.n == 24


def test_cwix_is_the_full_graph():
    t = topologies(1, 0)[0]
    assert (t.name, t.n, len(t.edges)) == ("cwix", 24, 29)
    assert sum(t.plan.degree.values()) == 2 * 29


def test_propagation_bytes_order_and_baseline_formula(quick):
    out, _, _ = quick
    for r in rows(out, "propagation.csv"):
        summary_bytes = max(float(r["summary_formula_bytes"]), float(r["summary_wire_bytes"]))
        assert summary_bytes < float(r["siena_bytes"]) < float(r["baseline_formula_bytes"]), r
        # Walking every subscription along shortest paths is exactly N(N−1)·h̄·σ·50.
        assert abs(float(r["baseline_walked_bytes"]) - float(r["baseline_formula_bytes"])) <= 1, r


def test_hops_siena_at_no_covering_is_n_times_n_minus_1(quick):
    out, _, _ = quick
    for r in rows(out, "hops.csv"):
        if float(r["p"]) == 0.0:
            assert float(r["siena_batch_expected"]) == 24 * 23 == float(r["siena_link_batches_large"])
            assert float(r["siena_messages_per_subscription"]) == 23
        else:
            assert float(r["siena_batch_expected"]) < 24 * 23


def test_routing_ends_meet(quick):
    """No broker interested: Siena sends nothing, summaries still walk BROCLI.
    Every broker interested: both take N − 1 messages (every broker but the
    publisher is handed the event once: by a DELIVER or a ROUTE)."""
    out, _, _ = quick
    for r in rows(out, "routing.csv"):
        k = int(r["interested"])
        if k == 0:
            assert float(r["siena_hops"]) == 0 < float(r["summary_a_messages"])
        if k == 24:
            assert float(r["siena_hops"]) == float(r["summary_a_messages"]) == float(r["summary_b_messages"]) == 23
            assert float(r["summary_one_sink_messages"]) == 23


def test_single_sink_plan_routes_once_then_delivers(quick):
    """DEF-SR-8's reading: every publisher but the sink sends one ROUTE, to the
    sink, which delivers to the rest: (N − 1)/N messages per event with
    nobody interested, never more than Algorithm 4-2's walk there."""
    out, _, _ = quick
    for r in rows(out, "routing.csv"):
        if int(r["interested"]) == 0:
            assert float(r["summary_one_sink_messages"]) == round(23 / 24, 4)
            assert float(r["summary_one_sink_messages"]) <= float(r["summary_a_messages"])
    assert all("summary_one_sink_messages" in r for r in rows(out, "simulated_routing.csv"))


def test_storage_summaries_below_siena_below_baseline(quick):
    out, _, _ = quick
    for r in rows(out, "storage.csv"):
        assert float(r["summary_formula_bytes"]) < float(r["siena_bytes"]) <= float(r["baseline_bytes"])


def test_storage_at_small_sigma_and_siena_in_expectation(quick):
    """Fig. 5-5 with each broker holding σ ≤ 100 subscriptions (§5.2.3's 10 to 100 a period): a row per topology, p
    and σ of the sweep up to 100, Siena storing at most baseline (i); the thesis's Siena in expectation stores
    less with covering p at every broker than with p × deg / max deg (every broker covers at least as often)."""
    out, _, _ = quick
    small = rows(out, "storage_small.csv")
    assert small and {int(float(r["subscriptions_per_broker"])) for r in small} <= {10, 30, 60, 100}
    for r in small:
        assert float(r["siena_bytes"]) <= float(r["baseline_bytes"])
    for r in rows(out, "storage.csv"):
        assert float(r["siena_uniform_over_summary"]) <= float(r["siena_expected_over_summary"])


def test_simulated_baselines_over_the_seeds(quick):
    """Siena on the simulator sends a subscription over at most the tree's 23 links and never more than baseline
    (i)'s messages; it stores at most what baseline (i) stores; each point is a mean over both quick seeds, with
    its interval beside it."""
    out, result, _ = quick
    assert result["parameters"]["seeds"] == [1, 2]
    for r in rows(out, "simulated.csv"):
        assert r["seeds"] == "2" and "siena_sim_bytes_ci95" in r
        assert float(r["siena_sim_messages_per_subscription"]) <= 23
        assert float(r["siena_sim_messages"]) <= float(r["baseline_sim_messages"]) == 24 * 23 * float(r["sigma"])
    for r in rows(out, "simulated_storage.csv"):
        assert float(r["siena_sim_stored"]) <= float(r["baseline_sim_stored"])


def test_simulated_routing_ends_meet(quick):
    """Nobody interested: Siena and baseline (i) send nothing; everyone: N − 1 messages; flooding always N − 1."""
    out, _, _ = quick
    for r in rows(out, "simulated_routing.csv"):
        assert float(r["flooding_sim_hops"]) == 23
        if r["interested"] == "0":
            assert float(r["siena_sim_hops"]) == float(r["broadcast_sim_hops"]) == 0
        if r["interested"] == "24":
            assert float(r["siena_sim_hops"]) == float(r["broadcast_sim_hops"]) == 23


def test_false_positives_are_counted(quick):
    out, _, _ = quick
    fp = rows(out, "false_positives.csv")
    assert len(fp) == 5
    for r in fp:
        assert float(r["false_delivers"]) <= float(r["delivers"])
        assert float(r["messages"]) == pytest.approx(float(r["routes"]) + float(r["delivers"]))


def test_example_4_3_routing():
    """CLM-SR-3's event, numbered from 0: from broker 0, matches at 3, 7 and 12."""
    edges = [(0, 1), (1, 4), (2, 4), (3, 4), (5, 4), (4, 6), (6, 7), (7, 8), (7, 9), (9, 10), (10, 11), (10, 12)]
    t = make_topology("example-4-3", 13, edges, "seed note §5.2")
    route = brocli_route(t.graph, t.routing_plan, {4: {3}, 7: {7}, 10: {12}}, 0)
    assert [(a, b) for _, a, b in route.messages] == [(0, 4), (4, 3), (4, 7), (7, 10), (10, 12)]
    shape = route_shape(t, 0, "a")
    assert shape.routes == 3 and shape.remote[3] == 1 and shape.remote[7] == 0


def test_siena_simulation_follows_its_expectation():
    t = topologies(1, 0)[0]
    sigma = 2000
    simulated = siena_period(t, 0.5, sigma, rng_for(1, "test"))["siena_messages"]
    expected = siena_expected_messages(t, 0.5) * sigma
    assert abs(simulated - expected) / expected < 0.02


def test_siena_reverse_paths_on_a_tree_cover_it():
    t = topologies(1, 1)[1]
    for publisher in (0, 5, 23):
        used = reverse_path_incidence(t, publisher).sum(axis=0)
        assert (used > 0).sum() == t.n - 1


def test_siena_covering_reading_charges_a_prefix_of_each_reverse_path():
    """Siena's covering reading of event cost: with no covering every event
    is charged X's whole reverse path (the plain reading); with covering,
    a part of it that starts at X, so never more links; and the chance a
    link is charged falls as the covering probability grows."""
    t = topologies(1, 0)[0]
    rng = np.random.default_rng(7)
    for publisher in (0, 11):
        incidence = reverse_path_incidence(t, publisher)
        plain = covered_reverse_links(t, publisher, 0.0, 20, rng)
        assert all((plain[x] == incidence[x].astype(bool)).all() for x in range(t.n))
        half, most = (covered_reverse_links(t, publisher, p, 400, rng) for p in (0.5, 0.9))
        for x in range(t.n):
            assert not (half[x] & ~incidence[x].astype(bool)).any()
            if incidence[x].sum() > 1:  # X's first link is always crossed; later ones less often as p grows
                assert half[x].sum() > most[x].sum()
                first, _ = reverse_path_receivers(t, publisher, x)
                assert half[x][:, first[0]].all()


def test_routing_rows_are_deterministic():
    t = topologies(3, 1)[1]
    assert routing_rows(t, 5, 3, 1) == routing_rows(t, 5, 3, 1)
    assert routing_rows(t, 5, 3, 1) != routing_rows(t, 5, 4, 1)


def test_benchmark_bytes_equal_the_simulated_protocol():
    """The benchmark sizes a period's propagation from the plan and real
    summaries; the summaries protocol on the simulator, fed the same
    subscriptions, must put exactly those bytes on the wire (DEF-SR-5)."""
    n, per_broker = 8, 30
    links = random_tree(n, random.Random(3))
    workload = broker_workloads(0.5, n, per_broker, 0, seed=1)
    adjacency: dict[int, set[int]] = {b: set() for b in range(n)}
    for a, b in links:
        adjacency[a].add(b)
        adjacency[b].add(a)
    the_plan = plan(adjacency)
    expected = summary_propagation(the_plan, propagate(the_plan, GrowingDeltas(workload).grow_to(per_broker)))
    net = build(links, n, seed=0, protocol="summaries", options={"schema": SCHEMA, "brokers": n, "max_subscriptions": per_broker})
    for b in range(n):
        client = net.add_client(b)
        for _, subscription in workload.subscriptions[b]:
            net.subscribe(client, subscription)
    net.run()
    assert net.ledger.sent["SUMMARY"] == expected["summary_sends"]
    assert net.ledger.payload_bytes["SUMMARY"] == expected["summary_wire_bytes"] > 0


def test_benchmark_routing_equals_the_simulated_protocol():
    """The benchmark routes events with the model's BROCLI routing (DEF-SR-2)
    on the plan and real history summaries; the summaries protocol on the
    simulator, on the benchmark's own tree, with the same subscriptions,
    events and publishers, must send exactly those ROUTE and DELIVER
    messages, over exactly those overlay links (DEF-SR-5)."""
    seed, per_broker = 1, 40
    t = topologies(seed, 1)[1]
    workload = broker_workloads(0.5, t.n, per_broker, 3, seed)
    histories = propagate(t.plan, GrowingDeltas(workload).grow_to(per_broker))
    row, problems = false_positive_row(t, workload, histories, seed)
    assert problems == [] and row["delivers"] > 0 and row["routes"] > row["events"]
    net = build(t.edges, t.n, seed=seed, protocol="summaries", options={"schema": SCHEMA, "brokers": t.n, "max_subscriptions": per_broker})
    clients = [net.add_client(b) for b in range(t.n)]
    for b in range(t.n):
        for _, subscription in workload.subscriptions[b]:
            net.subscribe(clients[b], subscription)
    net.run()
    publishers = rng_for(seed, "publishers", workload.p)  # the benchmark's draw of each event's publisher
    for events in workload.events.values():
        for event in events:
            net.publish(clients[publishers.randrange(t.n)], event)
            net.run()
    assert (net.ledger.sent["ROUTE"], net.ledger.sent["DELIVER"]) == (row["routes"], row["delivers"])
    assert (net.ledger.overlay_hops["ROUTE"], net.ledger.overlay_hops["DELIVER"]) == (row["route_links"], row["deliver_links"])


def test_simulated_routing_checks_every_delivery():
    """The simulated routing refuses a run in which an event missed (or doubled) an interested client."""
    from subsum.bench.summary_routing import simulated
    t = topologies(1, 0)[0]
    net, clients = simulated.network(t, "siena", 1)
    for x in range(t.n):
        net.subscribe(clients[x], simulated.interest_filter(x))
    net.run()
    flags = np.zeros(t.n, dtype=bool)
    flags[5] = True
    eid = net.publish(clients[0], simulated.interest_event(flags))
    net.run()
    simulated.check_deliveries(net, {eid: {clients[5]}}, "siena")
    with pytest.raises(AssertionError, match="wanted"):
        simulated.check_deliveries(net, {eid: {clients[5], clients[6]}}, "siena")


def test_means_over_seeds_refuses_a_point_missing_from_a_seed():
    from subsum.bench.intervals import means_over_seeds
    with pytest.raises(ValueError, match="rows for 2 seeds"):
        means_over_seeds([[{"p": 0.1, "x": 1.0}, {"p": 0.5, "x": 1.0}], [{"p": 0.1, "x": 2.0}]], ("p",))
    with pytest.raises(ValueError, match="differs between seeds"):
        means_over_seeds([[{"p": 0.1, "x": "a"}], [{"p": 0.1, "x": "b"}]], ("p",))


def test_map_runs_keeps_task_order_and_ctrl_c_stops_the_workers_at_once(tmp_path):
    """The benches' process pool (`output.map_runs`): results in task order; a failed task raises; Ctrl-C stops
    the running workers too (a pool that let them finish took about 80 s to exit in the summary-routing bench)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from subsum.bench.output import map_runs
    assert list(map_runs(abs, [-3, 1, -2, 4], 2)) == [3, 1, 2, 4]
    with pytest.raises(ValueError):
        list(map_runs(int, ["1", "x", "2"], 2))
    script = ("import time\nfrom subsum.bench.output import map_runs\nprint('started', flush=True)\n"
              "list(map_runs(time.sleep, [60, 60, 60], 2))\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=interruptible, start_new_session=True)
    assert child.stdout is not None and child.stdout.readline().strip() == b"started"
    time.sleep(1.0)
    os.killpg(child.pid, signal.SIGINT)
    started = time.monotonic()
    _, err = child.communicate(timeout=30)
    assert time.monotonic() - started < 10 and child.returncode != 0
    assert b"ForkPoolWorker" not in err  # the workers ignore Ctrl-C: only the parent reports it
