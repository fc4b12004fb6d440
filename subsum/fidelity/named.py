"""Measures too particular for `load`'s kinds, named in a
statement's `[statement.measure]` as `kind = "named"` (issue 33). Each
takes the results folder and returns `Ours` or None."""

from __future__ import annotations

from subsum.fidelity.measure import Ours, Results, number

ROUTING = "summary-routing/routing.csv"
SIMULATED_ROUTING = "summary-routing/simulated_routing.csv"  # Siena on the simulator, the summaries beside it
PROPAGATION = "summary-routing/propagation.csv"
STORAGE = "summary-routing/storage.csv"
CWIX = "cwix"


def _summaries_win_up_to(results: Results, siena: str, reading: str, file: str = ROUTING,
                         summaries: str = "summary_a_messages") -> Ours | None:
    rows = sorted(results.rows(file, topology=CWIX), key=lambda r: number(r["popularity"]))
    if not rows or siena not in rows[0] or summaries not in rows[0]:
        return None
    reach = 0.0
    for r in rows:
        if number(r[summaries]) < number(r[siena]):
            reach = number(r["popularity"])
        else:
            break
    wins = [number(r["popularity"]) for r in rows if number(r[summaries]) < number(r[siena])]
    span = f"{min(wins):.0%}–{max(wins):.0%}" if wins else "nowhere"
    return Ours(mean=reach, where=f"CWIX, messages per event{reading}; summaries win at {span}")


def summaries_win_up_to(results: Results) -> Ours | None:
    """Fig. 5-4: the largest popularity q such that summaries (option a,
    messages) need fewer hops than Siena at every popularity up to q; 0 if
    they do not win at the lowest one."""
    return _summaries_win_up_to(results, "siena_hops", "")


def summaries_win_up_to_simulated(results: Results) -> Ours | None:
    """`summaries_win_up_to` against Siena on the simulator (EVENT messages, CWIX's tree), means over seeds."""
    return _summaries_win_up_to(results, "siena_sim_hops", ", Siena on the simulator", SIMULATED_ROUTING)


def summaries_win_up_to_one_sink(results: Results) -> Ours | None:
    """`summaries_win_up_to_simulated` with the summaries routed on the single-sink plan (DEF-SR-8)."""
    return _summaries_win_up_to(results, "siena_sim_hops", ", Siena on the simulator, summaries on the single-sink plan",
                                SIMULATED_ROUTING, "summary_one_sink_messages")


def summaries_win_up_to_siena_covering(results: Results) -> Ours | None:
    """Fig. 5-4 against Siena's covering reading of event cost (covering probability 0.9)."""
    return _summaries_win_up_to(results, "siena_cover90_hops", ", Siena charged only each subscription's own links (covering 0.9)")


def _routing_hops_on_average(results: Results, file: str, siena: str, reading: str,
                             summaries: str = "summary_a_messages") -> Ours | None:
    rows = results.rows(file, topology=CWIX)
    if not rows or siena not in rows[0] or summaries not in rows[0]:
        return None
    mean = {label: sum(number(r[c]) for r in rows) / len(rows) for label, c in (("summaries", summaries), ("siena", siena))}
    return Ours(points=(mean,), where=f"CWIX, mean over every popularity{reading}")


def routing_hops_on_average(results: Results) -> Ours | None:
    """Fig. 5-4 averaged over popularity: mean messages per event, summaries (option a) and Siena."""
    return _routing_hops_on_average(results, ROUTING, "siena_hops", "")


def routing_hops_on_average_simulated(results: Results) -> Ours | None:
    """`routing_hops_on_average` against Siena on the simulator (EVENT messages, CWIX's tree)."""
    return _routing_hops_on_average(results, SIMULATED_ROUTING, "siena_sim_hops", ", Siena on the simulator")


def routing_hops_on_average_one_sink(results: Results) -> Ours | None:
    """`routing_hops_on_average_simulated` with the summaries routed on the single-sink plan (DEF-SR-8)."""
    return _routing_hops_on_average(results, SIMULATED_ROUTING, "siena_sim_hops",
                                    ", Siena on the simulator, summaries on the single-sink plan", "summary_one_sink_messages")


def siena_over_baseline_max(results: Results) -> Ours | None:
    """Fig. 5-2: baseline (i) bytes over Siena's, the largest over CWIX's (p, σ) rows."""
    rows = results.rows(PROPAGATION, topology=CWIX)
    if not rows:
        return None
    return Ours(mean=max(number(r["baseline_formula_bytes"]) / number(r["siena_bytes"]) for r in rows), where="CWIX, max over p and σ")


def _storage_across(results: Results, column: str, reading: str) -> Ours | None:
    rows = sorted(results.rows(STORAGE, column, p=0.5), key=lambda r: r["topology"])
    if len(rows) < 2:
        return None
    return Ours(series=tuple((float(k), number(r[column])) for k, r in enumerate(rows)),
                where=f"storage Siena / summaries at p = 0.5{reading}, topologies " + ", ".join(r["topology"] for r in rows))


def storage_across_topologies(results: Results) -> Ours | None:
    """Fig. 5-5 at p = 0.5 on every topology: Siena over summaries, one point per topology (a flat series is 'similar')."""
    return _storage_across(results, "siena_over_summary", "")


