"""The caches themselves, timed (issue 18; spec/09-caching.md DEF-CACHE-1 … 5):
operations per second of each implementation policy (`subsum.impl.caching`)
beside its list-and-loop reference (`subsum.model.caching`) and, for FIFO
and LRU, beside `cachetools`' FIFOCache and LRUCache, on one seeded trace.

The trace is a broker's view of requests: message ids drawn from a Zipf(α)
popularity over `messages` ids; a cached id is a hit, a missing one an
insert (the response arriving); every tenth operation is also an
unsubscribe of a random id and the clock advances by one per operation.
All three run the same operations, and their evictions are compared (the
reference and the implementation must evict the same messages, cachetools
the same for FIFO and LRU): a disagreement is reported, never hidden.
"""

from __future__ import annotations

import random
import time
from typing import Callable

import numpy as np

from subsum.bench.output import pyplot, save_figure
from subsum.conformance.checks.caching.policies import PEERS
from subsum.core.names import CACHE_POLICIES
from subsum.impl.caching import make_cache
from subsum.model import caching as ref

POLICIES = CACHE_POLICIES


def zipf_ids(messages: int, alpha: float, count: int, rng: random.Random) -> list[str]:
    """`count` message ids m0 … m(messages − 1), id i drawn with probability ∝ 1/(i+1)^α."""
    weights = 1.0 / np.arange(1, messages + 1) ** alpha
    cumulative = np.cumsum(weights / weights.sum())
    draws = np.searchsorted(cumulative, [rng.random() for _ in range(count)], side="right")
    return [f"m{min(int(i), messages - 1)}" for i in draws]


def trace(messages: int, alpha: float, count: int, seed: int) -> list[tuple[str, str, float]]:
    """The operations: (kind, message, time), kind request or unsubscribe."""
    rng = random.Random(f"cache-ops-{seed}")
    ids = zipf_ids(messages, alpha, count, rng)
    ops = []
    for t, m in enumerate(ids):
        ops.append(("request", m, float(t)))
        if t % 10 == 9:
            ops.append(("unsubscribe", f"m{rng.randrange(messages)}", float(t)))
    return ops


def run_impl(policy: str, capacity: int, ops) -> tuple[list[str], int]:
    cache = make_cache(policy, capacity)
    evicted, hits = [], 0
    for kind, m, t in ops:
        if kind == "request":
            if m in cache:
                hits += 1
                cache.hit((m,), t)
            else:
                victim = cache.insert(m, t)
                if victim is not None:
                    evicted.append(victim)
        else:
            cache.unsubscribed((m,), t)
    return evicted, hits


def run_reference(policy: str, capacity: int, ops) -> tuple[list[str], int]:
    cache = ref.empty_cache(policy, capacity)
    evicted, hits = [], 0
    for kind, m, t in ops:
        if kind == "request":
            if m in ref.messages(cache):
                hits += 1
                cache = ref.hit(cache, (m,), t)
            else:
                cache, victim = ref.insert(cache, m, t)
                if victim is not None:
                    evicted.append(victim)
        else:
            cache = ref.unsubscribed(cache, (m,), t)
    return evicted, hits


def run_cachetools(policy: str, capacity: int, ops) -> tuple[list[str], int]:
    cache = PEERS[policy](capacity)
    hits = 0
    for kind, m, _t in ops:
        if kind == "request":
            if m in cache:
                hits += 1
                cache[m]
            else:
                cache[m] = 1
    return cache.evicted, hits


def timed(fn: Callable, *args) -> tuple[float, tuple]:
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def measure(capacities: tuple[int, ...], messages: int, alpha: float, operations: int, reference_operations: int,
            seed: int, log: Callable[[str], None] = lambda _: None) -> tuple[list[dict], list[str]]:
    """One row per (policy, capacity, implementation): ops/s and hit ratio;
    and the disagreements found (evictions that differ)."""
    rows, disagreements = [], []
    ops = trace(messages, alpha, operations, seed)
    short = ops[:reference_operations]
    for capacity in capacities:
        for policy in POLICIES:
            seconds, (evicted, hits) = timed(run_impl, policy, capacity, ops)
            requests = sum(1 for kind, _, _ in ops if kind == "request")
            base = {"policy": policy, "capacity": capacity, "messages": messages, "alpha": alpha}
            rows.append({**base, "implementation": "subsum.impl", "operations": len(ops), "seconds": seconds,
                         "ops_per_s": len(ops) / seconds, "hit_ratio": hits / requests})
            short_evicted, _ = run_impl(policy, capacity, short)
            ref_seconds, (ref_evicted, ref_hits) = timed(run_reference, policy, capacity, short)
            if ref_evicted != short_evicted:
                disagreements.append(f"{policy} K={capacity}: the reference evicts differently from the implementation")
            rows.append({**base, "implementation": "subsum.model (reference)", "operations": len(short), "seconds": ref_seconds,
                         "ops_per_s": len(short) / ref_seconds, "hit_ratio": ref_hits / sum(1 for k, _, _ in short if k == "request")})
            if policy in ("fifo", "lru"):
                peer_seconds, (peer_evicted, peer_hits) = timed(run_cachetools, policy, capacity, ops)  # unsubscribes: no-ops
                if peer_evicted != evicted:
                    disagreements.append(f"{policy} K={capacity}: cachetools evicts differently from the implementation")
                rows.append({**base, "implementation": "cachetools", "operations": len(ops), "seconds": peer_seconds,
                             "ops_per_s": len(ops) / peer_seconds, "hit_ratio": peer_hits / requests})
            log(f"cache ops: {policy} K={capacity}: {len(ops) / seconds:,.0f} ops/s (reference {len(short) / ref_seconds:,.0f})")
    return rows, disagreements


def ratios(rows: list[dict]) -> list[dict]:
    """Per (policy, capacity): the implementation's ops/s over the reference's and over cachetools'."""
    by_key: dict[tuple, dict[str, float]] = {}
    for row in rows:
        by_key.setdefault((row["policy"], row["capacity"]), {})[row["implementation"]] = row["ops_per_s"]
    out = []
    for (policy, capacity), rates in by_key.items():
        impl = rates["subsum.impl"]
        out.append({"policy": policy, "capacity": capacity, "impl_ops_per_s": round(impl),
                    "impl_over_reference": round(impl / rates["subsum.model (reference)"], 1),
                    "impl_over_cachetools": round(impl / rates["cachetools"], 2) if "cachetools" in rates else None})
    return out


def plot(rows: list[dict], path) -> None:
    plt = pyplot()
    capacities = sorted({r["capacity"] for r in rows})
    implementations = ("subsum.impl", "subsum.model (reference)", "cachetools")
    fig, axes = plt.subplots(1, len(capacities), figsize=(5 * len(capacities), 4), squeeze=False)
    for ax, capacity in zip(axes[0], capacities):
        width = 0.27
        for i, name in enumerate(implementations):
            values = []
            for policy in POLICIES:
                match = [r["ops_per_s"] for r in rows if r["capacity"] == capacity and r["policy"] == policy and r["implementation"] == name]
                values.append(match[0] if match else 0.0)
            ax.bar(np.arange(len(POLICIES)) + (i - 1) * width, values, width, label=name)
        ax.set_xticks(np.arange(len(POLICIES)), POLICIES)
        ax.set_yscale("log")
        ax.set_ylabel("cache operations per second")
        ax.set_title(f"K = {capacity} slots")
        ax.legend(fontsize=7)
    fig.suptitle("Cache operations per second: implementation, reference, cachetools (no bar: no peer)")
    save_figure(fig, path)
