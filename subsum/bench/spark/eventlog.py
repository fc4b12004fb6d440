"""Where a Spark run spends its time, read from its event log
(`spark.eventLog.enabled`): one row per stage, in job order.

    >>> stage_rows(Path("logs"))[0]["stage"]  # doctest: +SKIP
    'parquet at NativeMethodAccessorImpl.java:0'

Each row: the application, the job and its wall seconds, the stage's name
(its call site), its task count, how many ran on each executor, and the
task run times (executor run time, seconds). benchmarks/spark_cluster.py
writes them as stages.csv with `--event-log`.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

FIELDS = ("app", "job", "job_s", "starts_s", "stage", "tasks", "per_executor", "task_run_s")


def stage_rows(log_dir: Path) -> list[dict]:
    """The stages of every application logged under `log_dir` (uncompressed
    logs: one file `app-ID` each, or with rolling on, `eventlog_v2_app-ID/events_N_app-ID`)."""
    rows: list[dict] = []
    logs = (p for p in log_dir.rglob("*") if p.is_file() and (p.name.startswith(("app-", "events_"))) and not p.suffix == ".crc")
    for log in sorted(logs):
        rows += _one_application(log)
    return rows


def _one_application(log: Path) -> list[dict]:
    names: dict[int, str] = {}
    jobs: dict[int, list] = {}
    tasks: dict[int, list[tuple[str, float]]] = defaultdict(list)
    app, started = log.name.split("_", 2)[-1].removesuffix(".inprogress"), 0
    for line in log.read_text(errors="replace").splitlines():
        event = json.loads(line)
        kind = event["Event"]
        if kind == "SparkListenerApplicationStart":
            started = event["Timestamp"]
        elif kind == "SparkListenerJobStart":
            jobs[event["Job ID"]] = [event["Submission Time"], None, event["Stage IDs"]]
        elif kind == "SparkListenerJobEnd" and event["Job ID"] in jobs:
            jobs[event["Job ID"]][1] = event["Completion Time"]
        elif kind == "SparkListenerTaskEnd":
            run_ms = event.get("Task Metrics", {}).get("Executor Run Time", 0)
            tasks[event["Stage ID"]].append((event["Task Info"]["Executor ID"], run_ms / 1000))
        elif kind == "SparkListenerStageCompleted":
            names[event["Stage Info"]["Stage ID"]] = event["Stage Info"]["Stage Name"]
    rows = []
    for job, (submitted, completed, stage_ids) in sorted(jobs.items()):
        for stage in (s for s in stage_ids if s in names):
            ran = tasks[stage]
            rows.append({"app": app, "job": job, "job_s": round((completed - submitted) / 1000, 2) if completed else "",
                         "starts_s": round((submitted - started) / 1000, 1), "stage": names[stage], "tasks": len(ran),
                         "per_executor": " ".join(f"{e}:{n}" for e, n in sorted(Counter(e for e, _ in ran).items())),
                         "task_run_s": " ".join(f"{s:.1f}" for _, s in ran)})
    return rows
