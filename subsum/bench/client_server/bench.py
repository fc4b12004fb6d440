"""The client-server benchmark, `subsum bench client-server` (issue 19; seed
003 §5; spec/10-client-server.md DEF-CS-4; benchmarks/README.md).

The thesis's two series on its driver (`run_client_server`), each point
repeated over seeds, reported as a mean with a 95% confidence interval
(Student's t, `subsum.bench.intervals`):

- **series 1**, LFU replacement, the four request policies, against brokers
  N = 5 … 50, cache slots K = 5 … 50, request rate λ = 0.05 … 1.5 and
  message rate μ = 0.05 … 0.5 (one varied, the others at their defaults
  N = 10, K = 10, λ = μ = 0.05);
- **series 2**, Server-Cache requests, the four replacement policies,
  against N = 5 … 50 and K = 10 … 80.

Beside them: the corner N = K = 50 (varied = "corner") the thesis
predicts 70–85% hit for, and SS's other reading of an interested broker
(every past requester; series "1-ss-ever") against N, K and λ, where the
default asks the requesters of the same step (spec/10).

A point's runs use the seeds `seed`, `seed + 1`, … (five in the full
run, one with --quick; `seed` is 1 unless given).

The runs are served by the direct driver (`client_server_direct`: the same
schedule and caches, requests served by walking the tree), several times
faster than the simulator at the thesis's 3×10^5 requests a run. The
simulator's protocol runs beside it, and must report the same, at every
point of a --quick run and at the defaults' points of a full one; a
difference is a disagreement (exit 1). Both engines' times are compared
run for run (`engines`, issue 52's rule: the simulator within 2× before the
direct driver can go).

The thesis's numbers (quoted in its text; its plots are lost) go beside
ours in the plots and in summary.json, each with a verdict computed by
`subsum.fidelity.verdict`'s rule (benchmarks/FIDELITY.md has every statement).
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import time
from pathlib import Path
from typing import Callable

import attrs

from subsum.fidelity import verdict as rule
from subsum.bench.intervals import mean_ci
from subsum.bench.output import pyplot, resumable_runs, save_figure, stored_runs, write_csv
from subsum.core.names import CACHE_POLICIES, REQUEST_POLICIES, REQUEST_PROCESSES
from subsum.impl.network.workloads.client_server import SS_MEMORY, run_client_server
from subsum.impl.network.workloads.client_server_direct import run_client_server_direct

DEFAULTS = {"brokers": 10, "slots": 10, "lam": 0.05, "mu": 0.05}
LABELS = {"brokers": "brokers N", "slots": "cache slots K", "lam": "request rate λ", "mu": "message rate μ"}
#: the corner point N = K = 50 (seed 003 §5.3.1 predicts 70–85% hit there): varied = "corner", value = 50
CORNER = {"brokers": 50, "slots": 50}
#: SS's other reading, every past requester interested (ss_memory None), run against these knobs
SS_EVER_KNOBS = ("brokers", "slots", "lam")


@attrs.frozen
class Sweep:
    series1: dict[str, tuple]
    series2: dict[str, tuple]
    runs: int  # seeds per point
    steps: int

    def seeds(self, first: int) -> tuple[int, ...]:
        """The seeds of a point's runs: `first` and the `runs` − 1 after it."""
        return tuple(range(first, first + self.runs))


#: The thesis's points (seed note 003 §4.4): N = 5, 10, …, 50; K up to 50
#: (series 1) and 80 (series 2), and K = 100, the conclusion's 0.4·M with
#: M ≈ 250 messages a run (K = 40 is 0.4·M with the text's M ≈ 100); λ from
#: 0.05 to 1.5; μ up to 0.5. Five seeds a point.
FULL = Sweep({"brokers": tuple(range(5, 55, 5)), "slots": (5, 10, 20, 30, 40, 50, 100), "lam": (0.05, 0.25, 0.5, 1.0, 1.5),
              "mu": (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)},
             {"brokers": tuple(range(5, 55, 5)), "slots": (10, 20, 30, 40, 50, 60, 70, 80, 100)}, 5, 5000)
