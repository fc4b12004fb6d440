"""The Spark session's fixed cost, with and without the JVM's class archive
(spec/07 DEF-PIPE-5; issue 56: the session's start at most 6 s).

    python benchmarks/spark_session.py [--repeat 7] [--master local[2]] [--seed 1] [--out-dir bench-out/spark-session]

The archive is built first if missing (`archive_builder.build_now`, timed).
Then, `--repeat` times, two fresh processes one after the other (the order
alternates): one with `SUBSUM_JVM_ARCHIVE=off`, one with the archive. Each
starts the session as `subsum match` does (`impl.spark.session.get_session`,
no short-run JVM options), then runs a first job (a count over 1,000 rows),
and reports both times and the archive its JVM mapped
(`class_archive.mapped_archive`). `--seed` only orders the pairs.

Writes spark-session.csv, spark-session.png and summary.json to --out-dir:
the mean and 95% interval of each arm, the medians, the ratio of the
medians, and the verdict by the rule in summary.json. Exit 0 when it holds,
1 when it differs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

from subsum.bench.intervals import mean_ci
from subsum.bench.output import pyplot, save_figure, write_csv
from subsum.impl.spark import archive_builder, class_archive

SESSION_LIMIT_S = 6.0
FIELDS = ("run", "archive", "session_s", "first_job_s", "mapped")
CHILD = """
import json, sys, time
started = time.perf_counter()
from subsum.impl.spark.session import get_session
from subsum.impl.spark.class_archive import mapped_archive
spark = get_session(sys.argv[1])
ready = time.perf_counter()
spark.range(1000).selectExpr("id % 7 AS k").groupBy("k").count().collect()
done = time.perf_counter()
print(json.dumps({"session_s": ready - started, "first_job_s": done - ready, "mapped": mapped_archive(spark)}))
"""


def one_start(master: str, archive: str) -> dict:
    env = {**os.environ, class_archive.ENV: archive}
    done = subprocess.run([sys.executable, "-c", CHILD, master], capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"a session start failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out-dir", default="bench-out/spark-session")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    folder = class_archive.archive_folder()
    if folder is None:
        raise SystemExit(f"the class archive is off here (${class_archive.ENV}=off, or no writable cache folder)")
    import time

    started = time.perf_counter()
    archive = archive_builder.build_now()
    build_s = round(time.perf_counter() - started, 1)
    if archive is None:
        raise SystemExit("the class archive could not be built (see its .failed note in the cache folder)")
    print(f"archive {archive} ready in {build_s} s", flush=True)
    order = random.Random(args.seed)
    rows: list[dict] = []
    for k in range(args.repeat):
        arms = [("off", "off"), ("on", str(folder))]
        order.shuffle(arms)
        for name, setting in arms:
            r = one_start(args.master, setting)
            rows.append({"run": k, "archive": name, "session_s": round(r["session_s"], 3),
                         "first_job_s": round(r["first_job_s"], 3), "mapped": "yes" if r["mapped"] else "no"})
            print(f"run {k}, archive {name}: session {r['session_s']:.2f} s, first job {r['first_job_s']:.2f} s", flush=True)
    write_csv(out / "spark-session.csv", rows, FIELDS)
    arm = {name: [r["session_s"] for r in rows if r["archive"] == name] for name in ("off", "on")}
    jobs = {name: [r["first_job_s"] for r in rows if r["archive"] == name] for name in ("off", "on")}
    medians = {name: round(statistics.median(v), 3) for name, v in arm.items()}
    mapped_right = all((r["mapped"] == "yes") == (r["archive"] == "on") for r in rows)
    verdict = "holds" if medians["on"] <= SESSION_LIMIT_S and mapped_right else "differs"
    summary = {"master": args.master, "repeat": args.repeat, "seed": args.seed, "archive_build_s": build_s,
               "session_mean_s": {n: mean_ci(v) for n, v in arm.items()}, "session_median_s": medians,
               "first_job_mean_s": {n: mean_ci(v) for n, v in jobs.items()},
               "ratio_on_to_off": round(medians["on"] / medians["off"], 3),
               "rule": f"the median session start with the class archive is at most {SESSION_LIMIT_S} s, and every "
                       "start with it (only those) mapped it", "verdict": verdict, "rows": rows}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    names = ["off", "on"]
    for offset, (series, label) in enumerate(((arm, "session start"), (jobs, "first job"))):
        means = [mean_ci(series[n]) for n in names]
        ax.bar([i + 0.38 * offset for i in range(2)], [m[0] for m in means], width=0.36,
               yerr=[m[1] for m in means], capsize=5, label=label)
    ax.axhline(SESSION_LIMIT_S, color="grey", linestyle="--", linewidth=1, label=f"{SESSION_LIMIT_S:g} s (issue 56)")
    ax.set_xticks([0.19, 1.19], ["no archive", "class archive"])
    ax.set_ylabel("seconds")
    ax.set_title(f"Spark session start, {args.master} ({verdict})")
    ax.legend(fontsize=8)
    save_figure(fig, out / "spark-session.png")
    print(f"median session start: {medians['off']} s without the archive, {medians['on']} s with it "
          f"({verdict}; rule: {summary['rule']})")
    return 0 if verdict == "holds" else 1


if __name__ == "__main__":
    sys.exit(main())
