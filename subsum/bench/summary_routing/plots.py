"""The summary routing benchmark's figures (`summary_routing`): one PNG
per figure of seed 000 ch. 5 (Figs 5-2 to 5-5), ours with the thesis's
numbers marked."""

from __future__ import annotations

from pathlib import Path

from subsum.bench.output import pyplot, save_figure
from subsum.bench.summary_routing.report import CWIX, on_topology

MAIN_P = 0.5  # the covering probability of Fig. 5-2's left panel (the thesis does not say which it plotted)
#: Fig. 5-2's left panel from the propagation model, at MAIN_P: (column, label, line style).
BANDWIDTH_LINES = (("baseline_formula_bytes", "baseline (i), formula (N−1)·h̄·N·σ·50", "s-"),
                   ("baseline_walked_bytes", "baseline (i), walked shortest paths", "x"),
                   ("siena_bytes", "Siena, the thesis's covering model, ×50 B", "^:"),
                   ("summary_wire_bytes", "summaries, measured binary (wire.to_bytes)", "o--"),
                   ("summary_formula_bytes", "summaries, DEF-SUM-15 formula", "o-"))
#: Fig. 5-5's left panel, by covering probability.
STORAGE_LINES = (("baseline_bytes", "baseline (i): every broker stores every subscription", "s-"),
                 ("siena_bytes", "Siena routing tables ×50 B", "^-"),
                 ("summary_wire_bytes", "summaries (histories), measured binary", "o--"),
                 ("summary_formula_bytes", "summaries (histories), DEF-SUM-15 formula", "o-"),
                 ("local_subscription_bytes", "owners' own subscriptions ×50 B (not added)", "k:"))


def _finish(axis, xlabel: str, ylabel: str, title: str, log_y: bool = True, **legend) -> None:
    if log_y:
        axis.set_yscale("log")
    axis.set_xlabel(xlabel)
    axis.set_ylabel(ylabel)
    axis.set_title(title, fontsize=10)
    axis.grid(True, which="both", alpha=0.25)
    axis.legend(fontsize=7, **legend)


def _with_interval(axis, x: list, rows: list[dict], field: str, style: str, label: str | None, **look) -> None:
    """A line of means over seeds with their 95% intervals as error bars (`{field}_ci95`)."""
    if rows:
        axis.errorbar(x, [r[field] for r in rows], yerr=[r.get(f"{field}_ci95", 0.0) for r in rows], fmt=style, capsize=2,
                      label=label, **look)


def _lines(axis, x: str, rows: list[dict], lines: tuple[tuple[str, str, str], ...]) -> None:
    """One line per (column, label, style) of `lines`, against the rows' `x` column."""
    for column, label, style in lines:
        axis.plot([r[x] for r in rows], [r[column] for r in rows], style, label=label)


def _colour(plt, p: float):
    return plt.cm.viridis(0.1 + 0.8 * p)


