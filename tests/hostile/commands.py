"""The hostile-input corpus of the newer commands (issue 51): `explore`,
`fuzz reconfig`, `conform matching | broker | vectors write | vectors check`,
`fidelity`, `replay`, `trace-check`, `simulate ...` and every `bench`, fed
bad options, bad output destinations and bad files.

It extends tests/hostile/corpus.py (issue 21) and reuses its `Case`, its
runner and its checks: exit 2 with one `error:` line naming the option, or
the file and its line or field; nothing on standard output; no traceback or
control character; the sentinel output untouched. On top of those, for every
case here:

- the command runs in its case's folder (a default output such as
  fuzz-replays/ or bench-out/ would land there), and nothing may appear
  anywhere under that folder, nor may any file of the case change;
- no process may be left running (a JVM started before an option is
  checked, a broker or engine process): such a process is ended and the case
  fails;
- the case must fail fast: 5 s at most, 3 s for trace-check (it must refuse
  bad input before Spark starts) and 2 s for a benchmark. A benchmark is
  never run: one that accepts a value it should refuse is cut there. The
  cases of `bench` and `trace-check` each run in a forked process of their
  own (`run_isolated`), killed with whatever it started 1 s past its limit:
  a benchmark's loop or Spark's start can swallow the limit's alarm.

A case's files may sit in folders (`folders`; a file's folder is made for
it): results folders for fidelity, replay directories, vectors folders.

    python tests/hostile/commands.py list [--shard i/n] [ID ...]   # the case IDs
    python tests/hostile/commands.py run [--shard i/n] [ID ...]    # one JSON line per case

`tests/test_hostile_commands.py` runs every case in two worker processes with
a memory limit (each case in-process, with click's runner, as corpus.py does).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import signal
import sys
from pathlib import Path
from typing import Iterator

import attrs


def _load_corpus():
    """tests/hostile/corpus.py as a module (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("hostile_corpus", Path(__file__).with_name("corpus.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
js = corpus.js

#: The command families of issue 51, each the first part of its cases' IDs.
FAMILIES = ("explore", "fuzz-reconfig", "conform-matching", "conform-broker", "conform-vectors", "fidelity", "replay", "trace-check",
            "simulate", "bench")

HUGE = str(10**30)
#: The longest a case may take: bad input is refused before any work.
SECONDS = 5.0
#: A benchmark must refuse bad input at once; one that starts instead is cut here (each runs for minutes).
BENCH_SECONDS = 2.0
#: An ordinary file in every case's folder, for outputs aimed at it or under it.
AFILE = ("afile", b"an ordinary file: no output may be written in it or under it\n")


@attrs.frozen
class CommandCase(corpus.Case):
    """A case of corpus.py's kind, with folders of files, and a time limit of
    its own: every case here must fail fast."""

    folders: tuple[str, ...] = ()  # made in the case's folder before its files
    seconds: float = SECONDS

    @property
    def spark(self) -> bool:
        """No case here may start a JVM: bad input is refused before Spark starts."""
        return False

    @property
    def family(self) -> str:
        return self.id.split("/", 1)[0]


def case(family: str, name: str, argv: tuple[str, ...], *, files: dict[str, bytes] | None = None, mentions: tuple[str, ...] = (),
         **kw) -> CommandCase:
    """A case of `family`; every case has `afile`, an ordinary file outputs are aimed under."""
    return CommandCase(f"{family}/{name}", argv, tuple({**dict([AFILE]), **(files or {})}.items()), mentions=mentions, **kw)


# --- output destinations ---------------------------------------------------------------------

#: Destinations no output can go to: (name, as a folder, as a file, words the error must hold besides the option);
#: None where the attack has no form of that kind.
BAD_DESTINATIONS = (
    ("proc", "/proc/nope", "/proc/nope/x", ("/proc/nope",)),
    ("regular-file", "{d}/afile", None, ("afile",)),
    ("folder", None, "{d}", ("{d}",)),
    ("under-a-file", "{d}/afile/sub", "{d}/afile/x", ("afile",)),
    ("char-device", "/dev/null", "/dev/null", ("/dev/null",)),
    ("fifo", "{d}/fifo", "{d}/fifo", ("fifo",)),
)


def bad_destinations(kind: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, path, words) of each attack on an output of `kind`, "dir" or "file"."""
    return [(name, folder if kind == "dir" else file, words) for name, folder, file, words in BAD_DESTINATIONS
            if (folder if kind == "dir" else file) is not None]

#: Each command that writes, with everything else valid: (family, name, argv, the output option, a file or a folder).
WRITERS: tuple[tuple[str, str, tuple[str, ...], str, str], ...] = (
    ("explore", "out-dir", ("explore", "--brokers", "1", "--subscriptions", "1"), "--out-dir", "dir"),
    ("fuzz-reconfig", "out-dir", ("fuzz", "reconfig", "--schedules", "1"), "--out-dir", "dir"),
    ("fuzz-reconfig", "json", ("fuzz", "reconfig", "--schedules", "1", "--out-dir", "{d}/out"), "--json", "file"),
    ("conform-matching", "out-dir", ("conform", "matching", "--engine", "vectorized", "--workloads", "1"), "--out-dir", "dir"),
    ("conform-matching", "json", ("conform", "matching", "--engine", "vectorized", "--workloads", "1", "--out-dir", "{d}/out"),
     "--json", "file"),
    ("conform-broker", "out-dir", ("conform", "broker", "--broker-cmd", "true", "--schedules", "1"), "--out-dir", "dir"),
    ("conform-vectors", "write-out-dir", ("conform", "vectors", "write"), "--out-dir", "dir"),
    ("fidelity", "output", ("fidelity", "--results", "{d}/results", "--statements", "{d}/statements"), "--output", "file"),
    ("trace-check", "out-dir", ("trace-check", "{d}/t.jsonl", "--grace", "0.05"), "--out-dir", "dir"),
    ("simulate", "siena-trace", ("simulate", "siena", "--events", "3"), "--trace", "file"),
    ("simulate", "summaries-trace", ("simulate", "summaries", "--events", "3"), "--trace", "file"),
    ("simulate", "broadcast-json", ("simulate", "broadcast", "--events", "3"), "--json", "file"),
    ("simulate", "caching-json", ("simulate", "caching", "--events", "3"), "--json", "file"),
    ("simulate", "client-server-json", ("simulate", "client-server", "--steps", "3"), "--json", "file"),
)

BENCHES = ("matching", "summaries", "summary-routing", "caching", "client-server", "network", "reconfig", "spark", "explore")


def _output_cases() -> Iterator[CommandCase]:
    for family, name, argv, option, kind in WRITERS:
        files = {**fidelity_files(), "t.jsonl": corpus.TRACE}
        for attack, path, words in bad_destinations(kind):
            if family == "explore" and attack in ("proc", "char-device"):
                continue  # the same check as fuzz reconfig's; kept short
            yield case(family, f"{name}={attack}", argv + (option, path), files=files, mentions=(option, *words),
                       fifos=("fifo",) if attack == "fifo" else ())
    for bench in BENCHES:
        for attack, path, words in bad_destinations("dir")[:3]:
            yield case("bench", f"{bench}/out-dir={attack}", ("bench", bench, "--quick", "--out-dir", path), mentions=("--out-dir", *words),
                       seconds=BENCH_SECONDS)
    # An output that is also an input: the input must survive.
    yield case("simulate", "flooding-trace=the-topology", ("simulate", "flooding", "--topology", "{d}/g.edgelist", "--trace", "{d}/g.edgelist"),
               files={"g.edgelist": corpus.EDGES}, mentions=("--trace", "g.edgelist", "same file"))
    for name, argv in (("caching", ("simulate", "caching", "--events", "3")), ("client-server", ("simulate", "client-server", "--steps", "3"))):
        yield case("simulate", f"{name}-json=the-topology", argv + ("--topology", "{d}/g.edgelist", "--json", "{d}/g.edgelist"),
                   files={"g.edgelist": corpus.EDGES}, mentions=("--json", "g.edgelist", "same file"))
    yield case("fidelity", "output=fidelity.json", ("fidelity", "--results", "{d}/results", "--statements", "{d}/statements", "--output",
                                                    "{d}/fidelity.json"), files=fidelity_files(), mentions=("--output", "fidelity.json"))
    for name, path in (("a-statement-file", "statements/seed999.toml"), ("a-results-file", "results/b/r.csv")):
        yield case("fidelity", f"output={name}", ("fidelity", "--results", "{d}/results", "--statements", "{d}/statements", "--output",
                                                   "{d}/" + path), files=fidelity_files(), mentions=("--output", path.rsplit("/", 1)[1]))


# --- numeric and choice options --------------------------------------------------------------

#: (family, the command before the option, the option, its bad values). The values a command rightly accepts are not
#: here: any --seed (Python's random and Hypothesis take any integer; tested as valid below).
OPTIONS: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = (
    ("explore", ("explore",), "--brokers", ("0", "-1", "9", HUGE, "abc", "")),
    ("explore", ("explore",), "--subscriptions", ("-1", "10", HUGE)),
    ("explore", ("explore", "--max-states", "10"), "--events", ("-1", HUGE)),
    ("explore", ("explore", "--max-states", "10"), "--swaps", ("-1", HUGE)),
    ("explore", ("explore",), "--overruns", ("-1", "1.5")),
    ("explore", ("explore",), "--max-states", ("0", "-1", "nan")),
    ("explore", ("explore",), "--budget", ("0", "-1", "nan", "inf", "1e999", "")),
    ("explore", ("explore",), "--sub-timeout", ("-1", "nan", "1e999")),
    ("explore", ("explore",), "--topology", ("nosuch", "{d}/afile")),
    ("explore", ("explore",), "--format", ("xml",)),
    ("fuzz-reconfig", ("fuzz", "reconfig", "--out-dir", "{d}/out"), "--brokers", ("0", "10001", HUGE, "")),
    ("fuzz-reconfig", ("fuzz", "reconfig", "--out-dir", "{d}/out"), "--subscriptions", ("-1", HUGE)),
    ("fuzz-reconfig", ("fuzz", "reconfig", "--out-dir", "{d}/out"), "--schedules", ("0", "-1", HUGE, "nan")),
    ("fuzz-reconfig", ("fuzz", "reconfig", "--out-dir", "{d}/out"), "--max-violations", ("0", HUGE)),
    ("fuzz-reconfig", ("fuzz", "reconfig", "--out-dir", "{d}/out"), "--shrink-budget", ("-1", "nan", "inf", "3601")),
    ("fuzz-reconfig", ("fuzz", "reconfig", "--out-dir", "{d}/out"), "--budget", ("1e999", "0.05")),
    ("fuzz-reconfig", ("fuzz", "reconfig", "--out-dir", "{d}/out"), "--sub-timeout", ("nan", "-1")),
    ("conform-matching", ("conform", "matching", "--engine", "vectorized", "--out-dir", "{d}/out"), "--workloads",
     ("0", "-1", HUGE, "abc", "")),
    ("conform-matching", ("conform", "matching", "--engine", "vectorized", "--out-dir", "{d}/out"), "--timeout",
     ("0", "-1", "nan", "inf", "1e999", "3601")),
    ("conform-broker", ("conform", "broker", "--broker-cmd", "true", "--out-dir", "{d}/out"), "--brokers", ("0", "-1", HUGE)),
    ("conform-broker", ("conform", "broker", "--broker-cmd", "true", "--out-dir", "{d}/out"), "--steps", ("0", HUGE)),
    ("conform-broker", ("conform", "broker", "--broker-cmd", "true", "--out-dir", "{d}/out"), "--timeout", ("0", "nan", "inf")),
    ("conform-broker", ("conform", "broker", "--broker-cmd", "true", "--out-dir", "{d}/out"), "--churn", ("1.5", "nan")),
    ("conform-broker", ("conform", "broker", "--broker-cmd", "true", "--out-dir", "{d}/out"), "--schedules", ("0",)),
    ("conform-vectors", ("conform", "vectors", "write", "--out-dir", "{d}/out"), "--seed", ("abc", "", "1.5")),
    ("conform-vectors", ("conform", "vectors", "write", "--out-dir", "{d}/out"), "--format", ("xml",)),
    ("trace-check", ("trace-check", "{d}/t.jsonl"), "--grace", ("-0.001", "1e10", "inf")),
    ("trace-check", ("trace-check", "{d}/t.jsonl", "--grace", "0.05"), "--window", ("0", "5e-7", "1e10", "nan")),
    ("trace-check", ("trace-check", "{d}/t.jsonl", "--grace", "0.05"), "--spark-timeout", ("0", "nan", "1e999")),
    ("trace-check", ("trace-check", "{d}/t.jsonl", "--grace", "0.05"), "--master", ("bogus://x", "")),
    ("trace-check", ("trace-check", "{d}/t.jsonl", "--grace", "0.05"), "--conf", ("novalue", "=1")),
    ("trace-check", ("trace-check", "{d}/t.jsonl", "--grace", "0.05"), "--format", ("xml",)),
    ("simulate", ("simulate", "siena", "--events", "3"), "--swaps", ("-1", HUGE)),
    ("simulate", ("simulate", "broadcast", "--events", "3"), "--brokers", ("0", "100001", HUGE)),
    ("simulate", ("simulate", "flooding", "--events", "3"), "--subscriptions", ("-1", HUGE)),
    ("simulate", ("simulate", "summaries"), "--events", ("-1", HUGE, "")),
    ("simulate", ("simulate", "summaries", "--events", "3"), "--next-broker", ("c",)),
    ("simulate", ("simulate", "caching"), "--events", ("0", "-1", HUGE)),
    ("simulate", ("simulate", "caching", "--events", "3"), "--capacity", ("0", HUGE)),
    ("simulate", ("simulate", "caching", "--events", "3"), "--stay", ("0",)),
    ("simulate", ("simulate", "caching", "--events", "3"), "--placement", ("nowhere",)),
    ("simulate", ("simulate", "caching", "--events", "3"), "--cache-policy", ("random",)),
    ("simulate", ("simulate", "client-server"), "--steps", ("0", HUGE)),
    ("simulate", ("simulate", "client-server", "--steps", "3"), "--slots", ("0",)),
    ("simulate", ("simulate", "client-server", "--steps", "3"), "--ss-memory", ("-1", "forever", "1e3", "")),
    ("simulate", ("simulate", "client-server", "--steps", "3"), "--request-policy", ("nosuch",)),
    ("simulate", ("simulate", "client-server", "--steps", "3"), "--request-process", ("nosuch",)),
    ("simulate", ("simulate", "caching", "--events", "3"), "--topology", ("{d}/nosuch.edgelist", "{d}")),
    ("simulate", ("simulate", "client-server", "--steps", "3"), "--topology", ("nosuch",)),
    ("bench", ("bench", "matching", "--quick", "--out-dir", "{d}/out"), "--groups", ("0", "6", "a", "", "1,,9")),
    ("bench", ("bench", "matching", "--quick", "--out-dir", "{d}/out"), "--repeat", ("0", "101")),
    ("bench", ("bench", "matching", "--quick", "--out-dir", "{d}/out"), "--planted-rate", ("-0.1", "2")),
    ("bench", ("bench", "matching", "--quick", "--out-dir", "{d}/out"), "--model-events", ("-1", HUGE)),
    ("bench", ("bench", "matching", "--quick", "--out-dir", "{d}/out"), "--budget", ("0.5", "nan")),
    ("bench", ("bench", "matching", "--quick", "--out-dir", "{d}/out"), "--point-planted-rate", ("1.5", "inf")),
    ("bench", ("bench", "matching", "--quick", "--out-dir", "{d}/out"), "--seed", ("abc", "")),
    ("bench", ("bench", "summaries", "--quick", "--out-dir", "{d}/out"), "--subscriptions", ("0", HUGE)),
    ("bench", ("bench", "summaries", "--quick", "--out-dir", "{d}/out"), "--events", ("0", HUGE)),
    ("bench", ("bench", "summaries", "--quick", "--out-dir", "{d}/out"), "--repeat", ("0", "nan")),
    ("bench", ("bench", "summary-routing", "--quick", "--out-dir", "{d}/out"), "--seed", ("abc", "1e3")),
    ("bench", ("bench", "caching", "--quick", "--out-dir", "{d}/out"), "--seed", ("",)),
    ("bench", ("bench", "caching", "--quick", "--out-dir", "{d}/out"), "--format", ("xml",)),
    ("bench", ("bench", "client-server", "--quick", "--out-dir", "{d}/out"), "--request-process", ("nosuch",)),
    ("bench", ("bench", "network", "--quick", "--out-dir", "{d}/out"), "--brokers", ("1", "100001")),
    ("bench", ("bench", "network", "--quick", "--out-dir", "{d}/out"), "--subscriptions", ("0", HUGE)),
    ("bench", ("bench", "network", "--quick", "--out-dir", "{d}/out"), "--events", ("0", HUGE)),
    ("bench", ("bench", "network", "--quick", "--out-dir", "{d}/out"), "--swaps", ("0", HUGE)),
    ("bench", ("bench", "network", "--quick", "--out-dir", "{d}/out"), "--fuzz-budget", ("0.5", "inf")),
    ("bench", ("bench", "reconfig", "--quick", "--out-dir", "{d}/out"), "--protocol", ("strawman", "nosuch")),
    ("bench", ("bench", "reconfig", "--quick", "--out-dir", "{d}/out"), "--defer-timeout", ("-1", "nan")),
    ("bench", ("bench", "spark", "--quick", "--out-dir", "{d}/out"), "--max-events", ("9999", HUGE)),
    ("bench", ("bench", "spark", "--quick", "--out-dir", "{d}/out"), "--in-process-max-events", ("-1",)),
    ("bench", ("bench", "explore", "--quick", "--out-dir", "{d}/out"), "--seeds", ("1", "101")),
    ("bench", ("bench", "explore", "--quick", "--out-dir", "{d}/out"), "--repeat", ("0", "21")),
    ("bench", ("bench", "explore", "--quick", "--out-dir", "{d}/out"), "--ladder-budget", ("0", "nan", "inf")),
)


def _name(family: str, argv: tuple[str, ...]) -> str:
    """The words of an argv after its family's (the subcommand: `siena`, `matching`), for a case's ID."""
    words, skip = [], False
    for word in argv:
        if skip and not word.startswith("-"):
            skip = False
            continue
        skip = word.startswith("-")
        if not skip and "{d}" not in word:
            words.append(word)
    return "-".join(words[1 if family == "trace-check" else len(family.split("-")):])


def _option_cases() -> Iterator[CommandCase]:
    files = {"t.jsonl": corpus.TRACE}
    for family, argv, option, values in OPTIONS:
        where = _name(family, argv)
        for value in values:
            label = value.replace("{d}/", "").replace("{d}", "folder") or "empty"
            name = f"{where + '/' if where else ''}{option}={label if value != HUGE else '1e30-int'}"
            yield case(family, name, argv + (option, value), files=files, mentions=(option,),
                       seconds=BENCH_SECONDS if family == "bench" else SECONDS)
    # Plug-ins and choices of the component options: the error names the option.
    plugins = {"nosuch": "nosuch", "nosuch-module": "nosuch.module:attr", "not-a-class": "os:path", "not-a-broker": "builtins:int",
               "no-attribute": "os:nosuch", "empty": ""}
    for name, value in plugins.items():
        yield case("explore", f"--protocol={name}", ("explore", "--protocol", value), mentions=("--protocol",))
        yield case("fuzz-reconfig", f"--protocol={name}", ("fuzz", "reconfig", "--protocol", value, "--out-dir", "{d}/out"),
                   mentions=("--protocol",))
        yield case("conform-matching", f"--engine={name}", ("conform", "matching", "--engine", value, "--out-dir", "{d}/out"),
                   mentions=("--engine",))
    yield case("explore", "--protocol=no-schedule-checks", ("explore", "--protocol", "subsum.impl.network.sim:Broker"),
               mentions=("--protocol",))
    yield case("fuzz-reconfig", "--protocol=summaries", ("fuzz", "reconfig", "--protocol", "summaries", "--out-dir", "{d}/out"),
               mentions=("--protocol",))
    yield case("simulate", "forwarding/--protocol=not-a-class", ("simulate", "forwarding", "--protocol", "os:path", "--events", "3"),
               mentions=("--protocol",))
    yield case("simulate", "forwarding/--protocol=nosuch-module", ("simulate", "forwarding", "--protocol", "nosuch.module:attr",
                                                                    "--events", "3"), mentions=("--protocol",))
    # The scope of an exploration: refused before the search.
    scopes = {"subscriptions-above-3n": (("--brokers", "2", "--subscriptions", "7"), "--subscriptions"),
              "swaps-with-2-brokers": (("--brokers", "2", "--swaps", "1"), "--swaps"),
              "swaps-with-1-broker": (("--brokers", "1", "--swaps", "1"), "--swaps"),
              "swaps-on-summaries": (("--protocol", "summaries", "--swaps", "1"), "--swaps"),
              "swaps-on-siena": (("--protocol", "siena", "--swaps", "1", "--max-states", "10"), "--swaps")}
    for name, (argv, option) in scopes.items():
        exit_ = -1 if name == "swaps-on-siena" else 2  # Siena's family reconfigures like Strawman: a valid scope
        yield case("explore", f"scope/{name}", ("explore", *argv, "--out-dir", "{d}/out"), mentions=(option,) if exit_ == 2 else (),
                   exit=exit_)
    # Engine and broker commands.
    commands = {"empty": "", "missing-binary": "/nonexistent/binary", "unbalanced-quote": "'x", "a-folder": "{d}",
                "not-executable": "{d}/afile", "blank": "   "}
    for name, value in commands.items():
        yield case("conform-matching", f"--engine-cmd={name}", ("conform", "matching", "--engine-cmd", value, "--workloads", "1",
                                                                  "--out-dir", "{d}/out"), mentions=("--engine-cmd",))
        yield case("conform-broker", f"--broker-cmd={name}", ("conform", "broker", "--broker-cmd", value, "--schedules", "1",
                                                                "--out-dir", "{d}/out"), mentions=("--broker-cmd",))
    yield case("conform-matching", "neither-engine", ("conform", "matching", "--out-dir", "{d}/out"), mentions=("--engine-cmd", "--engine"))
    yield case("conform-matching", "both-engines", ("conform", "matching", "--engine-cmd", "true", "--engine", "vectorized",
                                                    "--out-dir", "{d}/out"), mentions=("--engine-cmd", "--engine"))
    yield case("conform-broker", "no-broker-cmd", ("conform", "broker", "--out-dir", "{d}/out"), mentions=("--broker-cmd",))
    yield case("bench", "client-server/--report-only=no-run", ("bench", "client-server", "--report-only", "--out-dir", "{d}/out"),
               mentions=("client_server.csv",))
    # The values a command rightly accepts (the controls): a small scope; any seed of a matching workload or a simulation
    # (Python's random and Hypothesis take any integer); a schedule's seed within the replay format's 64 bits (a seed past
    # them gives replays `subsum replay` refuses: field 'seed').
    yield case("explore", "valid-scope", ("explore", "--brokers", "2", "--subscriptions", "1", "--out-dir", "{d}/out"), exit=-1)
    fuzz = ("fuzz", "reconfig", "--brokers", "3", "--steps", "5", "--schedules", "1", "--out-dir", "{d}/out", "--seed")
    yield case("fuzz-reconfig", "--seed=-1", fuzz + ("-1",), exit=-1)
    yield case("fuzz-reconfig", "--seed=-2^63", fuzz + (str(-2**63),), exit=-1)
    yield case("fuzz-reconfig", "--seed=1e30-int", fuzz + (HUGE,), mentions=("--seed",))
    yield case("fuzz-reconfig", "--seed=-1e30-int", fuzz + ("-" + HUGE,), mentions=("--seed",))
    yield case("conform-broker", "--seed=1e30-int", ("conform", "broker", "--broker-cmd", "true", "--schedules", "1", "--out-dir", "{d}/out",
                                                     "--seed", HUGE), mentions=("--seed",))
    for value in ("-1", HUGE):
        label = "1e30-int" if value == HUGE else value
        yield case("conform-matching", f"--seed={label}", ("conform", "matching", "--engine", "vectorized", "--workloads", "1", "--seed",
                                                           value, "--out-dir", "{d}/out"), exit=-1)
        yield case("simulate", f"forwarding/--seed={label}", ("simulate", "forwarding", "--events", "3", "--seed", value), exit=-1)


# --- topology files ---------------------------------------------------------------------------

TOPOLOGIES = {
    "one-column-line-3": (b"0 1\n1 2\n3\n", ":3"),
    "self-loop-line-2": (b"0 1\n2 2\n", ":2"),
    "control-char-label": (b"0 1\n1 \x1b[2J\n", ":2"),
    "no-links": (b"# nothing\n\n", "no links"),
    "not-utf8": (b"0 1\n\xff\xfe 2\n", ":2"),
    "empty": (b"", "g.edgelist"),
}


def _topology_cases() -> Iterator[CommandCase]:
    commands = {"siena": ("simulate", "siena", "--events", "3"), "summaries": ("simulate", "summaries", "--events", "3"),
                "caching": ("simulate", "caching", "--events", "3"), "client-server": ("simulate", "client-server", "--steps", "3")}
    for k, (attack, (content, where)) in enumerate(TOPOLOGIES.items()):
        for j, (name, argv) in enumerate(commands.items()):
            if (k + j) % 2:
                continue  # every attack on two commands, every command under three attacks
            yield case("simulate", f"{name}/topology={attack}", argv + ("--topology", "{d}/g.edgelist"), files={"g.edgelist": content},
                       mentions=("g.edgelist", where), output="--trace" if name in ("siena", "summaries") else "--json")
    yield case("fuzz-reconfig", "topology=one-column-line-3", ("fuzz", "reconfig", "--topology", "{d}/g.edgelist", "--schedules", "1",
                                                               "--out-dir", "{d}/out"), files={"g.edgelist": TOPOLOGIES["one-column-line-3"][0]},
               mentions=("g.edgelist:3",), output="--json")


# --- trace-check: bad input refused before Spark starts ---------------------------------------

def _trace_cases() -> Iterator[CommandCase]:
    yield case("trace-check", "trace=missing", ("trace-check", "{d}/nosuch.jsonl", "--grace", "0.05"), mentions=("nosuch.jsonl",),
               seconds=3.0)
    yield case("trace-check", "trace=folder", ("trace-check", "{d}", "--grace", "0.05"), mentions=("is a directory",), seconds=3.0)
    yield case("trace-check", "trace=dev-null", ("trace-check", "/dev/null", "--grace", "0.05"), mentions=("/dev/null",), seconds=3.0)
    yield case("trace-check", "trace=out-dir", ("trace-check", "{d}/t.jsonl", "--grace", "0.05", "--out-dir", "{d}/t.jsonl"),
               files={"t.jsonl": corpus.TRACE}, mentions=("--out-dir",), seconds=3.0)
    yield case("trace-check", "no-grace", ("trace-check", "{d}/t.jsonl"), files={"t.jsonl": corpus.TRACE}, mentions=("--grace",),
               seconds=3.0)


# --- conform vectors check ---------------------------------------------------------------------

VECTOR_KINDS = ("caches", "covering", "filters", "matching", "strawman", "summaries")


def vectors_doc(kind: str, cases: list | None = None) -> dict:
    return {"format": "subsum-vectors", "spec_version": 1, "kind": kind, "seed": 0, "cases": cases or []}


def vectors_folder(**replaced: bytes) -> dict[str, bytes]:
    """A folder of vectors with no case in each file (valid: subsum passes all 0 cases), some files replaced."""
    files = {f"v/{kind}.json": js(vectors_doc(kind)) for kind in VECTOR_KINDS}
    files.update({f"v/{kind}.json": content for kind, content in replaced.items()})
    return {name: content for name, content in files.items() if content is not None}


def matching_case(subscriptions: list, events: list, case_id: str = "m1") -> dict:
    return {"id": case_id, "claim": "CLM-ENG-1", "input": {"subscriptions": subscriptions, "events": events}, "expected": {"results": []}}


def _vector_cases() -> Iterator[CommandCase]:
    check = ("conform", "vectors", "check", "{d}/v")
    yield case("conform-vectors", "check/valid-empty-files", check, files=vectors_folder(), exit=0)
    yield case("conform-vectors", "check/missing-folder", ("conform", "vectors", "check", "{d}/nosuch"), mentions=("nosuch",))
    yield case("conform-vectors", "check/empty-folder", check, folders=("v",), mentions=("v/",))
    yield case("conform-vectors", "check/a-file", ("conform", "vectors", "check", "{d}/afile"), mentions=("afile",))
    good = js(vectors_doc("matching", [matching_case([], [{"id": "e", "attributes": {"x": 1}}])]))
    bad = {
        "missing-file": (None, ("matching.json",)),
        "truncated": (good[: len(good) // 2], ("matching.json",)),
        "not-json": (b"hello\n", ("matching.json",)),
        "empty": (b"", ("matching.json",)),
        "array": (b"[]\n", ("matching.json",)),
        "wrong-kind": (js(vectors_doc("filters")), ("matching.json",)),
        "spec-version-2": (js({**vectors_doc("matching"), "spec_version": 2}), ("matching.json", "spec")),
        "spec-version-true": (js({**vectors_doc("matching"), "spec_version": True}), ("matching.json", "spec")),
        "cases-object": (js({**vectors_doc("matching"), "cases": {}}), ("matching.json", "cases")),
        "case-without-id": (js(vectors_doc("matching", [{"input": {}, "expected": {}}])), ("matching.json", "cases[0]")),
        "case-id-number": (js(vectors_doc("matching", [{"id": 7, "input": {}, "expected": {}}])), ("matching.json", "cases[0]")),
        "nan": (good.replace(b'"x": 1', b'"x": NaN'), ("matching.json", "m1", "x")),
        "huge-int-digits": (good.replace(b'"x": 1', b'"x": ' + b"9" * 5000), ("matching.json",)),
        "subscription-id-number": (js(vectors_doc("matching", [matching_case([{"id": 3, "filter": "x > 1"}], [])])),
                                   ("matching.json", "m1", "id")),
        "input-missing-events": (js(vectors_doc("matching", [{**matching_case([], []), "input": {"subscriptions": []}}])),
                                 ("matching.json", "m1", "events")),
        "deep-nesting": (b"[" * 100_000 + b"]" * 100_000, ("matching.json",)),
        "cache-policy-unknown": (None, ("caches.json", "c1", "policy")),
    }
    for name, (content, mentions) in bad.items():
        if name == "cache-policy-unknown":
            cache = {"id": "c1", "claim": "CLM-CACHE-1", "input": {"policy": "nosuch", "capacity": 2, "operations": []}, "expected": {}}
            files = vectors_folder(caches=js(vectors_doc("caches", [cache])))
        elif content is None:
            files = {n: c for n, c in vectors_folder().items() if not n.endswith("/matching.json")}
        else:
            files = vectors_folder(matching=content)
        yield case("conform-vectors", f"check/{name}", check, files=files, mentions=mentions)


# --- fidelity -----------------------------------------------------------------------------------

STATEMENT = '''[[statement]]
id = "999-a"
section = "§1"
quote = "q"
kind = "number"
value = "2"
number = 2.0
explain = "a test"
[statement.measure]
kind = "cell"
file = "b/r.csv"
column = "y"
where = { x = 1 }
'''


def fidelity_files(csv: bytes | None = b"x,y\r\n1,2.0\r\n2,3.0\r\n", summary: bytes | None = b'{"parameters": {"quick": false}}\n',
                   statement: str | None = STATEMENT) -> dict[str, bytes]:
    """A results folder (results/b/r.csv, results/b/summary.json) and a statements folder whose one statement reads
    r.csv's y at x = 1: valid as given (tests/test_fidelity_inputs.py's fixture); None leaves a file out."""
    files = {"results/b/r.csv": csv, "results/b/summary.json": summary,
             "statements/seed999.toml": None if statement is None else statement.encode()}
    return {name: content for name, content in files.items() if content is not None}


def _fidelity_cases() -> Iterator[CommandCase]:
    argv = ("fidelity", "--results", "{d}/results", "--statements", "{d}/statements")
    yield case("fidelity", "valid", argv + ("--output", "{d}/out/F.md"), files=fidelity_files(), exit=0)
    csvs = {
        "csv-truncated": (b"x,y\n1,2.0\n2,3", ("r.csv:3", "field 'y'")),
        "csv-nan": (b"x,y\n1,nan\n2,3.0\n", ("r.csv:2", "field 'y'")),
        "csv-1e999": (b"x,y\n1,1e999\n2,3.0\n", ("r.csv:2", "field 'y'")),
        "csv-inf-where": (b"x,y\n1,2.0\ninf,3.0\n", ("r.csv:3", "field 'x'")),
        "csv-missing-column": (b"x,z\n1,2.0\n", ("r.csv:1", "field 'y'")),
        "csv-short-row": (b"x,y\n1,2.0\n2\n", ("r.csv:3", "field 'y'")),
        "csv-header-only": (b"x,y\n", ("r.csv",)),
        "csv-empty": (b"", ("r.csv",)),
        "csv-not-utf8": (b"x,y\n1,\xff\xfe\n", ("r.csv:2",)),
        "csv-nul-byte": (b"x,y\n1,2\x00.0\n", ("r.csv:2",)),
        "csv-text-cell": (b"x,y\n1,two\n", ("r.csv:2", "field 'y'")),
        "csv-escape-in-cell": (b"x,y\n1,\x1b[2J\n", ("r.csv:2", "field 'y'")),
        "csv-long-line": (b"x,y\n1," + b"9" * 3_000_000 + b"\n", ("r.csv:2",)),
        "csv-folder": (None, ("r.csv",)),
        "csv-missing": (None, ("r.csv", "no such file")),
    }
    for name, (content, mentions) in csvs.items():
        files = fidelity_files(csv=content)
        folders: tuple[str, ...] = ("results/b/r.csv",) if name == "csv-folder" else ()
        yield case("fidelity", name, argv, files=files, folders=folders, mentions=mentions, output="--output")
    summaries = {"summary-truncated": b'{"parameters": {"qu', "summary-nan": b'{"parameters": {"quick": NaN}}',
                 "summary-quick-string": b'{"parameters": {"quick": "no"}}', "summary-array": b"[]"}
    for name, content in summaries.items():
        yield case("fidelity", name, argv, files=fidelity_files(summary=content), mentions=("summary.json",), output="--output")
    statements = {
        "toml-broken": ('[[statement]]\nid = "999-a\n', ("seed999.toml",)),
        "toml-not-utf8": (None, ("seed999.toml",)),
        "no-measure": (STATEMENT.split("[statement.measure]")[0], ("seed999.toml", "999-a", "measure")),
        "unknown-kind": (STATEMENT.replace('kind = "number"', 'kind = "guess"'), ("seed999.toml", "999-a", "kind")),
        "number-missing": (STATEMENT.replace("number = 2.0\n", ""), ("seed999.toml", "999-a", "number")),
        "number-string": (STATEMENT.replace("number = 2.0", 'number = "two"'), ("seed999.toml", "999-a", "number")),
        "number-nan": (STATEMENT.replace("number = 2.0", "number = nan"), ("seed999.toml", "999-a", "number")),
        "measure-kind-unknown": (STATEMENT.replace('kind = "cell"', 'kind = "guess"'), ("seed999.toml", "999-a", "guess")),
        "measure-lacks-column": (STATEMENT.replace('column = "y"\n', ""), ("seed999.toml", "999-a", "column")),
        "measure-a-string": (STATEMENT.split("[statement.measure]")[0] + 'measure = "cell"\n', ("seed999.toml", "999-a", "measure")),
        "where-a-string": (STATEMENT.replace("where = { x = 1 }", 'where = "x = 1"'), ("seed999.toml", "999-a", "where")),
        "statement-a-string": ('statement = "x"\n', ("seed999.toml", "statement")),
        "id-missing": (STATEMENT.replace('id = "999-a"\n', ""), ("seed999.toml", "id")),
        "file-outside-results": (STATEMENT.replace('file = "b/r.csv"', 'file = "../../../../../../etc/passwd"'),
                                 ("seed999.toml", "999-a", "file")),
        "file-absolute": (STATEMENT.replace('file = "b/r.csv"', 'file = "/etc/hostname"'), ("seed999.toml", "999-a", "file")),
        "duplicate-id": (STATEMENT + STATEMENT, ("statements", "999-a")),
        "no-statement-file": (None, ("statements",)),
    }
    for name, (text, mentions) in statements.items():
        files = fidelity_files(statement=text)
        if name == "toml-not-utf8":
            files["statements/seed999.toml"] = STATEMENT.encode().replace(b"q", b"\xff")
        folders = ("statements",) if name == "no-statement-file" else ()
        yield case("fidelity", f"statements/{name}", argv, files=files, folders=folders, mentions=mentions, output="--output")
    yield case("fidelity", "results=empty-folder", ("fidelity", "--results", "{d}/empty", "--statements", "{d}/statements"),
               files=fidelity_files(), folders=("empty",), mentions=("r.csv", "no such file"), output="--output")
    yield case("fidelity", "results=missing", ("fidelity", "--results", "{d}/nosuch", "--statements", "{d}/statements"),
               files=fidelity_files(), mentions=("--results",), output="--output")
    yield case("fidelity", "results=a-file", ("fidelity", "--results", "{d}/afile", "--statements", "{d}/statements"),
               files=fidelity_files(), mentions=("--results",), output="--output")
    yield case("fidelity", "statements=missing", ("fidelity", "--results", "{d}/results", "--statements", "{d}/nosuch"),
               files=fidelity_files(), mentions=("--statements",), output="--output")


# --- replay ------------------------------------------------------------------------------------

def matching_replay(**changes: object) -> dict[str, bytes]:
    """A replay directory of `subsum conform matching` (valid as given: vectorized agrees with the model on it)."""
    doc: dict = {"format": "subsum-conform-matching", "version": 1, "engine": {"engine": "vectorized", "timeout": 10.0}, "seed": 0,
                 "failure": {"kind": "difference", "message": "m"}}
    doc.update(changes)
    return {"rd/case.json": js({k: v for k, v in doc.items() if v is not None}), "rd/subscriptions.jsonl": corpus.SUBS,
            "rd/events.jsonl": corpus.EVENTS}


def schedule_replay(**changes: object) -> bytes:
    doc = corpus.replay_doc()
    doc.update(changes)
    return js(doc)


def _replay_cases() -> Iterator[CommandCase]:
    rd = ("replay", "{d}/rd")
    yield case("replay", "dir/valid", rd + ("--engine", "vectorized"), files=matching_replay(), exit=0)
    dirs = {
        "no-case-json": ({k: v for k, v in matching_replay().items() if not k.endswith("case.json")}, ("rd", "case.json")),
        "case-json-not-json": ({**matching_replay(), "rd/case.json": b"{nope"}, ("case.json:1",)),
        "case-json-truncated": ({**matching_replay(), "rd/case.json": matching_replay()["rd/case.json"][:40]}, ("case.json",)),
        "case-json-wrong-format": (matching_replay(format="subsum-replay"), ("case.json", "format")),
        "case-json-version-2": (matching_replay(version=2), ("case.json", "version")),
        "case-json-engine-list": (matching_replay(engine=["vectorized"]), ("case.json", "engine")),
        "case-json-timeout-nan": ({**matching_replay(), "rd/case.json": matching_replay()["rd/case.json"].replace(b"10.0", b"NaN")},
                                  ("case.json", "NaN")),
        "case-json-timeout-zero": (matching_replay(engine={"engine": "vectorized", "timeout": 0}), ("case.json", "engine.timeout")),
        "case-json-seed-float": (matching_replay(seed=1.5), ("case.json", "seed")),
        "events-missing": ({k: v for k, v in matching_replay().items() if not k.endswith("events.jsonl")}, ("events.jsonl",)),
        "subscriptions-missing": ({k: v for k, v in matching_replay().items() if not k.endswith("subscriptions.jsonl")},
                                  ("subscriptions.jsonl",)),
        "events-bad-line": ({**matching_replay(), "rd/events.jsonl": corpus.EVENTS + b'{"id": "e3", "attributes": {"x": NaN}}\n'},
                            ("events.jsonl:3",)),
        "subscriptions-bad-filter": ({**matching_replay(), "rd/subscriptions.jsonl": b'{"id": "s1", "filter": "x >"}\n'},
                                     ("subscriptions.jsonl:1", "field 'filter'")),
        "empty-dir": ({}, ("rd", "case.json")),
    }
    for name, (files, mentions) in dirs.items():
        yield case("replay", f"dir/{name}", rd + ("--engine", "vectorized"), files=files, folders=("rd",), mentions=mentions)
    options = {
        "no-engine": ((), ("--engine",)),
        "engine-nosuch": (("--engine", "nosuch"), ("--engine",)),
        "engine-not-a-class": (("--engine", "os:path"), ("--engine",)),
        "engine-cmd-missing-binary": (("--engine-cmd", "/nonexistent/binary"), ("--engine-cmd",)),
        "engine-cmd-empty": (("--engine-cmd", ""), ("--engine-cmd",)),
        "both-engines": (("--engine", "vectorized", "--engine-cmd", "true"), ("--engine",)),
        "timeout-zero": (("--engine", "vectorized", "--timeout", "0"), ("--timeout",)),
        "timeout-nan": (("--engine", "vectorized", "--timeout", "nan"), ("--timeout",)),
        "protocol-stray": (("--engine", "vectorized", "--protocol", "strawman"), ("--protocol",)),
        "capacity-stray": (("--engine", "vectorized", "--capacity", "3"), ("--capacity",)),
    }
    for name, (extra, mentions) in options.items():
        yield case("replay", f"dir/{name}", rd + extra, files=matching_replay(), mentions=mentions)
    schedule = ("replay", "{d}/s.json")
    schedules = {
        "step-beyond-schedule": (schedule_replay(violation={"claim": "CLM-NET-1", "message": "m", "step": 99}), ("s.json", "step")),
        "step-negative": (schedule_replay(violation={"claim": "CLM-NET-1", "message": "m", "step": -1}), ("s.json", "step")),
        "unsubscribe-unknown-client": (schedule_replay(schedule=[{"op": "unsubscribe", "client": 1000009, "filter": "x > 1"}]),
                                       ("s.json", "schedule[0]")),
        "publish-unknown-client": (schedule_replay(schedule=[{"op": "publish", "client": 1000009, "attributes": {"x": 1}}]),
                                   ("s.json", "schedule[0]")),
        "plugin-protocol": (schedule_replay(protocol="os:path"), ("s.json", "protocol", "--protocol")),
        "plugin-protocol-missing-module": (schedule_replay(protocol="nosuch.module:Broker"), ("s.json", "protocol", "--protocol")),
        "external-broker": (schedule_replay(protocol="external", command="true"), ("s.json", "protocol", "--broker-cmd")),
        "seed-huge": (schedule_replay(seed=10**30), ("s.json", "seed")),
    }
    for name, (content, mentions) in schedules.items():
        yield case("replay", f"schedule/{name}", schedule, files={"s.json": content}, mentions=mentions)
    yield case("replay", "schedule/valid", schedule, files={"s.json": schedule_replay()}, exit=-1)
    runs = {
        "protocol-not-a-class": (("--protocol", "os:path"), ("--protocol",)),
        "protocol-plugin-missing-module": (("--protocol", "nosuch.module:Broker"), ("--protocol",)),
        "broker-cmd-on-strawman": (("--broker-cmd", "true"), ("--broker-cmd",)),
        "engine-stray": (("--engine", "vectorized"), ("--engine",)),
        "policy-stray": (("--policy", "lru"), ("--policy",)),
    }
    for name, (extra, mentions) in runs.items():
        yield case("replay", f"schedule/{name}", schedule + extra, files={"s.json": schedule_replay()}, mentions=mentions)
    ops = ("replay", "{d}/ops.jsonl")
    for name, extra, mentions in (("no-policy", ("--capacity", "2"), ("--policy",)), ("no-capacity", ("--policy", "lru"), ("--capacity",)),
                                  ("capacity-zero", ("--policy", "lru", "--capacity", "0"), ("--capacity",)),
                                  ("capacity-huge", ("--policy", "lru", "--capacity", HUGE), ("--capacity",)),
                                  ("policy-nosuch", ("--policy", "nosuch", "--capacity", "2"), ("--policy",)),
                                  ("policy-not-a-class", ("--policy", "os:path", "--capacity", "2"), ("--policy",))):
        yield case("replay", f"cache-ops/{name}", ops + extra, files={"ops.jsonl": corpus.OPS}, mentions=mentions,
                   exit=-1 if name == "capacity-huge" else 2)
    cache_doc = {"format": "subsum-cache-replay", "version": 1, "policy": "lru", "capacity": 2,
                 "operations": [{"op": "insert", "message": "m1", "time": 0}]}
    caches = {"capacity-zero": {"capacity": 0}, "policy-plugin": {"policy": "os:path"}, "time-backwards": {
        "operations": [{"op": "insert", "message": "m1", "time": 5}, {"op": "insert", "message": "m2", "time": 1}]}}
    for name, change in caches.items():
        field = "operations[1]" if name == "time-backwards" else next(iter(change))
        yield case("replay", f"cache/{name}", ("replay", "{d}/c.json"), files={"c.json": js({**cache_doc, **change})}, mentions=("c.json", field))
    yield case("replay", "missing", ("replay", "{d}/nosuch.json"), mentions=("nosuch.json",))
    yield case("replay", "unknown-format", ("replay", "{d}/x.json"), files={"x.json": js({"format": "subsum-nothing"})},
               mentions=("x.json", "format"))
    yield case("replay", "no-format", ("replay", "{d}/x.json"), files={"x.json": js({"version": 1})}, mentions=("x.json",))


def cases() -> list[CommandCase]:
    out = [*_output_cases(), *_option_cases(), *_topology_cases(), *_trace_cases(), *_vector_cases(), *_fidelity_cases(), *_replay_cases()]
    ids = [c.id for c in out]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert all(c.family in FAMILIES for c in out), sorted({c.family for c in out} - set(FAMILIES))
    return out


# --- running one case ---------------------------------------------------------------------------

def children() -> set[int]:
    """The live (not zombie) child processes of this process."""
    me, found = str(os.getpid()), set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                state, ppid = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[:2]
            except (OSError, ValueError):
                continue
            if ppid == me and state != "Z":
                found.add(int(entry.name))
    return found


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder`, with a file's content (None for anything else)."""
    found: dict[str, bytes | None] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        found[name] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return found


def run_case(case: CommandCase, folder: Path) -> dict:
    """corpus.py's run of one case (in this process), in the case's folder, and this corpus's own checks after it.
    Processes the command leaves running are reported and ended."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in case.folders:
        (folder / name).mkdir(parents=True, exist_ok=True)
    for name, _ in case.files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
    before_children = children()
    here = os.getcwd()
    os.chdir(folder)
    try:
        verdict = corpus.run_case(case, folder)  # makes the files, then runs the command
    finally:
        os.chdir(here)
    after = _snapshot(folder)
    made = {name for name, _ in case.files} | set(case.folders) | set(case.fifos) | {"sentinel.out"}
    made |= {str(parent) for name in made for parent in Path(name).parents if str(parent) != "."}
    problems = list(verdict["problems"])
    if case.exit == 2:
        appeared = sorted(name for name in after if name not in made)
        if appeared:
            problems.append(f"paths appeared: {appeared[:5]}")
        changed = sorted(name for name, content in case.files if after.get(name) != content)
        if changed:
            problems.append(f"input files changed or removed: {changed[:5]}")
    started = children() - before_children
    if started:
        problems.append(f"left processes running: {sorted({_command_name(pid) for pid in started})}")
        for pid in started:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
    if verdict["seconds"] >= case.seconds * 0.98:
        problems.append(f"took {verdict['seconds']:.1f} s: the limit is {case.seconds:g} s")
    return {**verdict, "ok": not problems, "problems": problems}


#: How long past its own limit a case may run before its process group is killed: the limit is an alarm, which
#: code that catches every exception (a benchmark's loop, Spark's start) can swallow.
GRACE = 1.0
#: The families whose cases run in a process of their own (`run_isolated`): those that start a JVM or a benchmark when
#: they fail. The others run in the runner's process (a fork costs about 20 ms a case), their leftover processes ended.
ISOLATED = ("bench", "trace-check")


def run_isolated(case: CommandCase, folder: Path) -> dict:
    """`run_case` in a forked process of its own group (the modules are imported once, before): a JVM or a
    benchmark's process the command starts is killed with it, a case that overruns is killed, and no state
    (a Spark session, the working folder, a signal handler) reaches the next case."""
    import select
    import time

    read_end, write_end = os.pipe()
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the case's process: its verdict goes up the pipe; standard output is the runner's, not the command's
        code = 0
        try:
            os.close(read_end)
            os.setpgid(0, 0)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            verdict = run_case(case, folder)
            data = json.dumps(verdict).encode()
            while data:
                data = data[os.write(write_end, data):]
        except BaseException:  # nothing may escape a forked child
            code = 70
        finally:
            os._exit(code)
    os.close(write_end)
    chunks, deadline = [], started + case.seconds + GRACE
    while (left := deadline - time.perf_counter()) > 0 and select.select([read_end], [], [], left)[0]:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    else:
        chunks = []  # past the deadline: whatever came is not a verdict
    os.close(read_end)
    try:
        os.killpg(pid, signal.SIGKILL)  # the case's leftovers (a JVM, a benchmark's process), or the case itself
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    seconds = round(time.perf_counter() - started, 3)
    if chunks:
        return json.loads(b"".join(chunks))
    why = (f"killed after {seconds:.1f} s: its limit of {case.seconds:g} s did not stop it" if seconds >= case.seconds + GRACE
           else f"the case's process died ({status:#x})")
    return {"id": case.id, "ok": False, "exit": None, "seconds": seconds, "problems": [why], "stderr": ""}


def _command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return str(pid)


def chosen_cases(all_cases: list[CommandCase], args: list[str]) -> list[CommandCase]:
    """The cases `[--shard i/n] [ID ...]` selects."""
    shard = None
    if args[:1] == ["--shard"]:
        i, n = map(int, args[1].split("/"))
        shard, args = (i, n), args[2:]
    chosen = [c for c in all_cases if not args or c.id in args]
    return chosen[shard[0]::shard[1]] if shard else chosen


def warm() -> None:
    """Import every command's module before the first case, outside its time limit (seconds for bench)."""
    from subsum.cli import COMMAND_MODULES

    for module in sorted(set(COMMAND_MODULES.values())):
        importlib.import_module(f"subsum.cli.{module}")


def main(argv: list[str]) -> int:
    def run_one(c: CommandCase, folder: Path) -> dict:
        return run_isolated(c, folder) if c.family in ISOLATED else run_case(c, folder)

    return corpus.serve(argv, "usage: commands.py list [--shard i/n] [ID ...] | run [--shard i/n] [ID ...]",
                        chosen_cases(cases(), argv[1:]), "hostile-commands-", warm, run_one)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