def storage_across_topologies_expected(results: Results) -> Ours | None:
    """As storage_across_topologies, Siena's storage in expectation under the thesis's covering, p × deg / max deg."""
    return _storage_across(results, "siena_expected_over_summary", ", Siena in expectation")


def storage_across_topologies_uniform(results: Results) -> Ours | None:
    """As storage_across_topologies_expected, with covering p at every broker (the other reading of 000-5.2.1-d)."""
    return _storage_across(results, "siena_uniform_over_summary", ", Siena in expectation, covering p at every broker")


def _both_ways(row) -> float:
    """Siena / (summaries + the owners' exact local subscriptions), one storage.csv row."""
    return number(row["siena_bytes"]) / (number(row["summary_formula_bytes"]) + number(row["local_subscription_bytes"]))


def _storage_both_ways_at(results: Results, p: float) -> Ours | None:
    rows = results.rows(STORAGE, topology=CWIX, p=p)
    if not rows:
        return None
    return Ours(mean=_both_ways(rows[0]), where=f"CWIX, p = {p}, owners' exact copies charged to summaries too")


def storage_both_ways_at_0_1(results: Results) -> Ours | None:
    """Fig. 5-5 at p = 0.1, charged both ways: Siena / (summaries + local subscriptions), CWIX."""
    return _storage_both_ways_at(results, 0.1)


def storage_both_ways_at_0_9(results: Results) -> Ours | None:
    """Fig. 5-5 at p = 0.9, charged both ways: Siena / (summaries + local subscriptions), CWIX."""
    return _storage_both_ways_at(results, 0.9)


def storage_both_ways_mean(results: Results) -> Ours | None:
    """Fig. 5-5 charged both ways, the mean over p (CWIX), with the series by p beside it."""
    rows = results.rows(STORAGE, topology=CWIX)
    if not rows:
        return None
    series = tuple(sorted((number(r["p"]), _both_ways(r)) for r in rows))
    return Ours(mean=sum(y for _, y in series) / len(series), series=series,
                where="CWIX, mean over p, owners' exact copies charged to summaries too")


def _routing_order_above_75(results: Results, siena: str, reading: str, file: str = ROUTING,
                            summaries: str = "summary_a_messages") -> Ours | None:
    rows = sorted((r for r in results.rows(file, topology=CWIX) if number(r["popularity"]) > 0.75),
                  key=lambda r: number(r["popularity"]))
    if not rows or siena not in rows[0] or summaries not in rows[0]:
        return None
    columns = {"siena": siena, "summaries": summaries}
    halves = tuple({label: number(r[f"{c}_ci95"]) for label, c in columns.items() if f"{c}_ci95" in r} for r in rows)
    return Ours(points=tuple({label: number(r[c]) for label, c in columns.items()} for r in rows),
                where=f"CWIX, every popularity above 75%, messages per event{reading}", point_ci95=halves if any(halves) else ())


def routing_order_above_75_simulated(results: Results) -> Ours | None:
    """`routing_order_above_75` against Siena on the simulator (EVENT messages, CWIX's tree), with the 95% intervals."""
    return _routing_order_above_75(results, "siena_sim_hops", ", Siena on the simulator", SIMULATED_ROUTING)


def routing_order_above_75_one_sink(results: Results) -> Ours | None:
    """`routing_order_above_75_simulated` with the summaries routed on the single-sink plan (DEF-SR-8)."""
    return _routing_order_above_75(results, "siena_sim_hops", ", Siena on the simulator, summaries on the single-sink plan",
                                   SIMULATED_ROUTING, "summary_one_sink_messages")


def routing_order_above_75(results: Results) -> Ours | None:
    """Fig. 5-4 above 75 % popularity: Siena's hops and summaries' messages (option a) at every such popularity, CWIX."""
    return _routing_order_above_75(results, "siena_hops", "")


def routing_order_above_75_siena_covering(results: Results) -> Ours | None:
    """Fig. 5-4 above 75 % popularity against Siena's covering reading of event cost (covering probability 0.9)."""
    return _routing_order_above_75(results, "siena_cover90_hops", ", Siena charged only each subscription's own links (covering 0.9)")


# --- seed 004 (`subsum bench caching`, series variants): rate-LFU's other tie rule -----------------------------------

CACHING = "caching/caching.csv"


def lfu_oldest_against_regdeg(results: Results) -> Ours | None:
    """§3.4: rate-LFU evicting the oldest among equal rates (series variants, lfu-oldest) against
    regeneration/degradation (series policy), survivability at each cache share, α 0.8, 50 brokers."""
    points, halves = [], []
    for lfu in sorted(results.rows(CACHING, "survivability", "cache_share", series="variants", variant="lfu-oldest", alpha=0.8),
                      key=lambda r: number(r["cache_share"])):
        regdeg = results.rows(CACHING, series="policy", policy="regdeg", alpha=0.8, cache_share=lfu["cache_share"])
        if regdeg:
            points.append({"lfu": number(lfu["survivability"]), "regdeg": number(regdeg[0]["survivability"])})
            halves.append({"lfu": number(lfu["survivability_ci95"]), "regdeg": number(regdeg[0]["survivability_ci95"])})
    where = "survivability, rate-LFU evicting the oldest among equal rates against Reg-Deg, 50 brokers, α 0.8, at each cache size"
    return Ours(points=tuple(points), point_ci95=tuple(halves), where=where) if points else None
