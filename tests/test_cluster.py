"""subsum on a real Spark cluster: a standalone master and two single-core
workers on loopback, started by scripts/local-cluster.sh with the installed pyspark's
spark-class. The module runs the README's recipe ("Running on a Spark
cluster") literally: its first command starts the module's one cluster, its
last stops it, and the commands between run in a bash session.

Every other command runs in its own process, as a user runs it, with
PYSPARK_PYTHON pointing nowhere (a job that needed a Python worker would
fail), `--plan sql` for matching (the bare-executor path), and Spark's
event log on. The recipe itself runs the kernel plan and a fuzzing
campaign on the two workers (the venv's Python is on their PATH). Outputs are compared byte for byte with the
in-process engines (Parquet: row for row; traces: with the reference
checker). The last test reads the executed plans of every run from the event
logs: no Python node. At the end both daemons are stopped by PID and no
Spark daemon or executor of the cluster is left running."""

from __future__ import annotations

import json
import os
import re
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

#: Minutes of JVM start-ups: `make thorough` runs the module (nightly in CI), `make test` does not.
#: It shares one cluster, so run it in one process (`make thorough` does not use pytest-xdist).
pytestmark = pytest.mark.thorough


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


def environment(state: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # as with the venv active
    env.pop("SPARK_MASTER", None)
    if state is not None:
        env |= {"SUBSUM_CLUSTER_DIR": str(state), "PYTHON": sys.executable}
    return env


def readme_recipe() -> list[tuple[str, list[str]]]:
    """(command, shown output lines) of the README's loopback-cluster recipe, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Try it: a cluster on this machine"):text.index("### A real cluster")]
    blocks: list[tuple[str, list[str]]] = []
    for line in (line[4:] for line in section.splitlines() if line.startswith("    ")):
        if line.startswith("$ "):
            blocks.append((line[2:], []))
        elif blocks and blocks[-1][0].endswith("\\") and not blocks[-1][1]:
            blocks[-1] = (blocks[-1][0][:-1].rstrip() + " " + line.strip(), [])
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


RECIPE = readme_recipe()


class Cluster:
    def __init__(self, url: str, state: Path, logs: Path):
        self.url, self.state, self.logs = url, state, logs


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The module's one cluster, started and stopped by the README's own first and last commands."""
    assert RECIPE[0][0] == "WORKERS=2 WORKER_CORES=1 scripts/local-cluster.sh start", RECIPE
    assert RECIPE[-1][0] == "scripts/local-cluster.sh stop", RECIPE
    before = spark_processes()
    state, logs = tmp_path_factory.mktemp("cluster"), tmp_path_factory.mktemp("eventlog")
    env = environment(state)
    started = subprocess.run(["bash", "-c", RECIPE[0][0]], capture_output=True, text=True, env=env, cwd=ROOT, timeout=180)
    try:
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip().splitlines()[-1]
        assert re.fullmatch(r"spark://127\.0\.0\.1:\d+", url), started.stdout
        running = set(spark_processes()) - set(before)
        assert len(running) == 3, f"expected a master and two workers, found {running}"
        yield Cluster(url, state, logs)
    finally:
        stopped = subprocess.run(["bash", "-c", RECIPE[-1][0]], capture_output=True, text=True, env=env, cwd=ROOT,
                                 timeout=120)
        assert stopped.returncode == 0, stopped.stderr
        left = {pid: args for pid, args in spark_processes().items() if pid not in before}
        assert not left, f"left running: {left}"


def subsum(*args, logs: Path | None = None, timeout=300) -> subprocess.CompletedProcess:
    """The CLI in its own process; with `logs`, on the cluster with no Python
    for workers (PYSPARK_PYTHON points nowhere) and the event log written to `logs`."""
    env = environment()
    extra: list[str] = []
    if logs is not None:
        env["PYSPARK_PYTHON"] = "/nonexistent/python"
        extra = ["--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir=file://{logs}",
                 "--conf", "spark.eventLog.compress=false", "--conf", "spark.eventLog.rolling.enabled=false"]
    return subprocess.run([str(BIN / "subsum"), *map(str, args), *extra], capture_output=True, text=True, env=env,
                          timeout=timeout)


def on(cluster: Cluster, *args, **kw) -> subprocess.CompletedProcess:
    """A command on the cluster's bare executors: matching takes the SQL plan (DEF-PIPE-3)."""
    plan = ("--plan", "sql") if args[0] == "match" else ()
    return subsum(*args, *plan, "--master", cluster.url, logs=cluster.logs, **kw)


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    """A generated workload as JSONL and as Parquet, and the in-process engine's result bytes."""
    import pyarrow as pa

    from subsum.core.filters import format_filter
    from subsum.bench.matching.workload import Params, generate

    d = tmp_path_factory.mktemp("workload")
    work = generate(Params(events=300, attrs_low=2, attrs_high=4, names=6, subscriptions=80, cons_low=1, cons_high=2,
                           planted_rate=0.5, seed=11))
    subs = [{"id": sid, "filter": format_filter(s)} for sid, s in work.subscriptions]
    events = [{"id": f"e{i}", "attributes": {a.name: ({"type": "float", "value": a.value} if a.type == "float" else a.value)
                                             for a in e.attributes}} for i, e in enumerate(work.events())]
    # A line the native check leaves to the driver (an integer above 2^53 under type float): the
    # driver decodes it, and the cluster must still run no Python.
    events.append({"id": "driver-decoded", "attributes": {"big": {"type": "float", "value": 2 ** 53 + 2}}})
    (d / "subs.jsonl").write_text("".join(json.dumps(s) + "\n" for s in subs))
    (d / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    pq.write_table(pa.Table.from_pylist(subs), d / "subs.parquet")
    slots = {"int": None, "float": None, "string": None, "bool": None}
    attribute = pa.struct([("name", pa.string()), ("type", pa.string()), ("int", pa.int64()), ("float", pa.float64()),
                           ("string", pa.string()), ("bool", pa.bool_())])
    pq.write_table(pa.Table.from_pylist([{"id": f"e{i}", "attributes": [
        {"name": a.name, "type": a.type, **slots, a.type: a.value} for a in e.attributes]} for i, e in enumerate(work.events())]
        + [{"id": "driver-decoded", "attributes": [{"name": "big", "type": "float", **slots, "float": float(2 ** 53 + 2)}]}],
        schema=pa.schema([("id", pa.string()), ("attributes", pa.list_(attribute))])), d / "events.parquet")
    local = subsum("match", "--subscriptions", d / "subs.jsonl", "--events", d / "events.jsonl", "--output", d / "local.jsonl")
    assert local.returncode == 0, local.stderr
    expected = (d / "local.jsonl").read_bytes()
    assert sum(1 for line in expected.splitlines() if b"[]" not in line) > 30  # not a vacuous comparison
    return d, expected


def test_match_jsonl_in_and_out_is_the_in_process_bytes(cluster, workload, tmp_path):
    d, expected = workload
    done = on(cluster, "match", "--engine", "spark", "--subscriptions", d / "subs.jsonl", "--events", d / "events.jsonl",
              "--output", tmp_path / "out.jsonl")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.jsonl").read_bytes() == expected
    to_stdout = on(cluster, "match", "--engine", "spark", "--subscriptions", EX / "subscriptions.jsonl",
                   "--events", EX / "events.jsonl")
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout == '{"event": "fig-2-2", "subscriptions": ["S1"]}\n'


def test_match_parquet_in_and_out_is_the_in_process_result(cluster, workload, tmp_path):
    d, expected = workload
    done = on(cluster, "match", "--engine", "spark", "--subscriptions", d / "subs.parquet",
              "--events", d / "events.parquet", "--output", tmp_path / "out.parquet")
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert rows == [json.loads(line) for line in expected.splitlines()]
    mixed = on(cluster, "match", "--engine", "spark", "--subscriptions", d / "subs.parquet",
               "--events", d / "events.jsonl", "--output", tmp_path / "mixed.jsonl")
    assert mixed.returncode == 0, mixed.stderr
    assert (tmp_path / "mixed.jsonl").read_bytes() == expected


def test_trace_check_exit_codes_and_violations_are_the_reference_checkers(cluster, tmp_path):
    """1 violations (exactly model.trace's), 2 bad input (0 clean: tests/test_spark.py, the same code path)."""
    import random

    from subsum.conformance.checks.pipeline.traces import _mutated, model_trace_violations, simulated_trace

    _, lines = simulated_trace(5)
    dirty = _mutated(lines, random.Random(5))
    for name, trace, code in (("dirty", dirty, 1),):
        path, out = tmp_path / f"{name}.jsonl", tmp_path / name
        path.write_text("\n".join(trace) + "\n")
        done = on(cluster, "trace-check", path, "--grace", "0.05", "--out-dir", out)
        assert done.returncode == code, (name, done.stderr)
        got = sorted((r["cause"], r["event"], r["client"], r["time"]) for r in pq.read_table(out / "violations.parquet").to_pylist())
        assert got == model_trace_violations(trace, 50.0), name
        assert got, "no violation planted: a vacuous comparison"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + '\n{"time": 1, "kind": "deliver"}\n')
    refused = on(cluster, "trace-check", bad, "--grace", "0.05")
    assert refused.returncode == 2 and f"{bad}:{len(lines) + 1}: field 'event': missing" in refused.stderr, refused.stderr


def _normal(text: str) -> str:
    """Text with whitespace runs as one space (the README wraps long lines) and
    every master URL as spark://127.0.0.1:PORT."""
    return " ".join(re.sub(r"spark://127\.0\.0\.1:\d+", "spark://127.0.0.1:PORT", text).split())


def test_the_readme_recipe_runs_literally(cluster, tmp_path):
    """The README's recipe between its first command (the fixture's) and its last
    (the fixture's teardown), command by command in one bash session from the
    repository, prints what the README shows. Its /tmp/ files live in a scratch
    folder here; /tmp/subs.jsonl and /tmp/events.jsonl are seed 000's fig. 4.5 files."""
    assert len(RECIPE) >= 8, RECIPE
    assert RECIPE[0][1][0].startswith("spark://127.0.0.1:")  # what `start` prints
    (tmp_path / "subs.jsonl").write_bytes((EX / "fig-4-5-subscriptions.jsonl").read_bytes())
    (tmp_path / "events.jsonl").write_bytes((EX / "fig-4-5-events.jsonl").read_bytes())
    marker = "@@subsum-readme-step@@"
    script = [f"cd {ROOT}"]
    for k, (command, _) in enumerate(RECIPE[1:-1], start=1):
        script += [f"echo {marker}{k}", "{ " + command.replace("/tmp/", f"{tmp_path}/") + "\n} 2>&1"]
    script += [f"echo {marker}end"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True, text=True,
                          env=environment(cluster.state), timeout=900)
    steps = dict(chunk.partition("\n")[::2] for chunk in done.stdout.split(marker)[1:])
    assert "end" in steps, done.stdout[-3000:] + done.stderr[-3000:]
    for k, (command, shown) in enumerate(RECIPE[1:-1], start=1):
        printed = steps[str(k)].replace(f"{tmp_path}/", "/tmp/")
        if "spark-submit" in command:  # Spark's own log under spark-submit is not shown; subsum's line and output are
            assert _normal(shown[-1]) in _normal(printed), printed[-3000:]
            assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "fig45.jsonl").read_bytes(), printed[-3000:]
            continue
        assert _normal("\n".join(shown)) == _normal(printed), (command, shown, printed)


