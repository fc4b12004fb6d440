"""The churning-subscriber workload of the caching protocol (spec/09-caching.md
DEF-CACHE-8): what `subsum simulate --caching` runs and `subsum bench
caching` measures.

On a random tree of brokers, `topics` topics with Zipf(α) popularity:

- a few **standing subscribers** (one per 5 brokers, at random brokers,
  each on a topic drawn by popularity) keep delivery trees alive, so that
  publications reach candidate brokers;
- `messages` **publications**, one per round, each on a topic drawn by
  popularity, from a publisher at a random broker;
- each round one **visitor** arrives at a random broker, subscribes to a
  topic drawn by popularity, requests the past publications of that
  topic (`request`), stays `stay` rounds and unsubscribes.

The network runs to quiescence after every step, so each request's
outcome is its own. Filters are `topic = k` (int); everything is drawn from
one generator seeded by `seed`.
"""

from __future__ import annotations

import random
from collections import deque
from typing import cast

import numpy as np

from subsum.core.types import Attribute, Constraint, Event, Subscription
from subsum.impl.network.protocols.caching import LEAF_READING, PLACEMENT, POLICY, SINGLE_READING, CacheNetwork, request
from subsum.impl.network.sim import Network, build
from subsum.impl.network.topology import overlay_links


#: A run's defaults besides the protocol's (`subsum simulate caching`): the
#: Zipf exponent of topic popularity, the rounds a visitor stays, and a
#: cache of this share of the publications.
ALPHA = 0.8
STAY = 20
CAPACITY_SHARE = 0.05


def default_capacity(messages: int) -> int:
    """Cache slots of a run that names none: `CAPACITY_SHARE` of the publications, at least one."""
    return max(1, round(CAPACITY_SHARE * messages))


def topic_filter(k: int) -> Subscription:
    return Subscription(frozenset({Constraint("topic", "int", "=", k)}))


def topic_event(k: int, serial: int) -> Event:
    return Event((Attribute("topic", "int", k), Attribute("serial", "int", serial)))


class Popularity:
    """Zipf(α) over topics 0 … n − 1: topic i with probability ∝ 1/(i+1)^α."""

    def __init__(self, n: int, alpha: float, rng: random.Random) -> None:
        weights = 1.0 / np.arange(1, n + 1) ** alpha
        self.cumulative = np.cumsum(weights / weights.sum())
        self.rng = rng
        self.n = n

    def draw(self) -> int:
        return min(int(np.searchsorted(self.cumulative, self.rng.random(), side="right")), self.n - 1)


def run_caching(brokers: int = 20, placement: str = PLACEMENT, policy: str = POLICY, capacity: int | None = 50,
                alpha: float = ALPHA, messages: int = 1000, topics: int | None = None, stay: int = STAY,
                leaf_reading: str = LEAF_READING, single_reading: str = SINGLE_READING, topology: str = "random-tree",
                seed: int = 0, variant: dict | None = None) -> tuple[Network, dict]:
    """Run the workload; returns the network and its report (`report`).
    `topology` is a generator's name (random-tree, path, star, balanced)
    or an edge-list file (connected); `capacity` None is unbounded;
    `topics` defaults to messages / 10; `variant` more protocol options
    (`suppress_duplicates`, `ask`, `lfu_ties`: the seeds' alternatives)."""
    rng = random.Random(f"caching-{seed}")
    topics = topics or max(1, messages // 10)
    popularity = Popularity(topics, alpha, rng)
    brokers, links = overlay_links(topology, brokers, seed)
    net = build(links, brokers, seed=seed, protocol="caching",
                options={"placement": placement, "policy": policy, "capacity": capacity, "leaf_reading": leaf_reading,
                             "single_reading": single_reading, **(variant or {})})
    ids = sorted(net.brokers)
    for _ in range(max(1, brokers // 5)):
        net.subscribe(net.add_client(rng.choice(ids)), topic_filter(popularity.draw()))
    net.run()
    publishers = [net.add_client(b) for b in ids]
    leaving: deque[tuple[int, int, Subscription]] = deque()  # (round, client, filter)
    for i in range(messages):
        k = popularity.draw()
        net.publish(rng.choice(publishers), topic_event(k, i))
        net.run()
        client, f = net.add_client(rng.choice(ids)), topic_filter(popularity.draw())
        net.subscribe(client, f)
        request(net, client, f)
        net.run()
        leaving.append((i + stay, client, f))
        while leaving and leaving[0][0] <= i:
            _, gone, g = leaving.popleft()
            net.unsubscribe(gone, g)
            net.run()
    return net, report(net)


def report(net: Network) -> dict:
    """DEF-CACHE-8: per request, what the client recovered of the matching
    past publications, at what cost.

    - answered: requests that recovered at least one message, over the
      requests with something to recover (a matching past publication);
    - hit ratio: requests that hit some broker's cache, over all requests;
    - survivability: messages recovered over matching past publications;
    - delay: broker hops of the response that first brought each
      recovered message (0: a hit at the requester's own broker), mean;
    - overhead: REQUEST, RESPONSE and placement messages (STORE floods
      under `all`, PLACE copies under single's centre reading) per request;
    - duplicates: copies beyond the first a client received, and responses
      dropped by duplicate suppression.
    """
    shared = cast(CacheNetwork, net.shared)
    requests = list(shared.requests.values())
    wanting = [r for r in requests if r.past]
    answered = sum(1 for r in wanting if r.recovered)
    owed = sum(len(r.past) for r in wanting)
    recovered = sum(len(r.recovered) for r in requests)
    delays = [d for r in requests for d in r.delay.values()]
    request_hops = sum(r.request_hops for r in requests)
    response_hops = sum(r.response_hops for r in requests)
    store_messages = net.ledger.sent["STORE"] + net.ledger.sent["PLACE"]  # copies placed off the delivery tree
    counters = shared.counters
    return {
        "placement": shared.placement, "policy": shared.options["policy"], "capacity": shared.options["capacity"],
        "brokers": len(net.brokers), "publications": len(shared.events), "requests": len(requests),
        "requests_with_past": len(wanting), "answered": answered,
        "hit_ratio": round(sum(1 for r in requests if r.hits) / len(requests), 4) if requests else None,
        "answered_share": round(answered / len(wanting), 4) if wanting else None,
        "survivability": round(recovered / owed, 4) if owed else None,
        "recovered": recovered, "matching_past": owed,
        "delay_mean_hops": round(sum(delays) / len(delays), 3) if delays else None,
        "request_hops": request_hops, "response_hops": response_hops,
        "overhead_per_request": round((request_hops + response_hops + store_messages) / len(requests), 3) if requests else None,
        "requests_dropped": counters["requests dropped"],
        "duplicates_suppressed": counters["duplicates suppressed"],
        "duplicate_copies": sum(c - 1 for r in requests for c in r.recovered.values() if c > 1),
        "responses_lost": counters["responses lost"],
        "stored_at_publish": counters["stored at publish"], "stored_at_response": counters["stored at response"],
        "store_messages": store_messages, "event_messages": net.ledger.sent["EVENT"],
        "evictions": counters["evictions"],
    }
