"""`subsum bench explore`: `subsum explore` beside `subsum fuzz reconfig` on
planted handler bugs (subsum.bench.planted; spec/12-exploration.md,
benchmarks/README.md).

Each planted bug is a broker subclass plugged in as a protocol. Both tools
run the real code paths, in this process, one after the other:
- explore: the bug's scope searched breadth first (deterministic: it is
  repeated `repeat` times for the timing only);
- fuzz: `subsum fuzz reconfig` with its defaults (a random tree of 6
  brokers, 8 subscriptions, churn 0.1, 60 steps), one run a seed, stopped at
  its first violation, which is then shrunk (for up to 10 s);
- fuzz on the scope's network: the same on a path of the scope's brokers.

Measured per run: seconds to the first counterexample (without shrinking),
its length in schedule operations (explore's as found, which is shortest in
moves; the fuzzer's as found and as shrunk), and, for explore, its moves
and the states searched. The units differ: a fuzz `deliver` operation
delivers up to 8 messages and a fuzz `fire` fires any timer early, where an
explore move is one delivery or the earliest timer.

Verdicts, per bug, by a stated rule: `explore finds it` holds when the
search found the planted bug's claim within its budget; `shorter` holds
when explore's counterexample has no more operations than the mean of the
fuzzer's shrunk ones (on either network); `faster` holds when explore's
mean time is below the lower end of the fuzzer's 95% interval.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import attrs

from subsum.bench.explore import ladder
from subsum.bench.intervals import mean_ci
from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.bench.planted import PLANTED, plugin
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore
from subsum.conformance.schedules.fuzz import Campaign, Drawing, fuzz

#: The scope each planted bug is explored in: the smallest where the bug shows (found by growing it).
SCOPES: dict[str, dict[str, Any]] = {"ForgetfulStrawman": dict(brokers=3, subscriptions=2, events=1, swaps=1),
          "HastyInformed": dict(brokers=3, subscriptions=1, events=1, swaps=1)}
TOOLS = ("explore", "fuzz", "fuzz-scope-network")
CSV_FIELDS = ("bug", "protocol", "claim", "tool", "seed", "found", "found_claim", "seconds", "operations", "shrunk_operations",
              "moves", "states")
LADDER_FIELDS = ("protocol", "brokers", "subscriptions", "events", "swaps", "complete", "kept", "states", "transitions", "depth",
                 "seconds", "states_per_second")
EXPLORE_BUDGET = 600.0
FUZZ_BUDGET = 60.0


@attrs.frozen
class Plan:
    bugs: tuple[str, ...]
    seeds: tuple[int, ...]
    repeat: int


def plan_for(quick: bool, seed: int, seeds: int, repeat: int) -> Plan:
    """Quick: the Strawman bug only, 3 fuzz seeds, explore once."""
    if quick:
        return Plan(("ForgetfulStrawman",), tuple(range(seed, seed + 3)), 1)
    return Plan(tuple(PLANTED), tuple(range(seed, seed + seeds)), repeat)


def explore_row(bug: str, repeat: int) -> dict:
    protocol, claim = PLANTED[bug]
    times, result = [], None
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(repeat):
            started = time.perf_counter()
            result = explore(Scope(plugin(bug), **SCOPES[bug]), budget=EXPLORE_BUDGET, out_dir=Path(scratch))
            result.raise_if_interrupted()
            times.append(time.perf_counter() - started)
    assert result is not None
    found = result.found[0] if result.found else None
    return {"bug": bug, "protocol": protocol, "claim": claim, "tool": "explore", "seed": None,
            "found": bool(found and found.violation.claim == claim), "found_claim": found.violation.claim if found else None,
            "seconds": round(sum(times) / len(times), 4), "seconds_runs": [round(t, 4) for t in times],
            "operations": len(found.schedule) if found else None, "shrunk_operations": len(found.schedule) if found else None,
            "moves": found.moves if found else None, "states": result.states}


def fuzz_row(bug: str, tool: str, seed: int) -> dict:
    protocol, claim = PLANTED[bug]
    with tempfile.TemporaryDirectory() as scratch:
        campaign = Campaign(budget=FUZZ_BUDGET, max_violations=1, replay_dir=Path(scratch))
        if tool == "fuzz":  # the fuzzer's own defaults
            result = fuzz(Drawing(protocol=plugin(bug), seed=seed), campaign)
        else:
            result = fuzz(Drawing(protocol=plugin(bug), seed=seed, topology="path", brokers=SCOPES[bug]["brokers"]), campaign)
    saved, found = result.lengths[0] if result.lengths else (None, None)
    return {"bug": bug, "protocol": protocol, "claim": claim, "tool": tool, "seed": seed,
            "found": bool(result.claims and result.claims[0] == claim), "found_claim": result.claims[0] if result.claims else None,
            "seconds": None if result.first_violation_seconds is None else round(result.first_violation_seconds, 4),
            "operations": found, "shrunk_operations": saved, "moves": None, "states": None}


def summarize(rows: list[dict], bug: str) -> dict:
    """Per tool: found share, mean seconds and operations with 95% intervals; the ratios to explore; the verdicts."""
    tools: dict[str, dict] = {}
    for tool in TOOLS:
        mine = [r for r in rows if r["bug"] == bug and r["tool"] == tool]
        hits = [r for r in mine if r["found"]]
        seconds = r_values(hits, "seconds_runs") if tool == "explore" else [r["seconds"] for r in hits]
        tools[tool] = {"runs": len(mine), "found": len(hits),
                       "seconds": mean_ci(seconds) if seconds else None,
                       "operations": mean_ci([r["operations"] for r in hits]) if hits else None,
                       "shrunk_operations": mean_ci([r["shrunk_operations"] for r in hits]) if hits else None}
    return {"bug": bug, "protocol": PLANTED[bug][0], "claim": PLANTED[bug][1], "scope": SCOPES[bug], "tools": tools,
            "ratios": ratios(tools), "verdicts": verdicts(tools)}


def r_values(rows: list[dict], key: str) -> list[float]:
    return [v for r in rows for v in r[key]]


def ratios(tools: dict) -> dict:
    """The fuzzer's mean over explore's, for time and for the shrunk counterexample's operations."""
    explored = tools["explore"]
    out = {}
    for tool in TOOLS[1:]:
        fuzzed = tools[tool]
        if explored["seconds"] and fuzzed["seconds"] and explored["seconds"][0] > 0:
            out[f"{tool}_seconds_over_explore"] = round(fuzzed["seconds"][0] / explored["seconds"][0], 3)
        if explored["operations"] and fuzzed["shrunk_operations"]:
            out[f"{tool}_shrunk_operations_over_explore"] = round(fuzzed["shrunk_operations"][0] / explored["operations"][0], 3)
    return out


