"""Subscription summaries benchmark (seed 000 §5, Table 5-2; benchmarks/README.md).

One run compares the following, for each covering probability p:
- **size**: a broker's summary by the thesis's formula (`formula_size`,
  s_st = s_id = 4, s_sv = 10) and by its measured binary encoding
  (`wire.to_bytes`), against the raw subscriptions by the thesis's
  S × 50 bytes and by their measured JSONL bytes. Also a single-broker
  stand-in for Siena (subscriptions that no other subscription covers as a
  whole, × 50 bytes).
- **false positives**: the (event, subscription) pairs the summary reports
  that do not truly match, before the owner's re-check.
- **throughput**: `Summary.match`, `Summary.match` plus `OwnerSummary.recheck`,
  and the `indexed` engine's `match_batch`, on the same subscriptions and
  events (best of `repeat` runs, building excluded).

Every event is cross-checked: summary candidates must contain the indexed
engine's matches (no false negatives) and the re-check must give exactly
them. Any disagreement is listed in the result's "disagreements"; the caller
exits non-zero.

The generator (seed note §6.3: covered values are "funnelled into" the n_sr
ranges; uncovered ones are distinct values), all draws from
`random.Random` instances seeded by strings derived from `seed`:
- schema: nt = 10 attributes, num0, num1 (int), num2, num3 (float),
  str0 … str5 (string): 40% numeric, 60% string;
- per numeric attribute two disjoint base ranges (n_sr = 2), each 2% of the
  domain ([0, 10^6) for int, [0, 10^4) with two decimals for float); per
  string attribute two base patterns, `prefix P` and `suffix X` (two
  uppercase letters each);
- each subscription constrains 2 numeric and 3 string attributes (uniform).
  A constraint is *covered* iff a coin u < p; the coins and the attribute
  choices come from a p-independent stream, so the covered constraints at a
  larger p are a superset of those at a smaller p;
- a covered numeric constraint falls in one of the base ranges: `=` a value
  inside it (40%), a sub-range `>= a, <= b` inside it (30%), or the base
  range itself (30%); an uncovered one is `=` a value outside both ranges,
  distinct from every other such value of the attribute;
- a covered string constraint is under one of the base patterns: `=` a
  10-letter string with that prefix or suffix (40%), a longer `prefix` /
  `suffix` of 3–5 letters (30%), or the base pattern itself (30%); an
  uncovered one is `=` a distinct 10-letter string with neither base
  prefix nor base suffix;
- events have 5 attributes too, the attribute names of a random
  subscription (so the counting can reach popcount(c3)). `PLANTED` (20%)
  take a value satisfying each of its constraints. The others are near
  misses: per attribute, with probability `HOT` (70%) a value in the base
  range or base pattern the subscription's constraint lies in (or its `=`
  value if that constraint is uncovered), else (15%) some subscription's
  `=` value on that attribute, else (15%) a random value.

The realized covering share is 1 − rows / ID entries of the summary: the
share of (subscription, attribute) constraints that did not open a row of
their own.
"""

from __future__ import annotations

import csv
import json
import random
import string
import time
from pathlib import Path
from typing import Callable

import attrs

from subsum.core.types import Attribute, Constraint, Event, Subscription, sorted_constraints

PROBABILITIES = (0.1, 0.25, 0.5, 0.75, 0.9)
NUMERIC = (("num0", "int"), ("num1", "int"), ("num2", "float"), ("num3", "float"))
STRINGS = tuple((f"str{i}", "string") for i in range(6))
SCHEMA = tuple(sorted(NUMERIC + STRINGS))  # nt = 10
NUMERIC_PER_SUB, STRING_PER_SUB = 2, 3
BROKERS = 24  # the thesis's topology: c1 takes 5 bits, so s_id = 4 bytes at S = 1000
DOMAIN = {"int": 1_000_000, "float": 10_000.0}
RANGE_SHARE = 0.02  # width of a base range, as a share of the domain
STRING_LEN = 10  # s_sv
ALPHABET = string.ascii_uppercase
# Covered constraint kinds: (value inside, sub-range / longer pattern, the base itself).
KIND_WEIGHTS = (0.4, 0.3, 0.3)
PLANTED = 0.2
HOT, EXISTING = 0.7, 0.15  # non-planted event values: in a base region, an existing `=` value; else random
THESIS_SUB_BYTES = 50

