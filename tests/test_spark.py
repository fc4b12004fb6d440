"""The Spark pipeline through the CLI: `subsum match --engine spark`,
`subsum trace-check`, and the session factory's errors. The claims' checks
(conformance/spark*.py) run in test_claims.py; these cover what a user types.
All tests share the process's one SparkSession."""

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from subsum.cli import main
from subsum.impl.spark import session as sess

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "seed000"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_spark_engine_writes_the_in_process_engines_bytes(tmp_path):
    from subsum.bench.matching.workload import Params, generate
    from subsum.core.filters import format_filter

    work = generate(Params(events=60, attrs_low=2, attrs_high=4, names=6, subscriptions=40, cons_low=1, cons_high=2,
                           planted_rate=0.5, seed=3))
    subs = tmp_path / "s.jsonl"
    subs.write_text("".join(json.dumps({"id": sid, "filter": format_filter(s)}) + "\n" for sid, s in work.subscriptions))
    events = tmp_path / "e.jsonl"
    events.write_text("".join(json.dumps({"id": f"e{i}", "attributes": {
        a.name: ({"type": "float", "value": a.value} if a.type == "float" else a.value) for a in e.attributes}}) + "\n"
        for i, e in enumerate(work.events())))
    local = run("match", "--subscriptions", subs, "--events", events, "--output", tmp_path / "local.jsonl")
    spark = run("match", "--engine", "spark", "--subscriptions", subs, "--events", events, "--output", tmp_path / "spark.jsonl")
    assert local.exit_code == 0 and spark.exit_code == 0, spark.output
    expected = (tmp_path / "local.jsonl").read_bytes()
    assert sum(1 for line in expected.splitlines() if b'[]' not in line) > 10  # not a vacuous comparison
    assert (tmp_path / "spark.jsonl").read_bytes() == expected


def test_spark_engine_to_stdout_and_parquet(tmp_path):
    stdout = run("match", "--engine", "spark", "--subscriptions", EX / "subscriptions.jsonl", "--events", EX / "events.jsonl")
    assert stdout.exit_code == 0, stdout.output
    assert stdout.stdout.splitlines() == ['{"event": "fig-2-2", "subscriptions": ["S1"]}']
    out = tmp_path / "r.parquet"
    done = run("match", "--engine", "spark", "--subscriptions", EX / "fig-4-5-subscriptions.jsonl",
               "--events", EX / "fig-4-5-events.jsonl", "--output", out)
    assert done.exit_code == 0, done.output
    rows = pq.read_table(out).to_pylist()
    local = run("match", "--subscriptions", EX / "fig-4-5-subscriptions.jsonl", "--events", EX / "fig-4-5-events.jsonl")
    assert rows == [json.loads(line) for line in local.stdout.splitlines()]
    assert len(rows) == 4


def test_bad_input_names_file_line_and_field_and_writes_nothing(tmp_path):
    (tmp_path / "s.jsonl").write_text('{"id": "s1", "filter": "x > 1"}\n\n{"id": "s2", "filter": "x >> 1"}\n')
    out = tmp_path / "out.jsonl"
    result = run("match", "--engine", "spark", "--subscriptions", tmp_path / "s.jsonl", "--events", EX / "events.jsonl",
                 "--output", out)
    assert result.exit_code == 2
    assert f"{tmp_path / 's.jsonl'}:3: field 'filter':" in " ".join(result.stderr.split())
    assert not out.exists() and not list(tmp_path.glob(".out.jsonl*"))


def test_missing_file_and_spark_only_options(tmp_path):
    missing = run("match", "--engine", "spark", "--subscriptions", tmp_path / "nope.jsonl", "--events", EX / "events.jsonl")
    assert missing.exit_code == 2 and "No such file" in missing.stderr
    local = run("match", "--subscriptions", EX / "subscriptions.jsonl", "--events", EX / "events.jsonl", "--master", "local[1]")
    assert local.exit_code == 2 and "only to --engine spark" in local.stderr
    parquet = run("match", "--subscriptions", EX / "subscriptions.jsonl", "--events", EX / "events.jsonl",
                  "--output", tmp_path / "x.parquet")
    assert parquet.exit_code == 2 and "needs --engine spark" in parquet.stderr
    conf = run("match", "--engine", "spark", "--subscriptions", EX / "subscriptions.jsonl", "--events",
               EX / "events.jsonl", "--conf", "spark.executor.memory")
    assert conf.exit_code == 2 and "expected key=value" in conf.stderr


