"""Named measures of seed 003's fidelity statements (the client-server
series), beside `subsum.fidelity.named`'s (issue 33): each takes the
results folder and returns `Ours` or None.

Why they are needed: a statement that sets one policy against a *group*
("Server has the largest delay", "LFU is slightly better than the
others") or a *gap* along a sweep ("the difference from Server shrinks as
λ grows") cannot be written with `ranked` (a strict chain of every
label) or `along` (one column). And the `1-ss-ever` rows hold SS alone,
so a ranking's "SS asks every past requester" reading has to take the
other policies from series 1 and SS from `1-ss-ever`.

Every function reads `client-server/client_server.csv` by its `where`
columns only, so it works on the committed (per-broker) results and on
the new per-message run (N = 5, 10, …, 50; K = 100; corner; 1-ss-ever).
"""

from __future__ import annotations

import statistics

from subsum.fidelity.measure import Ours, Results, number

CS = "client-server/client_server.csv"
SWEEPS1 = ("brokers", "slots", "lam", "mu")
CACHED = ("sc", "soha", "ss")
OTHER_CACHES = ("fifo", "regdeg", "lru")
EVER = "1-ss-ever"


def _series1(results: Results, varied: str, ever: bool = False) -> dict[float, dict[str, dict]]:
    """One series-1 sweep: value -> {policy: row}; with `ever`, SS's rows come from series 1-ss-ever."""
    table: dict[float, dict[str, dict]] = {}
    for r in results.rows(CS, series="1", varied=varied):
        if not (ever and r["policy"] == "ss"):
            table.setdefault(number(r["value"]), {})[r["policy"]] = r
    if ever:
        for r in results.rows(CS, series=EVER, varied=varied, policy="ss"):
            table.setdefault(number(r["value"]), {})["ss"] = r
    return table


def _series2(results: Results, varied: str) -> dict[float, dict[str, dict]]:
    """One series-2 sweep (Server-Cache requests): value -> {cache_policy: row}."""
    table: dict[float, dict[str, dict]] = {}
    for r in results.rows(CS, series="2", varied=varied, policy="sc"):
        table.setdefault(number(r["value"]), {})[r["cache_policy"]] = r
    return table


def _value(row: dict, metric: str) -> float:
    """A row's metric; "miss" is 1 − hit, so that lower is better for delay and miss alike; "response" is every
    response's hops, delay + overhead (DEF-CS-3)."""
    if metric == "response":
        return number(row["delay"]) + number(row["overhead"])
    return 1 - number(row["hit"]) if metric == "miss" else number(row[metric])


def _half_width(row: dict, metric: str) -> float | None:
    """A row's 95% half-width of `metric` (1 − hit has hit's; delay + overhead the sum of theirs, which bounds it),
    if the CSV has it."""
    if metric == "response":
        parts = [_half_width(row, m) for m in ("delay", "overhead")]
        return None if None in parts else sum(p for p in parts if p is not None)
    column = "hit_ci95" if metric == "miss" else f"{metric}_ci95"
    return number(row[column]) if column in row and row[column] != "" else None


def _versus(tables, metrics, lead: str, group, lead_label: str, group_label: str, pick) -> tuple[tuple[dict, ...], tuple[dict, ...]]:
    """At every point where all are measured: the lead's value and `pick` (min or max) of the group's; and beside each
    point the 95% half-widths of those two values where the CSV has them (the ranking rule's intervals, spec/13)."""
    points, halves = [], []
    for table in tables:
        for _, by in sorted(table.items()):
            if lead in by and all(g in by for g in group):
                for metric in metrics:
                    chosen = pick(group, key=lambda g: _value(by[g], metric))
                    points.append({lead_label: _value(by[lead], metric), group_label: _value(by[chosen], metric)})
                    widths = {lead_label: _half_width(by[lead], metric), group_label: _half_width(by[chosen], metric)}
                    halves.append({k: v for k, v in widths.items() if v is not None})
    return tuple(points), tuple(halves)


def _ours(versus: tuple[tuple[dict, ...], tuple[dict, ...]], where: str) -> Ours | None:
    points, halves = versus
    return Ours(points=points, where=where, point_ci95=halves) if points else None


# --- Server against the cached policies (§4.2, Fig. 5-1) --------------------------------------------------