CSV_FIELDS = (
    "p", "subscriptions", "events", "seed", "repeat", "covered_drawn", "covering_realized",
    "rows", "id_entries", "ranges_per_numeric", "equalities_per_numeric", "rows_per_string",
    "summary_formula_bytes", "summary_aacs_bytes", "summary_sacs_bytes", "summary_binary_bytes",
    "raw_formula_bytes", "raw_jsonl_bytes", "formula_ratio", "binary_ratio",
    "siena_stored", "siena_formula_bytes", "summary_vs_siena",
    "planted_events", "true_pairs", "reported_pairs", "false_pairs", "fp_share", "events_with_fp_share",
    "candidates_per_event", "matches_per_event",
    "build_summary_s", "build_indexed_s", "summary_s", "summary_recheck_s", "indexed_s",
    "summary_eps", "summary_recheck_eps", "indexed_eps", "summary_vs_indexed", "recheck_vs_indexed",
    "merged_brokers", "merged_rows", "merged_id_entries", "merged_formula_bytes", "merged_binary_bytes",
    "merged_raw_formula_bytes", "merged_formula_ratio", "merge_s",
    "disagreements",
)


# -- the generator -------------------------------------------------------------

@attrs.frozen
class Workload:
    p: float
    seed: int
    subscriptions: list  # [(name, Subscription)]
    events: list  # [Event]
    covered_drawn: float  # share of constraints the generator drew as covered
    planted: int
    base: dict  # key -> base ranges or patterns


def _word(rnd: random.Random, n: int) -> str:
    return "".join(rnd.choice(ALPHABET) for _ in range(n))


def _number(type_: str, x: float):
    return int(x) if type_ == "int" else round(x, 2)


class _Attr:
    """One attribute's base ranges or patterns and value draws."""

    def __init__(self, key, shape: random.Random):
        self.key = key
        self.type = key[1]
        if self.type in DOMAIN:
            d = DOMAIN[self.type]
            width = d * RANGE_SHARE
            lo1 = shape.uniform(0.05 * d, 0.40 * d)
            lo2 = shape.uniform(0.55 * d, 0.90 * d)
            self.ranges = [(_number(self.type, lo), _number(self.type, lo + width)) for lo in (lo1, lo2)]
        else:
            first = shape.sample(ALPHABET, 2)  # the prefix and the suffix start differently
            self.patterns = [("prefix", first[0] + shape.choice(ALPHABET)), ("suffix", shape.choice(ALPHABET) + first[1])]
        self.used: set = set()  # uncovered `=` values, kept distinct
        self.eq_values: list = []  # every `=` value stated, for event draws

    # numeric
    def inside(self, rnd, lo, hi):
        if self.type == "int":
            return rnd.randint(lo, hi)
        return min(max(round(rnd.uniform(lo, hi), 2), lo), hi)

    def outside(self, rnd):
        d = DOMAIN[self.type]
        while True:
            v = _number(self.type, rnd.uniform(0, d))
            if all(not lo <= v <= hi for lo, hi in self.ranges):
                return v

    # string
    def plain(self, s: str) -> bool:
        (_, p), (_, x) = self.patterns
        return not s.startswith(p) and not s.endswith(x)

    def under(self, rnd, op, w, n=STRING_LEN):
        fill = _word(rnd, n - len(w))
        return w + fill if op == "prefix" else fill + w

    def constraint(self, rnd, covered: bool) -> tuple[list[Constraint], tuple]:
        """The constraints on this attribute and a spec for planting."""
        name, type_ = self.key
        if type_ in DOMAIN:
            if covered:
                region = rnd.randrange(len(self.ranges))
                lo, hi = self.ranges[region]
                kind = rnd.choices(range(3), KIND_WEIGHTS)[0]
                if kind == 0:
                    v = self.inside(rnd, lo, hi)
                    self.eq_values.append(v)
                    return [Constraint(name, type_, "=", v)], ("eq", v, region)
                if kind == 1:
                    while True:
                        a, b = sorted((self.inside(rnd, lo, hi), self.inside(rnd, lo, hi)))
                        if a < b:
                            break
                    lo, hi = a, b
                return [Constraint(name, type_, ">=", lo), Constraint(name, type_, "<=", hi)], ("range", lo, hi, region)
            while True:
                v = self.outside(rnd)
                if v not in self.used:
                    break
            self.used.add(v)
            self.eq_values.append(v)
            return [Constraint(name, type_, "=", v)], ("eq", v, None)
        if covered:
            region = rnd.randrange(len(self.patterns))
            op, w = self.patterns[region]
            kind = rnd.choices(range(3), KIND_WEIGHTS)[0]
            if kind == 0:
                v = self.under(rnd, op, w)
                self.eq_values.append(v)
                return [Constraint(name, type_, "=", v)], ("eq", v, region)
            if kind == 1:
                w = self.under(rnd, op, w, rnd.randint(3, 5))
            return [Constraint(name, type_, op, w)], (op, w, region)
        while True:
            v = _word(rnd, STRING_LEN)
            if self.plain(v) and v not in self.used:
                break
        self.used.add(v)
        self.eq_values.append(v)
        return [Constraint(name, type_, "=", v)], ("eq", v, None)

    def witness(self, rnd, spec):
        """A value satisfying the planted spec."""
        if spec[0] == "eq":
            return spec[1]
        if spec[0] == "range":
            return self.inside(rnd, spec[1], spec[2])
        return self.under(rnd, spec[0], spec[1])

    def near(self, rnd, spec):
        """A value of a near-miss event: in the base range or pattern of the
        subscription's constraint, or its `=` value if it is uncovered."""
        u = rnd.random()
        if u < HOT:
            region = spec[-1]
            if region is None:
                return spec[1]
            if self.type in DOMAIN:
                return self.inside(rnd, *self.ranges[region])
            return self.under(rnd, *self.patterns[region])
        if u < HOT + EXISTING and self.eq_values:
            return rnd.choice(self.eq_values)
        if self.type in DOMAIN:
            return _number(self.type, rnd.uniform(0, DOMAIN[self.type]))
        return _word(rnd, STRING_LEN)


