"""Seeded simulator runs pinned by digest: a refactoring of the simulator
must not change one message, one timer or one random draw.

The digests were recorded before the simulator was split into overlay,
transport, accounting and protocol parts and are regression
pins, not claims: a deliberate change of behaviour (a new random draw, a
different message order) changes them, and the change must then be
explained in the commit that updates them.

Covered: `subsum simulate` under every protocol (with swaps and a trace),
fuzz schedules with churn (crashes, leaves, joins, breaks, swaps, chosen
delivery orders) executed under every protocol with every broker checked
against the model, the network benchmark's deterministic parts (the
throughput workload's message counts, the Strawman swap statistics), and
the reconfiguration benchmark's per-protocol totals, crashes included.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from subsum.bench.network import measure_swaps, throughput
from subsum.bench.reconfig import run_protocol
from subsum.conformance.schedules.runs import Run, draw_schedule
from subsum.core.filters import format_filter
from subsum.impl.network.trace import record_json
from subsum.impl.network.workloads.routing import simulate

PROTOCOLS = ("strawman", "timed", "notified", "informed")


def digest(value) -> str:
    text = json.dumps(value, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def state_of(net) -> dict:
    """Everything observable of a finished network, in a canonical form."""
    return {
        "now": net.now,
        "sent": dict(net.ledger.sent), "handled": dict(net.ledger.handled), "dropped": dict(net.ledger.dropped),
        "violations": dict(net.ledger.violations),
        "deliveries": {str(e): sorted(c.items()) for e, c in net.ledger.deliveries.items()},
        "crossings": {str(e): c for e, c in net.ledger.crossings.items()},
        "tables": {str(b): sorted((n, format_filter(f)) for n, f in entries) for b, entries in net.tables().items()},
        "links": net.broker_links(),
        "timers_started": sorted(net.ledger.timers_started.items()),
        "refused": net.refused,
    }


def simulate_digest(protocol: str) -> str:
    run = simulate("random-tree", brokers=20, subscriptions=80, events=60, swaps=6, gap=4.0, seed=7, trace=True,
                         protocol=protocol, defer_timeout=30.0, sub_timeout=40.0)
    return digest([run.swaps, state_of(run.net), [record_json(r) for r in run.net.ledger.trace]])


def fuzz_digest(protocol: str) -> str:
    states = []
    for seed in range(12):
        topology, schedule = draw_schedule(seed, brokers=6, subscriptions=8, churn=0.3, steps=50)
        run = Run(topology, seed, protocol, defer_timeout=20.0, sub_timeout=30.0)
        for op in schedule + [{"op": "quiesce"}]:
            run.apply(op)
        states.append([schedule, state_of(run.net)])
    return digest(states)


def bench_network_digest() -> str:
    burst = throughput(200, 2000, 500, seed=1)
    paced = throughput(200, 2000, 500, seed=1, interval=1.0)
    counts = [{k: v for k, v in r.items() if "seconds" not in k and "per_s" not in k} for r in (burst, paced)]
    stats = measure_swaps(200, 1000, 100, seed=1)
    return digest([counts, dict(stats.control), stats.events, stats.expected, stats.delivered, stats.lost,
                   stats.duplicates, dict(stats.dropped), stats.per_swap])


def reconfig_digest(protocol: str) -> str:
    totals = []
    for kind in ("swap-shared", "swap-disjoint", "concurrent", "crash"):
        t = run_protocol(protocol, "random-tree", 20, 2.0, kind, 4, seed=3, defer_timeout=30.0, sub_timeout=40.0)
        t.pop("seconds")
        totals.append(t)
    return digest(totals)


PINNED = {
    "simulate": {"strawman": "d0b9a3566c420314", "timed": "c214db7631ddb5b9", "notified": "de83574cab195026",
                 "informed": "e9751c4b73fce82c"},
    "fuzz": {"strawman": "8531dd1163e635d7", "timed": "3fce5d0a348dc4f9", "notified": "b64cf9e8e0545dcd",
             "informed": "48689852879a2735"},
    "reconfig": {"strawman": "9f79f13d0f74d5f1", "timed": "76bf2bb2c55baac2", "notified": "dafdde34f7d2865a",
                 "informed": "c581324324b214c7"},
    "bench-network": "af483b5ee96d0309",
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_simulate_is_pinned(protocol):
    assert simulate_digest(protocol) == PINNED["simulate"][protocol]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_fuzz_schedules_are_pinned(protocol):
    assert fuzz_digest(protocol) == PINNED["fuzz"][protocol]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_reconfig_totals_are_pinned(protocol):
    assert reconfig_digest(protocol) == PINNED["reconfig"][protocol]


def test_bench_network_counts_are_pinned():
    assert bench_network_digest() == PINNED["bench-network"]


def all_digests(bench: bool = True) -> dict:
    found = {
        "simulate": {p: simulate_digest(p) for p in PROTOCOLS},
        "fuzz": {p: fuzz_digest(p) for p in PROTOCOLS},
        "reconfig": {p: reconfig_digest(p) for p in PROTOCOLS},
    }
    if bench:
        found["bench-network"] = bench_network_digest()
    return found


def test_runs_do_not_depend_on_the_string_hash_seed():
    """Python salts string hashes per process, so the order of a set of
    filters differs between processes: no set order may decide a message,
    a random draw or a fuzz schedule, or `--seed N` and replay files would
    not reproduce elsewhere. The tests above run under this process's
    random hash seed; this one under hash seed 6, which drew other fuzz
    schedules than hash seed 3 while the fuzzer sorted filters by `repr`.
    (The benchmark's filters have one constraint each: no set order to vary.)"""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONHASHSEED="6")
    done = subprocess.run([sys.executable, __file__, "--no-bench"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {k: v for k, v in PINNED.items() if k != "bench-network"}


if __name__ == "__main__":  # print the digests (to pin them after a deliberate change)
    import sys

    print(json.dumps(all_digests(bench="--no-bench" not in sys.argv), indent=4))