def _trace(tmp_path, swaps: int, seed: int = 4) -> Path:
    path = tmp_path / f"trace-{swaps}.jsonl"
    result = run("simulate", "forwarding", "--brokers", 15, "--subscriptions", 60, "--events", 80, "--swaps", swaps, "--seed", seed,
                 "--trace", path, "--format", "json")
    assert result.exit_code == 0, result.output
    (tmp_path / f"sim-{swaps}.json").write_text(result.stdout)
    return path


def test_trace_check_clean_run_exits_zero(tmp_path):
    result = run("trace-check", _trace(tmp_path, 0), "--grace", "0.01", "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["ok"] and summary["violations"] == {"duplicate": 0, "spurious": 0, "missed": 0}
    assert summary["publications"] == 80 and summary["deliveries"] > 0


def test_trace_check_churn_run_reports_the_simulators_losses(tmp_path):
    trace = _trace(tmp_path, 6)
    audit = json.loads((tmp_path / "sim-6.json").read_text())
    assert audit["lost"] > 0
    result = run("trace-check", trace, "--grace", "0", "--window", "0.02", "--out-dir", tmp_path / "out")
    assert result.exit_code == 1, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["violations"] == {"duplicate": audit["duplicates"], "spurious": audit["unjustified"],
                                     "missed": audit["lost"]}
    assert sum(w["missed"] for w in summary["windows"]) == audit["lost"]
    rows = pq.read_table(tmp_path / "out" / "violations.parquet").to_pylist()
    assert len(rows) == sum(summary["violations"].values())
    assert {r["cause"] for r in rows} >= {"missed"}
    assert all(r["window_start"] == (r["time"] // 20.0) * 20.0 for r in rows)


def test_trace_check_bad_input(tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"time": 0, "kind": "subscribe", "client": 1000000, "broker": 0, "filter": "x > 1"}\n'
                     '{"time": 1, "kind": "deliver", "event": "e1", "client": 1000000, "broker": 0}\n')
    result = run("trace-check", trace, "--grace", "0")
    assert result.exit_code == 2
    assert f"{trace}:2: field 'event': must be an integer" in " ".join(result.stderr.split())
    negative = run("trace-check", trace, "--grace", "-1")
    assert negative.exit_code == 2 and "--grace must be a number of seconds from 0 to 1e9" in negative.stderr
    nan = run("trace-check", trace, "--grace", "nan")
    assert nan.exit_code == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert run("trace-check", empty, "--grace", "0").exit_code == 2


def test_java_check_says_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(sess.SparkUnavailable, match="no Java runtime found.*Java 17"):
        sess.check_java()
    old = tmp_path / "java"
    old.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_292"\' >&2\n')
    old.chmod(0o755)
    with pytest.raises(sess.SparkUnavailable, match="Java 8 found.*Java 17 or newer"):
        sess.check_java()


def test_master_and_conf_resolution(monkeypatch):
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    assert sess.resolve_master(None) == "local[*]"
    monkeypatch.setenv("SPARK_MASTER", "spark://head:7077")
    assert sess.resolve_master(None) == "spark://head:7077"
    assert sess.resolve_master("local[2]") == "local[2]"
    assert sess.local_cores("local[3]") == 3 and sess.local_cores("spark://head:7077") is None
    assert sess.parse_conf(["a.b=1", "c=x=y"]) == {"a.b": "1", "c": "x=y"}
    defaults = sess.default_conf("local[2]")
    assert defaults["spark.ui.enabled"] == "false" and defaults["spark.sql.shuffle.partitions"] == "4"
    assert "spark.sql.shuffle.partitions" not in sess.default_conf("yarn")
    assert os.path.exists(defaults["spark.driver.extraJavaOptions"].split("file:", 1)[1])


def test_the_executors_python_setting_reaches_pyspark_as_spark_submit_passes_it(monkeypatch):
    """PySpark started from a Python process reads PYSPARK_PYTHON only; --conf
    spark.pyspark.python (the packed environment's ./env/bin/python) must become it,
    and win over it as under spark-submit (tests/test_cluster.py runs the recipe)."""
    monkeypatch.setenv("PYSPARK_PYTHON", "/usr/bin/python3")
    sess.name_worker_python({"spark.executor.memory": "1g"})
    assert os.environ["PYSPARK_PYTHON"] == "/usr/bin/python3"
    sess.name_worker_python({"spark.pyspark.python": "./env/bin/python"})
    assert os.environ["PYSPARK_PYTHON"] == "./env/bin/python"


def test_streamed_jsonl_equals_the_written_one(tmp_path):
    """A cluster's local JSONL target is streamed to the driver; same bytes, no staging left behind."""
    from subsum.conformance.checks.pipeline.spark import session, write_lines
    from subsum.conformance.checks.pipeline.readers import SEED000_EVENTS, SEED000_SUBSCRIPTIONS
    from subsum.impl.spark import io as sio
    from subsum.impl.spark.match import match

    sess.get_session(None, quick_start=True)  # if this test starts the process's JVM: tuned for small inputs, as the CLI's are
    spark = session()
    subs = write_lines(tmp_path, "s.jsonl", SEED000_SUBSCRIPTIONS)
    events = write_lines(tmp_path, "e.jsonl", SEED000_EVENTS)
    results = match(sio.read_subscriptions(spark, str(subs)), sio.read_events(spark, str(events)))
    sio.write_results(results, str(tmp_path / "a.jsonl"))
    sio.write_results(results, str(tmp_path / "b.jsonl"), stream_to_driver=True)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert len((tmp_path / "a.jsonl").read_bytes().splitlines()) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl", "e.jsonl", "s.jsonl"]


#: Two commands, one after the other, in one fresh process (one JVM start-up, not two: issue 51), each
#: command's standard output and error closed by a marker line; then the exit codes, as JSON.
TWO_COMMANDS = """
import json, os, sys
from subsum.cli import main
codes = []
for args in json.loads(sys.argv[1]):
    try:
        main(args, prog_name="subsum")
    except SystemExit as exit:
        codes.append(exit.code)
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(1, b"--- command done ---\\n")
    os.write(2, b"--- command done ---\\n")
print(json.dumps(codes))
"""


def test_a_fresh_process_logs_nothing_but_the_jvms_own_notice_and_a_failed_read_one_line(tmp_path):
    """Quiet logs: a real `subsum match --engine spark` process writes its result to stdout
    and nothing to stderr except the JVM launcher's notice about incubator modules, which log4j
    does not control, and the report's `plan:` line. Before the gateway logger was configured, Spark printed
    'Setting default log level to "WARN"' and lowered the console threshold to WARN.

    Issue 22: then a failed Spark read is one line with its root cause, no executor or
    task-scheduler stack trace reaching the terminal (they are printed by the JVM itself, so
    this runs in a process of its own; the same JVM runs every command).

    Issue 56, in the same process (one JVM start): the executors' Python points nowhere, as on a
    cluster whose workers have no Python. auto takes sql and says why; kernel stops with exit 2
    before writing, naming the Python, --plan sql and both ways to ship subsum."""
    import subprocess
    import sys

    (tmp_path / "corrupt.parquet").write_bytes(b"PAR1" + b"\x00garbage" * 100 + b"PAR1")
    out = tmp_path / "out.jsonl"
    seed000 = ["--subscriptions", str(EX / "subscriptions.jsonl"), "--events", str(EX / "events.jsonl")]
    commands = [["match", "--engine", "spark", "--master", "local[1]", *seed000],
                ["match", "--engine", "spark", "--subscriptions", str(EX / "subscriptions.jsonl"),
                 "--events", str(tmp_path / "corrupt.parquet")],
                ["match", "--engine", "spark", "--plan", "kernel", *seed000, "--output", str(out)]]
    env = {**os.environ, "PYSPARK_PYTHON": "/nonexistent/python"}
    done = subprocess.run([sys.executable, "-c", TWO_COMMANDS, json.dumps(commands)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    *outs, codes = done.stdout.split("--- command done ---\n")
    errs = done.stderr.split("--- command done ---\n")
    assert len(outs) == 3 and len(errs) == 4 and errs[3] == "", (done.stdout, done.stderr)
    assert json.loads(codes) == [0, 2, 2], done.stderr
    assert outs[0].splitlines() == ['{"event": "fig-2-2", "subscriptions": ["S1"]}']
    noise = " ".join(line.strip() for line in errs[0].splitlines() if line.strip() and "incubator modules" not in line)
    assert noise.startswith("plan: sql (the executors cannot run subsum's kernel: a one-row probe job failed"), noise
    assert "/nonexistent/python" in noise  # which Python did not start; nothing else on stderr
    lines = [line for line in errs[1].splitlines() if line.strip() and not line.startswith("WARNING: Using incubator")]
    assert outs[1] == ""
    assert len(lines) == 1 and lines[0].startswith("error: ") and "corrupted file" in lines[0], errs[1]
    refused = " ".join(line.strip() for line in errs[2].splitlines() if line.strip())  # the console wraps long lines
    assert refused.startswith("error: --plan kernel: the executors cannot run subsum's kernel"), refused
    assert "/nonexistent/python" in refused and "Use --plan sql" in refused and "spark.archives" in refused
    assert outs[2] == "" and not out.exists()


def test_bench_crossover_is_per_plan_and_engine_and_needs_spark_to_stay_ahead():
    from subsum.bench.spark.bench import crossover

    def row(engine, n, rate, master="in-process", plan=""):
        return {"series": "events", "engine": engine, "plan": plan, "master": master, "events": n, "events_per_s": rate}

    spark = f"local[{os.cpu_count() or 1}]"
    rows = [row("vectorized", 10, 100), row("duckdb", 10, 20), row("spark", 10, 5, spark, "sql"),
            row("vectorized", 100, 100), row("duckdb", 100, 20), row("spark", 100, 30, spark, "sql"),
            row("spark", 100, 999, "local[0]", "sql"),  # not the all-cores run: ignored
            row("vectorized", 1000, 100), row("duckdb", 1000, 20), row("spark", 1000, 50, spark, "sql"),
            row("spark", 1000, 200, spark, "kernel")]
    assert crossover(rows) == ("spark kernel overtakes vectorized from E = 1,000 (2.00x); "
                               "spark kernel overtakes duckdb from E = 1,000 (10.00x); "
                               "spark sql does not overtake vectorized (closest at E = 1,000: 0.50x); "
                               "spark sql overtakes duckdb from E = 100 (1.50x)")
    rows[-2]["events_per_s"] = 10  # falls behind again: no crossover to report
    assert crossover(rows).endswith("spark sql does not overtake duckdb (closest at E = 100: 1.50x)")


def test_bench_verdicts_follow_their_rules():
    from subsum.bench.spark.bench import verdicts

    def row(engine, seconds, ratio, agrees="", plan="", session=""):
        return {"series": "events", "engine": engine, "plan": plan, "master": "local[2]" if engine == "spark" else "in-process",
                "events": 10**7, "seconds": seconds, "ratio_to_compiled": ratio, "agrees": agrees, "session_s": session}

    rows = [row("compiled", 50, 1.0), row("spark", 100, 2.0, "yes", "kernel", 5.9), row("spark", 400, 8.0, "yes", "sql", 6.0)]
    got = verdicts(rows, 2)
    assert (got["kernel within 2x"], got["session"], got["plans agree"]) == ("holds", "holds", "holds")
    rows[1].update(ratio_to_compiled=2.01, session_s=6.01)
    rows[2].update(session_s=6.02, agrees="NO")  # the median of 6.01 and 6.02
    got = verdicts(rows, 2)
    assert (got["kernel within 2x"], got["session"], got["plans agree"]) == ("differs", "differs", "differs")
    rows[1].update(ratio_to_compiled=1.5, agrees="NO")  # fast but wrong does not hold
    assert verdicts(rows, 2)["kernel within 2x"] == "differs"
    assert verdicts(rows[:1], 2)["kernel within 2x"] == "not measured"


@pytest.mark.parametrize("value", ["nan", "0", "inf", "-1", "abc"])
def test_spark_timeout_must_be_a_finite_number_of_seconds(value):
    result = run("match", "--engine", "spark", "--spark-timeout", value, "--subscriptions", EX / "subscriptions.jsonl",
                 "--events", EX / "events.jsonl")
    assert result.exit_code == 2 and "--spark-timeout" in result.output, result.output


def test_local_parquet_subscriptions_are_read_without_a_spark_job(tmp_path):
    """A local Parquet subscriptions file is read on the driver by pyarrow (DEF-PIPE-1): no session is
    touched, a folder's rows come in file-name order, and a bad column is named with Spark's type names."""
    import pyarrow as pa

    from subsum.core.errors import InputError
    from subsum.impl.spark.io import read_subscription_pairs

    folder = tmp_path / "subs.parquet"
    folder.mkdir()
    for name in ("c", "a", "_hidden", "b"):
        pq.write_table(pa.table({"id": [name + "1", name + "2"], "filter": ["x = 1", "x < 2"]}), folder / f"{name}.parquet")
    pairs = read_subscription_pairs(None, str(folder))  # None: a Spark job here would raise AttributeError
    assert [sid for sid, _ in pairs] == ["a1", "a2", "b1", "b2", "c1", "c2"]
    assert pairs[1][1] == read_subscription_pairs(None, str(folder / "a.parquet"))[1][1]
    typed = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"id": [1, 2], "filter": ["x = 1", "x = 2"]}), typed)
    with pytest.raises(InputError) as bad:
        read_subscription_pairs(None, str(typed))
    assert (bad.value.field, "column has type bigint; expected string") == ("id", bad.value.message)
    (tmp_path / "empty.parquet").mkdir()
    with pytest.raises(InputError, match="the folder holds no Parquet file"):
        read_subscription_pairs(None, str(tmp_path / "empty.parquet"))
    repeated = tmp_path / "repeated.parquet"
    pq.write_table(pa.table({"id": ["s1", "s1"], "filter": ["x = 1", "x = 2"]}), repeated)
    with pytest.raises(InputError, match="row 2: duplicate subscription id 's1' \\(first on row 1\\)"):
        read_subscription_pairs(None, str(repeated))


SPLIT_KEYS = ("spark.sql.files.minPartitionNum", "spark.sql.files.openCostInBytes")


def _filled_partitions(spark, path) -> list[int]:
    return sorted(n for n in spark.read.parquet(str(path)).rdd.mapPartitions(lambda rows: [sum(1 for _ in rows)]).collect() if n)


def test_a_parquet_file_is_split_for_every_slot_and_a_users_setting_wins(tmp_path):
    """`spread_file_splits`: a 3.5 MB file of 8 row groups was one task with Spark's
    defaults (4 MB per opened file); it becomes several, holding every row once.
    A setting the user made is left as it is."""
    import numpy as np
    import pyarrow as pa

    spark = sess.get_session(None, quick_start=True)
    blob = np.random.default_rng(5).integers(0, 256, 8 * 448 * 1024, dtype=np.uint8).tobytes()
    path = tmp_path / "events.parquet"
    pq.write_table(pa.table({"b": [blob[i * 1024:(i + 1) * 1024] for i in range(8 * 448)]}), path, row_group_size=448,
                   compression="none")
    for key in SPLIT_KEYS:
        spark.conf.unset(key)
    assert _filled_partitions(spark, path) == [8 * 448]
    sess.spread_file_splits(spark)
    spread = _filled_partitions(spark, path)
    assert len(spread) >= 4 and sum(spread) == 8 * 448 and max(spread) <= 3 * 448
    spark.conf.unset(SPLIT_KEYS[1])
    spark.conf.set(SPLIT_KEYS[0], "1")
    sess.spread_file_splits(spark)
    assert spark.conf.get(SPLIT_KEYS[0]) == "1" and spark.conf.get(SPLIT_KEYS[1]) == str(sess.OPEN_COST_BYTES)
    spark.conf.unset(SPLIT_KEYS[0])


def test_a_match_spreads_its_events_file_splits(tmp_path):
    """`match_job` asks for the spread before it reads the events."""
    from subsum.impl.spark.job import match_job

    spark = sess.get_session(None, quick_start=True)
    for key in SPLIT_KEYS:
        spark.conf.unset(key)
    match_job(spark, str(EX / "subscriptions.jsonl"), str(EX / "events.jsonl"), None, lambda line: None, plan="sql")
    assert spark.conf.get(SPLIT_KEYS[0]) == str(sess.SPLITS_PER_SLOT * spark.sparkContext.defaultParallelism)
