"""The subscription summaries benchmark's report (`summaries`): its plots
(sizes, false positives, throughput against covering probability), the
thesis's claims assessed on its rows, and its Markdown table."""

from __future__ import annotations

from pathlib import Path

from subsum.bench.output import pyplot, save_figure
from subsum.bench.summaries.workload import THESIS_SUB_BYTES


def _style(axis, ylabel: str, title: str, *, ylim=(0, None), unity: bool = False) -> None:
    """The common look of one panel: labels, grid, legend, a y range, and a line at 1 for ratios."""
    if unity:
        axis.axhline(1.0, color="grey", lw=0.8)
    axis.set_ylim(*ylim)
    axis.set_xlabel("covering probability p")
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=7)


def plot_sizes(plt, rows: list[dict], out: Path) -> Path:
    """A broker's summary against the raw subscriptions and the Siena stand-in: bytes, and their ratios."""
    ps = [r["p"] for r in rows]
    S = rows[0]["subscriptions"] if rows else 0
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    for field, label, style in (("raw_jsonl_bytes", "raw subscriptions, JSONL (measured)", "s--"),
                                ("raw_formula_bytes", f"raw subscriptions, thesis S×{THESIS_SUB_BYTES}", "s:"),
                                ("siena_formula_bytes", "Siena stand-in (uncovered subs ×50)", "^:"),
                                ("summary_binary_bytes", "summary, binary (measured)", "o-"),
                                ("summary_formula_bytes", "summary, thesis formula", "o-")):
        ax.plot(ps, [r[field] / 1000 for r in rows], style, label=label)
    _style(ax, "kB at one broker", f"sizes, S={S}")
    bx.plot(ps, [r["formula_ratio"] for r in rows], "o-", label="formula: summary / S×50")
    bx.plot(ps, [r["binary_ratio"] for r in rows], "o-", label="measured: binary / JSONL")
    bx.plot(ps, [r["summary_vs_siena"] for r in rows], "^:", label="formula: summary / Siena stand-in")
    _style(bx, "size ratio (below 1: summary smaller)", "summary / raw", unity=True)
    return save_figure(fig, out / "sizes.png")


def plot_false_positives(plt, rows: list[dict], out: Path) -> Path:
    """False positives before the owner's re-check; candidates against true matches per event."""
    ps = [r["p"] for r in rows]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax.plot(ps, [100 * r["fp_share"] for r in rows], "o-", label="false share of reported (event, sub) pairs")
    ax.plot(ps, [100 * r["events_with_fp_share"] for r in rows], "s--", label="events with >= 1 false positive")
    ax.plot(ps, [100 * r["covering_realized"] for r in rows], "^:", color="grey", label="realized covering share")
    _style(ax, "%", "false positives before the owner's re-check", ylim=(0, 100))
    bx.plot(ps, [r["candidates_per_event"] for r in rows], "o-", label="summary candidates")
    bx.plot(ps, [r["matches_per_event"] for r in rows], "s--", label="true matches")
    _style(bx, "subscriptions per event", "candidates vs true matches")
    return save_figure(fig, out / "false_positives.png")


def plot_throughput(plt, rows: list[dict], out: Path) -> Path:
    """Events per second of Summary.match (with and without the re-check) and the indexed engine."""
    ps = [r["p"] for r in rows]
    S = rows[0]["subscriptions"] if rows else 0
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    for field, label, style in (("summary_eps", "Summary.match", "o-"),
                                ("summary_recheck_eps", "Summary.match + owner recheck", "s-"),
                                ("indexed_eps", "indexed engine match_batch", "^--")):
        ax.plot(ps, [r[field] for r in rows], style, label=label)
    _style(ax, "events/s", f"throughput, S={S}, E={rows[0]['events'] if rows else 0}, best of {rows[0]['repeat'] if rows else 0}")
    bx.plot(ps, [r["summary_vs_indexed"] for r in rows], "o-", label="summary / indexed")
    bx.plot(ps, [r["recheck_vs_indexed"] for r in rows], "s-", label="summary + recheck / indexed")
    _style(bx, "speed relative to indexed (above 1: faster)", "throughput ratio", unity=True)
    return save_figure(fig, out / "throughput.png")


def plots(rows: list[dict], out: Path) -> list[Path]:
    """sizes.png, false_positives.png and throughput.png, one row per covering probability."""
    plt = pyplot()
    return [plot_sizes(plt, rows, out), plot_false_positives(plt, rows, out), plot_throughput(plt, rows, out)]


