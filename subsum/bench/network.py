"""`subsum bench network` (benchmarks/README.md): simulator throughput
beside a bare heapq loop, Strawman link swaps, fuzz throughput. The
workloads are `subsum.impl.network.workloads.routing`'s; lost events are counted
against the model's ideal delivery at the moment of publication (DEF-NET-4).
"""

from __future__ import annotations

import heapq
import json
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Callable

import attrs

from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.conformance.schedules.fuzz import Campaign, Drawing, fuzz
from subsum.impl.network import build
from subsum.impl.network.topology import overlay_links
from subsum.impl.network.workloads.routing import populate, random_event
from subsum.model import network as ref


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
    per_swap: list = attrs.field(factory=list)  # (SUB, UNSUB, lost) of each swap


def measure_swaps(brokers: int = 200, subscriptions: int = 1000, swaps: int = 1000, events_per_swap: int = 5,
                  gap: float = 5.0, seed: int = 1, kind: str = "random-tree", delay=(1.0, 10.0)) -> SwapStats:
    """`swaps` link swaps, one at a time on a quiescent network: break a
    random link, add a random link reconnecting the halves after `gap`
    (simulated ms), publish `events_per_swap` events from random clients
    while the reconfiguration runs, then run to quiescence. Counts the
    SUB/UNSUB the swap caused and the events lost against the ideal
    delivery at publication (the tree before the break)."""
    rng = random.Random(seed)
    n, links = overlay_links(kind, brokers, seed)
    net = build(links, n, seed=seed, delay=delay)
    clients = populate(net, rng, subscriptions)
    net.run()
    stats = SwapStats()
    started = time.perf_counter()
    for _ in range(swaps):
        a, b = rng.choice(net.broker_links())
        graph = ref.overlay(net.brokers, net.broker_links())
        access, filters = dict(net.clients), {c: frozenset(fs) for c, fs in net.client_filters.items()}
        before = Counter(net.ledger.sent)
        dropped_before = Counter(net.ledger.dropped)
        net.disconnect(a, b)
        left, right = sorted(net.overlay.component(a)), sorted(net.overlay.component(b))
        c, d = rng.choice(left), rng.choice(right)
        net.at(net.now + gap, lambda c=c, d=d: net.connect(c, d))
        published = []
        for k in range(events_per_swap):
            net.run(max_steps=rng.randrange(1, 50))  # the reconfiguration is under way
            client = rng.choice(clients)
            event = random_event(rng)
            published.append((net.publish(client, event), ref.ideal_delivery(graph, access, filters, client, event)))
        net.run()
        sent = Counter(net.ledger.sent) - before
        stats.swaps += 1
        stats.control.update({k: sent[k] for k in ("SUB", "UNSUB")})
        stats.dropped.update(Counter(net.ledger.dropped) - dropped_before)
        lost_before = stats.lost
        for eid, want in published:
            got = net.ledger.deliveries[eid]
            stats.events += 1
            stats.expected += len(want)
            stats.delivered += len(set(got) & want)
            stats.lost += len(want - set(got))
            stats.duplicates += sum(v - 1 for v in got.values() if v > 1)
        stats.per_swap.append((sent["SUB"], sent["UNSUB"], stats.lost - lost_before))
    stats.seconds = time.perf_counter() - started
    return stats


def throughput(brokers: int = 1000, subscriptions: int = 10_000, events: int = 20_000, seed: int = 1,
               interval: float | None = None) -> dict:
    """Handled messages per second on a quiescent random tree: subscription
    propagation, then event routing, timed apart. With `interval` None all
    events are published at once (a burst: every event in flight together);
    otherwise one every `interval` simulated ms, by timers (paced)."""
    rng = random.Random(seed)
    n, links = overlay_links("random-tree", brokers, seed)
    net = build(links, n, seed=seed, record_crossings=False)
    t0 = time.perf_counter()
    clients = populate(net, rng, subscriptions)
    net.run()
    t1 = time.perf_counter()
    sub_messages = sum(net.ledger.handled.values())
    for i in range(events):
        client, event = rng.choice(clients), random_event(rng)
        if interval is None:
            net.publish(client, event)
        else:
            net.at(net.now + i * interval, lambda c=client, e=event: net.publish(c, e))
    net.run()
    t2 = time.perf_counter()
    event_messages = sum(net.ledger.handled.values()) - sub_messages
    return {"brokers": n, "subscriptions": subscriptions, "events": events, "interval_ms": interval,
            "subscription_messages": sub_messages, "subscription_seconds": round(t1 - t0, 3),
            "subscription_msgs_per_s": round(sub_messages / (t1 - t0)),
            "event_messages": event_messages, "event_seconds": round(t2 - t1, 3),
            "event_msgs_per_s": round(event_messages / (t2 - t1)),
            "deliveries": sum(sum(c.values()) for c in net.ledger.deliveries.values())}


