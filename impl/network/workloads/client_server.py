"""Seed 003's simulation driver for the client-server system (§5;
spec/10-client-server.md DEF-CS-4): what `subsum simulate client-server`
runs and `subsum bench client-server` sweeps.

A random tree of N brokers, each with a cache of K slots. For `steps`
steps (the thesis's MC):

- with probability μ a server arrives at a random broker with a new
  message (one server is there from the start, so there is always
  something to ask for);
- requests arrive, each from a random broker, for a message drawn by
  popularity: uniform, except that every 20th message is "hot", requested
  `hot_weight` times as often. How many: Poisson(λ·N·M(t)) with M(t) the
  messages so far (`per-message`, the default: seed 003 §5.2 says the
  count grows with the brokers and with the distinct messages, and its
  "400,000 requests a run" is of this order, about 3×10^5), or
  Poisson(λ·N) (`per-broker`, 2,500 a run at the defaults);
- each request runs to quiescence before the next, at the step as the
  caches' clock;
- under SS, the client's broker asks the brokers with a client that
  requested the same message in the same step (`ss_memory` = 0, the
  default), within the last S steps (S), or ever (None).

Everything is drawn from one generator seeded by `seed`.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Callable, Iterator, cast

from subsum.core.names import HIT_PLACES, LFU_TIES, REQUEST_PROCESSES, SOHA_PROBES
from subsum.impl.network.protocols.client_server import CACHE_POLICY, POLICY, SLOTS, ClientServerNetwork, add_server, request
from subsum.impl.network.sim import Network, build
from subsum.impl.network.topology import overlay_links

HOT_EVERY = 20
#: A run's defaults besides the protocol's (`subsum simulate client-server`,
#: seed 003 §5): request rate λ, chance μ of a new server a step, and steps.
LAMBDA = 0.05
MU = 0.05
STEPS = 5000
REQUEST_PROCESS = REQUEST_PROCESSES[0]
#: SS's interested brokers in a run (spec/10): those with a client that
#: requested the message in the same step (the seed's "has a client who is
#: looking for"); None, every broker whose client ever did (the protocol's
#: own default, the reference's table of CLM-CS-5); S, within S steps.
SS_MEMORY = 0
#: Knuth's method draws Poisson pieces of at most this mean (exp(−mean) stays far from underflow).
POISSON_PIECE = 30.0


def knuth_poisson(rng: random.Random, mean: float) -> int:
    """A Poisson(mean) draw by Knuth's method (mean at most POISSON_PIECE)."""
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k


def poisson(rng: random.Random, mean: float) -> int:
    """A Poisson(mean) draw. A sum of independent Poisson draws is Poisson
    with the summed mean, so a large mean is drawn in pieces of
    POISSON_PIECE; a small one is one Knuth draw, as it always was."""
    if mean <= POISSON_PIECE:
        return knuth_poisson(rng, mean)
    k = 0
    while mean > 0:
        piece = min(mean, POISSON_PIECE)
        k += knuth_poisson(rng, piece)
        mean -= piece
    return k


def requests_mean(process: str, lam: float, brokers: int, messages: int) -> float:
    """DEF-CS-4: the mean number of requests in a step with `messages` served so far."""
    if process not in REQUEST_PROCESSES:
        raise ValueError(f"unknown request process {process!r}; expected one of {', '.join(REQUEST_PROCESSES)}")
    return lam * brokers * (messages if process == "per-message" else 1)


def schedule(brokers: int, lam: float = LAMBDA, mu: float = MU, steps: int = STEPS, hot_weight: float = 10.0,
             request_process: str = REQUEST_PROCESS, seed: int = 0) -> Iterator[tuple[int, int, int]]:
    """The run's arrivals, in order, drawn from the generator seeded by
    `seed`: (0, broker, m) for a server with the new message m at `broker`,
    (step, broker, m) for a request at `step` ≥ 1 from `broker` for
    message m (messages are numbered 0, 1, … as their servers arrive).
    Serving never draws from this generator, so the schedule is the same
    under every policy."""
    requests_mean(request_process, lam, brokers, 1)  # refuses an unknown process before anything is drawn
    rng = random.Random(f"client-server-{seed}")
    messages: list[int] = []
    cumulative: list[float] = []  # running sums of the popularity weights: rng.choices draws as with weights=

    def new_message() -> tuple[int, int, int]:
        m = len(messages)
        messages.append(m)
        cumulative.append((cumulative[-1] if cumulative else 0.0) + (hot_weight if m % HOT_EVERY == 0 else 1.0))
        return 0, rng.randrange(brokers), m

    yield new_message()
    for step in range(1, steps + 1):
        if rng.random() < mu:
            yield new_message()
        for _ in range(poisson(rng, requests_mean(request_process, lam, brokers, len(messages)))):
            m = rng.choices(messages, cum_weights=cumulative)[0]
            yield step, rng.randrange(brokers), m