def _server_worst(results: Results, sweeps, where: str) -> Ours | None:
    # order in the statement: ["cached (worst)", "server"], lower is better
    return _ours(_versus([_series1(results, s) for s in sweeps], ("delay",), "server", CACHED, "server", "cached (worst)", max), where)


def server_delay_worst_everywhere(results: Results) -> Ours | None:
    """§4.2: Server's delay above the largest of SC, SOHA, SS at every series-1 point (N, K, λ, μ sweeps)."""
    return _server_worst(results, SWEEPS1, "delay, Server against the worst of SC, SOHA, SS, every series-1 point")


def server_delay_worst_brokers(results: Results) -> Ours | None:
    """Fig. 5-1: Server's delay above the largest of SC, SOHA, SS at each N."""
    return _server_worst(results, ("brokers",), "delay, Server against the worst of SC, SOHA, SS, at each N")


# --- every response's hops against Server's (seed 004 §2 and §4.2) -----------------------------------------

def _response_hops(results: Results, group, label: str, pick, where: str) -> Ours | None:
    return _ours(_versus([_series1(results, s) for s in SWEEPS1], ("response",), "server", group, "server", label, pick), where)


def response_hops_server_largest(results: Results) -> Ours | None:
    """004 §4.2: Server's response hops (its delay) above the largest delay + overhead of SC, SOHA, SS, every series-1 point."""
    return _response_hops(results, CACHED, "cached", max,
                          "delay + overhead, Server against the largest of SC, SOHA, SS, every series-1 point")


def response_hops_sc_against_server(results: Results) -> Ours | None:
    """004 §2: SC's delay + overhead against Server's, every series-1 point."""
    return _response_hops(results, ("sc",), "cached", max, "delay + overhead, SC against Server, every series-1 point")


def response_hops_soha_against_server(results: Results) -> Ours | None:
    """004 §2: SOHA's delay + overhead against Server's, every series-1 point."""
    return _response_hops(results, ("soha",), "cached", max, "delay + overhead, SOHA against Server, every series-1 point")


def response_hops_ss_against_server(results: Results) -> Ours | None:
    """004 §2: SS's delay + overhead against Server's, every series-1 point."""
    return _response_hops(results, ("ss",), "cached", max, "delay + overhead, SS against Server, every series-1 point")


# --- SOHA against the other request policies (Fig. 5-3, §6) ------------------------------------------------

def _soha_best(results: Results, sweeps, metrics, ever: bool, where: str) -> Ours | None:
    return _ours(_versus([_series1(results, s, ever) for s in sweeps], metrics, "soha", ("sc", "ss", "server"), "soha", "best other", min),
                 where + (" (SS: every past requester)" if ever else ""))


def soha_delay_best_slots(results: Results) -> Ours | None:
    """Fig. 5-3: SOHA's delay below the smallest of SC, SS, Server at each K."""
    return _soha_best(results, ("slots",), ("delay",), False, "delay, SOHA against the best of SC, SS, Server, at each K")


def soha_delay_best_slots_ss_ever(results: Results) -> Ours | None:
    """As soha_delay_best_slots, SS read as asking every past requester (series 1-ss-ever)."""
    return _soha_best(results, ("slots",), ("delay",), True, "delay, SOHA against the best of SC, SS, Server, at each K")


def soha_best_delay_and_hit(results: Results) -> Ours | None:
    """§6: SOHA best on delay and on hit (as 1 − hit) against the best of SC, SS, Server, at every series-1 point."""
    return _soha_best(results, SWEEPS1, ("delay", "miss"), False, "delay and 1 − hit, SOHA against the best other, every series-1 point")


def soha_best_delay_and_hit_ss_ever(results: Results) -> Ours | None:
    """As soha_best_delay_and_hit, SS read as asking every past requester (series 1-ss-ever)."""
    return _soha_best(results, SWEEPS1, ("delay", "miss"), True, "delay and 1 − hit, SOHA against the best other, every series-1 point")


# --- LFU against FIFO, Regenerate, LRU (series 2) ----------------------------------------------------------

def lfu_hit_best_45_50(results: Results) -> Ours | None:
    """Fig. 5-10: LFU's hit above the best of FIFO, Reg-Deg, LRU at N = 45 and 50."""
    table = {x: by for x, by in _series2(results, "brokers").items() if x >= 45}
    return _ours(_versus([table], ("hit",), "lfu", OTHER_CACHES, "lfu", "best other", max),
                 "hit, LFU against the best of FIFO, Reg-Deg, LRU, N = 45 and 50")


