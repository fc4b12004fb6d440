"""Seeded workloads for the broker simulator and its delivery audit
(spec/05-network.md): what `subsum simulate` runs, and what the network and
reconfiguration benchmarks build on.

A workload: a topology, clients spread at random over the brokers, each
subscribing to filters `x > k` or `s prefix "L"` (k in 0..99, L a letter),
events with random x and s published from random clients, and optional
link swaps. Everything is drawn from seeded generators.
"""

from __future__ import annotations

import random
import string
from typing import Mapping

import attrs

from subsum.core.types import Attribute, Constraint, Event, Subscription, subscription_sort_key
from subsum.impl.matching.indexed import IndexedEngine
from subsum.impl.network.sim import DEFER_TIMEOUT, SUB_TIMEOUT, Network, build
from subsum.impl.network.topology import components, overlay_links


def random_filter(rng: random.Random) -> Subscription:
    if rng.random() < 0.5:
        return Subscription(frozenset({Constraint("x", "int", ">", rng.randrange(100))}))
    return Subscription(frozenset({Constraint("s", "string", "prefix", rng.choice(string.ascii_uppercase))}))


def random_event(rng: random.Random) -> Event:
    return Event((Attribute("x", "int", rng.randrange(100)), Attribute("s", "string", "".join(rng.choices(string.ascii_uppercase, k=3)))))


def populate(net: Network, rng: random.Random, subscriptions: int, per_client: int = 2) -> list[int]:
    """Clients spread at random, `per_client` filters each, `subscriptions` in all."""
    brokers = sorted(net.brokers)
    clients = [net.add_client(rng.choice(brokers)) for _ in range(max(1, subscriptions // per_client))]
    for i in range(subscriptions):
        net.subscribe(clients[i % len(clients)], random_filter(rng))
    return clients


@attrs.frozen
class Simulation:
    """A finished `simulate` run: the network, the swaps made, each
    publication as (event id, publisher, event), and, for a run on a
    forest, each broker's tree (the index of its component, as built;
    swaps keep every broker in its tree)."""

    net: Network
    swaps: int
    published: list[tuple[int, int, Event]]
    tree_of: Mapping[int, int] | None = None


def simulate(kind: str = "random-tree", brokers: int = 20, subscriptions: int = 100, events: int = 100, swaps: int = 0,
             gap: float = 5.0, seed: int = 0, trace: bool = False, delay=(1.0, 10.0), protocol: str = "strawman",
             defer_timeout: float = DEFER_TIMEOUT, sub_timeout: float = SUB_TIMEOUT, options: dict | None = None,
             forest: bool = False) -> Simulation:
    """`subsum simulate`: subscriptions propagate, then events are published
    one by one from random clients, a few messages apart, with up to `swaps`
    link swaps spread among them (each adds its new link `gap` ms after the
    break); finally everything runs to quiescence. An edge-list topology
    of several components is refused unless `forest` asks for one."""
    rng = random.Random(seed)
    n, links = overlay_links(kind, brokers, seed, forest=forest)
    if protocol == "summaries":
        options = {"brokers": max(2, n), "max_subscriptions": max(1, subscriptions), **(options or {})}  # c1, c2 sized to the run
    net = build(links, n, seed=seed, trace=trace, delay=delay, protocol=protocol, defer_timeout=defer_timeout,
                sub_timeout=sub_timeout, options=options)
    clients = populate(net, rng, subscriptions)
    net.run()
    every = max(1, events // swaps) if swaps else None
    made = 0
    published = []  # (event id, publisher, event): the delivery audit's input
    for i in range(events):
        if every and i % every == 0 and made < swaps and net.broker_links():
            a, b = rng.choice(net.broker_links())
            c, d = rng.choice(sorted(net.overlay.side(a, b))), rng.choice(sorted(net.overlay.side(b, a)))
            net.swap((a, b), (c, d), gap=gap)
            made += 1
        client, event = rng.choice(clients), random_event(rng)
        published.append((net.publish(client, event), client, event))
        net.run(max_steps=rng.randrange(1, 20))
    net.run()
    tree_of = {b: i for i, part in enumerate(components(n, links)) for b in part} if forest else None
    return Simulation(net, made, published, tree_of)


def delivery_audit(net: Network, published, tree_of: Mapping[int, int] | None = None) -> dict:
    """The simulator's own count of what went wrong in delivery, for a run
    whose subscriptions do not change while events are published (as in
    `simulate`): per published event, the clients owed it are every client
    other than the publisher with a filter it matches (the impl's indexed
    engine decides) and, on a forest (`tree_of`: broker -> its tree), an
    access broker in the publisher's tree (DEF-NET-4: no path, no debt);
    `lost` counts owed clients that never got it, `duplicates` copies
    beyond the first, `unjustified` deliveries to clients holding no
    matching filter, `to_publisher` copies the publisher got back."""
    holders: dict[str, int] = {}
    pairs = []
    for client, filters in net.client_filters.items():
        for k, f in enumerate(sorted(filters, key=subscription_sort_key)):
            sid = f"{client}/{k}"
            holders[sid] = client
            pairs.append((sid, f))
    engine = IndexedEngine(pairs)
    engine.prepare()
    matched = engine.match_batch([event for _, _, event in published])
    owed_total = lost = duplicates = unjustified = to_publisher = 0
    for (eid, publisher, _), sids in zip(published, matched):
        holding = {holders[s] for s in sids}
        owed = holding - {publisher}
        if tree_of is not None:
            tree = tree_of[net.clients[publisher]]
            owed = {c for c in owed if tree_of[net.clients[c]] == tree}
        got = net.ledger.deliveries[eid]
        owed_total += len(owed)
        lost += len(owed - set(got))
        duplicates += sum(v - 1 for v in got.values() if v > 1)
        unjustified += sum(v for c, v in got.items() if c not in holding)
        to_publisher += got.get(publisher, 0)
    return {"owed": owed_total, "lost": lost, "duplicates": duplicates, "unjustified": unjustified,
            "to_publisher": to_publisher}


def report(run: Simulation, seconds: float) -> dict:
    """What `subsum simulate` prints: the message counters, deliveries, the
    delivery audit, and the simulated and wall-clock time."""
    net, ledger = run.net, run.net.ledger
    handled = sum(ledger.handled.values())
    return {"protocol": net.protocol, "brokers": len(net.brokers), "clients": len(net.clients), "events": len(run.published),
            "swaps": run.swaps, "sent": dict(ledger.sent), "handled": dict(ledger.handled), "dropped": dict(ledger.dropped),
            "deliveries": sum(sum(c.values()) for c in ledger.deliveries.values()),
            **({"overlay_hops": dict(ledger.overlay_hops)} if ledger.overlay_hops else {}),
            **({"payload_bytes": dict(ledger.payload_bytes)} if ledger.payload_bytes else {}),
            **({"trees": len(set(run.tree_of.values()))} if run.tree_of is not None else {}),
            **delivery_audit(net, run.published, run.tree_of),
            "simulated_ms": round(net.now, 3), "seconds": round(seconds, 3),
            "handled_per_second": round(handled / seconds) if seconds else None}
