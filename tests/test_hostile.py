"""Issue 21's acceptance: every case of the hostile-input corpus
(tests/hostile/corpus.py) passes, run in worker processes that each have a
memory limit, with a time limit per case. A worker that dies (out of memory,
a crash in C) fails the case it was running."""

import functools
import importlib.util
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "hostile" / "corpus.py"
#: Address space per worker: the interpreter with numpy, z3 and the engines
#: loaded reserves about 1.5 GiB of it; a case may use the rest.
MEMORY_LIMIT = 6 * 2**30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


#: The corpus in shards, each a test of its own (pytest-xdist runs them side by side): the cases
#: without a JVM in two halves, and the cases that start one (Spark), in one JVM, about 2 s each.
#: Two readers' file attacks run in `make thorough` only: `match --engine spark --subscriptions`
#: (`spark-subs/`: Spark's engine reads subscriptions on the driver, with the in-process reader the
#: other shards attack) and `trace-check` (`trace-check/`: Spark's JSON reader, which `spark-events/`
#: attacks in every run), except the cases that once failed, kept in every run (SPARK_ALWAYS).
SPARK_NIGHTLY = ("spark-subs/", "trace-check/")
SPARK_ALWAYS = frozenset({"trace-check/dev-zero", "trace-check/long-line", "trace-check/event-published-twice"})
#: Of Spark's own attacks, every run keeps one case of each attack class (issue 51: the gate's time);
#: the others of the class, each a Spark job of 1 to 3 s, run nightly. A class's cases take the same
#: way through the command (one `error:` line, nothing written); they differ in the bytes Spark's JSON
#: reader is given, which CLM-PIPE-3's checks give it in every `make verify` (`jsonl_errors_agree`:
#: malformed, NaN, not an object, empty, through the whole reader; `native_lines_are_sound`: bytes
#: that are not UTF-8, lone surrogates, infinities, huge integers, duplicate keys). Every run keeps the
#: cases with no Spark job (the file itself: missing, a folder, /dev/zero, a long line; Parquet
#: magic, --master, --conf), the valid file, and:
#:   empty content: blank-lines   bytes that are not UTF-8 JSON: binary   terminal escapes: escape-sequences
#:   JSON that does not parse: deep-nesting   non-standard tokens: infinity-token   numbers: huge-integer
#:   a top level that is no object: null-top   keys: duplicate-keys
#:   path names Hadoop reads its own way: glob[1].jsonl (a glob), colon:name.jsonl (a URI), _underscore.jsonl
#:   (a hidden file), packed.jsonl.gz (a compressed file)
SPARK_CLASS_NIGHTLY = frozenset({
    "spark-events/empty",  # empty content
    "spark-events/not-utf8", "spark-events/utf16-bom", "spark-events/nul-bytes",  # bytes that are not UTF-8 JSON
    "spark-events/truncated",  # JSON that does not parse
    "spark-events/nan-token",  # non-standard tokens
    "spark-events/array-top", "spark-events/string-top", "spark-events/number-top",  # a top level that is no object
    "spark-events/lone-surrogate-key",  # keys
    "path/spark/.dot.jsonl",  # a hidden file: Hadoop hides names starting with _ or . alike
    "path/spark/star*.jsonl",  # a glob
    # the kernel plan against the vectorized engine (issue 56): every run keeps kernel/suspect-in-the-middle.jsonl,
    # which a wrong event index and a wrong in-order answer both fail; these two run nightly (make test's time)
    "kernel/escapes.jsonl", "kernel/batches.jsonl",
})
SHARDS = {"no-jvm-0": ("--shard", "0/2", "--spark", "no"), "no-jvm-1": ("--shard", "1/2", "--spark", "no"),
          "spark": ("--spark", "yes")}


def run_corpus(args: tuple[str, ...]) -> tuple[list[dict], list[str]]:
    """(the verdict of every case `corpus.py run ARGS` selects, the case whose worker died running it).
    The worker has a memory limit unless its cases start a JVM: a JVM reserves more address space
    than the limit allows, and bounds its own heap."""
    return run_script(CORPUS, args, limit_memory="yes" not in args, timeout=1800)


def run_script(script: Path, args: tuple[str, ...], limit_memory: bool, timeout: float) -> tuple[list[dict], list[str]]:
    """(the verdict of every case `SCRIPT run ARGS` runs, one JSON line each, the case whose worker died running it)."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "100", "NO_COLOR": "1"}
    worker = subprocess.Popen([sys.executable, str(script), "run", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env, preexec_fn=_limit_memory if limit_memory else None)
    stdout, stderr = worker.communicate(timeout=timeout)
    verdicts, died, started = [], [], None
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


@functools.cache
def load_script(path: Path, name: str):
    """A script of tests/hostile/ as a module named `name` (they are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def cases_of(path: Path, name: str) -> tuple:
    """Every case a hostile script lists, listed once a process."""
    return tuple(load_script(path, name).cases())


def load_corpus():
    return load_script(CORPUS, "hostile_corpus")


def listed(*args: str) -> list[str]:
    """The IDs `corpus.py list ARGS` prints, computed here (a process each would cost seconds)."""
    return [case.id for case in load_corpus().chosen_cases(list(cases_of(CORPUS, "hostile_corpus")), list(args))]


def shard_cases(shard: str, nightly: bool = False) -> tuple[str, ...]:
    """The arguments of `corpus.py run` for a shard: its flags, and for the Spark shard its case IDs,
    with or without the nightly ones."""
    if shard != "spark":
        return SHARDS[shard]
    ids = [i for i in listed(*SHARDS[shard])
           if (i.startswith(SPARK_NIGHTLY) and i not in SPARK_ALWAYS or i in SPARK_CLASS_NIGHTLY) == nightly]
    return (*SHARDS[shard], *ids)


def check_shard(args: tuple[str, ...]) -> None:
    verdicts, died = run_corpus(args)
    failed = [f"{v['id']}: {'; '.join(v['problems'])}" for v in verdicts if not v["ok"]]
    assert not died, died
    assert not failed, f"{len(failed)} of {len(verdicts)} cases failed:\n" + "\n".join(failed[:40])
    assert sorted(v["id"] for v in verdicts) == sorted(listed(*args))  # every case of the shard ran, once


@pytest.mark.parametrize("shard", SHARDS)
def test_every_hostile_case_gets_a_clear_error_and_no_output(shard):
    check_shard(shard_cases(shard))


@pytest.mark.thorough
def test_the_nightly_spark_cases_get_a_clear_error_and_no_output():
    check_shard(shard_cases("spark", nightly=True))


def test_the_shards_hold_every_case_once():
    printed = subprocess.run([sys.executable, str(CORPUS), "list"], capture_output=True, text=True, check=True).stdout.splitlines()
    every = listed()
    assert printed == every  # the script's own listing
    assert len(every) >= 300
    shards = [shard_cases(shard) for shard in SHARDS] + [shard_cases("spark", nightly=True)]
    assert sorted(case for args in shards for case in listed(*args)) == sorted(every)
    assert len(listed(*shard_cases("spark", nightly=True))) >= 20
    assert SPARK_CLASS_NIGHTLY <= set(every) and not SPARK_CLASS_NIGHTLY & set(listed(*shard_cases("spark")))


def test_the_file_format_cases_in_this_process(tmp_path):
    """The cases on file contents (summaries, replays, records, edge lists) once
    more, in this process: quick, and seen by mutation testing, whose mutants
    live only in the process that runs the tests."""
    corpus = load_corpus()
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
