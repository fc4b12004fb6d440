"""What `subsum bench summaries` measures on one workload (seed 000 §5):
a broker's summary against its raw subscriptions (sizes), its candidates
against exact matching (false positives, cross-checks), the time to match
(throughput), and the 24 brokers' summaries merged into one.

Every event is cross-checked: summary candidates must contain the indexed
engine's matches (no false negatives) and the re-check must give exactly
them. Each disagreement is returned as a line of text.
"""

from __future__ import annotations

import json
import time
from typing import Callable

from subsum.bench.summaries.workload import DOMAIN, SCHEMA, THESIS_SUB_BYTES, Workload, generate
from subsum.core.types import sorted_constraints
from subsum.impl.matching import make_engine
from subsum.impl.summary import IdLayout, OwnerSummary, wire
from subsum.impl.summary.normalize import NUMERIC as NUM
from subsum.impl.summary.normalize import abstraction, interval_covers, pattern_covers
from subsum.impl.summary.stats import formula_size

BROKERS = 24  # the thesis's topology: c1 takes 5 bits, so s_id = 4 bytes at S = 1000


def jsonl_bytes(subscriptions) -> int:
    """UTF-8 bytes of the subscriptions as JSONL, one object per line."""
    total = 0
    for name, sub in subscriptions:
        line = json.dumps({"id": name, "constraints": [{"name": c.name, "type": c.type, "op": c.op, "value": c.value}
                                                       for c in sorted_constraints(sub)]})
        total += len((line + "\n").encode("utf-8"))
    return total


def covering_share(summary) -> float:
    """1 − rows / ID entries: the share of constraints that joined an existing row."""
    ids = summary.id_entries()
    return 1 - summary.row_count() / ids if ids else 0.0


def siena_stored(subscriptions) -> int:
    """Subscriptions that no other one covers as a whole (Siena's rule,
    seed 000 §1.4): t covers s iff every normalized constraint of t covers
    s's constraint on the same attribute. Of identical ones, one is kept."""
    groups: dict[tuple, list] = {}
    for _, sub in subscriptions:
        a = abstraction(sub)
        if a is not None:
            groups.setdefault(tuple(sorted(a)), []).append(a)  # equal key sets: all have 5 attributes

    def covers(t, s):
        return all((interval_covers if k[1] in NUM else pattern_covers)(t[k], s[k]) for k in s)

    stored = 0
    for members in groups.values():
        for i, s in enumerate(members):
            if not any(covers(t, s) and (t != s or j < i) for j, t in enumerate(members) if j != i):
                stored += 1
    return stored


