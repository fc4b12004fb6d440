"""`subsum bench reconfig`: every reconfiguration protocol side by side on the
same schedules (spec/06-reconfiguration.md, benchmarks/README.md).

For each configuration (tree shape and size, subscription density,
reconfiguration type) and each protocol, the same network is built from the
same seed, populated with the same clients and filters, and put through the
same sequence of reconfigurations, one at a time from a quiescent state.
The overlay's choices (which links, which new links, LSTree's new parents)
come from generators that do not depend on the protocol, so every protocol
sees the same overlay at every step. While each reconfiguration runs, events
are published by timers at fixed offsets after it starts; then the network
runs to quiescence (every message delivered, every timer fired).

Measured per reconfiguration:
- control messages sent: SUB, UNSUB, FLUSH, ACTIVATE;
- deliveries lost: for each event, the clients the model's ideal delivery
  names on the final tree (DEF-NET-4) that never got it;
- duplicate deliveries;
- stale-route event traffic: EVENT messages that crossed a link of the
  final tree toward a side where no client matches the event, and EVENT
  messages that crossed a link that no longer exists.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import Callable

import networkx as nx

from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.impl.network import Network, build, forwarding_protocols, generate
from subsum.impl.network.workloads.routing import populate, random_event
from subsum.model import network as ref
from subsum.model.semantics import matches

PROTOCOLS = forwarding_protocols()  # Strawman first, the baseline
KINDS = ("swap-shared", "swap-disjoint", "crash", "concurrent")
#: when events are published, in simulated ms after a reconfiguration starts
EVENT_OFFSETS = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 2500.0)
GAP = 5.0  # ms between a swap's break and its new link
CSV_FIELDS = ("tree", "brokers", "density", "subscriptions", "kind", "protocol", "reconfigurations", "refused",
              "sub", "unsub", "flush", "activate", "sub_unsub_per_reconf", "control_per_reconf",
              "reduction_sub_unsub", "reduction_control", "events", "ideal_deliveries", "lost", "lost_share", "duplicates",
              "stale_crossings", "broken_link_crossings", "event_crossings", "stale_share", "seconds")


def plan_swap(rng: random.Random, net: Network, kind: str):
    """One swap (old, new) of the current tree: `swap-shared` keeps an old
    endpoint (a, b) -> (a, d); `swap-disjoint` uses two new endpoints when
    each half has another broker; None if the tree has no link."""
    links = net.broker_links()
    if not links:
        return None
    a, b = rng.choice(links)
    if rng.random() < 0.5:
        a, b = b, a
    left, right = sorted(net.overlay.side(a, b)), sorted(net.overlay.side(b, a))
    if kind == "swap-shared":
        others = [d for d in right if d != b]
        return (a, b), (a, rng.choice(others) if others else b)
    c = rng.choice([x for x in left if x != a] or left)
    d = rng.choice([x for x in right if x != b] or right)
    return (a, b), (c, d)


def plan_concurrent(rng: random.Random, net: Network):
    """Two overlapping swaps: the second one is planned on the tree the first
    one leads to, so both new links are valid whatever the order."""
    first = plan_swap(rng, net, "swap-disjoint")
    if first is None:
        return []
    graph = ref.swapped(ref.overlay(net.brokers, net.broker_links()), *first)
    links = sorted(tuple(sorted(e)) for e in graph.edges if frozenset(e) != frozenset(first[1]))
    if not links:
        return [first]
    a, b = rng.choice(links)
    cut = graph.copy()
    cut.remove_edge(a, b)
    left, right = sorted(nx.node_connected_component(cut, a)), sorted(nx.node_connected_component(cut, b))
    return [first, ((a, b), (rng.choice(left), rng.choice(right)))]


def start_swap(net: Network, old: tuple[int, int], new: tuple[int, int]) -> None:
    """`Network.swap` with a gap, without its check that the new link
    reconnects the halves *now*: a concurrent swap's new link is planned on
    the tree the other swap leads to (c on a's side there)."""
    (a, b), (c, d) = old, new
    rid = net.new_rid()
    net.disconnect(a, b, rid=rid, replacement={a: (c, d, False), b: (d, c, False)})
    net.at(net.now + GAP, lambda: net.connect_if_possible(c, d, rid))


def crash_victim(rng: random.Random, net: Network) -> int | None:
    """An inner broker (two or more broker neighbors), so that children re-attach."""
    inner = sorted(b for b, broker in net.brokers.items() if sum(m < 1_000_000 for m in broker.neighbors) >= 2)
    return rng.choice(inner) if inner else None


class RootedForest:
    """The final tree, rooted (each component at its smallest broker), to ask
    per event which side of a link holds a matching client in O(n)."""

    def __init__(self, graph: nx.Graph) -> None:
        self.graph = graph
        self.parent: dict[int, int | None] = {}
        self.order: list[int] = []  # parents before children
        self.root: dict[int, int] = {}
        for root in sorted(min(c) for c in nx.connected_components(graph)):
            self.parent[root] = None
            stack = [root]
            while stack:
                u = stack.pop()
                self.order.append(u)
                self.root[u] = root
                for v in sorted(graph.neighbors(u)):
                    if v not in self.parent:
                        self.parent[v] = u
                        stack.append(v)

    def stale(self, wanted: set[int], crossings: list) -> tuple[int, int]:
        """(crossings u -> v of a final-tree link with no wanted broker on v's
        side, crossings of links gone from the final tree)."""
        below = dict.fromkeys(self.order, 0)
        for u in reversed(self.order):
            below[u] += u in wanted
            if self.parent[u] is not None:
                below[self.parent[u]] += below[u]
        stale = broken = 0
        for u, v in crossings:
            if not self.graph.has_edge(u, v):
                broken += 1
            elif self.parent.get(v) == u:
                stale += below[v] == 0
            else:  # v is u's parent: v's side is the component minus u's subtree
                stale += below[self.root[u]] - below[u] == 0
        return stale, broken


def run_protocol(protocol: str, tree: str, brokers: int, density: float, kind: str, reconfigurations: int, seed: int,
                 defer_timeout: float = 3000.0, sub_timeout: float = 5000.0) -> dict:
    """One protocol through one configuration's schedule; the totals."""
    workload = random.Random(seed)  # clients, filters, publishers, events: the same for every protocol
    overlay = random.Random(seed + 1)  # which links and brokers: the same for every protocol
    net = build(generate(tree, brokers, seed), brokers, seed=seed, protocol=protocol, defer_timeout=defer_timeout,
                sub_timeout=sub_timeout)
    subscriptions = max(1, round(density * brokers))
    populate(net, workload, subscriptions)
    net.run()
    totals = Counter()
    started = time.perf_counter()
    for _ in range(reconfigurations):
        sent_before = Counter(net.ledger.sent)
        if kind in ("swap-shared", "swap-disjoint"):
            plans = [plan_swap(overlay, net, kind)]
        elif kind == "concurrent":
            plans = plan_concurrent(overlay, net)
        else:
            plans = []
        victim = crash_victim(overlay, net) if kind == "crash" else None
        if kind == "crash" and victim is None:
            break
        t0 = net.now
        for plan in plans:
            if plan is not None:
                start_swap(net, *plan)
        if victim is not None:
            net.crash(victim)
        clients = sorted(net.clients)
        published = []
        for offset in EVENT_OFFSETS if clients else ():  # crashes may have taken every client
            client, event = workload.choice(clients), random_event(workload)
            net.at(t0 + offset, lambda c=client, e=event: published.append((net.publish(c, e), c, e)))
        net.run()
        graph, access = ref.overlay(net.brokers, net.broker_links()), dict(net.clients)
        filters = {c: frozenset(fs) for c, fs in net.client_filters.items()}
        forest = RootedForest(graph)
        for eid, client, event in published:
            want = ref.ideal_delivery(graph, access, filters, client, event)
            got = net.ledger.deliveries[eid]
            totals["events"] += 1
            totals["ideal_deliveries"] += len(want)
            totals["lost"] += len(want - set(got))
            totals["duplicates"] += sum(n - 1 for n in got.values() if n > 1)
            wanted = {access[c] for c, fs in filters.items() if any(matches(f, event) for f in fs)}
            stale, broken = forest.stale(wanted, net.ledger.crossings[eid])
            totals["stale_crossings"] += stale
            totals["broken_link_crossings"] += broken
            totals["event_crossings"] += len(net.ledger.crossings[eid])
        sent = Counter(net.ledger.sent) - sent_before
        for k in ("SUB", "UNSUB", "FLUSH", "ACTIVATE"):
            totals[k.lower()] += sent[k]
        totals["reconfigurations"] += 1
    totals["refused"] = net.refused
    totals["final_links"] = net.broker_links()
    totals["subscriptions"] = subscriptions
    totals["seconds"] = time.perf_counter() - started
    return dict(totals)


def grid(quick: bool) -> list[tuple[str, int, float, str]]:
    sizes = (20, 100) if quick else (20, 100, 500)
    densities = (0.5, 4.0) if quick else (0.5, 2.0, 8.0)
    return [(tree, n, d, kind) for tree in ("random-tree", "balanced") for n in sizes for d in densities for kind in KINDS]


def reconfigurations_for(brokers: int, quick: bool) -> int:
    if quick:
        return 5
    return {20: 20, 100: 20, 500: 10}.get(brokers, 10)


def run(out_dir, *, quick: bool = False, seed: int = 1, protocols=PROTOCOLS, configs=None, defer_timeout: float = 3000.0,
        sub_timeout: float = 5000.0, log: Callable[[str], None] = print) -> dict:
    """The whole benchmark; writes reconfig.csv, control.png, lost.png,
    stale.png and summary.json into out_dir; returns the summary. `configs`
    (tree, brokers, density, kind) replaces the grid."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows = []
    configs = configs or grid(quick)
    for i, (tree, n, density, kind) in enumerate(configs, 1):
        k = reconfigurations_for(n, quick)
        base = None
        for protocol in protocols:
            t = run_protocol(protocol, tree, n, density, kind, k, seed, defer_timeout, sub_timeout)
            r = max(1, t.get("reconfigurations", 0))
            row = {"tree": tree, "brokers": n, "density": density, "subscriptions": t["subscriptions"], "kind": kind,
                   "protocol": protocol, "reconfigurations": t.get("reconfigurations", 0), "refused": t["refused"],
                   "sub": t.get("sub", 0), "unsub": t.get("unsub", 0), "flush": t.get("flush", 0), "activate": t.get("activate", 0),
                   "events": t.get("events", 0), "ideal_deliveries": t.get("ideal_deliveries", 0), "lost": t.get("lost", 0),
                   "duplicates": t.get("duplicates", 0), "stale_crossings": t.get("stale_crossings", 0),
                   "broken_link_crossings": t.get("broken_link_crossings", 0), "event_crossings": t.get("event_crossings", 0),
                   "seconds": round(t["seconds"], 2)}
            row["sub_unsub_per_reconf"] = round((row["sub"] + row["unsub"]) / r, 1)
            row["control_per_reconf"] = round((row["sub"] + row["unsub"] + row["flush"] + row["activate"]) / r, 1)
            row["lost_share"] = round(row["lost"] / max(1, row["ideal_deliveries"]), 4)
            row["stale_share"] = round(row["stale_crossings"] / max(1, row["event_crossings"]), 4)
            if protocol == "strawman":
                base = row
            if base is not None and base["sub_unsub_per_reconf"]:
                row["reduction_sub_unsub"] = round(1 - row["sub_unsub_per_reconf"] / base["sub_unsub_per_reconf"], 3)
                row["reduction_control"] = round(1 - row["control_per_reconf"] / base["control_per_reconf"], 3)
            else:
                row["reduction_sub_unsub"] = row["reduction_control"] = ""
            rows.append(row)
        line = ", ".join(f"{r['protocol']} {r['sub_unsub_per_reconf']:.0f}" for r in rows[-len(protocols):])
        log(f"[{i}/{len(configs)}] {tree} n={n} density={density} {kind}: SUB+UNSUB per reconfiguration {line}")
    write_csv(out / "reconfig.csv", rows, CSV_FIELDS)
    plots = _plots(rows, out, protocols)
    summary = {"seconds": round(time.perf_counter() - started, 1), "quick": quick, "seed": seed,
               "event_offsets_ms": list(EVENT_OFFSETS), "gap_ms": GAP, "defer_timeout_ms": defer_timeout, "sub_timeout_ms": sub_timeout,
               "by_protocol": aggregate(rows, protocols), "rows": len(rows),
               "files": [str(out / "reconfig.csv"), *map(str, plots), str(out / "summary.json")]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(f"wrote {', '.join(summary['files'])} in {summary['seconds']}s")
    return summary


def aggregate(rows: list[dict], protocols=PROTOCOLS) -> dict:
    """Per protocol: mean and best reduction against Strawman (SUB+UNSUB, and
    all control messages), per reconfiguration type too; lost and stale shares."""
    result = {}
    for protocol in protocols:
        mine = [r for r in rows if r["protocol"] == protocol and r["reduction_sub_unsub"] != ""]
        if not mine:
            continue
        entry = {
            "mean_reduction_sub_unsub": round(sum(r["reduction_sub_unsub"] for r in mine) / len(mine), 3),
            "max_reduction_sub_unsub": max(r["reduction_sub_unsub"] for r in mine),
            "mean_reduction_control": round(sum(r["reduction_control"] for r in mine) / len(mine), 3),
            "max_reduction_control": max(r["reduction_control"] for r in mine),
            "lost_share": round(sum(r["lost"] for r in mine) / max(1, sum(r["ideal_deliveries"] for r in mine)), 4),
            "stale_share": round(sum(r["stale_crossings"] for r in mine) / max(1, sum(r["event_crossings"] for r in mine)), 4),
            "duplicates": sum(r["duplicates"] for r in mine),
            "by_kind": {},
        }
        for kind in KINDS:
            sub = [r for r in mine if r["kind"] == kind]
            if sub:
                entry["by_kind"][kind] = {
                    "mean_reduction_sub_unsub": round(sum(r["reduction_sub_unsub"] for r in sub) / len(sub), 3),
                    "mean_reduction_control": round(sum(r["reduction_control"] for r in sub) / len(sub), 3),
                    "lost_share": round(sum(r["lost"] for r in sub) / max(1, sum(r["ideal_deliveries"] for r in sub)), 4)}
        result[protocol] = entry
    return result


def markdown_table(summary: dict) -> str:
    lines = ["| protocol | SUB+UNSUB reduction, mean (max) | all control incl. FLUSH/ACTIVATE, mean (max) | deliveries lost | stale EVENT crossings |",
             "|---|---:|---:|---:|---:|"]
    for protocol, e in summary["by_protocol"].items():
        lines.append(f"| {protocol} | {100 * e['mean_reduction_sub_unsub']:.0f}% ({100 * e['max_reduction_sub_unsub']:.0f}%) | "
                     f"{100 * e['mean_reduction_control']:.0f}% ({100 * e['max_reduction_control']:.0f}%) | "
                     f"{100 * e['lost_share']:.2f}% | {100 * e['stale_share']:.2f}% |")
    lines += ["", "| protocol | " + " | ".join(KINDS) + " |", "|---|" + "---:|" * len(KINDS)]
    for protocol, e in summary["by_protocol"].items():
        cells = [f"{100 * e['by_kind'][k]['mean_reduction_sub_unsub']:.0f}%" if k in e["by_kind"] else "" for k in KINDS]
        lines.append(f"| {protocol} (SUB+UNSUB reduction) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _plots(rows: list[dict], out: Path, protocols) -> list[Path]:
    plt = pyplot()
    files = []
    colours = dict(zip(PROTOCOLS, ("tab:grey", "tab:blue", "tab:orange", "tab:green")))
    for metric, label, name in (("control_per_reconf", "control messages per reconfiguration (SUB+UNSUB+FLUSH+ACTIVATE)", "control.png"),
                                ("lost_share", "share of ideal deliveries lost", "lost.png"),
                                ("stale_share", "share of EVENT crossings over stale routes", "stale.png")):
        fig, grid_axes = plt.subplots(2, 2, figsize=(16, 9))
        axes = list(grid_axes.flat)
        for ax, kind in zip(axes, KINDS):
            sub = [r for r in rows if r["kind"] == kind]
            configs = sorted({(r["tree"], r["brokers"], r["density"]) for r in sub})
            width = 0.8 / len(protocols)
            for j, protocol in enumerate(protocols):
                values = [next((r[metric] for r in sub if (r["tree"], r["brokers"], r["density"]) == cfg and r["protocol"] == protocol), 0)
                          for cfg in configs]
                ax.bar([i + j * width for i in range(len(configs))], values, width, label=protocol, color=colours.get(protocol))
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(configs))])
            ax.set_xticklabels([f"{'random' if t == 'random-tree' else 'balanced'} {n}, {d}/broker" for t, n, d in configs],
                               fontsize=7, rotation=55, ha="right")
            ax.set_title(kind)
            ax.set_ylabel({"control_per_reconf": "messages per reconfiguration", "lost_share": "share lost",
                           "stale_share": "share of crossings"}[metric], fontsize=8)
            if metric == "control_per_reconf":
                ax.set_yscale("log")
        axes[0].legend(fontsize=8)
        fig.suptitle(f"{label}; bars: tree, brokers, subscriptions per broker")
        files.append(save_figure(fig, out / name))
    return files
