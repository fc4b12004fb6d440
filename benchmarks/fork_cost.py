"""What forking a mid-run network costs, as `subsum explore` forks one at
every move (issue 52's target: at most 20 µs at strawman, 3 brokers, 2
subscriptions, 1 event, 1 swap), beside the deep copy the explorer made
before brokers were actors, in one run on one machine.

    python benchmarks/fork_cost.py [--runs 7] [--seed 1] [--out-dir DIR] [--format text|json]

Each run takes the scope's initial state and makes 3 to 6 moves chosen by
its seed (seed, seed + 1, ...), so each run forks a different mid-run
state. On it, it times `Run.fork(share_random=True)` (what the explorer
calls) and the earlier copy, `copy.deepcopy` of the same run with the same
values shared (the explorer's `copy_run` before issue 52, kept here as the
peer), each as the median of 5 batches of 2,000 calls (timeit's: the
garbage collector paused while a batch runs). It writes fork-cost.csv (a row per run and
method), fork-cost.png (means with 95% intervals, the target dashed) and
fork-cost.json (means, intervals, the ratio and the verdict by the rule
stated in it) to --out-dir (default bench-out/fork-cost), all at the end.
Exit 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import timeit
from pathlib import Path
from typing import Any

from subsum.bench.intervals import mean_ci
from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.core.errors import InputError
from subsum.core.outputs import check_output_folder
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.state import State, moves, successor
from subsum.conformance.schedules.runs import Run

SCOPE = Scope("strawman", 3, 2, 1, 1)
TARGET_US = 20.0
RULE = ("the fork meets the target when the mean over the runs of each run's median time is at most the target, and "
        "meets it with confidence when the upper end of its 95% interval is too")
CALLS, BATCHES = 2_000, 5


def deep_copy(run: Run) -> Run:
    """The explorer's copy before issue 52: the whole run deep-copied, sharing the values no step changes."""
    net = run.net
    shared: list[Any] = [net.overlay.rng, getattr(net.transport._random, "__self__", None), *net._canonical.values()]
    shared += [payload for queue in net.transport.links.values() for _, _, _, payload in queue]
    return copy.deepcopy(run, {id(value): value for value in shared if value is not None})


def mid_run(seed: int) -> Run:
    """The scope's state after 3 to 6 moves chosen by `seed` (fewer if the scope ends first)."""
    rng = random.Random(seed)
    state = State.initial(SCOPE)
    for _ in range(rng.randint(3, 6)):
        enabled = list(moves(state, SCOPE))
        if not enabled:
            break
        state, _, _ = successor(state, rng.choice(enabled))
    return state.run


def median_us(call) -> float:
    return statistics.median(timeit.repeat(call, number=CALLS, repeat=BATCHES)) / CALLS * 1e6


def measure(runs: int, seed: int) -> list[dict]:
    rows = []
    for k in range(runs):
        run = mid_run(seed + k)
        for method, call in (("fork", lambda: run.fork(share_random=True)), ("deep copy", lambda: deep_copy(run))):
            rows.append({"seed": seed + k, "method": method, "microseconds": round(median_us(call), 3),
                         "in_flight": sum(len(q) for q in run.net.transport.links.values())})
    return rows


def summarise(rows: list[dict]) -> dict:
    by = {m: [r["microseconds"] for r in rows if r["method"] == m] for m in ("fork", "deep copy")}
    (fork, fork_half), (deep, deep_half) = mean_ci(by["fork"], 3), mean_ci(by["deep copy"], 3)
    verdict = "met with confidence" if fork + fork_half <= TARGET_US else "met" if fork <= TARGET_US else "not met"
    return {"scope": "strawman, 3 brokers, 2 subscriptions, 1 event, 1 swap", "rule": RULE, "target_us": TARGET_US,
            "fork_us": fork, "fork_ci95": fork_half, "deep_copy_us": deep, "deep_copy_ci95": deep_half,
            "deep_copy_over_fork": round(deep / fork, 1), "verdict": verdict}


def plot(summary: dict, path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.bar(["deep copy (before)", "fork"], [summary["deep_copy_us"], summary["fork_us"]],
           yerr=[summary["deep_copy_ci95"], summary["fork_ci95"]], capsize=6, color=["grey", "tab:blue"])
    ax.axhline(TARGET_US, linestyle="--", color="tab:red", label=f"target {TARGET_US:g} µs")
    ax.set_yscale("log")
    ax.set_ylabel("µs per copy of a mid-run network")
    ax.set_title(f"{summary['scope']}\nfork {summary['fork_us']} µs, {summary['deep_copy_over_fork']}× less: {summary['verdict']}",
                 fontsize=8)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="mid-run states, one per seed (at least 2)")
    parser.add_argument("--seed", type=int, default=1, help="the first run's seed; run k uses seed + k")
    parser.add_argument("--out-dir", default="bench-out/fork-cost")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    if args.runs < 2:
        parser.error("--runs: an interval needs at least 2 runs")
    out = Path(args.out_dir)
    try:
        check_output_folder(out)  # before the work: a bad folder is an error now, not after a minute of timing
    except InputError as error:
        parser.error(f"--out-dir: {error}")
    rows = measure(args.runs, args.seed)
    summary = summarise(rows)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "fork-cost.csv", rows, ("seed", "method", "microseconds", "in_flight"))
    plot(summary, out / "fork-cost.png")
    (out / "fork-cost.json").write_text(json.dumps({**summary, "runs": args.runs, "seed": args.seed}, indent=2) + "\n")
    if args.format == "json":
        print(json.dumps(summary, indent=2))
    else:
        print(f"fork {summary['fork_us']} ± {summary['fork_ci95']} µs, deep copy {summary['deep_copy_us']} ± "
              f"{summary['deep_copy_ci95']} µs ({summary['deep_copy_over_fork']}×); target {TARGET_US:g} µs: {summary['verdict']}")
        print(f"wrote {out}/fork-cost.csv, .png and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