def heapq_baseline(messages: int, in_flight: int = 1000, seed: int = 1, delay=(1.0, 10.0)) -> float:
    """The floor any discrete-event simulator in Python pays: a bare heapq
    loop that pops the earliest of `in_flight` pending items and pushes a
    successor at a random delay, `messages` times, with the simulator's item
    shape. Returns items per second."""
    rng = random.Random(seed)
    rnd, low, span = rng.random, delay[0], delay[1] - delay[0]
    heap = [(low + span * rnd(), i, (0, 1), None) for i in range(in_flight)]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    started = time.perf_counter()
    for i in range(in_flight, in_flight + messages):
        t, _, link, _ = pop(heap)
        push(heap, (t + low + span * rnd(), i, link, None))
    return messages / (time.perf_counter() - started)


# --- `subsum bench network` ----------------------------------------------------------------

CSV_FIELDS = ("section", "name", "brokers", "subscriptions", "work", "work_unit", "seconds", "rate", "rate_unit",
              "ratio_to_baseline")


@attrs.define
class Table:
    """network.csv: one row per measurement, its work over its time as a rate."""

    rows: list[dict] = attrs.field(factory=list)

    def add(self, section, name, b, s, work, work_unit, seconds, rate_unit, baseline=None) -> float:
        """Append a row; returns its rate (work / seconds; 0 without time), against `baseline` if given."""
        rate = work / seconds if seconds else 0.0
        self.rows.append({"section": section, "name": name, "brokers": b, "subscriptions": s, "work": work,
                          "work_unit": work_unit, "seconds": round(seconds, 3), "rate": float(f"{rate:.6g}"),
                          "rate_unit": rate_unit, "ratio_to_baseline": round(rate / baseline, 3) if baseline else ""})
        return rate


def measure_throughput(table: Table, brokers: int, subscriptions: int, events: int, seed: int,
                       log: Callable[[str], None]) -> dict:
    """Handled messages per second, burst and paced, beside the bare heapq loop: the summary's "throughput"."""
    log(f"throughput: {brokers} brokers, {subscriptions} subscriptions, {events} events (burst, then paced 1 ms apart)")
    burst = throughput(brokers, subscriptions, events, seed)
    paced = throughput(brokers, subscriptions, events, seed, interval=1.0)
    base_messages = burst["event_messages"] or 1
    baseline = heapq_baseline(min(base_messages, 3_000_000), seed=seed)
    log(f"  heapq baseline {baseline:,.0f}/s; subscriptions {burst['subscription_msgs_per_s']:,}/s; "
        f"events burst {burst['event_msgs_per_s']:,}/s, paced {paced['event_msgs_per_s']:,}/s")
    table.add("throughput", "heapq baseline", "", "", min(base_messages, 3_000_000), "push+pop",
              min(base_messages, 3_000_000) / baseline, "messages/s", baseline)
    table.add("throughput", "subscription propagation", brokers, subscriptions, burst["subscription_messages"], "messages",
              burst["subscription_seconds"], "messages/s", baseline)
    table.add("throughput", "events, burst", brokers, subscriptions, burst["event_messages"], "messages",
              burst["event_seconds"], "messages/s", baseline)
    table.add("throughput", "events, paced 1 ms", brokers, subscriptions, paced["event_messages"], "messages",
              paced["event_seconds"], "messages/s", baseline)
    return {"heapq_baseline_per_s": round(baseline), "burst": burst, "paced": paced,
            "target_per_s": 100_000, "target_met": max(burst["event_msgs_per_s"], paced["event_msgs_per_s"]) >= 100_000}


