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
it reads the three figures of the issue: burst event handling as a share of
the bare heapq loop measured in the same process, and fuzz schedules per
minute at 6 and at 20 brokers. Writes network-versions.csv (one row per run
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

#: The issue's targets for the new version.
TARGETS = {"burst share of heapq": 0.15, "fuzz, 6 brokers (schedules/min)": 10_000, "fuzz, 20 brokers (schedules/min)": 2_500}
RULE = ("a target is met when the new version's mean over the runs reaches it, and met with confidence when the "
        "lower end of its 95% interval does")


def figures(summary: dict) -> dict[str, float]:
    """The issue's three figures from one `bench network --format json` summary."""
    throughput = summary["throughput"]
    fuzz = {row["name"]: row["schedules_per_min"] for row in summary["fuzz"]}
    return {"burst share of heapq": throughput["burst"]["event_msgs_per_s"] / throughput["heapq_baseline_per_s"],
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


def summarise(rows: list[dict]) -> dict:
    """Per figure: each version's mean and 95% half-width, the new/old ratio, and the target's verdict."""
    result = {}
    for name, target in TARGETS.items():
        old, new = ([r["value"] for r in rows if r["figure"] == name and r["version"] == v] for v in ("old", "new"))
        (old_mean, old_half), (new_mean, new_half) = mean_ci(old), mean_ci(new)
        result[name] = {"old": old_mean, "old_ci95": old_half, "new": new_mean, "new_ci95": new_half,
                        "ratio_new_to_old": round(new_mean / old_mean, 3), "target": target,
                        "verdict": ("met with confidence" if new_mean - new_half >= target
                                    else "met" if new_mean >= target else "not met")}
    return result


def plot(summary: dict, path: Path) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(summary), figsize=(12, 4))
    for ax, (name, s) in zip(axes, summary.items()):
        ax.bar(["old", "new"], [s["old"], s["new"]], yerr=[s["old_ci95"], s["new_ci95"]], capsize=6,
               color=["grey", "tab:blue"])
        ax.axhline(s["target"], linestyle="--", color="tab:red", label=f"target {s['target']:,}")
        ax.set_title(f"{name}\nnew/old {s['ratio_new_to_old']}: {s['verdict']}", fontsize=9)
        ax.legend(fontsize=8)
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
        print(f"{name}: old {s['old']:,} ± {s['old_ci95']:,}, new {s['new']:,} ± {s['new_ci95']:,}, "
              f"new/old {s['ratio_new_to_old']}, target {s['target']:,}: {s['verdict']}")
    print(f"wrote {out}/network-versions.csv, .png and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