def run_client_server(policy: str = POLICY, cache_policy: str = CACHE_POLICY, brokers: int = 10, slots: int = SLOTS, lam: float = LAMBDA,
                      mu: float = MU, steps: int = STEPS, hot_weight: float = 10.0, topology: str = "random-tree",
                      seed: int = 0, request_process: str = REQUEST_PROCESS, ss_memory: int | None = SS_MEMORY,
                      soha_probes: str = SOHA_PROBES[0], lfu_ties: str = LFU_TIES[0], progress: Callable[[int], None] | None = None) -> tuple[Network, dict]:
    """Run the driver on the simulator; returns the network and the report:
    delay, overhead and hit per request (DEF-CS-3), and the counts.
    `ss_memory` is SS's reading of an interested broker (None: a client
    there ever requested the message; S: within the last S steps);
    `soha_probes` whose neighbors SOHA probes (`names.SOHA_PROBES`), `lfu_ties`
    rate-LFU's rule among equal rates (`names.LFU_TIES`).
    `progress`, if given, is called with each step as the run reaches it."""
    n, links = overlay_links(topology, brokers, seed)
    net = build(links, n, seed=seed, delay=(1.0, 1.0), protocol="client-server",
                options={"policy": policy, "cache_policy": cache_policy, "capacity": slots, "ss_memory": ss_memory,
                         "soha_probes": soha_probes, "lfu_ties": lfu_ties})
    clients = {b: net.add_client(b) for b in range(n)}
    delay = overhead = hits = requests = 0
    places: Counter[str] = Counter()
    reached = 0
    for step, broker, m in schedule(n, lam, mu, steps, hot_weight, request_process, seed):
        if progress is not None and step > reached:
            reached = step
            progress(step)
        if step == 0:
            add_server(net, broker, f"m{m}")
            net.run()
            continue
        record = request(net, clients[broker], f"m{m}", float(step))
        net.run()
        its_delay, its_overhead, hit = record.outcome()
        delay += its_delay
        overhead += its_overhead
        hits += hit
        places[record.hit_place()] += 1
        requests += 1
    shared = cast(ClientServerNetwork, net.shared)
    settings = {"policy": policy, "cache_policy": cache_policy, "brokers": n, "slots": slots, "lambda": lam, "mu": mu, "steps": steps,
                "request_process": request_process, "ss_memory": ss_memory, "seed": seed}
    return net, report(settings, len(shared.server_of), (requests, delay, overhead, hits), places, soha_probes, lfu_ties)


def report(settings: dict, messages: int, totals: tuple[int, int, int, int], places: Counter[str], soha_probes: str,
           lfu_ties: str) -> dict:
    """DEF-CS-3's report of a run, both drivers' (`settings`: the run's, in this order): delay, overhead and hit
    per request (`totals`: requests, then the summed delay, overhead and hits), and the hits split by where they
    were answered (`hit_client`, `hit_path`, `hit_off`, `names.HIT_PLACES`: shares of all requests).
    `soha_probes` and `lfu_ties` are reported when they are not the defaults."""
    requests, delay, overhead, hits = totals
    policy = settings["policy"]
    out = {**settings, "cache_policy": settings["cache_policy"] if policy != "server" else None}
    if soha_probes != SOHA_PROBES[0]:
        out["soha_probes"] = soha_probes
    if lfu_ties != LFU_TIES[0]:
        out["lfu_ties"] = lfu_ties
    out.update(messages=messages, requests=requests)
    for name, total in (("delay", delay), ("overhead", overhead), ("hit", hits)):
        out[name] = round(total / requests, 4) if requests else None
    for place in HIT_PLACES:
        out[f"hit_{place}"] = round(places[place] / requests, 4) if requests else None
    return out