def measure_swap_costs(table: Table, swap_brokers: int, swap_subscriptions: int, swaps: int, seed: int,
                       log: Callable[[str], None]) -> SwapStats:
    """Strawman link swaps: SUB/UNSUB per swap, deliveries lost and duplicated."""
    log(f"swaps: {swaps} Strawman link swaps on a {swap_brokers}-broker random tree, {swap_subscriptions} subscriptions")
    stats = measure_swaps(swap_brokers, swap_subscriptions, swaps, seed=seed)
    log(f"  {stats.control['SUB'] / stats.swaps:.1f} SUB + {stats.control['UNSUB'] / stats.swaps:.1f} UNSUB per swap; "
        f"lost {stats.lost}/{stats.expected} deliveries; {stats.duplicates} duplicates ({stats.seconds:.1f}s)")
    table.add("swaps", "SUB per swap", swap_brokers, swap_subscriptions, stats.control["SUB"], "messages", stats.swaps, "per swap")
    table.add("swaps", "UNSUB per swap", swap_brokers, swap_subscriptions, stats.control["UNSUB"], "messages", stats.swaps,
              "per swap")
    table.add("swaps", "deliveries lost", swap_brokers, swap_subscriptions, stats.lost, "deliveries", stats.expected or 1,
              "share of ideal")
    table.add("swaps", "duplicate deliveries", swap_brokers, swap_subscriptions, stats.duplicates, "deliveries",
              stats.expected or 1, "share of ideal")
    return stats


def swap_summary(stats: SwapStats) -> dict:
    """The summary's "swaps": per-swap means and the totals."""
    return {"swaps": stats.swaps, "sub_per_swap": round(stats.control["SUB"] / stats.swaps, 1),
            "unsub_per_swap": round(stats.control["UNSUB"] / stats.swaps, 1), "events": stats.events,
            "ideal_deliveries": stats.expected, "lost": stats.lost, "duplicates": stats.duplicates,
            "dropped_in_flight": dict(stats.dropped), "seconds": round(stats.seconds, 1)}


def measure_fuzz(table: Table, fuzz_budget: float, seed: int, log: Callable[[str], None]) -> list[dict]:
    """`subsum fuzz reconfig` for `fuzz_budget` seconds at 6 and at 20 brokers: schedules per minute, violations."""
    fuzz_rates = []
    with tempfile.TemporaryDirectory() as replays:
        for label, b, s in (("fuzz, 6 brokers", 6, 8), ("fuzz, 20 brokers", 20, 40)):
            result = fuzz(Drawing(brokers=b, subscriptions=s, seed=seed), Campaign(budget=fuzz_budget, replay_dir=Path(replays)))
            rate = table.add("fuzz", label, b, s, result.schedules, "schedules", result.seconds / 60, "schedules/min")
            fuzz_rates.append({"name": label, "schedules_per_min": round(rate), "violations": len(result.violations)})
            log(f"  {label}: {rate:,.0f} schedules/min, {len(result.violations)} violations")
    return fuzz_rates