QUICK = Sweep({"brokers": (5, 20), "slots": (5, 20), "lam": (0.05, 0.5), "mu": (0.05, 0.4)},
              {"brokers": (5, 20), "slots": (10, 40)}, 1, 300)

#: what the thesis's text says (seed note 003 §3.3): key, claim, value, and the range
#: the text states (None: the rule's ±15%); "near 0" is read as at most 0.05
THESIS = (
    ("server_delay_50", "Server: about 6 hops per request at 50 brokers", 6.0, None),
    ("soha_gain_50", "SOHA: about one hop less than Server at 50 brokers", 1.0, None),
    ("ss_overhead_50", "SS: overhead almost 9 hops per request at 50 brokers", 9.0, None),
    ("soha_overhead_50", "SOHA: overhead around 0.2 at 50 brokers", 0.2, None),
    ("best_hit_50", "hit reaches about 45% at 50 brokers (the best policy)", 0.45, None),
    ("soha_hit_k50", "SOHA: hit about 50% at 50 slots (10 brokers)", 0.50, None),
    ("best_hit_10_10", "hit about 18% at 10 brokers and 10 slots (the best policy)", 0.18, None),
    ("hit_mu_0_3", "hit near 0 for μ > 0.3 (the best policy, μ = 0.4)", 0.0, (0.0, 0.05)),
    ("lfu_gain_50", "series 2: LFU about 0.2 hops below the others at 50 brokers", 0.2, None),
    ("hit_k80", "series 2: hit up to 90% at 80 slots (the best policy)", 0.90, None),
    ("delay_cut_k80", "series 2: delay reduction over 65% at 80 slots (against Server's delay)", 0.65, (0.65, 1.0)),
)


#: The simulator must serve a run within this many times the direct driver's time before the driver can go (issue 52)
ENGINE_TARGET = 2.0
ENGINE_RULE = ("each run served by both engines gives the ratio of their wall times (simulator / direct, the same "
               "options and seed, each in a worker process of the same run); within the target when the mean ratio is at "
               "most ENGINE_TARGET, with confidence when the upper end of its 95% interval is")


def run_one(task: tuple[str, dict]) -> dict:
    """One run's report, on the direct driver or on the simulator (a worker process's job), with the wall time it
    took as `run_seconds` (not part of the report the engines must agree on)."""
    driver, options = task
    started = time.perf_counter()
    report = run_client_server_direct(**options) if driver == "direct" else run_client_server(**options)[1]
    return {**report, "run_seconds": round(time.perf_counter() - started, 4)}


def without_time(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "run_seconds"}


def engines(pairs: list[tuple[float, float]]) -> dict:
    """The simulator against the direct driver, run for run (`ENGINE_RULE`): (simulator seconds, direct seconds) pairs."""
    ratios = [sim / direct for sim, direct in pairs if direct > 0]
    if not ratios:
        return {"pairs": 0, "rule": ENGINE_RULE, "target": ENGINE_TARGET, "verdict": "not measured"}
    mean, half = mean_ci(ratios) if len(ratios) > 1 else (ratios[0], float("inf"))  # one run: no interval
    mean, half = round(mean, 2), round(half, 2)
    return {"pairs": len(ratios), "simulator_over_direct": mean, "ci95": half, "max": round(max(ratios), 2),
            "simulator_seconds": round(sum(s for s, _ in pairs), 1), "direct_seconds": round(sum(d for _, d in pairs), 1),
            "target": ENGINE_TARGET, "rule": ENGINE_RULE, "verdict": engines_verdict(mean, half)}


def engines_verdict(mean: float, half: float) -> str:
    """`ENGINE_RULE` on the mean ratio and the half-width of its 95% interval."""
    return "within with confidence" if mean + half <= ENGINE_TARGET else "within" if mean <= ENGINE_TARGET else "not within"


