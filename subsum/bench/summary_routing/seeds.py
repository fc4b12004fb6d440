"""The summary routing benchmark over several seeds (issue 54): each seed's
rows, the simulator's baselines set beside the summaries of the same seed,
whose means over seeds, with their 95% intervals, `intervals.means_over_seeds`
takes.

A ratio (Siena / summaries, say) is taken within a seed, then averaged: the
mean of the seeds' ratios, with its interval, never a ratio of means.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from subsum.bench.summary_routing.siena import SUBSCRIPTION_BYTES

#: each table's key columns: the rows of one point, one per seed, agree on them
KEYS = {"propagation": ("topology", "p", "sigma"), "hops": ("topology", "p"), "routing": ("topology", "interested"),
        "storage": ("topology", "p"), "storage_small": ("topology", "p", "subscriptions_per_broker"), "false_positives": ("topology", "p"),
        "simulated": ("topology", "p", "sigma"),
        "simulated_storage": ("topology", "p"), "simulated_routing": ("topology", "interested")}


def beside_summaries(simulated: Sequence[dict], propagation: Sequence[Mapping]) -> list[dict]:
    """The simulated periods of one seed (`period_row`'s, storage apart) with the summaries' bytes of the same
    topology, p and σ beside them, and the ratios."""
    sent = {(r["topology"], r["p"], r["sigma"]): r for r in propagation}
    out = []
    for row in simulated:
        row = {k: v for k, v in row.items() if not k.endswith("_stored")}
        summary = sent.get((row["topology"], row["p"], row["sigma"]))
        if summary is None:
            continue  # σ = S, run for the storage only
        for column in ("summary_sends", "summary_formula_bytes", "summary_wire_bytes"):
            row[column] = summary[column]
        row["siena_sim_over_summary"] = round(row["siena_sim_bytes"] / summary["summary_formula_bytes"], 4)
        row["siena_sim_over_summary_wire"] = round(row["siena_sim_bytes"] / summary["summary_wire_bytes"], 4)
        row["baseline_sim_over_summary"] = round(row["baseline_sim_bytes"] / summary["summary_formula_bytes"], 4)
        row["baseline_sim_over_siena_sim"] = round(row["baseline_sim_bytes"] / row["siena_sim_bytes"], 4)
        out.append(row)
    return out


def storage_beside_summaries(simulated: Sequence[dict], storage: Sequence[Mapping]) -> list[dict]:
    """The storage the simulated period with σ = S left (Siena's table entries, baseline (i)'s filters held), in
    bytes of 50 a subscription, beside the summaries' storage of the same topology and p, and the ratios."""
    kept = {(r["topology"], r["p"], r["subscriptions_per_broker"]): r for r in storage}
    out = []
    for row in simulated:
        summary = kept.get((row["topology"], row["p"], row["sigma"]))
        if summary is None or "siena_sim_stored" not in row:
            continue
        siena, baseline = row["siena_sim_stored"] * SUBSCRIPTION_BYTES, row["baseline_sim_stored"] * SUBSCRIPTION_BYTES
        out.append({"topology": row["topology"], "p": row["p"], "subscriptions_per_broker": row["sigma"],
                    "siena_sim_stored": row["siena_sim_stored"], "baseline_sim_stored": row["baseline_sim_stored"],
                    "summary_formula_bytes": summary["summary_formula_bytes"], "summary_wire_bytes": summary["summary_wire_bytes"],
                    "siena_sim_bytes": siena, "baseline_sim_bytes": baseline,
                    "siena_sim_over_summary": round(siena / summary["summary_formula_bytes"], 4),
                    "siena_sim_over_summary_wire": round(siena / summary["summary_wire_bytes"], 4),
                    "siena_sim_over_baseline_sim": round(siena / baseline, 4)})
    return out


def routing_beside_summaries(simulated: Sequence[dict], routing: Sequence[Mapping]) -> list[dict]:
    """The simulated routing rows of one seed with the summaries' messages per event (options a and b, and a under
    the single-sink plan) at the
    same topology and number of interested brokers."""
    by_point = {(r["topology"], r["interested"]): r for r in routing}
    out = []
    for row in simulated:
        summary = by_point.get((row["topology"], row["interested"]), {})
        out.append({**row, **{k: summary[k] for k in ("summary_a_messages", "summary_b_messages", "summary_one_sink_messages")
                                if k in summary}})
    return out
