"""The baselines of the summary routing benchmark measured on the simulator
(issue 54; spec/08-summary-routing.md DEF-SR-6, DEF-SR-7): Siena's covering
forwarding (`SienaBroker`, protocol "siena"), baseline (i) (`BroadcastBroker`,
"broadcast") and baseline (ii) (`FloodingBroker`, "flooding"), each counted
from the simulator's ledger, never from a formula.

- **A period's propagation** (Figs 5-2, 5-3): a fresh network, one client
  per broker, each broker's first σ subscriptions of the Table 5-2 workload
  (the ones the summaries side ships), run to quiescence. Siena: its SUB
  messages, each a subscription of 50 bytes (the thesis's size); baseline
  (i): its SUBSCRIPTION messages and the overlay links they cross.
- **Storage** (Fig. 5-5): the period with σ = S leaves every broker's
  table full: Siena stores one entry per (filter, subscriber), baseline (i)
  every broker's filters at every broker.
- **Event routing** (Fig. 5-4): broker X's client subscribes `iX = 1`; an
  event sets iX = 1 for the k brokers first in a random order drawn per
  event (popularity k/N), 0 for the others. The EVENT messages between
  brokers per event, under each protocol.

The simulator's overlay is a tree (Strawman's, and Siena's after it, need
one), so on a graph with cycles (CWIX) all three run on the breadth-first
tree from the graph's centre (`spanning_tree`); baseline (i), which sends
out of band, counts the overlay links of the tree's paths. The summaries
side runs on the whole graph.
"""

from __future__ import annotations

from typing import cast

import networkx as nx
import numpy as np

from subsum.bench.summary_routing.overlays import Topology, np_rng_for
from subsum.bench.summary_routing.siena import SUBSCRIPTION_BYTES
from subsum.bench.summary_routing.summaries import Brokers
from subsum.core.types import Attribute, Constraint, Event, Subscription
from subsum.impl.network import Network, build
from subsum.impl.network.protocols.baselines import BroadcastBroker
from subsum.impl.network.protocols.siena import SienaBroker

#: the protocols a period is measured under
PERIOD_PROTOCOLS = ("siena", "broadcast")
#: the protocols events are routed by
ROUTING_PROTOCOLS = ("siena", "flooding", "broadcast")


def spanning_tree(t: Topology) -> list[tuple[int, int]]:
    """The overlay's links if it is a tree; else its breadth-first tree from the centre (the smallest-numbered
    broker of least eccentricity)."""
    if nx.is_tree(t.graph):
        return list(t.edges)
    centre = min(nx.center(t.graph))
    return sorted((min(a, b), max(a, b)) for a, b in nx.bfs_edges(t.graph, centre))


def network(t: Topology, protocol: str, seed: int) -> tuple[Network, list[int]]:
    """A fresh network of the protocol on the topology's tree, one client per broker."""
    net = build(spanning_tree(t), t.n, seed=seed, protocol=protocol, record_crossings=False)
    clients = [net.add_client(b) for b in range(t.n)]
    net.run()
    return net, clients


def table_entries(net: Network) -> int:
    """Siena's stored subscriptions: one per (filter, subscriber) in every broker's table."""
    brokers = [cast(SienaBroker, broker) for broker in net.brokers.values()]
    return sum(len(subscribers) for broker in brokers for subscribers in broker.table.values())


def baseline_entries(net: Network) -> int:
    """Baseline (i)'s stored subscriptions: every broker's filters of every other broker, and its own clients'."""
    brokers = [cast(BroadcastBroker, broker) for broker in net.brokers.values()]
    return sum(len(held) for broker in brokers for held in broker.remote.values()) + sum(len(b.filters) for b in brokers)