def run(out_dir, *, quick: bool = False, seed: int = 1, request_process: str = REQUEST_PROCESSES[0], workers: int | None = None,
        resume: bool = False, log: Callable[[str], None] = print) -> dict:
    """Both series, each point run with the seeds `seed`, `seed` + 1, …,
    under the request process (DEF-CS-4), in `workers` processes (the full
    run: one per core unless given; --quick: this process); writes client_server.csv, series1.png, series2.png
    and summary.json into out_dir. Each finished run is kept in
    out_dir/runs.jsonl until the whole bench is done; `resume` reuses the
    runs kept there by an interrupted run instead of starting afresh."""
    sweep = QUICK if quick else FULL
    seeds = sweep.seeds(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows: list[dict] = []
    disagreements: list[str] = []
    pairs: list[tuple[float, float]] = []  # (simulator, direct) seconds of each run both engines served
    jobs = [("1", knob, value, policy, "lfu") for knob, values in sweep.series1.items() for value in values for policy in REQUEST_POLICIES]
    jobs += [("2", knob, value, "sc", cache) for knob, values in sweep.series2.items() for value in values for cache in CACHE_POLICIES]
    jobs += [("2", "slots", 10, "server", "lfu")]  # Server's delay, the baseline of the delay cut
    jobs += [("1", "corner", 50, policy, "lfu") for policy in REQUEST_POLICIES] + [("2", "corner", 50, "sc", c) for c in CACHE_POLICIES]
    jobs += [("1-ss-ever", knob, value, "ss", "lfu") for knob in SS_EVER_KNOBS if knob in sweep.series1 for value in sweep.series1[knob]]
    tasks = []  # (driver, options): every seed of every job on the direct driver; some on the simulator too
    for series, knob, value, policy, cache in jobs:
        settings = point_settings(knob, value)
        options = dict(policy=policy, cache_policy=cache, brokers=settings["brokers"], slots=settings["slots"], lam=settings["lam"],
                       mu=settings["mu"], steps=sweep.steps, request_process=request_process,
                       ss_memory=None if series == "1-ss-ever" else SS_MEMORY)
        tasks += [("direct", {**options, "seed": s}) for s in seeds]
        if quick or value == DEFAULTS.get(knob):  # the simulator's protocol must report the same, run for run
            tasks.append(("simulator", {**options, "seed": seeds[0]}))
    store = out / "runs.jsonl"
    if not resume:
        store.unlink(missing_ok=True)
    elif store.is_file():
        log(f"resuming: {len(stored_runs(store))} runs already in {store}")
    reports = resumable_runs(run_one, tasks, workers or (1 if quick else os.cpu_count() or 1), store)
    for k, (series, knob, value, policy, cache) in enumerate(jobs, 1):
        settings = point_settings(knob, value)
        runs = [next(reports) for _ in seeds]
        if quick or value == DEFAULTS.get(knob):
            simulated = next(reports)
            pairs.append((simulated["run_seconds"], runs[0]["run_seconds"]))
            if without_time(simulated) != without_time(runs[0]):
                disagreements.append(f"series {series}, {knob} = {value}, {policy}/{cache}, seed {seeds[0]}: "
                                     f"the simulator reports {without_time(simulated)}, the direct driver {without_time(runs[0])}")
        row = {"series": series, "varied": knob, "value": value, "policy": policy, "cache_policy": cache, **settings,
               "steps": sweep.steps, "seeds": len(seeds), "requests": round(statistics.fmean(r["requests"] for r in runs))}
        for metric in ("delay", "overhead", "hit"):
            row[metric], row[f"{metric}_ci95"] = mean_ci([r[metric] for r in runs])
        rows.append(row)
        log(f"[{k}/{len(jobs)}] series {series}, {knob} = {value}, {policy}/{cache}: delay {row['delay']} ± {row['delay_ci95']}, "
            f"overhead {row['overhead']}, hit {row['hit']}")
    write_csv(out / "client_server.csv", rows)
    parameters = {"defaults": DEFAULTS, "series1": sweep.series1, "series2": sweep.series2, "seeds": list(seeds), "steps": sweep.steps,
                  "quick": quick, "request_process": request_process, "ss_memory": SS_MEMORY, "corner": CORNER,
                  "ss_ever_knobs": SS_EVER_KNOBS}
    speed = engines(pairs)
    log(f"engines: the simulator took {speed.get('simulator_over_direct')} ± {speed.get('ci95')} times the direct driver's time "
        f"over {speed['pairs']} runs served by both (target {ENGINE_TARGET}: {speed['verdict']})")
    summary = write_report(out, rows, parameters, disagreements, round(time.perf_counter() - started, 1), speed)
    store.unlink(missing_ok=True)  # every run is in the CSV now
    log(f"wrote {', '.join(summary['files'])} in {summary['seconds']}s")
    return summary


def write_report(out: Path, rows: list[dict], parameters: dict, disagreements: list[str], seconds: float,
                 speed: dict | None = None) -> dict:
    """The verdicts, series1.png, series2.png and summary.json of a run's rows (`speed`: the engines' times, `engines`)."""
    verdicts = compare(rows)
    plots = [plot_series(rows, "1", REQUEST_POLICIES, "policy", parameters["series1"], out / "series1.png", verdicts),
             plot_series(rows, "2", CACHE_POLICIES, "cache_policy", parameters["series2"], out / "series2.png", verdicts)]
    files = [str(out / "client_server.csv"), *map(str, plots), str(out / "summary.json")]
    summary = {"seconds": seconds, "parameters": parameters, "thesis": verdicts, "points": [point_json(r) for r in rows],
               "disagreements": disagreements, "engines": speed or engines([]), "files": files}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


def report_again(out_dir) -> dict:
    """Redo the verdicts, plots and summary.json of a finished run from its
    client_server.csv and summary.json (`--report-only`), without running
    anything: its parameters, run time and disagreements are kept."""
    out = Path(out_dir)
    try:
        rows = read_rows(out / "client_server.csv")
        before = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        parameters = before["parameters"]
        speed = before.get("engines")
        if speed is not None and not (isinstance(speed, dict) and isinstance(speed.get("pairs"), int)
                                      and (speed["pairs"] == 0 or all(isinstance(speed.get(k), (int, float)) for k in
                                                                      ("simulator_over_direct", "ci95", "max", "target")))):
            raise ValueError(f"field 'engines' is not what a run writes: {speed!r}")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{out}: no finished client-server run to report again ({error})") from None
    for rows_series, knobs in (("series1", parameters["series1"]), ("series2", parameters["series2"])):
        parameters[rows_series] = {k: tuple(v) for k, v in knobs.items()}
    return write_report(out, rows, parameters, before.get("disagreements", []), before.get("seconds", 0.0), speed)


#: the CSV's columns that are names, not numbers ("1", "2", "1-ss-ever" are series names)
TEXT_COLUMNS = ("series", "varied", "policy", "cache_policy")
#: the columns a run writes, each a number but the names
COLUMNS = (*TEXT_COLUMNS[:2], "value", *TEXT_COLUMNS[2:], "brokers", "slots", "lam", "mu", "steps", "seeds", "requests",
           "delay", "delay_ci95", "overhead", "overhead_ci95", "hit", "hit_ci95")


def read_rows(path: Path) -> list[dict]:
    """A finished run's client_server.csv, every number parsed; a missing
    column or a cell that is not a number is an error naming the line."""
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}: no column {', '.join(missing)}")
        rows = []
        for line, raw in enumerate(reader, 2):
            row = {k: v if k in TEXT_COLUMNS else csv_value(v) for k, v in raw.items()}
            bad = [c for c in COLUMNS if c not in TEXT_COLUMNS and not isinstance(row[c], (int, float))]
            if bad:
                raise ValueError(f"{path}:{line}: field {bad[0]!r} is not a number: {row[bad[0]]!r}")
            rows.append(row)
    return rows