def plot_bandwidth(plt, results, out: Path) -> Path:
    """Fig. 5-2: bytes per period against σ (CWIX, p = 0.5); ratios for every p."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.6))
    rows = [r for r in on_topology(results.propagation, CWIX) if r["p"] == MAIN_P]
    _lines(ax, "sigma", rows, BANDWIDTH_LINES)
    simulated = [r for r in on_topology(results.simulated, CWIX) if r["p"] == MAIN_P]
    for field, label, style in (("siena_sim_bytes", "Siena on the simulator (SienaBroker)", "^-"),
                                ("baseline_sim_bytes", "baseline (i) on the simulator (BroadcastBroker), links", "s--")):
        _with_interval(ax, [r["sigma"] for r in simulated], simulated, field, style, label)
    ax.set_xscale("log")
    _finish(ax, "σ new subscriptions per broker per period", "bytes per period (all brokers)", f"Fig. 5-2: propagation bandwidth, CWIX, p = {MAIN_P}")
    for p in sorted({r["p"] for r in results.propagation}):
        at = [r for r in on_topology(results.propagation, CWIX) if r["p"] == p]
        bx.plot([r["sigma"] for r in at], [r["siena_over_summary"] for r in at], "^-", color=_colour(plt, p), label=f"p = {p}")
        bx.plot([r["sigma"] for r in at], [r["baseline_over_summary"] for r in at], "s:", color=_colour(plt, p))
    for p in sorted({r["p"] for r in results.simulated}):
        at = [r for r in on_topology(results.simulated, CWIX) if r["p"] == p]
        _with_interval(bx, [r["sigma"] for r in at], at, "siena_sim_over_summary", "v-", None, color=_colour(plt, p))
    bx.plot([], [], "kv-", label="Siena on the simulator / summaries (95% intervals)")
    bx.plot([], [], "k^-", label="Siena (thesis's model) / summaries")
    bx.plot([], [], "ks:", label="baseline (i) / summaries")
    bx.axhspan(4, 8, color="tab:red", alpha=0.15, label="thesis: Siena 4–8× summaries")
    bx.axhline(1000, color="tab:red", ls="--", lw=1, label="thesis: baseline up to 1000× summaries")
    bx.set_xscale("log")
    _finish(bx, "σ", "ratio to summaries (formula bytes)", "how many times more bytes than summaries (CWIX)")
    bx.legend(fontsize=7, ncol=2)
    return save_figure(fig, out / "fig5-2-propagation-bandwidth.png")


def plot_hops(plt, results, topologies: list[dict], out: Path) -> Path:
    """Fig. 5-3: propagation messages per period against covering probability."""
    fig, ax = plt.subplots(figsize=(11, 4.8))
    rows = on_topology(results.hops, CWIX)
    ps = [r["p"] for r in rows]
    ax.plot(ps, [r["baseline_links"] for r in rows], "s-", label="baseline (i): every subscription to every broker, links")
    ax.plot(ps, [r["siena_link_batches_large"] for r in rows], "^:", label=f"Siena, per-subscription covering, σ = {rows[0]['sigma_large']}")
    ax.plot(ps, [r["siena_link_batches_small"] for r in rows], "^--", label=f"Siena, per-subscription covering, σ = {rows[0]['sigma_small']}")
    ax.plot(ps, [r["siena_batch_expected"] for r in rows], "^-", label="Siena, a period's batch covered as one (expected)")
    ax.plot(ps, [r["summary_sends"] for r in rows], "o-", lw=2, label="summaries: N − #sinks sends (CWIX)")
    largest = max((r["sigma"] for r in results.simulated), default=None)
    simulated = [r for r in on_topology(results.simulated, CWIX) if r["sigma"] == largest]
    _with_interval(ax, [r["p"] for r in simulated], simulated, "siena_sim_messages", "v-",
                   f"Siena on the simulator: SUB messages, σ = {largest} (95% intervals)")
    for t in topologies[1:]:
        ax.plot(ps, [t["propagation_sends"]] * len(ps), "-", color="dimgray", lw=1.2)
    ax.plot([], [], "-", color="dimgray", lw=1.2, label="summaries on the random trees")
    ax.plot([0], [552], "*", color="tab:red", ms=14, label="thesis: Siena 24×23 = 552 at 0% covering")
    ax.axhline(24, color="tab:red", ls="--", lw=1, label="thesis: summaries < 24 (N)")
    _finish(ax, "covering probability (max over brokers)", "messages (hops) per period", "Fig. 5-3: propagation hops per period, CWIX",
            loc="center left", bbox_to_anchor=(1.01, 0.5))
    return save_figure(fig, out / "fig5-3-propagation-hops.png")


def plot_routing(plt, results, out: Path) -> Path:
    """Fig. 5-4: hops per event against popularity, CWIX and the random trees' mean."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    trees = sorted({r["topology"] for r in results.routing} - {CWIX})
    for axis, names, title in ((axes[0], [CWIX], "CWIX backbone"), (axes[1], trees, f"mean of {len(trees)} random trees")):
        series = [on_topology(results.routing, t) for t in names]
        if not series or not series[0]:
            continue
        x = [100 * r["popularity"] for r in series[0]]

        def mean(field):
            return [sum(s[i][field] for s in series) / len(series) for i in range(len(x))]

        axis.plot(x, mean("summary_a_messages"), "o-", label="summaries: ROUTE + DELIVER messages (thesis's hops)")
        axis.plot(x, mean("summary_a_links"), "o--", label="summaries: overlay links of those messages")
        axis.plot(x, mean("summary_b_messages"), ".:", label="summaries, next broker option (b): messages")
        axis.plot(x, mean("summary_one_sink_messages"), "d-.", label="summaries, single-sink plan (DEF-SR-8): messages")
        axis.plot(x, mean("siena_hops"), "^-", label="Siena: links of the reverse subscription paths")
        axis.plot(x, mean("siena_cover90_hops"), "v:", label="Siena, covering 0.9: links each subscriber's own subscription crossed")
        if names == [CWIX]:
            simulated = on_topology(results.simulated_routing, CWIX)
            for field, label, style in (("siena_sim_hops", "Siena on the simulator: EVENT messages", "^-"),
                                        ("flooding_sim_hops", "baseline (ii), flooding, on the simulator", "k-"),
                                        ("broadcast_sim_hops", "baseline (i) on the simulator: EVENT messages", "s--")):
                _with_interval(axis, [100 * r["popularity"] for r in simulated], simulated, field, style, label)
        axis.axvline(75, color="tab:red", ls="--", lw=1, label="thesis: summaries fewer hops up to 75%")
        _finish(axis, "event popularity: share of brokers interested (%)", "hops per event", f"Fig. 5-4: routing hops, {title}", log_y=False)
    return save_figure(fig, out / "fig5-4-routing-hops.png")