def generate(p: float, subscriptions: int = 1000, events: int = 2000, seed: int = 1) -> Workload:
    """Seed 000's Table 5-2 workload at covering probability p (module docstring)."""
    shape = random.Random(f"subsum-summaries:{seed}:shape")
    values = random.Random(f"subsum-summaries:{seed}:{p!r}:values")
    attrs_ = {key: _Attr(key, shape) for key in SCHEMA}
    subs, specs, covered = [], [], 0
    for j in range(subscriptions):
        keys = sorted(shape.sample(NUMERIC, NUMERIC_PER_SUB) + shape.sample(STRINGS, STRING_PER_SUB))
        coins = [shape.random() for _ in keys]  # p-independent: covered sets nest as p grows
        constraints, spec = [], {}
        for key, u in zip(keys, coins):
            cs, s = attrs_[key].constraint(values, u < p)
            constraints += cs
            spec[key] = s
            covered += u < p
        subs.append((f"s{j}", Subscription(frozenset(constraints))))
        specs.append(spec)
    rnd = random.Random(f"subsum-summaries:{seed}:{p!r}:events")
    out, planted = [], 0
    for _ in range(events):
        spec = rnd.choice(specs) if specs else {}
        if rnd.random() < PLANTED:
            planted += 1
            attrs_list = [Attribute(k[0], k[1], attrs_[k].witness(rnd, s)) for k, s in spec.items()]
        else:
            attrs_list = [Attribute(k[0], k[1], attrs_[k].near(rnd, s)) for k, s in spec.items()]
        out.append(Event(tuple(attrs_list)))
    base = {f"{k[0]}:{k[1]}": (a.ranges if k[1] in DOMAIN else a.patterns) for k, a in attrs_.items()}
    total = subscriptions * (NUMERIC_PER_SUB + STRING_PER_SUB)
    return Workload(p, seed, subs, out, covered / total if total else 0.0, planted, base)


