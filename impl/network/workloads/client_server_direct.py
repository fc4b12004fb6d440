"""Seed 003's client-server driver served directly (spec/10-client-server.md
DEF-CS-2 … 4): the same schedule as `client_server.run_client_server`, the
same caches (`subsum.impl.caching`), but each request is served by walking
the tree instead of passing REQUEST and RESPONSE messages through the
simulator.

At the thesis's magnitude a run is some 3×10^5 requests (Poisson(λ·N·M(t))
a step, DEF-CS-4), and `subsum bench client-server` sweeps hundreds of
runs; this driver serves a request several times faster than the
simulator. Its reports equal the simulator's, run for run, request for
request (tests/test_client_server.py; CLM-CS-5 ties the simulator to the
reference, `subsum.model.client_server.serve`, whose order of cache
updates this follows: first every responder's hit in the answering order,
then each response's en-route insertions, in the same order).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from subsum.core.names import LFU_TIES, SOHA_PROBES
from subsum.impl.caching import make_cache
from subsum.impl.network.protocols.client_server import CACHE_POLICY, POLICY, SLOTS, check_ss_memory, interested_brokers
from subsum.impl.network.topology import overlay_links
from subsum.impl.network.workloads.client_server import LAMBDA, MU, REQUEST_PROCESS, SS_MEMORY, STEPS, report, schedule


class Tree:
    """A broker tree rooted at broker 0: each broker's parent and depth, and
    its neighbors in id order; paths between brokers, remembered."""

    def __init__(self, n: int, links: list[tuple[int, int]]) -> None:
        self.neighbors: list[list[int]] = [[] for _ in range(n)]
        for a, b in links:
            self.neighbors[a].append(b)
            self.neighbors[b].append(a)
        for around in self.neighbors:
            around.sort()
        self.parent = [-1] * n
        self.depth = [0] * n
        seen, frontier = {0}, [0]
        while frontier:
            b = frontier.pop()
            for q in self.neighbors[b]:
                if q not in seen:
                    seen.add(q)
                    self.parent[q], self.depth[q] = b, self.depth[b] + 1
                    frontier.append(q)
        self._paths: dict[tuple[int, int], tuple[int, ...]] = {}

    def path(self, a: int, b: int) -> tuple[int, ...]:
        """The tree path from a to b, both included (DEF-CS-1's AT path when b serves the message)."""
        key = (a, b)
        found = self._paths.get(key)
        if found is None:
            up, down = [a], [b]
            while up[-1] != down[-1]:
                if self.depth[up[-1]] >= self.depth[down[-1]]:
                    up.append(self.parent[up[-1]])
                else:
                    down.append(self.parent[down[-1]])
            found = self._paths[key] = (*up, *reversed(down[:-1]))
        return found


def serve(tree: Tree, caches: list, interested: dict[int, dict[int, float]], policy: str, broker: int, m: int, server: int,
          now: float, ss_memory: int | None = SS_MEMORY, soha_probes: str = SOHA_PROBES[0]) -> tuple[int, int, str]:
    """DEF-CS-2: serve one request from `broker` for message m (its server
    at broker `server`); update the caches and SS's table (m -> broker ->
    step of its latest request); return delay, overhead (DEF-CS-3) and where
    the hit was answered (`names.HIT_PLACES`; "" for no hit)."""
    path = tree.path(broker, server)
    last = len(path) - 1
    asking = interested.setdefault(m, {})
    if policy == "server":
        asking[broker] = now
        return last, 0, ""
    name = f"m{m}"
    i = next((j for j in range(last) if name in caches[path[j]]), last)
    # a response: (hops, not from the path, position, responder, route from responder to the client's broker)
    responses = [(i, False, i, path[i], path[i::-1])]
    if policy == "soha":
        on_path = set(path)
        for j in range(i if soha_probes == "path" else min(i, 1)):
            for q in tree.neighbors[path[j]]:
                if q not in on_path and name in caches[q]:
                    responses.append((j + 1, True, j, q, (q, *path[j::-1])))
    elif policy == "ss" and i > 0:
        on_path = set(path)
        for q in sorted(interested_brokers(asking, now, ss_memory) - on_path):
            if name in caches[q]:
                route = tree.path(q, broker)
                responses.append((len(route) - 1, True, last + 1, q, route))
    responses.sort(key=lambda r: r[:4])
    for r in responses:
        if r[3] != server:
            caches[r[3]].hit((name,), now)
    for r in responses:
        for relay in r[4][1:]:
            if relay != server:
                caches[relay].insert(name, now)
    asking[broker] = now
    first = responses[0]
    place = "off" if first[1] else "" if first[3] == server else "client" if first[0] == 0 else "path"
    return first[0], sum(r[0] for r in responses[1:]), place


def run_client_server_direct(policy: str = POLICY, cache_policy: str = CACHE_POLICY, brokers: int = 10, slots: int = SLOTS,
                             lam: float = LAMBDA, mu: float = MU, steps: int = STEPS, hot_weight: float = 10.0,
                             topology: str = "random-tree", seed: int = 0, request_process: str = REQUEST_PROCESS,
                             ss_memory: int | None = SS_MEMORY, soha_probes: str = SOHA_PROBES[0], lfu_ties: str = LFU_TIES[0],
                             progress: Callable[[int], None] | None = None) -> dict:
    """The driver of `client_server.run_client_server`, served directly;
    returns the same report."""
    check_ss_memory(ss_memory)
    n, links = overlay_links(topology, brokers, seed)
    tree = Tree(n, links)
    caches = [make_cache(cache_policy, slots, lfu_ties) for _ in range(n)]
    interested: dict[int, dict[int, float]] = {}
    server_of: list[int] = []
    delay = overhead = hits = requests = reached = 0
    places: Counter[str] = Counter()
    for step, broker, m in schedule(n, lam, mu, steps, hot_weight, request_process, seed):
        if progress is not None and step > reached:
            reached = step
            progress(step)
        if step == 0:
            server_of.append(broker)
            continue
        d, o, place = serve(tree, caches, interested, policy, broker, m, server_of[m], float(step), ss_memory, soha_probes)
        delay += d
        overhead += o
        hits += place != ""
        places[place] += 1
        requests += 1
    settings = {"policy": policy, "cache_policy": cache_policy, "brokers": n, "slots": slots, "lambda": lam, "mu": mu, "steps": steps,
                "request_process": request_process, "ss_memory": ss_memory, "seed": seed}
    return report(settings, len(server_of), (requests, delay, overhead, hits), places, soha_probes, lfu_ties)