def csv_value(text: str):
    """A CSV cell as the run wrote it: an int, a float, or the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def point_settings(knob: str, value) -> dict:
    """A point's N, K, λ and μ: the defaults with one varied (or the corner N = K = 50)."""
    return {**DEFAULTS, **CORNER} if knob == "corner" else {**DEFAULTS, knob: value}


def point_json(row: dict) -> dict:
    """A CSV row as summary.json gives it: each metric's mean and 95% half-width over the seeds."""
    metrics = ("delay", "overhead", "hit")
    out = {k: v for k, v in row.items() if k not in metrics and not k.endswith("_ci95")}
    return {**out, **{m: {"mean": row[m], "ci95": row[f"{m}_ci95"]} for m in metrics}}


def point(rows: list[dict], series: str, knob: str, value, policy: str | None = None, cache: str | None = None) -> list[dict]:
    return [r for r in rows if r["series"] == series and r["varied"] == knob and r["value"] == value
            and (policy is None or r["policy"] == policy) and (cache is None or r["cache_policy"] == cache)]


def compare(rows: list[dict]) -> list[dict]:
    """Each quoted thesis number beside ours at the nearest point we ran,
    with the verdict of `subsum.fidelity.verdict`'s rule (within the stated
    range or ±15%: matches; else differs; not reproduced if not run)."""
    def one(series, knob, value, metric, policy=None, cache=None, best=False):
        found = point(rows, series, knob, value, policy, cache)
        if not found:
            return None
        values = [r[metric] for r in found]
        return max(values) if best else values[0]

    n_max = max((r["value"] for r in rows if r["series"] == "1" and r["varied"] == "brokers"), default=None)
    # the thesis's 50 and 80 slots, or the largest K run below them (K = 100, 0.4·M, is a point of its own)
    k_max1 = max((r["value"] for r in rows if r["series"] == "1" and r["varied"] == "slots" and r["value"] <= 50), default=None)
    k_max2 = max((r["value"] for r in rows if r["series"] == "2" and r["varied"] == "slots" and r["value"] <= 80), default=None)
    n_max2 = max((r["value"] for r in rows if r["series"] == "2" and r["varied"] == "brokers"), default=None)
    mu_high = [r["value"] for r in rows if r["series"] == "1" and r["varied"] == "mu" and r["value"] > 0.3]
    server_50, soha_50 = one("1", "brokers", n_max, "delay", "server"), one("1", "brokers", n_max, "delay", "soha")
    lfu_50 = one("2", "brokers", n_max2, "delay", cache="lfu")
    others_50 = [one("2", "brokers", n_max2, "delay", cache=c) for c in ("fifo", "regdeg", "lru")]
    sc_k80 = min((r["delay"] for r in point(rows, "2", "slots", k_max2)), default=None)
    server_10 = one("2", "slots", 10, "delay", "server")
    ours = {
        "server_delay_50": server_50,
        "soha_gain_50": None if server_50 is None or soha_50 is None else round(server_50 - soha_50, 4),
        "ss_overhead_50": one("1", "brokers", n_max, "overhead", "ss"),
        "soha_overhead_50": one("1", "brokers", n_max, "overhead", "soha"),
        "best_hit_50": one("1", "brokers", n_max, "hit", best=True),
        "soha_hit_k50": one("1", "slots", k_max1, "hit", "soha"),
        "best_hit_10_10": one("1", "brokers", 10, "hit", best=True) if point(rows, "1", "brokers", 10) else one("1", "slots", 10, "hit", best=True),
        "hit_mu_0_3": one("1", "mu", min(mu_high), "hit", best=True) if mu_high else None,
        "lfu_gain_50": None if lfu_50 is None or None in others_50 else round(statistics.fmean(others_50) - lfu_50, 4),
        "hit_k80": one("2", "slots", k_max2, "hit", best=True),
        "delay_cut_k80": None if sc_k80 is None or not server_10 else round(1 - sc_k80 / server_10, 4),
    }
    verdicts = []
    for key, claim, thesis, band in THESIS:
        value = ours[key]
        verdict = rule.number_verdict(thesis, band, value)
        verdicts.append({"claim": claim, "thesis": thesis, "band": list(rule.band_of(thesis, band)), "ours": value, "verdict": verdict,
                         "where": {"server_delay_50": f"N = {n_max}", "soha_gain_50": f"N = {n_max}", "ss_overhead_50": f"N = {n_max}",
                                   "soha_overhead_50": f"N = {n_max}", "best_hit_50": f"N = {n_max}", "soha_hit_k50": f"K = {k_max1}",
                                   "best_hit_10_10": "N = K = 10", "hit_mu_0_3": f"μ = {min(mu_high) if mu_high else None}",
                                   "lfu_gain_50": f"N = {n_max2}", "hit_k80": f"K = {k_max2}", "delay_cut_k80": f"K = {k_max2}"}[key]})
    return verdicts