# -- measurements ------------------------------------------------------------------

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
    from subsum.impl.summary.normalize import NUMERIC as NUM, abstraction, interval_covers, pattern_covers

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


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(w: Workload, repeat: int, log: Callable[[str], None]) -> tuple[dict, list[str]]:
    from subsum.impl.matching import make_engine
    from subsum.impl.summary import IdLayout, OwnerSummary
    from subsum.impl.summary import wire
    from subsum.impl.summary.stats import formula_size

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

    # Sizes.
    formula = formula_size(summary)
    binary = len(wire.to_bytes(summary))
    raw_formula = S * THESIS_SUB_BYTES
    raw_jsonl = jsonl_bytes(w.subscriptions)
    rows = summary.rows()
    num = [r for k, r in rows.items() if k[1] in DOMAIN]
    strs = [r for k, r in rows.items() if k[1] not in DOMAIN]
    stored = siena_stored(w.subscriptions)
    siena = stored * THESIS_SUB_BYTES

    # Correctness and false positives (untimed).
    exact = engine.match_batch(w.events)
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
    if len(problems) > 20:
        problems = problems[:20] + [f"p={w.p}: … and {len(problems) - 20} more"]

    # Throughput (timed): the same events, the same subscriptions.
    match, recheck, events = summary.match, owner.recheck, w.events
    t_sum = _best(lambda: [match(e) for e in events], repeat)
    t_re = _best(lambda: [recheck(e, match(e)) for e in events], repeat)
    t_idx = _best(lambda: engine.match_batch(events), repeat)

    eps = lambda t: E / t if t > 0 else float("inf")  # noqa: E731
    row = {
        "p": w.p, "subscriptions": S, "events": E, "seed": w.seed, "repeat": repeat,
        "covered_drawn": round(w.covered_drawn, 4), "covering_realized": round(covering_share(summary), 4),
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
        "planted_events": w.planted, "true_pairs": true_pairs, "reported_pairs": reported, "false_pairs": false,
        "fp_share": round(false / reported, 4) if reported else 0.0,
        "events_with_fp_share": round(with_fp / E, 4) if E else 0.0,
        "candidates_per_event": round(reported / E, 3) if E else 0.0,
        "matches_per_event": round(true_pairs / E, 3) if E else 0.0,
        "build_summary_s": round(build_summary, 4), "build_indexed_s": round(build_indexed, 4),
        "summary_s": round(t_sum, 5), "summary_recheck_s": round(t_re, 5), "indexed_s": round(t_idx, 5),
        "summary_eps": round(eps(t_sum), 1), "summary_recheck_eps": round(eps(t_re), 1), "indexed_eps": round(eps(t_idx), 1),
        "summary_vs_indexed": round(t_idx / t_sum, 3) if t_sum else "",
        "recheck_vs_indexed": round(t_idx / t_re, 3) if t_re else "",
        "disagreements": len(problems),
    }
    log(f"p={w.p}: covering {row['covering_realized']:.3f} (drawn {row['covered_drawn']:.3f}), {row['rows']} rows; "
        f"summary {row['summary_formula_bytes']:,} B formula / {binary:,} B binary vs raw {raw_formula:,} B / "
        f"{raw_jsonl:,} B JSONL; FP {row['fp_share']:.1%} of {reported} reported pairs; "
        f"summary {row['summary_eps']:,.0f} ev/s, +recheck {row['summary_recheck_eps']:,.0f}, "
        f"indexed {row['indexed_eps']:,.0f}" + (f"; {len(problems)} DISAGREEMENTS" if problems else ""))
    return row, problems


def measure_merged(p: float, subscriptions: int, seed: int, log: Callable[[str], None], brokers: int = BROKERS) -> dict:
    """The thesis's multi-broker view (seed 000 §4.3.1, §6.5): `brokers`
    brokers, each with its own workload at covering probability p (seeds
    seed*1000 + b), summarized and merged into one summary (DEF-SUM-13).
    The merge credits no covering across brokers beyond what cover-or-merge
    and range union find, as in the thesis's model."""
    from subsum.impl.summary import IdLayout, OwnerSummary, wire
    from subsum.impl.summary.stats import formula_size

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


# -- report --------------------------------------------------------------------------

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