def runtime_requirements() -> list[str]:
    """pyproject.toml's dependencies, PySpark left out: the workers' own pyspark.zip runs their Python side."""
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return [d for d in deps if not re.match(r"pyspark\b", d)]


def test_a_packed_environment_ships_subsum_to_the_executors(cluster, tmp_path):
    """The README's second way to ship subsum: a venv with the built wheel and its
    dependencies (PySpark aside), packed by venv-pack and passed as spark.archives.
    The executors' Python is the unpacked ./env/bin/python and nothing else: the
    kernel plan ran only if the archive reached them and imports subsum."""
    from tests.test_wheel import build_wheel

    (tmp_path / "wheel").mkdir()
    wheel = build_wheel(tmp_path / "wheel")
    env_dir, packed = tmp_path / "subsum-env", tmp_path / "subsum-env.tar.gz"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--no-deps", str(wheel)], check=True, timeout=600)
    subprocess.run([*pip, *runtime_requirements()], check=True, timeout=1200)
    subprocess.run([str(BIN / "venv-pack"), "--quiet", "-p", str(env_dir), "-o", str(packed)], check=True, timeout=900)
    out = tmp_path / "fig45.jsonl"
    env = environment()
    env.pop("PYSPARK_PYTHON", None)
    done = subprocess.run([str(BIN / "subsum"), "match", "--engine", "spark", "--master", cluster.url, "--plan", "kernel",
                           "--subscriptions", str(EX / "fig-4-5-subscriptions.jsonl"), "--events", str(EX / "fig-4-5-events.jsonl"),
                           "--output", str(out), "--json", str(tmp_path / "stats.json"),
                           "--conf", f"spark.archives={packed}#env", "--conf", "spark.pyspark.python=./env/bin/python"],
                          capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "plan: kernel" in done.stderr, done.stderr
    local = subsum("match", "--subscriptions", EX / "fig-4-5-subscriptions.jsonl", "--events", EX / "fig-4-5-events.jsonl")
    assert out.read_text() == local.stdout and local.stdout.count("\n") >= 3
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["plan"] == "kernel" and stats["executor_warm_seconds"] is not None, stats


def _executed_nodes(log_dir: Path) -> tuple[int, list[str]]:
    """(applications, every physical plan node name) in the event logs under
    log_dir, the final adaptive plans included."""
    names: list[str] = []
    apps = 0

    def walk(info):
        names.append(info["nodeName"])
        for child in info.get("children", []):
            walk(child)

    for f in sorted(p for p in log_dir.rglob("*") if p.is_file()):
        apps += 1
        for line in f.read_text(errors="replace").splitlines():
            event = json.loads(line)
            if "sparkPlanInfo" in event:
                walk(event["sparkPlanInfo"])
    return apps, names


def test_executed_plans_hold_no_python_node(cluster):
    """Run last: the event logs of every command above (match JSONL, Parquet and
    mixed, to a file and to stdout; trace-check with violations and with bad
    input) hold no physical node that runs Python."""
    apps, nodes = _executed_nodes(cluster.logs)
    assert apps >= 6, apps
    assert any(n.startswith("Scan text") for n in nodes) and any(n.startswith("Scan parquet") for n in nodes), sorted(set(nodes))
    python = sorted({n for n in nodes if any(p in n for p in PYTHON_NODES)})
    assert not python, f"Python nodes in the executed plans: {python}"