def plot_series(rows, series, lines, key, knobs, path, verdicts) -> Path:
    plt = pyplot()
    metrics = ("delay", "overhead", "hit") if series == "1" else ("delay", "hit")
    fig, axes = plt.subplots(len(metrics), len(knobs), figsize=(4.2 * len(knobs), 3.2 * len(metrics)), squeeze=False)
    for c, knob in enumerate(knobs):
        for r, metric in enumerate(metrics):
            ax = axes[r][c]
            drawn = [(series, line, line) for line in lines] + ([("1-ss-ever", "ss", "ss (ever)")] if series == "1" else [])
            for kept, line, label in drawn:
                mine = sorted((x for x in rows if x["series"] == kept and x["varied"] == knob and x[key] == line
                               and (series == "1" or x["policy"] == "sc")), key=lambda x: x["value"])
                if mine:
                    ax.errorbar([x["value"] for x in mine], [x[metric] for x in mine], yerr=[x[f"{metric}_ci95"] for x in mine],
                                marker="o", capsize=2, label=label, linestyle="--" if kept != series else "-")
            ax.set_xlabel(LABELS[knob])
            ax.set_ylabel(f"{metric} per request")
            ax.legend(fontsize=6)
    thesis_text = "\n".join(f"thesis: {v['claim']} ({v['thesis']}); ours {v['ours']} at {v['where']}: {v['verdict']}"
                            for v in verdicts if (series == "1") != v["claim"].startswith("series 2"))
    fig.suptitle(f"Seed 003 series {series} ({'LFU, four request policies' if series == '1' else 'Server-Cache, four replacement policies'}); "
                 "means over seeds, 95% intervals", fontsize=9)
    fig.text(0.01, 0.005, thesis_text, fontsize=6, va="bottom")
    return save_figure(fig, path, dpi=90, rect=(0, 0.04 + 0.012 * thesis_text.count("\n"), 1, 0.97))


def markdown_table(summary: dict) -> str:
    lines = ["| the thesis says | thesis | ours | where | verdict |", "|---|---|---|---|---|"]
    lines += [f"| {v['claim']} | {v['thesis']} | {v['ours']} | {v['where']} | {v['verdict']} |" for v in summary["thesis"]]
    speed = summary.get("engines") or engines([])
    if speed["pairs"]:
        lines += ["", f"Engines: over {speed['pairs']} runs served by both, the simulator took {speed['simulator_over_direct']} ± "
                      f"{speed['ci95']} times the direct driver's time (at most {speed['max']}); target {speed['target']}: {speed['verdict']}."]
    return "\n".join(lines)