def lfu_delay_best_slots(results: Results) -> Ours | None:
    """Fig. 5-11: LFU's delay below the best of FIFO, Reg-Deg, LRU at each K."""
    return _ours(_versus([_series2(results, "slots")], ("delay",), "lfu", OTHER_CACHES, "lfu", "best other", min),
                 "delay, LFU against the best of FIFO, Reg-Deg, LRU, at each K")


def lfu_best_delay_and_hit(results: Results) -> Ours | None:
    """§6: LFU best on delay and on hit (as 1 − hit) against the best of FIFO, Reg-Deg, LRU, every series-2 point."""
    return _ours(_versus([_series2(results, "brokers"), _series2(results, "slots")], ("delay", "miss"), "lfu", OTHER_CACHES, "lfu",
                         "best other", min), "delay and 1 − hit, LFU against the best other, every series-2 point")


def _lfu_gap(results: Results, varied: str, value: float, metric: str, sign: float, where: str) -> Ours | None:
    by = _series2(results, varied).get(float(value), {})
    if "lfu" not in by or not all(c in by for c in OTHER_CACHES):
        return None
    others = statistics.fmean(number(by[c][metric]) for c in OTHER_CACHES)
    return Ours(mean=sign * (others - number(by["lfu"][metric])), where=where)


def lfu_delay_gap_n50(results: Results) -> Ours | None:
    """Fig. 5-9: the mean delay of FIFO, Reg-Deg, LRU minus LFU's, at N = 50 (hops LFU saves)."""
    return _lfu_gap(results, "brokers", 50, "delay", 1.0, "delay, mean of FIFO, Reg-Deg, LRU minus LFU, N = 50")


def lfu_hit_gap_k80(results: Results) -> Ours | None:
    """Fig. 5-12: the mean hit of FIFO, Reg-Deg, LRU minus LFU's, at K = 80 (how far LFU is below)."""
    return _lfu_gap(results, "slots", 80, "hit", 1.0, "hit, mean of FIFO, Reg-Deg, LRU minus LFU, K = 80")


# --- the hop gap between Server and the cached policies ----------------------------------------------------

def _gap_series(results: Results, varied: str, ever: bool, where: str) -> Ours | None:
    series = []
    for x, by in sorted(_series1(results, varied, ever).items()):
        if "server" in by and all(c in by for c in CACHED):
            series.append((x, number(by["server"]["delay"]) - statistics.fmean(number(by[c]["delay"]) for c in CACHED)))
    return Ours(series=tuple(series), where=where + (" (SS: every past requester)" if ever else "")) if len(series) >= 2 else None


def cached_gap_along_lam(results: Results) -> Ours | None:
    """Figs. 5-5, 5-6: Server's delay minus the mean of SC, SOHA, SS, against λ."""
    return _gap_series(results, "lam", False, "Server's delay minus the mean of SC, SOHA, SS, against λ")


def cached_gap_along_lam_ss_ever(results: Results) -> Ours | None:
    """As cached_gap_along_lam, SS read as asking every past requester (series 1-ss-ever)."""
    return _gap_series(results, "lam", True, "Server's delay minus the mean of SC, SOHA, SS, against λ")


def cached_gap_along_mu(results: Results) -> Ours | None:
    """Fig. 5-7: Server's delay minus the mean of SC, SOHA, SS, against μ (converging: falling to 0)."""
    return _gap_series(results, "mu", False, "Server's delay minus the mean of SC, SOHA, SS, against μ")


def cached_cut_at_k50_along_n(results: Results) -> Ours | None:
    """Fig. 5-3's prediction: at K = 50, Server's delay minus the mean of SC, SOHA, SS, at N = 10 (the K
    sweep's end) and N = 50 (the corner point, varied = corner)."""
    by_n: dict[float, dict[str, float]] = {}
    for r in results.rows(CS, series="1", slots=50):
        by_n.setdefault(number(r["brokers"]), {})[r["policy"]] = number(r["delay"])
    series = tuple((n, p["server"] - statistics.fmean(p[c] for c in CACHED)) for n, p in sorted(by_n.items())
                   if "server" in p and all(c in p for c in CACHED))
    return Ours(series=series, where="K = 50: Server's delay minus the mean of SC, SOHA, SS, against N") if len(series) >= 2 else None


# --- rankings with SS read as asking every past requester --------------------------------------------------

