"""The Spark engine of this checkout beside an earlier version, in one run
on one machine (issue 22's fixed-cost and throughput figures).

    python benchmarks/spark_versions.py --old-python /tmp/oldvenv/bin/python [--runs 5] [--events 10000000]

`--old-python` is a Python that imports an earlier subsum (and the same
dependencies), e.g.

    git worktree add /tmp/oldwt 5949e32
    .venv/bin/pip install --no-deps --no-build-isolation --target /tmp/oldpkg /tmp/oldwt
    python3 -m venv --without-pip /tmp/oldvenv
    printf '/tmp/oldpkg\n%s\n' "$(.venv/bin/python -c 'import site; print(site.getsitepackages()[0])')" \
        > /tmp/oldvenv/lib/python3.11/site-packages/old.pth

(its Spark Python workers, if it has any, run the same interpreter). Every
command runs in a scratch folder, where `subsum` means the installed one.

Both versions run as a user runs them, through the CLI, each in its own
process with a fresh JVM, on local[2]:
- fixed cost: `subsum match --engine spark` on seed 000's example (one
  event), `--runs` times each, alternating old and new; wall time per run;
- throughput: `subsum bench spark`'s workload (Parquet in and out) at
  `--events` events x `--subscriptions` subscriptions, once each, beside the
  vectorized engine matching the same workload in memory; Spark's time is
  the wall time less its session start (as `subsum bench spark` counts it).
Writes spark-versions.csv and spark-versions.png to --out-dir (default
bench-out/spark-versions).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "seed000"
def cli(version: str, old: str, *args) -> list[str]:
    return [sys.executable if version == "new" else old, "-m", "subsum", *map(str, args)]


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return time.perf_counter() - started, done


def fixed_cost(old: str, runs: int, log) -> list[dict]:
    rows = []
    for k in range(runs):
        for version in ("old", "new"):
            seconds, done = timed(cli(version, old, "match", "--engine", "spark", "--master", "local[2]",
                                      "--subscriptions", EX / "subscriptions.jsonl", "--events", EX / "events.jsonl"))
            assert done.returncode == 0 and done.stdout == '{"event": "fig-2-2", "subscriptions": ["S1"]}\n', done.stderr
            rows.append({"measure": "fixed cost (seed 000 example, wall s)", "version": version, "run": k,
                         "seconds": round(seconds, 2)})
            log(f"fixed cost run {k} {version}: {seconds:.2f} s")
    return rows


def throughput(old: str, events: int, subscriptions: int, log) -> list[dict]:
    from subsum.bench.spark.bench import generate, in_memory_run, write_parquet

    rows = []
    with tempfile.TemporaryDirectory(prefix="subsum-versions-") as tmp:
        subs, batch, _ = generate(events, subscriptions, 1)
        events_path, subs_path = write_parquet(subs, batch, Path(tmp))
        vectorized = in_memory_run("vectorized", subs, batch)
        base = min(vectorized["times"])
        rows.append({"measure": f"throughput {events:.0e} x {subscriptions:.0e} (events/s)", "version": "vectorized",
                     "run": 0, "seconds": round(base, 2), "events_per_s": round(events / base), "ratio": 1.0,
                     "matches": vectorized["matches"]})
        log(f"vectorized: {base:.1f} s, {vectorized['matches']:,} matches")
        del batch
        for version in ("old", "new"):
            out, stats = Path(tmp) / f"{version}.parquet", Path(tmp) / f"{version}.json"
            seconds, done = timed(cli(version, old, "match", "--engine", "spark", "--master", "local[2]",
                                      "--conf", "spark.driver.memory=8g", "--subscriptions", subs_path,
                                      "--events", events_path, "--output", out, "--json", stats))
            assert done.returncode == 0, done.stderr[-2000:]
            session = json.loads(stats.read_text())["session_seconds"]
            import pyarrow.parquet as pq
            import pyarrow.compute as pc

            matches = pc.sum(pc.list_value_length(pq.read_table(out).column("subscriptions"))).as_py()
            spark_s = seconds - session
            rows.append({"measure": f"throughput {events:.0e} x {subscriptions:.0e} (events/s)", "version": version,
                         "run": 0, "seconds": round(spark_s, 2), "events_per_s": round(events / spark_s),
                         "ratio": round(base / spark_s, 3), "matches": matches, "wall_s": round(seconds, 2)})
            log(f"spark {version}: {spark_s:.1f} s ({seconds:.1f} s wall), ratio {base / spark_s:.3f}, {matches:,} matches")
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    fixed = {v: [r["seconds"] for r in rows if r["version"] == v and r["measure"].startswith("fixed")] for v in ("old", "new")}
    a.boxplot([fixed["old"], fixed["new"]], tick_labels=["old", "new"])
    a.axhline(8, linestyle="--", color="grey", label="target 8 s")
    a.set_title("seed 000 example, local[2], wall s")
    a.legend()
    speed = [r for r in rows if r["measure"].startswith("throughput")]
    b.bar([r["version"] for r in speed], [r["events_per_s"] for r in speed])
    b.axhline(0.5 * speed[0]["events_per_s"], linestyle="--", color="grey", label="50% of vectorized")
    b.set_title(speed[0]["measure"] if speed else "throughput")
    b.legend()
    fig.tight_layout()
    fig.savefig(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-python", dest="old", required=True, help="a Python that imports an earlier subsum")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--subscriptions", type=int, default=10_000)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--out-dir", default="bench-out/spark-versions")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = fixed_cost(args.old, args.runs, print)
    for version in ("old", "new"):
        times = [r["seconds"] for r in rows if r["version"] == version]
        print(f"fixed cost {version}: median {statistics.median(times):.2f} s, min {min(times):.2f} s")
    if not args.skip_throughput:
        rows += throughput(args.old, args.events, args.subscriptions, print)
    fields = ["measure", "version", "run", "seconds", "events_per_s", "ratio", "matches", "wall_s"]
    with open(out / "spark-versions.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fields)
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, out / "spark-versions.png")
    print(f"-> {out / 'spark-versions.csv'}, {out / 'spark-versions.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
