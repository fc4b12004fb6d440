"""Issue 21's acceptance: every case of the hostile-input corpus
(tests/hostile/corpus.py) passes, run in worker processes that each have a
memory limit, with a time limit per case. A worker that dies (out of memory,
a crash in C) fails the case it was running."""

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).parent / "hostile" / "corpus.py"
WORKERS = 2
#: Address space per worker: the interpreter with numpy, z3 and the engines
#: loaded reserves about 1.5 GiB of it; a case may use the rest.
MEMORY_LIMIT = 6 * 2**30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_corpus(ids: list[str] | None = None) -> tuple[list[dict], list[str]]:
    """(the verdict of every case, the cases whose worker died running them).
    The cases that start a JVM (Spark) share one worker: a JVM reserves more
    address space than the limit allows, and bounds its own heap."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "100", "NO_COLOR": "1"}
    workers = [subprocess.Popen([sys.executable, str(CORPUS), "run", "--shard", f"{i}/{WORKERS}", "--spark", "no", *(ids or [])],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=_limit_memory)
               for i in range(WORKERS)]
    workers.append(subprocess.Popen([sys.executable, str(CORPUS), "run", "--spark", "yes", *(ids or [])],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    verdicts, died = [], []
    for worker in workers:
        stdout, stderr = worker.communicate(timeout=1800)
        started = None
        for line in stdout.splitlines():
            record = json.loads(line)
            if "start" in record:
                started = record["start"]
            else:
                verdicts.append(record)
                started = None
        if started is not None or worker.returncode != 0:
            died.append(f"{started}: worker exit {worker.returncode}: {stderr[-400:]}")
    return verdicts, died


def test_every_hostile_case_gets_a_clear_error_and_no_output():
    verdicts, died = run_corpus()
    failed = [f"{v['id']}: {'; '.join(v['problems'])}" for v in verdicts if not v["ok"]]
    assert not died, died
    assert not failed, f"{len(failed)} of {len(verdicts)} cases failed:\n" + "\n".join(failed[:40])
    assert len(verdicts) >= 300
    listed = subprocess.run([sys.executable, str(CORPUS), "list"], capture_output=True, text=True, check=True).stdout.splitlines()
    assert sorted(v["id"] for v in verdicts) == sorted(listed)  # every case ran, once


def test_the_file_format_cases_in_this_process(tmp_path):
    """The cases on file contents (summaries, replays, records, edge lists) once
    more, in this process: quick, and seen by mutation testing, whose mutants
    live only in the process that runs the tests."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hostile_corpus", CORPUS)
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    kinds = ("summary/", "summary-match/", "summary-merge/", "replay/", "replay-cs/", "subs-record/", "event-record/",
             "topology/", "plan-topology/")
    chosen = [c for c in corpus.cases() if c.id.startswith(kinds) and c.seconds <= 20 and "huge" not in c.id]
    assert len(chosen) > 150
    failed = []
    for k, case in enumerate(chosen):
        verdict = corpus.run_case(case, tmp_path / f"case{k}")
        if not verdict["ok"]:
            failed.append(f"{case.id}: {'; '.join(verdict['problems'])}")
    assert not failed, "\n".join(failed)
