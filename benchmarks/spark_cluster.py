"""The kernel plan on a loopback standalone cluster with one single-core
worker, then with two (issue 56: two take at most 0.65 of one's time).

    python benchmarks/spark_cluster.py [--events 1000000] [--subscriptions 10000] [--repeat 3] [--seed 1]
                                       [--pin] [--event-log] [--conf KEY=VALUE ...] [--out-dir bench-out/spark-cluster]

`subsum bench spark`'s workload (Parquet) is written once. For each cluster
size (`scripts/local-cluster.sh` with WORKERS=1, then 2, WORKER_CORES=1,
WORKER_MEMORY=2g), `subsum match --engine spark --plan kernel` runs
`--repeat` times as a user runs it, each in its own process with a fresh
JVM, the output written by the executors (a file:// Parquet URI, so that no
run funnels its rows through the driver). A run's time is its read, probe
and match-and-write seconds from `--json` (the session's start apart).
Every run's output is hashed against the compiled engine's in process.
`--pin` pins each worker, its executors and their Python workers to a CPU
of its own (`PIN_WORKERS=1`): a single-core worker then has one core, not
the machine's idle ones. `--event-log` keeps each run's Spark event log and
writes stages.csv: every stage's job time, tasks per executor and task run
times (`subsum.bench.spark.eventlog`), to show where the time goes.
`--conf KEY=VALUE` (repeatable) is passed to every run, e.g. the executors'
JVM options.

Writes spark-cluster.csv, spark-cluster.png and summary.json to --out-dir,
with the mean and 95% interval per size, the ratio of the means, and the
verdict by the rule in summary.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from subsum.bench.intervals import mean_ci
from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.bench.spark.eventlog import FIELDS as STAGE_FIELDS
from subsum.bench.spark.eventlog import stage_rows
from subsum.bench.spark.measure import compiled_run, output_digest
from subsum.bench.spark.workload import generate, write_parquet

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "local-cluster.sh"
BIN = Path(sys.executable).parent
RATIO_LIMIT = 0.65
FIELDS = ("workers", "run", "seconds", "session_s", "probe_s", "plan", "agrees")


def cluster(command: str, state: Path, workers: int, pin: bool = False) -> str:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "SUBSUM_CLUSTER_DIR": str(state),
           "WORKERS": str(workers), "WORKER_CORES": "1", "WORKER_MEMORY": "2g", "PYTHON": sys.executable,
           "PIN_WORKERS": "1" if pin else "0"}
    done = subprocess.run(["bash", str(SCRIPT), command], capture_output=True, text=True, env=env, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"local-cluster.sh {command}: {done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def one_run(url: str, events: Path, subs: Path, scratch: Path, k: int, event_log: Path | None = None,
            conf: tuple[str, ...] = ()) -> dict:
    out, stats = scratch / f"out-{k}.parquet", scratch / f"stats-{k}.json"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    logging = [] if event_log is None else ["--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir=file://{event_log}",
                                            "--conf", "spark.eventLog.compress=false", "--conf", "spark.eventLog.rolling.enabled=false"]
    done = subprocess.run([str(BIN / "subsum"), "match", "--engine", "spark", "--master", url, "--plan", "kernel",
                           "--subscriptions", str(subs), "--events", str(events), "--output", f"file://{out}",
                           "--json", str(stats), "--conf", "spark.executor.memory=1500m", *logging,
                           *[arg for item in conf for arg in ("--conf", item)]],
                          capture_output=True, text=True, env=env, cwd=scratch, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"subsum match on {url}: exit {done.returncode}: {done.stderr[-2000:]}")
    report = json.loads(stats.read_text())
    digest = output_digest(out)[2]
    shutil.rmtree(out, ignore_errors=True)
    return {"seconds": report["read_seconds"] + report["probe_seconds"] + report["match_seconds"],
            "session_s": report["session_seconds"], "probe_s": report["probe_seconds"], "plan": report["plan"],
            "digest": digest}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--subscriptions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pin", action="store_true", help="pin each worker to a CPU of its own (PIN_WORKERS=1)")
    parser.add_argument("--event-log", action="store_true", help="keep the event logs; write stages.csv")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="passed to every `subsum match` run (repeatable)")
    parser.add_argument("--out-dir", default="bench-out/spark-cluster")
    args = parser.parse_args(argv)
    for item in args.conf:  # checked before any cluster starts: `subsum match` would refuse it minutes later
        if "=" not in item or not item.split("=", 1)[0].strip():
            parser.error(f"--conf {item!r}: expected KEY=VALUE, e.g. spark.executor.memory=1g")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="subsum-spark-cluster-") as tmp:
        scratch = Path(tmp)
        subs, batch, _ = generate(args.events, args.subscriptions, args.seed)
        events_path, subs_path = write_parquet(subs, batch, scratch)
        del subs, batch
        want = compiled_run(events_path, subs_path)["digest"]
        for workers in (1, 2):
            state = scratch / f"cluster-{workers}"
            url = cluster("start", state, workers, args.pin)
            logs = scratch / f"event-logs-{workers}" if args.event_log else None
            if logs is not None:
                logs.mkdir()
            try:
                for k in range(args.repeat):
                    r = one_run(url, events_path, subs_path, scratch, k, logs, tuple(args.conf))
                    rows.append({"workers": workers, "run": k, "seconds": round(r["seconds"], 3),
                                 "session_s": r["session_s"], "probe_s": r["probe_s"], "plan": r["plan"],
                                 "agrees": "yes" if r["digest"] == want else "NO"})
                    print(f"{workers} worker(s), run {k}: {r['seconds']:.1f} s (plan {r['plan']}, "
                          f"agrees: {rows[-1]['agrees']})", flush=True)
            finally:
                cluster("stop", state, workers, args.pin)
        if args.event_log:
            stages = [{"workers": w, **row} for w in (1, 2) for row in stage_rows(scratch / f"event-logs-{w}")]
            write_csv(out / "stages.csv", stages, ("workers", *STAGE_FIELDS))
    write_csv(out / "spark-cluster.csv", rows, FIELDS)
    means = {w: mean_ci([r["seconds"] for r in rows if r["workers"] == w]) for w in (1, 2)}
    ratio = means[2][0] / means[1][0]
    verdict = "holds" if ratio <= RATIO_LIMIT and all(r["agrees"] == "yes" and r["plan"] == "kernel" for r in rows) else "differs"
    summary = {"events": args.events, "subscriptions": args.subscriptions, "repeat": args.repeat, "seed": args.seed,
               "pinned": args.pin, "conf": args.conf,
               "mean_s": {str(w): m for w, m in means.items()}, "ratio_two_to_one": round(ratio, 3),
               "rule": f"two single-core workers' mean time <= {RATIO_LIMIT} x one's, every run on the kernel plan and "
                       "agreeing with the compiled engine", "verdict": verdict, "rows": rows}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    ax.bar(["1 worker", "2 workers"], [means[1][0], means[2][0]], yerr=[means[1][1], means[2][1]], capsize=6)
    ax.set_ylabel("seconds (read to write, session apart)")
    ax.set_title(f"kernel plan, E = {args.events:,}{', pinned' if args.pin else ''}: ratio {ratio:.2f} ({verdict})")
    save_figure(fig, out / "spark-cluster.png")
    print(f"two workers / one: {ratio:.3f} ({verdict}; rule: {summary['rule']})")
    return 0 if verdict == "holds" else 1


if __name__ == "__main__":
    sys.exit(main())