def assess(rows: list[dict], disagreements: list[str]) -> list[dict]:
    """The thesis's claims and the implied properties, with the figures."""
    if not rows:
        return []
    f = []
    fmt = lambda field, d=2: ", ".join(f"p={r['p']}: {r[field]:.{d}f}" for r in rows)  # noqa: E731
    f.append({"claim": "no false negatives, and the owner's re-check equals exact matching (every event, every p)",
              "holds": not disagreements, "detail": f"{len(disagreements)} disagreements"})
    f.append({"claim": "realized covering share follows p", "holds": all(
        a["covering_realized"] < b["covering_realized"] for a, b in zip(rows, rows[1:])), "detail": fmt("covering_realized", 3)})
    f.append({"claim": "summary smaller than the raw subscriptions, thesis formula vs S×50, at every p",
              "holds": all(r["formula_ratio"] < 1 for r in rows), "detail": fmt("formula_ratio")})
    f.append({"claim": "summary smaller than the raw subscriptions, measured binary vs JSONL, at every p",
              "holds": all(r["binary_ratio"] < 1 for r in rows), "detail": fmt("binary_ratio")})
    f.append({"claim": "summary shrinks as p grows (formula and binary)",
              "holds": all(a["summary_formula_bytes"] > b["summary_formula_bytes"] and a["summary_binary_bytes"] > b["summary_binary_bytes"]
                           for a, b in zip(rows, rows[1:])),
              "detail": ", ".join(f"p={r['p']}: {r['summary_formula_bytes']:,} / {r['summary_binary_bytes']:,} B" for r in rows)})
    ratios = [1 / r["summary_vs_siena"] for r in rows if r["summary_vs_siena"]]
    f.append({"claim": "thesis (storage, Fig. 5-5): 2–5x smaller than Siena (single-broker stand-in, formula sizes)",
              "holds": bool(ratios) and all(2 <= x <= 5 for x in ratios),
              "detail": ", ".join(f"p={r['p']}: {1 / r['summary_vs_siena']:.2f}x" for r in rows if r["summary_vs_siena"])})
    f.append({"claim": "false-positive share grows with p", "holds": all(
        a["fp_share"] <= b["fp_share"] for a, b in zip(rows, rows[1:])), "detail": fmt("fp_share", 3)})
    f.append({"claim": "Summary.match faster than the indexed engine (events/s)", "holds": all(
        r["summary_vs_indexed"] and r["summary_vs_indexed"] > 1 for r in rows), "detail": fmt("summary_vs_indexed")})
    f.append({"claim": "Summary.match + recheck faster than the indexed engine (events/s)", "holds": all(
        r["recheck_vs_indexed"] and r["recheck_vs_indexed"] > 1 for r in rows), "detail": fmt("recheck_vs_indexed")})
    return f


def markdown_table(rows: list[dict]) -> str:
    """The results as a Markdown table (one line per p)."""
    head = ("p", "covering", "rows", "IDs", "summary B (formula / binary)", "raw B (S×50 / JSONL)",
            "ratio (formula / measured)", "vs Siena", "FP pairs", "events w/ FP",
            "summary ev/s", "+recheck ev/s", "indexed ev/s", "summary / indexed")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        siena = f"{1 / r['summary_vs_siena']:.2f}x smaller" if r["summary_vs_siena"] else "n/a"
        lines.append("| " + " | ".join((
            f"{r['p']}", f"{r['covering_realized']:.3f}", f"{r['rows']:,}", f"{r['id_entries']:,}",
            f"{r['summary_formula_bytes']:,} / {r['summary_binary_bytes']:,}",
            f"{r['raw_formula_bytes']:,} / {r['raw_jsonl_bytes']:,}",
            f"{r['formula_ratio']:.2f} / {r['binary_ratio']:.2f}", siena,
            f"{r['fp_share']:.1%}", f"{r['events_with_fp_share']:.1%}",
            f"{r['summary_eps']:,.0f}", f"{r['summary_recheck_eps']:,.0f}", f"{r['indexed_eps']:,.0f}",
            f"{r['summary_vs_indexed']:.2f}x / {r['recheck_vs_indexed']:.2f}x",
        )) + " |")
    return "\n".join(lines)
