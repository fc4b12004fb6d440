"""Workloads for the broker simulator: `subsum simulate` and the
reconfiguration measurements (spec/05-network.md, benchmarks/README.md).

A workload: a topology, clients spread at random over the brokers, each
subscribing to filters `x > k` or `s prefix "L"` (k in 0..99, L a letter),
events with random x and s published from random clients, and optional
link swaps. Lost events are counted against the model's ideal delivery at
the moment of publication (DEF-NET-4).
"""

from __future__ import annotations

import random
import string
import time
from collections import Counter

import attrs

from subsum.core.types import Attribute, Constraint, Event, Subscription
from subsum.impl.network import Network, build, generate, read_edgelist
from subsum.model import network as ref


def random_filter(rng: random.Random) -> Subscription:
    if rng.random() < 0.5:
        return Subscription(frozenset({Constraint("x", "int", ">", rng.randrange(100))}))
    return Subscription(frozenset({Constraint("s", "string", "prefix", rng.choice(string.ascii_uppercase))}))


def random_event(rng: random.Random) -> Event:
    return Event((Attribute("x", "int", rng.randrange(100)), Attribute("s", "string", "".join(rng.choices(string.ascii_uppercase, k=3)))))


def topology(kind: str, brokers: int, seed: int) -> tuple[int, list]:
    if kind in ("random-tree", "path", "star", "balanced"):
        return brokers, generate(kind, brokers, seed)
    n, links, _ = read_edgelist(kind)
    return n, links


def populate(net: Network, rng: random.Random, subscriptions: int, per_client: int = 2) -> list[int]:
    """Clients spread at random, `per_client` filters each, `subscriptions` in all."""
    brokers = sorted(net.brokers)
    clients = [net.add_client(rng.choice(brokers)) for _ in range(max(1, subscriptions // per_client))]
    for i in range(subscriptions):
        net.subscribe(clients[i % len(clients)], random_filter(rng))
    return clients


@attrs.define
class SwapStats:
    swaps: int = 0
    control: Counter = attrs.field(factory=Counter)  # SUB/UNSUB sent because of the swaps
    events: int = 0
    expected: int = 0  # ideal deliveries of the events published during reconfiguration
    delivered: int = 0
    lost: int = 0
    duplicates: int = 0
    dropped: Counter = attrs.field(factory=Counter)
    seconds: float = 0.0


def measure_swaps(brokers: int = 200, subscriptions: int = 1000, swaps: int = 1000, events_per_swap: int = 5,
                  gap: float = 5.0, seed: int = 1, kind: str = "random-tree", delay=(1.0, 10.0)) -> SwapStats:
    """`swaps` link swaps, one at a time on a quiescent network: break a
    random link, add a random link reconnecting the halves after `gap`
    (simulated ms), publish `events_per_swap` events from random clients
    while the reconfiguration runs, then run to quiescence. Counts the
    SUB/UNSUB the swap caused and the events lost against the ideal
    delivery at publication (the tree before the break)."""
    rng = random.Random(seed)
    n, links = topology(kind, brokers, seed)
    net = build(links, n, seed=seed, delay=delay)
    clients = populate(net, rng, subscriptions)
    net.run()
    stats = SwapStats()
    started = time.perf_counter()
    for _ in range(swaps):
        a, b = rng.choice(net.broker_links())
        graph = ref.overlay(net.brokers, net.broker_links())
        access, filters = dict(net.clients), {c: frozenset(fs) for c, fs in net.client_filters.items()}
        before = Counter(net.sent)
        dropped_before = Counter(net.dropped)
        net.disconnect(a, b)
        left, right = sorted(net.component(a)), sorted(net.component(b))
        c, d = rng.choice(left), rng.choice(right)
        net.at(net.now + gap, lambda c=c, d=d: net.connect(c, d))
        published = []
        for k in range(events_per_swap):
            net.run(max_steps=rng.randrange(1, 50))  # the reconfiguration is under way
            client = rng.choice(clients)
            event = random_event(rng)
            published.append((net.publish(client, event), ref.ideal_delivery(graph, access, filters, client, event)))
        net.run()
        sent = Counter(net.sent) - before
        stats.swaps += 1
        stats.control.update({k: sent[k] for k in ("SUB", "UNSUB")})
        stats.dropped.update(Counter(net.dropped) - dropped_before)
        for eid, want in published:
            got = net.deliveries[eid]
            stats.events += 1
            stats.expected += len(want)
            stats.delivered += len(set(got) & want)
            stats.lost += len(want - set(got))
            stats.duplicates += sum(v - 1 for v in got.values() if v > 1)
    stats.seconds = time.perf_counter() - started
    return stats


def throughput(brokers: int = 1000, subscriptions: int = 10_000, events: int = 20_000, seed: int = 1) -> dict:
    """Handled messages per second on a quiescent random tree: subscription
    propagation, then event routing, timed apart."""
    rng = random.Random(seed)
    n, links = topology("random-tree", brokers, seed)
    net = build(links, n, seed=seed, record_crossings=False)
    t0 = time.perf_counter()
    clients = populate(net, rng, subscriptions)
    net.run()
    t1 = time.perf_counter()
    sub_messages = sum(net.handled.values())
    for _ in range(events):
        net.publish(rng.choice(clients), random_event(rng))
    net.run()
    t2 = time.perf_counter()
    event_messages = sum(net.handled.values()) - sub_messages
    return {"brokers": n, "subscriptions": subscriptions, "events": events,
            "subscription_messages": sub_messages, "subscription_seconds": round(t1 - t0, 3),
            "subscription_msgs_per_s": round(sub_messages / (t1 - t0)),
            "event_messages": event_messages, "event_seconds": round(t2 - t1, 3),
            "event_msgs_per_s": round(event_messages / (t2 - t1)),
            "deliveries": sum(sum(c.values()) for c in net.deliveries.values())}


def simulate(kind: str = "random-tree", brokers: int = 20, subscriptions: int = 100, events: int = 100, swaps: int = 0,
             gap: float = 5.0, seed: int = 0, trace: bool = False, delay=(1.0, 10.0)) -> tuple[Network, int]:
    """`subsum simulate`: subscriptions propagate, then events are published
    one by one from random clients, a few messages apart, with up to `swaps`
    link swaps spread among them (each adds its new link `gap` ms after the
    break); finally everything runs to quiescence. Returns the network and
    the number of swaps made."""
    rng = random.Random(seed)
    n, links = topology(kind, brokers, seed)
    net = build(links, n, seed=seed, trace=trace, delay=delay)
    clients = populate(net, rng, subscriptions)
    net.run()
    every = max(1, events // swaps) if swaps else None
    made = 0
    for i in range(events):
        if every and i % every == 0 and made < swaps and net.broker_links():
            a, b = rng.choice(net.broker_links())
            net.disconnect(a, b)
            c, d = rng.choice(sorted(net.component(a))), rng.choice(sorted(net.component(b)))
            net.at(net.now + gap, lambda c=c, d=d: net.connect(c, d))
            made += 1
        net.publish(rng.choice(clients), random_event(rng))
        net.run(max_steps=rng.randrange(1, 20))
    net.run()
    return net, made