def _plots(rows: list[dict], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ps = [r["p"] for r in rows]
    S = rows[0]["subscriptions"] if rows else 0
    paths = []

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
    fig.tight_layout()
    paths.append(out / "sizes.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax.plot(ps, [100 * r["fp_share"] for r in rows], "o-", label="false share of reported (event, sub) pairs")
    ax.plot(ps, [100 * r["events_with_fp_share"] for r in rows], "s--", label="events with >= 1 false positive")
    ax.plot(ps, [100 * r["covering_realized"] for r in rows], "^:", color="grey", label="realized covering share")
    _style(ax, "%", "false positives before the owner's re-check", ylim=(0, 100))
    bx.plot(ps, [r["candidates_per_event"] for r in rows], "o-", label="summary candidates")
    bx.plot(ps, [r["matches_per_event"] for r in rows], "s--", label="true matches")
    _style(bx, "subscriptions per event", "candidates vs true matches")
    fig.tight_layout()
    paths.append(out / "false_positives.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    for field, label, style in (("summary_eps", "Summary.match", "o-"),
                                ("summary_recheck_eps", "Summary.match + owner recheck", "s-"),
                                ("indexed_eps", "indexed engine match_batch", "^--")):
        ax.plot(ps, [r[field] for r in rows], style, label=label)
    _style(ax, "events/s", f"throughput, S={S}, E={rows[0]['events'] if rows else 0}, best of {rows[0]['repeat'] if rows else 0}")
    bx.plot(ps, [r["summary_vs_indexed"] for r in rows], "o-", label="summary / indexed")
    bx.plot(ps, [r["recheck_vs_indexed"] for r in rows], "s-", label="summary + recheck / indexed")
    _style(bx, "speed relative to indexed (above 1: faster)", "throughput ratio", unity=True)
    fig.tight_layout()
    paths.append(out / "throughput.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


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


def run(out_dir: Path, *, probabilities=PROBABILITIES, subscriptions: int = 1000, events: int = 2000,
        repeat: int = 3, seed: int = 1, quick: bool = False, log: Callable[[str], None] = print) -> dict:
    """The whole benchmark: writes summaries.csv, sizes.png, false_positives.png,
    throughput.png and summary.json into out_dir; returns the summary dict."""
    if quick:
        subscriptions, events, repeat = min(subscriptions, 200), min(events, 200), 1
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows, disagreements = [], []
    for p in probabilities:
        t0 = time.perf_counter()
        w = generate(p, subscriptions, events, seed)
        log(f"p={p}: generated S={subscriptions} E={events} ({w.planted} planted) in {time.perf_counter() - t0:.1f}s")
        row, problems = measure(w, repeat, log)
        row.update(measure_merged(p, subscriptions, seed, log))
        rows.append(row)
        disagreements += problems
    with open(out / "summaries.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    plots = _plots(rows, out)
    findings = assess(rows, disagreements)
    summary = {
        "seconds": round(time.perf_counter() - started, 1),
        "parameters": {"probabilities": list(probabilities), "subscriptions": subscriptions, "events": events,
                       "repeat": repeat, "seed": seed, "quick": quick, "schema": [f"{n}:{t}" for n, t in SCHEMA],
                       "numeric_per_subscription": NUMERIC_PER_SUB, "string_per_subscription": STRING_PER_SUB,
                       "brokers_in_id_layout": BROKERS, "planted": PLANTED, "hot": HOT, "existing": EXISTING,
                       "covered_kind_weights": list(KIND_WEIGHTS), "range_share": RANGE_SHARE, "string_len": STRING_LEN},
        "rows": rows,
        "findings": findings,
        "disagreements": disagreements,
        "files": [str(out / "summaries.csv"), *map(str, plots), str(out / "summary.json")],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(f"wrote {', '.join(summary['files'])} in {summary['seconds']}s")
    if disagreements:
        log("DISAGREEMENTS: " + "; ".join(disagreements))
    return summary


if __name__ == "__main__":  # python -m subsum.bench.summaries [--quick] [OUT]
    import sys

    args = sys.argv[1:]
    result = run(Path(next((a for a in args if not a.startswith("--")), "benchmarks/results/summaries")),
                 quick="--quick" in args)
    print(markdown_table(result["rows"]))
    sys.exit(1 if result["disagreements"] else 0)