def best_time(fn, repeat: int) -> float:
    """The least of `repeat` wall-clock timings of fn(), in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def size_figures(w: Workload, summary) -> dict:
    """The summary's rows and bytes (formula and binary) against the raw
    subscriptions (S × 50 and JSONL) and the Siena stand-in."""
    S = len(w.subscriptions)
    formula = formula_size(summary)
    binary = len(wire.to_bytes(summary))
    raw_formula = S * THESIS_SUB_BYTES
    raw_jsonl = jsonl_bytes(w.subscriptions)
    rows = summary.rows()
    num = [r for k, r in rows.items() if k[1] in DOMAIN]
    strs = [r for k, r in rows.items() if k[1] not in DOMAIN]
    stored = siena_stored(w.subscriptions)
    siena = stored * THESIS_SUB_BYTES
    return {
        "covering_realized": round(covering_share(summary), 4),
        "rows": summary.row_count(), "id_entries": summary.id_entries(),
        "ranges_per_numeric": round(sum(sum(k == "range" for k, _, _ in r) for r in num) / max(len(num), 1), 2),
        "equalities_per_numeric": round(sum(sum(k == "equality" for k, _, _ in r) for r in num) / max(len(num), 1), 2),
        "rows_per_string": round(sum(len(r) for r in strs) / max(len(strs), 1), 2),
        "summary_formula_bytes": round(formula["total"]), "summary_aacs_bytes": round(formula["aacs"]),
        "summary_sacs_bytes": round(formula["sacs"]), "summary_binary_bytes": binary,
        "raw_formula_bytes": raw_formula, "raw_jsonl_bytes": raw_jsonl,
        "formula_ratio": round(formula["total"] / raw_formula, 4) if raw_formula else "",
        "binary_ratio": round(binary / raw_jsonl, 4) if raw_jsonl else "",
        "siena_stored": stored, "siena_formula_bytes": siena,
        "summary_vs_siena": round(formula["total"] / siena, 4) if siena else "",
    }


def false_positive_figures(w: Workload, owner: OwnerSummary, summary, exact: list, problems: list[str]) -> dict:
    """Correctness and false positives (untimed): each event's summary
    candidates against the indexed engine's `exact` matches, before and
    after the owner's re-check. Adds each disagreement to `problems`."""
    E = len(w.events)
    by_name = owner.by_name
    true_pairs = reported = false = with_fp = 0
    for i, (event, names) in enumerate(zip(w.events, exact)):
        truth = {by_name[n] for n in names if n in by_name}
        if len(truth) != len(names):
            problems.append(f"p={w.p} event {i}: matches excluded subscriptions {sorted(set(names) - set(by_name))}")
        cand = summary.match(event)
        missing = truth - cand
        if missing:
            problems.append(f"p={w.p} event {i}: summary misses {sorted(summary.names[s] for s in missing)} (false negative)")
        confirmed = owner.recheck(event, cand)
        if confirmed != truth:
            problems.append(f"p={w.p} event {i}: recheck gives {sorted(owner.names[s] for s in confirmed)}, "
                            f"indexed {sorted(names)}")
        true_pairs += len(truth)
        reported += len(cand)
        fp = len(cand - truth)
        false += fp
        with_fp += fp > 0
    return {
        "planted_events": w.planted, "true_pairs": true_pairs, "reported_pairs": reported, "false_pairs": false,
        "fp_share": round(false / reported, 4) if reported else 0.0,
        "events_with_fp_share": round(with_fp / E, 4) if E else 0.0,
        "candidates_per_event": round(reported / E, 3) if E else 0.0,
        "matches_per_event": round(true_pairs / E, 3) if E else 0.0,
    }


def throughput_figures(owner: OwnerSummary, summary, engine, events: list, repeat: int, build_summary: float,
                       build_indexed: float) -> dict:
    """Throughput (timed): the same events, the same subscriptions; best of `repeat` runs, building apart."""
    E = len(events)
    match, recheck = summary.match, owner.recheck
    t_sum = best_time(lambda: [match(e) for e in events], repeat)
    t_re = best_time(lambda: [recheck(e, match(e)) for e in events], repeat)
    t_idx = best_time(lambda: engine.match_batch(events), repeat)

    eps = lambda t: E / t if t > 0 else float("inf")  # noqa: E731
    return {
        "build_summary_s": round(build_summary, 4), "build_indexed_s": round(build_indexed, 4),
        "summary_s": round(t_sum, 5), "summary_recheck_s": round(t_re, 5), "indexed_s": round(t_idx, 5),
        "summary_eps": round(eps(t_sum), 1), "summary_recheck_eps": round(eps(t_re), 1), "indexed_eps": round(eps(t_idx), 1),
        "summary_vs_indexed": round(t_idx / t_sum, 3) if t_sum else "",
        "recheck_vs_indexed": round(t_idx / t_re, 3) if t_re else "",
    }


def ids_counted(summary, events: list) -> float:
    """The work of Algorithm 4-1's step 1, per event: the IDs of the rows each event attribute satisfies, which
    `Summary.counters` counts one by one."""
    total = 0
    for event in events:
        for a in event.attributes:
            structure = summary.structures.get((a.name, a.type))
            if structure is not None:
                total += len(structure.lookup(a.value))
    return round(total / len(events), 3) if events else 0.0


