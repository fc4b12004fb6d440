"""`subsum bench network --quick` of this checkout beside an earlier version,
in one run on one machine (issue 36's before and after).

    python benchmarks/network_versions.py --old-python /tmp/oldvenv/bin/python [--runs 3] [--out-dir DIR]

`--old-python` is a Python that imports an earlier subsum (and the same
dependencies), made as benchmarks/spark_versions.py says:

    git worktree add /tmp/oldwt 2f6a7ef
    .venv/bin/pip install --no-deps --no-build-isolation --target /tmp/oldpkg /tmp/oldwt
    python3 -m venv --without-pip /tmp/oldvenv
    printf '/tmp/oldpkg\\n%s\\n' "$(.venv/bin/python -c 'import site; print(site.getsitepackages()[0])')" \\
        > /tmp/oldvenv/lib/python3.11/site-packages/old.pth

Each run is the CLI, `subsum bench network --quick --format json --seed S`,
in its own process, old and new alternating, seeds 1 … --runs. From each run
it reads four figures: burst and paced event handling, each as a share of
the bare heapq loop measured in the same process, and fuzz schedules per
minute at 6 and at 20 brokers; it judges issue 36's absolute targets and
issue 52's ratio targets (burst at 1.5 times the old share, paced above
the old). Writes network-versions.csv (one row per run
and figure), network-versions.png (means with 95% intervals, the targets
dashed) and network-versions.json (means, intervals, new/old ratios, and
each target's verdict by the rule stated in it) to --out-dir (default
bench-out/network-versions), and only once every run has succeeded. Exits 2 on
bad arguments, 1 if either version's fuzzer found a violation, 3 if a run
failed otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from subsum.bench.intervals import mean_ci
from subsum.bench.output import pyplot, save_figure, write_csv

#: Issue 36's targets for the new version, absolute figures.
TARGETS = {"burst share of heapq": 0.15, "fuzz, 6 brokers (schedules/min)": 10_000, "fuzz, 20 brokers (schedules/min)": 2_500}
#: Issue 52's targets, new/old ratios of one figure: burst handling at 1.5 times the old share of the heapq loop,
#: paced handling better than the old (a ratio above 1).
RATIO_TARGETS = {"burst share of heapq": 1.5, "paced share of heapq": 1.0}
FIGURES = ("burst share of heapq", "paced share of heapq", "fuzz, 6 brokers (schedules/min)", "fuzz, 20 brokers (schedules/min)")
RULE = ("a target is met when the new version's mean over the runs reaches it, and met with confidence when the "
        "lower end of its 95% interval does; a ratio target reads the new/old ratios of the runs, seed by seed (old and "
        "new run the same seed one after the other), and a target of 1.0 must be exceeded")


def figures(summary: dict) -> dict[str, float]:
    """The figures from one `bench network --format json` summary."""
    throughput = summary["throughput"]
    fuzz = {row["name"]: row["schedules_per_min"] for row in summary["fuzz"]}
    base = throughput["heapq_baseline_per_s"]
    return {"burst share of heapq": throughput["burst"]["event_msgs_per_s"] / base,
            "paced share of heapq": throughput["paced"]["event_msgs_per_s"] / base,
            "fuzz, 6 brokers (schedules/min)": fuzz["fuzz, 6 brokers"],
            "fuzz, 20 brokers (schedules/min)": fuzz["fuzz, 20 brokers"]}


def one_run(python: str, seed: int, scratch: Path) -> dict[str, float]:
    out = scratch / f"run-{seed}"
    done = subprocess.run([python, "-m", "subsum", "bench", "network", "--quick", "--format", "json", "--seed", str(seed),
                           "--out-dir", str(out)], capture_output=True, text=True, cwd=scratch)
    if done.returncode != 0:
        print(f"{python} -m subsum bench network --seed {seed} exited {done.returncode}:\n{done.stderr[-2000:]}", file=sys.stderr)
        raise SystemExit(1 if done.returncode == 1 and _found_violations(done.stdout) else 3)
    return figures(json.loads(done.stdout))


def _found_violations(report: str) -> bool:
    """Whether a bench run's JSON report says its fuzzer found a violation (its exit 1), rather than the run failing."""
    try:
        return any(row["violations"] for row in json.loads(report)["fuzz"])
    except (ValueError, KeyError, TypeError):
        return False


