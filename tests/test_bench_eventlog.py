"""subsum.bench.spark.eventlog: a stage table from a Spark event log (benchmarks/spark_cluster.py --event-log)."""

import json

from subsum.bench.spark.eventlog import FIELDS, stage_rows


def test_each_stage_of_each_job_with_its_tasks_per_executor(tmp_path):
    events = [
        {"Event": "SparkListenerApplicationStart", "Timestamp": 1_000},
        {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 3_000, "Stage IDs": [0, 1]},
        *({"Event": "SparkListenerTaskEnd", "Stage ID": 1, "Task Info": {"Executor ID": e},
           "Task Metrics": {"Executor Run Time": ms}} for e, ms in (("0", 1500), ("1", 250), ("0", 4000))),
        {"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": 1, "Stage Name": "parquet at x:0"}},
        {"Event": "SparkListenerJobEnd", "Job ID": 0, "Completion Time": 7_500},
        {"Event": "SparkListenerJobStart", "Job ID": 1, "Submission Time": 8_000, "Stage IDs": [2]},
    ]
    folder = tmp_path / "eventlog_v2_app-1"
    folder.mkdir()
    (folder / "events_1_app-1").write_text("\n".join(map(json.dumps, events)) + "\n")
    (folder / "appstatus_app-1").write_text("")
    (tmp_path / "app-2").write_text("\n".join(map(json.dumps, events)) + "\n")  # rolling off: one file per application
    rows = stage_rows(tmp_path)
    assert [r["app"] for r in rows] == ["app-2", "app-1"]
    rows = rows[1:]
    assert rows == [{"app": "app-1", "job": 0, "job_s": 4.5, "starts_s": 2.0, "stage": "parquet at x:0", "tasks": 3,
                     "per_executor": "0:2 1:1", "task_run_s": "1.5 0.2 4.0"}]  # stage 0 skipped, job 1 unfinished
    assert set(rows[0]) == set(FIELDS)