def run(out_dir, *, quick: bool = False, brokers: int = 1000, subscriptions: int = 10_000, events: int = 5000,
        swap_brokers: int = 200, swap_subscriptions: int = 1000, swaps: int = 1000, fuzz_budget: float = 30.0,
        seed: int = 1, log: Callable[[str], None] = print) -> dict:
    """The whole network benchmark (benchmarks/README.md): simulator
    throughput beside a bare heapq loop, Strawman link swaps, fuzz
    throughput. Writes network.csv, throughput.png, swaps.png and
    summary.json into out_dir; returns the summary dict."""
    if quick:
        brokers, subscriptions, events = min(brokers, 200), min(subscriptions, 2000), min(events, 500)
        swaps, fuzz_budget = min(swaps, 100), min(fuzz_budget, 5.0)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    table = Table()
    measured = measure_throughput(table, brokers, subscriptions, events, seed, log)
    stats = measure_swap_costs(table, swap_brokers, swap_subscriptions, swaps, seed, log)
    fuzz_rates = measure_fuzz(table, fuzz_budget, seed, log)
    write_csv(out / "network.csv", table.rows, CSV_FIELDS)
    plots = _plots(table.rows, stats, out)
    summary = {
        "seconds": round(time.perf_counter() - started, 1),
        "parameters": {"brokers": brokers, "subscriptions": subscriptions, "events": events, "swap_brokers": swap_brokers,
                       "swap_subscriptions": swap_subscriptions, "swaps": swaps, "fuzz_budget": fuzz_budget,
                       "seed": seed, "quick": quick},
        "throughput": measured,
        "swaps": swap_summary(stats),
        "fuzz": fuzz_rates,
        "files": [str(out / "network.csv"), *map(str, plots), str(out / "summary.json")],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(f"wrote {', '.join(summary['files'])} in {summary['seconds']}s")
    return summary


def _plots(rows: list[dict], stats: SwapStats, out) -> list:
    plt = pyplot()
    tput = [r for r in rows if r["section"] == "throughput"]
    fig, ax = plt.subplots(figsize=(7, 4))
    bars = ax.bar([r["name"] for r in tput], [r["rate"] for r in tput],
                  color=["grey"] + ["tab:blue"] * (len(tput) - 1))
    ax.axhline(100_000, color="tab:red", linestyle="--", label="target 100,000/s")
    for bar, r in zip(bars, tput):
        ax.annotate(f"{r['rate']:,.0f}\n×{r['ratio_to_baseline']}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("handled messages per second")
    ax.set_title(f"simulator throughput, {tput[1]['brokers']} brokers, {tput[1]['subscriptions']} subscriptions")
    ax.legend()
    plt.setp(ax.get_xticklabels(), rotation=12)
    first = save_figure(fig, out / "throughput.png", dpi=120)

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    control = [s + u for s, u, _ in stats.per_swap]
    left.hist(control, bins=40, color="tab:blue")
    left.set_xlabel("SUB + UNSUB messages caused by one swap")
    left.set_ylabel("swaps")
    left.set_title(f"Strawman, {stats.swaps} swaps: mean {sum(control) / max(1, len(control)):.0f}")
    lost = [x for _, _, x in stats.per_swap]
    right.hist(lost, bins=40, color="tab:orange")
    right.set_xlabel("deliveries lost during one swap")
    right.set_title(f"lost {stats.lost} of {stats.expected} ideal deliveries")
    second = save_figure(fig, out / "swaps.png", dpi=120)
    return [first, second]


def markdown_table(summary: dict) -> str:
    """The benchmark's figures as a Markdown table."""
    t, w = summary["throughput"], summary["swaps"]
    base = t["heapq_baseline_per_s"]
    lines = ["| measurement | figure | vs heapq baseline |", "|---|---:|---:|",
             f"| bare heapq push+pop loop | {base:,} /s | 1.00 |"]
    for label, key, part in (("subscription propagation", "subscription_msgs_per_s", "burst"),
                             ("event routing, all events at once", "event_msgs_per_s", "burst"),
                             ("event routing, one event per ms", "event_msgs_per_s", "paced")):
        rate = t[part][key]
        lines.append(f"| {label} ({t['burst']['brokers']} brokers, {t['burst']['subscriptions']} subs) | {rate:,} msgs/s | {rate / base:.3f} |")
    lines += [f"| SUB per link swap ({w['swaps']} swaps) | {w['sub_per_swap']} | |",
              f"| UNSUB per link swap | {w['unsub_per_swap']} | |",
              f"| deliveries lost during swaps | {w['lost']:,} of {w['ideal_deliveries']:,} ({100 * w['lost'] / max(1, w['ideal_deliveries']):.2f}%) | |",
              f"| duplicate deliveries | {w['duplicates']} | |"]
    lines += [f"| {f['name']} | {f['schedules_per_min']:,} schedules/min | |" for f in summary["fuzz"]]
    return "\n".join(lines)
