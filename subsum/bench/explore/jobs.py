"""`subsum bench explore-jobs`: the breadth-first search of `subsum explore`
on one process beside `--jobs 2` (spec/12 DEF-EXP-11, benchmarks/README.md).

Three searches of one scope, run in turn --repeat times (the order rotates
each round, so that a slow spell of the machine falls on each in turn):
- `one job`: today's default, sleep sets on;
- `one job, no sleep sets`: the same search the workers make, on one process;
- `2 jobs`: `explore(..., jobs=2)`.

Each is the real search (`conformance.explore.search.explore`), timed by
its own report. The speed-up of 2 jobs over each one-job search is the
mean of the per-round ratios with its 95% interval (Student's t). The
verdicts follow `RULES`: a speed-up *holds* when its interval's lower end
is at least `TARGET`, *holds at the mean* when only its mean is, and
*differs* otherwise; *identical results* holds when every run found the
same states, depth and verdict, and the two searches without sleep sets the
same transitions.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from subsum.bench.intervals import mean_ci
from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore

#: The speed-up the issue asks of --jobs 2 (issue 53).
TARGET = 1.6
#: Each search: its processes, and whether it keeps sleep sets.
SEARCHES = {"one job": (1, True), "one job, no sleep sets": (1, False), "2 jobs": (2, False)}
RULES = {"speed-up": f"holds if the 95% interval of the mean per-round ratio lies at or above {TARGET}; holds at the mean if only "
                     f"the mean does; differs otherwise",
         "identical results": "holds if every run found the same states, depth, completeness and violations, and the runs without "
                              "sleep sets (one job and 2 jobs) the same transitions"}
FIELDS = ("round", "search", "states", "transitions", "depth", "complete", "violations", "seconds", "states_per_second")
SCOPE = Scope("strawman", brokers=4, subscriptions=2, events=1, swaps=1)
QUICK_SCOPE = Scope("strawman", brokers=3, subscriptions=2, events=1, swaps=1)


def one_run(search: str, scope: Scope, round_: int) -> dict:
    jobs, sleep_sets = SEARCHES[search]
    result = explore(scope, budget=3600, jobs=jobs, sleep_sets=sleep_sets)
    result.raise_if_interrupted()
    return {"round": round_, "search": search, "states": result.states, "transitions": result.transitions, "depth": result.depth,
            "complete": result.complete, "violations": ";".join(f.violation.claim for f in result.found),
            "seconds": round(result.seconds, 3), "states_per_second": round(result.states_per_second, 1)}


def speedup(rows: list[dict], baseline: str) -> dict:
    """2 jobs' speed-up over `baseline`: the mean per-round ratio of seconds, its 95% half-width, and the verdict."""
    seconds = {(r["round"], r["search"]): r["seconds"] for r in rows}
    ratios = [seconds[(i, baseline)] / seconds[(i, "2 jobs")] for i in sorted({r["round"] for r in rows})]
    mean, half = mean_ci(ratios, 3)
    verdict = "holds" if mean - half >= TARGET else "holds at the mean" if mean >= TARGET else "differs"
    return {"baseline": baseline, "ratios": [round(r, 3) for r in ratios], "mean": mean, "half_width": half, "verdict": verdict}


def identical(rows: list[dict]) -> str:
    same = {(r["states"], r["depth"], r["complete"], r["violations"]) for r in rows}
    unreduced = {r["transitions"] for r in rows if r["search"] != "one job"}
    return "holds" if len(same) == 1 and len(unreduced) == 1 else "differs"


def run(out_dir, *, quick: bool = False, seed: int = 1, repeat: int = 5, log: Callable[[str], None] = print) -> dict:
    """Run the three searches `repeat` times each (quick: the 3-broker scope, 2 rounds); write jobs.csv, jobs.png and
    summary.json into out_dir; return the summary. `seed` orders the first round (the searches are deterministic)."""
    started = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    scope = QUICK_SCOPE if quick else SCOPE
    repeat = min(repeat, 2) if quick else repeat
    names = list(SEARCHES)
    rows = []
    for i in range(repeat):
        shift = (seed + i) % len(names)
        for search in names[shift:] + names[:shift]:
            rows.append(one_run(search, scope, i))
            log(f"  round {i + 1}/{repeat}, {search}: {rows[-1]['states']:,} states in {rows[-1]['seconds']} s")
    write_csv(out / "jobs.csv", rows, FIELDS)
    speedups = [speedup(rows, "one job"), speedup(rows, "one job, no sleep sets")]
    plot = _plot(rows, speedups, out / "jobs.png")
    summary = {"parameters": {"quick": quick, "seed": seed, "repeat": repeat, "scope": {"protocol": scope.protocol, **scope.describe()}, "target": TARGET},
               "rules": RULES, "states": rows[0]["states"], "speedups": speedups, "identical_results": identical(rows),
               "seconds_by_search": {s: mean_ci([r["seconds"] for r in rows if r["search"] == s], 3) for s in names},
               "seconds": round(time.perf_counter() - started, 1),
               "files": [str(out / "jobs.csv"), str(plot), str(out / "summary.json")]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _plot(rows: list[dict], speedups: list[dict], path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(SEARCHES)
    cis = [mean_ci([r["seconds"] for r in rows if r["search"] == s], 3) for s in names]
    ax.bar(names, [c[0] for c in cis], yerr=[c[1] for c in cis], capsize=4, color=["C0", "C1", "C2"])
    for k, s in enumerate(names):
        ax.scatter([k] * sum(r["search"] == s for r in rows), [r["seconds"] for r in rows if r["search"] == s], color="black", s=8,
                   zorder=3)
    ax.set_ylabel("seconds per search (mean, 95% CI; dots: rounds)")
    text = "; ".join(f"2 jobs / {s['baseline']}: {s['mean']:.2f} ± {s['half_width']:.2f} ({s['verdict']})" for s in speedups)
    ax.set_title(f"subsum explore --jobs 2, {rows[0]['states']:,} states\n{text}", fontsize=8)
    return save_figure(fig, path)


def markdown_table(summary: dict) -> str:
    lines = ["| 2 jobs over | speed-up (95% CI) | target | verdict |", "|---|---|---|---|"]
    lines += [f"| {s['baseline']} | {s['mean']:.2f} ± {s['half_width']:.2f} | {TARGET} | {s['verdict']} |" for s in summary["speedups"]]
    return "\n".join(lines) + f"\n\n{summary['states']:,} states; identical results: {summary['identical_results']}"