def _ranked_ever(results: Results, column: str, varied: str) -> Ours | None:
    points = tuple({p: number(by[p][column]) for p in ("server", "sc", "soha", "ss")}
                   for _, by in sorted(_series1(results, varied, ever=True).items()) if all(p in by for p in ("server", "sc", "soha", "ss")))
    return Ours(points=points, where=f"{column} at each N; SS from series 1-ss-ever, the others from series 1") if points else None


def ss_ever_overhead_rank_brokers(results: Results) -> Ours | None:
    """Overhead of the four request policies at each N, SS asking every past requester."""
    return _ranked_ever(results, "overhead", "brokers")


def ss_ever_delay_rank_brokers(results: Results) -> Ours | None:
    """Delay of the four request policies at each N, SS asking every past requester."""
    return _ranked_ever(results, "delay", "brokers")


def ss_ever_hit_rank_brokers(results: Results) -> Ours | None:
    """Hit of the four request policies at each N, SS asking every past requester."""
    return _ranked_ever(results, "hit", "brokers")


def replacement_delay_spread(results: Results) -> Ours | None:
    """The largest spread of FIFO's, Regenerate's and LRU's delay at any point of series 2 (N and K sweeps, SC):
    (largest - smallest) / their mean; seed 003 §5.3.2 says the three are almost the same."""
    table: dict[tuple[str, float], dict[str, float]] = {}
    for r in results.rows(CS, "varied", "value", "cache_policy", "delay", series="2", policy="sc"):
        if r["cache_policy"] in ("fifo", "regdeg", "lru") and r["varied"] in ("brokers", "slots"):
            table.setdefault((str(r["varied"]), number(r["value"])), {})[str(r["cache_policy"])] = number(r["delay"])
    spreads = [(max(p.values()) - min(p.values())) / (sum(p.values()) / 3) for p in table.values() if len(p) == 3]
    return Ours(mean=max(spreads), where="largest (max - min) / mean of FIFO, Reg-Deg and LRU's delay, series 2, every N and K") \
        if spreads else None


VARIANTS = "client-server/variants.csv"


def slots_to_recover_at_mu_05(results: Results) -> Ours | None:
    """Fig. 5-8 (§5.3.1): the fewest cache slots K, of the variants' μ = 0.5 sweep (Server-Cache, N = 10), at which
    the hit is back to Server-Cache's hit at the defaults (μ = 0.05, K = 10); None if no K of the sweep gets there."""
    base = [r for r in results.rows(CS, "hit", series="1", varied="mu", policy="sc") if number(r["value"]) == 0.05]
    sweep = sorted(results.rows(VARIANTS, "hit", "value", variant="mu-0.5", policy="sc"), key=lambda r: number(r["value"]))
    if not base or not sweep:
        return None
    back = [number(r["value"]) for r in sweep if number(r["hit"]) >= number(base[0]["hit"])]
    where = (f"fewest K at which Server-Cache's hit at μ = 0.5 reaches its hit at μ = 0.05, K = 10 "
             f"({base[0]['hit']}), of K = {', '.join(r['value'] for r in sweep)}")
    return Ours(mean=back[0], where=where) if back else None


def _hit_drop_along_lam(results: Results, policy: str) -> Ours | None:
    """How much `policy`'s hit falls from λ = 0.05 to λ = 1 at K = 50 (variants, lam-k50) and at K = 10 (series 1)."""
    def drop(rows) -> float | None:
        hits = {number(r["value"]): number(r["hit"]) for r in rows}
        return hits[0.05] - hits[1.0] if 0.05 in hits and 1.0 in hits else None

    at_50 = drop(results.rows(VARIANTS, "hit", "value", variant="lam-k50", policy=policy))
    at_10 = drop(results.rows(CS, "hit", series="1", varied="lam", policy=policy))
    if at_50 is None or at_10 is None:
        return None
    return Ours(points=({"K = 50": at_50, "K = 10": at_10},), where=f"{policy}'s hit at λ = 0.05 minus at λ = 1, N = 10")


def hit_drop_along_lam_sc(results: Results) -> Ours | None:
    """Fig. 5-6: Server-Cache's hit falls more from λ = 0.05 to λ = 1 with K = 50 slots than with K = 10."""
    return _hit_drop_along_lam(results, "sc")


def hit_drop_along_lam_soha(results: Results) -> Ours | None:
    """As hit_drop_along_lam_sc, for SOHA."""
    return _hit_drop_along_lam(results, "soha")