def verdict(mean: float, half: float, target: float, above: bool = False) -> str:
    """The stated rule (`RULE`) for one target; `above`: the target must be exceeded, not only reached."""
    low = mean - half
    if (low > target) if above else (low >= target):
        return "met with confidence"
    return "met" if ((mean > target) if above else (mean >= target)) else "not met"


def summarise(rows: list[dict]) -> dict:
    """Per figure: each version's mean and 95% half-width, the new/old ratio (of the means, and seed by seed with
    its interval), and each target's verdict."""
    result = {}
    for name in FIGURES:
        old, new = ({r["seed"]: r["value"] for r in rows if r["figure"] == name and r["version"] == v} for v in ("old", "new"))
        if not old:
            continue
        (old_mean, old_half), (new_mean, new_half) = mean_ci(list(old.values())), mean_ci(list(new.values()))
        ratio, ratio_half = mean_ci([new[seed] / old[seed] for seed in sorted(old)])
        entry = {"old": old_mean, "old_ci95": old_half, "new": new_mean, "new_ci95": new_half,
                 "ratio_new_to_old": round(new_mean / old_mean, 3), "paired_ratio": round(ratio, 3),
                 "paired_ratio_ci95": round(ratio_half, 3)}
        if name in TARGETS:
            entry.update(target=TARGETS[name], verdict=verdict(new_mean, new_half, TARGETS[name]))
        if name in RATIO_TARGETS:
            target = RATIO_TARGETS[name]
            entry.update(ratio_target=target, ratio_verdict=verdict(ratio, ratio_half, target, above=target == 1.0))
        result[name] = entry
    return result


def plot(summary: dict, path: Path) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(summary), figsize=(12, 4))
    for ax, (name, s) in zip(axes, summary.items()):
        ax.bar(["old", "new"], [s["old"], s["new"]], yerr=[s["old_ci95"], s["new_ci95"]], capsize=6,
               color=["grey", "tab:blue"])
        title = f"{name}\nnew/old {s['paired_ratio']} ± {s['paired_ratio_ci95']}"
        if "target" in s:
            ax.axhline(s["target"], linestyle="--", color="tab:red", label=f"issue 36: {s['target']:,} ({s['verdict']})")
        if "ratio_target" in s:
            ax.axhline(s["old"] * s["ratio_target"], linestyle=":", color="tab:purple",
                       label=f"issue 52: {s['ratio_target']}× old ({s['ratio_verdict']})")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-python", dest="old", required=True, help="a Python that imports an earlier subsum")
    parser.add_argument("--runs", type=int, default=3, help="runs of each version, seeds 1 … RUNS (at least 2)")
    parser.add_argument("--out-dir", default="bench-out/network-versions")
    args = parser.parse_args(argv)
    if args.runs < 2:
        parser.error("--runs: an interval needs at least 2 runs")
    if not (os.path.isfile(args.old) and os.access(args.old, os.X_OK)):
        parser.error(f"--old-python: {args.old} is not an executable file")
    rows = []
    with tempfile.TemporaryDirectory(prefix="subsum-network-versions-") as scratch:
        for seed in range(1, args.runs + 1):
            for version, python in (("old", args.old), ("new", sys.executable)):
                got = one_run(python, seed, Path(scratch))
                rows += [{"version": version, "seed": seed, "figure": k, "value": round(v, 4)} for k, v in got.items()]
                print(f"seed {seed} {version}: " + ", ".join(f"{k} {v:,.3f}" for k, v in got.items()), flush=True)
    summary = summarise(rows)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)  # only now: a failed run leaves nothing behind
    write_csv(out / "network-versions.csv", rows, ("version", "seed", "figure", "value"))
    plot(summary, out / "network-versions.png")
    (out / "network-versions.json").write_text(json.dumps({"rule": RULE, "runs": args.runs, "figures": summary}, indent=2) + "\n")
    for name, s in summary.items():
        targets = [f"target {s['target']:,}: {s['verdict']}"] if "target" in s else []
        targets += [f"ratio target {s['ratio_target']}: {s['ratio_verdict']}"] if "ratio_target" in s else []
        print(f"{name}: old {s['old']:,} ± {s['old_ci95']:,}, new {s['new']:,} ± {s['new_ci95']:,}, "
              f"new/old {s['paired_ratio']} ± {s['paired_ratio_ci95']}; " + "; ".join(targets))
    print(f"wrote {out}/network-versions.csv, .png and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
