"""Seed 003's simulation driver for the client-server system (§5;
spec/10-client-server.md DEF-CS-4): what `subsum simulate --client-server`
runs and `subsum bench client-server` sweeps.

A random tree of N brokers, each with a cache of K slots. For `steps`
steps (the thesis's MC):

- with probability μ a server arrives at a random broker with a new
  message (one server is there from the start, so there is always
  something to ask for);
- Poisson(λ·N) requests arrive (more brokers, more clients), each from a
  random broker, for a message drawn by popularity: uniform, except that
  every 20th message is "hot", requested `hot_weight` times as often;
- each request runs to quiescence before the next, at the step as the
  caches' clock.

The thesis's "400,000 requests per run" does not follow from its
parameters (seed note 003 §5); λ·N per step gives 2,500 at the defaults.
Everything is drawn from one generator seeded by `seed`.
"""

from __future__ import annotations

import math
import random
from typing import cast

from subsum.impl.network.protocols.client_server import CACHE_POLICY, POLICY, SLOTS, ClientServerNetwork, add_server, request
from subsum.impl.network.sim import Network, build
from subsum.impl.network.topology import overlay_links

HOT_EVERY = 20
#: A run's defaults besides the protocol's (`subsum simulate client-server`,
#: seed 003 §5): request rate λ, chance μ of a new server a step, and steps.
LAMBDA = 0.05
MU = 0.05
STEPS = 5000


def poisson(rng: random.Random, mean: float) -> int:
    """A Poisson(mean) draw (Knuth's method; the means here are below 100)."""
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k


def run_client_server(policy: str = POLICY, cache_policy: str = CACHE_POLICY, brokers: int = 10, slots: int = SLOTS, lam: float = LAMBDA,
                      mu: float = MU, steps: int = STEPS, hot_weight: float = 10.0, topology: str = "random-tree",
                      seed: int = 0) -> tuple[Network, dict]:
    """Run the driver; returns the network and the report: delay, overhead
    and hit per request (DEF-CS-3), and the counts."""
    rng = random.Random(f"client-server-{seed}")
    n, links = overlay_links(topology, brokers, seed)
    net = build(links, n, seed=seed, delay=(1.0, 1.0), protocol="client-server",
                options={"policy": policy, "cache_policy": cache_policy, "capacity": slots})
    clients = {b: net.add_client(b) for b in range(n)}
    messages: list[str] = []
    weights: list[float] = []

    def new_message() -> None:
        m = f"m{len(messages)}"
        add_server(net, rng.randrange(n), m)
        net.run()
        messages.append(m)
        weights.append(hot_weight if len(messages) % HOT_EVERY == 1 else 1.0)

    new_message()
    delay = overhead = hits = requests = 0
    for step in range(1, steps + 1):
        if rng.random() < mu:
            new_message()
        for _ in range(poisson(rng, lam * n)):
            m = rng.choices(messages, weights)[0]
            record = request(net, clients[rng.randrange(n)], m, float(step))
            net.run()
            delay += record.delay
            overhead += record.overhead
            hits += record.hit
            requests += 1
    shared = cast(ClientServerNetwork, net.shared)
    return net, {
        "policy": policy, "cache_policy": cache_policy if policy != "server" else None, "brokers": n, "slots": slots,
        "lambda": lam, "mu": mu, "steps": steps, "seed": seed, "messages": len(shared.server_of), "requests": requests,
        "delay": round(delay / requests, 4) if requests else None,
        "overhead": round(overhead / requests, 4) if requests else None,
        "hit": round(hits / requests, 4) if requests else None,
    }