def verdicts(tools: dict) -> dict:
    """The rules of the module's docstring, applied."""
    explored = tools["explore"]
    found = explored["found"] == explored["runs"] > 0
    out = {"explore finds it": "holds" if found else "differs"}
    for tool in TOOLS[1:]:
        fuzzed = tools[tool]
        if not (found and fuzzed["found"]):
            out[f"shorter than {tool}"] = out[f"faster than {tool}"] = "no data"
            continue
        out[f"shorter than {tool}"] = "holds" if explored["operations"][0] <= fuzzed["shrunk_operations"][0] else "differs"
        low = fuzzed["seconds"][0] - fuzzed["seconds"][1]
        out[f"faster than {tool}"] = "holds" if explored["seconds"][0] < low else "differs"
    return out


def run(out_dir, *, quick: bool = False, seed: int = 1, seeds: int = 5, repeat: int = 3, ladder_budget: float = 60.0,
        log: Callable[[str], None] = print) -> dict:
    """Run every planted bug under both tools, then grow each protocol's scope (`ladder`); write explore.csv,
    explore.png, ladder.csv, ladder.png and summary.json into out_dir."""
    plan = plan_for(quick, seed, seeds, repeat)
    protocols = ("strawman", "summaries") if quick else ladder.PROTOCOLS
    ladder_budget = min(ladder_budget, 2.0) if quick else ladder_budget
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows: list[dict] = []
    for bug in plan.bugs:
        log(f"{bug}: exploring {SCOPES[bug]} ({plan.repeat} time(s))")
        rows.append(explore_row(bug, plan.repeat))
        for tool in TOOLS[1:]:
            for s in plan.seeds:
                rows.append(fuzz_row(bug, tool, s))
            log(f"{bug}: {tool} with seeds {plan.seeds[0]}..{plan.seeds[-1]}: {sum(r['found'] for r in rows if r['tool'] == tool and r['bug'] == bug)} found")
    write_csv(out / "explore.csv", [{k: v for k, v in r.items() if k != "seconds_runs"} for r in rows], CSV_FIELDS)
    bugs = [summarize(rows, bug) for bug in plan.bugs]
    plot = _plot(bugs, out / "explore.png")
    grown = ladder.run_ladder(protocols, ladder_budget, log)
    write_csv(out / "ladder.csv", grown.tried, LADDER_FIELDS)
    ladder_plot = _plot_ladder(grown.tried, ladder_budget, out / "ladder.png")
    summary: dict[str, Any] = {
        "seconds": round(time.perf_counter() - started, 1),
        "parameters": {"quick": quick, "seed": seed, "seeds": list(plan.seeds), "repeat": plan.repeat, "ladder_budget": ladder_budget,
                       "explore_budget": EXPLORE_BUDGET, "fuzz_budget": FUZZ_BUDGET},
        "rules": {"explore finds it": "the search finds the planted bug's claim within its budget",
                  "shorter": "explore's counterexample has no more operations than the mean of the fuzzer's shrunk ones",
                  "faster": "explore's mean seconds are below the lower end of the fuzzer's 95% interval"},
        "bugs": bugs, "ladder_budget": ladder_budget, "largest_scopes": grown.largest,
        "growth": {"rule": ladder.GROWTH_RULE, "protocols": ladder.growth(grown.largest)},
        "files": [str(out / "explore.csv"), str(plot), str(out / "ladder.csv"), str(ladder_plot), str(out / "summary.json")],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(f"wrote {', '.join(summary['files'])} in {summary['seconds']}s")
    return summary


def _plot(bugs: list[dict], path: Path) -> Path:
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.25
    for k, tool in enumerate(TOOLS):
        xs = [i + (k - 1) * width for i in range(len(bugs))]
        secs = [b["tools"][tool]["seconds"] or (0.0, 0.0) for b in bugs]
        ops = [b["tools"][tool]["shrunk_operations"] or (0.0, 0.0) for b in bugs]
        left.bar(xs, [s[0] for s in secs], width, yerr=[s[1] for s in secs], label=tool, capsize=3)
        right.bar(xs, [o[0] for o in ops], width, yerr=[o[1] for o in ops], label=tool, capsize=3)
    for ax, title in ((left, "seconds to the first counterexample (95% CI)"), (right, "counterexample operations (fuzz: shrunk)")):
        ax.set_xticks(range(len(bugs)), [b["bug"] for b in bugs])
        ax.set_title(title, fontsize=9)
    left.set_yscale("log")
    right.legend(fontsize=8)
    return save_figure(fig, path)


def _plot_ladder(tried: list[dict], budget: float, path: Path) -> Path:
    """Each search tried: its states against its seconds, per protocol; the budget as a line."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, protocol in enumerate(dict.fromkeys(r["protocol"] for r in tried)):
        color = f"C{k}"
        done = [r for r in tried if r["protocol"] == protocol and r["complete"]]
        cut = [r for r in tried if r["protocol"] == protocol and not r["complete"]]
        ax.scatter([r["seconds"] for r in done], [r["states"] for r in done], label=protocol, s=18, marker="o", color=color)
        ax.scatter([r["seconds"] for r in cut], [r["states"] for r in cut], s=24, marker="x", color=color)
    ax.axvline(budget, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("seconds (x: cut by the budget, the dashed line)")
    ax.set_ylabel("states")
    ax.set_title("subsum explore: every scope tried while growing each protocol's scope", fontsize=9)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def markdown_table(summary: dict) -> str:
    lines = ["| bug | tool | found | seconds (95% CI) | operations | shrunk | verdicts |", "|---|---|---|---|---|---|---|"]
    for b in summary["bugs"]:
        for tool in TOOLS:
            t = b["tools"][tool]
            sec = f"{t['seconds'][0]} ± {t['seconds'][1]}" if t["seconds"] else "-"
            ops = f"{t['operations'][0]}" if t["operations"] else "-"
            shrunk = f"{t['shrunk_operations'][0]} ± {t['shrunk_operations'][1]}" if t["shrunk_operations"] else "-"
            verdict = "; ".join(f"{k}: {v}" for k, v in b["verdicts"].items()) if tool == "explore" else ""
            lines.append(f"| {b['bug']} | {tool} | {t['found']}/{t['runs']} | {sec} | {ops} | {shrunk} | {verdict} |")
    return "\n".join(lines) + "\n\n" + ladder.markdown_table(summary["largest_scopes"], summary["ladder_budget"])