def measure(w: Workload, repeat: int, log: Callable[[str], None]) -> tuple[dict, list[str]]:
    """One workload's row (sizes, false positives, throughput) and its disagreements."""
    S, E = len(w.subscriptions), len(w.events)
    problems: list[str] = []
    t0 = time.perf_counter()
    owner = OwnerSummary(0, IdLayout(BROKERS, max(S, 1), len(SCHEMA)), SCHEMA)
    for name, sub in w.subscriptions:
        if owner.add(name, sub) is None:
            problems.append(f"p={w.p}: subscription {name} has an empty abstraction")
    summary = owner.export()
    build_summary = time.perf_counter() - t0
    t0 = time.perf_counter()
    engine = make_engine("indexed", w.subscriptions, count_distinct=False)
    engine.prepare()
    build_indexed = time.perf_counter() - t0

    sizes = size_figures(w, summary)
    accuracy = false_positive_figures(w, owner, summary, engine.match_batch(w.events), problems)
    if len(problems) > 20:
        problems = problems[:20] + [f"p={w.p}: … and {len(problems) - 20} more"]
    timing = throughput_figures(owner, summary, engine, w.events, repeat, build_summary, build_indexed)
    row = {"p": w.p, "subscriptions": S, "events": E, "seed": w.seed, "repeat": repeat,
           "covered_drawn": round(w.covered_drawn, 4), **sizes, **accuracy, "ids_counted_per_event": ids_counted(summary, w.events),
           **timing, "disagreements": len(problems)}
    log(f"p={w.p}: covering {row['covering_realized']:.3f} (drawn {row['covered_drawn']:.3f}), {row['rows']} rows; "
        f"summary {row['summary_formula_bytes']:,} B formula / {row['summary_binary_bytes']:,} B binary vs raw "
        f"{row['raw_formula_bytes']:,} B / {row['raw_jsonl_bytes']:,} B JSONL; FP {row['fp_share']:.1%} of "
        f"{row['reported_pairs']} reported pairs; summary {row['summary_eps']:,.0f} ev/s, "
        f"+recheck {row['summary_recheck_eps']:,.0f}, indexed {row['indexed_eps']:,.0f}"
        + (f"; {len(problems)} DISAGREEMENTS" if problems else ""))
    return row, problems


def measure_merged(p: float, subscriptions: int, seed: int, log: Callable[[str], None], brokers: int = BROKERS) -> dict:
    """The thesis's multi-broker view (seed 000 §4.3.1, §6.5): `brokers`
    brokers, each with its own workload at covering probability p (seeds
    seed*1000 + b), summarized and merged into one summary (DEF-SUM-13).
    The merge credits no covering across brokers beyond what cover-or-merge
    and range union find, as in the thesis's model."""
    exports = []
    for b in range(brokers):
        w = generate(p, subscriptions, 1, seed * 1000 + b)
        owner = OwnerSummary(b, IdLayout(brokers, max(subscriptions, 1), len(SCHEMA)), SCHEMA)
        for name, sub in w.subscriptions:
            owner.add(f"b{b}.{name}", sub)
        exports.append(owner.export())
    t0 = time.perf_counter()
    merged = exports[0].copy()
    for other in exports[1:]:
        merged.merge_in(other)
    seconds = time.perf_counter() - t0
    formula = formula_size(merged)["total"]
    raw = brokers * subscriptions * THESIS_SUB_BYTES
    row = {"merged_brokers": brokers, "merged_rows": merged.row_count(), "merged_id_entries": merged.id_entries(),
           "merged_formula_bytes": round(formula), "merged_binary_bytes": len(wire.to_bytes(merged)),
           "merged_raw_formula_bytes": raw, "merged_formula_ratio": round(formula / raw, 4), "merge_s": round(seconds, 3)}
    log(f"p={p}: {brokers} brokers merged into {row['merged_rows']:,} rows, {row['merged_formula_bytes']:,} B formula "
        f"vs raw {raw:,} B, in {seconds:.2f}s")
    return row
