"""subsum on a real Spark cluster: a standalone master and one worker on
loopback, started by scripts/local-cluster.sh with the installed pyspark's
spark-class (README.md, "Running on a Spark cluster": the commands below
are the README's).

One cluster serves the module. Every command runs in its own process, as a
user runs it, with PYSPARK_PYTHON pointing nowhere: a job that needed a
Python worker would fail. Outputs are compared byte for byte with the
in-process engines (Parquet: row for row). The executed plans, read from
Spark's event log, hold no Python node. At the end both daemons are stopped
by PID and no Spark daemon or executor of the cluster is left running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "seed000"
SCRIPT = ROOT / "scripts" / "local-cluster.sh"
BIN = Path(sys.executable).parent
DAEMONS = ("deploy.master.Master", "deploy.worker.Worker", "CoarseGrainedExecutorBackend")
#: Physical plan nodes that run Python on the executors (UDFs, mapInArrow/Pandas, Python RDDs).
PYTHON_NODES = ("Python", "Pandas", "InArrow", "ExistingRDD")


def spark_processes() -> dict[int, str]:
    """The cluster-side Spark processes on this machine (pid -> command line),
    from /proc: `ps` cuts a JVM's long command line before its class name."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        if any(d in args for d in DAEMONS):
            found[int(entry.name)] = args
    return found


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # as with the venv active
    env["PYSPARK_PYTHON"] = "/nonexistent/python"  # a Python worker would fail the job
    env.pop("SPARK_MASTER", None)
    return env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    before = spark_processes()
    state = tmp_path_factory.mktemp("cluster")
    env = environment() | {"SUBSUM_CLUSTER_DIR": str(state), "PYTHON": sys.executable, "WORKER_MEMORY": "1g"}
    started = subprocess.run(["bash", str(SCRIPT), "start"], capture_output=True, text=True, env=env, timeout=180)
    try:
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip().splitlines()[-1]
        assert url.startswith("spark://127.0.0.1:"), started.stdout
        running = set(spark_processes()) - set(before)
        assert len(running) == 2, f"expected a master and a worker, found {running}"
        yield url
    finally:
        stopped = subprocess.run(["bash", str(SCRIPT), "stop"], capture_output=True, text=True, env=env, timeout=120)
        assert stopped.returncode == 0, stopped.stderr
        left = {pid: args for pid, args in spark_processes().items() if pid not in before}
        assert not left, f"left running: {left}"