def period_row(t: Topology, w: Brokers, sigma: int, seed: int, store: bool) -> dict:
    """One period of σ new subscriptions at every broker, under Siena and baseline (i); with `store`, the
    storage the period leaves as well."""
    row: dict = {"topology": t.name, "p": w.p, "sigma": sigma}
    for protocol in PERIOD_PROTOCOLS:
        net, clients = network(t, protocol, seed)
        for b in range(t.n):
            for _, subscription in w.subscriptions[b][:sigma]:
                net.subscribe(clients[b], subscription)
        net.run()
        if protocol == "siena":
            row["siena_sim_messages"] = net.ledger.sent["SUB"]
            row["siena_sim_bytes"] = net.ledger.sent["SUB"] * SUBSCRIPTION_BYTES
            row["siena_sim_messages_per_subscription"] = round(net.ledger.sent["SUB"] / (t.n * sigma), 4)
            row["siena_sim_messages_per_sigma"] = round(net.ledger.sent["SUB"] / sigma, 4)  # 24 × 23 = 552 without covering
            # the share of (subscription, tree link) sends covering held back: without covering each crosses N − 1
            row["siena_sim_held_back"] = round(1 - net.ledger.sent["SUB"] / (t.n * sigma * (t.n - 1)), 6)
            if store:
                row["siena_sim_stored"] = table_entries(net)
        else:
            row["baseline_sim_messages"] = net.ledger.sent["SUBSCRIPTION"]
            row["baseline_sim_links"] = net.ledger.overlay_hops["SUBSCRIPTION"]
            row["baseline_sim_bytes"] = net.ledger.overlay_hops["SUBSCRIPTION"] * SUBSCRIPTION_BYTES
            if store:
                row["baseline_sim_stored"] = baseline_entries(net)
    return row


def interest_filter(x: int) -> Subscription:
    """Broker X's one subscription in the routing run: `iX = 1`."""
    return Subscription(frozenset({Constraint(f"i{x}", "int", "=", 1)}))


def interest_event(interested: np.ndarray) -> Event:
    """iX = 1 for the brokers flagged, 0 for the others."""
    return Event(tuple(Attribute(f"i{x}", "int", int(flag)) for x, flag in enumerate(interested)))


def routing_rows(t: Topology, events_per_broker: int, seed: int) -> list[dict]:
    """Fig. 5-4 on the simulator: for k = 0 … N interested brokers, `events_per_broker` events at every broker,
    each interesting k brokers drawn at random (nested as k grows); the EVENT messages between brokers per event
    under Siena, flooding and baseline (i), and the overlay links baseline (i)'s cross."""
    rng = np_rng_for(seed, t.name, "simulated-interest")
    ranks = [rng.random((events_per_broker, t.n)).argsort(axis=1).argsort(axis=1) for _ in range(t.n)]
    nets = {protocol: network(t, protocol, seed) for protocol in ROUTING_PROTOCOLS}
    for net, clients in nets.values():
        for x in range(t.n):
            net.subscribe(clients[x], interest_filter(x))
        net.run()
    rows = []
    for k in range(t.n + 1):
        row: dict = {"topology": t.name, "interested": k, "popularity": round(k / t.n, 4), "events": t.n * events_per_broker}
        for protocol, (net, clients) in nets.items():
            sent, links = net.ledger.sent["EVENT"], net.ledger.overlay_hops["EVENT"]
            wanted = {}
            for b in range(t.n):
                for flags in ranks[b] < k:
                    wanted[net.publish(clients[b], interest_event(flags))] = {clients[x] for x in map(int, flags.nonzero()[0]) if x != b}
            net.run()
            check_deliveries(net, wanted, protocol)
            row[f"{protocol}_sim_hops"] = round((net.ledger.sent["EVENT"] - sent) / row["events"], 4)
            if protocol == "broadcast":
                row["baseline_sim_links"] = round((net.ledger.overlay_hops["EVENT"] - links) / row["events"], 4)
            net.ledger.deliveries.clear()  # nobody reads them; they would grow with every event
        rows.append(row)
    return rows


def check_deliveries(net: Network, wanted: dict[int, set[int]], protocol: str) -> None:
    """Each event reached exactly the clients of its interested brokers (the publisher's own client aside), once:
    a protocol that delivered less would otherwise look cheaper."""
    for eid, clients in wanted.items():
        got = net.ledger.deliveries.get(eid, {})
        if set(got) != clients or any(copies != 1 for copies in got.values()):
            raise AssertionError(f"{protocol}: event {eid} delivered to {sorted(got)}, wanted {sorted(clients)} once each")