def plot_storage(plt, results, out: Path) -> Path:
    """Fig. 5-5: total storage against covering probability; Siena / summaries."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 5.4))
    rows = on_topology(results.storage, CWIX)
    _lines(ax, "p", rows, STORAGE_LINES)
    simulated = on_topology(results.simulated_storage, CWIX)
    _with_interval(ax, [r["p"] for r in simulated], simulated, "siena_sim_bytes", "v-", "Siena on the simulator: table entries ×50 B")
    _finish(ax, "covering probability", "bytes over all brokers", f"Fig. 5-5: storage, CWIX, S = {rows[0]['subscriptions_per_broker'] if rows else 0}",
            loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    for t in sorted({r["topology"] for r in results.storage}):
        at = on_topology(results.storage, t)
        look: dict = dict(color="tab:blue", lw=2) if t == CWIX else dict(color="grey", lw=0.8, alpha=0.7)
        bx.plot([r["p"] for r in at], [r["siena_over_summary"] for r in at], "o-", label=f"{t}, formula" if t == CWIX else None, **look)
        if t == CWIX:
            bx.plot([r["p"] for r in at], [r["siena_over_summary_wire"] for r in at], "o--", color="tab:orange", label=f"{t}, measured binary")
    bx.plot([], [], "-", color="grey", lw=0.8, label="random trees, formula")
    bx.plot([0.1, 0.9], [5, 2], "*", color="tab:red", ms=14, label="thesis: 5× at 10%, slightly > 2× at 90%")
    _finish(bx, "covering probability", "Siena / summaries", "how many times more storage than summaries", log_y=False)
    bx.set_ylim(bottom=0)
    return save_figure(fig, out / "fig5-5-storage.png")


def plots(results, topologies: list[dict], out: Path) -> list[Path]:
    """The four figures' PNGs, written into `out`."""
    plt = pyplot()
    return [plot_bandwidth(plt, results, out), plot_hops(plt, results, topologies, out),
            plot_routing(plt, results, out), plot_storage(plt, results, out)]