def subsum(*args, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "subsum"), *map(str, args)], capture_output=True, text=True, env=environment(),
                          cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    """A generated workload as JSONL and as Parquet, and the in-process engine's result bytes."""
    import pyarrow as pa

    from subsum.core.filters import format_filter
    from subsum.impl.matching.workload import Params, generate

    d = tmp_path_factory.mktemp("workload")
    work = generate(Params(events=300, attrs_low=2, attrs_high=4, names=6, subscriptions=80, cons_low=1, cons_high=2,
                           planted_rate=0.5, seed=11))
    subs = [{"id": sid, "filter": format_filter(s)} for sid, s in work.subscriptions]
    events = [{"id": f"e{i}", "attributes": {a.name: ({"type": "float", "value": a.value} if a.type == "float" else a.value)
                                             for a in e.attributes}} for i, e in enumerate(work.events())]
    (d / "subs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in subs))
    (d / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    pq.write_table(pa.Table.from_pylist(subs), d / "subs.parquet")
    slots = {"int": None, "float": None, "string": None, "bool": None}
    attribute = pa.struct([("name", pa.string()), ("type", pa.string()), ("int", pa.int64()), ("float", pa.float64()),
                           ("string", pa.string()), ("bool", pa.bool_())])
    pq.write_table(pa.Table.from_pylist([{"id": f"e{i}", "attributes": [
        {"name": a.name, "type": a.type, **slots, a.type: a.value} for a in e.attributes]} for i, e in enumerate(work.events())],
        schema=pa.schema([("id", pa.string()), ("attributes", pa.list_(attribute))])), d / "events.parquet")
    local = subsum("match", "--subscriptions", d / "subs.jsonl", "--events", d / "events.jsonl", "--output", d / "local.jsonl")
    assert local.returncode == 0, local.stderr
    expected = (d / "local.jsonl").read_bytes()
    assert sum(1 for line in expected.splitlines() if b"[]" not in line) > 30  # not a vacuous comparison
    return d, expected


def test_match_jsonl_in_and_out_is_the_in_process_bytes(cluster, workload, tmp_path):
    d, expected = workload
    done = subsum("match", "--engine", "spark", "--master", cluster, "--subscriptions", d / "subs.jsonl",
                  "--events", d / "events.jsonl", "--output", tmp_path / "out.jsonl")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.jsonl").read_bytes() == expected
    to_stdout = subsum("match", "--engine", "spark", "--master", cluster, "--subscriptions", EX / "subscriptions.jsonl",
                       "--events", EX / "events.jsonl")
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout == '{"event": "fig-2-2", "subscriptions": ["S1"]}\n'


def test_match_parquet_in_and_out_is_the_in_process_result(cluster, workload, tmp_path):
    d, expected = workload
    done = subsum("match", "--engine", "spark", "--master", cluster, "--subscriptions", d / "subs.parquet",
                  "--events", d / "events.parquet", "--output", tmp_path / "out.parquet")
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert rows == [json.loads(line) for line in expected.splitlines()]
    mixed = subsum("match", "--engine", "spark", "--master", cluster, "--subscriptions", d / "subs.parquet",
                   "--events", d / "events.jsonl", "--output", tmp_path / "mixed.jsonl")
    assert mixed.returncode == 0, mixed.stderr
    assert (tmp_path / "mixed.jsonl").read_bytes() == expected


def _traces(d: Path) -> tuple[Path, Path]:
    import random

    from subsum.conformance.spark import _mutated, simulated_trace

    _, lines = simulated_trace(5)
    clean, dirty = d / "clean.jsonl", d / "dirty.jsonl"
    clean.write_text("\n".join(lines) + "\n")
    dirty.write_text("\n".join(_mutated(lines, random.Random(5))) + "\n")
    return clean, dirty


def test_trace_check_exit_codes_and_report_match_local(cluster, tmp_path):
    clean, dirty = _traces(tmp_path)
    reports = {}
    for name, path, code in (("clean", clean, 0), ("dirty", dirty, 1)):
        for where in ("local[2]", cluster):
            out = tmp_path / f"{name}-{where.replace('/', '_').replace(':', '_')}"
            done = subsum("trace-check", path, "--grace", "0.05", "--master", where, "--out-dir", out)
            assert done.returncode == code, (name, where, done.stderr)
            report = json.loads((out / "summary.json").read_text())
            report.pop("seconds")
            violations = sorted(map(str, pq.read_table(out / "violations.parquet").to_pylist()))
            reports.setdefault(name, []).append((report, violations))
        assert reports[name][0] == reports[name][1], name
    assert sum(reports["dirty"][0][0]["violations"].values()) > 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(clean.read_text() + '{"time": 1, "kind": "deliver"}\n')
    refused = subsum("trace-check", bad, "--grace", "0.05", "--master", cluster)
    assert refused.returncode == 2 and "field 'event': missing" in refused.stderr, refused.stderr


def test_spark_submit_from_another_directory(cluster, workload, tmp_path):
    """The README's spark-submit route, run from a folder that is not the repository."""
    d, expected = workload
    main = subprocess.run([sys.executable, "-c", "import subsum, os; print(os.path.dirname(subsum.__file__))"],
                          capture_output=True, text=True, check=True).stdout.strip() + "/__main__.py"
    done = subprocess.run([str(BIN / "spark-submit"), "--master", cluster, main, "match", "--engine", "spark",
                           "--subscriptions", d / "subs.jsonl", "--events", d / "events.jsonl", "--output", "out.jsonl"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env=environment() | {"PYSPARK_DRIVER_PYTHON": "python3"})  # the venv's, as when it is active
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "out.jsonl").read_bytes() == expected


def test_no_executor_resources_is_a_clear_error_not_a_hang(cluster, tmp_path):
    done = subsum("match", "--engine", "spark", "--master", cluster, "--conf", "spark.executor.memory=8g",
                  "--spark-timeout", "3", "--subscriptions", EX / "subscriptions.jsonl", "--events", EX / "events.jsonl",
                  "--output", tmp_path / "out.jsonl", timeout=120)
    assert done.returncode == 3, done.stderr
    assert "no executor started within 3 s" in done.stderr and "spark.executor.memory=8g" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out.jsonl").exists()


def _executed_nodes(log_dir: Path) -> list[str]:
    """Every physical plan node name in the event logs under log_dir (the final, adaptive plans included)."""
    names = []

    def walk(info):
        names.append(info["nodeName"])
        for child in info.get("children", []):
            walk(child)

    for f in sorted(p for p in log_dir.rglob("*") if p.is_file()):
        for line in f.read_text(errors="replace").splitlines():
            event = json.loads(line)
            if "sparkPlanInfo" in event:
                walk(event["sparkPlanInfo"])
    return names


def test_executed_plans_hold_no_python_node(cluster, workload, tmp_path):
    d, _ = workload
    clean, dirty = _traces(tmp_path)
    logs = tmp_path / "events"
    logs.mkdir()
    conf = ["--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir=file://{logs}",
            "--conf", "spark.eventLog.compress=false", "--conf", "spark.eventLog.rolling.enabled=false"]
    runs = [("match", "--engine", "spark", "--subscriptions", d / "subs.jsonl", "--events", d / "events.jsonl",
             "--output", tmp_path / "a.jsonl"),
            ("match", "--engine", "spark", "--subscriptions", d / "subs.parquet", "--events", d / "events.parquet",
             "--output", tmp_path / "a.parquet"),
            ("trace-check", dirty, "--grace", "0.05")]
    for args in runs:
        done = subsum(*args, "--master", cluster, *conf)
        assert done.returncode in (0, 1), done.stderr
    nodes = _executed_nodes(logs)
    assert len(list(logs.iterdir())) == len(runs)
    assert "Scan text " in " ".join(nodes) or any(n.startswith("Scan text") for n in nodes), sorted(set(nodes))
    assert any(n.startswith("Scan parquet") for n in nodes), sorted(set(nodes))
    python = sorted({n for n in nodes if any(p in n for p in PYTHON_NODES)})
    assert not python, f"Python nodes in the executed plans: {python}"
